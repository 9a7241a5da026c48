// Distributed jobs: matching collectives and send/recv pairs across ranks, stragglers and clock
// offsets between hosts, on hand-made jobs with known answers.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "core/analysis/collectives.h"
#include "core/analysis/report_tables.h"
#include "tests/unit/analysis/analysis_test_util.h"
#include "tests/unit/job/job_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::analysis;
using namespace sl::job_test;
using sl::analysis::test::kernel;
using sl::analysis::test::launch;
using sl::analysis::test::trace;
using sl::analysis::test::usec;
using sl::analysis::test::X;

namespace {

std::vector<RankInput> inputs_of(const std::vector<std::unique_ptr<TraceStore>>& stores) {
  std::vector<RankInput> in;
  for (size_t r = 0; r < stores.size(); ++r) in.push_back({int64_t(r), stores[r].get()});
  return in;
}

std::vector<std::unique_ptr<TraceStore>> load_ranks(const std::vector<std::string>& texts) {
  std::vector<std::unique_ptr<TraceStore>> out;
  for (const auto& t : texts) out.push_back(analysis::test::load(t));
  return out;
}

const CollectiveArrival& arrival_of(const CollectiveInstance& in, int64_t rank) {
  auto it = std::find_if(in.arrivals.begin(), in.arrivals.end(), [&](auto& a) { return a.rank == rank; });
  REQUIRE(it != in.arrivals.end());
  return *it;
}

}  // namespace

TEST_CASE("collectives: rank 2 arrives 3 ms late at every all-reduce after data loading") {
  auto stores = load_ranks({straggler_rank(0), straggler_rank(1), straggler_rank(2), straggler_rank(3)});
  CollectiveAnalysis a = analyze_collectives(inputs_of(stores));
  CHECK_FALSE(a.aligned);
  for (TimeNs o : a.offsets) CHECK(o == 0);
  REQUIRE(a.instances.size() == 4);
  for (size_t k = 0; k < 4; ++k) {
    const CollectiveInstance& in = a.instances[k];
    CAPTURE(k);
    CHECK(in.name == "AllReduce");
    CHECK(in.group == "0");
    CHECK(in.instance == k);
    CHECK(in.arrivals.size() == 4);
    CHECK(in.missing.empty());
    CHECK(in.last_rank == 2);
    CHECK(in.skew == usec(3000));
    CHECK(in.last_cause == "data_loading");
    for (int64_t r : {0, 1, 3}) CHECK(arrival_of(in, r).wait == usec(3000));
    CHECK(arrival_of(in, 2).wait == 0);
    // Job clock: zero at the earliest rank start (the warm-up launch at 998500 µs).
    CHECK(arrival_of(in, 0).arrival == usec(1500 + 5000 * int64_t(k) + 1100));
    CHECK(arrival_of(in, 2).arrival == usec(1500 + 5000 * int64_t(k) + 4100));
    CHECK(arrival_of(in, 2).cpu_arrival == usec(1500 + 5000 * int64_t(k) + 4025));
    CHECK(arrival_of(in, 1).end == usec(1500 + 5000 * int64_t(k) + 4600));
  }
  REQUIRE(a.stragglers.size() == 4);
  const StragglerRow& top = a.stragglers[0];
  CHECK(top.rank == 2);
  CHECK(top.late_count == 4);
  CHECK(top.delay_caused == usec(4 * 3 * 3000));
  CHECK(top.wait == 0);
  CHECK(top.top_cause == "data_loading");
  CHECK(top.iterations == 4);
  REQUIRE(top.iteration_mean);
  CHECK(*top.iteration_mean == doctest::Approx(4900e3));
  CHECK(top.collectives == 4);
  CHECK(top.compute == usec(5 * 1000));        // warm-up + 4 gemms
  CHECK(top.communication == usec(4 * 500));   // it arrives last: its all-reduces are short
  CHECK(top.idle == usec(21000 - 7000));       // GPU span 998.6 ms .. 1019.6 ms
  CHECK(a.stragglers[1].communication == usec(4 * 3500));
  CHECK(a.stragglers[1].idle == usec(21000 - 19000));
  for (size_t i = 1; i < 4; ++i) {
    CHECK(a.stragglers[i].late_count == 0);
    CHECK(a.stragglers[i].delay_caused == 0);
    CHECK(a.stragglers[i].wait == usec(4 * 3000));
    CHECK(a.stragglers[i].top_cause.empty());
  }
  // The report tables: one row per rank and instance, then the straggler ranking.
  std::vector<Table> tables = collective_tables(a);
  REQUIRE(tables.size() == 3);
  CHECK(tables[0].name == "collectives");
  CHECK(tables[0].rows.size() == 16);
  CHECK(tables[1].name == "stragglers");
  CHECK(cell_json(tables[1].rows[0][2]) == "36000");
  CHECK(cell_json(tables[1].rows[0][5]) == "\"data_loading\"");
}

