// sightline: one binary. Subcommands for scripts and CI; no subcommand opens the GUI.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>

#include "app/commands.h"
#include "app/fleet_cli.h"
#include "app/gui.h"
#include "core/snapshot/snapshot_cache.h"

namespace sl::cli {
int exit_code = 0;
}

namespace {

// The bundled sample trace: installed beside the binary (BIN/../share/sightline, packaging/),
// else the source tree's (a build-tree binary).
std::string bundled_sample() {
  const char* name = "sample_bert_h100.json.gz";
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::filesystem::path installed = exe.parent_path().parent_path() / "share" / "sightline" / name;
  if (!ec && std::filesystem::is_regular_file(installed, ec)) return installed.string();
  return std::string(SIGHTLINE_ASSETS_DIR) + "/" + name;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Sightline " SIGHTLINE_VERSION ": fast, visual GPU trace analysis for PyTorch/Kineto traces.\n"
               "With no subcommand it opens the GUI on FILE (or on the bundled sample trace).",
               "sightline"};
  app.set_version_flag("--version", "sightline " SIGHTLINE_VERSION);
  app.require_subcommand(0, 1);
  sl::cli::register_info(app);
  sl::cli::register_report(app);
  sl::cli::register_diff(app);
  sl::cli::register_capture(app);
  sl::cli::register_render(app);
  sl::cli::register_convert(app);
  CLI::App* bench = app.add_subcommand("bench", "Measure load, analysis and frame speed");
  bench->require_subcommand(1);
  sl::cli::register_bench_load(*bench);
  sl::cli::register_bench_report(*bench);
  sl::cli::register_bench_frame(*bench);
  sl::cli::register_bench_diff(*bench);
  sl::cli::register_bench_live(*bench);
  sl::cli::register_bench_open(*bench);
  sl::cli::register_bench_critical_path(*bench);
  sl::cli::register_fleet_commands(app, *bench);

  sl::gui::Options gui;
  gui.sample = bundled_sample();
  std::string size;
  app.add_option("files", gui.files, "Trace files (.json, .json.gz, Nsight .sqlite[.gz], .nsys-rep) to open in the GUI; a folder opens as one job tab");
  app.add_option("--job", gui.job, "Open these rank files as one job tab (a folder FILE opens as a job too)");
  app.add_option("--rank-from", gui.rank_from, "Job tabs: every rank's number from distributedInfo, the file name or the files' order")
      ->check(CLI::IsMember({"distributed-info", "name", "order"}));
  app.add_option("--diff", gui.diff, "Open the GUI's diff view comparing trace A (control) with B (test)")->expected(2);
  app.add_option("--screenshot", gui.screenshot, "Open the GUI, save a PNG of the first full view, exit");
  app.add_option("--script", gui.script, "Run GUI automation commands from a file (see shared/specs/cli.md)");
  app.add_flag("--live", gui.live, "Open a live capture tab: `sightline capture --live -- PROGRAM` streams into it");
  app.add_option("--socket", gui.socket, "The live capture socket (default $XDG_RUNTIME_DIR/sightline-live-UID.sock)");
  app.add_option("--size", size, "Window size WxH (default 1600x1000)");
  // `sightline --no-cache info TRACE` and `sightline info --no-cache TRACE` alike. Subcommand
  // callbacks run after the whole command line is parsed, so it is set before any trace opens.
  const char* no_cache_help = "Neither read nor write the snapshot cache ($XDG_CACHE_HOME/sightline; also SIGHTLINE_NO_CACHE=1)";
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
    if (command != bench) command->add_flag_callback("--no-cache", [] { sl::disable_process_cache(); }, no_cache_help);
  app.add_flag_callback("--no-cache", [] { sl::disable_process_cache(); }, no_cache_help);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (!app.get_subcommands().empty()) return sl::cli::exit_code;
  if (!size.empty() && std::sscanf(size.c_str(), "%dx%d", &gui.width, &gui.height) != 2) {
    std::fprintf(stderr, "sightline: --size wants WxH, e.g. 1600x1000\n");
    return 2;
  }
  return sl::gui::run(gui);
}
