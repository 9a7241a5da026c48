// A direct reader of SQLite table b-trees, for the big tables of Nsight exports (kernels, runtime
// calls): it walks the table's pages in the database image and decodes only the integer columns
// asked for, without SQLite's virtual machine (which costs more than half of a bare SELECT).
//
// It follows the public file format (sqlite.org/fileformat2.html): the 100-byte file header,
// interior (0x05) and leaf (0x0D) table b-tree pages, cell pointer arrays, varints, record
// headers with serial types, overflow pages. The image is untrusted: every read is bounds-checked
// and every page is visited at most once. Whatever it does not handle (REAL, TEXT or BLOB values
// in the columns read, index b-trees, odd headers) stops it with a reason; the loader then goes
// on through SQLite's API from the row after the last one decoded, so the result is the same.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sl::nsys {

// Rows decoded from a run of leaf pages: the wanted columns of each row, row-major. A NULL reads
// as 0 (as sqlite3_column_int64 gives) with its `present` flag clear.
struct RowBatch {
  size_t columns = 0;
  std::vector<int64_t> values;   // rows() × columns used; grown by doubling
  std::vector<uint8_t> present;
  size_t count = 0;
  int64_t last_rowid = 0;  // of the last row here (valid when rows() > 0)
  std::string stop;        // why decoding stopped after these rows; empty when it did not
  size_t rows() const { return count; }
  // Room for one more row, cleared (NULL everywhere); commit() keeps it.
  std::pair<int64_t*, uint8_t*> next_row() {
    size_t need = (count + 1) * columns;
    if (values.size() < need) {
      values.resize(std::max(need, values.size() * 2));
      present.resize(values.size());
    }
    int64_t* v = values.data() + count * columns;
    uint8_t* p = present.data() + count * columns;
    std::fill(v, v + columns, 0);
    std::fill(p, p + columns, 0);
    return {v, p};
  }
  void commit() { ++count; }
  void reserve_rows(size_t rows) {
    if (values.size() >= rows * columns) return;
    values.resize(rows * columns);
    present.resize(rows * columns);
  }
};

// One decoded row, with the accessors the loader's row functions use on a SQLite statement.
struct BatchRow {
  const int64_t* v;
  const uint8_t* p;
  bool null(int c) const { return !p[c]; }
  int64_t i64(int c) const { return v[c]; }
  std::optional<int64_t> opt(int c) const { return p[c] ? std::optional<int64_t>(v[c]) : std::nullopt; }
};

class TableReader {
public:
  // `image`: the whole database file; `root`: the table's root page (sqlite_master.rootpage);
  // `record_columns`: for each wanted column, its position in the table's records (-1: the
  // table lacks it, read as NULL). `table` names the table in messages.
  TableReader(std::string_view image, std::string table, int64_t root, std::vector<int> record_columns);

  // The columns decoded from now on (as `record_columns` above): one walk of the tree serves
  // every reading of the table.
  void select(const std::vector<int>& record_columns);

  // After open(): only leaves [first, last) are this reader's from now on (leaf_count(),
  // decode() and the rest count from `first`).
  void keep_leaves(size_t first, size_t last) {
    last = std::min(last, leaves_.size());
    leaves_ = std::vector<uint32_t>(leaves_.begin() + std::min(first, last), leaves_.begin() + last);
  }

  // Checks the file header and walks the interior pages down to the leaves. False, with why(),
  // when the image is not one this reader handles or is damaged.
  bool open();
  const std::string& why() const { return why_; }
  size_t leaf_count() const { return leaves_.size(); }
  // Rows of the table by the leaves' cell counts (reads each leaf's header; 0 before open()).
  uint64_t row_count() const;
  // At least the table's rows, from the first and last rowids (exact without deleted rows):
  // reads two leaves.
  uint64_t row_bound() const;
  uint32_t page_size() const { return page_size_; }

  // Appends the rows of leaves [first, last) to `batch` (whose `columns` must be set); stops at
  // the first page it cannot decode, saying why in batch.stop (the rows before it are kept).
  void decode(size_t first, size_t last, RowBatch& batch) const;

private:
  uint64_t cells(size_t first, size_t last) const;
  bool fail(uint32_t page, size_t offset, const std::string& what);
  std::string where(uint32_t page, size_t offset) const;
  bool walk(uint32_t page, int depth, std::vector<uint8_t>& seen);
  bool decode_leaf(uint32_t page, RowBatch& batch, std::string& scratch) const;
  bool decode_record(std::string_view payload, uint32_t page, size_t offset, RowBatch& batch) const;
  bool gather_overflow(std::string_view local, uint64_t total, uint32_t first, uint32_t page, size_t offset,
                       std::string& out, RowBatch& batch) const;

  std::string_view image_;
  std::string table_;
  int64_t root_;
  std::vector<int> slot_of_record_;  // record position → wanted column, -1 when not wanted
  size_t wanted_ = 0;
  uint32_t page_size_ = 0, usable_ = 0, pages_ = 0;
  std::vector<uint32_t> leaves_;
  std::string why_;
};

// Decodes the leaves on a second thread, `pages_per_batch` at a time, while `consume` handles
// each batch on this one (two cores: decoding and building overlap). `consume` returns false to
// stop early; the worker is stopped and joined before this returns. Returns the reason decoding
// stopped early (a batch's `stop`), empty when every leaf was decoded.
// `spare_work`, when given, is called on the worker whenever the batches decoded ahead are all
// waiting for `consume` (the worker would otherwise sleep): a short piece of work each call,
// returning false when there is none left for now. The worker's CPU time is added to
// `*worker_cpu_seconds` when given.
std::string decode_in_background(const TableReader& reader, size_t columns, size_t pages_per_batch,
                                 const std::function<bool(const RowBatch&)>& consume,
                                 const std::function<bool()>& spare_work = {},
                                 double* worker_cpu_seconds = nullptr);

}  // namespace sl::nsys
