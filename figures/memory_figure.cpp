#include "figures/memory_figure.h"

#include <algorithm>
#include <cmath>

#include "core/present/time_axis.h"
#include "core/text/format.h"
#include "figures/cairo_output.h"
#include "figures/legend.h"
#include "figures/timeline_figure.h"

namespace sl::fig {

namespace {

constexpr size_t kMaxDevices = 4;
constexpr size_t kMaxContexts = 8;

Color allocated_fill(const Style& s) { return s.dark ? Color{86, 180, 233, 200} : Color{0, 114, 178, 170}; }
Color reserved_ink(const Style& s) { return s.dark ? Color{230, 159, 0, 255} : Color{213, 94, 0, 255}; }
Color peak_ink(const Style& s) { return s.dark ? Color{240, 228, 66, 255} : Color{204, 0, 0, 255}; }

// A byte axis step of 1, 2 or 5 × 1024^k (or 10^k below 1 KiB) giving about `ticks` ticks.
int64_t byte_step(int64_t max, int ticks) {
  double raw = double(std::max<int64_t>(max, 1)) / ticks;
  double unit = 1;
  while (unit * 1024 <= raw) unit *= 1024;
  for (double m : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1024.0})
    if (unit * m >= raw) return int64_t(unit * m);
  return int64_t(unit * 1024);
}

// One device's panel: the axes, the allocated area (per pixel column the most allocated in it,
// so the peak is never lost to the column width), reserved as a line, the peak marked.
float device_panel(Scene& scene, const Style& s, const memory::DeviceMemory& d, TimeNs end, float y, MemoryFigureStats& stats) {
  const float label_w = text_width("000 GiB", s.small) + s.small;
  const float x0 = s.pad + label_w, x1 = s.width - s.pad;
  const float height = s.lane * 7, top = y + s.small * 1.6f, bottom = top + height;
  scene.text(Role::Label, s.pad, y + s.small, d.label + (d.from_totals ? "" : " (allocated: running sum of bytes)"), s.small, s.ink,
             Anchor::Left, true);
  int64_t max = std::max<int64_t>(1, d.reserved_known ? std::max(d.peak_allocated, [&] {
    int64_t r = 0;
    for (const auto& p : d.timeline) r = std::max(r, p.reserved);
    return r;
  }()) : d.peak_allocated);
  int64_t step = byte_step(max, 4);
  int64_t top_value = (max + step - 1) / step * step;
  auto yv = [&](int64_t v) { return bottom - float(double(std::max<int64_t>(v, 0)) / double(top_value)) * height; };
  TimeNs span = std::max<TimeNs>(end, 1);
  auto xt = [&](TimeNs t) { return x0 + float(double(std::clamp<TimeNs>(t, 0, span)) / double(span)) * (x1 - x0); };
  for (int64_t v = 0; v <= top_value; v += step) {
    scene.line(Role::Decoration, x0, yv(v), x1, yv(v), s.grid, s.outline_width);
    scene.text(Role::Axis, x0 - s.small * 0.3f, yv(v) + s.small * 0.35f, human::bytes(v), s.small, s.muted, Anchor::Right);
  }
  // Columns: allocated max and reserved max per pixel, carrying the level across empty columns.
  const int columns = std::max(1, int(x1 - x0));
  std::vector<int64_t> alloc(size_t(columns), -1), reserved(size_t(columns), -1);
  int64_t level_a = 0, level_r = 0;
  size_t k = 0;
  for (int c = 0; c < columns; ++c) {
    TimeNs c_end = TimeNs(double(span) * double(c + 1) / columns);
    int64_t a = level_a, r = level_r;
    while (k < d.timeline.size() && d.timeline[k].ts < c_end) {
      level_a = d.timeline[k].allocated, level_r = d.timeline[k].reserved;
      a = std::max(a, level_a), r = std::max(r, level_r);
      ++k;
    }
    alloc[size_t(c)] = std::max(a, level_a);
    reserved[size_t(c)] = std::max(r, level_r);
  }
  stats.columns += size_t(columns);
  for (int c = 0; c < columns; ++c)
    if (alloc[size_t(c)] > 0) scene.rect(Role::Bar, x0 + float(c), yv(alloc[size_t(c)]), 1.05f, bottom - yv(alloc[size_t(c)]), allocated_fill(s));
  if (d.reserved_known)
    for (int c = 0; c + 1 < columns; ++c)
      scene.line(Role::Slice, x0 + float(c), yv(reserved[size_t(c)]), x0 + float(c + 1), yv(reserved[size_t(c + 1)]), reserved_ink(s),
                 s.outline_width * 2.5f);
  scene.line(Role::Axis, x0, bottom, x1, bottom, s.ink, s.outline_width * 1.5f);
  // Time ticks.
  int64_t tstep = present::tick_step(double(span) / 6);
  for (TimeNs t = 0; t <= span; t += tstep) {
    scene.line(Role::Axis, xt(t), bottom, xt(t), bottom + s.small * 0.4f, s.ink, s.outline_width * 1.5f);
    scene.text(Role::Axis, xt(t), bottom + s.small * 1.5f, present::format_tick(t, tstep), s.small, s.ink, Anchor::Center);
  }
  // The peak.
  float px = xt(d.peak_ts), py = yv(d.peak_allocated);
  scene.line(Role::Decoration, px, top, px, bottom, peak_ink(s), s.outline_width * 2);
  scene.circle(Role::Point, px, py, s.small * 0.3f, peak_ink(s));
  std::string label = "peak " + human::bytes(d.peak_allocated) + " at " + present::format_duration(double(d.peak_ts));
  if (d.reserved_known) label += ", reserved " + human::bytes(d.peak_reserved);
  bool right = px > (x0 + x1) / 2;
  scene.text(Role::Label, right ? px - s.small * 0.5f : px + s.small * 0.5f, top + s.small * 0.2f, label, s.small, peak_ink(s),
             right ? Anchor::Right : Anchor::Left, true);
  return bottom + s.small * 2.4f;
}

// The contexts live at the peak, one bar each, largest first.
float at_peak_bars(Scene& scene, const Style& s, const TraceStore& store, const memory::DeviceMemory& d, float y, MemoryFigureStats& stats) {
  if (d.at_peak.empty()) return y;
  scene.text(Role::Label, s.pad, y + s.small, "live at the peak (" + d.label + "), by allocating context", s.small, s.ink, Anchor::Left, true);
  y += s.small * 1.6f;
  const float x0 = s.pad, x1 = s.width - s.pad, row_h = s.lane;
  int64_t max = std::max<int64_t>(1, d.at_peak.front().bytes);
  const float value_w = text_width("000 GiB · 00000 blocks", s.small) + s.small;
  for (size_t i = 0; i < d.at_peak.size() && i < kMaxContexts; ++i) {
    const memory::ContextBytes& c = d.at_peak[i];
    float w = float(double(c.bytes) / double(max)) * (x1 - x0 - value_w) * 0.5f;
    scene.rect(Role::Bar, x0, y + row_h * 0.12f, std::max(w, 0.5f), row_h * 0.76f, allocated_fill(s), s.outline, s.outline_width);
    std::string value = human::bytes(c.bytes) + " · " + std::to_string(c.blocks) + (c.blocks == 1 ? " block" : " blocks");
    float tx = x0 + std::max(w, 0.5f) + s.small * 0.4f;
    scene.text(Role::Label, tx, y + row_h * 0.5f + s.small * 0.36f, value, s.small, s.ink);
    float name_x = tx + text_width(value, s.small) + s.small;
    scene.text(Role::Label, name_x, y + row_h * 0.5f + s.small * 0.36f,
               fit_text(memory::context_name(store, c.context), x1 - name_x, s.small), s.small, s.muted);
    y += row_h;
    ++stats.contexts;
  }
  return y + s.small;
}

}  // namespace

