// GUI automation (cli.md "GUI automation"): a script of one command per line, run against the
// active tab once it is loaded. The commands and their arguments are listed in one table in
// gui_script.cpp (kCommands).
#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/gui_tabs.h"

namespace sl::gui {

class Script {
public:
  explicit Script(std::vector<std::string> lines) : lines_(lines.begin(), lines.end()) {}
  // What `open PATH` calls: the window's open, as File > Open and a drop do.
  void set_opener(std::function<void(const std::string&)> open) { open_ = std::move(open); }
  bool done() const { return lines_.empty() && wait_ == 0; }
  // Where the script puts the mouse (`hover X Y`, window pixels); nullopt: nowhere, so scripted
  // screenshots never show a tooltip of wherever the real pointer happens to be.
  const std::optional<std::pair<float, float>>& mouse() const { return mouse_; }
  // Runs commands until one needs frames to pass. Returns false to quit with `exit_code`.
  bool step(Tabs& tabs, views::ExportDialog& exporter, int width, int height, int& exit_code);

private:
  std::deque<std::string> lines_;
  int wait_ = 0;
  double live_deadline_ = -1;
  std::optional<std::pair<float, float>> mouse_;  // waitlive: when to give up (glfwGetTime seconds)
  std::function<void(const std::string&)> open_;
};

// Saves the back buffer (the frame just rendered) as a PNG.
bool save_screenshot(const std::string& path, int width, int height);

}  // namespace sl::gui
