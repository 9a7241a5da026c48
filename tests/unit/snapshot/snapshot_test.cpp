// Snapshot files (core/snapshot/snapshot.h): a round trip gives the same `info`, `report` and args as the
// JSON load; a damaged snapshot gives a clear error with a byte offset, never a crash.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/analysis/report.h"
#include "core/analysis/report_tables.h"
#include "core/import/trace_loader.h"
#include "core/report/trace_info.h"
#include "core/snapshot/snapshot.h"
#include "tests/unit/test_support.h"

namespace sl {
namespace {

std::string report_json(const TraceStore& store, analysis::Mode mode = analysis::Mode::Sightline) {
  analysis::ReportOptions options;
  options.table.mode = mode;
  analysis::Report report = analysis::run_report(store, options);
  return analysis::render_json(report, analysis::report_tables(report), info_json(store));
}

// Everything a user can see of both stores must agree.
void check_same(const TraceStore& json, const TraceStore& snap) {
  CHECK(info_json(snap) == info_json(json));
  CHECK(report_json(snap) == report_json(json));
  CHECK(report_json(snap, analysis::Mode::Hta) == report_json(json, analysis::Mode::Hta));
  REQUIRE(snap.args_table().size() == json.args_table().size());
  size_t differing = 0;
  for (uint32_t row = 0; row < json.args_table().size(); ++row)
    if (snap.decode_args(row) != json.decode_args(row)) ++differing;
  CHECK(differing == 0);
  CHECK(snap.meta.hta.from_text == json.meta.hta.from_text);
  CHECK(snap.meta.hta.rank == json.meta.hta.rank);
  CHECK(snap.meta.hta.first_event_args == json.meta.hta.first_event_args);
  CHECK(snap.slice_count() == json.slice_count());
  CHECK(snap.launch_link_count() == json.launch_link_count());
  CHECK(snap.strings.size() == json.strings.size());
}

void round_trip(const std::filesystem::path& path) {
  INFO(path.string());
  LoadResult json = load_trace(path.string());
  REQUIRE(json.ok());
  std::string bytes = snapshot_bytes(*json.store);
  LoadResult snap = read_snapshot_bytes(bytes, "snap");
  INFO(snap.error.to_string());
  REQUIRE(snap.ok());
  check_same(*json.store, *snap.store);
  // Writing the read store again gives the same bytes (nothing lost or reordered).
  CHECK(snapshot_bytes(*snap.store) == bytes);
}

std::vector<std::filesystem::path> traces_in(const std::filesystem::path& dir, std::string_view suffix) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().string().ends_with(suffix)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string small_snapshot() {
  auto store = test::load_ok(R"({"traceEvents":[
    {"ph":"X","name":"step","pid":1,"tid":2,"ts":10,"dur":100,"args":{"a":1,"b":"x"}},
    {"ph":"X","name":"child","pid":1,"tid":2,"ts":20,"dur":10},
    {"ph":"X","name":"k","cat":"kernel","pid":0,"tid":7,"ts":30,"dur":5,"args":{"correlation":9,"stream":7,"device":0}},
    {"ph":"X","name":"cudaLaunchKernel","cat":"cuda_runtime","pid":1,"tid":2,"ts":25,"dur":3,"args":{"correlation":9}},
    {"ph":"C","name":"mem","pid":1,"ts":12,"args":{"v":3}},
    {"ph":"i","name":"mark","pid":1,"tid":2,"ts":15,"s":"t"}]})");
  return snapshot_bytes(*store);
}

// Offset and size of section `id` (1-based) from a snapshot's section table.
std::pair<uint64_t, uint64_t> section_at(const std::string& bytes, uint32_t id) {
  uint64_t offset = 0, size = 0;
  std::memcpy(&offset, bytes.data() + 32 + (id - 1) * 32 + 8, 8);
  std::memcpy(&size, bytes.data() + 32 + (id - 1) * 32 + 16, 8);
  return {offset, size};
}

