// A direct reader of SQLite table b-trees, for the big tables of Nsight exports (kernels, runtime
// calls, NVTX ranges): it walks the table's pages in the database image and decodes only the
// columns asked for, without SQLite's virtual machine (which costs more than half of a bare SELECT).
//
// It follows the public file format (sqlite.org/fileformat2.html): the 100-byte file header,
// interior (0x05) and leaf (0x0D) table b-tree pages, cell pointer arrays, varints, record
// headers with serial types, overflow pages. The image is untrusted: every read is bounds-checked
// and every page is visited at most once. Whatever it does not handle (a value of another kind
// than its column's, a BLOB, text in UTF-16, index b-trees, odd headers) stops it with a reason;
// the loader then goes on through SQLite's API from the row after the last one decoded, so the
// result is the same.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sl::nsys {

// What a wanted column holds, as its declared type says (SQLite's type affinity): the values the
// reader takes there. Integer: integers only. Real: integers or REALs (sqlite3_column_double
// reads either). Text: TEXT (SQLite stores numbers given to a TEXT column as text). Rowid: an
// INTEGER PRIMARY KEY, which the record holds as NULL: its value is the row's rowid (a value
// stored there anyway is read as an integer).
enum class ValueKind : uint8_t { Integer, Real, Text, Rowid };

// Rows decoded from a run of leaf pages: the wanted columns of each row, row-major. A NULL reads
// as 0 (as sqlite3_column_int64 gives) with its `present` flag clear.
struct RowBatch {
  // `present` of a value: which kind of value `values` holds.
  static constexpr uint8_t kNull = 0, kInteger = 1, kReal = 2, kText = 3;
  size_t columns = 0;
  std::vector<int64_t> values;   // rows() × columns used; grown by doubling. A REAL: its bits. A
                                 // TEXT: its offset in `text` << 32 | its length.
  std::vector<uint8_t> present;
  std::string text;              // the bytes of the TEXT values
  size_t count = 0;
  int64_t last_rowid = 0;  // of the last row here (valid when rows() > 0)
  std::string stop;        // why decoding stopped after these rows; empty when it did not
  size_t rows() const { return count; }
  // Room for one more row, cleared (NULL everywhere) unless `cleared` is false (the caller then
  // writes every column); commit() keeps it.
  std::pair<int64_t*, uint8_t*> next_row(bool cleared = true) {
    size_t need = (count + 1) * columns;
    if (values.size() < need) {
      values.resize(std::max(need, values.size() * 2));
      present.resize(values.size());
    }
    int64_t* v = values.data() + count * columns;
    uint8_t* p = present.data() + count * columns;
    if (cleared) clear(v, p);
    return {v, p};
  }
  void clear(int64_t* v, uint8_t* p) const {
    std::fill(v, v + columns, 0);
    std::fill(p, p + columns, 0);
  }
  void commit() { ++count; }
  void reserve_rows(size_t rows) {
    if (values.size() >= rows * columns) return;
    values.resize(rows * columns);
    present.resize(rows * columns);
  }

  // What a decoding thread's `prepare` (BackgroundDecoding) made of each row: for the Nsight
  // loader, its args record. Row i's bytes in `prepared` start where row i - 1's end (at 0 for
  // the first row) and end at prepared_rows[i].end. Sized to the most a batch needed: reused
  // batches keep it.
  struct Prepared {
    uint32_t end, fields, text;
    uint32_t base = UINT32_MAX;  // a repeat of this row's record (ArgsBlocks::append_repeat): `fields` replaced
  };
  std::vector<char> prepared;
  std::vector<Prepared> prepared_rows;
};

// One decoded row, with the accessors the loader's row functions use on a SQLite statement.
struct BatchRow {
  const int64_t* v;
  const uint8_t* p;
  const RowBatch* batch = nullptr;  // with `row`: where prepared() looks
  size_t row = 0;
  bool null(int c) const { return !p[c]; }
  int64_t i64(int c) const { return v[c]; }
  std::optional<int64_t> opt(int c) const { return p[c] ? std::optional<int64_t>(v[c]) : std::nullopt; }
  // Of a Real column: its REAL, or its integer as a double (as sqlite3_column_double gives).
  double f64(int c) const { return p[c] == RowBatch::kReal ? std::bit_cast<double>(v[c]) : double(v[c]); }
  // Of a Text column: its bytes ("" when NULL).
  std::string_view text(int c) const {
    if (p[c] != RowBatch::kText) return {};
    return std::string_view(batch->text).substr(size_t(uint64_t(v[c]) >> 32), size_t(uint32_t(v[c])));
  }
  // What `prepare` made of this row, or nullptr when nothing was.
  const RowBatch::Prepared* prepared() const {
    return batch && row < batch->prepared_rows.size() ? &batch->prepared_rows[row] : nullptr;
  }
  std::string_view prepared_bytes() const {
    const auto& rows = batch->prepared_rows;
    uint32_t begin = row ? rows[row - 1].end : 0;
    return {batch->prepared.data() + begin, rows[row].end - begin};
  }
};

