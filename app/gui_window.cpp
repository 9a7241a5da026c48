// The desktop window: GLFW + OpenGL 3.3 + Dear ImGui around the open tabs (gui_tabs.h). Renders
// only when something changes (input, loading progress, a running script); otherwise it sleeps.
#include "app/gui.h"

#include <glad/gl.h>
// glad first: GLFW must not include its own GL header.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui/backends/imgui_impl_glfw.h>
#include <imgui/backends/imgui_impl_opengl3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "app/gui_script.h"
#include "app/gui_tabs.h"
#include "core/capture/live_server.h"
#include "core/issue_classes.h"
#include "core/json_writer.h"
#include "core/nsys_loader.h"
#include "views/details_panel.h"
#include "views/file_browser.h"
#include "views/range_stats.h"
#include "core/present/time_axis.h"

namespace sl::gui {
namespace {

namespace fs = std::filesystem;
using views::Workspace;

std::vector<std::string> g_dropped;

void on_drop(GLFWwindow*, int count, const char** paths) {
  for (int i = 0; i < count; ++i) g_dropped.emplace_back(paths[i]);
}

struct Ui {
  bool find_open = false, issues_open = false, browser_open = false;
  bool browser_compare = false;  // the browser picks run B for File > Compare with...
  char find_text[256] = "";
  bool find_regex = false;
  views::FileBrowser browser;
  views::ExportDialog exporter;
  std::vector<std::string> recent;
};

fs::path state_dir() {
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "/tmp") / ".config" / "sightline";
}

void load_recent(Ui& ui) {
  std::ifstream in(state_dir() / "recent");
  std::string line;
  if (std::getline(in, line)) ui.browser.set_folder(line);
  while (std::getline(in, line))
    if (!line.empty()) ui.recent.push_back(line);
}

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

void draw_menu(Workspace& ws, Ui& ui, GLFWwindow* window, const std::function<void(const std::string&)>& open,
               views::LiveView* live, bool live_open, const std::function<void()>& toggle_live, bool& help_open) {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open...", "Ctrl+O")) ui.browser_open = true, ui.browser_compare = false;
    if (ImGui::MenuItem("Open folder (a job)...")) ui.browser_open = true, ui.browser_compare = false;
    if (ImGui::MenuItem("Live capture...", nullptr, live_open)) toggle_live();
    if (ImGui::MenuItem("Save capture as...", nullptr, false, live && live->can_save())) live->open_save_popup();
    if (ImGui::MenuItem("Save live snapshot...", nullptr, false, live && live->can_save_snapshot())) live->open_snapshot_popup();
    if (ImGui::MenuItem("Compare with...", nullptr, false, ws.store() != nullptr))
      ui.browser_open = true, ui.browser_compare = true;
    if (ImGui::BeginMenu("Recent", !ui.recent.empty())) {
      for (const auto& r : ui.recent)
        if (ImGui::MenuItem(r.c_str())) open(r);
      ImGui::EndMenu();
    }
    if (ImGui::MenuItem("Export figure...", "Ctrl+E", false, ws.timeline() != nullptr))
      ui.exporter.open(ws.path(), active_tab(ws));
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) glfwSetWindowShouldClose(window, 1);
    ImGui::EndMenu();
  }
  if (views::TimelineView* tl = ws.timeline(); tl && ImGui::BeginMenu("View")) {
    if (ImGui::MenuItem("Colour by name", nullptr, tl->color_mode == views::ColorMode::ByName)) tl->color_mode = views::ColorMode::ByName;
    if (ImGui::MenuItem("Colour by category", nullptr, tl->color_mode == views::ColorMode::ByCategory)) tl->color_mode = views::ColorMode::ByCategory;
    if (ImGui::MenuItem("Colour by kernel type", nullptr, tl->color_mode == views::ColorMode::ByKernelType)) tl->color_mode = views::ColorMode::ByKernelType;
    ImGui::Separator();
    ImGui::MenuItem("Idle-cause overlay", nullptr, &tl->show_idle);
    ImGui::MenuItem("Launch and flow arrows", nullptr, &tl->show_flows);
    if (views::AnalysisPanel* panel = ws.panel())
      if (ImGui::MenuItem("Critical path", nullptr, panel->critical_path.overlay()))
        panel->set_critical_path_overlay(!panel->critical_path.overlay());
    ImGui::Separator();
    if (ImGui::MenuItem("Dark theme", nullptr, tl->theme == views::Theme::Dark)) {
      tl->theme = tl->theme == views::Theme::Dark ? views::Theme::Light : views::Theme::Dark;
      views::apply_theme(tl->theme);
    }
    if (ImGui::MenuItem("Find...", "Ctrl+F")) ui.find_open = true;
    if (ImGui::MenuItem("Show everything", "0")) tl->show_all();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Keys and mouse", "?")) help_open = true;
    ImGui::EndMenu();
  }
  if (TraceStore* s = ws.store()) {
    ImGui::Separator();
    ImGui::TextDisabled("%s", fs::path(ws.path()).filename().c_str());
    // Alarm colour only for issues worth a look; the half flows every Kineto trace has are
    // listed as normal, in a quiet colour (core/issue_classes.h).
    uint64_t issues = s->issues.total(), attention = attention_issues(s->issues);
    if (attention) {
      ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(213, 94, 0, 255));
      if (ImGui::SmallButton(import_badge_label(s->issues).c_str())) ui.issues_open = true;
      ImGui::PopStyleColor();
    } else if (issues || !nsys_info_text(s->meta).empty()) {
      // An Nsight report without issues still lists its unmapped tables and what it lacks there.
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
      if (ImGui::SmallButton(issues ? import_badge_label(s->issues).c_str() : "import: notes")) ui.issues_open = true;
      ImGui::PopStyleColor();
      if (ImGui::IsItemHovered() && issues)
        ImGui::SetTooltip("%llu import notes that are normal in profiler traces (half launch flows); click for details",
                          (unsigned long long)issues);
      else if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Nsight Systems tables not mapped, and what the report lacks; click for details");
    }
  }
  ImGui::EndMainMenuBar();
}

