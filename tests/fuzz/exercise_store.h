// What every fuzz target does with a store its reader produced: describe it and ask every query
// of every slice, so that a store a reader built wrongly fails here, under the sanitizers.
#pragma once
#include "core/report/trace_info.h"
#include "core/store/trace_store.h"

namespace sl::fuzz {

inline void exercise_store(const TraceStore& s) {
  (void)info_json(s);
  (void)info_text(s);
  for (uint32_t t = 0; t < s.tracks.size(); ++t) {
    const auto& c = s.slices(t);
    for (uint32_t i = 0; i < c.size(); ++i) {
      SliceRef ref{t, i};
      (void)s.launch_of(ref);
      (void)s.activities_of(ref);
      (void)s.flows_from(ref);
      (void)s.slice_at(t, c.start[i]);
      if (c.args[i] != kNone) (void)s.decode_args(c.args[i]);
    }
  }
  // Every args row, instants' too: a damaged block must read as empty, never crash.
  for (uint32_t row = 0; row < s.args_table().size(); ++row) (void)s.args_json(row);
}

}  // namespace sl::fuzz
