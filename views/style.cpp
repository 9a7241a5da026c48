#include "views/style.h"

#include <algorithm>
#include <filesystem>

namespace sl::views {

static ImU32 to_im(present::Rgb c) { return IM_COL32(c.r, c.g, c.b, 255); }

ImU32 color_for_key(std::string_view key, Theme theme) { return to_im(present::key_rgb(key, theme == Theme::Dark)); }
ImU32 kernel_kind_color(present::KernelKind k) { return to_im(present::kernel_kind_rgb(k)); }
ImU32 idle_cause_color(int cause) { return to_im(present::idle_cause_rgb(cause)); }

ImU32 text_color_on(ImU32 fill) {
  present::Rgb c{uint8_t(fill & 0xFF), uint8_t((fill >> 8) & 0xFF), uint8_t((fill >> 16) & 0xFF)};
  return present::prefers_dark_text(c) ? IM_COL32(20, 20, 20, 255) : IM_COL32(250, 250, 250, 255);
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
  std::filesystem::path font = SIGHTLINE_FONT_FILE;
  ImFontConfig config;
  config.OversampleH = 2;
  static const ImWchar ranges[] = {0x0020, 0x00FF, 0x0370, 0x03FF, 0x2010, 0x2044, 0x2190, 0x21FF, 0x2260, 0x22FF, 0x25A0, 0x25FF, 0x2600, 0x26FF, 0};
  bool ok = std::filesystem::exists(font) &&
            io.Fonts->AddFontFromFileTTF(font.c_str(), 15.f * scale, &config, ranges) != nullptr;
  if (!ok) io.Fonts->AddFontDefault();
  return ok;
}

}  // namespace sl::views
