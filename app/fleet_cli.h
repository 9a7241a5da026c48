// `info` and `report` on a `.slfleet` (cmd_fleet.cpp, cmd_report.cpp).
#pragma once

#include <string>

#include "core/fleet/fleet.h"

namespace CLI {
class App;
}

namespace sl::cli {

// Reads the fleet file; on damage prints what and where on stderr ("sightline COMMAND: ...").
bool open_fleet_for_cli(const std::string& path, fleet::Fleet& out, const char* command);
void run_fleet_info(const std::string& path, const std::string& format);
void register_fleet_commands(CLI::App& app, CLI::App& bench);

}  // namespace sl::cli
