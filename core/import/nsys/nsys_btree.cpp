// Direct reading of SQLite table b-trees: see nsys_btree.h. Offsets in messages are bytes from
// the start of the file.
#include "core/import/nsys/nsys_btree.h"

#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <thread>

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

namespace sl::nsys {
namespace {

constexpr uint8_t kInteriorTable = 0x05, kLeafTable = 0x0D;
constexpr int kMaxDepth = 40;  // far beyond any real tree (each level multiplies by ~100 pages)
constexpr size_t kFileHeader = 100;

uint32_t be16(const uint8_t* p) { return uint32_t(p[0]) << 8 | p[1]; }
uint32_t be32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }

// A varint (1 to 9 bytes, big-endian groups of 7 bits, the 9th byte whole) from [p, end).
// Returns the bytes used, 0 when it runs past `end`.
size_t varint(const uint8_t* p, const uint8_t* end, uint64_t& out) {
  if (p < end && p[0] < 0x80) {
    out = p[0];
    return 1;
  }
  uint64_t v = 0;
  for (size_t i = 0; i < 9; ++i) {
    if (p + i >= end) return 0;
    if (i == 8) {
      out = v << 8 | p[i];
      return 9;
    }
    v = v << 7 | (p[i] & 0x7F);
    if (!(p[i] & 0x80)) {
      out = v;
      return i + 1;
    }
  }
  return 0;
}

// Bytes of a value of serial type `t` in the record body.
constexpr uint8_t kIntegerBytes[] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0};
constexpr uint64_t serial_size(uint64_t t) { return t < 12 ? kIntegerBytes[t] : (t - 12) / 2; }

// A big-endian two's-complement integer of 1, 2, 3, 4, 6 or 8 bytes.
int64_t be_int(const uint8_t* p, size_t n) {
  uint64_t v = p[0] & 0x80 ? ~uint64_t(0) : 0;
  for (size_t i = 0; i < n; ++i) v = v << 8 | p[i];
  return int64_t(v);
}

// The same from one 8-byte load: `p` must have 8 readable bytes.
int64_t be_int8(const uint8_t* p, size_t n) {
  uint64_t raw;
  std::memcpy(&raw, p, sizeof raw);
  return int64_t(__builtin_bswap64(raw)) >> (64 - 8 * n);  // arithmetic: the sign extends
}

}  // namespace

TableReader::TableReader(std::string_view image, std::string table, int64_t root, std::vector<int> record_columns)
    : image_(image), table_(std::move(table)), root_(root) {
  select(record_columns);
}

void TableReader::select(const std::vector<int>& record_columns, const std::vector<ValueKind>& kinds) {
  wanted_ = record_columns.size();
  kind_of_slot_.assign(wanted_, ValueKind::Integer);
  std::copy_n(kinds.begin(), std::min(kinds.size(), wanted_), kind_of_slot_.begin());
  integers_only_ = std::all_of(kind_of_slot_.begin(), kind_of_slot_.end(),
                               [](ValueKind k) { return k == ValueKind::Integer || k == ValueKind::Rowid; });
  auto rowid = std::find(kind_of_slot_.begin(), kind_of_slot_.end(), ValueKind::Rowid);
  rowid_slot_ = rowid == kind_of_slot_.end() ? -1 : int(rowid - kind_of_slot_.begin());
  text_wanted_ = std::count(kind_of_slot_.begin(), kind_of_slot_.end(), ValueKind::Text) > 0;
  int last = -1;
  for (int r : record_columns) last = std::max(last, r);
  slot_of_record_.assign(size_t(last + 1), -1);
  size_t read = 0;
  for (size_t slot = 0; slot < record_columns.size(); ++slot) {
    if (record_columns[slot] < 0) continue;
    int& at = slot_of_record_[size_t(record_columns[slot])];
    read += at < 0;  // a column asked for twice is read into its last slot only
    at = int(slot);
  }
  every_slot_read_ = read == wanted_;
}

std::string TableReader::where(uint32_t page, size_t offset) const {
  return table_ + ": page " + std::to_string(page) + ", byte offset " +
         std::to_string(uint64_t(page - 1) * page_size_ + offset);
}

