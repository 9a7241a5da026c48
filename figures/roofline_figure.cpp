#include "figures/roofline_figure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/present/series_palette.h"
#include "figures/cairo_output.h"
#include "figures/legend.h"
#include "figures/timeline_figure.h"

namespace sl::fig {
namespace {

using namespace sl::analysis;

// The plot rectangle and its log-log mapping.
struct Plot {
  float x0 = 0, x1 = 0, top = 0, bottom = 0;
  RooflineAxes axes;
  float x_of(double intensity) const {
    return x0 + float((std::log10(intensity) - axes.x_lo) / (axes.x_hi - axes.x_lo)) * (x1 - x0);
  }
  float y_of(double flops) const {
    return bottom - float((std::log10(flops) - axes.y_lo) / (axes.y_hi - axes.y_lo)) * (bottom - top);
  }
  double x_min() const { return std::pow(10.0, axes.x_lo); }
  double x_max() const { return std::pow(10.0, axes.x_hi); }
  double y_min() const { return std::pow(10.0, axes.y_lo); }
  double y_max() const { return std::pow(10.0, axes.y_hi); }
};

Color group_color(const Roofline& r, size_t group, bool dark, uint8_t alpha = 255) {
  bool rest = r.groups[group].op == kOtherOperators;
  return Color::of(rest ? present::rest_rgb() : present::series_rgb(group, dark), alpha);
}

// Decade gridlines with labels, and 2..9 minor ticks, on both axes.
void draw_axes(Scene& scene, const Style& s, const Plot& p) {
  float tick = s.small * 0.45f, minor = s.small * 0.25f, w = s.outline_width * 1.5f;
  for (int e = p.axes.x_lo; e <= p.axes.x_hi; ++e) {
    float x = p.x_of(std::pow(10.0, e));
    scene.line(Role::Decoration, x, p.top, x, p.bottom, s.grid, s.outline_width);
    scene.line(Role::Axis, x, p.bottom, x, p.bottom + tick, s.ink, w);
    scene.text(Role::Axis, x, p.bottom + s.small * 1.5f, decade_label(e, false), s.small, s.ink, Anchor::Center);
    for (int m = 2; m <= 9 && e < p.axes.x_hi; ++m) {
      float xm = p.x_of(m * std::pow(10.0, e));
      scene.line(Role::Axis, xm, p.bottom, xm, p.bottom + minor, s.ink, w);
    }
  }
  for (int e = p.axes.y_lo; e <= p.axes.y_hi; ++e) {
    float y = p.y_of(std::pow(10.0, e));
    scene.line(Role::Decoration, p.x0, y, p.x1, y, s.grid, s.outline_width);
    scene.line(Role::Axis, p.x0 - tick, y, p.x0, y, s.ink, w);
    scene.text(Role::Axis, p.x0 - tick - s.small * 0.3f, y + s.small * 0.35f, decade_label(e, true), s.small, s.ink, Anchor::Right);
    for (int m = 2; m <= 9 && e < p.axes.y_hi; ++m) {
      float ym = p.y_of(m * std::pow(10.0, e));
      scene.line(Role::Axis, p.x0 - minor, ym, p.x0, ym, s.ink, w);
    }
  }
  scene.line(Role::Axis, p.x0, p.top, p.x0, p.bottom, s.ink, w);
  scene.line(Role::Axis, p.x0, p.bottom, p.x1, p.bottom, s.ink, w);
}

// The DRAM slope up to the highest compute roof (or the plot's top), labelled above its middle.
void draw_memory_roof(Scene& scene, const Style& s, const Plot& p, const Roofline& r, double top_flops, RooflineFigureStats& stats) {
  double bw = *r.peak.bytes_per_s;
  double a = std::max(p.x_min(), p.y_min() / bw), b = std::min(p.x_max(), std::min(top_flops, p.y_max()) / bw);
  if (!(b > a)) return;
  float xa = p.x_of(a), ya = p.y_of(a * bw), xb = p.x_of(b), yb = p.y_of(b * bw);
  scene.line(Role::Decoration, xa, ya, xb, yb, s.ink, s.outline_width * 4);
  ++stats.roofs;
  std::string label = "DRAM " + si(bw, "B/s");
  float w = text_width(label, s.small);
  float xm = std::max((xa + xb) / 2, p.x0 + w + s.small), ym = ya + (yb - ya) * (xm - xa) / std::max(xb - xa, 1.f);
  scene.text(Role::Label, xm - s.small * 0.3f, ym - s.small * 0.5f, label, s.small, s.ink, Anchor::Right, true);
}

// One horizontal roof per precision, from its ridge (or the left edge) to the right edge, with a
// faint guide to the left edge where its label sits: up there, left of every ridge, neither the
// DRAM slope nor any point (all under the roofs) can run into the text.
void draw_compute_roofs(Scene& scene, const Style& s, const Plot& p, const Roofline& r, RooflineFigureStats& stats) {
  for (Precision q : drawn_roofs(r)) {
    double flops = *r.peak.flops[int(q)];
    if (flops < p.y_min() || flops > p.y_max()) continue;
    std::optional<double> ridge = r.peak.ridge(q);
    float xa = ridge ? p.x_of(std::clamp(*ridge, p.x_min(), p.x_max())) : p.x0, y = p.y_of(flops);
    bool main = q == Precision::Fp32;
    Color c = main ? s.ink : s.muted, guide = c;
    guide.a = 70;
    if (xa > p.x0) scene.line(Role::Decoration, p.x0, y, xa, y, guide, s.outline_width * 1.5f);
    scene.line(Role::Decoration, xa, y, p.x1, y, c, s.outline_width * (main ? 4 : 2.5f));
    ++stats.roofs;
    scene.text(Role::Label, p.x0 + s.small * 0.4f, y - s.small * 0.35f, std::string(precision_name(q)) + " peak " + si(flops, "FLOP/s"),
               s.small, c, Anchor::Left, main);
  }
}

void draw_points(Scene& scene, const Style& s, const Plot& p, const Roofline& r) {
  float radius = std::max(s.small * 0.32f, (p.x1 - p.x0) * 0.007f);  // wide figures: bigger points
  Color edge = s.dark ? Color{240, 240, 240, 200} : Color{20, 20, 20, 200};
  // Larger groups first, so the few points of a small group stay on top.
  std::vector<const RooflinePoint*> order;
  for (const RooflinePoint& pt : r.points) order.push_back(&pt);
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->group < b->group; });
  for (const RooflinePoint* pt : order)
    scene.circle(Role::Point, p.x_of(pt->intensity), p.y_of(pt->throughput), radius, group_color(r, pt->group, s.dark, 225), edge,
                 s.outline_width * 1.5f);
}

