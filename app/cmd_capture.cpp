// `sightline capture [-o OUT.json.gz] [--duration S] [--live] -- COMMAND ARGS...`: runs COMMAND
// with libsightline_cupti.so injected (CUDA_INJECTION64_PATH), then converts what it recorded
// into a Kineto-compatible trace. See core/capture/README.md.
#include <CLI/CLI.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "app/commands.h"
#include "core/capture/capture_store.h"
#include "core/capture/chrome_trace.h"
#include "core/capture/live_protocol.h"
#include "core/capture/live_server.h"
#include "core/capture/trace_output.h"
#include "core/snapshot/snapshot.h"

extern char** environ;

namespace sl::cli {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::string out = "capture.json.gz";
  double duration = 0;
  bool live = false;
  std::string socket;
  std::vector<std::string> command;
};

void error(const std::string& message) { std::fprintf(stderr, "sightline capture: %s\n", message.c_str()); }

// The injection library: $SIGHTLINE_CUPTI_LIB, else next to this binary, else ../lib.
std::string find_library() {
  if (const char* p = std::getenv("SIGHTLINE_CUPTI_LIB"); p && *p) return fs::exists(p) ? p : "";
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (fs::path candidate : {exe.parent_path() / "libsightline_cupti.so",
                             exe.parent_path().parent_path() / "lib" / "libsightline_cupti.so"})
    if (fs::exists(candidate)) return candidate.string();
  return "";
}

// The CUDA driver library: without it no program can load the injection library.
bool driver_present() {
  void* lib = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib) ::dlclose(lib);
  return lib != nullptr;
}

bool viewer_listening(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (fd < 0 || path.size() >= sizeof addr.sun_path) return fd >= 0 && ::close(fd), false;
  std::strcpy(addr.sun_path, path.c_str());
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);  // the viewer sees a connection with no hello and drops it
  return ok;
}

