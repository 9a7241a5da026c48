// Args text in zstd blocks (core/store/args_blocks.h): what goes in comes out, across blocks, threads,
// loaders and snapshots; a damaged block is an error that names it, never a crash.
#include <doctest/doctest.h>

#include <charconv>
#include <climits>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/snapshot/snapshot.h"
#include "core/store/args_blocks.h"
#include "core/text/json_writer.h"
#include "tests/unit/test_support.h"

namespace sl {
namespace {

std::string args_of(size_t i) {
  return R"({"i":)" + std::to_string(i) + R"(,"name":"op )" + std::to_string(i * 7919 % 1000) + R"(","pad":")" +
         std::string(i % 50, 'x') + R"("})";
}

// A trace of `n` slices on 3 threads, each with args naming its index, about 110 bytes each.
std::string many_args_trace(size_t n) {
  std::string json = R"({"traceEvents":[)";
  for (size_t i = 0; i < n; ++i) {
    if (i) json += ",\n";
    json += R"({"ph":"X","name":"e)" + std::to_string(i) + R"(","pid":1,"tid":)" + std::to_string(i % 3) +
            R"(,"ts":)" + std::to_string(i * 10) + R"(,"dur":5,"args":)" + args_of(i) + "}";
  }
  return json + "]}";
}

// Every slice's args text is exactly its event's, found through its name.
void check_every_slice_args(const TraceStore& s, size_t n) {
  size_t checked = 0;
  for (const Track& t : s.tracks)
    for (size_t r = 0; r < t.slices.size(); ++r) {
      std::string_view name = s.strings.view(t.slices.name[r]);
      size_t i = std::stoul(std::string(name.substr(1)));
      REQUIRE(s.args_json(t.slices.args[r]) == args_of(i));
      ++checked;
    }
  CHECK(checked == n);
}

// The arg blocks section (id 12) of a snapshot: its offset and size from the section table.
std::pair<uint64_t, uint64_t> arg_blocks_section(const std::string& snap) {
  uint64_t offset = 0, size = 0;
  std::memcpy(&offset, snap.data() + 32 + 11 * 32 + 8, 8);
  std::memcpy(&size, snap.data() + 32 + 11 * 32 + 16, 8);
  return {offset, size};
}

}  // namespace

TEST_CASE("args blocks: text comes back exactly, across sealed blocks, the open block and an oversized object") {
  ArgsBlocks b;
  std::vector<std::pair<ArgsRange, std::string>> added;
  for (size_t i = 0; i < 5000; ++i) added.emplace_back(b.append(args_of(i)), args_of(i));
  std::string big = "{\"big\":\"" + std::string(ArgsBlocks::kBlockBytes + 10, 'b') + "\"}";
  added.emplace_back(b.append(big), big);
  added.emplace_back(b.append("{}"), "{}");  // stays in the open block
  CHECK(b.sealed().size() >= 4);
  CHECK_FALSE(b.open_text().empty());
  CHECK(b.stored_bytes() < b.size() / 3);  // it does compress
  std::string out;
  for (const auto& [range, text] : added) {
    REQUIRE(b.read(range, out));
    CHECK(out == text);
  }
  // Blocks are contiguous and an object never spans two.
  uint64_t end = 0;
  for (const ArgsBlocks::Block& block : b.sealed()) {
    CHECK(block.start == end);
    end += block.raw_size;
  }
  const ArgsRange& oversized = added[5000].first;
  CHECK(b.sealed()[oversized.block].raw_size == big.size());
  ArgsRange outside = added.back().first;
  outside.length += 1;
  CHECK_FALSE(b.holds(outside));
  CHECK_FALSE(b.read(outside, out));
  CHECK(out.empty());
  CHECK(b.error().empty());
}

TEST_CASE("args blocks: absorbing a later half shifts its ranges and keeps both texts") {
  ArgsBlocks first, later;
  std::vector<ArgsRange> a, c;
  for (size_t i = 0; i < 3000; ++i) a.push_back(first.append(args_of(i)));
  for (size_t i = 3000; i < 6000; ++i) c.push_back(later.append(args_of(i)));
  auto [offset_shift, block_shift] = first.absorb(std::move(later));
  std::string out;
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(first.read(a[i], out));
    CHECK(out == args_of(i));
  }
  for (size_t i = 0; i < c.size(); ++i) {
    ArgsRange r = c[i];
    r.offset += offset_shift;
    r.block += block_shift;
    REQUIRE(first.read(r, out));
    CHECK(out == args_of(3000 + i));
  }
  CHECK(a.back().offset < c.front().offset + offset_shift);  // file order is kept
}

