// The desktop window: GLFW + OpenGL 3.3 + Dear ImGui around the open tabs (gui_tabs.h). Renders
// only when something changes (input, loading progress, a running script); otherwise it sleeps.
#include "app/gui.h"

#include <glad/gl.h>
// glad first: GLFW must not include its own GL header.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui/backends/imgui_impl_glfw.h>
#include <imgui/backends/imgui_impl_opengl3.h>

#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "app/gui_window_app.h"

namespace sl::gui {
namespace {

std::vector<std::string> g_dropped;

void on_drop(GLFWwindow*, int count, const char** paths) {
  for (int i = 0; i < count; ++i) g_dropped.emplace_back(paths[i]);
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
  if (!std::getenv("SIGHTLINE_NO_TEXTURES")) install_gl_textures();  // set: views draw rectangles, as headless (tests compare)
}

void close_window(GLFWwindow* window) {
  remove_gl_textures();
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
}  // namespace

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
    if (automated_) {  // a script sees what it asked for, not the pointer's leftovers (no stray tooltips)
      const auto& mouse = script_.mouse();
      ImGui::GetIO().MousePos = mouse ? ImVec2(mouse->first, mouse->second) : ImVec2(-FLT_MAX, -FLT_MAX);
    }
    ImGui::NewFrame();
    handle_shortcuts(*tab.ws);
    toggle_help_on_key();
    update_title(tab);
    auto live_tab = std::find_if(tabs_.list.begin(), tabs_.list.end(), [](const auto& t) { return t->live != nullptr; });
    draw_menu(*tab.ws, tab.job.get(), ui_, window_, [this](const std::string& p) { open(p); }, tab.live.get(),
              live_tab != tabs_.list.end(), [this] { toggle_live(); }, tabs_.help_open);
    draw_tab(tab);
    draw_windows(tab);
    if (!render_and_script()) break;
    close_tab();
  }
  return exit_code_;
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
