#include "core/names/name_elision.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace sl {
namespace {

// A run of characters kept whole, [begin, end) in characters.
struct Span {
  size_t begin, end;
  bool operator<(const Span& o) const { return begin != o.begin ? begin < o.begin : end < o.end; }
};

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// A name with the byte offset of each of its characters (and of its end), so cuts never split a
// UTF-8 character.
struct Chars {
  std::string_view text;
  std::vector<size_t> at;  // at[i]: byte offset of character i; at.back() == text.size()
  explicit Chars(std::string_view s) : text(s) {
    for (size_t i = 0; i < s.size(); ++i)
      if (!is_continuation(s[i])) at.push_back(i);
    at.push_back(s.size());
  }
  size_t size() const { return at.size() - 1; }
  size_t char_of(size_t byte) const { return size_t(std::upper_bound(at.begin(), at.end(), byte) - at.begin()) - 1; }
  std::string_view piece(Span s) const { return text.substr(at[s.begin], at[s.end] - at[s.begin]); }
};

bool digits(std::string_view s, size_t& i) {
  size_t from = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  return i > from;
}

// The `MT256x192x64` field of a Tensile kernel name (`MT` and two or three sizes between
// underscores), in characters; none when absent.
std::vector<Span> tensile_tile(const Chars& c) {
  std::string_view s = c.text;
  for (size_t at = s.find("MT"); at != std::string_view::npos; at = s.find("MT", at + 1)) {
    if (at > 0 && s[at - 1] != '_') continue;
    size_t i = at + 2;
    if (!digits(s, i) || i >= s.size() || s[i] != 'x' || !digits(s, ++i)) continue;
    if (i < s.size() && s[i] == 'x' && !digits(s, ++i)) continue;
    if (i < s.size() && s[i] != '_') continue;
    return {{c.char_of(at), c.char_of(i)}};
  }
  return {};
}

// The kept spans in order, merged, with "…" wherever characters were left out.
std::string render(const Chars& c, std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end());
  std::string out;
  size_t shown_to = 0;  // characters [0, shown_to) are accounted for
  for (Span s : spans) {
    s.begin = std::max(s.begin, shown_to);
    if (s.begin >= s.end) continue;
    if (s.begin > shown_to) out += "…";
    out += c.piece(s);
    shown_to = s.end;
  }
  if (shown_to < c.size()) out += "…";
  return out;
}

// The longest head and tail (two fifths and three fifths of what is kept) that fit `width`
// around the spans that must stay; only those spans when even they do not fit.
std::string cut(const Chars& c, size_t width, const std::vector<Span>& keep) {
  const size_t n = c.size();
  if (n <= width) return std::string(c.text);
  auto shown = [&](size_t kept) {
    size_t head = kept * 2 / 5, tail = kept - head;
    std::vector<Span> spans = keep;
    spans.push_back({0, head});
    spans.push_back({n - std::min(tail, n), n});
    return render(c, std::move(spans));
  };
  std::string best = shown(0);
  size_t lo = 0, hi = width;
  while (lo < hi) {  // the width of the result grows with what is kept
    size_t mid = (lo + hi + 1) / 2;
    std::string s = shown(mid);
    if (display_width(s) <= width) lo = mid, best = std::move(s);
    else hi = mid - 1;
  }
  return best;
}

// The word around character `p` (letters and digits: `_`, `<`, `,` and spaces bound it, so a
// Tensile field or a template argument is kept whole), at most a few characters either side.
Span word_around(const Chars& c, size_t p) {
  auto inside = [&](size_t i) {
    std::string_view ch = c.piece({i, i + 1});
    return ch.size() == 1 && std::isalnum(static_cast<unsigned char>(ch[0]));
  };
  size_t begin = p, end = std::min(p + 1, c.size());
  while (begin > 0 && p - begin < 16 && inside(begin - 1)) --begin;
  while (end < c.size() && end - p < 24 && inside(end)) ++end;
  return {begin, end};
}

// Characters `a` and `b` share from the start.
size_t common_prefix(const Chars& a, const Chars& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a.piece({i, i + 1}) == b.piece({i, i + 1})) ++i;
  return i;
}

}  // namespace

size_t display_width(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += !is_continuation(c);
  return n;
}

