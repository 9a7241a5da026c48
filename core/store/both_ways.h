// Two independent pieces of work on two threads (this one and one started for the second),
// for the steps of finishing a store that only a second core can shorten. They run one after the
// other when one hardware thread is all there is, or when the work is small: a second thread
// then saves a few milliseconds and costs memory (its own allocator arena, ~1 MB of peak RSS on
// a 30 MB trace). Each piece must touch only state the other does not write.
#pragma once

#include <atomic>
#include <cstddef>
#include <thread>
#include <utility>

#include "core/store/cores.h"

namespace sl {

// Rows (slices, flow points) from which finishing a store uses a second thread: 256K, a store
// of ~30 MB, where the second thread's arena is ~3% of the memory and finishing takes ~10 ms
// (an Nsight report of 900k kernels finished 5-8 ms sooner than with 1M as the bar).
inline constexpr size_t kTwoThreadsFrom = size_t(1) << 18;

// Tests force one way or the other: comparing the two results is how they check that the
// threads agree (at any size).
enum class Threads { Auto, One, Two };
class ForceThreads {
public:
  explicit ForceThreads(Threads t) : saved_(choice().exchange(t)) {}
  ~ForceThreads() { choice() = saved_; }
  ForceThreads(const ForceThreads&) = delete;
  ForceThreads& operator=(const ForceThreads&) = delete;
  static std::atomic<Threads>& choice() {
    static std::atomic<Threads> c{Threads::Auto};
    return c;
  }

private:
  Threads saved_;
};

// `rows`: how much work there is, against kTwoThreadsFrom.
template <class F, class G>
void run_both(size_t rows, F&& first, G&& second) {
  Threads forced = ForceThreads::choice();
  bool two = forced == Threads::Two ||
             (forced == Threads::Auto && rows >= kTwoThreadsFrom && usable_cores() > 1);
  if (!two) {
    first();
    second();
    return;
  }
  std::thread other(std::forward<G>(second));
  // The thread is joined before leaving, even when `first` throws (bad_alloc): `second` may
  // still be using what the caller owns.
  struct Join {
    std::thread& t;
    ~Join() { t.join(); }
  } join{other};
  first();
}

}  // namespace sl
