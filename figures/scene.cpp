#include "figures/scene.h"

#include <algorithm>

namespace sl::fig {

void Scene::rect(Role role, float x, float y, float w, float h, Color fill, Color stroke, float stroke_width) {
  Item i;
  i.kind = Item::Rect, i.role = role, i.x = x, i.y = y, i.w = w, i.h = h;
  i.fill = fill, i.stroke = stroke, i.stroke_width = stroke_width;
  items.push_back(std::move(i));
}

void Scene::line(Role role, float x0, float y0, float x1, float y1, Color color, float width) {
  Item i;
  i.kind = Item::Line, i.role = role, i.x = x0, i.y = y0, i.w = x1 - x0, i.h = y1 - y0;
  i.stroke = color, i.stroke_width = width;
  items.push_back(std::move(i));
}

void Scene::text(Role role, float x, float y, std::string text, float size, Color color, Anchor anchor, bool bold) {
  if (text.empty()) return;
  Item i;
  i.kind = Item::Text, i.role = role, i.x = x, i.y = y, i.size = size, i.fill = color, i.anchor = anchor, i.bold = bold;
  i.text = std::move(text);
  items.push_back(std::move(i));
}

void Scene::circle(Role role, float x, float y, float radius, Color fill, Color stroke, float stroke_width) {
  Item i;
  i.kind = Item::Circle, i.role = role, i.x = x, i.y = y, i.w = radius, i.h = radius;
  i.fill = fill, i.stroke = stroke, i.stroke_width = stroke_width;
  items.push_back(std::move(i));
}

size_t Scene::count(Role role) const {
  return size_t(std::count_if(items.begin(), items.end(), [&](const Item& i) { return i.role == role; }));
}

const char* role_name(Role role) {
  switch (role) {
    case Role::Decoration: return "decoration";
    case Role::Slice: return "slice";
    case Role::Folded: return "folded";
    case Role::IdleGap: return "idle-gap";
    case Role::Bar: return "bar";
    case Role::Legend: return "legend";
    case Role::Axis: return "axis";
    case Role::Label: return "label";
    case Role::Title: return "title";
    case Role::Point: return "point";
    case Role::SliceLabel: return "slice-label";
  }
  return "decoration";
}

}  // namespace sl::fig
