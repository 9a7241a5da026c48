// Writing a finished trace text to disk, shared by `sightline capture` and the GUI's
// File > Save capture as...: gzip when the name ends in .gz, written beside the target and
// renamed, so a reader never sees a half-written trace.
#pragma once

#include <string>

namespace sl::capture {

// Returns false with `why` set (what failed, which file) on any error; nothing is left behind.
bool write_trace_file(const std::string& path, const std::string& text, std::string& why);

}  // namespace sl::capture
