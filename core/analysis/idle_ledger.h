// The idle ledger of §2b: every nanosecond the GPU sat idle in the idle window, with exactly one
// cause. Per stream it is IdleCauses (each stream's gaps); device-wide it is the stretches where
// no stream was busy, each explained by the stream that resumed first. Every verdict, insight,
// headline, hover text and figure reads its idle costs from here and from nowhere else.
#pragma once

#include <array>
#include <vector>

#include "core/analysis/idle_time.h"
#include "core/analysis/interval_index.h"

namespace sl::analysis {

class IdleLedger {
public:
  IdleLedger() = default;
  explicit IdleLedger(const IdleCauses& causes);  // Sightline mode's causes (with their device pieces)

  Interval window() const { return window_; }
  // Device-wide: sorted, disjoint pieces where no stream had a kernel, copy or set running.
  const std::vector<DeviceIdle>& device() const { return device_; }
  TimeNs device_idle() const { return device_total_; }
  TimeNs device_idle(IdleCause c) const { return by_cause_[size_t(c)]; }
  uint64_t pieces(IdleCause c) const { return pieces_[size_t(c)]; }
  // Device-wide idle of cause `c` inside [t0, t1).
  TimeNs device_idle(IdleCause c, TimeNs t0, TimeNs t1) const { return index_[size_t(c)].covered(t0, t1); }
  TimeNs device_idle_within(TimeNs t0, TimeNs t1) const;
  // The top CPU events in the host windows of cause `c`'s device-wide pieces (each piece's own
  // window, so two streams' gaps over one stretch count its events once).
  // (The ledger keeps no pointer into the report that owns both: reports move.)
  std::vector<HostEvent> top_events(const IdleCauses& causes, IdleCause c, size_t keep = 3) const;
  // The longest device-wide piece of cause `c`, if any.
  const DeviceIdle* longest(IdleCause c) const;

private:
  Interval window_{0, 0};
  std::vector<DeviceIdle> device_;
  TimeNs device_total_ = 0;
  std::array<TimeNs, kIdleCauseCount> by_cause_{};
  std::array<uint64_t, kIdleCauseCount> pieces_{};
  std::array<IntervalIndex, kIdleCauseCount> index_;
};

}  // namespace sl::analysis
