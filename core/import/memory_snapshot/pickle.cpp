#include "core/import/memory_snapshot/pickle.h"

#include <bit>
#include <cstddef>
#include <cstdio>
#include <cstring>

namespace sl::pickle {

namespace {

struct OpInfo {
  uint8_t op;
  const char* name;
};

// Every opcode of protocols 0 to 5, by pickletools' names: supported or not, an error names it.
constexpr OpInfo kOps[] = {
    {'(', "MARK"}, {'.', "STOP"}, {'0', "POP"}, {'1', "POP_MARK"}, {'2', "DUP"}, {'F', "FLOAT"}, {'I', "INT"},
    {'J', "BININT"}, {'K', "BININT1"}, {'L', "LONG"}, {'M', "BININT2"}, {'N', "NONE"}, {'P', "PERSID"},
    {'Q', "BINPERSID"}, {'R', "REDUCE"}, {'S', "STRING"}, {'T', "BINSTRING"}, {'U', "SHORT_BINSTRING"},
    {'V', "UNICODE"}, {'X', "BINUNICODE"}, {'a', "APPEND"}, {'b', "BUILD"}, {'c', "GLOBAL"}, {'d', "DICT"},
    {'}', "EMPTY_DICT"}, {'e', "APPENDS"}, {'g', "GET"}, {'h', "BINGET"}, {'i', "INST"}, {'j', "LONG_BINGET"},
    {'l', "LIST"}, {']', "EMPTY_LIST"}, {'o', "OBJ"}, {'p', "PUT"}, {'q', "BINPUT"}, {'r', "LONG_BINPUT"},
    {'s', "SETITEM"}, {'t', "TUPLE"}, {')', "EMPTY_TUPLE"}, {'u', "SETITEMS"}, {'G', "BINFLOAT"},
    {0x80, "PROTO"}, {0x81, "NEWOBJ"}, {0x82, "EXT1"}, {0x83, "EXT2"}, {0x84, "EXT4"}, {0x85, "TUPLE1"},
    {0x86, "TUPLE2"}, {0x87, "TUPLE3"}, {0x88, "NEWTRUE"}, {0x89, "NEWFALSE"}, {0x8a, "LONG1"}, {0x8b, "LONG4"},
    {'B', "BINBYTES"}, {'C', "SHORT_BINBYTES"}, {0x8c, "SHORT_BINUNICODE"}, {0x8d, "BINUNICODE8"},
    {0x8e, "BINBYTES8"}, {0x8f, "EMPTY_SET"}, {0x90, "ADDITEMS"}, {0x91, "FROZENSET"}, {0x92, "NEWOBJ_EX"},
    {0x93, "STACK_GLOBAL"}, {0x94, "MEMOIZE"}, {0x95, "FRAME"}, {0x96, "BYTEARRAY8"}, {0x97, "NEXT_BUFFER"},
    {0x98, "READONLY_BUFFER"},
};

const std::vector<uint32_t> kNoItems;

class Parser {
public:
  Parser(std::string_view data, std::vector<Node>& nodes, std::vector<std::vector<uint32_t>>& items, const Limits& limits,
         PickleError& error)
      : d_(data), nodes_(nodes), items_(items), limits_(limits), error_(error) {}

  bool run(uint32_t& root, uint32_t& protocol) {
    while (true) {
      if (pos_ >= d_.size()) return fail_at("the data ends before STOP (cut short?)", d_.size());
      op_at_ = pos_;
      uint8_t op = uint8_t(d_[pos_++]);
      if (op == '.') break;
      if (!step(op)) return false;
    }
    if (stack_.size() != 1 || !marks_.empty())
      return fail_at(stack_.empty() ? "STOP with nothing on the stack" : "STOP with more than one value or an open MARK on the stack", op_at_);
    root = stack_.back();
    protocol = protocol_;
    return true;
  }

private:
  std::string_view d_;
  std::vector<Node>& nodes_;
  std::vector<std::vector<uint32_t>>& items_;
  const Limits& limits_;
  PickleError& error_;
  size_t pos_ = 0, op_at_ = 0;
  uint32_t protocol_ = 0;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::vector<uint32_t> memo_;  // kUnset where no PUT has filled it
  static constexpr uint32_t kUnset = UINT32_MAX;

  bool fail_at(std::string message, uint64_t at) {
    error_.message = std::move(message);
    error_.offset = at;
    return false;
  }
  bool fail(const std::string& what) { return fail_at(opcode_name(uint8_t(d_[op_at_])) + ": " + what, op_at_); }

