#include "core/present/diff_palette.h"

#include <algorithm>
#include <cmath>

namespace sl::present {
namespace {

// Okabe–Ito: blue = B faster, orange → vermillion = B slower; reddish purple = unmatched.
constexpr Rgb kFaster{0, 114, 178}, kSlower{230, 159, 0}, kMuchSlower{213, 94, 0}, kUnmatched{204, 121, 167};
constexpr Rgb kSame{190, 190, 190}, kOther{228, 228, 228};

Rgb mix(Rgb x, Rgb y, float t) {
  auto ch = [t](uint8_t a, uint8_t b) { return uint8_t(std::lround(float(a) + (float(b) - float(a)) * t)); };
  return {ch(x.r, y.r), ch(x.g, y.g), ch(x.b, y.b)};
}

double relative(int64_t a, int64_t b) { return (double(b) - double(a)) / double(std::max<int64_t>(a, 1)); }

}  // namespace

Change change_of(int64_t a, int64_t b) {
  double rel = relative(a, b);
  if (std::abs(rel) < kSameWithin) return Change::Same;
  if (rel < 0) return Change::Faster;
  return rel < kMuchSlowerFrom ? Change::Slower : Change::MuchSlower;
}

Rgb change_rgb(int64_t a, int64_t b) {
  double rel = relative(a, b);
  switch (change_of(a, b)) {
    case Change::Same: return kSame;
    case Change::Faster: return mix(kSame, kFaster, float(std::min(1.0, 0.4 - rel)));
    case Change::Slower: return mix(kSame, kSlower, float(std::min(1.0, 0.4 + rel * 2.4)));
    default: return mix(kSlower, kMuchSlower, float(std::min(1.0, (rel - kMuchSlowerFrom) * 2)));
  }
}

Rgb change_swatch(Change c) {
  switch (c) {
    case Change::Faster: return change_rgb(100, 60);
    case Change::Same: return kSame;
    case Change::Slower: return change_rgb(100, 115);
    case Change::MuchSlower: return change_rgb(100, 200);
    case Change::Unmatched: return kUnmatched;
    case Change::NotCompared: break;
  }
  return kOther;
}

const char* change_label(Change c) {
  switch (c) {
    case Change::Faster: return "B faster (< -5%)";
    case Change::Same: return "within ±5%";
    case Change::Slower: return "B slower (5–25%)";
    case Change::MuchSlower: return "B much slower (≥ 25%)";
    case Change::Unmatched: return "unmatched (removed in A / added in B)";
    case Change::NotCompared: break;
  }
  return "not compared";
}

const char* change_short_label(Change c) {
  switch (c) {
    case Change::Faster: return "faster";
    case Change::Same: return "±5%";
    case Change::Slower: return "slower";
    case Change::MuchSlower: return "≥25% slower";
    case Change::Unmatched: return "unmatched";
    case Change::NotCompared: break;
  }
  return "not compared";
}

ChangeTints::ChangeTints(const TraceStore& store, const diff::AlignedDiff& d, bool run_b) {
  for (const diff::AlignedOp& op : d.ops) map_[key(run_b ? op.b : op.a)] = change_rgb(op.dur_a, op.dur_b);
  // An unmatched op's whole subtree: the slices that follow it on its track while it lasts.
  for (const diff::UnmatchedOp& u : run_b ? d.added : d.removed) {
    if (u.ref.track >= store.tracks.size() || u.ref.index >= store.slices(u.ref.track).size()) continue;  // not this run's
    const SliceColumns& c = store.slices(u.ref.track);
    TimeNs end = c.start[u.ref.index] + c.dur[u.ref.index];
    for (uint32_t i = u.ref.index; i < c.start.size() && c.start[i] < end; ++i)
      if (i == u.ref.index || c.depth[i] > c.depth[u.ref.index]) map_[key({u.ref.track, i})] = kUnmatched;
  }
}

std::optional<Rgb> ChangeTints::find(const TraceStore& store, SliceRef r) const {
  if (auto it = map_.find(key(r)); it != map_.end()) return it->second;
  // A kernel takes the tint of the launch that queued it; launch calls are aligned but not listed
  // as operators, so that is the tint of the nearest enclosing op.
  if (store.is_gpu(r))
    for (SliceRef l = store.launch_of(r); l.valid(); l = store.parent(l))
      if (auto it = map_.find(key(l)); it != map_.end()) return it->second;
  return std::nullopt;
}

}  // namespace sl::present