class TableReader {
public:
  // `image`: the whole database file; `root`: the table's root page (sqlite_master.rootpage);
  // `record_columns`: for each wanted column, its position in the table's records (-1: the
  // table lacks it, read as NULL). `table` names the table in messages.
  TableReader(std::string_view image, std::string table, int64_t root, std::vector<int> record_columns);

  // The columns decoded from now on (as `record_columns` above), each of the kind given in
  // `kinds` (none given: all Integer): one walk of the tree serves every reading of the table.
  void select(const std::vector<int>& record_columns, const std::vector<ValueKind>& kinds = {});

  // Checks the file header and walks the interior pages down to the leaves. False, with why(),
  // when the image is not one this reader handles or is damaged.
  bool open();
  const std::string& why() const { return why_; }
  size_t leaf_count() const { return leaves_.size(); }
  // Rows of the table by the leaves' cell counts (reads each leaf's header; 0 before open()).
  uint64_t row_count() const;
  // At least the table's rows, from the first and last rowids (exact without deleted rows):
  // reads two leaves; the leaves' cell counts (row_count) when those rowids promise more rows than
  // the leaves have room for.
  uint64_t row_bound() const;
  // The table's rows from every leaf's cell count, as SQLite's count(*) gives them (one page header
  // read per leaf); nullopt when a page listed as a leaf is not one or lists more cells than fit
  // (damage, which SQLite's count(*) then names).
  std::optional<uint64_t> exact_row_count() const;
  uint32_t page_size() const { return page_size_; }

  // Appends the rows of leaves [first, last) to `batch` (whose `columns` must be set); stops at
  // the first page it cannot decode, saying why in batch.stop (the rows before it are kept).
  void decode(size_t first, size_t last, RowBatch& batch) const;

private:
  uint64_t cells(size_t first, size_t last) const;
  bool fail(uint32_t page, size_t offset, const std::string& what);
  std::string where(uint32_t page, size_t offset) const;
  bool walk(uint32_t page, int depth, std::vector<bool>& seen);
  bool decode_leaf(uint32_t page, RowBatch& batch, std::string& scratch) const;
  bool decode_record(std::string_view payload, uint32_t page, size_t offset, RowBatch& batch) const;
  bool decode_record_in_full(std::string_view payload, uint32_t page, size_t offset, RowBatch& batch) const;
  template <bool kIntegersOnly>
  bool decode_plain_record(const uint8_t* r, size_t size, size_t types_at, size_t header, int64_t* values,
                           uint8_t* present, RowBatch& batch) const;
  bool store_value(uint64_t t, int slot, const uint8_t* value, uint64_t bytes, uint64_t left, int64_t* values,
                   uint8_t* present, RowBatch& batch) const;
  bool gather_overflow(std::string_view local, uint64_t total, uint32_t first, uint32_t page, size_t offset,
                       std::string& out, RowBatch& batch) const;

  std::string_view image_;
  std::string table_;
  int64_t root_;
  std::vector<int> slot_of_record_;  // record position → wanted column, -1 when not wanted
  std::vector<ValueKind> kind_of_slot_;
  bool integers_only_ = true;        // every wanted column is Integer or Rowid: the plain path checks no kind
  int rowid_slot_ = -1;              // the wanted column of kind Rowid, if any
  bool text_wanted_ = false;         // a wanted column of kind Text
  size_t wanted_ = 0;
  bool every_slot_read_ = false;  // each wanted column is a distinct column of the records
  uint32_t page_size_ = 0, usable_ = 0, pages_ = 0;
  uint32_t text_encoding_ = 1;  // 1 UTF-8, 2 UTF-16le, 3 UTF-16be
  std::vector<uint32_t> leaves_;
  std::string why_;
};

// How decode_in_background uses its threads.
struct BackgroundDecoding {
  // Decoding threads: batches are decoded side by side and handed over in order.
  size_t threads = 1;
  // Called on a decoding thread with each batch once decoded (the rows before a stop included).
  std::function<void(RowBatch&)> prepare;
  // Called on the first decoding thread whenever the batches decoded ahead are all waiting for
  // `consume` (that thread would otherwise sleep): a short piece of work each call, returning
  // false when there is none left for now.
  std::function<bool()> spare_work;
  // The decoding threads' CPU time is added here when given.
  double* cpu_seconds = nullptr;
};

// Decodes the leaves on other threads, `pages_per_batch` at a time, while `consume` handles each
// batch, in leaf order, on this one (decoding and building overlap); this thread, while it waits
// for its next batch, decodes a later one itself (`prepare` then runs here too). `consume`
// returns false to stop early; the decoding threads are stopped and joined before this returns.
// Returns the reason decoding stopped early (a batch's `stop`), empty when every leaf was decoded.
std::string decode_in_background(const TableReader& reader, size_t columns, size_t pages_per_batch,
                                 const std::function<bool(const RowBatch&)>& consume,
                                 const BackgroundDecoding& how = {});

}  // namespace sl::nsys
