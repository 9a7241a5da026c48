#include "core/names/short_names.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <set>

#include "core/store/trace_store.h"

namespace sl {
namespace {

bool is_arrow(std::string_view s, size_t i) { return s[i] == '-' && i + 1 < s.size() && s[i + 1] == '>'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// A name split at bracket depth 0: the characters outside every <...> and (...) ("kept"), and
// the <...> groups with where they sat in `kept`. "->" is two ordinary characters, so
// `Memcpy (Device -> Device)` does not close a bracket it never opened.
struct TopLevel {
  std::string kept;
  struct Group {
    size_t kept_pos, begin, end;  // content is name[begin, end)
  };
  std::vector<Group> angles;
  bool balanced = true;
};

TopLevel split_top_level(std::string_view name) {
  TopLevel t;
  int depth = 0;
  size_t open_at = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (is_arrow(name, i)) {
      if (depth == 0) t.kept += "->";
      ++i;
      continue;
    }
    if (c == '<' || c == '(') {
      if (depth++ == 0) open_at = i;
    } else if (c == '>' || c == ')') {
      if (depth == 0) {
        t.balanced = false;
        break;
      }
      if (--depth == 0 && c == '>') t.angles.push_back({t.kept.size(), open_at + 1, i});
    } else if (depth == 0) {
      t.kept += c;
    }
  }
  if (depth != 0) t.balanced = false;
  return t;
}

// Start of the last space-separated token of `kept` (trailing spaces and a trailing `const`
// qualifier of a member function ignored); `end` receives its end.
size_t last_token(const std::string& kept, size_t& end) {
  end = kept.size();
  while (end > 0 && kept[end - 1] == ' ') --end;
  if (end == 0) return 0;  // nothing but spaces
  if (end >= 6 && kept.compare(end - 6, 6, " const") == 0) {
    end -= 6;
    while (end > 0 && kept[end - 1] == ' ') --end;
  }
  size_t space = kept.rfind(' ', end == 0 ? 0 : end - 1);
  return space == std::string::npos ? 0 : space + 1;
}

std::string drop_anonymous(std::string s) {
  // "(anonymous namespace)::" leaves "::::" behind once the parentheses are gone.
  for (size_t at; (at = s.find("::::")) != std::string::npos;) s.erase(at, 2);
  if (s.starts_with("::")) s.erase(0, 2);
  return s;
}

bool needs_shortening(std::string_view name) {
  return name.find('<') != std::string_view::npos || name.find('(') != std::string_view::npos;
}

// A parsed kernel name: its function name and the template arguments of that function.
struct Parsed {
  std::string base;
  bool has_targs = false;
  std::vector<std::string_view> targs;
};

std::vector<std::string_view> split_args(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t from = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (is_arrow(s, i)) {
      ++i;
      continue;
    }
    char c = s[i];
    if (c == '<' || c == '(') ++depth;
    else if ((c == '>' || c == ')') && depth > 0) --depth;
    else if (c == ',' && depth == 0) {
      out.push_back(trim(s.substr(from, i - from)));
      from = i + 1;
    }
  }
  out.push_back(trim(s.substr(from)));
  return out;
}

// A Python frame as Kineto names it, `FILE(LINE): FUNC` ("train_ddp.py(12): <module>"): its
// function, whole. Its angle brackets (`<module>`, `<lambda>`, `<string>`) are not template
// arguments, and parsing them as such left ":" or "train_ddp.py:".
bool python_frame_function(std::string_view name, std::string_view& function) {
  size_t close = name.find("): ");
  if (close == std::string_view::npos || close + 3 >= name.size()) return false;
  size_t open = name.rfind('(', close);
  if (open == std::string_view::npos || open == 0 || open + 1 == close) return false;
  for (size_t i = open + 1; i < close; ++i)
    if (name[i] < '0' || name[i] > '9') return false;
  function = name.substr(close + 3);
  return true;
}

Parsed parse(std::string_view name) {
  Parsed p;
  if (std::string_view function; python_frame_function(name, function)) {
    p.base = std::string(function);
    return p;
  }
  if (is_memory_name(name) || !needs_shortening(name)) {
    p.base = std::string(name);
    return p;
  }
  TopLevel t = split_top_level(name);
  if (!t.balanced) {  // not a C++ signature we understand: keep it whole
    p.base = std::string(name);
    return p;
  }
  size_t end = 0, begin = last_token(t.kept, end);
  p.base = drop_anonymous(t.kept.substr(begin, end - begin));
  if (p.base.empty()) {
    p.base = std::string(name);
    return p;
  }
  for (auto it = t.angles.rbegin(); it != t.angles.rend(); ++it) {
    if (it->kept_pos < begin || it->kept_pos > end) continue;
    p.has_targs = true;
    p.targs = split_args(name.substr(it->begin, it->end - it->begin));
    break;
  }
  return p;
}

// The identifier that names a template argument, and where it ends in `kept`:
// `at::native::FillFunctor<float>` → `FillFunctor`; a lambda inside
// `clamp_min_scalar_kernel_impl(...)::{lambda()#1}::operator()() const::...` → `clamp_min_scalar_kernel_impl`.
std::string_view arg_identifier(std::string_view kept, size_t& end) {
  std::string_view best;
  end = std::string_view::npos;
  size_t from = 0;
  while (from <= kept.size()) {
    size_t to = kept.find("::", from);
    size_t stop = to == std::string_view::npos ? kept.size() : to;
    std::string_view seg = trim(kept.substr(from, stop - from));
    if (!seg.empty() && seg.front() != '{' && !seg.starts_with("operator")) best = seg, end = stop;
    if (to == std::string_view::npos) break;
    from = to + 2;
  }
  return best;
}

// An argument by its identifiers only, nested: `at::native::BUnaryFunctor<at::native::AddFunctor<long> >`
// → `BUnaryFunctor<AddFunctor<long>>` at depth 2, `BUnaryFunctor` at depth 1.
std::string arg_identifiers(std::string_view arg, int depth) {
  TopLevel t = split_top_level(arg);
  size_t end = 0;
  std::string_view id = t.balanced ? arg_identifier(t.kept, end) : std::string_view{};
  if (id.empty()) return std::string(trim(arg));
  std::string out(id);
  if (depth <= 1) return out;
  for (const TopLevel::Group& g : t.angles) {
    if (g.kept_pos != end) continue;
    std::vector<std::string_view> inner = split_args(arg.substr(g.begin, g.end - g.begin));
    out += "<";
    for (size_t i = 0; i < inner.size(); ++i) out += (i ? ", " : "") + arg_identifiers(inner[i], depth - 1);
    out += ">";
    break;
  }
  return out;
}

// Ever longer forms of one template argument: 0 its identifier, 1 and 2 with the identifiers of
// its own template arguments (one and two levels down), 3 as written.
constexpr int kArgForms = 4;
std::string arg_form(std::string_view arg, int level) {
  if (level >= kArgForms - 1) return std::string(arg);
  return arg_identifiers(arg, level + 1);
}

bool all_distinct(const std::vector<std::string>& v) {
  std::set<std::string_view> seen;
  for (const auto& s : v)
    if (!seen.insert(s).second) return false;
  return true;
}

std::string render(const std::string& base, const Parsed& p, const std::vector<std::string>& forms,
                   const std::vector<size_t>& chosen) {
  if (!p.has_targs || chosen.empty()) return base;
  std::string out = base + "<";
  for (size_t k = 0; k < chosen.size(); ++k) out += (k ? ", " : "") + forms[chosen[k]];
  return out + ">";
}

// Names that share one function name: add the template arguments that tell them apart, fewest
// positions and shortest forms first; the whole names when no template argument does.
std::vector<std::string> distinguish(const std::string& base, const std::vector<std::string_view>& names) {
  std::vector<Parsed> parsed;
  size_t positions = 0;
  for (std::string_view n : names) {
    parsed.push_back(parse(n));
    positions = std::max(positions, parsed.back().targs.size());
  }
  std::vector<std::string> out(names.size());
  for (int level = 0; level < kArgForms; ++level) {
    // forms[m][p]; a missing argument reads as "".
    std::vector<std::vector<std::string>> forms(names.size(), std::vector<std::string>(positions));
    for (size_t m = 0; m < names.size(); ++m)
      for (size_t p = 0; p < parsed[m].targs.size(); ++p) forms[m][p] = arg_form(parsed[m].targs[p], level);
    // Positions that differ, the most telling (most distinct values) first.
    std::vector<std::pair<size_t, size_t>> telling;  // (distinct values, position)
    for (size_t p = 0; p < positions; ++p) {
      std::set<std::string_view> values;
      for (const auto& f : forms) values.insert(f[p]);
      if (values.size() > 1) telling.push_back({values.size(), p});
    }
    std::stable_sort(telling.begin(), telling.end(), [](auto a, auto b) { return a.first > b.first; });
    std::vector<size_t> chosen;
    for (auto [count, p] : telling) {
      chosen.insert(std::upper_bound(chosen.begin(), chosen.end(), p), p);
      for (size_t m = 0; m < names.size(); ++m) out[m] = render(base, parsed[m], forms[m], chosen);
      if (all_distinct(out)) return out;
    }
  }
  for (size_t m = 0; m < names.size(); ++m) out[m] = std::string(names[m]);
  return out;
}

}  // namespace

