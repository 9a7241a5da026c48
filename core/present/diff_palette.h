// Colour by change, shared by the GUI's diff tab and the diff figure (no ImGui here): how B's
// duration of a matched operator compares with A's, in Okabe–Ito hues, plus the per-slice tints
// of one run (matched ops, unmatched subtrees, kernels through the launch that queued them).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "core/diff/aligned_diff.h"
#include "core/present/palette.h"

namespace sl::present {

enum class Change : uint8_t { Faster, Same, Slower, MuchSlower, Unmatched, NotCompared };
constexpr int kChangeCount = 6;
constexpr double kSameWithin = 0.05;     // |B - A| / A below this counts as unchanged
constexpr double kMuchSlowerFrom = 0.25;  // B at least 25% slower

Change change_of(int64_t a, int64_t b);
// The tint of one op: its category's hue, stronger as the change grows (the screen's colours).
Rgb change_rgb(int64_t a, int64_t b);
Rgb change_swatch(Change c);        // a representative tint, for legends
const char* change_label(Change c);  // "B faster (< -5%)", ...
const char* change_short_label(Change c);  // "faster", ...: the GUI's one-line header

// Tints of one run's slices from an aligned diff: matched ops by change, the whole subtree of an
// unmatched op as unmatched; a kernel takes the tint of the op that launched it; anything else
// is NotCompared.
class ChangeTints {
public:
  ChangeTints() = default;
  ChangeTints(const TraceStore& store, const diff::AlignedDiff& d, bool run_b);
  std::optional<Rgb> find(const TraceStore& store, SliceRef r) const;  // nullopt: not compared
  Rgb of(const TraceStore& store, SliceRef r) const { return find(store, r).value_or(change_swatch(Change::NotCompared)); }

private:
  static uint64_t key(SliceRef r) { return (uint64_t(r.track) << 32) | r.index; }
  std::unordered_map<uint64_t, Rgb> map_;
};

}  // namespace sl::present
