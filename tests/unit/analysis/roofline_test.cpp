// The roofline of CUPTI range-profiler counters (core/analysis/roofline.h): peaks derived from
// deviceProperties and the per-kernel points, with exact values.
#include <doctest/doctest.h>

#include <filesystem>

#include "core/analysis/report.h"
#include "core/analysis/roofline.h"
#include "core/import/trace_loader.h"
#include "tests/unit/analysis/analysis_test_util.h"
#include "tests/unit/test_support.h"
#include "views/analysis_model.h"
#include "views/figure_export.h"
#include "views/timeline_view.h"

using namespace sl;
using namespace sl::analysis;
using namespace sl::test;

namespace {

std::unique_ptr<TraceStore> load_path(const std::string& path) {
  LoadResult r = load_trace(path);
  INFO(r.error.to_string());
  REQUIRE(r.ok());
  return std::move(r.store);
}

struct Analysed {
  std::unique_ptr<TraceStore> store;
  EventTable table;
  CuptiCounters counters;
  Roofline roof;
};

Analysed analyse(const std::string& path) {
  Analysed a;
  a.store = load_path(path);
  a.table = build_table(*a.store, TableOptions{});
  a.counters = cupti_counters(a.table);
  a.roof = roofline(a.counters, a.table);
  return a;
}

}  // namespace

TEST_CASE("roofline: FMA rates per SM follow the Programming Guide's table") {
  CHECK(fma_per_clock_per_sm(8, 0, Precision::Fp32) == 64.0);
  CHECK(fma_per_clock_per_sm(8, 0, Precision::Fp64) == 32.0);
  CHECK(fma_per_clock_per_sm(8, 0, Precision::Fp16) == 256.0);
  CHECK(fma_per_clock_per_sm(8, 6, Precision::Fp32) == 128.0);
  CHECK(fma_per_clock_per_sm(9, 0, Precision::Fp64) == 64.0);
  CHECK(fma_per_clock_per_sm(7, 0, Precision::Fp32) == 64.0);
  CHECK_FALSE(fma_per_clock_per_sm(5, 2, Precision::Fp16));  // no FP16 unit
  CHECK_FALSE(fma_per_clock_per_sm(12, 0, Precision::Fp32));  // not in the table: no guess
  CHECK(sass_precision("smsp__sass_thread_inst_executed_op_dfma_pred_on.sum") == Precision::Fp64);
  CHECK(sass_precision("smsp__sass_thread_inst_executed_op_hadd_pred_on.sum") == Precision::Fp16);
  CHECK_FALSE(sass_precision("smsp__sass_thread_inst_executed_op_integer_pred_on.sum"));
  CHECK_FALSE(sass_precision("dram__bytes_read.sum"));
}

TEST_CASE("roofline: decade labels and the scatter's hit test") {
  CHECK(decade_label(-2, false) == "0.01");
  CHECK(decade_label(2, false) == "100");
  CHECK(decade_label(3, false) == "1000");
  CHECK(decade_label(11, true) == "100 G");
  CHECK(decade_label(12, true) == "1 T");
  CHECK(decade_label(2, true) == "100");
  CHECK(si(19.49184e12, "FLOP/s") == "19.5 TFLOP/s");
  CHECK(si(1.5552e12, "B/s") == "1.56 TB/s");
  CHECK(si(840, "B") == "840 B");
  std::vector<std::pair<float, float>> drawn = {{10, 10}, {20, 10}, {100, 100}};
  CHECK(point_at(drawn, 14, 10, 6) == 0);
  CHECK(point_at(drawn, 16, 10, 6) == 1);
  CHECK(point_at(drawn, 60, 60, 6) == -1);
  CHECK(point_at({}, 0, 0, 6) == -1);
}

