// Large columns in transparent huge pages. A column of millions of rows is fresh memory, and
// with 4 KB pages every page of it costs a fault (the 10 GB trace's load took ~1.9M of them,
// a third of its CPU time in the kernel); in 2 MB pages, one fault per 512 of those. The
// allocator hands out large blocks as untouched mappings: the advice goes on before a byte is
// written, so the copy into a grown column already faults in huge pages. Small columns keep
// 4 KB pages: there a half-used 2 MB page would be memory for nothing.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sl {

inline constexpr size_t kHugeColumnBytes = size_t(8) << 20;

inline void advise_huge_pages(const void* data, size_t bytes) {
  constexpr uintptr_t kPage = 4096;
  uintptr_t from = (reinterpret_cast<uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  uintptr_t to = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kPage - 1);
  if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
}

// reserve(), with the new block advised before the rows are copied into it when it is large.
template <class T>
void reserve_huge(std::vector<T>& column, size_t rows) {
  if (rows <= column.capacity()) return;
  if (rows * sizeof(T) < kHugeColumnBytes) return column.reserve(rows);
  std::vector<T> grown;
  grown.reserve(rows);
  advise_huge_pages(grown.data(), rows * sizeof(T));
  grown.insert(grown.end(), column.begin(), column.end());
  column.swap(grown);
}

// push_back(), growing by doubling as std::vector does, through reserve_huge.
template <class T>
void push_back_huge(std::vector<T>& column, const T& value) {
  if (column.size() == column.capacity()) reserve_huge(column, column.empty() ? 1 : 2 * column.size());
  column.push_back(value);
}

template <class T>
void resize_huge(std::vector<T>& column, size_t rows, const T& value = T()) {
  reserve_huge(column, rows);
  column.resize(rows, value);
}

template <class T>
void assign_huge(std::vector<T>& column, size_t rows, const T& value) {
  column.clear();
  resize_huge(column, rows, value);
}

}  // namespace sl
