// Ordering and nesting of a track's columns, shared by TraceStore::finalize (whole tracks) and
// TraceBuilder::finish_appended (only the tail a live batch touched).
#pragma once

#include <cstdint>
#include <vector>

#include "core/store/import_issues.h"
#include "core/store/track_columns.h"

namespace sl {

// column[from + i] = old column[order[i]] for every i; `order` holds rows >= from.
template <class T, class Alloc>
void permute_from(std::vector<T, Alloc>& column, size_t from, const std::vector<uint32_t>& order) {
  std::vector<T> sorted;
  sorted.reserve(order.size());
  for (uint32_t row : order) sorted.push_back(column[row]);
  std::copy(sorted.begin(), sorted.end(), column.begin() + std::ptrdiff_t(from));
}

// Slices order by start, the longer first on equal starts (so an enclosing slice comes before
// what it encloses); equal (start, dur) keep the order they were added in.
inline bool slice_before(const SliceColumns& c, uint32_t a, uint32_t b) {
  if (c.start[a] != c.start[b]) return c.start[a] < c.start[b];
  return c.dur[a] > c.dur[b];
}

// Reorders the input columns (start, dur, name, cat, args, corr) of rows >= from.
void permute_slices(SliceColumns& c, size_t from, const std::vector<uint32_t>& order);
void sort_slices(SliceColumns& c);
void sort_instants(InstantColumns& i);
// Stable sort of a time column and its companion.
void sort_series(std::vector<TimeNs>& ts, std::vector<double>& values);

// Nests rows [from, size) of a sorted track whose rows [0, from) are nested and whose
// lane_depths describe exactly those rows. Sets parent, depth, lane and max_end_prefix of the
// new rows, extends lane_depths, and returns how many of them went to a lane group > 0.
uint32_t nest_slices_from(Track& track, uint32_t from, ImportIssues& issues);

}  // namespace sl
