// Deep stacks folded, on screen and in figures alike. Python with_stack traces nest twenty frames
// and more; a track with 2 × kFoldedLevels levels or more shows its first kFoldedLevels and one
// "N more levels" row (a click unfolds it in the GUI; `render --max-depth`/`--tracks` in figures).
// Folding fewer levels is not worth the row; GPU streams are never deep (annotation → kernel).
#pragma once

#include <cstdint>

#include "core/store/track_columns.h"

namespace sl::present {

constexpr uint32_t kFoldedLevels = 4;

inline bool folds_deep_stack(TrackKind kind, uint32_t levels) {
  return kind != TrackKind::GpuStream && levels >= 2 * kFoldedLevels;
}

}  // namespace sl::present
