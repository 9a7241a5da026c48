// Colours and display names shared by the GUI views and the figure renderer. No ImGui here, so
// headless code (figures/, `sightline render`) draws with exactly the colours of the screen.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sl::present {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

// Kernel types as analyses.md defines them (Sightline mode).
enum class KernelKind { Computation, Communication, Memory, Sync, Other, NotGpu };
KernelKind kernel_kind(std::string_view name, std::string_view cat, bool on_gpu);
const char* kernel_kind_name(KernelKind k);

Rgb key_rgb(std::string_view key, bool dark);  // stable hash of the name → hue, same in every run
Rgb kernel_kind_rgb(KernelKind k);             // colour-blind-safe (Okabe–Ito)
Rgb idle_cause_rgb(int cause);                 // by sl::analysis::IdleCause
const char* idle_cause_label(int cause);       // "data loading", ... for legends and tooltips
bool prefers_dark_text(Rgb fill);              // luminance test for labels drawn on `fill`

// Kernel names shortened for display: template arguments and parameter lists elided.
std::string short_name(std::string_view name);

}  // namespace sl::present
