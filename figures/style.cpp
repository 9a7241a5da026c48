#include "figures/style.h"

#include <algorithm>

namespace sl::fig {

bool parse_theme(std::string_view text, FigureTheme& theme) {
  if (text == "paper") theme = FigureTheme::Paper;
  else if (text == "light") theme = FigureTheme::Light;
  else if (text == "dark") theme = FigureTheme::Dark;
  else return false;
  return true;
}

Style make_style(FigureTheme theme, float width) {
  Style s;
  s.theme = theme;
  s.width = width > 0 ? width : theme == FigureTheme::Paper ? 640.f : 1200.f;
  // Paper: one design point is width / 237.6 px, so at 3.3 in wide it prints as 1 pt and the
  // smallest text (6.2 design pt) stays above 6 pt. Screens and slides: fixed 1.6 px per point.
  s.unit = theme == FigureTheme::Paper ? s.width / kColumnPoints : 1.6f;
  s.small = 6.2f * s.unit;
  s.font = 7.f * s.unit;
  s.title = 8.2f * s.unit;
  s.pad = 5.f * s.unit;
  s.lane = s.font * 1.3f;
  s.outline_width = std::max(0.5f, 0.25f * s.unit);
  s.dark = theme == FigureTheme::Dark;
  if (s.dark) {
    s.background = {30, 31, 34, 255};
    s.ink = {230, 230, 230, 255};
    s.muted = {165, 165, 170, 255};
    s.grid = {70, 72, 78, 255};
    s.header_fill = {45, 48, 56, 255};
    s.folded = {110, 110, 120, 255};
    s.outline = {0, 0, 0, 150};
  } else {
    s.background = {255, 255, 255, 255};
    s.ink = {25, 25, 25, 255};
    s.muted = {95, 95, 95, 255};
    s.grid = {228, 228, 228, 255};
    s.header_fill = theme == FigureTheme::Paper ? Color{255, 255, 255, 0} : Color{232, 235, 241, 255};
    s.folded = {150, 150, 160, 255};
    s.outline = {0, 0, 0, 110};
  }
  return s;
}

}  // namespace sl::fig
