// Colours, themes and fonts shared by every view (and, later, figures): stable per name.
#pragma once

#include <imgui.h>

#include <string>
#include <string_view>

#include "core/present/palette.h"
#include "core/store/trace_store.h"

namespace sl::views {

enum class ColorMode { ByName, ByCategory, ByKernelType };
enum class Theme { Light, Dark };

ImU32 color_for_key(std::string_view key, Theme theme);  // stable hash → hue
ImU32 kernel_kind_color(present::KernelKind k);          // colour-blind-safe (Okabe–Ito)
ImU32 idle_cause_color(int cause);                       // by sl::analysis::IdleCause
ImU32 text_color_on(ImU32 fill);

void apply_theme(Theme theme);
// Loads DejaVu Sans from assets/ at `scale` (the monitor's content scale); false if missing.
bool load_fonts(float scale);

}  // namespace sl::views
