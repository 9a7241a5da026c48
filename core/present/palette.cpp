#include "core/present/palette.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>

#include "core/analysis/idle_time.h"
#include "core/names/short_names.h"
#include "core/store/string_pool.h"

namespace sl::present {
namespace {

bool contains_ci(std::string_view text, std::string_view needle) {
  return std::search(text.begin(), text.end(), needle.begin(), needle.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         }) != text.end();
}

uint8_t to_u8(float v) { return uint8_t(std::clamp(v, 0.f, 1.f) * 255.f + 0.5f); }

// HSV → RGB as ImGui converts it, so the screen and the figures agree to the last bit.
Rgb hsv(float h, float s, float v) {
  if (s == 0) return {to_u8(v), to_u8(v), to_u8(v)};
  h = std::fmod(h, 1.f) / (60.f / 360.f);
  int i = int(h);
  float f = h - float(i), p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  float r, g, b;
  switch (i) {
    case 0: r = v, g = t, b = p; break;
    case 1: r = q, g = v, b = p; break;
    case 2: r = p, g = v, b = t; break;
    case 3: r = p, g = q, b = v; break;
    case 4: r = t, g = p, b = v; break;
    default: r = v, g = p, b = q; break;
  }
  return {to_u8(r), to_u8(g), to_u8(b)};
}

}  // namespace

KernelKind kernel_kind(std::string_view name, std::string_view cat, bool on_gpu) {
  if (!on_gpu) return KernelKind::NotGpu;
  if (contains_ci(name, "nccl") || contains_ci(name, "rccl") || contains_ci(name, "hccl")) return KernelKind::Communication;
  if (cat == "gpu_memcpy" || cat == "Memcpy" || cat == "gpu_memset" || cat == "Memset" || name.starts_with("Memcpy") ||
      name.starts_with("Memset"))
    return KernelKind::Memory;
  if (cat == "cuda_sync") return KernelKind::Sync;
  if (cat == "kernel" || cat == "Kernel" || cat == "mtia_ccp_events") return KernelKind::Computation;
  return KernelKind::Other;
}

const char* kernel_kind_name(KernelKind k) {
  switch (k) {
    case KernelKind::Computation: return "computation";
    case KernelKind::Communication: return "communication";
    case KernelKind::Memory: return "memory";
    case KernelKind::Sync: return "sync";
    case KernelKind::Other: return "other GPU";
    case KernelKind::NotGpu: return "CPU";
  }
  return "";
}

Rgb key_rgb(std::string_view key, bool dark) {
  uint64_t h = hash_bytes(key);
  float hue = float(h % 360) / 360.f;
  float sat = 0.35f + float((h >> 12) % 20) / 100.f;
  float val = !dark ? 0.88f - float((h >> 20) % 12) / 100.f : 0.62f + float((h >> 20) % 12) / 100.f;
  return hsv(hue, sat, val);
}

Rgb kernel_kind_rgb(KernelKind k) {
  switch (k) {  // Okabe–Ito palette
    case KernelKind::Computation: return {0, 114, 178};
    case KernelKind::Communication: return {230, 159, 0};
    case KernelKind::Memory: return {0, 158, 115};
    case KernelKind::Sync: return {213, 94, 0};
    case KernelKind::Other: return {204, 121, 167};
    case KernelKind::NotGpu: return {170, 170, 170};
  }
  return {128, 128, 128};
}

// Colour-blind safe (Okabe-Ito, with Tol's sand, olive and indigo for the causes added in §2b's revision),
// in IdleCause order.
Rgb idle_cause_rgb(int cause) {
  static const Rgb colors[] = {
      {148, 103, 189},  // data loading
      {213, 94, 0},     // host synchronisation
      {221, 204, 119},  // capture / warm-up (sand: not steady state, a quiet colour)
      {153, 153, 51},   // host compute (olive: apart from "other GPU"'s reddish purple)
      {230, 159, 0},    // launch-bound
      {51, 34, 136},    // host untraced (indigo)
      {86, 180, 233},   // cross-stream wait
      {0, 128, 128},    // collective wait (teal: apart from the blues, the greys and communication's orange)
      {240, 228, 66},   // launch latency
      {160, 160, 160},  // other
  };
  static_assert(std::size(colors) == analysis::kIdleCauseCount);
  return colors[std::clamp(cause, 0, analysis::kIdleCauseCount - 1)];
}

const char* idle_cause_label(int cause) {
  static const char* labels[] = {"data loading", "host synchronisation", "capture / warm-up", "host compute",
                                 "launch-bound", "host untraced", "cross-stream wait", "collective wait",
                                 "launch latency", "other"};
  static_assert(std::size(labels) == analysis::kIdleCauseCount);
  return labels[std::clamp(cause, 0, analysis::kIdleCauseCount - 1)];
}

bool prefers_dark_text(Rgb fill) { return 0.299f * fill.r + 0.587f * fill.g + 0.114f * fill.b > 0.55f * 255.f; }

// One rule for every caller: core/names/short_names.h (memory names whole, "->" not a bracket).
std::string short_name(std::string_view name) { return base_short_name(name); }

}  // namespace sl::present
