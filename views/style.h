// Colours, themes and fonts shared by every view (and, later, figures): stable per name.
#pragma once

#include <imgui.h>

#include <string>
#include <string_view>

#include "core/trace_store.h"

namespace sl::views {

enum class ColorMode { ByName, ByCategory, ByKernelType };
enum class Theme { Light, Dark };

// Kernel types as analyses.md defines them (Sightline mode).
enum class KernelKind { Computation, Communication, Memory, Sync, Other, NotGpu };
KernelKind kernel_kind(std::string_view name, std::string_view cat, bool on_gpu);
const char* kernel_kind_name(KernelKind k);

ImU32 color_for_key(std::string_view key, Theme theme);  // stable hash → hue
ImU32 kernel_kind_color(KernelKind k);                   // colour-blind-safe (Okabe–Ito)
ImU32 idle_cause_color(int cause);                       // by sl::analysis::IdleCause
ImU32 text_color_on(ImU32 fill);

// Kernel names shortened for display: template arguments and parameter lists elided.
std::string short_name(std::string_view name);

void apply_theme(Theme theme);
// Loads DejaVu Sans from assets/ at `scale` (the monitor's content scale); false if missing.
bool load_fonts(float scale);

}  // namespace sl::views
