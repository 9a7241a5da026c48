// Every real trace loads, and its counts equal the corpus manifest's (events, kernels, GPU
// streams, CPU threads, flows with no start or no end).
#include <fstream>
#include <map>
#include <sstream>

#include "core/import/trace_loader.h"
#include "core/report/trace_info.h"
#include "tests/unit/test_support.h"

using namespace sl;

namespace {

std::vector<std::map<std::string, std::string>> read_manifest() {
  std::ifstream in(test::shared_dir() / "corpus" / "MANIFEST.tsv");
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string cell; std::getline(hs, cell, '\t');) header.push_back(cell);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::stringstream ls(line);
    std::map<std::string, std::string> row;
    size_t i = 0;
    for (std::string cell; std::getline(ls, cell, '\t') && i < header.size(); ++i) row[header[i]] = cell;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string corpus_path(const std::string& short_name) {
  auto dir = test::shared_dir() / "corpus";
  // Multi-rank directories list files by their .json name; the corpus holds them gzipped.
  if (short_name.find('/') != std::string::npos) return (dir / (short_name + ".gz")).string();
  if (short_name.ends_with(".sqlite")) return (dir / (short_name + ".gz")).string();  // Nsight reports
  return (dir / (short_name + ".json.gz")).string();
}

}  // namespace

TEST_CASE("every corpus trace loads and matches the manifest") {
  if (!test::have_shared()) return;
  int checked = 0;
  for (auto& row : read_manifest()) {
    std::string path = corpus_path(row["short_name"]);
    if (!std::filesystem::exists(path)) continue;  // NOT COPIED rows and non-JSON exports
    CAPTURE(path);
    LoadResult r = load_trace(path);
    REQUIRE_MESSAGE(r.ok(), r.error.to_string());
    const TraceStore& s = *r.store;
    TraceSummary sum = summarize(s);
    CHECK(s.counts.events == std::stoull(row["events"]));
    CHECK(sum.kernels == std::stoull(row["gpu_kernels"]));
    CHECK(sum.gpu_streams == std::stoull(row["gpu_streams"]));
    CHECK(sum.threads == std::stoull(row["cpu_threads"]));
    CHECK(s.meta.bytes == std::stoull(row["uncompressed_bytes"]));
    // The notes say "unmatched flows s-only=N f-only=M" for traces with flows.
    const std::string& notes = row["notes"];
    if (size_t at = notes.find("s-only="); at != std::string::npos) {
      size_t f = notes.find("f-only=", at);
      REQUIRE(f != std::string::npos);
      CHECK(s.issues.count(IssueKind::FlowStartWithoutEnd) == std::stoull(notes.substr(at + 7)));
      CHECK(s.issues.count(IssueKind::FlowEndWithoutStart) == std::stoull(notes.substr(f + 7)));
    }
    // Every slice is somewhere sensible: sorted, nested inside its parent.
    for (const Track& t : s.tracks) {
      const SliceColumns& c = t.slices;
      for (size_t i = 0; i < c.size(); ++i) {
        if (i) REQUIRE(c.start[i - 1] <= c.start[i]);
        if (c.parent[i] != kNone) REQUIRE((c.start[c.parent[i]] <= c.start[i] && c.end(i) <= c.end(c.parent[i])));
      }
    }
    ++checked;
  }
  CHECK(checked >= 45);
}

TEST_CASE("repo's own real traces load without ../shared") {
  struct Expect {
    const char* file;
    uint64_t events, kernels;
  };
  for (auto [file, events, kernels] : {Expect{"kin_docs_after_fix_h100.json.gz", 75, 1},
                                       Expect{"hta_inference_rank1_oldfmt.json.gz", 54, 4},
                                       Expect{"hta_amd_mi250_minitoy.json.gz", 220, 14},
                                       Expect{"catapult_async_begin_end.json.gz", 32, 0},
                                       Expect{"catapult_flow_simple.json.gz", 10, 0},
                                       Expect{"kin_tfviewer_demo_generic.json.gz", 37, 0},
                                       Expect{"hta_cp_simple_add_input.json.gz", 1348, 79}}) {
    CAPTURE(file);
    LoadResult r = load_trace(test::test_data(file));
    REQUIRE_MESSAGE(r.ok(), r.error.to_string());
    CHECK(r.store->counts.events == events);
    CHECK(r.store->kernel_count() == kernels);
  }
}

TEST_CASE("catapult flow sample: hex-string ids bind across processes") {
  LoadResult r = load_trace(test::test_data("catapult_flow_simple.json.gz"));
  REQUIRE(r.ok());
  CHECK(r.store->flows.size() >= 2);
  for (const Flow& f : r.store->flows) {
    CHECK(f.from.valid());
    CHECK(f.to.valid());
  }
}