TEST_CASE("args blocks: concurrent readers get the right text through the shared cache") {
  ArgsBlocks b;
  std::vector<ArgsRange> ranges;
  for (size_t i = 0; i < 60000; ++i) ranges.push_back(b.append(args_of(i)));
  b.seal();
  REQUIRE(b.sealed().size() > ArgsBlocks::kCachedBlocks);  // the readers evict each other's blocks
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t)
    readers.emplace_back([&, t] {
      std::string out;
      for (size_t k = 0; k < ranges.size(); ++k) {
        size_t i = (k * 7919 + size_t(t) * 104729) % ranges.size();
        if (!b.read(ranges[i], out) || out != args_of(i)) ++wrong[size_t(t)];
      }
    });
  for (auto& r : readers) r.join();
  CHECK(wrong == std::vector<int>(4, 0));
}

TEST_CASE("args blocks: the JSON loader keeps every event's args without the file text") {
  auto s = test::load_ok(many_args_trace(10000));
  CHECK(s->args_blocks().sealed().size() >= 2);
  check_every_slice_args(*s, 10000);
  // Several views at once stay valid (a per-thread ring of copies).
  std::string_view first = s->args_json(0), second = s->args_json(1);
  CHECK(first == args_of(0));
  CHECK(second == args_of(1));
}

TEST_CASE("args blocks: two threads parsing halves of a large trace keep every args text in file order") {
  // Past the loader's 24 MB threshold, the second half is parsed into its own store and absorbed.
  const size_t n = 260000;
  std::string json = many_args_trace(n);
  REQUIRE(json.size() > (24u << 20));
  auto s = test::load_ok(json);
  check_every_slice_args(*s, n);
  const auto& table = s->args_table();
  for (size_t row = 1; row < table.size(); ++row) REQUIRE(table[row].offset > table[row - 1].offset);
}

TEST_CASE("args blocks: HTA's facts from the text are noted while loading") {
  auto s = test::load_ok(R"({"traceEvents":[
    {"ph":"M","name":"process_name","pid":1,"args":{"name":"p"}},
    {"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"rank":4}},
    {"ph":"X","name":"b","pid":1,"tid":1,"ts":3,"dur":1,"args":{"rank": 7}}],
    "distributedInfo":{"rank": 2}})");
  CHECK(s->meta.hta.from_text);
  CHECK(s->meta.hta.rank == 7);  // the first `"rank":` followed by whitespace, anywhere
  CHECK(s->meta.hta.first_event_args == kNone);  // traceEvents[0] is metadata: no args row
  CHECK(s->meta.rank == 2);
  auto t = test::load_ok(R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"x":1}}])");
  CHECK(t->meta.hta.first_event_args == 0);
  CHECK_FALSE(t->meta.hta.rank.has_value());
}

TEST_CASE("args blocks: HTA's rank regex finds the first match at any offset, past decoys") {
  for (size_t pad = 0; pad < 80; ++pad) {
    std::string decoys = R"("rank":3, "rank": x, "rankk": 5, ")" + std::string(pad, 'r') + R"(": 1)";
    auto s = test::load_ok(R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{)" + decoys +
                           R"(, "n": {"rank": 12}, "m": {"rank": 13}}}]})");
    INFO("pad " << pad);
    CHECK(s->meta.hta.rank == 12);
  }
  // A number past int64 is no rank (found by fuzzing: the digits overflowed); the largest is one.
  for (auto [digits, rank] : {std::pair<std::string, std::optional<int64_t>>{"9223372036854775807", INT64_MAX},
                              {"9223372036854775808", std::nullopt},
                              {"1015997088676608442123", std::nullopt}}) {
    auto s = test::load_ok(R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"rank": )" +
                           digits + "}}]}");
    CHECK(s->meta.hta.rank == rank);
  }
}

