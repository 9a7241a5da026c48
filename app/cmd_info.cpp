// `sightline info TRACE`: what a trace holds, and what the loader could not place.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "app/commands.h"
#include "core/trace_info.h"
#include "core/trace_loader.h"

namespace sl::cli {

void register_info(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Summarise a trace: events, tracks, devices, iterations, import issues");
  struct Options {
    std::string file;
    std::string format = "text";
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("trace", options->file, "Trace file (.json or .json.gz)")->required();
  cmd->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options] {
    LoadResult loaded = load_trace(options->file);
    if (!loaded.ok()) {
      std::fprintf(stderr, "sightline: %s\n", loaded.error.to_string().c_str());
      exit_code = 1;
      return;
    }
    if (!loaded.warning.empty()) std::fprintf(stderr, "sightline: warning: %s\n", loaded.warning.c_str());
    std::string out = options->format == "json" ? info_json(*loaded.store, loaded.seconds) + "\n"
                                                 : info_text(*loaded.store, loaded.seconds);
    std::fputs(out.c_str(), stdout);
  });
}

}  // namespace sl::cli