// Runs the command with `extra` added to the environment; returns its wait status, or -1.
int run_command(const std::vector<std::string>& command, const std::vector<std::string>& extra, double duration) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    bool replaced = false;
    for (const std::string& x : extra) replaced |= kv.substr(0, kv.find('=') + 1) == x.substr(0, x.find('=') + 1);
    if (!replaced) env_text.emplace_back(kv);
  }
  env_text.insert(env_text.end(), extra.begin(), extra.end());
  std::vector<char*> envp, argv;
  for (std::string& s : env_text) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = command;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);

  // Ctrl-C reaches the program (same process group); we stay to save what it captured.
  struct sigaction ignore{}, old_int{}, old_term{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGTERM, &ignore, &old_term);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], nullptr, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  int status = -1;
  if (rc != 0) {
    error("cannot run " + command[0] + ": " + std::strerror(rc));
  } else {
    auto start = std::chrono::steady_clock::now();
    int signals_sent = 0;
    for (;;) {
      pid_t done = ::waitpid(pid, &status, duration > 0 ? WNOHANG : 0);
      if (done == pid) break;
      if (done < 0 && errno != EINTR) break;
      if (duration <= 0) continue;
      // --duration: SIGINT (Python and most programs exit cleanly, flushing the capture), then
      // SIGTERM 5 s later, SIGKILL after 10 s.
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double at[] = {duration, duration + 5, duration + 10};
      const int sig[] = {SIGINT, SIGTERM, SIGKILL};
      if (signals_sent < 3 && seconds >= at[signals_sent]) ::kill(pid, sig[signals_sent++]);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  return status;
}

std::string describe_status(int status) {
  if (status == -1) return "did not run";
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                                  strsignal(WTERMSIG(status)) + ")";
  return "stopped";
}

void print_summary(const capture::CaptureData& data, const capture::ConvertedTrace& c, const std::string& out) {
  std::set<std::pair<int64_t, int64_t>> streams;
  for (const capture::CaptureEvent& e : c.events)
    if (e.gpu) streams.insert({e.device, e.stream});
  std::printf("captured %s (pid %u): %llu kernels, %llu memcpy, %llu memset on %zu streams; %llu API calls, "
              "%llu NVTX, %llu counter samples\n",
              data.info.process_name.c_str(), data.info.pid, (unsigned long long)c.stats.kernels,
              (unsigned long long)c.stats.memcpys, (unsigned long long)c.stats.memsets, streams.size(),
              (unsigned long long)(c.stats.runtime + c.stats.driver), (unsigned long long)c.stats.markers,
              (unsigned long long)c.stats.counters);
  std::printf("dropped records: %llu (Sightline queue) + %llu (CUPTI)\n",
              (unsigned long long)data.drops.dropped_buffer, (unsigned long long)data.drops.dropped_cupti);
  for (const std::string& m : data.messages) std::printf("note: %s\n", m.c_str());
  std::printf("wrote %s\n", out.c_str());
}

int capture_main(const Options& o) {
  std::string library = find_library();
  if (library.empty()) {
    error("libsightline_cupti.so not found next to the sightline binary (or $SIGHTLINE_CUPTI_LIB): this build "
          "has no CUPTI support; rebuild with the CUDA toolkit (CUPTI) installed");
    return 1;
  }
  std::vector<std::string> env = {"CUDA_INJECTION64_PATH=" + library};
#ifdef SIGHTLINE_LIBCUPTI
  // NVTX ranges reach CUPTI only through NVTX's own injection hook.
  if (!std::getenv("NVTX_INJECTION64_PATH") && fs::exists(SIGHTLINE_LIBCUPTI))
    env.push_back(std::string("NVTX_INJECTION64_PATH=") + SIGHTLINE_LIBCUPTI);
#endif
  if (o.live) {
    std::string socket = o.socket.empty() ? capture::default_live_socket() : o.socket;
    if (!viewer_listening(socket)) {
      error("no Sightline viewer is listening on " + socket + " (start one with `sightline --live`, or pass --socket)");
      return 1;
    }
    env.push_back("SIGHTLINE_CAPTURE_SOCKET=" + socket);
    int status = run_command(o.command, env, o.duration);
    std::printf("%s %s; the capture was streamed to %s\n", o.command[0].c_str(), describe_status(status).c_str(),
                socket.c_str());
    return status == -1 ? 1 : 0;
  }

  // Refuse an unwritable output before running anything.
  {
    std::ofstream probe(o.out + ".partial", std::ios::binary | std::ios::trunc);
    if (!probe) {
      error("cannot write " + o.out + ".partial");
      return 1;
    }
  }
  std::error_code ec;
  fs::remove(o.out + ".partial", ec);
  std::string frames = (fs::temp_directory_path(ec) / ("sightline-capture-" + std::to_string(::getpid()) + ".slcf")).string();
  fs::remove(frames, ec);
  env.push_back("SIGHTLINE_CAPTURE_OUT=" + frames);

  int status = run_command(o.command, env, o.duration);
  if (status == -1) return fs::remove(frames, ec), 1;
  capture::LiveCapture received;
  bool loaded = fs::exists(frames) && fs::file_size(frames, ec) > 0;
  capture::ReadOutcome read;
  if (loaded) read = capture::read_capture_file(frames, received);
  fs::remove(frames, ec);
  if (!loaded) {
    if (!driver_present())
      error("no NVIDIA driver/GPU found: nothing was captured (" + o.command[0] + " " + describe_status(status) + ")");
    else
      error("nothing was captured: " + o.command[0] + " never initialised CUDA, so the driver never loaded the "
            "injection library (it " + describe_status(status) + ")");
    return 1;
  }
  const capture::CaptureData& data = received.data();
  if (!read.clean) {
    std::fprintf(stderr, "sightline capture: %s %s; the capture is incomplete (%s): saving the %zu records received\n",
                 o.command[0].c_str(), describe_status(status).c_str(), read.error.c_str(), data.records.size());
  }
  if (data.records.empty()) {
    error("nothing was captured: " + o.command[0] + " " + describe_status(status) +
          (data.messages.empty() ? std::string() : " (" + data.messages.front() + ")"));
    return 1;
  }
  capture::ConvertedTrace converted = capture::convert_records(data);
  std::string why;
  if (o.out.ends_with(".slsnap")) {  // a snapshot of the store (core/snapshot/snapshot.h) instead of JSON
    why = write_snapshot(*capture::build_store(data), o.out);
    if (!why.empty()) {
      error(why);
      return 1;
    }
  } else if (!capture::write_trace_file(o.out, capture::chrome_trace_json(data, converted), why)) {
    error(why);
    return 1;
  }
  print_summary(data, converted, o.out);
  return 0;
}

}  // namespace

void register_capture(CLI::App& app) {
  auto* cmd = app.add_subcommand("capture", "Run a CUDA program and record its GPU activity (CUPTI) into a trace");
  auto o = std::make_shared<Options>();
  cmd->add_option("-o,--output", o->out, "Trace to write (.json.gz or .json; .slsnap: a snapshot, core/snapshot/SNAPSHOT.md)")->capture_default_str();
  cmd->add_option("--duration", o->duration, "Stop the program (SIGINT) after S seconds")->check(CLI::PositiveNumber);
  cmd->add_flag("--live", o->live, "Stream to a running Sightline viewer instead of writing a file");
  cmd->add_option("--socket", o->socket, "The viewer's socket for --live (default $XDG_RUNTIME_DIR/sightline-live-UID.sock)");
  cmd->add_option("command", o->command, "The program and its arguments, after --")->required();
  cmd->callback([o] { exit_code = capture_main(*o); });
}

}  // namespace sl::cli