bool TableReader::fail(uint32_t page, size_t offset, const std::string& what) {
  why_ = page ? where(page, offset) + ": " + what : table_ + ": " + what;
  return false;
}

bool TableReader::open() {
  const auto* h = reinterpret_cast<const uint8_t*>(image_.data());
  if (image_.size() < kFileHeader || std::memcmp(h, "SQLite format 3", 16) != 0)
    return fail(0, 0, "no SQLite file header");
  page_size_ = be16(h + 16) == 1 ? 65536 : be16(h + 16);
  if (page_size_ < 512 || (page_size_ & (page_size_ - 1))) return fail(0, 0, "page size " + std::to_string(page_size_));
  usable_ = page_size_ - h[20];
  if (usable_ < 480) return fail(0, 0, "usable page size " + std::to_string(usable_));
  // The payload fractions are fixed by the format; anything else is not a file this reader knows.
  if (h[21] != 64 || h[22] != 32 || h[23] != 32) return fail(0, 0, "unexpected payload fractions");
  text_encoding_ = be32(h + 56);  // 0 in a database that never held a table: SQLite's default, UTF-8
  if (text_encoding_ == 0) text_encoding_ = 1;
  uint64_t file_pages = image_.size() / page_size_;
  uint32_t in_header = be32(h + 28);
  // The size in the header counts when it is current (change counter = version-valid-for).
  bool current = in_header != 0 && be32(h + 24) == be32(h + 92);
  pages_ = uint32_t(std::min<uint64_t>(current ? std::min<uint64_t>(in_header, file_pages) : file_pages, UINT32_MAX));
  if (root_ < 1 || root_ > int64_t(pages_)) return fail(0, 0, "root page " + std::to_string(root_) + " outside the file");
  std::vector<bool> seen(pages_ + 1, false);  // a bit a page: every table of a 10 GB report opens one
  return walk(uint32_t(root_), 0, seen);
}

// Collects the leaves under `page` in key order. Each page is visited once: a page reached twice
// (a cycle, or two parents) is damage.
bool TableReader::walk(uint32_t page, int depth, std::vector<bool>& seen) {
  // Children were checked on their parent's page, where a wrong one is named: only a root here.
  if (page < 1 || page > pages_) return fail(0, 0, "the root page number " + std::to_string(page) + " outside the file");
  if (seen[page]) return fail(page, 0, "page reached twice (a cycle in the tree)");
  if (depth > kMaxDepth) return fail(page, 0, "tree deeper than " + std::to_string(kMaxDepth) + " levels");
  seen[page] = true;
  const auto* p = reinterpret_cast<const uint8_t*>(image_.data()) + size_t(page - 1) * page_size_;
  size_t head = page == 1 ? kFileHeader : 0;
  uint8_t type = p[head];
  if (type == kLeafTable) {
    leaves_.push_back(page);
    return true;
  }
  if (type != kInteriorTable)
    return fail(page, head, "not a table b-tree page (type " + std::to_string(type) + ")");
  uint32_t cells = be16(p + head + 3);
  size_t pointers = head + 12;
  if (pointers + 2 * size_t(cells) > usable_) return fail(page, head + 3, "more cells than the page holds");
  std::vector<uint32_t> children;
  auto add_child = [&](size_t at) {  // `at`: where the page number is, named if it is wrong
    uint32_t child = be32(p + at);
    if (child < 1 || child > pages_) return fail(page, at, "a child page number " + std::to_string(child) + " outside the file");
    children.push_back(child);
    return true;
  };
  for (uint32_t i = 0; i < cells; ++i) {
    uint32_t cell = be16(p + pointers + 2 * i);
    if (cell < pointers + 2 * cells || cell + 4 > usable_) return fail(page, pointers + 2 * i, "cell pointer outside the page");
    if (!add_child(cell)) return false;
  }
  if (!add_child(head + 8)) return false;
  // Every leaf of a b-tree is at the same depth: when the first child is a leaf, its siblings are
  // leaves too and are not read here (their pages are first touched by the decoding thread, which
  // checks each one's type: a sibling that is not a leaf stops it there).
  uint32_t first = children.front();
  bool leaves = !seen[first] && image_[size_t(first - 1) * page_size_ + (first == 1 ? kFileHeader : 0)] == char(kLeafTable);
  for (uint32_t child : children) {
    if (!leaves) {
      if (!walk(child, depth + 1, seen)) return false;
      continue;
    }
    if (seen[child]) return fail(child, 0, "page reached twice (a cycle in the tree)");
    seen[child] = true;
    leaves_.push_back(child);
  }
  return true;
}

