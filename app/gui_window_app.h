// The window's App (its tabs, floating-window state and frame steps), shared by the gui_window*.cpp
// files that define its parts; with the settings folder the window remembers things in.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "app/gui.h"
#include "app/gui_script.h"
#include "app/gui_tabs.h"
#include "views/export_dialog.h"
#include "views/file_browser.h"

struct GLFWwindow;

namespace sl::gui {

namespace fs = std::filesystem;
using views::Workspace;

struct Ui {
  bool find_open = false, issues_open = false, browser_open = false;
  bool browser_compare = false;  // the browser picks run B for File > Compare with...
  char find_text[256] = "";
  bool find_regex = false;
  views::FileBrowser browser;
  views::ExportDialog exporter;
  std::vector<std::string> recent;
};

inline fs::path state_dir() {
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "/tmp") / ".config" / "sightline";
}

void load_recent(Ui& ui);
// The views' pixel images as OpenGL textures (gui_textures.cpp): installed once the context is
// current, removed before it goes (textures of views destroyed later go with the context).
void install_gl_textures();
void remove_gl_textures();

// `job`: the active tab's job view, or null; its View menu picks the tab's views and acts on its timeline.
void draw_menu(Workspace& ws, views::JobView* job, Ui& ui, GLFWwindow* window, const std::function<void(const std::string&)>& open,
               views::LiveView* live, bool live_open, const std::function<void()>& toggle_live, bool& help_open);

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
  void open_fleet(const std::string& path);
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

}  // namespace sl::gui
