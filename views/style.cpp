#include "views/style.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/string_pool.h"

namespace sl::views {

static bool contains_ci(std::string_view text, std::string_view needle) {
  return std::search(text.begin(), text.end(), needle.begin(), needle.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         }) != text.end();
}

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

ImU32 color_for_key(std::string_view key, Theme theme) {
  uint64_t h = hash_bytes(key);
  float hue = float(h % 360) / 360.f;
  float sat = 0.35f + float((h >> 12) % 20) / 100.f;
  float val = theme == Theme::Light ? 0.88f - float((h >> 20) % 12) / 100.f : 0.62f + float((h >> 20) % 12) / 100.f;
  return ImColor::HSV(hue, sat, val);
}

ImU32 kernel_kind_color(KernelKind k) {
  switch (k) {  // Okabe–Ito palette
    case KernelKind::Computation: return IM_COL32(0, 114, 178, 255);
    case KernelKind::Communication: return IM_COL32(230, 159, 0, 255);
    case KernelKind::Memory: return IM_COL32(0, 158, 115, 255);
    case KernelKind::Sync: return IM_COL32(213, 94, 0, 255);
    case KernelKind::Other: return IM_COL32(204, 121, 167, 255);
    case KernelKind::NotGpu: return IM_COL32(170, 170, 170, 255);
  }
  return IM_COL32(128, 128, 128, 255);
}

ImU32 idle_cause_color(int cause) {
  static const ImU32 colors[] = {
      IM_COL32(148, 103, 189, 255),  // data loading
      IM_COL32(213, 94, 0, 255),     // host synchronisation
      IM_COL32(230, 159, 0, 255),    // host launch-bound
      IM_COL32(86, 180, 233, 255),   // cross-stream wait
      IM_COL32(240, 228, 66, 255),   // launch latency
      IM_COL32(160, 160, 160, 255),  // other
  };
  return colors[std::clamp(cause, 0, 5)];
}

ImU32 text_color_on(ImU32 fill) {
  float r = (fill & 0xFF) / 255.f, g = ((fill >> 8) & 0xFF) / 255.f, b = ((fill >> 16) & 0xFF) / 255.f;
  return 0.299f * r + 0.587f * g + 0.114f * b > 0.55f ? IM_COL32(20, 20, 20, 255) : IM_COL32(250, 250, 250, 255);
}

std::string short_name(std::string_view name) {
  if (name.find('<') == std::string_view::npos && name.find('(') == std::string_view::npos) return std::string(name);
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '-' && i + 1 < name.size() && name[i + 1] == '>' && depth == 0) {
      out += "->";
      ++i;
      continue;
    }
    if (c == '<' || c == '(') ++depth;
    else if ((c == '>' || c == ')') && depth > 0) --depth;
    else if (depth == 0) out += c;
  }
  for (size_t at; (at = out.find("::::")) != std::string::npos;) out.erase(at, 2);  // (anonymous namespace)
  while (!out.empty() && out.back() == ' ') out.pop_back();
  size_t space = out.rfind(' ');
  if (space != std::string::npos && space + 1 < out.size()) out = out.substr(space + 1);
  return out.empty() ? std::string(name.substr(0, 60)) : out;
}

void apply_theme(Theme theme) {
  if (theme == Theme::Light) ImGui::StyleColorsLight();
  else ImGui::StyleColorsDark();
  ImGuiStyle& s = ImGui::GetStyle();
  s.WindowRounding = 0;
  s.FrameRounding = 3;
  s.ScrollbarRounding = 3;
  s.WindowBorderSize = 0;
  s.ItemSpacing = ImVec2(8, 4);
}

bool load_fonts(float scale) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  std::filesystem::path font = std::filesystem::path(SIGHTLINE_ASSETS_DIR) / "fonts" / "DejaVuSans.ttf";
  ImFontConfig config;
  config.OversampleH = 2;
  static const ImWchar ranges[] = {0x0020, 0x00FF, 0x0370, 0x03FF, 0x2010, 0x2044, 0x2190, 0x21FF, 0x2260, 0x22FF, 0x25A0, 0x25FF, 0x2600, 0x26FF, 0};
  bool ok = std::filesystem::exists(font) &&
            io.Fonts->AddFontFromFileTTF(font.c_str(), 15.f * scale, &config, ranges) != nullptr;
  if (!ok) io.Fonts->AddFontDefault();
  return ok;
}

}  // namespace sl::views