// Cells of leaves [first, last): the rows they hold (a leaf's header says how many).
uint64_t TableReader::cells(size_t first, size_t last) const {
  uint64_t n = 0;
  for (size_t i = first; i < last && i < leaves_.size(); ++i) {
    const auto* p = reinterpret_cast<const uint8_t*>(image_.data()) + size_t(leaves_[i] - 1) * page_size_;
    n += std::min<uint32_t>(be16(p + (leaves_[i] == 1 ? kFileHeader : 0) + 3), usable_ / 4);  // damage: no more than fit
  }
  return n;
}

uint64_t TableReader::row_count() const { return cells(0, leaves_.size()); }

std::optional<uint64_t> TableReader::exact_row_count() const {
  uint64_t n = 0;
  for (uint32_t leaf : leaves_) {
    const auto* p = reinterpret_cast<const uint8_t*>(image_.data()) + size_t(leaf - 1) * page_size_;
    size_t head = leaf == 1 ? kFileHeader : 0;
    uint32_t cells = be16(p + head + 3);
    if (p[head] != kLeafTable || head + 8 + 2 * size_t(cells) > usable_) return std::nullopt;
    n += cells;
  }
  return n;
}

// Rowids are unique, so a table holds at most last - first + 1 rows: exactly that many when no
// row was ever deleted (as in an Nsight export). Two leaves read, where row_count() reads them all.
uint64_t TableReader::row_bound() const {
  if (leaves_.empty()) return 0;
  auto rowid_at = [&](uint32_t page, bool last, int64_t& rowid) {
    const auto* p = reinterpret_cast<const uint8_t*>(image_.data()) + size_t(page - 1) * page_size_;
    const uint8_t* end = p + usable_;
    size_t head = page == 1 ? kFileHeader : 0;
    uint32_t cells = be16(p + head + 3);
    if (p[head] != kLeafTable || cells == 0 || head + 8 + 2 * size_t(cells) > usable_) return false;
    uint32_t cell = be16(p + head + 8 + 2 * size_t(last ? cells - 1 : 0));
    if (cell >= usable_) return false;
    uint64_t size = 0, id = 0;
    size_t n = varint(p + cell, end, size);
    if (!n || !varint(p + cell + n, end, id)) return false;
    rowid = int64_t(id);
    return true;
  };
  int64_t first = 0, last = 0;
  if (!rowid_at(leaves_.front(), false, first) || !rowid_at(leaves_.back(), true, last) || last < first)
    return row_count();
  // More rows than the leaves have room for (a cell takes at least its 2-byte pointer): rowids
  // with gaps, or a damaged leaf (found by fuzzing: 500 GB reserved for a 10 KB file). The
  // leaves' own counts then.
  uint64_t rows = uint64_t(last) - uint64_t(first) + 1;
  return rows > uint64_t(leaves_.size()) * ((usable_ - 8) / 2) ? row_count() : rows;
}

void TableReader::decode(size_t first, size_t last, RowBatch& batch) const {
  // SQLite hands out UTF-16 text converted to UTF-8: that conversion is left to it.
  if (text_encoding_ != 1 && text_wanted_) {
    batch.stop = table_ + ": text stored as UTF-16 (encoding " + std::to_string(text_encoding_) + ")";
    return;
  }
  // Room for every cell of these leaves at once: no regrowth while decoding.
  batch.reserve_rows(batch.count + size_t(cells(first, last)));
  std::string scratch;
  for (size_t i = first; i < last && i < leaves_.size(); ++i) {
    // The next leaf's bytes asked for ahead: its cells are read from the end of the page down,
    // which the hardware prefetcher follows only after missing on the first lines (a cache miss
    // on each cell's first byte was a sixth of decoding).
    if (i + 1 < leaves_.size()) {
      const char* next = image_.data() + size_t(leaves_[i + 1] - 1) * page_size_;
      for (size_t line = 0; line < page_size_; line += 64) __builtin_prefetch(next + line);
    }
    if (!decode_leaf(leaves_[i], batch, scratch)) return;
  }
}

