// Placeholders for subcommands whose files have not landed yet; weak, so the real ones win.
#include <CLI/CLI.hpp>

#include "app/commands.h"

namespace sl::cli {
__attribute__((weak)) void register_report(CLI::App&) {}
__attribute__((weak)) void register_bench_report(CLI::App&) {}
}  // namespace sl::cli