TEST_CASE("args blocks: a snapshot stores the compressed blocks; a damaged block is named when decoded") {
  auto s = test::load_ok(many_args_trace(10000));
  std::string good = snapshot_bytes(*s);
  LoadResult r = read_snapshot_bytes(good, "s");
  REQUIRE(r.ok());
  check_every_slice_args(*r.store, 10000);
  auto [offset, size] = arg_blocks_section(good);
  CHECK(size == s->args_blocks().stored_bytes() - s->args_blocks().open_text().size() +
                    ArgsBlocks::compress(s->args_blocks().open_text()).size());
  CHECK(size < s->args_blocks().size() / 3);

  SUBCASE("damage caught by the section checksum") {
    std::string bad = good;
    bad[offset + size / 2] ^= 0x20;
    LoadResult damaged = read_snapshot_bytes(bad, "s");
    REQUIRE_FALSE(damaged.ok());
    CHECK(damaged.error.message.find("arg blocks section checksum mismatch") != std::string::npos);
  }
  SUBCASE("resealed damage inside a frame: that block's args read as empty, with an error naming it") {
    std::string bad = good;
    bad[offset + size / 2] ^= 0x20;
    reseal_snapshot(bad);
    LoadResult damaged = read_snapshot_bytes(bad, "s");
    REQUIRE(damaged.ok());  // frames are checked when decoded, not at open
    const TraceStore& d = *damaged.store;
    size_t empty = 0, same = 0;
    for (uint32_t row = 0; row < d.args_table().size(); ++row) {
      std::string_view text = d.args_json(row);
      if (text.empty()) ++empty;
      else if (text == s->args_json(row)) ++same;
    }
    CHECK(empty > 0);
    CHECK(empty + same == d.args_table().size());
    CHECK(d.args_blocks().error().find("does not decompress") != std::string::npos);
  }
  SUBCASE("a frame header that disagrees with the block table is refused at open") {
    std::string bad = good;
    bad[offset + 5] ^= 0x01;  // the frame header's content size
    reseal_snapshot(bad);
    LoadResult damaged = read_snapshot_bytes(bad, "s");
    if (!damaged.ok()) {
      CHECK(damaged.error.message.find("arg blocks") != std::string::npos);
    } else {
      for (uint32_t row = 0; row < damaged.store->args_table().size(); ++row) (void)damaged.store->decode_args(row);
    }
  }
}

}  // namespace sl

