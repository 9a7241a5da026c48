// Paints a Scene with Cairo: SVG (cairo-svg), PDF (cairo-pdf) or PNG (image surface), headless.
#pragma once

#include <string>
#include <string_view>

#include "figures/scene.h"

namespace sl::fig {

enum class Format { Svg, Pdf, Png };

// By the file's extension (.svg, .pdf, .png, any case); false for anything else.
bool format_from_path(std::string_view path, Format& format);

// A trace's file name without .json / .gz: default figure titles and run names.
std::string trace_title(std::string_view trace_path);

// Vector formats are sized in points (1 px = 0.75 pt, CSS's 96 dpi); PNG is width × scale pixels.
// False with a message when the file cannot be written.
bool write_scene(const Scene& scene, const std::string& path, Format format, double scale, std::string& error);

// Advance width of `text` in the figure font (DejaVu Sans) at `size` px: layouts measure with it.
float text_width(std::string_view text, float size, bool bold = false);

}  // namespace sl::fig
