// libFuzzer target for Nsight Systems SQLite exports: any bytes, read as a database in memory,
// must give a store or a clean error (no crash, leak or undefined behaviour), and a loaded store
// must answer its queries and describe itself in `info`.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/nsys_loader.h"
#include "core/trace_info.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sl::LoadResult r = sl::load_nsys_bytes(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  if (!r.ok()) return 0;
  const sl::TraceStore& s = *r.store;
  (void)sl::info_json(s);
  (void)sl::info_text(s);
  for (uint32_t t = 0; t < s.tracks.size(); ++t) {
    const auto& c = s.slices(t);
    for (uint32_t i = 0; i < c.size(); ++i) {
      sl::SliceRef ref{t, i};
      (void)s.launch_of(ref);
      (void)s.activities_of(ref);
      (void)s.flows_from(ref);
      (void)s.slice_at(t, c.start[i]);
      if (c.args[i] != sl::kNone) (void)s.decode_args(c.args[i]);
    }
  }
  return 0;
}
