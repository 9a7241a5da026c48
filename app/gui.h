// The GUI entry point: `sightline [FILE...] [--screenshot OUT.png] [--size WxH] [--script S]`.
#pragma once

#include <string>
#include <vector>

namespace sl::views {
class Workspace;
}

namespace sl::gui {

struct Options {
  std::vector<std::string> files;
  std::string sample;      // opened when no file is given
  std::string screenshot;  // save after the first full view, then exit
  std::string script;      // automation commands (cli.md)
  int width = 1600, height = 1000;
};

int run(const Options& options);
std::string state_json(views::Workspace& ws);  // what the views show, for tests

}  // namespace sl::gui