TEST_CASE("roofline: peaks from CUDA-style deviceProperties (clock in kHz, memory clock and bus)") {
  DevicePeak p = device_peak(
      R"({"id": 3, "name": "A100", "computeMajor": 8, "computeMinor": 0, "numSms": 108, "warpSize": 32,
          "clockRate": 1410000, "memoryClockRate": 1215000, "memoryBusWidth": 5120})");
  CHECK(p.device == 3);
  CHECK(p.name == "A100");
  CHECK(p.clock_hz == 1.41e9);
  CHECK(p.flop_per_clock[int(Precision::Fp32)] == 13824.0);  // 108 SMs x 64 FMA x 2
  CHECK(p.flop_per_clock[int(Precision::Fp64)] == 6912.0);
  CHECK(p.flop_per_clock[int(Precision::Fp16)] == 55296.0);
  CHECK(*p.flops[int(Precision::Fp32)] == doctest::Approx(19.49184e12).epsilon(1e-12));
  CHECK(*p.bytes_per_s == doctest::Approx(1.5552e12).epsilon(1e-12));  // 2 x 1.215 GHz x 640 B
  CHECK(p.memory_source == "memoryClockRate × memoryBusWidth");
  CHECK(*p.ridge(Precision::Fp32) == doctest::Approx(19.49184e12 / 1.5552e12).epsilon(1e-12));
  CHECK(*attainable(p, Precision::Fp32, 1.0) == doctest::Approx(1.5552e12).epsilon(1e-12));
  CHECK(*attainable(p, Precision::Fp32, 1000.0) == doctest::Approx(19.49184e12).epsilon(1e-12));
  CHECK(p.compute_note.empty());
  CHECK(p.memory_note.empty());
}

TEST_CASE("roofline: no clock, no memory fields: per-clock rates only, and the notes say why") {
  DevicePeak p = device_peak(R"({"id": 0, "name": "X", "computeMajor": 8, "computeMinor": 6, "numSms": 84})");
  CHECK(p.flop_per_clock[int(Precision::Fp32)] == 84.0 * 128 * 2);
  CHECK_FALSE(p.flops[int(Precision::Fp32)]);
  CHECK_FALSE(p.bytes_per_s);
  CHECK_FALSE(p.ridge(Precision::Fp32));
  CHECK_FALSE(attainable(p, Precision::Fp32, 1.0));
  CHECK(p.compute_note.find("no clockRate") != std::string::npos);
  CHECK(p.memory_note.find("memoryBandwidth") != std::string::npos);
  DevicePeak odd = device_peak(R"({"computeMajor": 12, "computeMinor": 0, "numSms": 10, "clockRate": 2000000})");
  CHECK(odd.compute_note == "compute capability 12.0 is not in the FMA-rate table");
  CHECK_FALSE(odd.flops[int(Precision::Fp32)]);
}

TEST_CASE("roofline: Nsight Systems' H200 (clock in Hz, memoryBandwidth in bytes/s), from tests/data") {
  auto store = load_path(test_data("fuser_nsys_h200_electsync.sqlite.gz"));
  REQUIRE(!store->meta.devices.empty());
  DevicePeak p = device_peak(store->meta.devices.front().properties_json);
  CHECK(p.name == "NVIDIA H200");
  CHECK(p.sms == 132);
  CHECK(p.clock_hz == 1.98e9);
  CHECK(p.flop_per_clock[int(Precision::Fp32)] == 33792.0);  // 132 x 128 x 2
  CHECK(*p.flops[int(Precision::Fp32)] == doctest::Approx(66.90816e12).epsilon(1e-12));
  CHECK(*p.flops[int(Precision::Fp64)] == doctest::Approx(33.45408e12).epsilon(1e-12));
  CHECK(p.bytes_per_s == 4916736000000.0);
  CHECK(p.memory_source == "memoryBandwidth");
}

TEST_CASE("roofline: AMD GPUs report a gfx version as compute capability; no NVIDIA roof for them") {
  auto store = load_path(test_data("hta_amd_mi250_minitoy.json.gz"));
  REQUIRE(!store->meta.devices.empty());
  DevicePeak p = device_peak(store->meta.devices.front().properties_json);
  CHECK(p.cc_major == 9);  // the same as Hopper's
  CHECK_FALSE(p.flop_per_clock[int(Precision::Fp32)]);
  CHECK(p.compute_note == "not an NVIDIA GPU: no FMA-rate table for it");
}

