// libFuzzer target for fleet files and rank summaries (core/fleet/): any bytes must give a fleet
// (or a summary) or a clean error naming what and where (no crash, leak or undefined behaviour),
// and a parsed fleet must render its report and serialise again. Inputs whose first byte is odd
// are resealed first (checksums recomputed), so mutations reach the section parsers.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/fleet/fleet.h"
#include "core/fleet/fleet_report.h"
#include "core/fleet/sections.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) sl::fleet::reseal_sections(bytes);
  std::string error;
  sl::fleet::RankSummary rank;
  if (sl::fleet::parse_rank_summary(bytes, rank, error)) (void)sl::fleet::serialize_rank_summary(rank);
  sl::fleet::Fleet fleet;
  if (!sl::fleet::parse_fleet(bytes, fleet, error)) return 0;
  for (size_t i = 0; i < fleet.ranks.size(); ++i) {  // each rank's packed summary, decoded when asked
    sl::fleet::RankSummary whole;
    (void)fleet.summary(i, whole, error);
  }
  sl::fleet::FleetReportOptions o;
  (void)sl::fleet::render_fleet_text(fleet, o);
  (void)sl::fleet::render_fleet_json(fleet, o);
  (void)sl::fleet::serialize_fleet(fleet);
  return 0;
}
