// A column of the store: a std::vector whose rows can be moved into one shared block, every
// track's rows of that column back to back (TraceStore::pack_slice_columns), so that all tracks
// read as one array without a copy (the Python module's slices() of a whole trace). Until then,
// and for anything allocated after, the allocator is the heap's, exactly as std::vector's; a
// block is only ever handed out once, front to back, and freed with the last column holding it
// (each allocator shares it, so a column moved anywhere keeps its rows valid).
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace sl {

// One column's packed rows: carved front to back, released as a whole.
class ColumnBlock {
public:
  explicit ColumnBlock(size_t bytes) : bytes_(bytes ? new std::byte[bytes] : nullptr), size_(bytes) {}
  // `bytes` more from the front, or null when they do not fit (the caller goes to the heap).
  void* carve(size_t bytes) {
    if (bytes > size_ - used_) return nullptr;
    void* p = bytes_.get() + used_;
    used_ += bytes;
    return p;
  }
  bool holds(const void* p) const {
    const std::byte* b = static_cast<const std::byte*>(p);
    return b >= bytes_.get() && b < bytes_.get() + size_;
  }

private:
  std::unique_ptr<std::byte[]> bytes_;
  size_t size_ = 0, used_ = 0;
};

// The heap, or a block first. Rows carved from a block are never freed one by one (the block
// goes with the last column sharing it); a column that outgrows its carved rows moves to the heap.
template <class T>
struct ColumnAllocator {
  using value_type = T;
  // A column moved or swapped keeps where its rows live; a copy goes to the heap.
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using propagate_on_container_copy_assignment = std::false_type;

  std::shared_ptr<ColumnBlock> block;

  ColumnAllocator() = default;
  explicit ColumnAllocator(std::shared_ptr<ColumnBlock> b) : block(std::move(b)) {}
  template <class U>
  ColumnAllocator(const ColumnAllocator<U>& other) : block(other.block) {}

  T* allocate(size_t n) {
    if (block)
      if (void* p = block->carve(n * sizeof(T))) return static_cast<T*>(p);
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) {
    if (!block || !block->holds(p)) std::allocator<T>().deallocate(p, n);
  }
  ColumnAllocator select_on_container_copy_construction() const { return {}; }

  template <class U>
  bool operator==(const ColumnAllocator<U>& other) const { return block == other.block; }
};

template <class T>
using Column = std::vector<T, ColumnAllocator<T>>;

}  // namespace sl
