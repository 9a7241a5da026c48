// Internal to critical_path*.cpp: what the Sightline (§10) and HTA constructions share.
#pragma once

#include "core/analysis/critical_path.h"

namespace sl::analysis::detail {

// Fills cp.summary (per bound_by sum, count, pct of cp.length) from cp.path.
void summarize_path(CriticalPath& cp);

// HTA mode: Holistic Trace Analysis' critical_path_analysis(rank, annotation, instance_id).
CriticalPath critical_path_hta(const EventTable& table, const CriticalPathOptions& options);
// Every edge of HTA's graph (for tests that check edges off the path, as HTA's own tests do).
std::vector<CriticalPathEdge> hta_graph_edges(const EventTable& table, const CriticalPathOptions& options);

}  // namespace sl::analysis::detail
