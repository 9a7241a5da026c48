// Nsight Systems SQLite exports of the corpus: the reports against independent SQL counts, a diff
// of the electsync and regsteal pair, and the timeline figure of the committed report.
#include <sqlite3.h>

#include <algorithm>

#include "core/diff/trace_diff.h"
#include "core/import/common/file_reader.h"
#include "core/import/trace_loader.h"
#include "figures/timeline_figure.h"
#include "tests/unit/import/nsys_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::nsys_test;

// The corpus reports against counts taken with plain SQL on the same file.
TEST_CASE("nsys: corpus reports match independent SQL counts") {
  if (!test::have_shared()) return;
  struct Expected {
    const char* name;
    uint64_t kernels, memcpy, api, nvtx;
  };
  for (Expected e : {Expected{"fuser_nsys_h200_electsync", 19, 1, 968, 652},
                     Expected{"fuser_nsys_h200_regsteal", 19, 1, 968, 652},
                     Expected{"fuser_nsys_h200_xent", 18, 3, 990, 13513}}) {
    CAPTURE(e.name);
    std::string path = (test::shared_dir() / "corpus" / (std::string(e.name) + ".sqlite.gz")).string();
    LoadResult r = load_trace(path);
    REQUIRE_MESSAGE(r.ok(), r.error.to_string());
    const TraceStore& s = *r.store;
    // The same numbers from SQL on the decompressed bytes.
    FileBytes bytes = read_trace_file(path, {});
    REQUIRE(bytes.buffer);
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    std::string copy(bytes.buffer->view());
    REQUIRE(sqlite3_deserialize(db, "main", reinterpret_cast<unsigned char*>(copy.data()), sqlite3_int64(copy.size()),
                                sqlite3_int64(copy.size()), SQLITE_DESERIALIZE_READONLY) == SQLITE_OK);
    auto count = [&](const char* sql) {
      sqlite3_stmt* st = nullptr;
      REQUIRE(sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK);
      REQUIRE(sqlite3_step(st) == SQLITE_ROW);
      uint64_t n = uint64_t(sqlite3_column_int64(st, 0));
      sqlite3_finalize(st);
      return n;
    };
    CHECK(count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") == e.kernels);
    CHECK(count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY") == e.memcpy);
    CHECK(count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME") == e.api);
    CHECK(count("SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60)") == e.nvtx);
    CHECK(s.kernel_count() == e.kernels);
    CHECK(count_cat(s, "gpu_memcpy") == e.memcpy);
    CHECK(count_cat(s, "cuda_runtime") + count_cat(s, "cuda_driver") == e.api);
    CHECK(count_cat(s, "user_annotation") == e.nvtx);
    CHECK(count_cat(s, "gpu_memset") == count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET"));
    CHECK(count_cat(s, "cuda_sync") == count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"));
    CHECK(s.counts.events == e.kernels + e.api + e.nvtx + count_cat(s, "gpu_memcpy") + count_cat(s, "gpu_memset") +
                                 count_cat(s, "cuda_sync"));
    // A kernel's launch is the API call with the same correlation id (in the same process).
    uint64_t linked = 0;
    for (uint32_t t = 0; t < s.tracks.size(); ++t) {
      const SliceColumns& c = s.tracks[t].slices;
      for (uint32_t i = 0; i < c.size(); ++i) {
        SliceRef k{t, i};
        if (s.cat(k) != "kernel") continue;
        SliceRef launch = s.launch_of(k);
        REQUIRE(launch.valid());
        std::string sql = "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON "
                          "r.correlationId = k.correlationId AND (r.globalTid >> 24) = (k.globalPid >> 24) JOIN "
                          "StringIds s ON s.id = r.nameId WHERE k.start = " +
                          std::to_string(s.origin_ns + s.start(k) - 0) + " - (SELECT utcEpochNs FROM "
                          "TARGET_INFO_SESSION_START_TIME)";
        sqlite3_stmt* st = nullptr;
        REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
        REQUIRE(sqlite3_step(st) == SQLITE_ROW);
        std::string api = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        CHECK(api.starts_with(std::string(s.name(launch))));
        ++linked;
      }
    }
    CHECK(linked == e.kernels);
    sqlite3_close(db);
  }
}

// The corpus pair (the same nvFuser benchmark at two commits): `diff` works on Nsight reports.
TEST_CASE("nsys: diff of the electsync and regsteal reports") {
  if (!test::have_shared()) return;
  auto load = [](const char* name) {
    LoadResult r = load_trace((test::shared_dir() / "corpus" / name).string());
    REQUIRE_MESSAGE(r.ok(), r.error.to_string());
    return std::move(r.store);
  };
  auto a = load("fuser_nsys_h200_electsync.sqlite.gz");
  auto b = load("fuser_nsys_h200_regsteal.sqlite.gz");
  diff::TraceDiff d = diff::trace_diff(*a, *b, {});
  REQUIRE(d.aligned);
  CHECK(d.aligned->matched_fraction == doctest::Approx(1.0));
  CHECK(d.ops.rows.size() == 118);
  // The nvFuser kernel the two commits generate differently: 132.511 µs → 124.702 µs.
  auto kernel = std::find_if(d.ops.rows.begin(), d.ops.rows.end(),
                             [](const diff::OpsDiffRow& r) { return r.name.starts_with("<unnamed>::nvfuser_none_f0_c0_r0_g0"); });
  REQUIRE(kernel != d.ops.rows.end());
  CHECK(kernel->control_total == 132511);
  CHECK(kernel->test_total == 124702);
  CHECK(kernel->diff_count() == 0);
}

// `render` draws an Nsight report like any trace: the committed report (a plain clone has it).
TEST_CASE("nsys: the timeline figure of a report") {
  LoadResult r = load_trace(test::test_data("fuser_nsys_h200_electsync.sqlite.gz"));
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  fig::Style style = fig::make_style(fig::FigureTheme::Paper, 1200);
  fig::Scene scene;
  fig::TimelineFigureStats stats;
  std::string error;
  REQUIRE(fig::timeline_figure(*r.store, nullptr, style, {}, scene, stats, error));
  CHECK(stats.tracks >= 2);
  auto has_text = [&](std::string_view text) {
    return std::any_of(scene.items.begin(), scene.items.end(),
                       [&](const fig::Item& i) { return i.kind == fig::Item::Text && i.text.find(text) != std::string::npos; });
  };
  CHECK(has_text("stream 7"));
  CHECK(has_text("NVIDIA H200"));
}