// A trace whose args compress to more than 4 MB (random hex text), so that the arg blocks
// section's checksum is computed on a thread of its own.
std::unique_ptr<TraceStore> store_with_large_args() {
  std::mt19937_64 random(7);
  std::string json = R"({"traceEvents":[)";
  for (int i = 0; i < 5000; ++i) {
    std::string hex;
    for (int j = 0; j < 128; ++j) {
      char word[20];
      std::snprintf(word, sizeof word, "%016llx", (unsigned long long)random());
      hex += word;
    }
    json += (i ? "," : "") + std::string(R"({"ph":"X","name":"op","pid":1,"tid":1,"ts":)") + std::to_string(i * 10) +
            R"(,"dur":5,"args":{"blob":")" + hex + R"("}})";
  }
  return test::load_ok(json + "]}");
}

}  // namespace

TEST_CASE("snapshot: every test-data trace round-trips to identical info, report and args") {
  for (const auto& path : traces_in(SIGHTLINE_TEST_DATA, ".json.gz")) round_trip(path);
  for (const auto& path : traces_in(SIGHTLINE_TEST_DATA, ".sqlite.gz")) round_trip(path);
}

TEST_CASE("snapshot: every corpus trace round-trips (needs ../shared)") {
  if (!test::have_shared()) return;
  for (const auto& path : traces_in(test::shared_dir() / "corpus", ".json.gz")) round_trip(path);
  for (const auto& path : traces_in(test::shared_dir() / "corpus", ".sqlite.gz")) round_trip(path);
  for (const auto& path : traces_in(test::shared_dir() / "corpus" / "param_dlrm_8rank", ".json.gz")) round_trip(path);
}

TEST_CASE("snapshot: a small trace keeps its values") {
  std::string bytes = small_snapshot();
  CHECK(is_snapshot_magic(bytes));
  LoadResult r = read_snapshot_bytes(bytes, "s");
  REQUIRE(r.ok());
  CHECK(r.store->slice_count() == 4);
  CHECK(r.store->launch_link_count() == 1);
  CHECK(r.store->counters.size() == 1);
  bool found = false;
  for (uint32_t row = 0; row < r.store->args_table().size(); ++row)
    for (const auto& [k, v] : r.store->decode_args(row))
      if (k == "b") found = (v == "x");
  CHECK(found);
}

TEST_CASE("snapshot: wrong magic, wrong version, truncation and flipped bytes are errors with offsets") {
  std::string good = small_snapshot();
  SUBCASE("magic") {
    std::string bad = good;
    bad[0] = 'X';
    LoadResult r = read_snapshot_bytes(bad, "s");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.message.find("wrong magic") != std::string::npos);
    CHECK(r.error.byte_offset == 0);
  }
  SUBCASE("version") {
    std::string bad = good;
    uint32_t version = kSnapshotVersion + 1;
    std::memcpy(bad.data() + 8, &version, 4);
    LoadResult r = read_snapshot_bytes(bad, "s");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.message.find("version " + std::to_string(kSnapshotVersion + 1)) != std::string::npos);
    CHECK(r.error.byte_offset == 8);
  }
  SUBCASE("older snapshots (v1: JSON text instead of arg blocks; v2: no memory section) are another version, never misread") {
    for (uint32_t version : {1u, 2u}) {
      std::string old = good;
      std::memcpy(old.data() + 8, &version, 4);
      reseal_snapshot(old);
      LoadResult r = read_snapshot_bytes(old, "s");
      REQUIRE_FALSE(r.ok());
      CHECK(r.error.message.find("snapshot format version " + std::to_string(version) +
                                 ", this build reads version 3 (convert the trace again)") != std::string::npos);
    }
  }
  SUBCASE("truncation at every section boundary, and at every byte of the header and table") {
    std::vector<size_t> cuts;
    for (size_t i = 0; i < 32 + 13 * 32; ++i) cuts.push_back(i);
    for (uint32_t s = 0; s < 13; ++s) {
      uint64_t offset = 0, size = 0;
      std::memcpy(&offset, good.data() + 32 + s * 32 + 8, 8);
      std::memcpy(&size, good.data() + 32 + s * 32 + 16, 8);
      cuts.push_back(offset);
      cuts.push_back(offset + size / 2);
      cuts.push_back(offset + size);
    }
    for (size_t cut : cuts) {
      if (cut >= good.size()) continue;
      LoadResult r = read_snapshot_bytes(std::string_view(good).substr(0, cut), "s");
      INFO("cut at " << cut);
      CHECK_FALSE(r.ok());
      CHECK_FALSE(r.error.message.empty());
      CHECK(r.error.byte_offset <= cut);
    }
  }
  SUBCASE("a flipped byte at 100 positions is caught (by a checksum or a size check)") {
    std::mt19937 random(15);
    for (int i = 0; i < 100; ++i) {
      size_t at = std::uniform_int_distribution<size_t>(0, good.size() - 1)(random);
      std::string bad = good;
      bad[at] = char(bad[at] ^ 0x5a);
      LoadResult r = read_snapshot_bytes(bad, "s");
      INFO("flipped byte " << at);
      // Alignment padding between sections is not covered by any checksum: a flip there is harmless.
      if (r.ok()) {
        CHECK(snapshot_bytes(*r.store) == good);
        continue;
      }
      CHECK(r.error.message.starts_with("bad snapshot at byte " + std::to_string(r.error.byte_offset) + ": "));
      CHECK(r.error.byte_offset < good.size());
    }
  }
}

