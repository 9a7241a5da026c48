// Internal to critical_path*.cpp: what the Sightline (§10) and HTA constructions share.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "core/analysis/critical_path.h"

namespace sl::analysis::detail {

// Fills cp.summary (per bound_by sum, count, pct of cp.length) from cp.path.
void summarize_path(CriticalPath& cp);

// The span of every row, for an instance that is the whole trace; none (with a note) when empty.
std::optional<std::pair<TimeNs, TimeNs>> whole_trace_span(const EventTable& table, std::string& note);

// No instance of o.annotation was found: whether the whole trace stands in for it (the default
// annotation, not one the user named, and no instance past 0). Sets `note` either way: the
// fallback's note when true, why there is no path when false.
bool whole_trace_stands_in(const CriticalPathOptions& o, std::string& note);

// HTA mode: Holistic Trace Analysis' critical_path_analysis(rank, annotation, instance_id).
CriticalPath critical_path_hta(const EventTable& table, const CriticalPathOptions& options);
// Every edge of HTA's graph (for tests that check edges off the path, as HTA's own tests do).
std::vector<CriticalPathEdge> hta_graph_edges(const EventTable& table, const CriticalPathOptions& options);

}  // namespace sl::analysis::detail
