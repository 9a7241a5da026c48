// A figure as a flat list of vector shapes (rectangles, lines, text) in CSS pixels. Every
// figure's layout produces one; the Cairo painter turns it into SVG, PDF or PNG, so the three
// formats (and any future GUI export) share one layout code path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/present/palette.h"

namespace sl::fig {

struct Color {
  uint8_t r = 0, g = 0, b = 0, a = 255;
  static Color of(present::Rgb c, uint8_t alpha = 255) { return {c.r, c.g, c.b, alpha}; }
  bool operator==(const Color&) const = default;
};

enum class Anchor : uint8_t { Left, Center, Right };

// What an item is for: lets tests and statistics count slices apart from legend swatches.
// SliceLabel: a name inside a slice (the same name may be written on many slices).
enum class Role : uint8_t { Decoration, Slice, Folded, IdleGap, Bar, Legend, Axis, Label, Title, Point, SliceLabel };
// The role's name, as the SVG writes it on each text (class="slice-label"), for tests and styling.
const char* role_name(Role role);

struct Item {
  enum Kind : uint8_t { Rect, Line, Text, Circle } kind = Rect;
  Role role = Role::Decoration;
  // Rect: box; Line: (x, y) → (x + w, y + h); Text: baseline origin; Circle: centre (x, y), radius w
  float x = 0, y = 0, w = 0, h = 0;
  Color fill, stroke;                // Text uses fill; stroke.a == 0 means no outline
  float stroke_width = 0;
  float size = 0;  // font size, px
  Anchor anchor = Anchor::Left;
  bool bold = false;
  std::string text;
};

struct Scene {
  float width = 0, height = 0;
  Color background{255, 255, 255, 255};
  std::vector<Item> items;

  void rect(Role role, float x, float y, float w, float h, Color fill, Color stroke = {0, 0, 0, 0}, float stroke_width = 0);
  void line(Role role, float x0, float y0, float x1, float y1, Color color, float width);
  void text(Role role, float x, float y, std::string text, float size, Color color, Anchor anchor = Anchor::Left,
            bool bold = false);
  void circle(Role role, float x, float y, float radius, Color fill, Color stroke = {0, 0, 0, 0}, float stroke_width = 0);
  size_t count(Role role) const;
};

}  // namespace sl::fig
