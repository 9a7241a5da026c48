#include "core/analysis/idle_ledger.h"

#include <algorithm>
#include <unordered_map>

namespace sl::analysis {

IdleLedger::IdleLedger(const IdleCauses& causes)
    : window_(causes.window), device_(causes.device) {
  std::array<std::vector<Interval>, kIdleCauseCount> by;
  for (const DeviceIdle& d : device_) {
    const size_t c = size_t(d.cause);
    by_cause_[c] += d.end - d.start, ++pieces_[c], device_total_ += d.end - d.start;
    by[c].push_back({d.start, d.end});
  }
  for (size_t c = 0; c < by.size(); ++c) index_[c] = IntervalIndex(std::move(by[c]));
}

TimeNs IdleLedger::device_idle_within(TimeNs t0, TimeNs t1) const {
  TimeNs sum = 0;
  for (const IntervalIndex& i : index_) sum += i.covered(t0, t1);
  return sum;
}

std::vector<HostEvent> IdleLedger::top_events(const IdleCauses& causes, IdleCause c, size_t keep) const {
  std::vector<HostEvent> events;
  for (const DeviceIdle& d : device_)
    if (d.cause == c)
      events.insert(events.end(), causes.device_top.begin() + d.top_begin, causes.device_top.begin() + d.top_begin + d.top_count);
  return sum_host_events(events, keep);
}

const DeviceIdle* IdleLedger::longest(IdleCause c) const {
  const DeviceIdle* best = nullptr;
  for (const DeviceIdle& d : device_)
    if (d.cause == c && (!best || d.end - d.start > best->end - best->start)) best = &d;
  return best;
}

}  // namespace sl::analysis
