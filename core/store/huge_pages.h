// Large arrays are cheaper on 2 MB pages when faulted in at once (a snapshot's columns: one fault
// per 2 MB) or read at random (a lane's spans, drawn: a zoomed-out frame touches a new 4 KB page
// per folded block, and on a virtual machine each TLB miss is a two-level page walk).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace sl {

// Asks the kernel to back the whole 2 MB pages inside [data, data + bytes) with huge pages (when
// transparent huge pages are on "madvise"); call it before the memory is first written. Smaller
// ranges are left alone. Advice only: a refusal changes nothing but speed.
inline void prefer_huge_pages(void* data, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  uintptr_t begin = (uintptr_t(data) + kHuge - 1) & ~(kHuge - 1), end = (uintptr_t(data) + bytes) & ~(kHuge - 1);
  if (data && end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// Prepares fresh memory about to be written whole (a column copied in, a table's rows): huge
// pages over its whole 2 MB pages, then every page populated in one system call. Touching fresh
// memory page by page costs a page fault per 4 KB (on a virtual machine, microseconds each, as
// much as the writing): with huge pages it is one per 2 MB, and populating ahead takes the fault
// out of the rest (the kernel still zeroes them). Populating keeps what the pages hold. Both are
// advice: an older kernel that refuses them only loses the speed.
inline void prepare_fresh_memory(void* data, size_t bytes) {
  static const uintptr_t kPage = uintptr_t(::sysconf(_SC_PAGESIZE));
  prefer_huge_pages(data, bytes);
  uintptr_t begin = reinterpret_cast<uintptr_t>(data), end = begin + bytes;
  uintptr_t from = (begin + kPage - 1) & ~(kPage - 1), to = end & ~(kPage - 1);
#ifdef MADV_POPULATE_WRITE
  if (data && to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
#endif
}

}  // namespace sl
