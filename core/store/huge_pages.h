// Large arrays are cheaper on 2 MB pages when faulted in at once (a snapshot's columns: one fault
// per 2 MB) or read at random (a lane's spans, drawn: a zoomed-out frame touches a new 4 KB page
// per folded block, and on a virtual machine each TLB miss is a two-level page walk).
#pragma once

#include <sys/mman.h>

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

}  // namespace sl
