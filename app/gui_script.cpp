// The automation script: a table of commands (kCommands), each a small handler. The window loop
// calls Script::step once per frame while the active tab is ready.
#include "app/gui_script.h"

#include <glad/gl.h>
// glad first: GLFW must not include its own GL header.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "app/gui.h"
#include "core/present/time_axis.h"
#include "core/report/issue_classes.h"
#include "core/text/json_writer.h"
#include "figures/timeline_figure.h"

namespace sl::gui {

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

namespace {

using views::Workspace;

// What a command handler sees: its line, the arguments after the command word, and the views of
// the active tab.
struct Call {
  Tabs& tabs;
  views::ExportDialog& exporter;
  int width, height;
  const std::string& line;
  std::istringstream& in;  // positioned after the command word
  Workspace& ws;
  views::TimelineView* tl;  // null until a trace is loaded
  views::DiffView* diff;    // null outside a diff tab
  double& live_deadline;
  const std::function<void(const std::string&)>& open;
  std::optional<std::pair<float, float>>& mouse;

  std::string word() {
    std::string s;
    in >> s;
    return s;
  }
  std::string rest_of_line() {
    std::string s;
    std::getline(in >> std::ws, s);
    return s;
  }
};

// What a handler asks of the script loop next.
struct Outcome {
  enum Kind { Next, Retry, Stop } kind = Next;
  int frames = 2;     // Next: frames to draw before the next command looks at the result
  int exit_code = 0;  // Stop
};
Outcome next(int frames = 2) { return {Outcome::Next, frames, 0}; }
Outcome retry() { return {Outcome::Retry, 0, 0}; }  // the same line again next frame
Outcome quit() { return {Outcome::Stop, 0, 0}; }
// Exit codes: 2 for a malformed command, 1 for one that cannot be done on this trace.
Outcome fail(int exit_code, const std::string& message) {
  std::fprintf(stderr, "sightline: script: %s\n", message.c_str());
  return {Outcome::Stop, 0, exit_code};
}
Outcome fail_in(Call& c, const std::string& error) { return fail(1, error + " in '" + c.line + "'"); }

// What a command needs before its handler runs.
enum class Needs { Nothing, Trace, Panel, Diff, Live, Job };

// "" when `c` has what `needs` asks for, else the error (all exit 1).
std::string missing(Call& c, Needs needs) {
  switch (needs) {
    case Needs::Nothing: return "";
    case Needs::Trace: return c.tl ? "" : "no trace is open for '" + c.line + "'";
    case Needs::Panel:
      if (!c.tl) return missing(c, Needs::Trace);
      return c.ws.panel() ? "" : "'" + c.line + "': the analyses have not run yet (live capture)";
    case Needs::Diff:
      if (c.diff && c.diff->ready()) return "";
      return "'" + c.line + "' needs a diff tab with a computed diff" + (c.diff ? ": " + c.diff->error() : "");
    case Needs::Live:
      return c.tabs.current().live ? "" : "'" + c.line + "' needs a live capture tab (sightline --live)";
    case Needs::Job:
      return c.tabs.current().job ? "" : "'" + c.line + "' needs a job tab (sightline DIR, or --job A B ...)";
  }
  return "";
}

// --- tabs and frames -----------------------------------------------------------------------

Outcome cmd_quit(Call&) { return quit(); }

Outcome cmd_wait(Call& c) {
  int frames = 0;
  c.in >> frames;
  return next(frames);
}

Outcome cmd_tab(Call& c) {
  int n = -1;
  if (!(c.in >> n) || n < 0 || n >= int(c.tabs.list.size()))
    return fail(2, "no tab '" + c.line + "' (" + std::to_string(c.tabs.list.size()) + " open, numbered from 0)");
  c.tabs.choose(n);
  return next();  // the next command waits until that tab is loaded
}

// `open PATH`: what File > Open does with the chosen file (and a drop): a new tab, or a job tab
// for a folder, made active; the next command waits until it is loaded (a failed load exits 1).
Outcome cmd_open(Call& c) {
  std::string path = c.rest_of_line();
  if (path.empty()) return fail(2, "open wants a PATH in '" + c.line + "'");
  if (!c.open) return fail(1, "nothing to open with in '" + c.line + "'");
  c.open(path);
  return next();
}

// `view diff` switches to the diff tab; any other name is a tab of the lower panel.
// Every name `view` takes, as the GUI's tabs are called: the panel's tabs (panel_tab_name) with
// the spellings people type for them, the diff tab, and a job tab's own views.
const std::pair<const char*, const char*> kViewAliases[] = {
    {"details", "timeline"}, {"critical", "critical-path"}, {"critical_path", "critical-path"}, {"breakdowns", "breakdown"},
    {"kernels", "patterns"}, {"counter", "counters"}, {"insight", "insights"}};

std::string job_view_names() {
  std::string out;
  for (const char* name : views::JobView::kViewNames) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::string view_names() {
  std::string out;
  for (int t = 0; t <= views::kLastPanelTab; ++t) {
    std::string name = views::panel_tab_name(views::PanelTab(t));
    out += (out.empty() ? "" : ", ") + name;
    for (auto [alias, target] : kViewAliases)
      if (name == target) out += std::string(" (") + alias + ")";
  }
  return out + ", diff; in a job tab: " + job_view_names();
}

Outcome cmd_view(Call& c) {
  std::string name = c.word();
  for (auto [alias, target] : kViewAliases)
    if (name == alias) name = target;
  if (name == "diff") {
    auto& list = c.tabs.list;
    auto it = std::find_if(list.begin(), list.end(), [](const auto& t) { return t->ws_b != nullptr; });
    if (it == list.end()) return fail(1, "no diff is open (sightline --diff A B, or File > Compare with...)");
    c.tabs.choose(int(it - list.begin()));
    return next();
  }
  if (views::JobView* job = c.tabs.current().job.get()) {
    if (job->show_view(name)) return next();
    return fail(2, "unknown view '" + name + "' for a job tab (it has " + job_view_names() + "); every view: " + view_names());
  }
  bool known = false;
  for (int t = 0; t <= views::kLastPanelTab; ++t) known |= name == views::panel_tab_name(views::PanelTab(t));
  if (!known) return fail(2, "unknown view '" + name + "' (" + view_names() + ")");
  if (std::string error = missing(c, Needs::Panel); !error.empty()) return fail(1, error);
  c.ws.panel()->show(name);
  return next();
}

// --- the timeline --------------------------------------------------------------------------

// Two times with units ("12.5ms 14ms"; raw numbers are µs), as `zoom` and `range` take them.
bool read_times(std::istringstream& in, double& t0, double& t1) {
  std::string a, b;
  in >> a >> b;
  return present::parse_time(a, t0) && present::parse_time(b, t1);
}

Outcome cmd_zoom(Call& c) {
  double t0 = 0, t1 = 0;
  if (!read_times(c.in, t0, t1)) return fail(2, "bad times in '" + c.line + "'");
  c.tl->zoom_to(t0, t1);
  return next();
}

Outcome cmd_range(Call& c) {
  double t0 = 0, t1 = 0;
  if (!read_times(c.in, t0, t1)) return fail(2, "bad times in '" + c.line + "'");
  c.tl->set_range(TimeNs(t0), TimeNs(t1));
  return next();
}

// NAME is the rest of the line (kernel names have spaces), optionally quoted, optionally followed
// by the occurrence index N (slices of that name ordered by start).
Outcome cmd_select(Call& c) {
  std::string name = c.rest_of_line();
  size_t n = 0, space = name.find_last_of(' ');
  if (space != std::string::npos && name.find_first_not_of("0123456789", space + 1) == std::string::npos &&
      space + 1 < name.size()) {
    n = std::stoul(name.substr(space + 1));
    name.erase(space);
  }
  if (name.size() >= 2 && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
  const TraceStore& store = *c.ws.store();
  StringId id = store.strings.find(name);
  auto refs = id == StringPool::kNotFound ? std::span<const SliceRef>{} : store.slices_named(id);
  if (n >= refs.size()) return fail(1, "no slice '" + name + "' #" + std::to_string(n));
  std::vector<SliceRef> sorted(refs.begin(), refs.end());
  std::sort(sorted.begin(), sorted.end(), [&](SliceRef x, SliceRef y) { return store.start(x) < store.start(y); });
  c.tl->select(sorted[n], true);
  return next();
}

Outcome cmd_find(Call& c) {
  c.tl->find(c.rest_of_line());
  return next();
}

// Every track whose label (as the figures name rows: "stream 7", "thread 12") is ROW, any case.
Outcome cmd_hide(Call& c) {
  auto lower = [](std::string s) {
    for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  };
  std::string row = c.rest_of_line();
  const TraceStore& store = *c.ws.store();
  size_t hidden = 0;
  for (uint32_t t = 0; t < store.tracks.size(); ++t)
    if (lower(fig::track_label(store, t)) == lower(row)) c.tl->set_hidden(t, true), ++hidden;
  if (hidden == 0) return fail(1, "no row labelled '" + row + "'");
  return next();
}

// --- the analysis panel --------------------------------------------------------------------

// brush, pattern, operator, insight, idle: the panel parses the arguments (AnalysisPanel::command).
Outcome cmd_panel(Call& c) {
  std::istringstream again(c.line);
  std::string verb;
  again >> verb;
  if (std::string error = c.ws.panel()->command(verb, c.rest_of_line()); !error.empty()) return fail_in(c, error);
  return next();
}

// --- output --------------------------------------------------------------------------------

// `export PATH [screen|selection|latency|breakdown|idle|critical-path] [width=PX] [scale=S] [theme=T]`; no PATH
// opens the dialog (for screenshots of it). Returns "" or the error.
std::string run_export(std::istringstream& in, Tab& tab, views::ExportDialog& exporter) {
  Workspace& ws = *tab.ws;
  std::string path, token;
  if (!(in >> path)) {
    exporter.open(ws.path(), active_tab(ws));
    return "";
  }
  views::ExportRequest q = exporter.request(views::ExportWhat::Screen, path, ws.path());
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

Outcome cmd_export(Call& c) {
  if (std::string error = run_export(c.in, c.tabs.current(), c.exporter); !error.empty()) return fail_in(c, error);
  return next();
}

Outcome cmd_screenshot(Call& c) {
  std::string path = c.word();
  if (!save_screenshot(path, c.width, c.height)) return fail(1, "could not write " + path);
  return next();
}

// For tests: what the views show, as JSON (state_json plus the tabs, the diff, the live capture
// and the last export).
// The only way a script hovers: the real pointer (wherever xvfb or the desk left it) is ignored.
Outcome cmd_hover(Call& c) {
  std::string x = c.word();
  if (x == "off") {
    c.mouse.reset();
    return next();
  }
  float fx = 0, fy = 0;
  std::string y = c.word();
  try {
    size_t nx = 0, ny = 0;
    fx = std::stof(x, &nx), fy = std::stof(y, &ny);
    if (nx != x.size() || ny != y.size()) throw std::invalid_argument(x);
  } catch (const std::exception&) {
    return fail(2, "hover wants X Y (window pixels) or off, got '" + c.line + "'");
  }
  c.mouse = std::pair{fx, fy};
  return next();
}

Outcome cmd_state(Call& c) {
  std::string path = c.word();
  Tab& tab = c.tabs.current();
  std::ofstream(path) << state_json(c.ws, [&](JsonWriter& w) {
    w.field("tabs", uint64_t(c.tabs.list.size())).field("active_tab", int64_t(c.tabs.active));
    w.field("window_title", window_title(tab)).field("help_open", c.tabs.help_open);
    ImVec2 mouse = ImGui::GetIO().MousePos;  // what the last frame saw: off the window unless `hover`
    w.key("mouse");
    if (ImGui::IsMousePosValid(&mouse)) w.begin_array().value(double(mouse.x)).value(double(mouse.y)).end_array();
    else w.null();
    w.key("tab_paths").begin_array();
    for (const auto& t : c.tabs.list) w.value(t->ws->path());
    w.end_array().key("diff");
    c.diff ? c.diff->write_state(w) : void(w.null());
    w.key("live");
    tab.live ? tab.live->write_state(w, c.ws) : void(w.null());
    w.key("job");
    tab.job ? tab.job->write_state(w) : void(w.null());
    w.key("last_export");
    c.exporter.write_state(w, c.ws.store());
    w.key("import_badge");  // the menu bar's import-issues button
    if (const TraceStore* s = c.ws.store())
      w.begin_object().field("issues", s->issues.total()).field("attention", attention_issues(s->issues))
          .field("label", import_badge_label(s->issues)).end_object();
    else
      w.null();
  }) << "\n";
  return next();
}

Outcome cmd_help(Call& c) {
  c.tabs.help_open = c.word() != "off";
  return next();
}

// --- the diff tab --------------------------------------------------------------------------

Outcome cmd_diffrow(Call& c) {
  std::string arg = c.rest_of_line();
  char* end = nullptr;
  unsigned long n = std::strtoul(arg.c_str(), &end, 10);
  if (arg.empty() || *end || !c.diff->select_row(n))
    return fail(1, "no diff row '" + arg + "' (" + std::to_string(c.diff->rows().size()) + " rows)");
  return next();
}

Outcome cmd_diffgroup(Call& c) {
  c.diff->set_grouped(c.rest_of_line() == "on");
  return next();
}

Outcome cmd_difffilter(Call& c) {
  c.diff->set_filter(c.rest_of_line());
  return next();
}

Outcome cmd_diffoffset(Call& c) {
  double ns = 0;
  if (!present::parse_time(c.rest_of_line(), ns)) return fail(2, "bad offset in '" + c.line + "'");
  c.diff->set_offset(ns);
  return next();
}

Outcome cmd_diffcolors(Call& c) {
  c.diff->diff_colors = c.rest_of_line() != "off";
  return next();
}

// --- live capture --------------------------------------------------------------------------

Outcome cmd_savelive(Call& c) {
  if (std::string e = c.tabs.current().live->save(c.word(), true); !e.empty()) return fail(1, e);
  return next();
}

Outcome cmd_snapshotlive(Call& c) {
  if (std::string e = c.tabs.current().live->save_snapshot(c.word(), true); !e.empty()) return fail(1, e);
  return next();
}

// Until the shown store has KERNELS kernels, or (`end`) the capture ended or broke and its final
// snapshot is shown; fails after TIMEOUT_S seconds (default 30).
Outcome cmd_waitlive(Call& c) {
  views::LiveView& live = *c.tabs.current().live;
  std::string what = c.word();
  double timeout = 30;
  c.in >> timeout;
  bool until_end = what == "end";
  char* endp = nullptr;
  unsigned long long want = std::strtoull(what.c_str(), &endp, 10);
  if (!until_end && (what.empty() || *endp)) return fail(2, "waitlive wants KERNELS or 'end' in '" + c.line + "'");
  if (until_end ? live.final_shown() : live.store_kernels() >= want) {
    c.live_deadline = -1;
    return next();
  }
  if (c.live_deadline < 0) c.live_deadline = glfwGetTime() + timeout;
  if (glfwGetTime() > c.live_deadline)
    return fail(1, "'" + c.line + "' timed out with " + std::to_string(live.store_kernels()) + " kernels shown");
  return retry();
}

// --- the job tab ---------------------------------------------------------------------------

// collective, expand, collapse, focus, ranksort, rankselect, align, jobinsight, heatmap, heatmapcell, jobexport: the job view parses
// the arguments (JobView::command); its errors (a rank not in the job, ...) exit 1.
Outcome cmd_job(Call& c) {
  std::istringstream again(c.line);
  std::string verb;
  again >> verb;
  if (std::string error = c.tabs.current().job->command(verb, c.rest_of_line()); !error.empty()) return fail_in(c, error);
  return next();
}

// --- the table -----------------------------------------------------------------------------

struct Command {
  const char* name;
  const char* usage;  // the arguments and what it does: the one place the commands are documented
  Needs needs;
  Outcome (*run)(Call&);
};

// Every script command. Times take units ("12.5ms", "840us"; a plain number is µs). After each
// command the script lets two frames draw (unless it says otherwise) so the next one sees the result.
const Command kCommands[] = {
    {"quit", "quit: exit with code 0", Needs::Nothing, cmd_quit},
    {"wait", "wait FRAMES: draw FRAMES frames before the next command", Needs::Nothing, cmd_wait},
    {"tab", "tab N: make tab N (from 0) active; the next command waits until it is loaded", Needs::Nothing, cmd_tab},
    {"open", "open PATH: open a trace, snapshot, Nsight report or job folder in a new tab, as File > Open does; the "
             "next command waits until it is loaded", Needs::Nothing, cmd_open},
    {"view", "view NAME: a panel tab (timeline, latency, patterns, idle, breakdown, insights, counters, critical-path; also "
             "details, critical), diff: the diff tab, or in a job tab ranks|insights|heatmap",
     Needs::Nothing, cmd_view},
    {"zoom", "zoom START END: show that time range", Needs::Trace, cmd_zoom},
    {"range", "range START END: select that time range (range statistics)", Needs::Trace, cmd_range},
    {"select", "select NAME [N]: select the Nth (from 0, by start) slice named NAME (may be quoted)", Needs::Trace,
     cmd_select},
    {"find", "find TEXT: highlight the slices whose name contains TEXT", Needs::Trace, cmd_find},
    {"hide", "hide ROW: hide every row labelled ROW (\"stream 7\", \"thread 12\")", Needs::Trace, cmd_hide},
    {"brush", "brush latency|QUANTITY LO HI: brush the latency histogram", Needs::Panel, cmd_panel},
    {"pattern", "pattern [fusion|sequence|repeated] N | pattern next|prev: pick a pattern row", Needs::Panel, cmd_panel},
    {"operator", "operator NAME: the operator of the frequent-sequences table", Needs::Panel, cmd_panel},
    {"insight", "insight N: open insight N", Needs::Panel, cmd_panel},
    {"idle", "idle STREAM CAUSE | idle next|prev: show the gaps of one idle cause", Needs::Panel, cmd_panel},
    {"counters", "counters kernel|point|operator N | counters click X Y: select a counters row or roofline point, as a "
                 "click (click: at window pixels, hit-tested like the mouse)", Needs::Panel, cmd_panel},
    {"critical_path", "critical_path on|off | critical_path instance N | critical_path contributor N: the path overlay on "
                      "the timeline, the ProfilerStep instance (from 0), select and frame the Nth longest contributor",
     Needs::Panel, cmd_panel},
    {"memory", "memory device N | memory context N | memory block N | memory peak: the Memory view's device, a context of "
               "the at-peak table (its blocks listed), one of those blocks (its lifetime on the timeline), the peak",
     Needs::Panel, cmd_panel},
    {"export", "export [PATH [screen|selection|latency|breakdown|idle|roofline|critical-path|memory] [width=PX] [scale=S] [theme=T]]: "
               "write a figure; without PATH open the Export dialog", Needs::Trace, cmd_export},
    {"screenshot", "screenshot OUT.png: save the window", Needs::Nothing, cmd_screenshot},
    {"hover", "hover X Y | hover off: put the mouse at window pixels X Y (tooltips show), or nowhere (the default: "
              "scripts and --screenshot ignore the real pointer)", Needs::Nothing, cmd_hover},
    {"state", "state OUT.json: what the views show, as JSON (for tests)", Needs::Nothing, cmd_state},
    {"help", "help [on|off]: show or hide the keys-and-mouse overlay", Needs::Nothing, cmd_help},
    {"diffrow", "diffrow N: select row N of the diff table", Needs::Diff, cmd_diffrow},
    {"diffgroup", "diffgroup on|off: group the diff table by operator", Needs::Diff, cmd_diffgroup},
    {"difffilter", "difffilter TEXT: filter the diff table", Needs::Diff, cmd_difffilter},
    {"diffoffset", "diffoffset TIME: shift run B against run A", Needs::Diff, cmd_diffoffset},
    {"diffcolors", "diffcolors on|off: colour slices by their change", Needs::Diff, cmd_diffcolors},
    {"waitlive", "waitlive KERNELS|end [TIMEOUT_S]: wait for a live capture's data", Needs::Live, cmd_waitlive},
    {"savelive", "savelive PATH: save the live capture as a trace", Needs::Live, cmd_savelive},
    {"snapshotlive", "snapshotlive PATH: save the live store shown as a snapshot", Needs::Live, cmd_snapshotlive},
    {"collective", "collective N|next|prev|worst: select a collective instance (by first arrival) on every rank",
     Needs::Job, cmd_job},
    {"expand", "expand R: show rank R's timeline under the rank overview", Needs::Job, cmd_job},
    {"collapse", "collapse R: hide rank R's timeline", Needs::Job, cmd_job},
    {"focus", "focus R: expand rank R and scroll to it", Needs::Job, cmd_job},
    {"ranksort", "ranksort rank|status|collectives|late|delay|wait|iteration|compute|communication|idle|cause "
                 "[asc|desc]: sort the Ranks table", Needs::Job, cmd_job},
    {"rankselect", "rankselect R NAME [N]: select the Nth (from 0, by start) slice named NAME of rank R, as a click",
     Needs::Job, cmd_job},
    {"align", "align collectives|none|auto: the job clock (report --align), re-analysed in the background",
     Needs::Job, cmd_job},
    {"jobinsight", "jobinsight N: open the job's Insights entry N (the Stragglers entry: focus its rank, select its worst "
                   "collective)", Needs::Job, cmd_job},
    {"heatmap", "heatmap steps|waits|step-waits [rank|node|slowness]: show the job's Heatmap view (iteration time per rank and "
                "step, wait per rank and collective, or wait in collectives per rank and step), rows in that order", Needs::Job, cmd_job},
    {"heatmapcell", "heatmapcell R C: a click on rank R's heatmap cell C (step, or collective index): focus the rank, frame "
                    "the step or select the collective", Needs::Job, cmd_job},
    {"jobexport", "jobexport PATH: write the rank overview figure of the shown window (.svg, .pdf, .png), "
                  "as render DIR --view ranks", Needs::Job, cmd_job},
};

const Command* find_command(const std::string& name) {
  for (const Command& c : kCommands)
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace

bool Script::step(Tabs& tabs, views::ExportDialog& exporter, int width, int height, int& exit_code) {
  if (wait_ > 0) return --wait_, true;
  while (!lines_.empty()) {
    std::string line = lines_.front();
    lines_.pop_front();
    std::istringstream in(line);
    std::string name;
    in >> name;
    if (name.empty() || name[0] == '#') continue;
    const Command* command = find_command(name);
    if (!command) {
      std::fprintf(stderr, "sightline: script: unknown command '%s'\n", name.c_str());
      exit_code = 2;
      return false;
    }
    Tab& tab = tabs.current();
    // A diff tab's timeline commands act on the diff view's one timeline (A and B), not on A's own.
    views::TimelineView* tl = tab.diff ? &tab.diff->timeline() : tab.ws->timeline();
    Call call{tabs, exporter, width, height, line, in, *tab.ws, tl, tab.diff.get(), live_deadline_, open_, mouse_};
    Outcome out = [&] {
      std::string error = missing(call, command->needs);
      return error.empty() ? command->run(call) : fail(1, error);
    }();
    switch (out.kind) {
      case Outcome::Next: wait_ = out.frames; return true;
      case Outcome::Retry: lines_.push_front(line); return true;  // look again next frame
      case Outcome::Stop: exit_code = out.exit_code; return false;
    }
  }
  return true;
}

}  // namespace sl::gui