TEST_CASE("collectives: two process groups match separately") {
  std::vector<std::string> texts;
  for (int rank = 0; rank < 4; ++rank) {
    std::vector<std::string> ev;
    int corr = 0;
    // Everyone: 2 all-reduces in group "0"; pairs {0,1} and {2,3}: 3 all-gathers in groups "1"/"2".
    for (int k = 0; k < 2; ++k) add_collective(ev, corr, 1000 + 10000 * k + 10 * rank, 1000 + 10000 * k + 500, "0", "[0, 1, 2, 3]");
    std::string pair_group = rank < 2 ? "1" : "2", pair_ranks = rank < 2 ? "[0, 1]" : "[2, 3]";
    for (int k = 0; k < 3; ++k)
      add_collective(ev, corr, 3000 + 2000 * k + (rank % 2) * 40, 3000 + 2000 * k + 300, pair_group, pair_ranks,
                     "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)");
    texts.push_back(trace(ev, dist(rank)));
  }
  auto stores = load_ranks(texts);
  CollectiveAnalysis a = analyze_collectives(inputs_of(stores));
  REQUIRE(a.instances.size() == 8);
  std::map<std::string, int> per_group;
  for (const auto& in : a.instances) {
    ++per_group[in.group + "/" + in.name];
    CHECK(in.missing.empty());
    if (in.group == "0") {
      CHECK(in.arrivals.size() == 4);
      CHECK(in.last_rank == 3);
      CHECK(in.skew == usec(30));
    } else {
      REQUIRE(in.arrivals.size() == 2);
      CHECK(in.arrivals[0].rank == (in.group == "1" ? 0 : 2));
      CHECK(in.last_rank == (in.group == "1" ? 1 : 3));
      CHECK(in.skew == usec(40));
      CHECK(in.arrivals[0].wait == usec(40));
    }
  }
  CHECK(per_group["0/AllReduce"] == 2);
  CHECK(per_group["1/AllGather"] == 3);
  CHECK(per_group["2/AllGather"] == 3);
}

TEST_CASE("collectives: a rank missing a collective is listed as missing, later instances stay matched") {
  std::vector<std::string> texts;
  for (int rank = 0; rank < 4; ++rank) {
    std::vector<std::string> ev;
    int corr = 0;
    for (int k = 0; k < 4; ++k) {
      if (rank == 3 && k == 2) continue;  // rank 3 never calls the third all-reduce
      add_collective(ev, corr, 1000 + 5000 * k + 20 * rank, 1000 + 5000 * k + 800);
    }
    texts.push_back(trace(ev, dist(rank)));
  }
  auto stores = load_ranks(texts);
  CollectiveAnalysis a = analyze_collectives(inputs_of(stores));
  REQUIRE(a.instances.size() == 4);
  for (size_t k = 0; k < 4; ++k) {
    const CollectiveInstance& in = a.instances[k];
    CAPTURE(k);
    CHECK(in.group == "default");
    CHECK(in.instance == k);
    if (k == 2) {
      CHECK(in.arrivals.size() == 3);
      CHECK(in.missing == std::vector<int64_t>{3});
      CHECK(in.last_rank == 2);
    } else {
      CHECK(in.arrivals.size() == 4);
      CHECK(in.missing.empty());
      CHECK(in.last_rank == 3);
      CHECK(in.skew == usec(60));
    }
  }
  CHECK_FALSE(a.notes.empty());
}

