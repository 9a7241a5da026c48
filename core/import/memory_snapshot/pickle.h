// A reader of Python's pickle format for plain data only: protocols 2 to 5, the opcodes that
// dicts, lists, tuples, sets, strings, bytes, ints, floats, bools and None need (Python's
// `pickletools` documents each). Opening a file never runs anything: every opcode that would
// import or call code (GLOBAL, STACK_GLOBAL, REDUCE, INST, OBJ, NEWOBJ, NEWOBJ_EX, BUILD, PERSID,
// BINPERSID, EXT1/2/4) and out-of-band buffers are refused with an error naming the opcode and
// its byte offset, before anything after it is read. Memo, frames, stack and nesting are bounded;
// a cut or corrupt file is an error with its offset, never a crash.
//
// The result is a flat tree of values whose strings point into the file's bytes (no copy), so
// the bytes must outlive it. Containers' items live in one pool (no allocation per container:
// a snapshot holds millions of small dicts). Containers are shared, as in Python: a memo GET of a list yields the
// same node. The tree may therefore hold cycles: walk it along known paths (as the snapshot
// mapping does), never recursively without a bound.
#pragma once

#include <cstdint>
#include <string>
#include <span>
#include <string_view>
#include <vector>

namespace sl::pickle {

enum class Kind : uint8_t { None, Bool, Int, Float, Str, Bytes, List, Tuple, Dict, Set };

struct Node {
  Kind kind = Kind::None;
  uint32_t length = 0;   // Str/Bytes: bytes (with `wide` for > 4 GiB: never in practice, refused)
  uint64_t value = 0;    // Bool/Int: the integer (two's complement); Float: the bits; Str/Bytes: offset in the data;
                         // containers: while parsing, their row of the chunk lists; after, the first item's row in the pool (`length` items)
};

struct PickleError {
  std::string message;  // names the opcode where one is to blame
  uint64_t offset = 0;  // byte offset of the opcode (or of the field) in the data
};

struct Limits {
  uint64_t max_memo = uint64_t(1) << 28;   // memo entries
  uint64_t max_stack = uint64_t(1) << 28;  // values on the stack at once
  uint32_t max_marks = 10'000;             // open MARKs: the nesting depth of a literal
};

class Document {
public:
  // Parses `data` (the whole file). On failure returns false and fills `error`.
  bool parse(std::string_view data, PickleError& error, const Limits& limits = {});

  uint32_t root() const { return root_; }
  const Node& node(uint32_t id) const { return nodes_[id]; }
  size_t node_count() const { return nodes_.size(); }
  uint32_t protocol() const { return protocol_; }

  // --- reading values (wrong kinds give the fallback, never a crash) ---
  Kind kind(uint32_t id) const { return nodes_[id].kind; }
  std::string_view str(uint32_t id) const;  // Str or Bytes; "" otherwise
  bool is_int(uint32_t id) const { return nodes_[id].kind == Kind::Int || nodes_[id].kind == Kind::Bool; }
  int64_t integer(uint32_t id, int64_t fallback = 0) const;
  double number(uint32_t id, double fallback = 0) const;  // Int or Float
  // Items of a List/Tuple/Set; a Dict's keys and values alternate. Empty for other kinds.
  std::span<const uint32_t> items(uint32_t id) const;
  // The value of `key` (a Str key) in a Dict, or kMissing.
  static constexpr uint32_t kMissing = UINT32_MAX;
  uint32_t get(uint32_t dict, std::string_view key) const;

private:
  std::string_view data_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> items_;  // every container's items, each container's contiguous
  uint32_t root_ = 0;
  uint32_t protocol_ = 0;
};

// The opcode's name as pickletools spells it ("REDUCE", "STACK_GLOBAL"), or "unknown opcode 0xNN".
std::string opcode_name(uint8_t op);

// Whether `data` starts like a pickle of protocol 2 to 5 (PROTO 2..5).
bool looks_like_pickle(std::string_view data);

}  // namespace sl::pickle
