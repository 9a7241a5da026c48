#include "figures/cairo_output.h"

#include <cairo-ft.h>
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <ft2build.h>
#include FT_FREETYPE_H

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sl::fig {
namespace {

// DejaVu Sans from SIGHTLINE_FONT_FILE (the file the GUI uses) so text measures the same everywhere;
// fontconfig's "DejaVu Sans" when the file is missing. Bold comes from fontconfig.
cairo_font_face_t* regular_face() {
  static cairo_font_face_t* face = [] {
    std::filesystem::path file = SIGHTLINE_FONT_FILE;
    FT_Library library = nullptr;
    FT_Face ft = nullptr;
    if (std::filesystem::exists(file) && FT_Init_FreeType(&library) == 0 &&
        FT_New_Face(library, file.c_str(), 0, &ft) == 0)
      return cairo_ft_font_face_create_for_ft_face(ft, 0);  // lives as long as the process
    return cairo_toy_font_face_create("DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  }();
  return face;
}

cairo_font_face_t* bold_face() {
  static cairo_font_face_t* face =
      cairo_toy_font_face_create("DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  return face;
}

void set_font(cairo_t* cr, float size, bool bold) {
  cairo_set_font_face(cr, bold ? bold_face() : regular_face());
  cairo_set_font_size(cr, size);
}

void set_color(cairo_t* cr, Color c) { cairo_set_source_rgba(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0, c.a / 255.0); }

void paint(cairo_t* cr, const Scene& scene) {
  set_color(cr, scene.background);
  cairo_paint(cr);
  for (const Item& i : scene.items) {
    switch (i.kind) {
      case Item::Rect:
      case Item::Circle:
        if (i.kind == Item::Rect) cairo_rectangle(cr, i.x, i.y, i.w, i.h);
        else cairo_arc(cr, i.x, i.y, i.w, 0, 2 * M_PI);
        set_color(cr, i.fill);
        if (i.stroke.a && i.stroke_width > 0) {
          cairo_fill_preserve(cr);
          set_color(cr, i.stroke);
          cairo_set_line_width(cr, i.stroke_width);
          cairo_stroke(cr);
        } else {
          cairo_fill(cr);
        }
        break;
      case Item::Line:
        cairo_move_to(cr, i.x, i.y);
        cairo_line_to(cr, i.x + i.w, i.y + i.h);
        set_color(cr, i.stroke);
        cairo_set_line_width(cr, i.stroke_width);
        cairo_stroke(cr);
        break;
      case Item::Text: {
        set_font(cr, i.size, i.bold);
        cairo_text_extents_t ext;
        cairo_text_extents(cr, i.text.c_str(), &ext);
        double x = i.x;
        if (i.anchor == Anchor::Center) x -= ext.x_advance / 2;
        else if (i.anchor == Anchor::Right) x -= ext.x_advance;
        set_color(cr, i.fill);
        cairo_move_to(cr, x, i.y);
        cairo_show_text(cr, i.text.c_str());
        cairo_new_path(cr);
        break;
      }
    }
  }
}

std::string xml_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

// Cairo's SVG writes text as glyph outlines (the font travels with the file), one <g> of <use>
// elements per string, in drawing order. Label each with its string (aria-label), so the text can
// be searched, read by screen readers and checked by tests. Left as is if the counts disagree.
void label_svg_text(const Scene& scene, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string svg = buffer.str();
  std::vector<const Item*> texts;
  for (const Item& i : scene.items)
    if (i.kind == Item::Text) texts.push_back(&i);
  const std::string open = "<g style=\"fill:", glyph = "\n  <use xlink:href=\"#glyph";
  std::vector<size_t> runs;
  for (size_t at = svg.find(open); at != std::string::npos; at = svg.find(open, at + 1)) {
    size_t close = svg.find('>', at);
    if (close != std::string::npos && svg.compare(close + 1, glyph.size(), glyph) == 0) runs.push_back(at);
  }
  if (runs.size() != texts.size()) return;
  for (size_t k = runs.size(); k-- > 0;) svg.insert(runs[k] + 2, " class=\"" + std::string(role_name(texts[k]->role)) + "\" aria-label=\"" +
                                                             xml_escape(texts[k]->text) + "\"");
  std::ofstream(path, std::ios::binary) << svg;
}

}  // namespace

std::string trace_title(std::string_view trace_path) {
  std::string title = std::filesystem::path(trace_path).filename().string();
  for (std::string_view ext : {".gz", ".json"})
    if (title.size() > ext.size() && title.ends_with(ext)) title.resize(title.size() - ext.size());
  return title;
}

bool format_from_path(std::string_view path, Format& format) {
  std::string ext(std::filesystem::path(path).extension().string());
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".svg") format = Format::Svg;
  else if (ext == ".pdf") format = Format::Pdf;
  else if (ext == ".png") format = Format::Png;
  else return false;
  return true;
}

float text_width(std::string_view text, float size, bool bold) {
  static cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1);
  static cairo_t* cr = cairo_create(surface);
  set_font(cr, size, bold);
  std::string s(text);
  cairo_text_extents_t ext;
  cairo_text_extents(cr, s.c_str(), &ext);
  return float(ext.x_advance);
}

bool write_scene(const Scene& scene, const std::string& path, Format format, double scale, std::string& error) {
  cairo_surface_t* surface = nullptr;
  double points = 0.75;  // CSS px → pt for the vector formats
  switch (format) {
    case Format::Svg:
      surface = cairo_svg_surface_create(path.c_str(), scene.width * points, scene.height * points);
      cairo_svg_surface_restrict_to_version(surface, CAIRO_SVG_VERSION_1_2);
      break;
    case Format::Pdf:
      surface = cairo_pdf_surface_create(path.c_str(), scene.width * points, scene.height * points);
      cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "Sightline");
      break;
    case Format::Png: {
      int w = std::max(1, int(scene.width * scale + 0.5)), h = std::max(1, int(scene.height * scale + 0.5));
      surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
      break;
    }
  }
  if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
    error = path + ": " + cairo_status_to_string(cairo_surface_status(surface));
    cairo_surface_destroy(surface);
    return false;
  }
  cairo_t* cr = cairo_create(surface);
  if (format == Format::Png) cairo_scale(cr, scale, scale);
  else cairo_scale(cr, points, points);
  paint(cr, scene);
  cairo_status_t status = cairo_status(cr);
  cairo_destroy(cr);
  if (status == CAIRO_STATUS_SUCCESS && format == Format::Png) status = cairo_surface_write_to_png(surface, path.c_str());
  cairo_surface_finish(surface);
  if (status == CAIRO_STATUS_SUCCESS) status = cairo_surface_status(surface);
  cairo_surface_destroy(surface);
  if (status != CAIRO_STATUS_SUCCESS) {
    error = path + ": " + cairo_status_to_string(status);
    return false;
  }
  if (format == Format::Svg) label_svg_text(scene, path);
  return true;
}

}  // namespace sl::fig
