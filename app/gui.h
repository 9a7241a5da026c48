// The GUI entry point: `sightline [FILE|DIR...] [--job A B ...] [--diff A B] [--live [--socket PATH]] [--screenshot OUT.png] [--size WxH] [--script S]`.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace sl {
class JsonWriter;
}
namespace sl::views {
class Workspace;
}

namespace sl::gui {

struct Options {
  std::vector<std::string> files;
  std::vector<std::string> job;   // --job A B C: one job tab over these rank files
  std::string rank_from;          // --rank-from: job tabs take their ranks from this source
  std::vector<std::string> diff;  // --diff A B: a diff tab comparing A (control) with B (test)
  std::string sample;      // opened when no file is given
  std::string screenshot;  // save after the first full view, then exit
  std::string script;      // automation commands (cli.md)
  bool live = false;       // --live: a live capture tab listening on `socket`
  std::string socket;      // --socket PATH ("" = capture::default_live_socket())
  int width = 1600, height = 1000;
};

int run(const Options& options);
// What the views show, for tests; `extra` adds fields (tabs, diff) at the top level.
std::string state_json(views::Workspace& ws, const std::function<void(JsonWriter&)>& extra = {});

}  // namespace sl::gui