namespace {

// Bytes of a value of one-byte serial type t (t < 0x80); kNotPlain for the reserved types 10, 11.
constexpr uint8_t kNotPlain = 0xFF;
constexpr auto kPlainSizes = [] {
  std::array<uint8_t, 0x80> sizes{};
  for (uint32_t t = 0; t < 0x80; ++t) sizes[t] = t == 10 || t == 11 ? kNotPlain : uint8_t(serial_size(t));
  return sizes;
}();

}  // namespace

// A value of serial type t (its `bytes` at `value`, `left` bytes of payload from there) into a
// wanted column, as the column's kind takes it; false when it does not (decode_record_in_full
// then says what the value is).
bool TableReader::store_value(uint64_t t, int slot, const uint8_t* value, uint64_t bytes, uint64_t left,
                              int64_t* values, uint8_t* present, RowBatch& batch) const {
  ValueKind kind = kind_of_slot_[size_t(slot)];
  if (t == 0) {
    values[slot] = 0, present[slot] = RowBatch::kNull;
    return true;
  }
  if (t < 12 && t != 7 && kind != ValueKind::Text) {
    // With 8 bytes of payload left, one load and a byte swap (the usual case); else byte by byte.
    values[slot] = t >= 8 ? int64_t(t - 8) : left >= 8 ? be_int8(value, size_t(bytes)) : be_int(value, size_t(bytes));
    present[slot] = RowBatch::kInteger;
    return true;
  }
  if (t == 7 && kind == ValueKind::Real) {  // big-endian IEEE 754
    values[slot] = be_int(value, 8), present[slot] = RowBatch::kReal;
    return true;
  }
  if (t >= 13 && (t & 1) && kind == ValueKind::Text && bytes <= UINT32_MAX && batch.text.size() <= UINT32_MAX) {
    values[slot] = int64_t(uint64_t(batch.text.size()) << 32 | bytes), present[slot] = RowBatch::kText;
    batch.text.append(reinterpret_cast<const char*>(value), size_t(bytes));
    return true;
  }
  return false;
}

// The usual record, quickly: every serial type up to the last wanted column is one byte, the
// wanted columns hold what their kind takes (for integers only: integers, NULL, 0, 1), every
// value lies inside the payload. Otherwise false, with the row half written: decode_record then
// takes the general path, which says what is wrong when something is. (No varint per type, no
// clearing of the row first: ~10% less decoding on 25-column kernel rows.)
template <bool kIntegersOnly>
[[gnu::always_inline]] inline bool TableReader::decode_plain_record(const uint8_t* r, size_t size, size_t types_at,
                                                                   size_t header, int64_t* values,
                                                                   uint8_t* present, RowBatch& batch) const {
  const size_t columns = slot_of_record_.size();
  if (header - types_at < columns) return false;  // fewer columns (or wider types): the general path
  const uint8_t* types = r + types_at;
  uint64_t body = header;
  for (size_t column = 0; column < columns; ++column) {
    uint8_t t = types[column];
    if (t >= 0x80) return false;
    uint32_t bytes = kPlainSizes[t];
    if (bytes == kNotPlain) return false;
    if (int slot = slot_of_record_[column]; slot >= 0) {
      if (body + bytes > size) return false;
      if constexpr (kIntegersOnly) {
        if (t == 7 || t >= 12) return false;
        values[slot] = t >= 8 ? int64_t(t - 8) : bytes == 0 ? 0 : size - body >= 8 ? be_int8(r + body, bytes)
                                                                                 : be_int(r + body, bytes);
        present[slot] = t != 0;
      } else if (!store_value(t, slot, r + body, bytes, size - body, values, present, batch)) {
        return false;
      }
    }
    body += bytes;
  }
  return body <= size;
}