TEST_CASE("roofline: points of the hand-made counter trace (tests/data/cupti_roofline_handmade.json)") {
  Analysed a = analyse(test_data("cupti_roofline_handmade.json"));
  REQUIRE(a.counters.kernels.size() == 8);
  const Roofline& r = a.roof;
  CHECK(r.has_device);
  CHECK(r.peak.name == "Handmade A100-SXM4-40GB");
  CHECK(*r.peak.flops[int(Precision::Fp32)] == doctest::Approx(19.49184e12).epsilon(1e-12));
  CHECK(*r.peak.bytes_per_s == doctest::Approx(1.5552e12).epsilon(1e-12));
  REQUIRE(r.points.size() == 7);  // fill_kernel executes no FP instruction
  CHECK(r.without_flops == 1);
  CHECK(r.without_bytes == 0);
  CHECK(r.without_time == 0);
  CHECK(r.note == "1 of 8 kernels have no point: 1 without FP instructions (no SASS FP counts, or 0 FLOPs)");
  struct Expected {
    const char* kernel;
    double flops, bytes, seconds;
    Precision precision;
  } expected[] = {
      {"ampere_sgemm_128x64_nn", 8e9, 1e8, 800e-6, Precision::Fp32},
      {"ampere_sgemm_64x64_nn", 2e9, 5e7, 250e-6, Precision::Fp32},
      {"vectorized_elementwise_kernel<relu>", 2.5e7, 2e8, 160e-6, Precision::Fp32},
      {"vectorized_elementwise_kernel<add>", 5e7, 6e8, 450e-6, Precision::Fp32},
      {"softmax_warp_forward", 9e7, 4e7, 50e-6, Precision::Fp32},  // 2 x 3e7 FMA + 2e7 + 1e7
      {"layer_norm_kernel<half>", 4.5e8, 3e7, 30e-6, Precision::Fp16},
      {"ampere_dgemm_64x64_nn", 4e9, 8e7, 600e-6, Precision::Fp64},
  };
  for (size_t i = 0; i < 7; ++i) {
    INFO(expected[i].kernel);
    const RooflinePoint& p = r.points[i];
    CHECK(a.counters.kernels[p.kernel].kernel == expected[i].kernel);
    CHECK(p.flops == expected[i].flops);
    CHECK(p.bytes == expected[i].bytes);
    CHECK(p.seconds == doctest::Approx(expected[i].seconds).epsilon(1e-12));
    CHECK(p.intensity == doctest::Approx(expected[i].flops / expected[i].bytes).epsilon(1e-12));
    CHECK(p.throughput == doctest::Approx(expected[i].flops / expected[i].seconds).epsilon(1e-12));
    CHECK(p.precision == expected[i].precision);
  }
  CHECK(r.points[0].throughput == doctest::Approx(10e12).epsilon(1e-12));  // half the FP32 roof
  CHECK(r.points[0].intensity == doctest::Approx(80).epsilon(1e-12));
  CHECK(r.precision_used == std::array<bool, kPrecisionCount>{true, true, true});
  CHECK(drawn_roofs(r) == std::vector<Precision>{Precision::Fp64, Precision::Fp32, Precision::Fp16});
  // Groups: operators by FLOPs.
  std::vector<std::string> ops;
  for (const RooflineGroup& g : r.groups) ops.push_back(g.op);
  CHECK(ops == std::vector<std::string>{"aten::addmm", "aten::mm", "aten::native_layer_norm", "aten::softmax", "aten::add",
                                        "aten::relu"});
  CHECK(r.groups[0].points == 2);
  CHECK(r.groups[0].flops == 1e10);
  CHECK(r.points[1].group == 0);
  CHECK(r.points[6].group == 1);
  // Axes: 0.083 .. 80 FLOP/B, 1.1e11 .. 7.8e13 FLOP/s (the FP16 roof).
  CHECK(r.axes.x_lo == -2);
  CHECK(r.axes.x_hi == 2);
  CHECK(r.axes.y_lo == 11);
  CHECK(r.axes.y_hi == 14);
}

