#include "core/import/kineto/json_repair.h"

#include <cstring>

namespace sl {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

class RepairScanner {
public:
  explicit RepairScanner(std::string_view text) : t_(text) {}
  JsonRepair run();

private:
  size_t depth() const { return stack_.size(); }
  size_t skip_ws(size_t pos) const {
    while (pos < t_.size() && is_ws(t_[pos])) ++pos;
    return pos;
  }
  bool scan_string(size_t pos, size_t& end) const;
  size_t scan_scalar(size_t pos) const;
  void open(char bracket);
  void value_done(size_t end);
  JsonRepair cut();

  std::string_view t_;
  std::vector<char> stack_;     // the containers open at the scan position
  bool top_object_ = false;     // `{"traceEvents": [...]}` rather than a bare array
  size_t events_depth_ = 0;     // stack depth inside the events array; 0 until it opens
  bool events_closed_ = false;
  bool in_value_ = false;       // in the top-level object: between ':' and ','
  std::string_view last_key_;   // the top-level key being read
  uint64_t complete_ = 0;
  size_t safe_keep_ = 0;       // the last place to cut: after a complete event or member
  const char* safe_closers_ = "";
  JsonRepair out_;
};

// `pos` is at an opening quote; false when the text stops inside the string.
bool RepairScanner::scan_string(size_t pos, size_t& end) const {
  for (size_t i = pos + 1; i < t_.size();) {
    const void* hit = std::memchr(t_.data() + i, '"', t_.size() - i);
    if (!hit) return false;
    size_t quote = static_cast<const char*>(hit) - t_.data();
    size_t backslashes = 0;
    while (quote - backslashes > pos + 1 && t_[quote - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) {
      end = quote + 1;
      return true;
    }
    i = quote + 1;
  }
  return false;
}

// The end of a number or literal (its first delimiter); the text's size when none follows.
size_t RepairScanner::scan_scalar(size_t pos) const {
  while (pos < t_.size() && !is_ws(t_[pos]) && !std::strchr(",]}:[{\"", t_[pos])) ++pos;
  return pos;
}

void RepairScanner::open(char bracket) {
  stack_.push_back(bracket);
  if (bracket != '[' || events_depth_) return;
  bool bare = !top_object_ && depth() == 1;
  bool member = top_object_ && depth() == 2 && in_value_ && last_key_ == "traceEvents";
  if (bare || member) events_depth_ = depth();
}

// A value ended at `end`: after an element of the events array, or after a top-level member,
// the text can be cut there and closed.
void RepairScanner::value_done(size_t end) {
  if (events_depth_ && !events_closed_ && depth() == events_depth_) {
    ++complete_;
    safe_keep_ = end;
    safe_closers_ = top_object_ ? "]}" : "]";
  } else if (top_object_ && depth() == 1) {
    safe_keep_ = end;
    safe_closers_ = "}";
  }
}

// The text stops with containers still open.
JsonRepair RepairScanner::cut() {
  out_.complete_events = complete_;
  out_.error_offset = t_.size();
  if (!events_depth_) {
    out_.error = "unexpected end of file: the trace stops before its \"traceEvents\" array";
    return out_;
  }
  if (!events_closed_ && complete_ == 0) {
    out_.error = "unexpected end of file: the trace stops before its first complete event";
    return out_;
  }
  out_.error_offset = 0;
  out_.truncated = true;
  out_.keep = safe_keep_;
  out_.closers = safe_closers_;
  std::erase_if(out_.trailing_commas, [&](uint64_t comma) { return comma >= safe_keep_; });
  return out_;
}

JsonRepair RepairScanner::run() {
  size_t pos = skip_ws(0);
  if (t_.size() - pos >= 3 && t_.substr(pos, 3) == "\xEF\xBB\xBF") pos = skip_ws(pos + 3);
  if (pos >= t_.size() || (t_[pos] != '[' && t_[pos] != '{')) return {};  // not ours to repair
  top_object_ = t_[pos] == '{';
  while (pos < t_.size()) {
    char c = t_[pos];
    if (is_ws(c)) {
      ++pos;
    } else if (c == '"') {
      size_t end = 0;
      if (!scan_string(pos, end)) return cut();
      if (top_object_ && depth() == 1 && !in_value_) last_key_ = t_.substr(pos + 1, end - pos - 2);
      else value_done(end);
      pos = end;
    } else if (c == '{' || c == '[') {
      open(c);
      ++pos;
    } else if (c == '}' || c == ']') {
      if (stack_.empty() || stack_.back() != (c == '}' ? '{' : '[')) return {};  // the parser's error stands
      if (depth() == events_depth_) events_closed_ = true;
      stack_.pop_back();
      ++pos;
      if (stack_.empty()) break;  // the top level is closed: whatever follows is the parser's to judge
      value_done(pos);
    } else if (c == ',') {
      size_t next = skip_ws(pos + 1);
      if (next < t_.size() && (t_[next] == ']' || t_[next] == '}')) out_.trailing_commas.push_back(pos);
      if (top_object_ && depth() == 1) in_value_ = false;
      ++pos;
    } else if (c == ':') {
      if (top_object_ && depth() == 1) in_value_ = true;
      ++pos;
    } else {
      size_t end = scan_scalar(pos);
      if (end == pos) return {};  // a stray delimiter: the parser's error stands
      if (end >= t_.size()) return cut();  // a number cut off may have lost digits: not complete
      value_done(end);
      pos = end;
    }
  }
  if (!stack_.empty()) return cut();
  return out_;
}

}  // namespace

JsonRepair plan_json_repair(std::string_view text) { return RepairScanner(text).run(); }

}  // namespace sl