// The usual record (a one-byte header size, decode_plain_record's kind) here; any other through
// decode_record_in_full. Inlined into decode_leaf: a call and its checks per row cost ~3%.
[[gnu::always_inline]] inline bool TableReader::decode_record(std::string_view payload, uint32_t page, size_t offset,
                                                              RowBatch& batch) const {
  const auto* r = reinterpret_cast<const uint8_t*>(payload.data());
  if (!payload.empty() && r[0] >= 1 && r[0] < 0x80 && r[0] <= payload.size()) {
    auto [values, present] = batch.next_row(false);
    if (!every_slot_read_) batch.clear(values, present);
    size_t text_before = batch.text.size();
    if (integers_only_ ? decode_plain_record<true>(r, payload.size(), 1, r[0], values, present, batch)
                       : decode_plain_record<false>(r, payload.size(), 1, r[0], values, present, batch)) {
      batch.commit();
      return true;
    }
    batch.text.resize(text_before);  // the general path stores the row's text again
  }
  return decode_record_in_full(payload, page, offset, batch);
}

bool TableReader::decode_leaf(uint32_t page, RowBatch& batch, std::string& scratch) const {
  const auto* p = reinterpret_cast<const uint8_t*>(image_.data()) + size_t(page - 1) * page_size_;
  const uint8_t* end = p + usable_;
  size_t head = page == 1 ? kFileHeader : 0;
  uint32_t cells = be16(p + head + 3);
  size_t pointers = head + 8;
  auto stop = [&](size_t offset, const std::string& what) {
    batch.stop = where(page, offset) + ": " + what;
    return false;
  };
  if (p[head] != kLeafTable) return stop(head, "not a table leaf page (type " + std::to_string(p[head]) + ")");
  if (pointers + 2 * size_t(cells) > usable_) return stop(head + 3, "more cells than the page holds");
  // Payloads up to max_local stay on the page; larger ones spill to overflow pages.
  const uint64_t max_local = usable_ - 35, min_local = (uint64_t(usable_) - 12) * 32 / 255 - 23;
  for (uint32_t i = 0; i < cells; ++i) {
    uint32_t cell = be16(p + pointers + 2 * i);
    if (cell < pointers + 2 * cells || cell >= usable_) return stop(pointers + 2 * i, "cell pointer outside the page");
    const uint8_t* c = p + cell;
    uint64_t size = 0, rowid = 0;
    size_t n = varint(c, end, size);
    size_t m = n ? varint(c + n, end, rowid) : 0;
    if (!m) return stop(cell, "cell header runs past the page");
    c += n + m;
    std::string_view payload;
    if (size <= max_local) {
      if (size > uint64_t(end - c)) return stop(cell, "payload runs past the page");
      payload = {reinterpret_cast<const char*>(c), size_t(size)};
    } else {
      uint64_t local = min_local + (size - min_local) % (usable_ - 4);
      if (local > max_local) local = min_local;
      if (local + 4 > uint64_t(end - c)) return stop(cell, "payload runs past the page");
      if (size > image_.size()) return stop(cell, "payload larger than the file");
      if (!gather_overflow({reinterpret_cast<const char*>(c), size_t(local)}, size, be32(c + local), page, cell,
                           scratch, batch))
        return false;
      payload = scratch;
    }
    if (!decode_record(payload, page, cell, batch)) return false;
    if (rowid_slot_ >= 0) {  // the row just committed: a rowid alias is NULL in the record
      size_t at = (batch.count - 1) * batch.columns + size_t(rowid_slot_);
      if (batch.present[at] == RowBatch::kNull) batch.values[at] = int64_t(rowid), batch.present[at] = RowBatch::kInteger;
    }
    batch.last_rowid = int64_t(rowid);
  }
  return true;
}

