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

// While parsing, a container's items arrive in batches (APPENDS/SETITEMS of up to 1000 each,
// interleaved with other containers' batches): each batch is a chunk of the pool, and a
// container keeps the list of its chunks. At STOP every container with more than one chunk is
// copied into one stretch, so a finished Document hands out each container's items as a span.
struct Chunk {
  uint32_t start = 0, length = 0;
  uint32_t next = UINT32_MAX;
};
struct ChunkList {
  uint32_t head = UINT32_MAX, tail = UINT32_MAX;
  uint32_t length = 0;
};

class Parser {
public:
  Parser(std::string_view data, std::vector<Node>& nodes, std::vector<uint32_t>& items, const Limits& limits, PickleError& error)
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
    return join_chunks();
  }

private:
  std::string_view d_;
  std::vector<Node>& nodes_;
  std::vector<uint32_t>& items_;
  std::vector<Chunk> chunks_;
  std::vector<ChunkList> containers_;  // per container, in creation order (Node::value while parsing)
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
  // Adds items [first, last) (of the stack) to a container as one chunk.
  bool add_items(uint32_t container, const uint32_t* first, const uint32_t* last) {
    if (first == last) return true;
    if (items_.size() + size_t(last - first) >= UINT32_MAX) return fail("too many values");
    ChunkList& list = containers_[size_t(nodes_[container].value)];
    uint32_t chunk = uint32_t(chunks_.size());
    chunks_.push_back({uint32_t(items_.size()), uint32_t(last - first)});
    items_.insert(items_.end(), first, last);
    if (list.tail == UINT32_MAX) list.head = chunk;
    else chunks_[list.tail].next = chunk;
    list.tail = chunk;
    list.length += uint32_t(last - first);
    return true;
  }
  // A new container holding the top `n` values of the stack (popped).
  bool push_container(Kind kind, size_t n = 0) {
    Node node{kind, 0, containers_.size()};
    containers_.push_back({});
    size_t at = stack_.size() - n;
    if (nodes_.size() >= UINT32_MAX - 1) return fail("too many values");
    nodes_.push_back(node);
    uint32_t id = uint32_t(nodes_.size() - 1);
    if (!add_items(id, stack_.data() + at, stack_.data() + stack_.size())) return false;
    stack_.resize(at);
    if (stack_.size() >= limits_.max_stack) return fail("the stack grows past its limit");
    stack_.push_back(id);
    return true;
  }
  // At STOP: each container's items in one stretch of the pool; Node::value becomes its start.
  bool join_chunks() {
    for (Node& n : nodes_) {
      if (n.kind != Kind::List && n.kind != Kind::Tuple && n.kind != Kind::Dict && n.kind != Kind::Set) continue;
      const ChunkList& list = containers_[size_t(n.value)];
      n.length = list.length;
      if (list.head == UINT32_MAX) {
        n.value = 0;
        continue;
      }
      if (chunks_[list.head].next == UINT32_MAX) {
        n.value = chunks_[list.head].start;
        continue;
      }
      if (items_.size() + list.length >= UINT32_MAX) return fail_at("too many values", op_at_);
      n.value = items_.size();
      for (uint32_t c = list.head; c != UINT32_MAX; c = chunks_[c].next) {
        size_t start = chunks_[c].start, len = chunks_[c].length;
        items_.insert(items_.end(), items_.begin() + std::ptrdiff_t(start), items_.begin() + std::ptrdiff_t(start + len));
      }
    }
    std::vector<Chunk>().swap(chunks_);
    std::vector<ChunkList>().swap(containers_);
    return true;
  }
  bool push_int(int64_t v) { return push_node({Kind::Int, 0, uint64_t(v)}); }
  bool push_text(Kind kind, uint64_t n) {
    if (!need(n)) return false;
    if (n > UINT32_MAX) return fail("a string over 4 GiB");
    Node node{kind, uint32_t(n), pos_};
    pos_ += n;
    return push_node(node);
  }
  // Pops the top MARK; `at` is where the values above it begin on the stack (still there).
  bool pop_mark(size_t& at) {
    if (marks_.empty()) return fail("no MARK on the stack");
    at = marks_.back();
    marks_.pop_back();
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
        size_t at = 0;
        if (!pop_mark(at)) return false;
        stack_.resize(at);
        return true;
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
        return push_container(Kind::Tuple, n);
      }
      case 't':
      case 'l':
      case 0x91: {  // TUPLE, LIST, FROZENSET: from the MARK
        size_t at = 0;
        if (!pop_mark(at)) return false;
        return push_container(op == 't' ? Kind::Tuple : op == 'l' ? Kind::List : Kind::Set, stack_.size() - at);
      }
      case 'd': {  // DICT
        size_t at = 0;
        if (!pop_mark(at)) return false;
        if ((stack_.size() - at) % 2) return fail("an odd number of keys and values");
        return push_container(Kind::Dict, stack_.size() - at);
      }
      case 'a': {  // APPEND
        uint32_t list = 0;
        if (!top_is(Kind::List, Kind::List, 1, list)) return false;
        if (!add_items(list, &stack_.back(), &stack_.back() + 1)) return false;
        stack_.pop_back();
        return true;
      }
      case 'e':     // APPENDS
      case 0x90: {  // ADDITEMS
        size_t at = 0;
        if (!pop_mark(at)) return false;
        uint32_t target = 0;
        if (!(op == 'e' ? top_is(Kind::List, Kind::List, stack_.size() - at, target)
                        : top_is(Kind::Set, Kind::Set, stack_.size() - at, target)))
          return false;
        if (!add_items(target, stack_.data() + at, stack_.data() + stack_.size())) return false;
        stack_.resize(at);
        return true;
      }
      case 's': {  // SETITEM
        uint32_t dict = 0;
        if (!top_is(Kind::Dict, Kind::Dict, 2, dict)) return false;
        if (!add_items(dict, stack_.data() + stack_.size() - 2, stack_.data() + stack_.size())) return false;
        stack_.resize(stack_.size() - 2);
        return true;
      }
      case 'u': {  // SETITEMS
        size_t at = 0;
        if (!pop_mark(at)) return false;
        if ((stack_.size() - at) % 2) return fail("an odd number of keys and values");
        uint32_t dict = 0;
        if (!top_is(Kind::Dict, Kind::Dict, stack_.size() - at, dict)) return false;
        if (!add_items(dict, stack_.data() + at, stack_.data() + stack_.size())) return false;
        stack_.resize(at);
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
  // Every value takes at least two bytes of opcode and argument, and most of a snapshot's five
  // or more: reserving for that (address space, touched only as it fills) spares the copies and
  // page faults of growing by doubling.
  nodes_.reserve(data.size() / 5 + 16);
  items_.reserve(data.size() / 5 + 16);
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

std::span<const uint32_t> Document::items(uint32_t id) const {
  const Node& n = nodes_[id];
  switch (n.kind) {
    case Kind::List: case Kind::Tuple: case Kind::Dict: case Kind::Set: return {items_.data() + n.value, n.length};
    default: return {};
  }
}

uint32_t Document::get(uint32_t dict, std::string_view key) const {
  if (nodes_[dict].kind != Kind::Dict) return kMissing;
  std::span<const uint32_t> kv = items(dict);
  for (size_t i = 0; i + 1 < kv.size(); i += 2)
    if (nodes_[kv[i]].kind == Kind::Str && str(kv[i]) == key) return kv[i + 1];
  return kMissing;
}

}  // namespace sl::pickle