std::vector<std::string> elide_names(const std::vector<std::string>& names, size_t width) {
  std::vector<Chars> chars;
  chars.reserve(names.size());
  for (const std::string& n : names) chars.emplace_back(n);
  std::vector<std::vector<Span>> keep(names.size());
  std::vector<std::string> out(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    keep[i] = tensile_tile(chars[i]);
    out[i] = cut(chars[i], width, keep[i]);
  }
  // Cuts that read alike keep, each, a few characters around where it first differs from the
  // others (a second round catches names that differ in several places).
  for (int round = 0; round < 3; ++round) {
    std::map<std::string_view, std::vector<size_t>> by_shown;
    for (size_t i = 0; i < names.size(); ++i) by_shown[out[i]].push_back(i);
    bool changed = false;
    for (auto& [shown, group] : by_shown) {
      std::set<std::string_view> distinct;
      for (size_t i : group) distinct.insert(names[i]);
      if (distinct.size() < 2) continue;
      for (size_t i : group) {
        std::set<size_t> firsts;
        for (size_t j : group)
          if (names[j] != names[i]) firsts.insert(common_prefix(chars[i], chars[j]));
        for (size_t p : firsts) keep[i].push_back(word_around(chars[i], std::min(p, chars[i].size() - 1)));
      }
      changed = true;
    }
    if (!changed) return out;
    for (size_t i = 0; i < names.size(); ++i) out[i] = cut(chars[i], width, keep[i]);
  }
  // Still alike: those names whole.
  std::map<std::string, std::set<std::string_view>> owners;
  for (size_t i = 0; i < names.size(); ++i) owners[out[i]].insert(names[i]);
  for (size_t i = 0; i < names.size(); ++i)
    if (owners[out[i]].size() > 1) out[i] = names[i];
  return out;
}

namespace {

std::string joined(const std::vector<std::string>& list, char sep, size_t head, size_t tail) {
  std::string o;
  auto add = [&](const std::string& s) {
    if (!o.empty()) o += sep;
    o += s;
  };
  const bool all = head + tail >= list.size();
  for (size_t i = 0; i < list.size(); ++i) {
    if (all || i < head || i >= list.size() - tail) add(list[i]);
    else if (i == head) add("… " + std::to_string(list.size() - head - tail) + " more …");
  }
  return o;
}

// The most names kept that fit `width`, the first always, head and tail as even as they fit;
// "" when none does. The count of names left out keeps lists of different lengths apart.
std::string cut_list(const std::vector<std::string>& list, size_t width, char sep) {
  std::string whole = joined(list, sep, list.size(), 0);
  if (display_width(whole) <= width) return whole;
  std::string best;
  for (size_t kept = 1; kept < list.size(); ++kept) {
    std::string fits;
    for (size_t skew = 0; skew <= kept && fits.empty(); ++skew) {  // 0: even, then ever more lopsided
      for (size_t head : {(kept + 1) / 2 + skew, kept / 2 - std::min(kept / 2, skew)}) {
        if (head > kept || head == 0) continue;  // a chain without its first name reads as another
        std::string s = joined(list, sep, head, kept - head);
        if (display_width(s) <= width) {
          fits = std::move(s);
          break;
        }
      }
    }
    if (fits.empty()) break;
    best = std::move(fits);
  }
  return best;
}

// Every name of the lists cut to half the column (distinct among all of them), so that a list
// whose first name alone is wider than the column still keeps its count of names left out.
std::vector<std::vector<std::string>> elide_members(const std::vector<std::vector<std::string>>& lists, size_t width) {
  std::vector<std::string> members;
  for (const auto& list : lists) members.insert(members.end(), list.begin(), list.end());
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  std::vector<std::string> cut = elide_names(members, std::max<size_t>(width / 2, 1));
  std::map<std::string_view, std::string_view> shown;
  for (size_t i = 0; i < members.size(); ++i) shown[members[i]] = cut[i];
  std::vector<std::vector<std::string>> out;
  for (const auto& list : lists) {
    std::vector<std::string>& o = out.emplace_back();
    for (const std::string& name : list) o.emplace_back(shown.at(name));
  }
  return out;
}

}  // namespace

std::vector<std::string> elide_lists(const std::vector<std::vector<std::string>>& lists, size_t width, char sep) {
  std::vector<std::string> whole, out;
  std::vector<std::vector<std::string>> short_lists = elide_members(lists, width);
  for (size_t i = 0; i < lists.size(); ++i) {
    whole.push_back(joined(lists[i], sep, lists[i].size(), 0));
    out.push_back(display_width(whole.back()) <= width ? whole.back() : cut_list(short_lists[i], width, sep));
  }
  std::map<std::string, std::set<std::string_view>> owners;
  for (size_t i = 0; i < lists.size(); ++i) owners[out[i]].insert(whole[i]);
  std::vector<size_t> redo;
  for (size_t i = 0; i < lists.size(); ++i)
    if (out[i].empty() || owners[out[i]].size() > 1) redo.push_back(i);
  std::vector<std::string> names;
  for (size_t i : redo) names.push_back(whole[i]);
  names = elide_names(names, width);
  for (size_t k = 0; k < redo.size(); ++k) out[redo[k]] = std::move(names[k]);
  return out;
}

}  // namespace sl
