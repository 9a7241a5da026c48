// Figure themes: sizes and colours. The paper theme sizes text relative to the figure width so
// that a figure scaled to one column (3.3 in) never shows text below 6 pt.
#pragma once

#include <string_view>

#include "figures/scene.h"

namespace sl::fig {

enum class FigureTheme { Light, Dark, Paper };
bool parse_theme(std::string_view text, FigureTheme& theme);

constexpr float kColumnPoints = 3.3f * 72.f;  // one printed column, in points
constexpr float kMinPrintedPt = 6.f;

struct Style {
  FigureTheme theme = FigureTheme::Paper;
  float width = 640;      // px
  float unit = 1;         // px per typographic point of the design
  float font = 12, small = 11, title = 14, pad = 8, lane = 16;
  float outline_width = 0.5f;
  Color background, ink, muted, grid, header_fill, folded, outline;
  bool dark = false;
};

// `width` 0 takes the theme's default (paper 640 px; light and dark 1200 px).
Style make_style(FigureTheme theme, float width = 0);

}  // namespace sl::fig