// A payload that spills: its first part on the leaf, the rest in a chain of overflow pages
// (each: the next page's number, then content).
bool TableReader::gather_overflow(std::string_view local, uint64_t total, uint32_t next, uint32_t page, size_t offset,
                                  std::string& out, RowBatch& batch) const {
  out.assign(local);
  uint64_t chain = 0, max_chain = total / (usable_ - 4) + 1;
  while (out.size() < total) {
    if (next < 1 || next > pages_ || ++chain > max_chain) {
      batch.stop = where(page, offset) + ": overflow chain broken at page " + std::to_string(next);
      return false;
    }
    const char* o = image_.data() + size_t(next - 1) * page_size_;
    size_t take = size_t(std::min<uint64_t>(total - out.size(), usable_ - 4));
    out.append(o + 4, take);
    next = be32(reinterpret_cast<const uint8_t*>(o));
  }
  return true;
}

// The record: a header (its size, then one serial type per column) and the values. Columns past
// the record's last are NULL (rows written before an ALTER TABLE ADD COLUMN).
bool TableReader::decode_record_in_full(std::string_view payload, uint32_t page, size_t offset, RowBatch& batch) const {
  const auto* r = reinterpret_cast<const uint8_t*>(payload.data());
  const uint8_t* end = r + payload.size();
  auto stop = [&](const std::string& what) {
    batch.stop = where(page, offset) + ": " + what;
    return false;
  };
  uint64_t header = 0;
  size_t n = varint(r, end, header);
  if (!n || header > payload.size() || header < n) return stop("record header outside its payload");
  auto [values, present] = batch.next_row();
  const uint8_t* types = r + n;
  const uint8_t* types_end = r + header;
  uint64_t body = header;
  for (size_t column = 0; column < slot_of_record_.size() && types < types_end; ++column) {
    uint64_t t = *types;
    size_t used = t < 0x80 ? 1 : varint(types, types_end, t);
    if (!used) return stop("record header cut short");
    types += used;
    uint64_t bytes = serial_size(t);
    if (t == 10 || t == 11 || bytes > payload.size() - body) return stop("record value outside its payload");
    int slot = slot_of_record_[column];
    if (slot >= 0 && !store_value(t, slot, r + body, bytes, payload.size() - body, values, present, batch)) {
      static constexpr const char* kTakes[] = {"integers only here", "numbers only here", "text only here",
                                               "integers only here"};
      return stop(std::string(t == 7 ? "a REAL" : t >= 12 ? (t & 1 ? "a TEXT" : "a BLOB") : "an integer") +
                  " value in column " + std::to_string(column) + " (" + kTakes[int(kind_of_slot_[size_t(slot)])] + ")");
    }
    body += bytes;
  }
  batch.commit();
  return true;
}

