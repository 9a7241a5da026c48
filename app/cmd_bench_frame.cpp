// `sightline bench frame TRACE`: CPU time (of the drawing thread) per frame of the real timeline view, driven through a
// fixed script of zooms and pans. ImGui runs headless (no window, no GL): this measures the
// per-frame work of our code and ImGui's draw-list building, which is what scales with traces.
#include <CLI/CLI.hpp>
#include <imgui.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "app/commands.h"
#include "core/fleet/fleet.h"
#include "core/text/json_writer.h"
#include "views/analysis_panel.h"
#include "views/details_panel.h"
#include "views/frame_profile.h"
#include "views/job_view.h"
#include "views/pixel_image.h"
#include "views/workspace.h"

namespace sl::cli {
namespace {
// CPU time of this thread: the frame's own work, not time lost to other processes.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}
double wall_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// The script: the whole span, then zooming in ×1.5 per frame towards five points down to ~1 µs
// across, panning at each level; every zoom level is visited.
// An ImGui context with no window: fonts built, the display size of the GUI's window, vertex
// offsets on as the GUI's OpenGL 3 renderer has them (> 64k vertices per draw list).
ImGuiIO& headless_context(int width, int height) {
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.DisplaySize = ImVec2(float(width), float(height));
  io.DeltaTime = 1.f / 60;
  io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
  views::load_fonts(1.f);
  unsigned char* pixels = nullptr;
  int w = 0, h = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  return io;
}

// The GUI's textures (views/pixel_image.h) without GL: each upload copies the pixels into the
// texture's own memory, as a driver's glTexSubImage2D copies them, so frames pay that copy.
void install_copying_textures() {
  using Texels = std::vector<uint32_t>;
  views::set_texture_hooks({[] { return ImTextureID(new Texels()); },
                            [](ImTextureID id, int w, int h, const uint32_t* rgba) {
                              static_cast<Texels*>(id)->assign(rgba, rgba + size_t(w) * size_t(h));
                            },
                            [](ImTextureID id) { delete static_cast<Texels*>(id); }});
}

// One full-window ImGui frame drawing `view`, in thread CPU ms (what the frame costs us, not
// the scheduler's share of a shared machine).
template <class View>
double timed_frame(const ImGuiIO& io, View& view) {
  namespace fp = views::frame_profile;
  fp::reset();
  double t0 = thread_cpu_ms();
  ImGui::NewFrame();
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(io.DisplaySize);
  ImGui::Begin("main", nullptr, ImGuiWindowFlags_NoDecoration);
  view.draw(ImGui::GetContentRegionAvail());
  ImGui::End();
  {
    fp::Scope scope(fp::Render);
    ImGui::Render();
  }
  return thread_cpu_ms() - t0;
}

// The timeline over the top 70% of the window and the details panel below it, as the GUI lays
// out a tab with a selection (`bench frame --select`: the selection's arrows and its links list).
struct TimelineAndDetails {
  views::TimelineView& timeline;
  const TraceStore& store;
  void draw(ImVec2 size) {
    timeline.draw(ImVec2(size.x, size.y * 0.7f));
    ImGui::BeginChild("details", ImVec2(size.x, 0));
    views::draw_details_panel(store, timeline);
    ImGui::EndChild();
  }
};

// The timeline over the top 55% and the analysis panel below it on one tab (`bench frame
// --memory`: the Memory view, whose plot follows the timeline's range every frame).
struct TimelineAndPanel {
  views::TimelineView& timeline;
  views::AnalysisPanel& panel;
  void draw(ImVec2 size) {
    timeline.draw(ImVec2(size.x, size.y * 0.55f));
    ImGui::BeginChild("panel", ImVec2(size.x, 0));
    panel.draw();
    ImGui::EndChild();
  }
};

// The first slice by start named `name`, or an invalid ref.
SliceRef first_named(const TraceStore& store, const std::string& name) {
  StringId id = store.strings.find(name);
  if (id == StringPool::kNotFound) return {};
  auto refs = store.slices_named(id);
  auto first = std::min_element(refs.begin(), refs.end(), [&](SliceRef x, SliceRef y) { return store.start(x) < store.start(y); });
  return first == refs.end() ? SliceRef{} : *first;
}

std::vector<std::pair<double, double>> zoom_script(double span) {
  std::vector<std::pair<double, double>> views_to_draw{{0, span}};  // never empty, even for a tiny trace
  for (double center : {0.1, 0.3, 0.5, 0.7, 0.9}) {
    for (double width = span; width > 1000; width /= 1.5) {
      double c = center * span;
      views_to_draw.push_back({c - width / 2, c + width / 2});
      views_to_draw.push_back({c - width / 2 + width * 0.1, c + width / 2 + width * 0.1});
    }
  }
  return views_to_draw;
}

// `bench frame DIR`: the job tab (rank overview with the worst-skew collective marked, the Ranks
// table, and the `expand` ranks' rows below the overview on the same timeline) through the same
// script; every frame changes the window, so every frame re-bins.
// `heatmap` ("steps slowness", ...): with the Heatmap view shown below (the `heatmap` script command).
std::vector<double> job_frames(const std::string& dir, ImGuiIO& io, size_t& ranks, const std::vector<int64_t>& expand,
                               const std::string& heatmap, double& bands_ms) {
  views::JobView job([] {});
  if (fleet::is_fleet_file(dir)) job.open_fleet(dir);  // the fleet tab: the overview from its summaries
  else job.open(dir, {});
  while (!job.poll()) {
    timespec pause{0, 5'000'000};
    nanosleep(&pause, nullptr);
  }
  std::vector<double> ms;
  if (!job.error().empty()) {
    std::fprintf(stderr, "sightline: %s\n", job.error().c_str());
    return ms;
  }
  ranks = job.job()->ranks.size();
  for (int64_t r : expand)
    if (!job.expand_rank(r, true, true)) std::fprintf(stderr, "sightline: rank %lld is not loaded: not expanded\n", (long long)r);
  job.select_worst_skew();
  if (!heatmap.empty())
    if (std::string error = job.command("heatmap", heatmap); !error.empty()) {
      std::fprintf(stderr, "sightline: %s\n", error.c_str());
      return {};
    }
  // Many ranks: the first frame lays the overview out in bands, whose pyramid then builds on
  // worker threads (frames meanwhile bin every rank); the script starts once it is in, as a user
  // sees the tab after it settled. Its build time is reported apart.
  timed_frame(io, job);
  double t0 = job.bands_pending() ? wall_ms() : -1;
  while (job.bands_pending()) {
    timespec pause{0, 2'000'000};
    nanosleep(&pause, nullptr);
    if (job.bands_built()) timed_frame(io, job);  // installs it
  }
  bands_ms = t0 < 0 ? 0 : wall_ms() - t0;
  // SIGHTLINE_FRAME_PROFILE: each frame's sections (views/frame_profile.h), the slowest printed.
  namespace fp = views::frame_profile;
  struct Profiled {
    double ms, a, b;
    int vertices;
    std::array<double, fp::kSections> sections;
  };
  // Profiling on a shared machine: the script three times, each frame's fastest pass kept (the
  // frame's own cost with less of the neighbours' noise); the reported figures stay the first pass's.
  std::vector<Profiled> profiled;
  for (int pass = 0; pass < (fp::enabled() ? 3 : 1); ++pass) {
    size_t i = 0;
    for (auto [a, b] : zoom_script(std::max<double>(double(job.span()), 1000))) {
      job.zoom_to(a, b);
      double frame = timed_frame(io, job);
      if (pass == 0) ms.push_back(frame);
      if (fp::enabled() && (pass == 0 || frame < profiled[i].ms)) {
        Profiled p{frame, a, b, ImGui::GetDrawData()->TotalVtxCount, {}};
        std::copy(fp::sections(), fp::sections() + fp::kSections, p.sections.begin());
        if (pass == 0) profiled.push_back(p);
        else profiled[i] = p;
      }
      ++i;
    }
  }
  if (!profiled.empty()) {
    auto line = [](const char* what, double total, double vertices, const double* s) {
      std::fprintf(stderr, "%-22s %7.3f ms %7.0f vtx", what, total, vertices);
      for (int k = 0; k < fp::kSections; ++k) std::fprintf(stderr, "  %s %.3f", fp::kSectionNames[k], s[k]);
      std::fprintf(stderr, "\n");
    };
    std::array<double, fp::kSections> mean{};
    double mean_ms = 0, mean_vtx = 0;
    for (const Profiled& p : profiled) {
      for (int k = 0; k < fp::kSections; ++k) mean[size_t(k)] += p.sections[size_t(k)] / double(profiled.size());
      mean_ms += p.ms / double(profiled.size()), mean_vtx += double(p.vertices) / double(profiled.size());
    }
    line("mean", mean_ms, mean_vtx, mean.data());
    std::vector<double> fastest;
    for (const Profiled& p : profiled) fastest.push_back(p.ms);
    std::sort(fastest.begin(), fastest.end());
    std::fprintf(stderr, "fastest of 3 passes: p50 %.3f  p99 %.3f  max %.3f ms\n", fastest[fastest.size() / 2],
                 fastest[std::min(fastest.size() - 1, size_t(0.99 * double(fastest.size())))], fastest.back());
    std::vector<size_t> order(profiled.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return profiled[x].ms > profiled[y].ms; });
    for (size_t i = 0; i < order.size() && i < std::max<size_t>(5, order.size() / 50); ++i) {
      const Profiled& p = profiled[order[i]];
      char what[64];
      std::snprintf(what, sizeof what, "#%zu w %.3g", order[i], p.b - p.a);
      line(what, p.ms, double(p.vertices), p.sections.data());
    }
  }
  return ms;
}
}  // namespace