TEST_CASE("roofline: the corpus CUPTI trace (A100, Kineto deviceProperties) has counts but no roof or point") {
  if (!have_shared()) return;
  Analysed a = analyse((shared_dir() / "corpus" / "hta_cupti_profiler_a100.json.gz").string());
  const Roofline& r = a.roof;
  REQUIRE(a.counters.kernels.size() == 77);
  CHECK(r.has_device);
  CHECK(r.peak.name == "NVIDIA A100-PG509-200");
  CHECK(r.peak.sms == 108);
  CHECK(r.peak.flop_per_clock[int(Precision::Fp32)] == 13824.0);
  CHECK(r.peak.flop_per_clock[int(Precision::Fp64)] == 6912.0);
  CHECK(r.peak.flop_per_clock[int(Precision::Fp16)] == 55296.0);
  CHECK_FALSE(r.peak.clock_hz);
  CHECK_FALSE(r.peak.flops[int(Precision::Fp32)]);
  CHECK_FALSE(r.peak.bytes_per_s);
  CHECK(r.peak.compute_note == "deviceProperties has no clockRate (Kineto does not record the SM clock)");
  CHECK(drawn_roofs(r).empty());
  // Only SASS FP counts were collected: 14 kernels execute none, the other 63 have no DRAM bytes.
  CHECK(r.points.empty());
  CHECK(r.without_flops == 14);
  CHECK(r.without_bytes == 63);
  double flops = 0;
  for (const CuptiKernelCounters& k : a.counters.kernels) flops += k.flops.value_or(0);
  CHECK(flops == 80231038456.0);
}

TEST_CASE("roofline: a trace without counters has no point and says so") {
  Analysed a = analyse(test_data("hta_cp_simple_add_input.json.gz"));
  CHECK(a.counters.kernels.empty());
  CHECK(a.roof.points.empty());
  CHECK(a.roof.note == "no profiled kernels");
}

TEST_CASE("roofline: File > Export offers it from the analysis model (and says why not without counters)") {
  auto export_roofline = [](const std::string& trace, const std::string& path) {
    auto store = load_path(trace);
    auto model = sl::views::build_analysis_model(*store);
    sl::views::TimelineView tl(*store);
    sl::views::ExportSources src{*store, model.get(), tl, true};
    sl::views::ExportRequest q;
    q.what = sl::views::ExportWhat::Roofline;
    q.path = path;
    return sl::views::export_figure(src, q);
  };
  std::string path = (std::filesystem::temp_directory_path() / "sightline-roofline-export.svg").string();
  sl::views::ExportResult r = export_roofline(test_data("cupti_roofline_handmade.json"), path);
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.elements > 50);
  CHECK(std::filesystem::file_size(path) > 1000);
  std::filesystem::remove(path);
  r = export_roofline(test_data("hta_cp_simple_add_input.json.gz"), path);
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("no cuda_profiler_range events") != std::string::npos);
  CHECK(sl::views::export_what_name(sl::views::ExportWhat::Roofline) == std::string("roofline"));
}

TEST_CASE("roofline: the kernels' GPU is the device of the ranges' row, not the first deviceProperties entry") {
  namespace t = sl::analysis::test;
  std::string range_args =
      R"({"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 50, "dram__bytes.sum": 25, "gpu__time_duration.sum": 100})";
  auto s = t::load(t::trace(
      {t::launch("cudaLaunchKernel", "0", "2", 1), t::X("cuda_profiler_range", "k", 1, 0, "10", "5", range_args)},
      R"("deviceProperties": [{"id": 0, "name": "first", "computeMajor": 8, "computeMinor": 0, "numSms": 1},
                              {"id": 1, "name": "second", "computeMajor": 8, "computeMinor": 6, "numSms": 2,
                               "clockRate": 1000000, "memoryBandwidth": 1e9}])"));
  EventTable table = build_table(*s, TableOptions{});
  CuptiCounters c = cupti_counters(table);
  REQUIRE(c.kernels.size() == 1);
  Roofline r = roofline(c, table);
  CHECK(r.peak.name == "second");
  CHECK(r.peak.flops[int(Precision::Fp32)] == 2.0 * 128 * 2 * 1e9);
  CHECK(r.peak.bytes_per_s == 1e9);
  REQUIRE(r.points.size() == 1);
  CHECK(r.points[0].intensity == 4.0);  // 2 x 50 FLOP / 25 B (dram__bytes.sum when read/write are absent)
  CHECK(r.points[0].throughput == doctest::Approx(1e9).epsilon(1e-12));  // 100 FLOP in 100 ns
  CHECK(r.note.empty());
}