TEST_CASE("collectives: the Seq arg matches instances even when a rank missed one") {
  std::vector<std::string> texts;
  for (int rank = 0; rank < 3; ++rank) {
    std::vector<std::string> ev;
    int corr = 0;
    for (int seq = 0; seq < 3; ++seq) {
      if (rank == 1 && seq == 1) continue;
      double start = 1000 + 3000 * seq + 10 * rank;
      std::string args = R"({"Process Group Name": "7", "Seq": )" + std::to_string(seq) + "}";
      ev.push_back(X("cpu_op", "record_param_comms", 1, 1, us_text(start - 75), "20", args));
      ev.push_back(launch("cudaLaunchKernel", us_text(start - 70), "5", ++corr));
      ev.push_back(kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", 7,
                          us_text(start), us_text(1000 + 3000 * seq + 500 - start), corr));
    }
    texts.push_back(trace(ev, dist(rank, 3)));
  }
  auto stores = load_ranks(texts);
  CollectiveAnalysis a = analyze_collectives(inputs_of(stores));
  REQUIRE(a.instances.size() == 3);
  CHECK(a.notes.empty());  // no clock-based matching was needed
  CHECK(a.instances[1].arrivals.size() == 2);
  CHECK(a.instances[1].missing == std::vector<int64_t>{1});
  CHECK(a.instances[2].arrivals.size() == 3);
  CHECK(a.instances[2].group == "7");
  CHECK(a.instances[2].skew == usec(20));
  CHECK(arrival_of(a.instances[2], 0).wait == usec(20));
}

// One NCCL send or recv on (pid 1, tid 1) and stream 7, with `args` on its record_param_comms.
void add_p2p(std::vector<std::string>& ev, int& corr, double start, double end, const std::string& args) {
  ev.push_back(X("cpu_op", "record_param_comms", 1, 1, us_text(start - 75), "20", args));
  ev.push_back(launch("cudaLaunchKernel", us_text(start - 70), "5", ++corr));
  ev.push_back(kernel("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", 7, us_text(start), us_text(end - start), corr));
}

