// The loader's slow path: what chrome://tracing and Perfetto forgive in a trace that the fast
// parse refused, found by one structural scan so that the text can be repaired and parsed again.
//
// - A file cut off mid-write (a run killed by the scheduler or out of memory, a crashed profiler,
//   a copy taken while the file was written). The Trace Event Format lets the JSON Array Format
//   end without its `]` for exactly this reason, and both viewers show every complete event of a
//   cut-off object-format file too. The repaired text keeps the original bytes up to the end of
//   the last complete element of the events array (or of the last complete top-level member once
//   the array is closed) and closes what is open after it.
// - Trailing commas before `]` or `}` anywhere: blanked (same length, so every offset holds).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sl {

struct JsonRepair {
  std::vector<uint64_t> trailing_commas;  // offsets of `,` that stand right before `]` or `}`
  bool truncated = false;                 // the text stops before the top level is closed
  uint64_t keep = 0;                      // with `truncated`: the bytes [0, keep) are kept...
  std::string closers;                    // ...followed by these ("]}", "]" or "}")
  uint64_t complete_events = 0;           // elements of the events array complete before the cut
  // Not repairable as a trace (the cut comes before any complete event, or before the events
  // array): a message for the user, at `error_offset`.
  std::string error;
  uint64_t error_offset = 0;
  bool needed() const { return truncated || !trailing_commas.empty() || !error.empty(); }
};

// Scans `text` (a whole file that failed to parse). Looks only at structure: brackets, strings
// and commas; what it cannot make sense of (a `]` closing a `{`) it leaves to the parser's error.
JsonRepair plan_json_repair(std::string_view text);

}  // namespace sl
