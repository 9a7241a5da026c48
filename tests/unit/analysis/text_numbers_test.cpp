// Numbers in text tables say what they are (core/text/format.h): shares as percentages,
// bandwidths with their unit, no bare float with four or more decimals. JSON keeps raw numbers.
#include <cctype>

#include "core/analysis/report.h"
#include "core/analysis/report_tables.h"
#include "core/text/format.h"
#include "tests/unit/test_support.h"

using namespace sl;

namespace {

// "0.9942", "0.005548", "<0.0001": a number with four or more decimals, not inside a word
// (kernel names hold "x0.0001"-like digits only inside identifiers).
std::vector<std::string> long_decimals(const std::string& text) {
  std::vector<std::string> found;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  for (size_t i = 0; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i])) || (i > 0 && word(text[i - 1]))) continue;
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j + 1 >= text.size() || text[j] != '.') continue;
    size_t k = j + 1;
    while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
    if (k - j - 1 >= 4 && (k == text.size() || !word(text[k]))) found.push_back(text.substr(i, k - i));
    i = k;
  }
  if (text.find("<0.0001") != std::string::npos) found.push_back("<0.0001");
  return found;
}

}  // namespace

TEST_CASE("human::decimal and human::bandwidth: at most three decimals, units that fit") {
  CHECK(human::decimal(0.6642) == "0.664");
  CHECK(human::decimal(2.5851) == "2.59");
  CHECK(human::decimal(0.3333333) == "0.333");  // three decimals at most, never four
  CHECK(human::decimal(36.39) == "36.4");
  CHECK(human::decimal(0.0273) == "0.027");
  CHECK(human::decimal(0.0002728) == "<0.001");
  CHECK(human::decimal(1617.79) == "1,618");
  CHECK(human::decimal(0) == "0");
  CHECK(human::bandwidth(537.1e9) == "537 GB/s");
  CHECK(human::bandwidth(0.002273e9) == "2.27 MB/s");
  CHECK(human::bandwidth(0.0006158e9) == "616 KB/s");
  CHECK(human::bandwidth(999.7e9) == "1.00 TB/s");
  CHECK(human::bandwidth(12) == "12 B/s");
}

TEST_CASE("report text on corpus traces: no bare float with four or more decimals") {
  if (!test::have_shared()) return;
  // Idle ratios and shares (0.9942, 0.005548), memory bandwidth (0.001202), queue lengths,
  // utilization and HDBI: each trace has some of them.
  for (const char* name : {"hta_trace_diff_control_a100.json.gz", "tl_mi300_bert_small.json.gz", "hta_cp_simple_add_input.json.gz",
                           "tl_vllm_graph_exec_full.json.gz"}) {
    LoadResult loaded = load_trace((test::shared_dir() / "corpus" / name).string());
    REQUIRE(loaded.ok());
    analysis::ReportOptions options;
    options.explain = true;  // the ledger's share column too
    analysis::Report report = analysis::run_report(*loaded.store, options);
    std::vector<analysis::Table> tables = analysis::report_tables(report);
    std::string text = analysis::render_text(report, tables, {100000, true});
    INFO(name);
    CHECK(long_decimals(text) == std::vector<std::string>{});
    CHECK(text.find("== idle_breakdown ==") != std::string::npos);
    // JSON keeps the raw fraction: the same ratios, unrounded.
    std::string json = analysis::render_json(report, tables, "");
    CHECK_FALSE(long_decimals(json).empty());
  }
}