namespace sl {
namespace {

// The text a record of these fields must read as: what the loaders wrote as JSON before.
struct ExpectedText {
  std::string text = "{";
  void field(std::string_view key) {
    if (text.size() > 1) text += ',';
    append_json_string(text, key);
    text += ':';
  }
  void number(std::string_view key, int64_t v) { field(key), text += std::to_string(v); }
};

TEST_CASE("args blocks: fields given as records read as the same JSON text, across blocks") {
  ArgsBlocks b;
  uint8_t id = b.key("id"), grid = b.key("grid"), bw = b.key("memory bandwidth (GB/s)"), kind = b.key("kind");
  CHECK(b.key("id") == id);  // registered once
  const int64_t edges[] = {0, 1, -1, 9, 10, 99, 100, 999999, 1000000, INT64_MAX, INT64_MIN, INT64_MIN + 1,
                           -10, -9, 4294967295, 1099511627776, 999999999999999999, 1000000000000000000};
  std::vector<std::pair<ArgsRange, std::string>> added;
  for (size_t i = 0; i < 40000; ++i) {
    ExpectedText e;
    b.begin_record();
    int64_t v = i < std::size(edges) ? edges[i] : int64_t(i * 2654435761u) - int64_t(i % 3 ? 0 : 1) * int64_t(i) * 977;
    b.add_int(id, v), e.number("id", v);
    if (i % 2) {
      b.add_triple(grid, v, -2, int64_t(i)), e.field("grid");
      // Appended piece by piece: "[" + std::to_string(v) trips GCC 12's -Wrestrict (a false alarm).
      e.text.append("[").append(std::to_string(v)).append(",-2,").append(std::to_string(i)).append("]");
    }
    if (i % 3 == 0) {
      double r = double(i) / 7.0;
      b.add_real(bw, r), e.field("memory bandwidth (GB/s)");
      char tmp[32];
      e.text += std::string_view(tmp, size_t(std::to_chars(tmp, tmp + sizeof tmp, r).ptr - tmp));
    }
    if (i % 5 == 0) {
      std::string t = "Stream \"Sync\" " + std::to_string(i) + (i % 10 ? "" : "\n\x01");
      b.add_text(kind, t), e.field("kind");
      append_json_string(e.text, t);
    }
    e.text += '}';
    added.emplace_back(b.end_record(), e.text);
  }
  b.begin_record();
  added.emplace_back(b.end_record(), "{}");
  // The same objects appended as text give the same ranges: offsets, lengths and block breaks.
  ArgsBlocks as_text;
  for (const auto& [range, text] : added) {
    ArgsRange r = as_text.append(text);
    REQUIRE(r.offset == range.offset);
    REQUIRE(r.length == range.length);
    REQUIRE(r.block == range.block);
  }
  std::string out;
  CHECK(b.read(added.back().first, out));  // from the open block
  CHECK(out == "{}");
  b.seal();
  as_text.seal();
  REQUIRE(b.sealed().size() >= 3);
  for (const auto& [range, text] : added) {
    REQUIRE(b.read(range, out));
    REQUIRE(out == text);
  }
  CHECK(b.stored_bytes() < b.size() / 2);  // records are smaller than the text
  // The snapshot writer's view: the same zstd frames the text would have been compressed into.
  REQUIRE(b.sealed().size() == as_text.sealed().size());
  for (size_t i = 0; i < b.sealed().size(); ++i) {
    const ArgsBlocks::Block &x = b.sealed()[i], &y = as_text.sealed()[i];
    CHECK(x.start == y.start);
    CHECK(x.raw_size == y.raw_size);
    CHECK(std::string_view(x.stored, x.stored_size) == std::string_view(y.stored, y.stored_size));
  }
  CHECK(b.error().empty());
}

// The Nsight loader's way: records written by an ArgsRecordWriter into memory of its own (on a
// decoding thread) and appended with append_record, over several 4 MB chunks of records (the
// open block moved to a new chunk mid-way): the same text as the fields given one by one.
TEST_CASE("args blocks: records written elsewhere read as the same text, across record chunks") {
  ArgsBlocks by_fields, written;
  for (ArgsBlocks* b : {&by_fields, &written}) b->key("id"), b->key("grid");
  const uint8_t id = 0, grid = 1;
  std::vector<ArgsRange> ranges;
  size_t records = 0;
  char buffer[ArgsRecordWriter::kMaxIntBytes + ArgsRecordWriter::kMaxTripleBytes];
  // ~12 bytes a record: 1.2M records make ~14 MB, three chunk changes.
  for (int64_t i = 0; i < 1200000; ++i, ++records) {
    int64_t v = i * 7919 - 5000000, w = i % 11 - 5;
    by_fields.begin_record();
    by_fields.add_int(id, v);
    by_fields.add_triple(grid, w, i, -i);
    ArgsRange expected = by_fields.end_record();
    ArgsRecordWriter writer(written.key_sizes(), buffer);
    writer.add_int(id, v);
    writer.add_triple(grid, w, i, -i);
    ArgsRange got = written.append_record({buffer, writer.bytes()}, writer.fields(), writer.text_size());
    REQUIRE(got.offset == expected.offset);
    REQUIRE(got.length == expected.length);
    REQUIRE(got.block == expected.block);
    ranges.push_back(got);
  }
  CHECK(written.size() == by_fields.size());
  CHECK(written.stored_bytes() > 3 * (size_t(4) << 20));
  std::string a, b;
  for (size_t i = 0; i < ranges.size(); i += 997) {  // blocks across every chunk, the open one last
    REQUIRE(written.read(ranges[i], a));
    REQUIRE(by_fields.read(ranges[i], b));
    REQUIRE(a == b);
  }
  REQUIRE(written.read(ranges.back(), a));
  const int64_t last = int64_t(records) - 1;
  std::string expected = "{\"id\":";
  expected.append(std::to_string(last * 7919 - 5000000)).append(",\"grid\":[").append(std::to_string(last % 11 - 5));
  expected.append(",").append(std::to_string(last)).append(",").append(std::to_string(-last)).append("]}");
  CHECK(a == expected);
  written.seal(), by_fields.seal();
  REQUIRE(written.sealed().size() == by_fields.sealed().size());
  for (size_t i = 0; i < written.sealed().size(); i += 50)
    CHECK(std::string_view(written.sealed()[i].stored, written.sealed()[i].stored_size) ==
          std::string_view(by_fields.sealed()[i].stored, by_fields.sealed()[i].stored_size));
  CHECK(written.error().empty());
}

// The Nsight loader's kernels of one launch shape: a record in full now and then, the rows after
// it repeats of it with a few values replaced (ArgsBlocks::append_repeat). Each reads as the
// record in full with those values, with the same ranges and the same frames; a repeat whose
// base is not in the open block (or would start a new one) is refused, and written in full.
TEST_CASE("args blocks: a repeat of an earlier record reads as it with the replaced values") {
  ArgsBlocks full, repeats;
  for (ArgsBlocks* b : {&full, &repeats}) b->key("device"), b->key("correlation"), b->key("grid"), b->key("kind"), b->key("bw");
  enum : uint8_t { kDevice, kCorrelation, kGrid, kKind, kBandwidth };
  struct Row {
    int64_t device, correlation, grid;
    std::string kind;
    double bandwidth;
  };
  auto write = [](ArgsRecordWriter& w, const Row& r, bool correlation, bool grid, bool kind, bool bandwidth) {
    char* out;
    if (correlation) w.add_int(kCorrelation, r.correlation);
    if (grid) w.add_triple(kGrid, r.grid, 1, -r.grid);
    if (kind) {
      std::string quoted;
      append_json_string(quoted, r.kind);
      out = ArgsRecordWriter::put_varint(w.tag(kKind, ArgsRecordWriter::kText), int64_t(quoted.size()));
      std::memcpy(out, quoted.data(), quoted.size());
      w.wrote_value(out + quoted.size(), quoted.size());
    }
    if (bandwidth) {
      out = w.tag(kBandwidth, ArgsRecordWriter::kReal);
      std::memcpy(out, &r.bandwidth, sizeof r.bandwidth);
      w.wrote_value(out + sizeof r.bandwidth, 0);  // the text is counted by `full`
    }
  };
  std::vector<std::pair<ArgsRange, uint64_t>> ranges;  // with the row
  ArgsBlocks::RecordPlace base;
  Row base_row{};
  size_t repeated = 0, refused = 0;
  char buffer[512];
  for (uint64_t i = 0; i < 150000; ++i) {
    // A repeat's row differs from its base's in the replaced fields only.
    int mode = int(i % 3);
    Row fresh{int64_t(i / 5000), int64_t(i * 977) - 3000000, int64_t(i % 13) * 100000,
              "Stream \"" + std::to_string(i % 7) + "\"", double(i % 11) / 3.0};
    Row r = base_row;
    if (i % 40 == 0) r = fresh;
    if (mode != 2) r.correlation = fresh.correlation;
    if (mode == 1) r.grid = fresh.grid;
    if (mode == 2) r.kind = fresh.kind, r.bandwidth = fresh.bandwidth;
    full.begin_record();
    full.add_int(kDevice, r.device), full.add_int(kCorrelation, r.correlation);
    full.add_triple(kGrid, r.grid, 1, -r.grid), full.add_text(kKind, r.kind), full.add_real(kBandwidth, r.bandwidth);
    ArgsRange expected = full.end_record();
    std::optional<ArgsRange> got;
    if (i % 40 != 0) {
      // Replaced: the correlation alone, the grid too, or the text and the real.
      ArgsRecordWriter w(repeats.key_sizes(), buffer);
      write(w, r, mode != 2, mode == 1, mode == 2, mode == 2);
      got = repeats.append_repeat(base, {buffer, w.bytes()}, w.fields(), expected.length);
      repeated += got.has_value();
    }
    if (!got) {
      refused += i % 40 != 0;
      ArgsRecordWriter w(repeats.key_sizes(), buffer);
      w.add_int(kDevice, r.device);
      write(w, r, true, true, true, true);
      got = repeats.append_record({buffer, w.bytes()}, w.fields(), expected.length);
      base = repeats.last_record();
      base_row = r;
    }
    REQUIRE(got->offset == expected.offset);
    REQUIRE(got->length == expected.length);
    REQUIRE(got->block == expected.block);
    ranges.emplace_back(*got, i);
  }
  CHECK(repeated > 140000);
  CHECK(refused > 10);  // a base left behind by a block break
  CHECK(repeats.stored_bytes() * 2 < full.stored_bytes());
  std::string a, b;
  for (size_t i = 0; i < ranges.size(); i += 101) {
    REQUIRE(repeats.read(ranges[i].first, a));
    REQUIRE(full.read(ranges[i].first, b));
    REQUIRE(a == b);
  }
  REQUIRE(repeats.read(ranges.back().first, a));  // the open block
  REQUIRE(full.read(ranges.back().first, b));
  CHECK(a == b);
  CHECK(a.find("\"kind\":\"Stream \\\"3\\\"\"") != std::string::npos);  // row 149999's own kind
  // Refused: a base in a sealed block, a base past the open block's records; nothing is appended.
  ArgsBlocks::RecordPlace last = repeats.last_record();
  uint64_t size = repeats.size();
  ArgsRecordWriter w(repeats.key_sizes(), buffer);
  w.add_int(kCorrelation, 5);
  CHECK_FALSE(repeats.append_repeat({last.block, last.index + 1}, {buffer, w.bytes()}, 1, 100));
  repeats.seal(), full.seal();
  CHECK_FALSE(repeats.append_repeat(last, {buffer, w.bytes()}, 1, 100));
  CHECK(repeats.size() == size);
  REQUIRE(repeats.sealed().size() == full.sealed().size());
  for (size_t i = 0; i < full.sealed().size(); ++i)
    REQUIRE(std::string_view(repeats.sealed()[i].stored, repeats.sealed()[i].stored_size) ==
            std::string_view(full.sealed()[i].stored, full.sealed()[i].stored_size));
  CHECK(repeats.error().empty());
}

// Damaged records never come from a file (they are written in memory), but a caller's mistake
// must read as an error, not as wrong text: a repeat replacing a key its base lacks.
TEST_CASE("args blocks: a repeat naming a field its base lacks reads as damaged, not as other text") {
  ArgsBlocks b;
  uint8_t device = b.key("device"), other = b.key("other");
  char buffer[64];
  ArgsRecordWriter base(b.key_sizes(), buffer);
  base.add_int(device, 1);
  b.append_record({buffer, base.bytes()}, base.fields(), base.text_size());
  ArgsRecordWriter w(b.key_sizes(), buffer);
  w.add_int(other, 2);
  std::optional<ArgsRange> r = b.append_repeat(b.last_record(), {buffer, w.bytes()}, 1, 12);
  REQUIRE(r);
  b.append("{\"x\":1}");  // seals the block of records
  std::string out;
  CHECK_FALSE(b.read(*r, out));
  CHECK(b.error().find("args block 0 has damaged records") != std::string::npos);
}

TEST_CASE("args blocks: records and text mix block by block; a snapshot of a store with records round-trips") {
  ArgsBlocks b;
  uint8_t k = b.key("k");
  ArgsRange t1 = b.append(R"({"a":1})");
  b.begin_record();
  b.add_int(k, 5);
  ArgsRange r1 = b.end_record();
  ArgsRange t2 = b.append(R"({"b":2})");
  CHECK(t1.block == 0);
  CHECK(r1.block == 1);  // a block holds text or records
  CHECK(t2.block == 2);
  CHECK(b.open_text() == R"({"b":2})");
  std::string out;
  REQUIRE(b.read(r1, out));
  CHECK(out == R"({"k":5})");
  REQUIRE(b.read(t1, out));
  CHECK(out == R"({"a":1})");
  b.begin_record();
  b.add_int(k, -7);
  ArgsRange r2 = b.end_record();
  CHECK(b.open_text() == R"({"k":-7})");  // the open block of records, as text
  REQUIRE(b.read(r2, out));
  CHECK(out == R"({"k":-7})");

  // Absorbing a later half written with the same keys (and one more) keeps both halves' text.
  ArgsBlocks later;
  uint8_t lk = later.key("k"), extra = later.key("extra");
  CHECK(lk == k);
  later.begin_record();
  later.add_int(extra, 3);
  later.add_triple(lk, 1, 2, 3);
  ArgsRange r3 = later.end_record();
  auto [offset_shift, block_shift] = b.absorb(std::move(later));
  r3.offset += offset_shift;
  r3.block += block_shift;
  REQUIRE(b.read(r3, out));
  CHECK(out == R"({"extra":3,"k":[1,2,3]})");
  REQUIRE(b.read(r2, out));
  CHECK(out == R"({"k":-7})");
  CHECK(b.key("extra") == extra);
}

}  // namespace
}  // namespace sl