  bool need(size_t n) {
    if (d_.size() - pos_ >= n) return true;
    return fail_at(opcode_name(uint8_t(d_[op_at_])) + ": the data ends inside its argument (cut short?)", op_at_);
  }
  uint64_t le(size_t n) {  // n little-endian bytes, after need(n)
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t(uint8_t(d_[pos_ + i])) << (8 * i);
    pos_ += n;
    return v;
  }
  bool push_node(Node n) {
    if (stack_.size() >= limits_.max_stack) return fail("the stack grows past its limit");
    if (nodes_.size() >= UINT32_MAX - 1) return fail("too many values");
    nodes_.push_back(n);
    stack_.push_back(uint32_t(nodes_.size() - 1));
    return true;
  }
  bool push_container(Kind kind, std::vector<uint32_t> children = {}) {
    Node n{kind, 0, items_.size()};
    items_.push_back(std::move(children));
    return push_node(n);
  }
  bool push_int(int64_t v) { return push_node({Kind::Int, 0, uint64_t(v)}); }
  bool push_text(Kind kind, uint64_t n) {
    if (!need(n)) return false;
    if (n > UINT32_MAX) return fail("a string over 4 GiB");
    Node node{kind, uint32_t(n), pos_};
    pos_ += n;
    return push_node(node);
  }
  // The values above the top MARK, popped with it.
  bool pop_mark(std::vector<uint32_t>& out) {
    if (marks_.empty()) return fail("no MARK on the stack");
    size_t at = marks_.back();
    marks_.pop_back();
    out.assign(stack_.begin() + std::ptrdiff_t(at), stack_.end());
    stack_.resize(at);
    return true;
  }
  bool top_is(Kind a, Kind b, size_t below, uint32_t& node) {
    if (stack_.size() <= below || (!marks_.empty() && marks_.back() > stack_.size() - 1 - below))
      return fail("needs a value on the stack");
    node = stack_[stack_.size() - 1 - below];
    Kind k = nodes_[node].kind;
    if (k != a && k != b) return fail("the value it adds to is not a container of the right kind");
    return true;
  }
  bool memo_put(uint64_t index) {
    if (stack_.empty() || (!marks_.empty() && marks_.back() == stack_.size())) return fail("nothing on the stack to memoize");
    // Picklers number the memo from 0 up; an index far past the entries so far would only make
    // the memo table huge.
    if (index >= limits_.max_memo || index > memo_.size() + (uint64_t(1) << 20))
      return fail("memo index " + std::to_string(index) + " past its limit");
    if (index >= memo_.size()) memo_.resize(size_t(index) + 1, kUnset);
    memo_[size_t(index)] = stack_.back();
    return true;
  }
  bool memo_get(uint64_t index) {
    if (index >= memo_.size() || memo_[size_t(index)] == kUnset) return fail("memo index " + std::to_string(index) + " was never stored");
    if (stack_.size() >= limits_.max_stack) return fail("the stack grows past its limit");
    stack_.push_back(memo_[size_t(index)]);
    return true;
  }
  bool text_line(std::string_view& line) {  // protocol 0's newline-terminated arguments
    size_t end = d_.find('\n', pos_);
    if (end == std::string_view::npos) return fail_at(opcode_name(uint8_t(d_[op_at_])) + ": the data ends inside its argument (cut short?)", op_at_);
    line = d_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }
  bool decimal_index(uint64_t& v) {
    std::string_view line;
    if (!text_line(line)) return false;
    v = 0;
    if (line.empty() || line.size() > 18) return fail("not a memo index");
    for (char c : line) {
      if (c < '0' || c > '9') return fail("not a memo index");
      v = v * 10 + uint64_t(c - '0');
    }
    return true;
  }