// Where the roofs come from, in one sentence (the GUI and core/analysis/README.md give the full
// derivation), or why there is none; then the kernels left out.
std::string roof_sources(const DevicePeak& p, bool drawn) {
  std::string out;
  if (drawn) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "Roofs from deviceProperties: %lld SMs, compute capability %lld.%lld, clockRate %s",
                  (long long)p.sms.value_or(0), (long long)p.cc_major.value_or(0), (long long)p.cc_minor.value_or(0),
                  si(p.clock_hz.value_or(0), "Hz").c_str());
    out = buf;
  } else {
    out = "No compute roof: " + p.compute_note;
  }
  out += p.bytes_per_s ? "; DRAM from " + p.memory_source + "." : "; no DRAM roof: " + p.memory_note + ".";
  return out + " Tensor cores are not counted.";
}

float draw_notes(Scene& scene, const Style& s, const Roofline& r, float y) {
  std::vector<std::string> notes = {roof_sources(r.peak, !drawn_roofs(r).empty())};
  if (!r.note.empty()) notes.push_back(r.note);
  for (const std::string& note : notes)
    for (const std::string& line : wrap_text(note, s.width - 2 * s.pad, s.small, 3)) {
      scene.text(Role::Label, s.pad, y, line, s.small, s.muted);
      y += s.small * 1.3f;
    }
  return y;
}

}  // namespace

bool roofline_figure(const CuptiCounters& counters, const Roofline& r, const Style& s, const std::string& title, Scene& scene,
                     RooflineFigureStats& stats, std::string& error) {
  if (counters.kernels.empty()) {
    error = counters.note.empty() ? "no CUPTI counters in this trace: nothing to plot" : counters.note;
    return false;
  }
  if (r.points.empty()) {
    error = "no kernel can be placed on a roofline: " + r.note;
    return false;
  }
  scene.width = s.width;
  scene.background = s.background;
  std::string heading = title + (title.empty() ? "" : " · ") + "roofline";
  float y = s.pad + s.title;
  scene.text(Role::Title, s.pad, y, fit_text(heading, s.width - 2 * s.pad, s.title, true), s.title, s.ink, Anchor::Left, true);
  y += s.small * 1.5f;
  std::string subtitle = (r.has_device && !r.peak.name.empty() ? r.peak.name + " · " : "") + std::to_string(r.points.size()) +
                         " of " + std::to_string(counters.kernels.size()) + " profiled kernels";
  scene.text(Role::Label, s.pad, y, fit_text(subtitle, s.width - 2 * s.pad, s.small), s.small, s.ink);
  y += s.small * 1.8f;
  scene.text(Role::Axis, s.pad, y, "achieved FLOP/s", s.small, s.muted);

  Plot p;
  p.axes = r.axes;
  p.x0 = s.pad + text_width("100 M", s.small) + s.small * 0.9f;
  p.x1 = s.width - s.pad * 2;
  p.top = y + s.small * 0.9f;
  p.bottom = p.top + s.width * 0.56f;
  draw_axes(scene, s, p);
  double top_flops = 0;  // the slope ends on the highest compute roof, or at the top
  for (Precision q : drawn_roofs(r)) top_flops = std::max(top_flops, *r.peak.flops[int(q)]);
  if (top_flops == 0) top_flops = p.y_max();
  if (r.peak.bytes_per_s) draw_memory_roof(scene, s, p, r, top_flops, stats);
  draw_compute_roofs(scene, s, p, r, stats);
  draw_points(scene, s, p, r);
  stats.points = r.points.size();

  scene.text(Role::Axis, (p.x0 + p.x1) / 2, p.bottom + s.small * 3.0f, "arithmetic intensity (FLOP per DRAM byte)", s.small,
             s.muted, Anchor::Center);
  Legend legend(s);
  for (size_t g = 0; g < r.groups.size(); ++g)
    legend.add(group_color(r, g, s.dark), fit_text(r.groups[g].op, s.width * 0.4f, s.small) + " (" + std::to_string(r.groups[g].points) + ")");
  y = legend.emit(scene, s.pad, p.bottom + s.small * 4.9f, s.width - 2 * s.pad);
  y = draw_notes(scene, s, r, y + s.small * 0.4f);
  scene.height = y + s.pad;
  return true;
}

}  // namespace sl::fig