TEST_CASE("collectives: send/recv pair by (sender, receiver) in order, in a 4-rank pipeline") {
  // Forward 0->1->2->3 (two micro-batches), backward 3->2->1->0. Ranks 1 and 2 interleave
  // receives from one neighbour with sends to the other, so their k-th send/recv kernels are
  // different transfers: matching by order (or by name) would pair the wrong ranks.
  struct Transfer {
    int src, dst;
    double send_start, recv_start, end;  // µs; both kernels end together
  };
  const std::vector<Transfer> transfers = {
      {0, 1, 100, 130, 200},  {1, 2, 250, 210, 350}, {0, 1, 400, 380, 500},  {2, 3, 400, 390, 480},
      {1, 2, 550, 600, 650},  {2, 3, 700, 760, 800}, {3, 2, 900, 850, 1000}, {1, 0, 1200, 1000, 1300},
      {2, 1, 1050, 1100, 1150}};
  std::vector<std::vector<std::pair<double, std::string>>> ops(4);  // per rank: (start, event args)
  for (const Transfer& t : transfers) {
    const std::string group = R"("Process Group Name": "0", "Process Group Ranks": "[0, 1, 2, 3]")";
    // Rank 3 writes a bare `peer` (direction from the name); the others PyTorch's Src/Dst Rank.
    auto args = [&](int rank, bool send) {
      std::string peer = std::to_string(send ? t.dst : t.src);
      std::string key = rank == 3 ? "peer" : send ? "Dst Rank" : "Src Rank";
      return "{" + group + R"(, "Collective name": ")" + (send ? "send" : "recv") + R"(", ")" + key + "\": " + peer + "}";
    };
    ops[size_t(t.src)].push_back({t.send_start, args(t.src, true)});
    ops[size_t(t.dst)].push_back({t.recv_start, args(t.dst, false)});
  }
  std::vector<std::string> texts;
  for (int rank = 0; rank < 4; ++rank) {
    std::sort(ops[size_t(rank)].begin(), ops[size_t(rank)].end());
    std::vector<std::string> ev;
    int corr = 0;
    for (auto& [start, args] : ops[size_t(rank)]) {
      auto t = std::find_if(transfers.begin(), transfers.end(), [&](const Transfer& x) {
        return (x.src == rank && x.send_start == start) || (x.dst == rank && x.recv_start == start);
      });
      add_p2p(ev, corr, start, t->end, args);
    }
    texts.push_back(trace(ev, dist(rank)));
  }
  auto stores = load_ranks(texts);
  CollectiveAnalysis a = analyze_collectives(inputs_of(stores));
  CHECK_FALSE(a.aligned);
  REQUIRE(a.instances.size() == transfers.size());
  // Instances by first arrival: the order of `transfers` above.
  std::map<std::string, uint64_t> seen;
  for (size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& t = transfers[i];
    const CollectiveInstance& in = a.instances[i];
    CAPTURE(i);
    std::string name = "send/recv " + std::to_string(t.src) + "->" + std::to_string(t.dst);
    CHECK(in.name == name);
    CHECK(in.group == "0");
    CHECK(in.instance == seen[name]++);
    REQUIRE(in.arrivals.size() == 2);
    CHECK(in.missing.empty());
    const CollectiveArrival& sender = arrival_of(in, t.src);
    const CollectiveArrival& receiver = arrival_of(in, t.dst);
    CHECK(sender.arrival + a.origin_ns == usec(int64_t(t.send_start)));
    CHECK(receiver.arrival + a.origin_ns == usec(int64_t(t.recv_start)));
    CHECK(sender.end + a.origin_ns == usec(int64_t(t.end)));
    CHECK(receiver.end + a.origin_ns == usec(int64_t(t.end)));
    double late = std::max(t.send_start, t.recv_start), early = std::min(t.send_start, t.recv_start);
    CHECK(in.last_rank == (t.send_start > t.recv_start ? t.src : t.dst));
    CHECK(in.skew == usec(int64_t(late - early)));
    CHECK(sender.wait == usec(int64_t(late - t.send_start)));
    CHECK(receiver.wait == usec(int64_t(late - t.recv_start)));
  }
  // Stragglers: rank 1 was last 4 times (the others waited 30 + 40 + 50 + 200 µs), rank 3 twice
  // (60 + 50), rank 2 twice (50 + 10), rank 0 once (20).
  REQUIRE(a.stragglers.size() == 4);
  const std::vector<std::tuple<int64_t, uint64_t, int64_t, int64_t>> expected = {
      {1, 4, 320, 70}, {3, 2, 110, 10}, {2, 2, 60, 200}, {0, 1, 20, 230}};  // rank, late, caused, own wait
  for (size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    auto [rank, late, caused, wait] = expected[i];
    CHECK(a.stragglers[i].rank == rank);
    CHECK(a.stragglers[i].late_count == late);
    CHECK(a.stragglers[i].delay_caused == usec(caused));
    CHECK(a.stragglers[i].wait == usec(wait));
  }
}

TEST_CASE("collectives: a send whose receiver missed it is listed with the receiver missing") {
  // Rank 0 sends to rank 1 three times; rank 1's trace starts after the first transfer.
  std::vector<std::string> ev0, ev1;
  int c0 = 0, c1 = 0;
  const std::string send = R"({"Collective name": "send", "Dst Rank": 1})";
  const std::string recv = R"({"Collective name": "recv", "Src Rank": 0})";
  for (int k = 0; k < 3; ++k) add_p2p(ev0, c0, 1000 + 1000 * k, 1000 + 1000 * k + 300, send);
  for (int k = 1; k < 3; ++k) add_p2p(ev1, c1, 1000 + 1000 * k + 100, 1000 + 1000 * k + 300, recv);
  auto stores = load_ranks({trace(ev0, dist(0, 2)), trace(ev1, dist(1, 2))});
  CollectiveAnalysis a = analyze_collectives(inputs_of(stores));
  REQUIRE(a.instances.size() == 3);
  CHECK(a.instances[0].name == "send/recv 0->1");
  CHECK(a.instances[0].group == "default");
  REQUIRE(a.instances[0].arrivals.size() == 1);
  CHECK(a.instances[0].missing == std::vector<int64_t>{1});
  for (size_t k = 1; k < 3; ++k) {
    CAPTURE(k);
    REQUIRE(a.instances[k].arrivals.size() == 2);
    CHECK(a.instances[k].missing.empty());
    CHECK(a.instances[k].last_rank == 1);
    CHECK(a.instances[k].skew == usec(100));
    CHECK(arrival_of(a.instances[k], 0).wait == usec(100));
  }
}