namespace {

double thread_cpu_seconds() {
  timespec cpu{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
  return double(cpu.tv_sec) + double(cpu.tv_nsec) * 1e-9;
}

// Decoding threads yield to the thread consuming their batches: they share cores with it (with
// few cores), and the consumer, building
// the store, is usually the slower side, so it should keep a core while decoding fills the rest
// (nice +5, with two decoding threads on the 2-core VM: the kernel-heavy report 0.203 → 0.182 s,
// the runtime-heavy one 0.43 → 0.39 s).
void lower_priority() {
  pid_t thread = ::gettid();
  errno = 0;
  int nice = ::getpriority(PRIO_PROCESS, id_t(thread));
  if (errno == 0) ::setpriority(PRIO_PROCESS, id_t(thread), std::min(nice + 5, 19));
}

}  // namespace

// Batch k covers leaves [k × pages_per_batch, (k + 1) × pages_per_batch). Decoding threads (and
// the consumer, while it waits) claim batches in order, at most kAhead past the one `consume`
// waits for (bounded memory); decoded batches wait in `done` for their turn. The first batch
// that stops ends the claiming: batches after it are dropped.
std::string decode_in_background(const TableReader& reader, size_t columns, size_t pages_per_batch,
                                 const std::function<bool(const RowBatch&)>& consume, const BackgroundDecoding& how) {
  const size_t batches = (reader.leaf_count() + pages_per_batch - 1) / pages_per_batch;
  // No more threads than batches the consumer does not decode itself: a small table (most of a
  // report's) is decoded here, without starting a thread (~40 us each, a dozen tables a report).
  const size_t threads = std::min(std::max<size_t>(1, how.threads), batches > 0 ? batches - 1 : 0);
  const size_t kAhead = 4 + std::max<size_t>(threads, 1);
  std::mutex mutex;
  std::condition_variable changed;
  std::map<size_t, RowBatch> done;
  size_t next_claim = 0, next_consume = 0, stop_at = SIZE_MAX, running = threads;
  bool cancelled = false;
  std::vector<RowBatch> spare;  // consumed batches, reused: their memory is already mapped
  auto claimable = [&] { return next_claim < next_consume + kAhead; };
  auto over = [&] { return cancelled || next_claim >= batches || next_claim > stop_at; };
  // Claims the next batch, decodes it with the lock released and files it in `done`.
  auto decode_next = [&](std::unique_lock<std::mutex>& lock) {
    size_t index = next_claim++;
    RowBatch batch;
    if (!spare.empty()) batch = std::move(spare.back()), spare.pop_back();
    lock.unlock();
    batch.columns = columns;
    batch.count = 0;
    batch.text.clear();
    batch.prepared_rows.clear();
    try {
      reader.decode(index * pages_per_batch, (index + 1) * pages_per_batch, batch);
      if (how.prepare) how.prepare(batch);
    } catch (const std::bad_alloc&) {  // the loader's own path then meets it, or not
      batch.stop = "out of memory while decoding";
      batch.prepared_rows.clear();
    }
    lock.lock();
    if (!batch.stop.empty()) stop_at = std::min(stop_at, index);
    done.emplace(index, std::move(batch));
    changed.notify_all();
  };
  auto decode = [&](size_t thread) {
    lower_priority();
    std::unique_lock lock(mutex);
    for (;;) {
      // Far enough ahead: the consumer is the slower side; spare work first, then sleep.
      for (bool more = thread == 0 && bool(how.spare_work); more && !over() && !claimable();) {
        lock.unlock();
        more = how.spare_work();
        lock.lock();
      }
      changed.wait(lock, [&] { return over() || claimable(); });
      if (over()) break;
      decode_next(lock);
    }
    if (how.cpu_seconds) *how.cpu_seconds += thread_cpu_seconds();
    --running;
    changed.notify_all();
  };
  std::vector<std::thread> workers;
  // Whatever way this returns (a throw from `consume` included), the threads are stopped and joined.
  struct StopWorkers {
    std::mutex& mutex;
    std::condition_variable& changed;
    bool& cancelled;
    std::vector<std::thread>& workers;
    ~StopWorkers() {
      {
        std::lock_guard lock(mutex);
        cancelled = true;
        changed.notify_all();
      }
      for (std::thread& w : workers) w.join();
    }
  } stop_workers{mutex, changed, cancelled, workers};
  for (size_t t = 0; t < threads; ++t) workers.emplace_back(decode, t);
  std::string stop;
  for (;;) {
    RowBatch batch;
    {
      std::unique_lock lock(mutex);
      // Waiting for its next batch, the consumer decodes a later one itself: its core would
      // idle otherwise (decoding is the slower side: a kernel's 25 columns and args). Decoding
      // threads beside a busy consumer only take turns with it on the cores.
      auto can_claim = [&] { return !over() && claimable(); };
      while (!done.count(next_consume)) {
        if (can_claim()) decode_next(lock);
        else if (running > 0) changed.wait(lock, [&] { return running == 0 || done.count(next_consume) || can_claim(); });
        else break;
      }
      auto it = done.find(next_consume);
      if (it == done.end()) break;
      batch = std::move(it->second);
      done.erase(it);
      ++next_consume;
      changed.notify_all();
    }
    if (!consume(batch)) break;
    if (!batch.stop.empty()) {
      stop = batch.stop;
      break;
    }
    std::lock_guard lock(mutex);
    spare.push_back(std::move(batch));
  }
  return stop;
}

}  // namespace sl::nsys