void register_bench_frame(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("frame", "Time the timeline's frames through a fixed zoom/pan script");
  struct Options {
    std::string file;
    std::string format = "text";
    int width = 1600, height = 1000;
    bool critical_path = false, memory = false;
    std::string select;
    std::vector<int64_t> expand;
    std::string heatmap;
    bool no_textures = false;
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("trace", options->file, "Trace file, or a job folder or fleet file (the rank overview)")->required();
  cmd->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--critical-path", options->critical_path, "With the critical-path overlay on (first ProfilerStep)");
  cmd->add_option("--select", options->select,
                  "Select the first slice (by start) of this name: frames draw its arrows and the details panel");
  cmd->add_option("--expand", options->expand, "A job: expand these ranks below the overview (repeatable)");
  cmd->add_option("--heatmap", options->heatmap, "A job: with the Heatmap view shown, e.g. \"waits slowness\" (as the script's heatmap)");
  cmd->add_flag("--no-textures", options->no_textures, "A job: draw the overview's bands as rectangles, not from their image (as headless drawing does)");
  cmd->add_flag("--memory", options->memory, "With the Memory view under the timeline (its plot follows every zoom)");
  cmd->callback([options] {
    if (is_job_dir(options->file) || fleet::is_fleet_file(options->file)) {
      ImGuiIO& io = headless_context(options->width, options->height);
      size_t ranks = 0;
      double bands_ms = 0;
      if (!options->no_textures) install_copying_textures();
      std::vector<double> ms = job_frames(options->file, io, ranks, options->expand, options->heatmap, bands_ms);
      views::set_texture_hooks({});  // the job view is gone: nothing left to destroy
      ImGui::DestroyContext();
      if (ms.empty()) {
        exit_code = 1;
        return;
      }
      std::sort(ms.begin(), ms.end());
      auto pct = [&](double q) { return ms[std::min(ms.size() - 1, size_t(q * double(ms.size())))]; };
      if (options->format == "json") {
        JsonWriter j;
        j.begin_object().field("ranks", uint64_t(ranks)).field("frames", uint64_t(ms.size())).field("frame_ms_p50", pct(0.5));
        j.field("frame_ms_p99", pct(0.99)).field("frame_ms_max", ms.back()).field("bands_build_ms", bands_ms).end_object();
        std::printf("%s\n", j.str().c_str());
        return;
      }
      std::printf("job             %s (%zu ranks, rank overview re-binned every frame)\n", options->file.c_str(), ranks);
      std::printf("frames          %zu (zoom levels from the whole job down to ~1 us, with pans)\n", ms.size());
      std::printf("frame ms        p50 %.3f   p99 %.3f   max %.3f\n", pct(0.5), pct(0.99), ms.back());
      if (bands_ms > 0) std::printf("bands           pyramid built in %.0f ms (wall, worker threads) before the script\n", bands_ms);
      return;
    }
    views::Workspace ws;
    if (!ws.open_now(options->file)) {
      std::fprintf(stderr, "sightline: %s\n", ws.error().c_str());
      exit_code = 1;
      return;
    }
    ImGuiIO& io = headless_context(options->width, options->height);
    views::TimelineView& tl = *ws.timeline();
    if (options->critical_path && ws.panel()) ws.panel()->set_critical_path_overlay(true);
    if (!options->select.empty()) {
      SliceRef selected = first_named(*ws.store(), options->select);
      if (!selected.valid()) {
        std::fprintf(stderr, "sightline: no slice named '%s'\n", options->select.c_str());
        exit_code = 1;
        return;
      }
      tl.select(selected);
    }
    TimelineAndDetails with_details{tl, *ws.store()};
    if (options->memory && !ws.panel()) {
      std::fprintf(stderr, "sightline: no analysis panel for this trace\n");
      exit_code = 1;
      return;
    }
    if (options->memory) ws.panel()->show("memory");
    double span = std::max<double>(double(ws.store()->end_ns), 1000);
    std::vector<std::pair<double, double>> views_to_draw = zoom_script(span);
    std::vector<double> ms;
    uint32_t max_commands = 0, max_vertices = 0;
    for (auto [a, b] : views_to_draw) {
      tl.zoom_to(a, b);
      if (options->memory) {
        TimelineAndPanel with_panel{tl, *ws.panel()};
        ms.push_back(timed_frame(io, with_panel));
      } else {
        ms.push_back(options->select.empty() ? timed_frame(io, tl) : timed_frame(io, with_details));
      }
      max_commands = std::max(max_commands, uint32_t(ImGui::GetDrawData()->CmdListsCount ? tl.stats().draw_commands : 0));
      max_vertices = std::max(max_vertices, uint32_t(ImGui::GetDrawData()->TotalVtxCount));
    }
    ImGui::DestroyContext();
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    auto pct = [&](double q) { return sorted[std::min(sorted.size() - 1, size_t(q * double(sorted.size())))]; };
    if (options->format == "json") {
      JsonWriter j;
      j.begin_object().field("frames", uint64_t(ms.size())).field("frame_ms_p50", pct(0.5)).field("frame_ms_p99", pct(0.99));
      j.field("frame_ms_max", sorted.back()).field("first_frame_ms", ms.front()).field("prepare_ms", tl.prepare_ms());
      j.field("draw_commands_max", max_commands).field("vertices_max", max_vertices).end_object();
      std::printf("%s\n", j.str().c_str());
      return;
    }
    std::string overlay = options->critical_path ? " (critical-path overlay: " + std::to_string(tl.path_slices().size()) + " slices)" : "";
    if (!options->select.empty())
      overlay += " (selected: " + options->select + ", " + std::to_string(tl.selection_links().all().size()) + " links)";
    std::printf("file            %s%s\n", options->file.c_str(), overlay.c_str());
    std::printf("frames          %zu (zoom levels from the whole trace down to ~1 us, with pans)\n", ms.size());
    std::printf("frame ms        p50 %.3f   p99 %.3f   max %.3f   first %.3f\n", pct(0.5), pct(0.99), sorted.back(), ms.front());
    std::printf("view prepare    %.3f ms (at open, not in a frame: lane rows and their sampled keys, counter indexes, short names)\n",
                tl.prepare_ms());
    std::printf("draw list       %u commands, %u vertices at most\n", max_commands, max_vertices);
  });
}

}  // namespace sl::cli
