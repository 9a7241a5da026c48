// sightline: one binary. Subcommands for scripts and CI; no subcommand opens the GUI.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "app/commands.h"

namespace sl::cli {
int exit_code = 0;
}

int main(int argc, char** argv) {
  CLI::App app{"Sightline: fast, visual GPU trace analysis for PyTorch/Kineto traces", "sightline"};
  app.set_version_flag("--version", SIGHTLINE_VERSION);
  app.require_subcommand(0, 1);
  sl::cli::register_info(app);
  sl::cli::register_report(app);
  CLI::App* bench = app.add_subcommand("bench", "Measure load, analysis and frame speed");
  bench->require_subcommand(1);
  sl::cli::register_bench_load(*bench);
  sl::cli::register_bench_report(*bench);
  std::vector<std::string> files;
  app.add_option("files", files, "Trace files (.json, .json.gz) to open");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (app.get_subcommands().empty()) {
    // The GUI lands with the timeline issue; until then print what each file holds.
    if (files.empty()) {
      std::fputs(app.help().c_str(), stdout);
      return 0;
    }
    std::vector<std::string> args{"sightline", "info"};
    for (const auto& f : files) {
      CLI::App info_app{"", "sightline"};
      sl::cli::register_info(info_app);
      std::vector<const char*> argv2{"sightline", "info", f.c_str()};
      try {
        info_app.parse(int(argv2.size()), const_cast<char**>(argv2.data()));
      } catch (const CLI::ParseError& e) {
        return info_app.exit(e);
      }
    }
  }
  return sl::cli::exit_code;
}