TEST_CASE("snapshot: a damaged section that fails to parse is reported as its checksum mismatch") {
  std::string good = small_snapshot();
  auto [offset, size] = section_at(good, 5);  // tracks
  // The first column's element count (after the track's fixed fields) made huge: the column
  // would run past the section, but the checksum summed while reading names the real cause.
  std::string bad = good;
  for (uint64_t at = offset + 8; at < offset + size; at += 8) bad[at + 6] = char(0x7f);
  LoadResult r = read_snapshot_bytes(bad, "s");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error.message == "bad snapshot at byte " + std::to_string(offset) + ": tracks section checksum mismatch (corrupted)");
  CHECK(r.error.byte_offset == offset);
}

TEST_CASE("snapshot: a large snapshot read by two threads rejects damage in either group, the first group's first") {
  auto store = store_with_large_args();
  std::string good = snapshot_bytes(*store);
  auto [offset, size] = section_at(good, 12);
  REQUIRE(size > (4u << 20));  // large enough for its own thread
  auto path = (std::filesystem::temp_directory_path() / ("sightline_snapshot_blocks_" + std::to_string(::getpid()) + ".slsnap")).string();
  auto open_file = [&](const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
    return load_snapshot(path);
  };
  LoadResult ok = open_file(good);
  REQUIRE(ok.ok());
  CHECK(snapshot_bytes(*ok.store) == good);
  CHECK(ok.store->decode_args(4999) == store->decode_args(4999));
  std::string bad = good;
  bad[offset + size / 2] ^= 1;
  std::string expected = "bad snapshot at byte " + std::to_string(offset) + ": arg blocks section checksum mismatch (corrupted)";
  LoadResult from_file = open_file(bad);
  CHECK(from_file.error.message == expected);
  CHECK_FALSE(from_file.ok());
  LoadResult from_memory = read_snapshot_bytes(bad, path);
  CHECK(from_memory.error.message == expected);
  CHECK_FALSE(from_memory.ok());
  // Damage in both groups of sections (read at once): the first group's error is the one given,
  // as a sequential read would have met it first.
  auto [tracks_at, tracks_size] = section_at(good, 5);
  bad[tracks_at + tracks_size / 2] ^= 1;
  LoadResult both = open_file(bad);
  CHECK(both.error.message == "bad snapshot at byte " + std::to_string(tracks_at) + ": tracks section checksum mismatch (corrupted)");
  std::filesystem::remove(path);
}