bool is_memory_name(std::string_view name) {
  return name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("hipMemcpy") ||
         name.starts_with("hipMemset");
}

std::string base_short_name(std::string_view name) { return parse(name).base; }

ShortNames::ShortNames(const std::vector<std::string_view>& names) {
  std::map<std::string, std::vector<std::string_view>> by_base;
  std::set<std::string_view> unique(names.begin(), names.end());
  for (std::string_view n : unique) by_base[base_short_name(n)].push_back(n);
  std::map<std::string, std::vector<std::string_view>> owners;  // short form → full names
  std::vector<std::pair<std::string_view, std::string>> chosen;
  for (auto& [base, group] : by_base) {
    std::vector<std::string> shown =
        group.size() == 1 ? std::vector<std::string>{base} : distinguish(base, group);
    for (size_t i = 0; i < group.size(); ++i) {
      owners[shown[i]].push_back(group[i]);
      chosen.push_back({group[i], std::move(shown[i])});
    }
  }
  for (auto& [full, shown] : chosen) {
    // A short form that is another name's full text (or another group's form) would mislead:
    // the whole name then.
    if (owners[shown].size() > 1 || (shown != full && unique.count(shown))) shown = std::string(full);
    if (shown != base_short_name(full)) by_full_.emplace(std::string(full), shown);
  }
}

