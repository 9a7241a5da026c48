// Two independent pieces of work on two threads (this one and one started for the second),
// for the steps of finishing a store that only a second core can shorten. With one hardware
// thread they run one after the other. Each must touch state the other does not write.
#pragma once

#include <atomic>
#include <thread>
#include <utility>

namespace sl {

// While one is alive, run_both runs its two pieces one after the other on the calling thread:
// for tests that compare the two-thread result with the one-thread one.
class OneThreadOnly {
public:
  OneThreadOnly() { ++count(); }
  ~OneThreadOnly() { --count(); }
  OneThreadOnly(const OneThreadOnly&) = delete;
  OneThreadOnly& operator=(const OneThreadOnly&) = delete;
  static bool active() { return count() > 0; }

private:
  static std::atomic<int>& count() {
    static std::atomic<int> n{0};
    return n;
  }
};

template <class F, class G>
void run_both(F&& first, G&& second) {
  if (OneThreadOnly::active() || std::thread::hardware_concurrency() < 2) {
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
