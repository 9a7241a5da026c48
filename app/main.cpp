// sightline: subcommands for scripts and CI; no subcommand opens the GUI.
//
// Built twice from this file (app/CMakeLists.txt): `sightline` links only the headless core, and
// `sightline-gui` beside it links everything (ImGui, GLFW, Cairo and the ~20 X11 and font
// libraries under them). `sightline` runs the GUI and the commands that draw (render, bench
// frame, bench live) by exec'ing `sightline-gui` with the same arguments, so that info, report,
// convert, bench load ... never load the drawing libraries: loaded, they cost every process
// ~3 MB of resident memory before it reads a byte (#15, tests/bench/README.md). `sightline-gui`
// runs every command itself.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "app/commands.h"
#include "app/gui.h"
#include "core/snapshot_cache.h"

namespace sl::cli {
int exit_code = 0;
}

#ifndef SIGHTLINE_GUI
namespace {

char** process_argv = nullptr;

// Replaces this process by `sightline-gui` from this binary's folder, with the same arguments.
[[noreturn]] void run_drawing_binary() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::string drawing = (ec ? std::filesystem::path(process_argv[0]) : self).parent_path() / "sightline-gui";
  process_argv[0] = drawing.data();
  ::execv(drawing.c_str(), process_argv);
  std::fprintf(stderr, "sightline: cannot run %s (%s); the GUI and the drawing commands live there\n", drawing.c_str(),
               std::strerror(errno));
  std::exit(1);
}

// A command of sightline-gui: its options (--help too) are left for sightline-gui to parse.
void register_drawing_command(CLI::App& parent, const char* name, const char* description) {
  CLI::App* cmd = parent.add_subcommand(name, description);
  cmd->prefix_command();
  cmd->set_help_flag();
  cmd->callback([] { run_drawing_binary(); });
}

}  // namespace
#endif

int main(int argc, char** argv) {
#ifndef SIGHTLINE_GUI
  process_argv = argv;
#endif
  CLI::App app{"Sightline: fast, visual GPU trace analysis for PyTorch/Kineto traces.\n"
               "With no subcommand it opens the GUI on FILE (or on the bundled sample trace).",
               "sightline"};
  app.set_version_flag("--version", SIGHTLINE_VERSION);
  app.require_subcommand(0, 1);
  sl::cli::register_info(app);
  sl::cli::register_report(app);
  sl::cli::register_diff(app);
  sl::cli::register_capture(app);
#ifdef SIGHTLINE_GUI
  sl::cli::register_render(app);
#else
  register_drawing_command(app, "render", "Write a figure (SVG, PDF or PNG) of a trace or of two runs compared");
#endif
  sl::cli::register_convert(app);
  CLI::App* bench = app.add_subcommand("bench", "Measure load, analysis and frame speed");
  bench->require_subcommand(1);
  sl::cli::register_bench_load(*bench);
  sl::cli::register_bench_report(*bench);
#ifdef SIGHTLINE_GUI
  sl::cli::register_bench_frame(*bench);
  sl::cli::register_bench_diff(*bench);
  sl::cli::register_bench_live(*bench);
#else
  register_drawing_command(*bench, "frame", "Time the timeline's frames through a fixed zoom/pan script");
  sl::cli::register_bench_diff(*bench);
  register_drawing_command(*bench, "live", "Cost of showing a 10k-record live batch at N records (convert + append)");
#endif
  sl::cli::register_bench_open(*bench);
  sl::cli::register_bench_critical_path(*bench);

  sl::gui::Options gui;
#ifdef SIGHTLINE_GUI
  gui.sample = std::string(SIGHTLINE_ASSETS_DIR) + "/sample_bert_h100.json.gz";
#endif
  std::string size;
  app.add_option("files", gui.files, "Trace files (.json, .json.gz, Nsight .sqlite[.gz], .nsys-rep) to open in the GUI; a folder opens as one job tab");
  app.add_option("--job", gui.job, "Open these rank files as one job tab (a folder FILE opens as a job too)");
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
#ifdef SIGHTLINE_GUI
  return sl::gui::run(gui);
#else
  run_drawing_binary();
#endif
}
