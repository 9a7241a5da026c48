// The desktop window: GLFW + OpenGL 3.3 + Dear ImGui around a Workspace. Renders only when
// something changes (input, loading progress, a running script); otherwise it sleeps.
#include "app/gui.h"

#include <glad/gl.h>
// glad first: GLFW must not include its own GL header.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui/backends/imgui_impl_glfw.h>
#include <imgui/backends/imgui_impl_opengl3.h>
#include <stb/stb_image_write.h>

#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/capture/live_server.h"
#include "core/json_writer.h"
#include "views/details_panel.h"
#include "views/diff_view.h"
#include "views/export_dialog.h"
#include "views/file_browser.h"
#include "views/job_view.h"
#include "views/live_view.h"
#include "views/range_stats.h"
#include "views/time_axis.h"
#include "views/workspace.h"

namespace sl::gui {
namespace {

namespace fs = std::filesystem;
using views::Workspace;

std::vector<std::string> g_dropped;

void on_drop(GLFWwindow*, int count, const char** paths) {
  for (int i = 0; i < count; ++i) g_dropped.emplace_back(paths[i]);
}

bool save_screenshot(const std::string& path, int width, int height) {
  std::vector<unsigned char> pixels(size_t(width) * height * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  std::vector<unsigned char> flipped(pixels.size());
  for (int y = 0; y < height; ++y)
    std::copy_n(&pixels[size_t(height - 1 - y) * width * 4], size_t(width) * 4, &flipped[size_t(y) * width * 4]);
  for (size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;
  return stbi_write_png(path.c_str(), width, height, 4, flipped.data(), width * 4) != 0;
}

// One tab of the window: one trace, or (a diff tab) two runs and the diff view between them.
struct Tab {
  std::unique_ptr<Workspace> ws = std::make_unique<Workspace>();
  std::unique_ptr<Workspace> ws_b;        // the second run of a diff tab
  std::unique_ptr<views::DiffView> diff;  // declared last: destroyed before the workspaces
  std::unique_ptr<views::LiveView> live;  // a live capture tab: snapshots land in `ws`
  std::unique_ptr<views::JobView> job;    // a job tab (every rank of a run); `ws` stays empty
  std::string pending, pending_b;
  int id = 0;
  bool loaded() const { return ws->timeline() && !ws->loading() && (!ws_b || (ws_b->timeline() && !ws_b->loading())); }
  // Ready for the script: loaded, and a diff tab's diff computed. A live tab is always ready
  // (`waitlive` waits for its data).
  bool ready() const { return live || (job && job->ready()) || (loaded() && (!ws_b || (diff && (diff->ready() || !diff->error().empty())))); }
};

// Calls `use` with what the export reads in `tab`: its timeline and analyses, or in a diff tab both
// runs and their diff (with run A's timeline). False when there is nothing to export yet.
template <class F>
bool with_export_sources(Tab& tab, F use) {
  Workspace& ws = *tab.ws;
  if (!ws.timeline() || !ws.store()) return false;
  views::ExportSources sources{*ws.store(), ws.model(), *ws.timeline(), ws.timeline()->show_idle};
  if (!tab.ws_b) return use(sources), true;
  if (!tab.diff || !tab.diff->result() || !tab.ws_b->store()) return false;
  views::DiffSources diff{*ws.store(), *tab.ws_b->store(), *tab.diff->result(), ws.path(), tab.ws_b->path(),
                          ws.timeline()->view_start(), ws.timeline()->view_end()};
  sources.diff = &diff;
  use(sources);
  return true;
}

struct Tabs {
  std::vector<std::unique_ptr<Tab>> list;
  int active = 0;
  int force_select = -1;  // a tab chosen by code (script, open) rather than by a click
  int force_frames = 0;
  int next_id = 1;
  Tab& current() { return *list[size_t(active)]; }
  void choose(int i) { active = force_select = i, force_frames = 3; }
  Tab& add() {
    list.push_back(std::make_unique<Tab>());
    list.back()->id = next_id++;
    choose(int(list.size()) - 1);
    return *list.back();
  }
};

// Automation (cli.md "GUI automation"): one command per line, run once the trace is loaded.
class Script {
public:
  explicit Script(std::vector<std::string> lines) : lines_(lines.begin(), lines.end()) {}
  bool done() const { return lines_.empty() && wait_ == 0; }
  // Runs commands until one needs frames to pass. Returns false to quit with `exit_code`.
  bool step(Tabs& tabs, views::ExportDialog& exporter, int width, int height, int& exit_code);

private:
  std::deque<std::string> lines_;
  int wait_ = 0;
  double live_deadline_ = -1;  // waitlive: when to give up (glfwGetTime seconds)
};

// `hide ROW`: every track whose label (as the figures name rows: "stream 7", "thread 12") is ROW.
size_t hide_rows(const TraceStore& store, views::TimelineView& tl, const std::string& row) {
  auto lower = [](std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  size_t n = 0;
  for (uint32_t t = 0; t < store.tracks.size(); ++t)
    if (lower(fig::track_label(store, t)) == lower(row)) tl.set_hidden(t, true), ++n;
  return n;
}

// Two times with units ("12.5ms 14ms"; raw numbers are µs), as `zoom` and `range` take them.
bool read_times(std::istringstream& in, double& t0, double& t1) {
  std::string a, b;
  in >> a >> b;
  return views::parse_time(a, t0) && views::parse_time(b, t1);
}

// The lower panel's tab; a live capture before its first analysis has no panel yet.
views::PanelTab active_tab(Workspace& ws) { return ws.panel() ? ws.panel()->active() : views::PanelTab::Details; }

// `export PATH [screen|selection|latency|breakdown|idle] [width=PX] [scale=S] [theme=T]`.
std::string script_export(std::istringstream& in, Tab& tab, views::ExportDialog& exporter) {
  Workspace& ws = *tab.ws;
  std::string path, token;
  if (!(in >> path)) {  // no file: open the dialog (for screenshots of it)
    exporter.open(ws.path(), active_tab(ws));
    return "";
  }
  views::ExportWhat what = views::ExportWhat::Screen;
  views::ExportRequest q = exporter.request(what, path, ws.path());
  while (in >> token) {
    size_t eq = token.find('=');
    std::string key = token.substr(0, eq), value = eq == std::string::npos ? "" : token.substr(eq + 1);
    if (eq == std::string::npos && views::parse_export_what(token, q.what)) continue;
    if (key == "width") q.width = std::strtof(value.c_str(), nullptr);
    else if (key == "scale") q.scale = std::strtod(value.c_str(), nullptr);
    else if (key == "theme" && fig::parse_theme(value, q.theme)) continue;
    else return "unknown export argument '" + token + "'";
  }
  if (tab.ws_b) q.what = views::ExportWhat::Diff;  // a diff tab's one figure
  const views::ExportResult* r = nullptr;
  if (!with_export_sources(tab, [&](const views::ExportSources& s) { r = &exporter.run(s, q); }))
    return "nothing to export yet";
  std::fprintf(stderr, "sightline: %s (%.1f ms)\n", r->summary().c_str(), r->ms);
  return r->ok ? "" : r->error;
}

bool Script::step(Tabs& tabs, views::ExportDialog& exporter, int width, int height, int& exit_code) {
  if (wait_ > 0) return --wait_, true;
  while (!lines_.empty()) {
    std::string line = lines_.front();
    lines_.pop_front();
    std::istringstream in(line);
    std::string command;
    in >> command;
    Workspace& ws = *tabs.current().ws;
    views::DiffView* diff = tabs.current().diff.get();
    views::TimelineView* tl = ws.timeline();
    if (command.empty() || command[0] == '#') continue;
    if (command == "quit") return false;
    if (command == "wait") {
      in >> wait_;
      return true;
    }
    if (command == "tab") {
      int n = -1;
      if (!(in >> n) || n < 0 || n >= int(tabs.list.size())) {
        std::fprintf(stderr, "sightline: script: no tab '%s' (%zu open, numbered from 0)\n", line.c_str(), tabs.list.size());
        exit_code = 2;
        return false;
      }
      tabs.choose(n);
      wait_ = 2;
      return true;  // the next command waits until that tab is loaded
    }
    if (command == "view") {
      std::string name;
      in >> name;
      if (name == "diff") {
        auto it = std::find_if(tabs.list.begin(), tabs.list.end(), [](const auto& t) { return t->ws_b != nullptr; });
        if (it == tabs.list.end()) {
          std::fprintf(stderr, "sightline: script: no diff is open (sightline --diff A B, or File > Compare with...)\n");
          exit_code = 1;
          return false;
        }
        tabs.choose(int(it - tabs.list.begin()));
        wait_ = 2;
        return true;
      }
      in.clear();
      in.str(line);
      in >> command;
    }
    if (command.rfind("diff", 0) == 0) {
      if (!diff || !diff->ready()) {
        std::fprintf(stderr, "sightline: script: '%s' needs a diff tab with a computed diff%s\n", line.c_str(),
                     diff ? (": " + diff->error()).c_str() : "");
        exit_code = 1;
        return false;
      }
      std::string arg;
      std::getline(in >> std::ws, arg);
      if (command == "diffrow") {
        char* end = nullptr;
        unsigned long n = std::strtoul(arg.c_str(), &end, 10);
        if (arg.empty() || *end || !diff->select_row(n)) {
          std::fprintf(stderr, "sightline: script: no diff row '%s' (%zu rows)\n", arg.c_str(), diff->rows().size());
          exit_code = 1;
          return false;
        }
      } else if (command == "diffgroup") {
        diff->set_grouped(arg == "on");
      } else if (command == "difffilter") {
        diff->set_filter(arg);
      } else if (command == "diffoffset") {
        double ns = 0;
        if (!views::parse_time(arg, ns)) {
          std::fprintf(stderr, "sightline: script: bad offset in '%s'\n", line.c_str());
          exit_code = 2;
          return false;
        }
        diff->set_offset(ns);
      } else if (command == "diffcolors") {
        diff->diff_colors = arg != "off";
      } else {
        std::fprintf(stderr, "sightline: script: unknown command '%s'\n", command.c_str());
        exit_code = 2;
        return false;
      }
      wait_ = 2;
      return true;
    }
    if (command == "waitlive" || command == "savelive") {
      views::LiveView* live = tabs.current().live.get();
      if (!live) {
        std::fprintf(stderr, "sightline: script: '%s' needs a live capture tab (sightline --live)\n", line.c_str());
        exit_code = 1;
        return false;
      }
      std::string what;
      in >> what;
      if (command == "savelive") {
        if (std::string e = live->save(what, true); !e.empty()) {
          std::fprintf(stderr, "sightline: script: %s\n", e.c_str());
          exit_code = 1;
          return false;
        }
        wait_ = 2;
        return true;
      }
      // waitlive KERNELS|end [TIMEOUT_S]: until the shown store has that many kernels, or the
      // capture ended or broke and its final snapshot is shown.
      double timeout = 30;
      in >> timeout;
      bool until_end = what == "end";
      char* endp = nullptr;
      unsigned long long want = std::strtoull(what.c_str(), &endp, 10);
      if (!until_end && (what.empty() || *endp)) {
        std::fprintf(stderr, "sightline: script: waitlive wants KERNELS or 'end' in '%s'\n", line.c_str());
        exit_code = 2;
        return false;
      }
      if (until_end ? live->final_shown() : live->store_kernels() >= want) {
        live_deadline_ = -1;
        wait_ = 2;
        return true;
      }
      if (live_deadline_ < 0) live_deadline_ = glfwGetTime() + timeout;
      if (glfwGetTime() > live_deadline_) {
        std::fprintf(stderr, "sightline: script: '%s' timed out with %llu kernels shown\n", line.c_str(),
                     (unsigned long long)live->store_kernels());
        exit_code = 1;
        return false;
      }
      lines_.push_front(line);  // not yet: look again next frame
      return true;
    }
    if (views::JobView* job = tabs.current().job.get(); job && views::JobView::handles(command)) {
      std::string args;
      std::getline(in >> std::ws, args);
      if (std::string error = job->command(command, args); !error.empty()) {
        std::fprintf(stderr, "sightline: script: %s in '%s'\n", error.c_str(), line.c_str());
        exit_code = 1;
        return false;
      }
      wait_ = 2;
      return true;
    }
    if (!tl && command != "screenshot" && command != "state") {  // those two need no trace (an empty live tab)
      std::fprintf(stderr, "sightline: script: no trace is open for '%s'\n", line.c_str());
      exit_code = 1;
      return false;
    }
    double t0 = 0, t1 = 0;
    if ((command == "zoom" || command == "range") && !read_times(in, t0, t1)) {
      std::fprintf(stderr, "sightline: script: bad times in '%s'\n", line.c_str());
      exit_code = 2;
      return false;
    }
    if (command == "zoom") {
      tl->zoom_to(t0, t1);
    } else if (command == "select") {
      // NAME is the rest of the line (kernel names have spaces), optionally quoted, optionally
      // followed by the occurrence index N.
      std::string name;
      std::getline(in >> std::ws, name);
      size_t n = 0, space = name.find_last_of(' ');
      if (space != std::string::npos && name.find_first_not_of("0123456789", space + 1) == std::string::npos &&
          space + 1 < name.size()) {
        n = std::stoul(name.substr(space + 1));
        name.erase(space);
      }
      if (name.size() >= 2 && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
      StringId id = ws.store()->strings.find(name);
      auto refs = id == StringPool::kNotFound ? std::span<const SliceRef>{} : ws.store()->slices_named(id);
      if (n >= refs.size()) {
        std::fprintf(stderr, "sightline: script: no slice '%s' #%zu\n", name.c_str(), n);
        exit_code = 1;
        return false;
      }
      std::vector<SliceRef> sorted(refs.begin(), refs.end());
      std::sort(sorted.begin(), sorted.end(), [&](SliceRef x, SliceRef y) { return ws.store()->start(x) < ws.store()->start(y); });
      tl->select(sorted[n], true);
    } else if (command == "find") {
      std::string text;
      std::getline(in >> std::ws, text);
      tl->find(text);
    } else if ((command == "view" || command == "brush" || command == "pattern" || command == "operator" ||
                command == "insight" || command == "idle") && !ws.panel()) {
      std::fprintf(stderr, "sightline: script: '%s': the analyses have not run yet (live capture)\n", line.c_str());
      exit_code = 1;
      return false;
    } else if (command == "view") {
      std::string name;
      in >> name;
      if (!ws.panel()->show(name)) {
        std::fprintf(stderr, "sightline: script: unknown view '%s' (timeline, latency, patterns, idle, breakdown, insights, diff)\n", name.c_str());
        exit_code = 2;
        return false;
      }
    } else if (command == "brush" || command == "pattern" || command == "operator" || command == "insight" || command == "idle") {
      std::string args;
      std::getline(in >> std::ws, args);
      if (std::string error = ws.panel()->command(command, args); !error.empty()) {
        std::fprintf(stderr, "sightline: script: %s in '%s'\n", error.c_str(), line.c_str());
        exit_code = 1;
        return false;
      }
    } else if (command == "hide") {
      std::string row;
      std::getline(in >> std::ws, row);
      if (hide_rows(*ws.store(), *tl, row) == 0) {
        std::fprintf(stderr, "sightline: script: no row labelled '%s'\n", row.c_str());
        exit_code = 1;
        return false;
      }
    } else if (command == "range") {
      tl->set_range(TimeNs(t0), TimeNs(t1));
    } else if (command == "export") {
      if (std::string error = script_export(in, tabs.current(), exporter); !error.empty()) {
        std::fprintf(stderr, "sightline: script: %s in '%s'\n", error.c_str(), line.c_str());
        exit_code = 1;
        return false;
      }
    } else if (command == "screenshot") {
      std::string path;
      in >> path;
      if (!save_screenshot(path, width, height)) {
        std::fprintf(stderr, "sightline: could not write %s\n", path.c_str());
        exit_code = 1;
        return false;
      }
    } else if (command == "state") {  // for tests: what the views show, as JSON
      std::string path;
      in >> path;
      std::ofstream(path) << state_json(ws, [&](JsonWriter& w) {
        w.field("tabs", uint64_t(tabs.list.size())).field("active_tab", int64_t(tabs.active));
        w.key("tab_paths").begin_array();
        for (const auto& t : tabs.list) w.value(t->ws->path());
        w.end_array().key("diff");
        diff ? diff->write_state(w) : void(w.null());
        w.key("live");
        tabs.current().live ? tabs.current().live->write_state(w, ws) : void(w.null());
        w.key("job");
        tabs.current().job ? tabs.current().job->write_state(w) : void(w.null());
        w.key("last_export");
        exporter.write_state(w, ws.store());
      }) << "\n";
    } else {
      std::fprintf(stderr, "sightline: script: unknown command '%s'\n", command.c_str());
      exit_code = 2;
      return false;
    }
    wait_ = 2;  // let the views draw the result before the next command looks at it
    return true;
  }
  return true;
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
               views::LiveView* live, bool live_open, const std::function<void()>& toggle_live) {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open...", "Ctrl+O")) ui.browser_open = true, ui.browser_compare = false;
    if (ImGui::MenuItem("Open folder (a job)...")) ui.browser_open = true, ui.browser_compare = false;
    if (ImGui::MenuItem("Live capture...", nullptr, live_open)) toggle_live();
    if (ImGui::MenuItem("Save capture as...", nullptr, false, live && live->can_save())) live->open_save_popup();
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
    ImGui::Separator();
    if (ImGui::MenuItem("Dark theme", nullptr, tl->theme == views::Theme::Dark)) {
      tl->theme = tl->theme == views::Theme::Dark ? views::Theme::Light : views::Theme::Dark;
      views::apply_theme(tl->theme);
    }
    if (ImGui::MenuItem("Find...", "Ctrl+F")) ui.find_open = true;
    if (ImGui::MenuItem("Show everything", "0")) tl->show_all();
    ImGui::EndMenu();
  }
  if (TraceStore* s = ws.store()) {
    ImGui::Separator();
    ImGui::TextDisabled("%s", fs::path(ws.path()).filename().c_str());
    uint64_t issues = s->issues.total();
    if (issues) {
      ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(213, 94, 0, 255));
      if (ImGui::SmallButton((std::to_string(issues) + " import issues").c_str())) ui.issues_open = true;
      ImGui::PopStyleColor();
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
    if (ImGui::BeginTable("issues", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders)) {
      ImGui::TableSetupColumn("kind");
      ImGui::TableSetupColumn("count");
      ImGui::TableSetupColumn("first at byte");
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
      }
      ImGui::EndTable();
    }
  }
  ImGui::End();
}

void draw_find(Workspace& ws, Ui& ui) {
  views::TimelineView* tl = ws.timeline();
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
    size_t n = tl->highlights().size();
    ImGui::TextDisabled(n ? "%zu of %zu matches (Enter / Shift+Enter)" : "no matches", n ? tl->match_index() + 1 : 0, n);
  }
  ImGui::End();
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

}  // namespace

std::string state_json(Workspace& ws, const std::function<void(JsonWriter&)>& extra) {
  JsonWriter w;
  w.begin_object();
  if (extra) extra(w);
  w.field("path", ws.path()).field("loading", ws.loading()).field("error", ws.error());
  if (views::TimelineView* tl = ws.timeline()) {
    const TraceStore& s = *ws.store();
    const views::TimelineStats& st = tl->stats();
    w.field("view_start_ns", tl->view_start()).field("view_end_ns", tl->view_end());
    w.key("selected");
    if (tl->selected().valid()) {
      SliceRef sel = tl->selected();
      w.begin_object().field("name", s.name(sel)).field("start_ns", s.start(sel)).field("gpu", s.is_gpu(sel));
      w.field("track", sel.track).field("index", sel.index).field("dur_ns", s.dur(sel));
      SliceRef launch = s.is_gpu(sel) ? s.launch_of(sel) : SliceRef{};
      w.key("launch");
      launch.valid() ? w.value(s.name(launch)) : w.null();
      w.field("activities", uint64_t(s.activities_of(sel).size())).end_object();
    } else {
      w.null();
    }
    w.field("highlights", uint64_t(tl->highlights().size()));
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
  }
  w.end_object();
  return w.str();
}

int run(const Options& options) {
  glfwSetErrorCallback([](int code, const char* text) { std::fprintf(stderr, "sightline: GLFW error %d: %s\n", code, text); });
  if (!glfwInit()) {
    std::fprintf(stderr, "sightline: cannot open a window (no display?). The subcommands (info, report, ...) need none.\n");
    return 1;
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
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(1);
  if (!gladLoadGL(glfwGetProcAddress)) {
    std::fprintf(stderr, "sightline: cannot load OpenGL functions\n");
    return 1;
  }
  glfwSetDropCallback(window, on_drop);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  float scale = 1;
  glfwGetWindowContentScale(window, &scale, nullptr);
  scale = std::clamp(scale, 1.f, 3.f);
  views::apply_theme(views::Theme::Light);
  ImGui::GetStyle().ScaleAllSizes(scale);
  views::load_fonts(scale);
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330");

  Tabs tabs;
  Ui ui;
  load_recent(ui);
  auto wake = [] { glfwPostEmptyEvent(); };
  auto start_load = [&](Workspace& ws, const std::string& path) {
    const_cast<views::LoadState&>(ws.load_state()).started = ImGui::GetTime();
    ws.open(path, wake);
  };
  auto open_job = [&](const std::string& dir, const std::vector<std::string>& files) {  // one tab per job
    Tab& t = tabs.add();
    t.job = std::make_unique<views::JobView>(wake);
    t.job->open(dir, files);
    t.pending = dir.empty() ? "job" : dir;
  };
  auto open = [&](const std::string& path) {  // a new tab per trace; a folder is a job
    if (is_job_dir(path)) return open_job(path, {});
    Tab& t = tabs.add();
    start_load(*t.ws, path);
    t.pending = path;
  };
  auto open_diff = [&](const std::string& a, const std::string& b) {
    Tab& t = tabs.add();
    t.ws_b = std::make_unique<Workspace>();
    start_load(*t.ws, a);
    start_load(*t.ws_b, b);
    t.pending = a, t.pending_b = b;
  };
  // A live capture tab: listens at once; its snapshots land in the tab's workspace.
  auto open_live = [&](const std::string& socket, std::string& error) {
    Tab& t = tabs.add();
    t.live = std::make_unique<views::LiveView>(wake);
    t.pending = "live";
    return t.live->listen(socket.empty() ? capture::default_live_socket() : socket, error);
  };
  auto toggle_live = [&] {
    auto it = std::find_if(tabs.list.begin(), tabs.list.end(), [](const auto& t) { return t->live != nullptr; });
    if (it == tabs.list.end()) {
      std::string error;
      open_live(options.socket, error);  // a failure shows in the tab
      return;
    }
    tabs.list.erase(it);  // stops listening and removes the socket
    if (tabs.list.empty()) tabs.add();
    tabs.choose(std::min<int>(tabs.active, int(tabs.list.size()) - 1));
  };
  if (options.live) {
    std::string error;
    if (!open_live(options.socket, error)) {
      std::fprintf(stderr, "sightline: --live: %s\n", error.c_str());
      tabs.list.clear();
      ImGui_ImplOpenGL3_Shutdown();
      ImGui_ImplGlfw_Shutdown();
      ImGui::DestroyContext();
      glfwDestroyWindow(window);
      glfwTerminate();
      return 1;
    }
  }
  bool showing_sample = options.files.empty() && options.diff.empty() && options.job.empty() && !options.live;
  if (showing_sample) open(options.sample);
  for (const std::string& f : options.files) open(f);
  if (!options.job.empty()) open_job("", options.job);
  if (options.diff.size() == 2) open_diff(options.diff[0], options.diff[1]);
  else if (!options.live) tabs.choose(0);  // `sightline A B C` starts on A

  std::vector<std::string> script_lines;
  if (!options.script.empty()) {
    std::ifstream in(options.script);
    if (!in) {
      std::fprintf(stderr, "sightline: cannot read script %s\n", options.script.c_str());
      return 2;
    }
    for (std::string line; std::getline(in, line);) script_lines.push_back(line);
  }
  if (!options.screenshot.empty()) script_lines = {"wait 3", "screenshot " + options.screenshot, "quit"};
  bool automated = !script_lines.empty();
  Script script(script_lines);
  int exit_code = 0;
  int idle_frames = 0;

  while (!glfwWindowShouldClose(window)) {
    bool any_busy = false, any_live = false;
    for (const auto& t : tabs.list) any_busy |= (t->job && t->job->loading()) || t->ws->loading() || (t->ws_b && t->ws_b->loading()) || (t->diff && !t->diff->ready());
    for (const auto& t : tabs.list) any_live |= t->live != nullptr;
    bool busy = any_busy || automated || idle_frames < 3;
    if (busy) glfwPollEvents();
    else if (any_live) glfwWaitEventsTimeout(0.5);  // the status line's rate moves on its own
    else glfwWaitEvents();  // sleep until input or a wake-up from the loader
    ++idle_frames;
    if (io.MouseDelta.x != 0 || io.MouseDelta.y != 0 || io.MouseWheel != 0 || ImGui::IsAnyMouseDown()) idle_frames = 0;
    bool load_failed = false;
    for (const auto& t : tabs.list) {
      for (auto [w, path] : {std::pair{t->ws.get(), &t->pending}, std::pair{t->ws_b.get(), &t->pending_b}}) {
        if (!w || !w->poll()) continue;
        idle_frames = 0;
        if (w->last_load_failed()) load_failed = true;
        else if (!showing_sample || *path != options.sample) remember(ui, *path);
      }
      if (t->ws_b && !t->diff && t->loaded()) t->diff = std::make_unique<views::DiffView>(*t->ws, *t->ws_b);
      if (t->diff && t->diff->poll()) idle_frames = 0;
      if (t->live && t->live->poll(*t->ws)) idle_frames = 0;  // a snapshot swaps in at a frame boundary
      if (t->job && t->job->poll()) {
        idle_frames = 0;
        if (!t->job->error().empty()) load_failed = true;
        else remember(ui, t->pending);
      }
    }
    if (load_failed && automated) {
      for (const auto& t : tabs.list)
        for (Workspace* w : {t->ws.get(), t->ws_b.get()})
          if (w && !w->error().empty()) std::fprintf(stderr, "sightline: %s\n", w->error().c_str());
      for (const auto& t : tabs.list)
        if (t->job && !t->job->error().empty()) std::fprintf(stderr, "sightline: %s\n", t->job->error().c_str());
      exit_code = 1;
      break;
    }
    for (const std::string& dropped : g_dropped) open(dropped);
    g_dropped.clear();
    Tab& tab = tabs.current();
    Workspace& ws = *tab.ws;

    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    if (io.KeyCtrl && ImGui::IsKeyPressed('F', false)) ui.find_open = true;
    if (io.KeyCtrl && ImGui::IsKeyPressed('O', false)) ui.browser_open = true, ui.browser_compare = false;
    if (io.KeyCtrl && ImGui::IsKeyPressed('Q', false)) glfwSetWindowShouldClose(window, 1);
    if (io.KeyCtrl && ImGui::IsKeyPressed('E', false) && ws.timeline()) ui.exporter.open(ws.path(), active_tab(ws));
    auto live_tab = std::find_if(tabs.list.begin(), tabs.list.end(), [](const auto& t) { return t->live != nullptr; });
    draw_menu(ws, ui, window, open, tab.live.get(), live_tab != tabs.list.end(), toggle_live);

    ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(vp->WorkPos);
    ImGui::SetNextWindowSize(vp->WorkSize);
    ImGui::Begin("main", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoBringToFrontOnFocus);
    int close = -1;
    if (ImGui::BeginTabBar("traces", ImGuiTabBarFlags_AutoSelectNewTabs | ImGuiTabBarFlags_FittingPolicyScroll)) {
      for (size_t i = 0; i < tabs.list.size(); ++i) {
        Tab& t = *tabs.list[i];
        std::string label = fs::path(t.pending).filename().string();
        if (t.ws_b) label = "diff: " + label + " vs " + fs::path(t.pending_b).filename().string();
        if (t.live) label = t.ws->path().empty() ? "live capture" : t.ws->path();
        if (t.job) label = "job: " + t.job->title();
        label += "###tab" + std::to_string(t.id);
        bool keep = true;
        ImGuiTabItemFlags flags = tabs.force_select == int(i) ? ImGuiTabItemFlags_SetSelected : 0;
        if (ImGui::BeginTabItem(label.c_str(), tabs.list.size() > 1 ? &keep : nullptr, flags)) {
          if (tabs.force_select < 0) tabs.active = int(i);  // a click; code-chosen tabs win this frame
          ImGui::EndTabItem();
        }
        if (!keep) close = int(i);
      }
      ImGui::EndTabBar();
    }
    // SetSelected takes effect on the next frame; until the bar agrees, keep the chosen tab.
    if (tabs.force_frames > 0 && --tabs.force_frames == 0) tabs.force_select = -1;
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
      if (tab.live) tab.live->draw_bar(ws);
      if (showing_sample && ws.path() == options.sample)
        ImGui::TextDisabled("Showing the bundled sample trace (%s). Open your own with File > Open or drop a file here.",
                            fs::path(options.sample).filename().c_str());
      float details_height = std::max(220.f, vp->WorkSize.y * 0.4f);
      ImVec2 avail = ImGui::GetContentRegionAvail();
      tl->draw(ImVec2(avail.x, avail.y - details_height));
      ImGui::BeginChild("details", ImVec2(0, 0), true);
      if (ws.panel()) {
        ws.panel()->draw();
      } else {  // a live capture before its analyses ran: the selection's details only
        ImGui::TextDisabled("Analyses run on demand (Run analyses) or when the capture ends.");
        views::draw_details_panel(*ws.store(), *tl);
      }
      ImGui::EndChild();
    } else if (!ws.loading()) {
      ImGui::TextDisabled("No trace open. File > Open, or drop a .json / .json.gz trace here.");
    }
    ImGui::End();
    draw_find(ws, ui);
    draw_issues(ws, ui);
    if (ws.timeline() && !tab.ws_b) views::draw_range_window(*ws.store(), *ws.timeline());
    if (ui.exporter.is_open())
      with_export_sources(tab, [&](const views::ExportSources& s) { ui.exporter.draw(s, ws.path(), active_tab(ws)); });
    draw_loading(ws);
    if (tab.live) tab.live->draw_save_popup();
    if (tab.ws_b) draw_loading(*tab.ws_b);
    if (ui.browser_open) {
      if (auto chosen = ui.browser.draw(&ui.browser_open)) {
        if (ui.browser_compare && ws.store()) open_diff(ws.path(), *chosen);
        else open(*chosen);
      }
    }
    Workspace* failed = !ws.error().empty() ? &ws : tab.ws_b && !tab.ws_b->error().empty() ? tab.ws_b.get() : nullptr;
    if (failed) ImGui::OpenPopup("Could not open the trace");
    if (ImGui::BeginPopupModal("Could not open the trace", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
      if (failed) ImGui::TextUnformatted(failed->error().c_str());
      ImGui::PopTextWrapPos();
      if (ImGui::Button("OK")) {
        if (failed) failed->dismiss_error();
        if (tabs.list.size() > 1) close = tabs.active;  // the tab never got its trace
        ImGui::CloseCurrentPopup();
      }
      ImGui::EndPopup();
    }
    ImGui::Render();
    int width = 0, height = 0;
    glfwGetFramebufferSize(window, &width, &height);
    glViewport(0, 0, width, height);
    bool dark = ws.timeline() && ws.timeline()->theme == views::Theme::Dark;
    glClearColor(dark ? 0.1f : 1.f, dark ? 0.1f : 1.f, dark ? 0.11f : 1.f, 1.f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (automated && tabs.current().ready() && !script.done()) {
      if (!script.step(tabs, ui.exporter, width, height, exit_code)) break;
    } else if (automated && script.done()) {
      break;
    }
    glfwSwapBuffers(window);
    if (close >= 0 && tabs.list.size() > 1) {
      tabs.list.erase(tabs.list.begin() + close);
      if (tabs.active >= close && tabs.active > 0) --tabs.active;
      tabs.choose(tabs.active);
    }
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}

}  // namespace sl::gui
