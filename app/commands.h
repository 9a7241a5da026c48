// Each subcommand lives in its own file and registers itself on the CLI11 app here.
// A registered callback sets `exit_code` (0 ok, 1 bad input, 2 bad usage).
#pragma once

namespace CLI {
class App;
}

namespace sl::cli {

extern int exit_code;

void register_info(CLI::App& app);
void register_report(CLI::App& app);
void register_diff(CLI::App& app);
void register_capture(CLI::App& app);
void register_render(CLI::App& app);
void register_bench_load(CLI::App& bench);
void register_bench_report(CLI::App& bench);
void register_bench_frame(CLI::App& bench);
void register_bench_diff(CLI::App& bench);
void register_bench_live(CLI::App& bench);
void register_convert(CLI::App& app);
void register_bench_open(CLI::App& bench);
void register_bench_critical_path(CLI::App& bench);

}  // namespace sl::cli