std::string ShortNames::operator()(std::string_view full) const {
  if (!by_full_.empty()) {
    auto it = by_full_.find(full);
    if (it != by_full_.end()) return it->second;
  }
  return base_short_name(full);
}

std::shared_ptr<const ShortNames> store_short_names(const TraceStore& store) {
  // Keyed by the store's address, checked against what it holds: a store freed and another
  // allocated at the same address is told apart by its strings and slices.
  struct Entry {
    const TraceStore* store;
    size_t strings;
    uint64_t slices;
    std::string file;
    std::shared_ptr<const ShortNames> names;
  };
  static std::mutex mutex;
  static std::vector<Entry> cache;
  const uint64_t slices = store.slice_count();
  {
    std::lock_guard lock(mutex);
    for (const Entry& e : cache)
      if (e.store == &store && e.strings == store.strings.size() && e.slices == slices && e.file == store.meta.file)
        return e.names;
  }
  std::vector<bool> used(store.strings.size());
  for (const Track& t : store.tracks)
    for (StringId id : t.slices.name)
      if (id < used.size()) used[id] = true;
  std::vector<std::string_view> names;
  for (StringId id = 0; id < used.size(); ++id)
    if (used[id]) names.push_back(store.strings.view(id));
  auto built = std::make_shared<const ShortNames>(names);
  std::lock_guard lock(mutex);
  std::erase_if(cache, [&](const Entry& e) { return e.store == &store; });
  if (cache.size() >= 8) cache.erase(cache.begin());
  cache.push_back({&store, store.strings.size(), slices, store.meta.file, built});
  return built;
}

}  // namespace sl