TEST_CASE("snapshot: each rule of the consistency pass over slice rows rejects a bad value, and only that") {
  // Written from a store changed after loading (the writer trusts its store), read back with
  // valid checksums: the reader's one-pass check must catch each rule, and name it.
  auto load = [] { return test::load_ok(R"({"traceEvents":[
    {"ph":"X","name":"step","pid":1,"tid":2,"ts":10,"dur":100,"args":{"a":1}},
    {"ph":"X","name":"child","pid":1,"tid":2,"ts":20,"dur":10}]})"); };
  struct Case {
    const char* what;
    std::function<void(TraceStore&, SliceColumns&, Track&)> damage;
  };
  constexpr TimeNs kLimit = TimeNs(1) << 62;
  std::vector<Case> cases = {
      {"string id out of range", [](TraceStore& s, SliceColumns& c, Track&) { c.name[1] = StringId(s.strings.size()); }},
      {"string id out of range", [](TraceStore& s, SliceColumns& c, Track&) { c.cat[0] = StringId(s.strings.size()); }},
      {"args row out of range", [](TraceStore& s, SliceColumns& c, Track&) { c.args[1] = uint32_t(s.args_table().size()); }},
      {"parent row out of range", [](TraceStore&, SliceColumns& c, Track&) { c.parent[1] = 1; }},
      {"parent row out of range", [](TraceStore&, SliceColumns& c, Track&) { c.parent[0] = 1; }},
      {"slice time out of range", [](TraceStore&, SliceColumns& c, Track&) { c.dur[1] = -1; }},
      {"slice time out of range", [](TraceStore&, SliceColumns& c, Track&) { c.start[0] = -kLimit - 1; }},
      {"slice time out of range", [=](TraceStore&, SliceColumns& c, Track&) { c.dur[0] = kLimit - c.start[0] + 1; }},
      {"slice time out of range", [](TraceStore&, SliceColumns& c, Track&) { c.dur[0] = INT64_MAX; }},
      {"slice time out of range", [=](TraceStore&, SliceColumns&, Track& t) { t.max_end_prefix[1] = kLimit + 1; }},
      {"correlation row out of range", [](TraceStore& s, SliceColumns& c, Track&) { c.corr[0] = uint32_t(s.correlations.size()); }},
      {"lane group out of range", [](TraceStore&, SliceColumns& c, Track& t) { c.lane[1] = uint16_t(t.lane_depths.size()); }},
      {nullptr, [=](TraceStore&, SliceColumns& c, Track&) { c.dur[0] = kLimit - c.start[0]; }},  // ends at the limit: fine
      {nullptr, [](TraceStore&, SliceColumns& c, Track&) { c.args[1] = kNone, c.corr[1] = kNone; }},
  };
  for (const Case& k : cases) {
    auto store = load();
    Track* track = nullptr;
    for (Track& t : store->tracks)
      if (t.slices.size() == 2) track = &t;
    REQUIRE(track);
    k.damage(*store, track->slices, *track);
    LoadResult r = read_snapshot_bytes(snapshot_bytes(*store), "s");
    INFO(k.what);
    if (!k.what) {
      CHECK(r.ok());
      continue;
    }
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.message.find(std::string("inconsistent snapshot: ") + k.what) != std::string::npos);
  }
}

TEST_CASE("snapshot: resealed damage (checksums recomputed) is caught by the consistency checks or harmless") {
  std::string good = small_snapshot();
  std::mt19937 random(42);
  int rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string bad = good;
    size_t at = std::uniform_int_distribution<size_t>(32 + 13 * 32, good.size() - 1)(random);
    bad[at] = char(std::uniform_int_distribution<int>(0, 255)(random));
    reseal_snapshot(bad);
    LoadResult r = read_snapshot_bytes(bad, "s");
    INFO("byte " << at);
    if (!r.ok()) {
      ++rejected;
      // At most the file's end: a column of the last section (memory) that runs past is reported there.
      CHECK(r.error.byte_offset <= good.size());
      continue;
    }
    (void)info_json(*r.store);  // a store that passed the checks answers without crashing
    (void)report_json(*r.store);
  }
  CHECK(rejected > 0);
}

TEST_CASE("snapshot: load_trace opens a snapshot file by its magic; writing is atomic") {
  auto dir = std::filesystem::temp_directory_path() / "sightline_snapshot_test";
  std::filesystem::create_directories(dir);
  auto path = (dir / "t.slsnap").string();
  LoadResult json = load_trace(std::string(SIGHTLINE_TEST_DATA) + "/catapult_flow_simple.json.gz");
  REQUIRE(json.ok());
  CHECK(write_snapshot(*json.store, path).empty());
  CHECK(is_snapshot_file(path));
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  CHECK(files == 1);  // no temporary file left
  LoadResult snap = load_trace(path);
  REQUIRE(snap.ok());
  check_same(*json.store, *snap.store);
  CHECK_FALSE(write_snapshot(*json.store, (dir / "missing" / "t.slsnap").string()).empty());
  std::filesystem::remove_all(dir);
}

}  // namespace sl