bool memory_figure(const TraceStore& store, const memory::MemoryAnalysis& a, const Style& s, const std::string& title, Scene& scene,
                   MemoryFigureStats& stats, std::string& error) {
  if (a.empty()) {
    error = "no memory events (a trace recorded with profile_memory=True, or a PyTorch memory snapshot): nothing to plot";
    return false;
  }
  std::vector<const memory::DeviceMemory*> devices;
  for (const auto& d : a.devices)
    if (d.device_type != kMemoryCpu) devices.push_back(&d);
  if (devices.empty())
    for (const auto& d : a.devices) devices.push_back(&d);
  std::stable_sort(devices.begin(), devices.end(), [](auto* x, auto* y) { return x->peak_allocated > y->peak_allocated; });
  if (devices.size() > kMaxDevices) devices.resize(kMaxDevices);
  scene.width = s.width;
  scene.background = s.background;
  float y = s.pad + s.title;
  scene.text(Role::Title, s.pad, y, fit_text(title + (title.empty() ? "" : " · ") + "memory", s.width - 2 * s.pad, s.title, true), s.title,
             s.ink, Anchor::Left, true);
  y += s.title * 0.9f;
  TimeNs end = std::max(store.end_ns, store.memory.empty() ? 0 : store.memory.ts.back());
  for (const memory::DeviceMemory* d : devices) {
    y = device_panel(scene, s, *d, end, y, stats);
    ++stats.devices;
  }
  Legend legend(s);
  legend.add(allocated_fill(s), "allocated");
  if (std::any_of(devices.begin(), devices.end(), [](auto* d) { return d->reserved_known; })) legend.add(reserved_ink(s), "reserved");
  legend.add(peak_ink(s), "peak");
  y = legend.emit(scene, s.pad, y, s.width - 2 * s.pad) + s.small;
  y = at_peak_bars(scene, s, store, *devices.front(), y, stats);
  scene.height = y + s.pad;
  return true;
}

}  // namespace sl::fig