TEST_CASE("collectives: clock offsets between hosts are recovered within 10 us") {
  auto stores = load_ranks(two_host_ranks());
  SUBCASE("auto: offsets above the noise are applied") {
    CollectiveAnalysis a = analyze_collectives(inputs_of(stores));
    REQUIRE(a.offsets.size() == 4);
    CHECK(a.offsets[0] == 0);
    CHECK(std::abs(a.offsets[1]) <= usec(10));
    CHECK(std::abs(a.offsets[2] + TimeNs(kHostB * 1000)) <= usec(10));
    CHECK(std::abs(a.offsets[3] + TimeNs(kHostB * 1000)) <= usec(10));
    CHECK(a.aligned);
    REQUIRE(a.instances.size() == 6);
    for (const auto& in : a.instances) CHECK(in.skew <= usec(300 + 10));
  }
  SUBCASE("none: raw clocks") {
    CollectiveOptions o;
    o.align = Align::None;
    CollectiveAnalysis a = analyze_collectives(inputs_of(stores), o);
    CHECK_FALSE(a.aligned);
    REQUIRE(a.instances.size() == 6);
    for (const auto& in : a.instances) CHECK(in.skew >= usec(1234000));
  }
}

TEST_CASE("collectives: ranks whose clocks share no moment are said, and put on one job clock") {
  // Two ranks of one run, and a third recorded 28 days later (a folder of unrelated traces): its
  // only collective matches nothing, so no offset places it. Its arrival read 2,437,895 s.
  const double later = 2'437'895.0 * 1e6;  // µs
  std::vector<std::string> texts;
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<std::string> ev;
    int corr = 0;
    add_collective(ev, corr, 5000 + 50 * rank, 5900);
    texts.push_back(trace(ev, dist(rank, 2)));
  }
  std::vector<std::string> ev;
  int corr = 0;
  add_collective(ev, corr, later + 5000, later + 5900, "9", "[2]", "ncclDevKernel_Broadcast_RING_LL(ncclDevComm*)");
  texts.push_back(trace(ev, dist(2, 8)));
  auto stores = load_ranks(texts);
  SUBCASE("auto: the later rank's clock starts where the others' does") {
    CollectiveAnalysis a = analyze_collectives(inputs_of(stores));
    REQUIRE(a.clock_groups.size() == 2);
    CHECK(a.clock_groups[0] == std::vector<int64_t>{0, 1});
    CHECK(a.clock_groups[1] == std::vector<int64_t>{2});
    CHECK(a.moved == std::vector<bool>{false, false, true});
    for (const auto& in : a.instances)
      for (const auto& ar : in.arrivals) CHECK(ar.arrival < usec(1'000'000));  // not days: the job clock
    bool noted = false;
    for (const auto& n : a.notes) noted |= n.find("share no moment (ranks 0, 1 | rank 2)") != std::string::npos;
    CHECK(noted);
  }
  SUBCASE("none: raw clocks, still said") {
    CollectiveOptions o;
    o.align = Align::None;
    CollectiveAnalysis a = analyze_collectives(inputs_of(stores), o);
    CHECK(a.clock_groups.size() == 2);
    CHECK(a.moved == std::vector<bool>{false, false, false});
    TimeNs latest = 0;
    for (const auto& in : a.instances)
      for (const auto& ar : in.arrivals) latest = std::max(latest, ar.arrival);
    CHECK(latest > usec(1'000'000'000));
  }
  SUBCASE("clocks that overlap are one group, even across hosts once aligned") {
    auto hosts = load_ranks(two_host_ranks());
    CollectiveAnalysis a = analyze_collectives(inputs_of(hosts));
    CHECK(a.clock_groups.size() == 1);
    CHECK(a.moved == std::vector<bool>(4, false));
  }
}