  bool step(uint8_t op) {
    switch (op) {
      case 0x80:  // PROTO
        if (!need(1)) return false;
        protocol_ = uint8_t(d_[pos_++]);
        if (protocol_ < 2 || protocol_ > 5) return fail("protocol " + std::to_string(protocol_) + " (this reader reads 2 to 5)");
        return true;
      case 0x95: {  // FRAME: a length prefix for what follows; checked, not needed to read it
        if (!need(8)) return false;
        uint64_t n = le(8);
        if (n > d_.size() - pos_) return fail("a frame of " + std::to_string(n) + " bytes runs past the end of the data (cut short?)");
        return true;
      }
      case '(':
        if (marks_.size() >= limits_.max_marks) return fail("nesting deeper than " + std::to_string(limits_.max_marks) + " MARKs");
        marks_.push_back(stack_.size());
        return true;
      case '0':  // POP
        if (!marks_.empty() && marks_.back() == stack_.size()) return marks_.pop_back(), true;  // pops the MARK itself
        if (stack_.empty()) return fail("nothing on the stack");
        stack_.pop_back();
        return true;
      case '1': {  // POP_MARK
        std::vector<uint32_t> dropped;
        return pop_mark(dropped);
      }
      case '2':  // DUP
        if (stack_.empty() || (!marks_.empty() && marks_.back() == stack_.size())) return fail("nothing on the stack");
        stack_.push_back(stack_.back());
        return true;
      case 'N': return push_node({Kind::None, 0, 0});
      case 0x88: return push_node({Kind::Bool, 0, 1});
      case 0x89: return push_node({Kind::Bool, 0, 0});
      case 'K': return need(1) && push_int(int64_t(le(1)));
      case 'M': return need(2) && push_int(int64_t(le(2)));
      case 'J': return need(4) && push_int(int64_t(int32_t(uint32_t(le(4)))));
      case 0x8a:    // LONG1
      case 0x8b: {  // LONG4
        size_t width = op == 0x8a ? 1 : 4;
        if (!need(width)) return false;
        uint64_t n = le(width);
        if (!need(n)) return false;
        if (n > 8) {
          // Wider than 64 bits: kept as the nearest double (no snapshot field needs more).
          double v = 0, scale = 1;
          for (uint64_t i = 0; i < n; ++i, scale *= 256) v += double(uint8_t(d_[pos_ + i])) * scale;
          if (n && (uint8_t(d_[pos_ + n - 1]) & 0x80)) v -= scale;
          pos_ += n;
          return push_node({Kind::Float, 0, std::bit_cast<uint64_t>(v)});
        }
        uint64_t v = le(n);
        if (n && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t(0) << (8 * n);  // sign-extend
        return push_int(int64_t(v));
      }
      case 'G': {  // BINFLOAT: big-endian
        if (!need(8)) return false;
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = bits << 8 | uint8_t(d_[pos_ + i]);
        pos_ += 8;
        return push_node({Kind::Float, 0, bits});
      }
      case 0x8c: return need(1) && push_text(Kind::Str, le(1));  // SHORT_BINUNICODE
      case 'X': return need(4) && push_text(Kind::Str, le(4));   // BINUNICODE
      case 0x8d: return need(8) && push_text(Kind::Str, le(8));  // BINUNICODE8
      case 'U': return need(1) && push_text(Kind::Str, le(1));   // SHORT_BINSTRING (Python 2 str)
      case 'T': {                                                // BINSTRING: signed length
        if (!need(4)) return false;
        int32_t n = int32_t(uint32_t(le(4)));
        if (n < 0) return fail("negative length");
        return push_text(Kind::Str, uint64_t(n));
      }
      case 'C': return need(1) && push_text(Kind::Bytes, le(1));  // SHORT_BINBYTES
      case 'B': return need(4) && push_text(Kind::Bytes, le(4));  // BINBYTES
      case 0x8e:                                                  // BINBYTES8
      case 0x96: return need(8) && push_text(Kind::Bytes, le(8));  // BYTEARRAY8
      case '}': return push_container(Kind::Dict);
      case ']': return push_container(Kind::List);
      case ')': return push_container(Kind::Tuple);
      case 0x8f: return push_container(Kind::Set);
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        size_t n = size_t(op - 0x84);
        if (stack_.size() < n || (!marks_.empty() && marks_.back() > stack_.size() - n)) return fail("needs " + std::to_string(n) + " values on the stack");
        std::vector<uint32_t> children(stack_.end() - std::ptrdiff_t(n), stack_.end());
        stack_.resize(stack_.size() - n);
        return push_container(Kind::Tuple, std::move(children));
      }
      case 't':
      case 'l':
      case 0x91: {  // TUPLE, LIST, FROZENSET: from the MARK
        std::vector<uint32_t> children;
        if (!pop_mark(children)) return false;
        return push_container(op == 't' ? Kind::Tuple : op == 'l' ? Kind::List : Kind::Set, std::move(children));
      }
      case 'd': {  // DICT
        std::vector<uint32_t> children;
        if (!pop_mark(children)) return false;
        if (children.size() % 2) return fail("an odd number of keys and values");
        return push_container(Kind::Dict, std::move(children));
      }
      case 'a': {  // APPEND
        uint32_t list = 0;
        if (!top_is(Kind::List, Kind::List, 1, list)) return false;
        items_[nodes_[list].value].push_back(stack_.back());
        stack_.pop_back();
        return true;
      }
      case 'e':     // APPENDS
      case 0x90: {  // ADDITEMS
        std::vector<uint32_t> children;
        if (!pop_mark(children)) return false;
        uint32_t target = 0;
        if (!(op == 'e' ? top_is(Kind::List, Kind::List, 0, target) : top_is(Kind::Set, Kind::Set, 0, target))) return false;
        auto& list = items_[nodes_[target].value];
        list.insert(list.end(), children.begin(), children.end());
        return true;
      }
      case 's': {  // SETITEM
        uint32_t dict = 0;
        if (!top_is(Kind::Dict, Kind::Dict, 2, dict)) return false;
        auto& list = items_[nodes_[dict].value];
        list.push_back(stack_[stack_.size() - 2]);
        list.push_back(stack_.back());
        stack_.resize(stack_.size() - 2);
        return true;
      }
      case 'u': {  // SETITEMS
        std::vector<uint32_t> children;
        if (!pop_mark(children)) return false;
        if (children.size() % 2) return fail("an odd number of keys and values");
        uint32_t dict = 0;
        if (!top_is(Kind::Dict, Kind::Dict, 0, dict)) return false;
        auto& list = items_[nodes_[dict].value];
        list.insert(list.end(), children.begin(), children.end());
        return true;
      }
      case 0x94: return memo_put(memo_.size());                 // MEMOIZE
      case 'q': return need(1) && memo_put(le(1));               // BINPUT
      case 'r': return need(4) && memo_put(le(4));               // LONG_BINPUT
      case 'h': return need(1) && memo_get(le(1));               // BINGET
      case 'j': return need(4) && memo_get(le(4));               // LONG_BINGET
      case 'p': { uint64_t i = 0; return decimal_index(i) && memo_put(i); }  // PUT
      case 'g': { uint64_t i = 0; return decimal_index(i) && memo_get(i); }  // GET
      // Code: never run, never read past.
      case 'c': case 0x93: case 'R': case 'i': case 'o': case 0x81: case 0x92: case 'b': case 'P': case 'Q':
      case 0x82: case 0x83: case 0x84:
        return fail_at(opcode_name(op) + " refused: it would import or call code, and a memory snapshot is plain data only", op_at_);
      case 0x97:
      case 0x98: return fail_at(opcode_name(op) + " refused: out-of-band buffers are not plain data", op_at_);
      default:
        // Protocol 0/1 text opcodes (INT, LONG, FLOAT, STRING, UNICODE) and unknown bytes.
        return fail_at(opcode_name(op) + " is not read (this reader reads the binary opcodes of protocols 2 to 5)", op_at_);
    }
  }
};

}  // namespace

std::string opcode_name(uint8_t op) {
  for (const OpInfo& o : kOps)
    if (o.op == op) return o.name;
  char buf[32];
  std::snprintf(buf, sizeof buf, "unknown opcode 0x%02x", op);
  return buf;
}

bool looks_like_pickle(std::string_view data) {
  return data.size() >= 2 && uint8_t(data[0]) == 0x80 && uint8_t(data[1]) >= 2 && uint8_t(data[1]) <= 5;
}

bool Document::parse(std::string_view data, PickleError& error, const Limits& limits) {
  data_ = data;
  nodes_.clear();
  items_.clear();
  Parser p(data, nodes_, items_, limits, error);
  return p.run(root_, protocol_);
}

std::string_view Document::str(uint32_t id) const {
  const Node& n = nodes_[id];
  if (n.kind != Kind::Str && n.kind != Kind::Bytes) return {};
  return data_.substr(size_t(n.value), n.length);
}

int64_t Document::integer(uint32_t id, int64_t fallback) const {
  const Node& n = nodes_[id];
  if (n.kind == Kind::Int || n.kind == Kind::Bool) return int64_t(n.value);
  if (n.kind == Kind::Float) {
    double d = std::bit_cast<double>(n.value);
    if (d >= -9.2e18 && d <= 9.2e18) return int64_t(d);
  }
  return fallback;
}

double Document::number(uint32_t id, double fallback) const {
  const Node& n = nodes_[id];
  if (n.kind == Kind::Int || n.kind == Kind::Bool) return double(int64_t(n.value));
  if (n.kind == Kind::Float) return std::bit_cast<double>(n.value);
  return fallback;
}

const std::vector<uint32_t>& Document::items(uint32_t id) const {
  const Node& n = nodes_[id];
  switch (n.kind) {
    case Kind::List: case Kind::Tuple: case Kind::Dict: case Kind::Set: return items_[size_t(n.value)];
    default: return kNoItems;
  }
}

uint32_t Document::get(uint32_t dict, std::string_view key) const {
  if (nodes_[dict].kind != Kind::Dict) return kMissing;
  const auto& kv = items_[size_t(nodes_[dict].value)];
  for (size_t i = 0; i + 1 < kv.size(); i += 2)
    if (nodes_[kv[i]].kind == Kind::Str && str(kv[i]) == key) return kv[i + 1];
  return kMissing;
}

}  // namespace sl::pickle
