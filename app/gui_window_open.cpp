// Opening traces into tabs (files, folders as jobs, diffs, live captures, the command line's) and
// taking finished loads in; with the recent-files list they feed.
#include <glad/gl.h>
// glad first: GLFW must not include its own GL header.
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "app/gui_window_app.h"
#include "core/capture/live_server.h"
#include "core/fleet/fleet.h"

namespace sl::gui {

void load_recent(Ui& ui) {
  std::ifstream in(state_dir() / "recent");
  std::string line;
  if (std::getline(in, line)) ui.browser.set_folder(line);
  while (std::getline(in, line))
    if (!line.empty()) ui.recent.push_back(line);
}

namespace {

void remember(Ui& ui, const std::string& path) {
  ui.recent.erase(std::remove(ui.recent.begin(), ui.recent.end(), path), ui.recent.end());
  ui.recent.insert(ui.recent.begin(), path);
  if (ui.recent.size() > 10) ui.recent.resize(10);
  std::error_code ec;
  fs::create_directories(state_dir(), ec);
  std::ofstream out(state_dir() / "recent");
  out << fs::absolute(path).parent_path().string() << "\n";
  for (const auto& r : ui.recent) out << r << "\n";
}

}  // namespace

// --- opening tabs ----------------------------------------------------------------------------

void App::start_load(Workspace& ws, const std::string& path) {
  const_cast<views::LoadState&>(ws.load_state()).started = ImGui::GetTime();
  ws.open(path, [] { glfwPostEmptyEvent(); });
}

void App::open(const std::string& path) {  // a new tab per trace; a folder is a job
  if (is_job_dir(path)) return open_job(path, {});
  if (fleet::is_fleet_file(path)) return open_fleet(path);
  Tab& t = tabs_.add();
  start_load(*t.ws, path);
  t.pending = path;
}

// One tab per job: a folder of rank traces, or the rank files of --job (dir empty).
void App::open_job(const std::string& dir, const std::vector<std::string>& files) {
  Tab& t = tabs_.add();
  t.job = std::make_unique<views::JobView>([] { glfwPostEmptyEvent(); });
  t.job->open(dir, files, rank_source_named(options_.rank_from));
  t.pending = dir.empty() ? "job" : dir;
}

// A fleet file opens as a job tab: the rank overview from its summaries.
void App::open_fleet(const std::string& path) {
  Tab& t = tabs_.add();
  t.job = std::make_unique<views::JobView>([] { glfwPostEmptyEvent(); });
  t.job->open_fleet(path);
  t.pending = path;
}

void App::open_diff(const std::string& a, const std::string& b) {
  Tab& t = tabs_.add();
  t.ws_b = std::make_unique<Workspace>();
  start_load(*t.ws, a);
  start_load(*t.ws_b, b);
  t.pending = a, t.pending_b = b;
}

// A live capture tab: listens at once; its snapshots land in the tab's workspace.
bool App::open_live(const std::string& socket, std::string& error) {
  Tab& t = tabs_.add();
  t.live = std::make_unique<views::LiveView>([] { glfwPostEmptyEvent(); });
  t.pending = "live";
  return t.live->listen(socket.empty() ? capture::default_live_socket() : socket, error);
}

void App::toggle_live() {
  auto it = std::find_if(tabs_.list.begin(), tabs_.list.end(), [](const auto& t) { return t->live != nullptr; });
  if (it == tabs_.list.end()) {
    std::string error;
    open_live(options_.socket, error);  // a failure shows in the tab
    return;
  }
  tabs_.list.erase(it);  // stops listening and removes the socket
  if (tabs_.list.empty()) tabs_.add();
  tabs_.choose(std::min<int>(tabs_.active, int(tabs_.list.size()) - 1));
}

// The files, job, diff or live capture of the command line, or the bundled sample. False when --live
// cannot listen.
bool App::open_initial_tabs() {
  if (options_.live) {
    std::string error;
    if (!open_live(options_.socket, error)) {
      std::fprintf(stderr, "sightline: --live: %s\n", error.c_str());
      tabs_.list.clear();
      return false;
    }
  }
  showing_sample_ = options_.files.empty() && options_.diff.empty() && options_.job.empty() && !options_.live;
  if (showing_sample_) open(options_.sample);
  for (const std::string& f : options_.files) open(f);
  if (!options_.job.empty()) open_job("", options_.job);
  if (options_.diff.size() == 2) open_diff(options_.diff[0], options_.diff[1]);
  else if (!options_.live) tabs_.choose(0);  // `sightline A B C` starts on A
  return true;
}

namespace {

// The snapshot cache's lines about a job's ranks (entries discarded, a failed write), on stderr
// as the CLI prints them; the same line once, so an unwritable cache is one warning per job.
void print_cache_lines(const Job& job) {
  std::set<std::string> printed;
  for (const JobRank& r : job.ranks) {
    for (const std::string& line : r.cache_notices) std::fprintf(stderr, "sightline: %s\n", line.c_str());
    if (!r.cache_warning.empty() && printed.insert(r.cache_warning).second)
      std::fprintf(stderr, "sightline: warning: %s\n", r.cache_warning.c_str());
  }
}

}  // namespace

// Takes finished loads, diffs and live snapshots into their tabs. False when a script run must
// stop because a load failed.
bool App::poll_tabs() {
  bool load_failed = false;
  for (const auto& t : tabs_.list) {
    for (auto [w, path] : {std::pair{t->ws.get(), &t->pending}, std::pair{t->ws_b.get(), &t->pending_b}}) {
      if (!w || !w->poll()) continue;
      idle_frames_ = 0;
      if (!w->fresh_notice().empty()) std::fprintf(stderr, "sightline: %s\n", w->fresh_notice().c_str());
      if (w->last_load_failed()) load_failed = true;
      else if (!showing_sample_ || *path != options_.sample) remember(ui_, *path);
    }
    if (t->ws_b && !t->diff && t->loaded()) t->diff = std::make_unique<views::DiffView>(*t->ws, *t->ws_b);
    if (t->diff && t->diff->poll()) idle_frames_ = 0;
    if (t->live && t->live->poll(*t->ws)) idle_frames_ = 0;  // a snapshot swaps in at a frame boundary
    if (t->job && t->job->poll()) {
      idle_frames_ = 0;
      if (!t->job->error().empty()) load_failed = true;
      else remember(ui_, t->pending);
      if (const Job* job = t->job->job()) print_cache_lines(*job);
    }
  }
  if (!load_failed || !automated_) return true;
  for (const auto& t : tabs_.list)
    for (Workspace* w : {t->ws.get(), t->ws_b.get()})
      if (w && !w->error().empty()) std::fprintf(stderr, "sightline: %s\n", w->error().c_str());
  for (const auto& t : tabs_.list)
    if (t->job && !t->job->error().empty()) std::fprintf(stderr, "sightline: %s\n", t->job->error().c_str());
  exit_code_ = 1;
  return false;
}

}  // namespace sl::gui
