// `sightline convert TRACE [-o OUT]`: writes a snapshot (core/snapshot/SNAPSHOT.md) that every command
// opens without parsing JSON. `sightline bench open TRACE`: snapshot open time vs JSON load.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/analysis/common.h"
#include "app/commands.h"
#include "core/import/trace_loader.h"
#include "core/snapshot/snapshot.h"
#include "core/text/json_writer.h"

namespace sl::cli {
namespace {

// TRACE.json.gz -> TRACE.slsnap (beside the trace).
std::string default_snapshot_path(const std::string& trace) {
  std::string out = trace;
  for (const char* ext : {".gz", ".json", ".sqlite", ".nsys-rep"})
    if (out.size() > std::string(ext).size() && out.ends_with(ext)) out.resize(out.size() - std::string(ext).size());
  return out + ".slsnap";
}

uint64_t file_bytes(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

// CPU time of the process (every thread): on a shared machine, wall time also counts other jobs' turns.
double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}

using analysis::median;

}  // namespace

void register_convert(CLI::App& app) {
  auto* cmd = app.add_subcommand("convert", "Write a snapshot of TRACE that opens without parsing JSON");
  struct Options {
    std::string file, out;
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("trace", options->file, "Trace file (.json, .json.gz, Nsight .sqlite[.gz], .nsys-rep)")->required();
  cmd->add_option("-o,--output", options->out, "Snapshot path (default: TRACE without .json[.gz] + .slsnap)");
  cmd->callback([options] {
    std::string out = options->out.empty() ? default_snapshot_path(options->file) : options->out;
    // `-o` naming the trace itself would replace the user's only copy of it with the snapshot.
    std::error_code same_error;
    if (std::filesystem::equivalent(options->file, out, same_error)) {
      std::fprintf(stderr, "sightline: %s: the output is the trace itself; give another path with -o\n", out.c_str());
      exit_code = 1;
      return;
    }
    LoadResult r = load_trace(options->file);
    if (!r.ok()) {
      std::fprintf(stderr, "sightline: %s\n", r.error.to_string().c_str());
      exit_code = 1;
      return;
    }
    if (!r.warning.empty()) std::fprintf(stderr, "sightline: %s\n", r.warning.c_str());
    if (std::string error = write_snapshot(*r.store, out); !error.empty()) {
      std::fprintf(stderr, "sightline: %s\n", error.c_str());
      exit_code = 1;
      return;
    }
    std::printf("%s\n", out.c_str());
  });
}

void register_bench_open(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("open", "Open TRACE from its snapshot vs load its JSON: open_ms, load_ms, sizes");
  struct Options {
    std::string file;
    int repeat = 5;
    int load_repeat = 0;  // 0: as many as `repeat`
    std::string format = "text";
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("trace", options->file, "Trace file (JSON); its snapshot is written to a temporary file")->required();
  cmd->add_option("--repeat", options->repeat, "Number of runs of each (medians are reported)")->check(CLI::Range(1, 1000));
  cmd->add_option("--load-repeat", options->load_repeat, "Number of JSON loads, if not --repeat (the open is what is measured)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options] {
    std::vector<double> load_ms, load_cpu_ms, open_ms, open_cpu_ms;
    std::unique_ptr<TraceStore> store;
    for (int i = 0; i < (options->load_repeat ? options->load_repeat : options->repeat); ++i) {
      double cpu0 = process_cpu_ms();
      LoadResult r = load_trace(options->file);
      load_cpu_ms.push_back(process_cpu_ms() - cpu0);
      if (!r.ok()) {
        std::fprintf(stderr, "sightline: %s\n", r.error.to_string().c_str());
        exit_code = 1;
        return;
      }
      load_ms.push_back(r.seconds * 1e3);
      store = std::move(r.store);
    }
    std::string snap = "/tmp/sightline-bench-open-" + std::to_string(::getpid()) + ".slsnap";
    // Making the bytes (what a cache write needs the store for) and writing them (file, fsync).
    auto t0 = std::chrono::steady_clock::now();
    std::string bytes = snapshot_bytes(*store);
    auto t1 = std::chrono::steady_clock::now();
    if (std::string error = write_snapshot_bytes(bytes, snap); !error.empty()) {
      std::fprintf(stderr, "sightline: %s\n", error.c_str());
      exit_code = 1;
      return;
    }
    double serialize_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    double write_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
    bytes = {};
    uint64_t json_bytes = store->meta.bytes, file_size = file_bytes(options->file), snap_bytes = file_bytes(snap);
    store.reset();
    for (int i = 0; i < options->repeat; ++i) {
      double cpu0 = process_cpu_ms();
      LoadResult r = load_snapshot(snap);
      open_cpu_ms.push_back(process_cpu_ms() - cpu0);
      if (!r.ok()) {
        std::fprintf(stderr, "sightline: %s\n", r.error.to_string().c_str());
        exit_code = 1;
        break;
      }
      open_ms.push_back(r.seconds * 1e3);
    }
    std::remove(snap.c_str());
    if (open_ms.empty()) return;
    double open = median(open_ms), load = median(load_ms), open_cpu = median(open_cpu_ms);
    if (options->format == "json") {
      JsonWriter w;
      w.begin_object().field("open_ms", open).field("open_cpu_ms", open_cpu).field("load_ms", load).field("load_cpu_ms", median(load_cpu_ms)).field("serialize_ms", serialize_ms).field("write_ms", write_ms).field("json_bytes", json_bytes);
      w.field("file_bytes", file_size).field("snapshot_bytes", snap_bytes).field("repeat", int64_t(options->repeat)).end_object();
      std::printf("%s\n", w.str().c_str());
      return;
    }
    std::printf("file                 %s\n", options->file.c_str());
    std::printf("load_ms (JSON)       %.2f (median of %d)\n", load, int(load_ms.size()));
    std::printf("open_ms (snapshot)   %.2f (median of %d, %.1fx faster)\n", open, options->repeat, open > 0 ? load / open : 0);
    std::printf("open_cpu_ms          %.2f (median; CPU time of all threads)\n", open_cpu);
    std::printf("serialize_ms         %.2f (snapshot_bytes: all a cache write reads the store for)\n", serialize_ms);
    std::printf("write_ms             %.2f (writing and syncing the file)\n", write_ms);
    std::printf("json bytes           %llu (uncompressed; file %llu)\n", (unsigned long long)json_bytes, (unsigned long long)file_size);
    std::printf("snapshot bytes       %llu (%.2fx the JSON)\n", (unsigned long long)snap_bytes, json_bytes ? double(snap_bytes) / json_bytes : 0);
  });
}

}  // namespace sl::cli