void draw_issues(Workspace& ws, Ui& ui) {
  if (!ui.issues_open || !ws.store()) return;
  ImGui::SetNextWindowSize(ImVec2(560, 320), ImGuiCond_FirstUseEver);
  if (ImGui::Begin("Import issues", &ui.issues_open)) {
    ImGui::TextWrapped("What the loader could not place exactly as written. Nothing is dropped silently: "
                       "skipped events are counted here with the byte offsets of the first examples.");
    if (ImGui::BeginTable("issues", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders)) {
      ImGui::TableSetupColumn("kind");
      ImGui::TableSetupColumn("count");
      ImGui::TableSetupColumn("first at byte");
      ImGui::TableSetupColumn("normal? why");
      ImGui::TableHeadersRow();
      const ImportIssues& issues = ws.store()->issues;
      for (size_t k = 0; k < size_t(IssueKind::kCount); ++k) {
        uint64_t n = issues.count(IssueKind(k));
        if (!n) continue;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(std::string(issue_name(IssueKind(k))).c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%llu", (unsigned long long)n);
        ImGui::TableNextColumn();
        std::string offsets;
        for (uint64_t o : issues.examples(IssueKind(k))) offsets += std::to_string(o) + " ";
        ImGui::TextUnformatted(offsets.c_str());
        ImGui::TableNextColumn();
        ImGui::TextWrapped("%s", std::string(issue_reason(IssueKind(k))).c_str());
      }
      ImGui::EndTable();
    }
    // Nsight reports: tables not mapped and what the report lacks (as `info` prints them).
    std::string nsys = nsys_info_text(ws.store()->meta);
    if (!nsys.empty()) {
      ImGui::Separator();
      ImGui::TextWrapped("%s", nsys.c_str());
    }
  }
  ImGui::End();
}

// Find over `tl`: the trace's timeline, or in a diff tab the diff's one timeline (both runs).
void draw_find(views::TimelineView* tl, Ui& ui) {
  if (!ui.find_open || !tl) return;
  ImGui::SetNextWindowPos(ImVec2(ImGui::GetIO().DisplaySize.x - 520, 60), ImGuiCond_Always);
  ImGui::SetNextWindowSize(ImVec2(500, 0), ImGuiCond_Always);
  if (ImGui::Begin("Find", &ui.find_open, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoResize)) {
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    bool enter = ImGui::InputText("##find", ui.find_text, sizeof ui.find_text, ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    bool regex_changed = ImGui::Checkbox("regex", &ui.find_regex);
    static std::string last;
    std::string now = std::string(ui.find_text) + (ui.find_regex ? "\x01" : "");
    if (now != last || regex_changed) {
      last = now;
      tl->find(ui.find_text, ui.find_regex);
    } else if (enter) {
      tl->step_match(ImGui::GetIO().KeyShift ? -1 : 1);
      ImGui::SetKeyboardFocusHere(-1);
    }
    size_t n = tl->match_count();
    ImGui::TextDisabled(n ? "%zu of %zu matches (Enter / Shift+Enter)" : "no matches", n ? tl->match_index() + 1 : 0, n);
  }
  ImGui::End();
}

// The keys and mouse gestures, in one overlay (`?`, Help > Keys and mouse).
void draw_help(bool& open) {
  if (!open) return;
  static const char* kHelp[][2] = {
      {"Mouse wheel", "zoom around the pointer"},
      {"Shift + wheel", "scroll the rows"},
      {"Drag", "pan"},
      {"Shift + drag, or drag on the ruler", "select a time range (its statistics open)"},
      {"Click a slice", "select it: details below, launch and flow arrows"},
      {"Click a process name", "fold or unfold the process"},
      {"Click \xE2\x80\x9CN more levels\xE2\x80\x9D", "unfold a deep Python stack"},
      {"Right-click a track name", "pin to top, hide, fold levels"},
      {"W / S, A / D", "zoom in / out, pan left / right"},
      {"F", "frame the selected slice"},
      {"0 or Home", "show everything"},
      {"Esc", "clear the selection and the range"},
      {"Ctrl+F", "find slices by name (Enter: next match)"},
      {"Ctrl+O / Ctrl+E", "open a trace / export a figure"},
      {"Drag the bar above the panel", "resize the panel"},
      {"?", "this help"},
  };
  ImGuiIO& io = ImGui::GetIO();
  ImGui::SetNextWindowPos(ImVec2(io.DisplaySize.x / 2, io.DisplaySize.y / 2), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  if (ImGui::Begin("Keys and mouse", &open, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse)) {
    if (ImGui::BeginTable("help", 2, ImGuiTableFlags_RowBg)) {
      for (const auto& [keys, what] : kHelp) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(keys);
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", what);
      }
      ImGui::EndTable();
    }
    ImGui::TextDisabled("The Insights tab lists what slows the trace down; each finding opens where it happens.");
  }
  ImGui::End();
}

// A cut-off trace opens with what it holds, under a banner so that nobody takes it for the whole
// run (the same words as the CLI's warning).
void draw_truncation_banner(const Truncation& cut) {
  ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(255, 224, 130, 255));
  ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(80, 40, 0, 255));
  ImGui::BeginChild("truncated", ImVec2(0, ImGui::GetTextLineHeightWithSpacing() + 2 * ImGui::GetStyle().WindowPadding.y), false);
  std::string text = describe(cut);
  text[0] = 'T';
  ImGui::TextUnformatted(("Cut-off trace. " + text + ".").c_str());
  ImGui::EndChild();
  ImGui::PopStyleColor(2);
}