namespace sl {

// A full disk (test::with_file_size_limit): the error names the file and no partial or
// temporary file is left behind; an existing snapshot stays intact.
TEST_CASE("snapshot: a write that fails part-way (a full disk) leaves no partial file") {
  LoadResult json = load_trace(std::string(SIGHTLINE_TEST_DATA) + "/hta_cp_simple_add_input.json.gz");
  REQUIRE(json.ok());
  std::string bytes = snapshot_bytes(*json.store);
  REQUIRE(bytes.size() > 64 * 1024);
  auto dir = std::filesystem::temp_directory_path() / ("sightline_full_disk_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "t.slsnap").string();
  std::string old = small_snapshot();
  REQUIRE(write_snapshot(*read_snapshot_bytes(old, "old").store, path).empty());

  std::string error = test::with_file_size_limit(16 * 1024, [&] { return write_snapshot(*json.store, path); });

  CHECK(error.starts_with("cannot write " + path + ".tmp."));
  CHECK(error.find("File too large") != std::string::npos);
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir)) left.push_back(e.path().filename().string());
  CHECK(left == std::vector<std::string>{"t.slsnap"});
  LoadResult still = load_snapshot(path);  // the previous snapshot, untouched
  REQUIRE(still.ok());
  CHECK(snapshot_bytes(*still.store) == old);
  std::filesystem::remove_all(dir);
}

}  // namespace sl

namespace sl {

// Issue 15's corruption bullet on the path a user takes: a damaged snapshot FILE opened with
// load_trace (mapped, its size from the file system; the large one read by two threads), not
// bytes in memory. Every cut at and next to a section boundary, 100 flipped bytes and another
// version give an error naming the file, never a store and never a crash.
TEST_CASE("snapshot: damaged snapshot files opened by load_trace are errors, in both the one- and two-thread reads") {
  auto dir = std::filesystem::temp_directory_path() / ("sightline_damaged_files_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "damaged.slsnap").string();
  auto open_bytes = [&](std::string_view bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size()));
    return load_trace(path);
  };
  LoadResult small_json = load_trace(std::string(SIGHTLINE_TEST_DATA) + "/hta_cp_simple_add_input.json.gz");
  REQUIRE(small_json.ok());
  for (const std::string& good : {snapshot_bytes(*small_json.store), snapshot_bytes(*store_with_large_args())}) {
    INFO("snapshot of " << good.size() << " bytes");
    REQUIRE(open_bytes(good).ok());
    size_t rejected = 0, cuts = 0;
    for (uint32_t id = 1; id <= 12; ++id) {
      auto [offset, size] = section_at(good, id);
      for (uint64_t cut : {offset - 1, offset, offset + 1, offset + size - 1, offset + size, offset + size + 1}) {
        if (cut >= good.size()) continue;
        ++cuts;
        LoadResult r = open_bytes(std::string_view(good).substr(0, cut));
        INFO("cut at " << cut << " (section " << id << ")");
        CHECK_FALSE(r.ok());
        CHECK(r.error.to_string().starts_with(path + ": "));
        rejected += !r.ok();
      }
    }
    CHECK(cuts > 50);
    CHECK(rejected == cuts);
    std::mt19937 random(good.size());
    size_t flips_rejected = 0;
    for (int i = 0; i < 100; ++i) {
      size_t at = std::uniform_int_distribution<size_t>(0, good.size() - 1)(random);
      std::string bad = good;
      bad[at] = char(bad[at] ^ (1 << (i % 8)));
      LoadResult r = open_bytes(bad);
      INFO("flipped byte " << at);
      if (r.ok()) {  // only the padding between sections carries no checksum
        CHECK(snapshot_bytes(*r.store) == good);
        continue;
      }
      ++flips_rejected;
      CHECK(r.error.to_string().starts_with(path + ": bad snapshot at byte "));
    }
    CHECK(flips_rejected > 90);
    std::string other = good;
    uint32_t version = kSnapshotVersion + 7;
    std::memcpy(other.data() + 8, &version, 4);
    LoadResult r = open_bytes(other);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.message.find("snapshot format version " + std::to_string(version) + ", this build reads version " +
                               std::to_string(kSnapshotVersion)) != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace sl
