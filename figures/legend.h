// Legends: swatch + label entries flowed left to right into lines, and the table that maps short
// keys (K1, K2, ...) to kernel names too long or too ambiguous to print inside a slice.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "figures/scene.h"
#include "figures/style.h"

namespace sl::fig {

class Legend {
public:
  explicit Legend(const Style& style) : s_(style) {}
  void add(Color swatch, std::string label) { entries_.push_back({swatch, std::move(label)}); }
  size_t size() const { return entries_.size(); }
  // Lays the entries out in lines within `width`; returns the y below the last line.
  float emit(Scene& scene, float x, float y, float width) const;

private:
  struct Entry {
    Color swatch;
    std::string label;
  };
  const Style& s_;
  std::vector<Entry> entries_;
};

// Short keys (K1, K2, ...) for names too long or too ambiguous to print where they are used;
// one table per figure, so every part of it (both runs of a diff, its bar chart) agrees.
class KeyTable {
public:
  explicit KeyTable(size_t max = 12) : max_(max) {}
  // The key of `shown` (the same text always gets the same key); empty once the table is full.
  std::string key(const std::string& shown);
  const std::vector<std::pair<std::string, std::string>>& entries() const { return entries_; }

private:
  size_t max_;
  std::vector<std::pair<std::string, std::string>> entries_;  // key, shown text
};

// Labels for `names` shown side by side in `width`: each cut in the middle to fit
// (fit_text_middle); those that still read alike (or are empty) become keys from `keys`. Every
// label differs from the others while the table has room.
std::vector<std::string> distinct_labels(const std::vector<std::string>& names, float width, float size, KeyTable& keys);

float emit_key_table(Scene& scene, const Style& s, const std::vector<std::pair<std::string, std::string>>& keys, float x,
                     float y, float width);

}  // namespace sl::fig