void draw_loading(Workspace& ws) {
  if (!ws.loading()) return;
  const views::LoadState& s = ws.load_state();
  ImGuiIO& io = ImGui::GetIO();
  ImGui::SetNextWindowPos(ImVec2(io.DisplaySize.x / 2, io.DisplaySize.y / 2), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(460, 0));
  ImGui::Begin("Loading", nullptr, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoSavedSettings);
  double total = double(s.bytes_total.load()), done = double(s.bytes_done.load());
  float fraction = total > 0 ? float(done / total) : 0.f;
  double elapsed = ImGui::GetTime() - s.started;
  ImGui::Text("%s", s.phase.load());
  ImGui::ProgressBar(fraction, ImVec2(-1, 0));
  ImGui::Text("%.1f of %.1f MB · %llu events · %.1f s", done / 1e6, total / 1e6, (unsigned long long)s.events.load(), elapsed);
  if (fraction > 0.02f) ImGui::Text("about %.1f s left", elapsed / fraction * (1 - fraction));
  if (ImGui::Button("Cancel")) ws.cancel();
  ImGui::End();
}

// --- the window ----------------------------------------------------------------------------

GLFWwindow* create_window(const Options& options) {
  glfwSetErrorCallback([](int code, const char* text) { std::fprintf(stderr, "sightline: GLFW error %d: %s\n", code, text); });
  if (!glfwInit()) {
    std::fprintf(stderr, "sightline: cannot open a window (no display?). The subcommands (info, report, ...) need none.\n");
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
  GLFWwindow* window = glfwCreateWindow(options.width, options.height, "Sightline", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "sightline: cannot create an OpenGL 3.3 window\n");
    glfwTerminate();
    return nullptr;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(1);
  if (!gladLoadGL(glfwGetProcAddress)) {
    std::fprintf(stderr, "sightline: cannot load OpenGL functions\n");
    return nullptr;
  }
  glfwSetDropCallback(window, on_drop);
  return window;
}

void init_imgui(GLFWwindow* window) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  float scale = 1;
  glfwGetWindowContentScale(window, &scale, nullptr);
  scale = std::clamp(scale, 1.f, 3.f);
  views::apply_theme(views::Theme::Light);
  ImGui::GetStyle().ScaleAllSizes(scale);
  views::load_fonts(scale);
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330");
}

