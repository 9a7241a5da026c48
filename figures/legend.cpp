#include "figures/legend.h"

#include "figures/cairo_output.h"
#include "figures/timeline_figure.h"

namespace sl::fig {

float Legend::emit(Scene& scene, float x, float y, float width) const {
  if (entries_.empty()) return y;
  float line_h = s_.small * 1.5f, box = s_.small * 0.9f, cx = x;
  for (const Entry& e : entries_) {
    float w = box + s_.small * 0.4f + text_width(e.label, s_.small) + s_.small * 1.2f;
    if (cx > x && cx + w > x + width) cx = x, y += line_h;
    scene.rect(Role::Legend, cx, y - box * 0.9f, box, box, e.swatch, s_.outline, s_.outline_width);
    scene.text(Role::Legend, cx + box + s_.small * 0.4f, y, e.label, s_.small, s_.ink);
    cx += w;
  }
  return y + line_h;
}

std::string KeyTable::key(const std::string& shown) {
  for (const auto& [key, text] : entries_)
    if (text == shown) return key;
  if (entries_.size() >= max_) return {};
  std::string key = "K";  // appended, not "K" + ...: GCC 12 warns falsely (-Wrestrict) on that
  key += std::to_string(entries_.size() + 1);
  entries_.push_back({std::move(key), shown});
  return entries_.back().first;
}

std::vector<std::string> distinct_labels(const std::vector<std::string>& names, float width, float size, KeyTable& keys) {
  std::vector<std::string> labels;
  for (const std::string& name : names) labels.push_back(fit_text_middle(name, width, size));
  std::vector<bool> alike(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    alike[i] = labels[i].empty();
    for (size_t j = 0; j < labels.size() && !alike[i]; ++j) alike[i] = j != i && labels[j] == labels[i] && names[j] != names[i];
  }
  for (size_t i = 0; i < labels.size(); ++i)
    if (alike[i])
      if (std::string key = keys.key(names[i]); !key.empty()) labels[i] = key;
  return labels;
}

float emit_key_table(Scene& scene, const Style& s, const std::vector<std::pair<std::string, std::string>>& keys, float x,
                     float y, float width) {
  if (keys.empty()) return y;
  float key_w = text_width("K00", s.small, true) + s.small * 0.6f;
  for (const auto& [key, name] : keys) {
    y += s.small * 0.2f;
    scene.text(Role::Legend, x, y + s.small * 0.8f, key, s.small, s.ink, Anchor::Left, true);
    scene.text(Role::Legend, x + key_w, y + s.small * 0.8f, fit_text_middle(name, width - key_w, s.small), s.small, s.muted);
    y += s.small * 1.2f;
  }
  return y + s.small * 0.5f;
}

}  // namespace sl::fig