void close_window(GLFWwindow* window) {
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
}

// The script's lines: from --script, or the three that --screenshot stands for. False when the
// script file cannot be read.
bool read_script(const Options& options, std::vector<std::string>& lines) {
  if (!options.script.empty()) {
    std::ifstream in(options.script);
    if (!in) {
      std::fprintf(stderr, "sightline: cannot read script %s\n", options.script.c_str());
      return false;
    }
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  if (!options.screenshot.empty()) lines = {"wait 3", "screenshot " + options.screenshot, "quit"};
  return true;
}

// The open tabs and the window's loop over frames: each frame polls the loaders, draws the active
// tab and the floating windows, runs the script, and closes a tab the user closed.
class App {
public:
  App(const Options& options, GLFWwindow* window, std::vector<std::string> script_lines)
      : options_(options), window_(window), script_(std::move(script_lines)), automated_(!script_.done()) {
    load_recent(ui_);
    script_.set_opener([this](const std::string& path) { open(path); });
    // Scripted runs (tests, demos) always see what a first run sees.
    insights_seen_ = !automated_ && fs::exists(state_dir() / "seen_insights");
    if (!automated_) std::ifstream(state_dir() / "panel_height") >> tabs_.panel_height;
  }
  bool open_initial_tabs();
  int loop();

private:
  void start_load(Workspace& ws, const std::string& path);
  void open(const std::string& path);
  void open_job(const std::string& dir, const std::vector<std::string>& files);
  void open_diff(const std::string& a, const std::string& b);
  bool open_live(const std::string& socket, std::string& error);
  void toggle_live();

  void wait_for_events();
  bool poll_tabs();
  void handle_shortcuts(Workspace& ws);
  void toggle_help_on_key();
  void draw_tab_bar();
  void draw_tab(Tab& tab);
  void draw_trace(Tab& tab, views::TimelineView& tl);
  float lower_panel_height(Workspace& ws);
  void draw_splitter(float panel_height);
  void note_insights_seen(Workspace& ws);
  void update_title(Tab& tab);
  void draw_windows(Tab& tab);
  void draw_error_popup(Tab& tab);
  bool render_and_script();
  void close_tab();

  const Options& options_;
  GLFWwindow* window_;
  Tabs tabs_;
  Ui ui_;
  Script script_;
  bool automated_;
  bool showing_sample_ = false;
  int exit_code_ = 0;
  int idle_frames_ = 0;
  int close_ = -1;  // the tab to close at the end of this frame
  bool insights_seen_ = false;  // the first-run hint points at the Insights tab until it is opened
  std::string title_;
};

// --- opening tabs ----------------------------------------------------------------------------

void App::start_load(Workspace& ws, const std::string& path) {
  const_cast<views::LoadState&>(ws.load_state()).started = ImGui::GetTime();
  ws.open(path, [] { glfwPostEmptyEvent(); });
}

void App::open(const std::string& path) {  // a new tab per trace; a folder is a job
  if (is_job_dir(path)) return open_job(path, {});
  Tab& t = tabs_.add();
  start_load(*t.ws, path);
  t.pending = path;
}

// One tab per job: a folder of rank traces, or the rank files of --job (dir empty).
void App::open_job(const std::string& dir, const std::vector<std::string>& files) {
  Tab& t = tabs_.add();
  t.job = std::make_unique<views::JobView>([] { glfwPostEmptyEvent(); });
  t.job->open(dir, files);
  t.pending = dir.empty() ? "job" : dir;
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

// --- one frame -------------------------------------------------------------------------------

void App::wait_for_events() {
  bool any_busy = false, any_live = false;
  for (const auto& t : tabs_.list) {
    any_busy |= (t->job && t->job->loading()) || t->ws->loading() || (t->ws_b && t->ws_b->loading()) || (t->diff && !t->diff->ready());
    any_live |= t->live != nullptr;
  }
  if (any_busy || automated_ || idle_frames_ < 3) glfwPollEvents();
  else if (any_live) glfwWaitEventsTimeout(0.5);  // the status line's rate moves on its own
  else glfwWaitEvents();  // sleep until input or a wake-up from the loader
  ++idle_frames_;
  ImGuiIO& io = ImGui::GetIO();
  if (io.MouseDelta.x != 0 || io.MouseDelta.y != 0 || io.MouseWheel != 0 || ImGui::IsAnyMouseDown()) idle_frames_ = 0;
}

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

void App::handle_shortcuts(Workspace& ws) {
  ImGuiIO& io = ImGui::GetIO();
  if (!io.KeyCtrl) return;
  if (ImGui::IsKeyPressed('F', false)) ui_.find_open = true;
  if (ImGui::IsKeyPressed('O', false)) ui_.browser_open = true, ui_.browser_compare = false;
  if (ImGui::IsKeyPressed('Q', false)) glfwSetWindowShouldClose(window_, 1);
  if (ImGui::IsKeyPressed('E', false) && ws.timeline()) ui_.exporter.open(ws.path(), active_tab(ws));
}

void App::toggle_help_on_key() {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  for (ImWchar c : io.InputQueueCharacters)
    if (c == '?') tabs_.help_open = !tabs_.help_open;
  if (ImGui::IsKeyPressed(GLFW_KEY_F1, false)) tabs_.help_open = !tabs_.help_open;
}

void App::draw_tab_bar() {
  if (!ImGui::BeginTabBar("traces", ImGuiTabBarFlags_AutoSelectNewTabs | ImGuiTabBarFlags_FittingPolicyScroll)) return;
  for (size_t i = 0; i < tabs_.list.size(); ++i) {
    Tab& t = *tabs_.list[i];
    std::string label = fs::path(t.pending).filename().string();
    if (t.ws_b) label = "diff: " + label + " vs " + fs::path(t.pending_b).filename().string();
    if (t.live) label = t.ws->path().empty() ? "live capture" : t.ws->path();
    if (t.job) label = "job: " + t.job->title();
    label += "###tab" + std::to_string(t.id);
    bool keep = true;
    ImGuiTabItemFlags flags = tabs_.force_select == int(i) ? ImGuiTabItemFlags_SetSelected : 0;
    if (ImGui::BeginTabItem(label.c_str(), tabs_.list.size() > 1 ? &keep : nullptr, flags)) {
      if (tabs_.force_select < 0) tabs_.active = int(i);  // a click; code-chosen tabs win this frame
      ImGui::EndTabItem();
    }
    if (!keep) close_ = int(i);
  }
  ImGui::EndTabBar();
  // SetSelected takes effect on the next frame; until the bar agrees, keep the chosen tab.
  if (tabs_.force_frames > 0 && --tabs_.force_frames == 0) tabs_.force_select = -1;
}

constexpr float kSplitterHeight = 6;

// The lower panel's height: its tab bar alone while it has nothing to show, else what the user
// dragged it to (40 % of the window until then), leaving the timeline at least 200 px.
float App::lower_panel_height(Workspace& ws) {
  const ImGuiStyle& style = ImGui::GetStyle();
  if (panel_collapsed(ws)) return ImGui::GetFrameHeight() + style.WindowPadding.y * 2 + 2;
  float window = ImGui::GetMainViewport()->WorkSize.y;
  float h = tabs_.panel_height > 0 ? tabs_.panel_height : std::max(220.f, window * 0.4f);
  return std::clamp(h, 80.f, std::max(80.f, window - 260.f));
}

// The bar between timeline and panel: dragging it resizes the panel (remembered for all tabs, and
// outside scripts for the next session).
void App::draw_splitter(float panel_height) {
  ImVec2 at = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##panel splitter", ImVec2(ImGui::GetContentRegionAvail().x, kSplitterHeight));
  bool active = ImGui::IsItemActive(), hovered = ImGui::IsItemHovered();
  if (active) tabs_.panel_height = panel_height - ImGui::GetIO().MouseDelta.y;
  if (ImGui::IsItemDeactivated() && !automated_) {  // the next session opens with this size too
    std::error_code ec;
    fs::create_directories(state_dir(), ec);
    std::ofstream(state_dir() / "panel_height") << tabs_.panel_height << "\n";
  }
  if (active || hovered) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeNS);
  float mid = at.y + kSplitterHeight / 2, width = ImGui::GetItemRectSize().x;
  ImGui::GetWindowDrawList()->AddLine(ImVec2(at.x + width / 2 - 30, mid), ImVec2(at.x + width / 2 + 30, mid),
                                      IM_COL32(128, 128, 128, active || hovered ? 255 : 140), 3);
}

void App::note_insights_seen(Workspace& ws) {
  if (insights_seen_ || active_tab(ws) != views::PanelTab::Insights) return;
  insights_seen_ = true;
  if (automated_) return;
  std::error_code ec;
  fs::create_directories(state_dir(), ec);
  std::ofstream(state_dir() / "seen_insights") << "1\n";
}

// A trace tab: the timeline above, the details and analyses below.
void App::draw_trace(Tab& tab, views::TimelineView& tl) {
  Workspace& ws = *tab.ws;
  if (tab.live) tab.live->draw_bar(ws);
  if (showing_sample_ && ws.path() == options_.sample)
    ImGui::TextDisabled("Showing the bundled sample trace (%s). Open your own with File > Open or drop a file here.",
                        fs::path(options_.sample).filename().c_str());
  if (const std::optional<Truncation>& cut = ws.store()->issues.truncation) draw_truncation_banner(*cut);
  if (!ws.notice().empty()) {  // the snapshot cache's: wrapped, as it names two paths
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s", ws.notice().c_str());
    ImGui::PopStyleColor();
  }
  note_insights_seen(ws);
  bool collapsed = panel_collapsed(ws), hint = collapsed && !insights_seen_;
  float panel_height = lower_panel_height(ws);
  float below = panel_height + (collapsed ? 0 : kSplitterHeight) + (hint ? ImGui::GetTextLineHeightWithSpacing() : 0);
  ImVec2 avail = ImGui::GetContentRegionAvail();
  tl.draw(ImVec2(avail.x, avail.y - below));
  if (!collapsed) draw_splitter(panel_height);
  if (hint)
    ImGui::TextDisabled("New here? The Insights tab below lists what slows this trace down. Click a slice for its "
                        "details; press ? for keys and mouse.");
  ImGui::BeginChild("details", ImVec2(0, 0), true, collapsed ? ImGuiWindowFlags_NoScrollbar : 0);
  if (ws.panel()) {
    ws.panel()->draw();
  } else {  // a live capture before its analyses ran: the selection's details only
    ImGui::TextDisabled("Analyses run on demand (Run analyses) or when the capture ends.");
    views::draw_details_panel(*ws.store(), tl);
  }
  ImGui::EndChild();
}

// The main window: the tab bar and the active tab's content.
void App::draw_tab(Tab& tab) {
  ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("main", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoBringToFrontOnFocus);
  draw_tab_bar();
  Workspace& ws = *tab.ws;
  if (tab.job) {
    tab.job->draw(ImGui::GetContentRegionAvail());
  } else if (tab.diff) {
    tab.diff->draw(ImGui::GetContentRegionAvail());
  } else if (tab.ws_b) {
    bool loading = tab.ws->loading() || tab.ws_b->loading();
    ImGui::TextDisabled(loading ? "Loading both runs..." : "One of the two runs could not be loaded; nothing to compare.");
  } else if (tab.live && !ws.timeline()) {
    tab.live->draw_empty();
  } else if (views::TimelineView* tl = ws.timeline()) {
    draw_trace(tab, *tl);
  } else if (!ws.loading()) {
    ImGui::TextDisabled("No trace open. File > Open, or drop a trace (.json[.gz], .sqlite[.gz], .nsys-rep, .slsnap) here.");
  }
  ImGui::End();
}

// What floats over the main window: find, issues, range statistics, export, loading, the browser.
void App::draw_windows(Tab& tab) {
  Workspace& ws = *tab.ws;
  draw_find(tab.diff ? &tab.diff->timeline() : ws.timeline(), ui_);
  draw_issues(ws, ui_);
  if (ws.timeline() && !tab.ws_b) views::draw_range_window(*ws.store(), *ws.timeline());
  if (ui_.exporter.is_open())
    with_export_sources(tab, [&](const views::ExportSources& s) { ui_.exporter.draw(s, ws.path(), active_tab(ws)); });
  draw_loading(ws);
  if (tab.live) tab.live->draw_save_popup();
  if (tab.ws_b) draw_loading(*tab.ws_b);
  if (ui_.browser_open) {
    if (auto chosen = ui_.browser.draw(&ui_.browser_open)) {
      if (ui_.browser_compare && ws.store()) open_diff(ws.path(), *chosen);
      else open(*chosen);
    }
  }
  draw_help(tabs_.help_open);
  draw_error_popup(tab);
}

void App::draw_error_popup(Tab& tab) {
  Workspace* failed = !tab.ws->error().empty()                       ? tab.ws.get()
                      : tab.ws_b && !tab.ws_b->error().empty() ? tab.ws_b.get()
                                                               : nullptr;
  if (failed) ImGui::OpenPopup("Could not open the trace");
  if (!ImGui::BeginPopupModal("Could not open the trace", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
  if (failed) ImGui::TextUnformatted(failed->error().c_str());
  ImGui::PopTextWrapPos();
  if (ImGui::Button("OK")) {
    if (failed) failed->dismiss_error();
    if (tabs_.list.size() > 1) close_ = tabs_.active;  // the tab never got its trace
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

// Renders the frame, then lets the script look at it (a screenshot reads the back buffer) before
// it is shown. False when the script is over.
bool App::render_and_script() {
  ImGui::Render();
  int width = 0, height = 0;
  glfwGetFramebufferSize(window_, &width, &height);
  glViewport(0, 0, width, height);
  views::TimelineView* tl = tabs_.current().ws->timeline();
  bool dark = tl && tl->theme == views::Theme::Dark;
  glClearColor(dark ? 0.1f : 1.f, dark ? 0.1f : 1.f, dark ? 0.11f : 1.f, 1.f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  if (automated_ && tabs_.current().ready() && !script_.done()) {
    if (!script_.step(tabs_, ui_.exporter, width, height, exit_code_)) return false;
  } else if (automated_ && script_.done()) {
    return false;
  }
  glfwSwapBuffers(window_);
  return true;
}

// The window title names the open trace (or diff, or live capture).
void App::update_title(Tab& tab) {
  std::string title = window_title(tab);
  if (title != title_) glfwSetWindowTitle(window_, title.c_str()), title_ = title;
}

void App::close_tab() {
  if (close_ >= 0 && tabs_.list.size() > 1) {
    tabs_.list.erase(tabs_.list.begin() + close_);
    if (tabs_.active >= close_ && tabs_.active > 0) --tabs_.active;
    tabs_.choose(tabs_.active);
  }
  close_ = -1;
}

int App::loop() {
  while (!glfwWindowShouldClose(window_)) {
    wait_for_events();
    if (!poll_tabs()) break;
    for (const std::string& dropped : g_dropped) open(dropped);
    g_dropped.clear();
    Tab& tab = tabs_.current();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    handle_shortcuts(*tab.ws);
    toggle_help_on_key();
    update_title(tab);
    auto live_tab = std::find_if(tabs_.list.begin(), tabs_.list.end(), [](const auto& t) { return t->live != nullptr; });
    draw_menu(*tab.ws, ui_, window_, [this](const std::string& p) { open(p); }, tab.live.get(),
              live_tab != tabs_.list.end(), [this] { toggle_live(); }, tabs_.help_open);
    draw_tab(tab);
    draw_windows(tab);
    if (!render_and_script()) break;
    close_tab();
  }
  return exit_code_;
}

// Screen geometry of the last frame (pixels from the window's top left), for the layout tests.
void write_layout(JsonWriter& w, Workspace& ws, views::TimelineView& tl) {
  const TraceStore& s = *ws.store();
  auto rect = [&](const char* key, views::TimelineView::Rect r) {
    w.key(key).begin_array().value(double(r.x0)).value(double(r.y0)).value(double(r.x1)).value(double(r.y1)).end_array();
  };
  w.key("layout").begin_object();
  w.field("window_width", double(ImGui::GetIO().DisplaySize.x)).field("window_height", double(ImGui::GetIO().DisplaySize.y));
  w.field("panel_collapsed", panel_collapsed(ws));
  rect("legend_rect", tl.legend_rect());
  rect("rows_rect", tl.rows_rect());
  auto [data_start, data_end] = tl.data_range();
  w.field("data_start_ns", data_start).field("data_end_ns", data_end);
  uint32_t folded = 0;
  for (uint32_t t = 0; t < s.tracks.size(); ++t) folded += tl.folded(t);
  w.field("folded_tracks", folded);
  w.key("gpu_rows").begin_array();  // GPU streams with work and where their first lane was drawn
  for (uint32_t t = 0; t < s.tracks.size(); ++t)
    if (s.tracks[t].kind == TrackKind::GpuStream && s.tracks[t].gpu_work)
      w.begin_object().field("track", t).field("y", double(tl.track_screen_y(t))).end_object();
  w.end_array().end_object();
}

}  // namespace

std::string state_json(Workspace& ws, const std::function<void(JsonWriter&)>& extra) {
  JsonWriter w;
  w.begin_object();
  if (extra) extra(w);
  w.field("path", ws.path()).field("loading", ws.loading()).field("error", ws.error());
  w.field("source", trace_origin_name(ws.origin())).field("notice", ws.notice());
  if (views::TimelineView* tl = ws.timeline()) {
    const TraceStore& s = *ws.store();
    const views::TimelineStats& st = tl->stats();
    w.field("view_start_ns", tl->view_start()).field("view_end_ns", tl->view_end());
    w.field("events", s.counts.events);
    w.key("truncated");
    if (const std::optional<Truncation>& cut = s.issues.truncation)
      w.begin_object().field("byte_offset", cut->byte_offset).field("events", cut->events).field("banner", describe(*cut)).end_object();
    else
      w.null();
    w.key("selected");
    if (tl->selected().valid()) {
      SliceRef sel = tl->selected();
      w.begin_object().field("name", s.name(sel)).field("start_ns", s.start(sel)).field("gpu", s.is_gpu(sel));
      w.field("track", sel.track).field("index", sel.index).field("dur_ns", s.dur(sel));
      SliceRef launch = s.is_gpu(sel) ? s.launch_of(sel) : SliceRef{};
      w.key("launch");
      launch.valid() ? w.value(s.name(launch)) : w.null();
      w.field("activities", uint64_t(s.activities_of(sel).size()));
      w.field("links", uint64_t(tl->selection_links().all().size())).end_object();
    } else {
      w.null();
    }
    w.field("highlights", uint64_t(tl->highlights().size()));
    // The critical-path overlay's slices (all of them: a path has at most a few thousand), and
    // how many outlines and arrows the last frame drew.
    w.key("path_slices").begin_array();
    for (SliceRef p : tl->path_slices())
      w.begin_object().field("track", p.track).field("index", p.index).field("name", s.name(p)).field("start_ns", s.start(p))
          .field("dur_ns", s.dur(p)).end_object();
    w.end_array();
    w.field("path_outlined", st.path_outlined).field("path_links_drawn", st.path_links_drawn);
    w.field("flow_links_drawn", st.flow_links_drawn);
    // The highlighted slices themselves (capped), so tests can compare them with an analysis.
    w.key("highlighted").begin_array();
    for (size_t i = 0; i < tl->highlights().size() && i < 20000; ++i) {
      SliceRef h = tl->highlights()[i];
      w.begin_object().field("track", h.track).field("index", h.index).field("name", s.name(h)).field("start_ns", s.start(h));
      w.field("dur_ns", s.dur(h)).end_object();
    }
    w.end_array();
    w.key("view");
    ws.panel() ? ws.panel()->write_state(w) : void(w.null());
    w.field("rows_drawn", st.rows_drawn).field("slices_drawn", st.slices_drawn).field("folded_blocks", st.folded_blocks);
    w.field("gaps_drawn", st.gaps_drawn).field("draw_commands", st.draw_commands);
    w.key("gaps_per_track").begin_object();
    for (uint32_t t = 0; t < s.tracks.size(); ++t)
      if (uint32_t n = tl->gaps_visible_on(t)) w.field(std::to_string(t), n);
    w.end_object();
    write_layout(w, ws, *tl);
  }
  w.end_object();
  return w.str();
}

int run(const Options& options) {
  GLFWwindow* window = create_window(options);
  if (!window) return 1;
  init_imgui(window);
  std::vector<std::string> script;
  if (!read_script(options, script)) return 2;
  App app(options, window, std::move(script));
  int exit_code = app.open_initial_tabs() ? app.loop() : 1;
  close_window(window);
  return exit_code;
}

}  // namespace sl::gui
