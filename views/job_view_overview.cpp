// A job tab's rank overview: per-rank (or per-band) busy and idle-cause columns drawn as the
// timeline's pinned custom rows, the overview strip's mean busy, and the rows' hover and click.
#include "views/job_view.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "core/present/palette.h"
#include "core/present/time_axis.h"
#include "views/frame_profile.h"
#include "views/job_view_overview_row.h"
#include "views/job_view_text.h"

namespace sl::views {
namespace {

namespace fs = std::filesystem;

constexpr ImU32 kBusyColor = IM_COL32(0, 114, 178, 255);  // Okabe–Ito blue, as the figure
constexpr ImU32 kWorstColor = IM_COL32(0, 60, 110, 255);  // a band's worst member: the same blue, darker
constexpr ImU32 kLastColor = IM_COL32(213, 30, 30, 255);
constexpr ImU32 kCutColor = IM_COL32(230, 150, 0, 255);  // a rank whose file is cut off: amber, a warning

ImU32 cause_color(int cause, int alpha) {
  present::Rgb c = present::idle_cause_rgb(cause);
  return IM_COL32(c.r, c.g, c.b, alpha);
}

}  // namespace

const ImVec4 kCutText(0.9f, 0.6f, 0.0f, 1);

// One rank's columns in two layers: the idle cause as background (where the column is not fully
// busy), then busy as bar height, quantised to `levels` (the row's pixel height). Built once per
// re-binning and row height, so a frame that keeps its view only replays the runs. Few runs, as
// the pixels are the same: the busy bars are opaque, so a fully busy column hides whatever idle
// run passes under it (idle runs merge across such columns), and the bars are drawn as the fewest
// rectangles standing on the row's bottom whose union is the bars' outline (a lower bar spans its
// taller neighbours under them: a row of 2, 3, 2, 3 is one rectangle of 2 and two of 3).
void JobView::ProfileRuns::build(const analysis::RankBins& b, int quantised_levels, const analysis::RankBins* below) {
  size_t n = b.busy.size();
  static thread_local std::vector<uint8_t> level;
  level.resize(n);
  for (size_t i = 0; i < n; ++i) level[i] = present::busy_level(b.busy[i], quantised_levels);
  // Only where these columns are lower than `below`'s (a band's worst under its median).
  for (size_t i = 0; below && i < n; ++i)
    if (i >= below->busy.size() || level[i] >= present::busy_level(below->busy[i], quantised_levels)) level[i] = 0;
  build(level.data(), b.cause.data(), n, quantised_levels);
}

void JobView::ProfileRuns::build(const uint8_t* level, const int8_t* cause, size_t n, int quantised_levels) {
  levels = quantised_levels;
  idle.clear(), busy.clear();
  const auto full = uint8_t(levels);
  for (size_t i = 0; cause && i < n;) {
    if (level[i] == full || cause[i] < 0) {
      ++i;
      continue;
    }
    int8_t c = cause[i];
    size_t j = i + 1;
    while (j < n && (level[j] == full || cause[j] == c)) ++j;
    idle.push_back({uint32_t(i), uint32_t(j), c});
    i = j;
  }
  // The bars' outline by a stack of the rectangles still open, lowest first (levels are at most
  // 16: one per pixel of a row's bar, so the stack fits on this frame's stack).
  struct Open {
    uint32_t x0;
    uint32_t level;
  };
  Open open[18];
  open[0] = {0, 0};  // the ground: never closed
  size_t top = 0;
  for (size_t i = 0; i <= n; ++i) {
    uint32_t l = i < n ? std::min<uint32_t>(level[i], 16) : 0;
    for (; open[top].level > l; --top) busy.push_back({open[top].x0, uint32_t(i), int8_t(open[top].level)});
    if (open[top].level < l) open[++top] = {uint32_t(i), l};
  }
}

namespace {

// The runs above as rectangles, reserved a batch at a time and written as PrimRect writes them
// (the same vertices, indices and order as AddRectFilled's), without a call and a reserve per
// rectangle; the vertex count follows the width and the row height, not events.
template <class Runs, class Rect>
void add_rects(ImDrawList* dl, const Runs& runs, Rect&& rect) {
  constexpr size_t kBatch = 8192;  // 32k vertices: a reserve stays within 16-bit indices
  const ImVec2 uv = ImGui::GetFontTexUvWhitePixel();  // what PrimRect writes (the shared data's)
  for (size_t i = 0; i < runs.size(); i += kBatch) {
    size_t n = std::min(kBatch, runs.size() - i);
    dl->PrimReserve(int(n * 6), int(n * 4));
    ImDrawVert* v = dl->_VtxWritePtr;
    ImDrawIdx* idx = dl->_IdxWritePtr;
    auto at = ImDrawIdx(dl->_VtxCurrentIdx);
    for (size_t k = i; k < i + n; ++k, v += 4, idx += 6, at = ImDrawIdx(at + 4)) {
      auto [a, c, col] = rect(runs[k]);
      idx[0] = at, idx[1] = ImDrawIdx(at + 1), idx[2] = ImDrawIdx(at + 2);
      idx[3] = at, idx[4] = ImDrawIdx(at + 2), idx[5] = ImDrawIdx(at + 3);
      v[0] = {a, uv, col}, v[1] = {ImVec2(c.x, a.y), uv, col}, v[2] = {c, uv, col}, v[3] = {ImVec2(a.x, c.y), uv, col};
    }
    dl->_VtxWritePtr = v, dl->_IdxWritePtr = idx, dl->_VtxCurrentIdx += unsigned(n * 4);
  }
}

struct Rect {
  ImVec2 a, c;
  ImU32 col;
};

void draw_runs(ImDrawList* dl, const JobView::ProfileRuns& p, float x0, float y, float h, ImU32 busy_color = kBusyColor) {
  add_rects(dl, p.idle, [&](const auto& r) { return Rect{ImVec2(x0 + float(r.x0), y), ImVec2(x0 + float(r.x1), y + h), cause_color(r.value, 140)}; });
  add_rects(dl, p.busy, [&](const auto& r) {
    return Rect{ImVec2(x0 + float(r.x0), y + h - h * float(r.value) / float(p.levels)), ImVec2(x0 + float(r.x1), y + h), busy_color};
  });
}

// One texel row of a band: where a column's bar reaches `need` levels or more, the bar's colour
// (restrict: the level bytes may not alias the texels, so the loop vectorises).
void fill_texel_row(uint32_t* __restrict out, const uint8_t* __restrict median, const uint8_t* __restrict worst,
                    const uint32_t* __restrict idle, size_t n, uint8_t need) {
  for (size_t c = 0; c < n; ++c) {  // every load unconditional: selects, not branches
    uint32_t under = idle[c];
    uint32_t bar = median[c] >= need ? kBusyColor : under;
    out[c] = worst[c] >= need ? kWorstColor : bar;
  }
}

// A band's texel rows [top, top + levels), the picture draw_runs draws of its median and worst
// runs: per column, from the bar's top down the median's busy (the worst member's darker where
// its bar is lower), above it the idle cause as draw_runs blends it (alpha 140), else clear.
void fill_band_texels(PixelImage& image, int top, const present::BandLevels& q, int levels) {
  size_t n = std::min(q.median.size(), size_t(image.width()));
  std::array<uint32_t, analysis::kIdleCauseCount + 1> cause_lut{};  // by cause + 1 (-1: none)
  for (int c = 0; c < analysis::kIdleCauseCount; ++c) cause_lut[size_t(c + 1)] = cause_color(c, 140);
  static thread_local std::vector<uint32_t> idle;
  idle.resize(n);
  for (size_t c = 0; c < n; ++c) idle[c] = cause_lut[size_t(std::clamp<int>(q.cause[c] + 1, 0, analysis::kIdleCauseCount))];
  for (int k = 0; k < levels; ++k) fill_texel_row(image.row(top + k), q.median.data(), q.worst.data(), idle.data(), n, uint8_t(levels - k));
}

}  // namespace

// The overview strip over the job's whole range: the mean of every loaded rank's busy fraction
// per column (so it shows the job before any rank is expanded), re-binned only when the range,
// the width or the clocks change: O(columns · log n) per rank then, nothing per frame.
const std::vector<float>& JobView::strip_busy(TimeNs start, TimeNs end, int columns) {
  StripCache& c = strip_;
  if (c.start == start && c.end == end && c.columns == columns && c.version == overview_version_) return c.busy;
  c.start = start, c.end = end, c.columns = columns, c.version = overview_version_;
  c.busy.assign(size_t(std::max(columns, 0)), 0.f);
  c.busy_ns = 0;
  std::vector<TimeNs> edges = analysis::column_edges(start, end, columns);
  if (edges.empty() || overview_.ranks.empty()) return c.busy;
  for (const analysis::RankActivity& rank : overview_.ranks) {
    analysis::RankBins bins = analysis::bin_rank(rank, edges);
    for (size_t i = 0; i < c.busy.size() && i < bins.busy.size(); ++i) c.busy[i] += bins.busy[i];
  }
  auto ranks = float(overview_.ranks.size());
  for (size_t i = 0; i < c.busy.size(); ++i) {
    c.busy[i] /= ranks;
    if (i + 1 < edges.size()) c.busy_ns += double(c.busy[i]) * double(edges[i + 1] - edges[i]);
  }
  return c.busy;
}

int JobView::instance_at(size_t row, TimeNs t, TimeNs tolerance) const {
  const std::vector<Span>& spans = spans_[row];
  auto it = std::upper_bound(spans.begin(), spans.end(), t + tolerance, [](TimeNs v, const Span& s) { return v < s.start; });
  int best = -1;
  TimeNs best_distance = tolerance + 1;
  // Occurrences never overlap much on one rank: look back a few from the first past `t`.
  for (int k = 0; k < 8 && it != spans.begin(); ++k) {
    --it;
    TimeNs d = t < it->start ? it->start - t : t > it->end ? t - it->end : 0;
    if (d < best_distance) best_distance = d, best = it->instance;
  }
  return best;
}

// One column per pixel of the timeline's slice area, over its window; only when that changed.
void JobView::rebin(const TimeMapping& map) {
  int columns = std::max(1, int(map.x1 - map.x0));
  if (bins_t0_ == map.t0 && bins_t1_ == map.t1 && bins_columns_ == columns && bins_.size() == overview_.ranks.size()) return;
  bins_.resize(overview_.ranks.size());
  std::vector<TimeNs> edges = analysis::column_edges(TimeNs(map.t0), TimeNs(map.t1), columns);
  for (size_t i = 0; i < overview_.ranks.size(); ++i) bins_[i] = analysis::bin_rank(overview_.ranks[i], edges);
  bins_t0_ = map.t0, bins_t1_ = map.t1, bins_columns_ = columns;
  ++bins_version_;
}

const JobView::ProfileRuns& JobView::runs_of(std::vector<ProfileRuns>& cache, size_t i, const analysis::RankBins& bins,
                                             uint64_t version, float height, const analysis::RankBins* below) {
  if (cache.size() <= i) cache.resize(i + 1);
  ProfileRuns& runs = cache[i];
  int levels = std::clamp(int(height), 1, 16);
  if (runs.version != version || runs.levels != levels) {
    runs.build(bins, levels, below);
    runs.version = version;
  }
  return runs;
}

std::pair<size_t, size_t> JobView::row_ranks(size_t row) const { return {rows_[row].first, rows_[row].last}; }

std::string JobView::rank_summary(int64_t rank) const {
  const analysis::StragglerRow* s = straggler_row(rank);
  return "it " + (s && s->iteration_mean ? ms(TimeNs(*s->iteration_mean)) : std::string("-")) + " \xC2\xB7 wait " +
         (s ? ms(s->wait) : std::string("-"));
}

// The rows for `rows_fit` rows: every rank when they fit, else outliers alone and bands within
// nodes (core/present/rank_rows.h), only when the budget or the overview (realigned clocks move
// the outliers) changed.
void JobView::partition_rows(size_t rows_fit) {
  size_t n = job_->ranks.size();
  if (partition_fit_ == rows_fit && partition_version_ == overview_version_ && display_ranks_.size() == n) return;
  partition_fit_ = rows_fit, partition_version_ = overview_version_;
  display_ranks_.clear();
  for (const JobRank& r : job_->ranks) display_ranks_.push_back(r.rank);
  std::vector<present::RankRow> rows = present::partition_rank_rows(display_ranks_, rows_fit, outlier_ranks_, node_of_rank_);
  auto same = [](const present::RankRow& a, const present::RankRow& b) { return a.first == b.first && a.last == b.last && a.outlier == b.outlier; };
  if (!std::equal(rows.begin(), rows.end(), rows_.begin(), rows_.end(), same)) ++partition_;
  rows_ = std::move(rows);
  aggregated_ = rows_.size() < n;
  group_ = 1;
  row_of_job_index_.assign(n, 0);
  for (size_t d = 0; d < rows_.size(); ++d) {
    group_ = std::max(group_, rows_[d].size());
    for (size_t i = rows_[d].first; i < rows_[d].last; ++i) row_of_job_index_[i] = d;
  }
}

// Many ranks: each band row stands for its consecutive ranks. Until their pyramid is built (below)
// a band shows its members' mean busy fraction and the idle cause most of them show per column,
// from every member's bins: O(ranks × columns) per window change.
void JobView::rebuild_bands() {
  if (!aggregated_ || (bands_version_ == bins_version_ && bands_group_ == partition_)) return;
  size_t rows = rows_.size(), columns = size_t(bins_columns_);
  bands_.assign(rows, {});
  for (size_t d = 0; d < rows; ++d) {
    analysis::RankBins& band = bands_[d];
    band.busy.assign(columns, 0.f);
    band.cause.assign(columns, -1);
    std::vector<std::array<uint16_t, analysis::kIdleCauseCount>> votes(columns);
    size_t members = 0;
    auto [a, b] = row_ranks(d);
    for (size_t r = a; r < b; ++r) {
      int k = ov_index(job_->ranks[r].rank);
      if (k < 0) continue;
      ++members;
      const analysis::RankBins& bins = bins_[size_t(k)];
      for (size_t c = 0; c < columns && c < bins.busy.size(); ++c) {
        band.busy[c] += bins.busy[c];
        if (bins.cause[c] >= 0) ++votes[c][size_t(bins.cause[c])];
      }
    }
    for (size_t c = 0; c < columns; ++c) {
      if (members) band.busy[c] /= float(members);
      uint16_t best = 0;
      for (int k = 0; k < analysis::kIdleCauseCount; ++k)
        if (votes[c][size_t(k)] > best) best = votes[c][size_t(k)], band.cause[c] = int8_t(k);
    }
  }
  bands_version_ = bins_version_, bands_group_ = partition_;
}

// The bands from their pyramid (core/present/rank_bands.h): every member binned once onto the job
// clock's grid on a worker thread, per partition into bands and per overview (clocks); then a
// frame costs O(bands × columns) whatever the rank count. Also each band's header numbers, once
// per partition.
void JobView::update_band_pyramid() {
  if (band_future_.valid() && band_future_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    std::shared_ptr<const present::BandPyramid> pyramid = band_future_.get();
    if (band_future_group_ == partition_ && band_future_version_ == overview_version_) {
      band_columns_ = std::make_unique<present::BandColumns>(std::move(pyramid));
      band_group_ = partition_, band_version_ = overview_version_;
      ++band_generation_;
    }
  }
  if (!aggregated_) return;
  size_t rows = rows_.size();
  if (band_labels_group_ != partition_ || band_labels_version_ != overview_version_) {
    band_labels_.assign(rows, {});
    for (size_t d = 0; d < rows; ++d) {
      auto [a, b] = row_ranks(d);
      for (size_t r = a; r < b; ++r) {
        band_labels_[d].loaded += present(job_->ranks[r]);
        if (const auto* s = straggler_row(job_->ranks[r].rank)) band_labels_[d].worst_wait = std::max(band_labels_[d].worst_wait, s->wait);
      }
      band_labels_[d].label = present::rank_row_label(rows_[d], display_ranks_);
      band_labels_[d].summary = b - a == 1 ? rank_summary(job_->ranks[a].rank) : "max wait " + ms(band_labels_[d].worst_wait);
    }
    band_labels_group_ = partition_, band_labels_version_ = overview_version_;
  }
  if (bands_from_pyramid()) return;
  if (band_future_.valid()) {
    if (band_future_group_ == partition_ && band_future_version_ == overview_version_) return;  // on its way
    *band_cancel_ = true;  // for another partition or clocks: stops within a rank
    band_future_.get();
  }
  // The members by value (shared summaries): a realign may replace overview_ while this runs.
  std::vector<analysis::RankActivity> ranks;
  std::vector<std::vector<size_t>> members(rows);
  for (size_t d = 0; d < rows; ++d) {
    auto [a, b] = row_ranks(d);
    for (size_t r = a; r < b; ++r)
      if (int k = ov_index(job_->ranks[r].rank); k >= 0) members[d].push_back(ranks.size()), ranks.push_back(overview_.ranks[size_t(k)]);
  }
  band_cancel_ = std::make_shared<std::atomic<bool>>(false);
  band_future_group_ = partition_, band_future_version_ = overview_version_;
  band_future_ = std::async(std::launch::async, [ranks = std::move(ranks), members = std::move(members), span = overview_.span,
                                                 cancel = band_cancel_, wake = wake_] {
    std::vector<std::vector<const analysis::RankActivity*>> bands(members.size());
    for (size_t d = 0; d < members.size(); ++d)
      for (size_t i : members[d]) bands[d].push_back(&ranks[i]);
    auto pyramid = std::make_shared<const present::BandPyramid>(present::build_band_pyramid(bands, span, 0, cancel.get()));
    if (!*cancel) wake();
    return pyramid;
  });
}

void JobView::draw_band(ImDrawList* dl, size_t row, const TimelineRect& header, const TimeMapping& map, float y, float h,
                        bool labelled) {
  auto [a, b] = row_ranks(row);
  ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
  float x0 = map.x0, x1 = map.x1;
  size_t loaded = row < band_labels_.size() ? band_labels_[row].loaded : 0;
  if (rows_[row].outlier) dl->AddRectFilled(ImVec2(header.x0, y), ImVec2(header.x0 + 3, y + std::max(h, 3.f)), kCutColor);  // marked
  if (labelled && row < band_labels_.size()) {  // "node 3 · ranks 24–31", or an outlier's "rank 77" and its own numbers
    frame_profile::Scope scope(frame_profile::Labels);
    BandLabel& text = band_labels_[row];  // formatted once per partition, measured once per font size
    if (text.font_size != ImGui::GetFontSize()) {
      text.font_size = ImGui::GetFontSize();
      text.label_w = ImGui::CalcTextSize(text.label.c_str()).x, text.summary_w = ImGui::CalcTextSize(text.summary.c_str()).x;
    }
    dl->AddText(ImVec2(header.x0 + 4, y), loaded == b - a ? ink : kLastColor, text.label.c_str());
    float sx = header.x1 - 8 - text.summary_w;  // only where it clears the label (the tooltip has it)
    if (sx >= header.x0 + 4 + text.label_w + 6) dl->AddText(ImVec2(sx, y), ink, text.summary.c_str());
  }
  if (loaded == 0) {
    dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1, y + h), IM_COL32(213, 30, 30, 90));
  } else if (bands_from_pyramid()) {
    // The median member's busy over the cause most members show; where the worst member is
    // lower by a pixel, its busy darker inside the median's bar (so a uniform band looks as a rank).
    // Quantised as the pyramid resamples them, and their runs: once per window, width and height.
    int levels = std::clamp(int(h), 1, 16), columns = std::max(1, int(map.x1 - map.x0));
    if (band_runs_.size() <= row) band_runs_.resize(row + 1);
    if (band_worst_runs_.size() <= row) band_worst_runs_.resize(row + 1);
    ProfileRuns &median = band_runs_[row], &worst = band_worst_runs_[row];
    const present::BandLevels* q;
    {
      frame_profile::Scope scope(frame_profile::BandColumns);  // cached: recomputed once per window, width and height
      q = &band_columns_->levels(row, map.t0, map.t1, columns, levels);
    }
    uint64_t version = (uint64_t(1) << 63) | (band_generation_ << 40) | band_columns_->version();
    if (draw_band_image(dl, row, *q, version, levels, x0, y, h)) return;
    if (median.version != version || median.levels != levels || worst.version != version) {
      frame_profile::Scope scope(frame_profile::Runs);
      median.build(q->median.data(), q->cause.data(), q->median.size(), levels);
      worst.build(q->worst.data(), nullptr, q->worst.size(), levels);
      median.version = worst.version = version;
    }
    frame_profile::Scope scope(frame_profile::DrawRuns);
    draw_runs(dl, median, x0, y, h);
    draw_runs(dl, worst, x0, y, h, kWorstColor);
  } else {
    draw_runs(dl, runs_of(band_runs_, row, bands_[row], bands_version_ * 4096 + bands_group_, h), x0, y, h);
  }
}

bool JobView::draw_band_image(ImDrawList* dl, size_t row, const present::BandLevels& q, uint64_t version, int levels, float x0,
                              float y, float h) {
  ImTextureID texture = band_image_.texture();
  if (!texture) return false;
  int columns = int(q.median.size()), height = int(rows_.size()) * levels;
  if (band_image_.resize(columns, height) || band_texels_.size() != rows_.size()) band_texels_.assign(rows_.size(), {UINT64_MAX, 0});
  if (band_texels_[row] != std::pair(version, levels)) {
    frame_profile::Scope scope(frame_profile::Texels);
    fill_band_texels(band_image_, int(row) * levels, q, levels);
    band_texels_[row] = {version, levels};
  }
  frame_profile::Scope scope(frame_profile::DrawRuns);
  auto v0 = float(row * size_t(levels)) / float(height), v1 = float((row + 1) * size_t(levels)) / float(height);
  dl->AddImage(texture, ImVec2(x0, y), ImVec2(x0 + float(columns), y + h), ImVec2(0, v0), ImVec2(1, v1));
  return true;
}

// ---- the overview rows, as custom rows of the job's timeline ------------------------------

// This frame's rows: they shrink with the rank count (26 px for 8 ranks, down to 3 px); beyond
// that each row aggregates consecutive ranks, so every rank stays on screen in `height` pixels.
void JobView::layout_overview(float height) {
  frame_profile::Scope scope(frame_profile::Layout);
  partition_rows(std::max<size_t>(1, size_t(height / 3)));
  size_t rows = rows_.size();
  row_height_ = std::clamp(std::floor(height / float(std::max<size_t>(rows, 1))), 3.f, 26.f);
  // Rows too short for text: label every k-th row so the labels never overlap, and every outlier
  // (a band label too close before or after one gives way to it).
  float font = ImGui::GetFontSize();
  size_t label_every = row_height_ >= font * 0.8f ? 1 : size_t(std::ceil(font * 1.1f / row_height_));
  row_labelled_.assign(rows, 0);
  size_t next_outlier = 0, last_labelled = SIZE_MAX;
  for (size_t r = 0; r < rows; ++r) {
    if (next_outlier < r) next_outlier = r;
    while (next_outlier < rows && !rows_[next_outlier].outlier) ++next_outlier;
    bool room = (last_labelled == SIZE_MAX || r - last_labelled >= label_every) && (next_outlier - r >= label_every || next_outlier == r);
    if (rows_[r].outlier || (r % label_every == 0 && room)) row_labelled_[r] = 1, last_labelled = r;
  }
  if (overview_rows_.size() != rows) {
    overview_rows_.clear();
    std::vector<CustomRow*> shown;
    for (size_t r = 0; r < rows; ++r) shown.push_back(overview_rows_.emplace_back(std::make_unique<OverviewRow>(*this, r)).get());
    timeline_.set_custom_rows(std::move(shown));
  }
  update_band_pyramid();
  rows_drawn_ = 0;
  marked_ranks_.clear();
  // The selected instance's arrivals by the row that shows them (one pass, not one per row), once
  // per selection, partition and overview.
  ArrivalsKey key{selected_, partition_, overview_version_, rows};
  if (key == arrivals_key_) return;
  arrivals_key_ = key;
  arrivals_by_row_.assign(rows, {});
  skew_first_ = INT64_MAX, skew_last_ = INT64_MIN;
  if (selected_ < 0) return;
  frame_profile::Scope arrivals(frame_profile::Arrivals);
  for (const auto& a : overview_.collectives.instances[size_t(selected_)].arrivals) {
    auto it = job_index_of_rank_.find(a.rank);
    if (it == job_index_of_rank_.end()) continue;
    arrivals_by_row_[row_of_job_index_[it->second]].push_back(&a);
    skew_first_ = std::min(skew_first_, a.arrival), skew_last_ = std::max(skew_last_, a.arrival);
  }
}

void JobView::draw_overview_row(ImDrawList* dl, size_t row, const TimelineRect& header, const TimelineRect& canvas,
                                const TimeMapping& map) {
  if (!bands_from_pyramid()) {  // the first row of a frame re-bins when the window moved; the others find it done
    rebin(map);
    rebuild_bands();
  }
  ++rows_drawn_;
  float x0 = canvas.x0, x1 = canvas.x1, y = canvas.y0;
  float gap = row_height_ >= 10 ? 2.f : 0.f, h = row_height_ - gap;
  float font = ImGui::GetFontSize();
  size_t label_every = row_height_ >= font * 0.8f ? 1 : size_t(std::ceil(font * 1.1f / row_height_));
  bool labelled = row < row_labelled_.size() && row_labelled_[row];
  ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
  dl->PushClipRect(ImVec2(header.x0, y), ImVec2(canvas.x1, y + std::max(row_height_, font + 2)), true);
  if (aggregated_) {
    draw_band(dl, row, header, map, y, h, labelled);
  } else {
    const JobRank& jr = job_->ranks[row];
    if (jr.rank == focused_) dl->AddRectFilled(ImVec2(header.x0, y), ImVec2(x1, y + row_height_), IM_COL32(255, 200, 0, 50));
    float text_y = y + (label_every > 1 ? 0.f : (h - font) / 2);
    if (labelled) dl->AddText(ImVec2(header.x0 + 4, text_y), present(jr) ? ink : kLastColor, ("rank " + std::to_string(jr.rank)).c_str());
    int k = ov_index(jr.rank);
    if (k < 0) {
      std::string text = "failed to load: " + jr.error.message;
      if (labelled) dl->AddText(ImVec2(x0 + 4, text_y), kLastColor, text.c_str());
      else dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1, y + h), IM_COL32(213, 30, 30, 90));
    } else {
      draw_runs(dl, runs_of(rank_runs_, size_t(k), bins_[size_t(k)], bins_version_, h), x0, y, h);
      if (labelled) {  // the summary column: right-aligned in the header, a cut-off marker after it
        std::string summary = rank_summary(jr.rank);
        bool cut = !cut_off_text(jr).empty();  // the marker; the hover tooltip carries the banner text
        float cut_w = cut ? ImGui::CalcTextSize(" \xC2\xB7 cut off").x : 0;
        float sx = header.x1 - 8 - cut_w - ImGui::CalcTextSize(summary.c_str()).x;
        dl->AddText(ImVec2(sx, text_y), ink, summary.c_str());
        if (cut) dl->AddText(ImVec2(header.x1 - 8 - cut_w, text_y), kCutColor, " \xC2\xB7 cut off");
      }
    }
  }
  dl->PopClipRect();
  draw_selected_instance(dl, row, canvas, map);
}

// The selected collective on this row: the skew band (first to last arrival, across every row),
// each of the row's ranks' span and arrival, the last rank in red.
void JobView::draw_selected_instance(ImDrawList* dl, size_t row, const TimelineRect& canvas, const TimeMapping& map) {
  if (selected_ < 0 || row >= arrivals_by_row_.size() || skew_first_ > skew_last_) return;
  frame_profile::Scope scope(frame_profile::Selected);
  const auto& in = overview_.collectives.instances[size_t(selected_)];
  float x0 = canvas.x0, x1 = canvas.x1, y = canvas.y0;
  float gap = row_height_ >= 10 ? 2.f : 0.f, h = row_height_ - gap;
  float fa = map.x_of(double(skew_first_)), fb = std::max(map.x_of(double(skew_last_)), fa + 1);
  if (fb >= x0 && fa <= x1) dl->AddRectFilled(ImVec2(std::max(x0, fa), y), ImVec2(std::min(x1, fb), y + row_height_), IM_COL32(213, 30, 30, 40));
  ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
  // A band's members mostly arrive within a pixel of each other: one line per pixel column (the
  // last rank's always drawn), so a frame draws at most a line per pixel, not one per rank.
  static thread_local std::vector<int> drawn_columns;  // this row's, to clear `drawn` after it
  static thread_local std::vector<char> drawn;           // per pixel column of the canvas
  drawn.resize(size_t(std::max(0.f, x1 - x0)) + 2);
  for (const analysis::CollectiveArrival* a : arrivals_by_row_[row]) {
    float xa = map.x_of(double(a->arrival)), xb = std::max(map.x_of(double(a->end)), xa + 1);
    if (xb < x0 || xa > x1) continue;
    xa = std::max(xa, x0), xb = std::min(xb, x1);
    bool is_last = a->rank == in.last_rank;
    marked_ranks_.push_back(a->rank);
    if (row_height_ < 10 && !is_last && arrivals_by_row_[row].size() > 1) {
      auto column = std::min(drawn.size() - 1, size_t(xa - x0));
      if (drawn[column]) continue;
      drawn[column] = 1, drawn_columns.push_back(int(column));
    }
    if (row_height_ >= 10 || is_last)  // short rows: the arrival line alone, so the busy profile stays visible
      dl->AddRect(ImVec2(xa, y), ImVec2(xb, y + h), is_last ? kLastColor : ink, 0, 0, is_last ? 2.f : 1.f);
    dl->AddLine(ImVec2(xa, y - 1), ImVec2(xa, y + h + 1), is_last ? kLastColor : ink, 2.f);
  }
  for (int c : drawn_columns) drawn[size_t(c)] = 0;
  drawn_columns.clear();
}

JobView::OverviewHit JobView::overview_hit(size_t row, ImVec2 mouse, const TimeMapping& map) const {
  OverviewHit hit;
  hit.t = map.t_of(mouse.x);
  if (row >= rows_.size()) return hit;
  auto [first, last] = row_ranks(row);
  hit.rank = first;
  if (mouse.x < map.x0 || mouse.x > map.x1) return hit;
  for (size_t m = first; m < last && hit.instance < 0; ++m) {
    int k = ov_index(job_->ranks[m].rank);
    if (k >= 0) hit.instance = instance_at(size_t(k), TimeNs(hit.t), TimeNs(4 * map.ns_per_px));
    if (hit.instance >= 0) hit.rank = m;
  }
  return hit;
}

// A click selects the collective under the mouse, or, off any collective, expands or collapses the rank.
void JobView::overview_click(size_t row, ImVec2 mouse, const TimeMapping& map) {
  OverviewHit hit = overview_hit(row, mouse, map);
  if (hit.rank >= job_->ranks.size()) return;
  int64_t rank = job_->ranks[hit.rank].rank;
  if (hit.instance >= 0) select_instance(hit.instance);
  else if (ov_index(rank) >= 0) expand_rank(rank, expanded_source(rank) < 0);
}

void JobView::overview_tooltip(size_t row, ImVec2 mouse, const TimeMapping& map) {
  OverviewHit hit = overview_hit(row, mouse, map);
  if (hit.rank >= job_->ranks.size()) return;
  const JobRank& jr = job_->ranks[hit.rank];
  int col = int(mouse.x - map.x0);
  ImGui::BeginTooltip();
  if (aggregated_ && rows_[row].outlier) ImGui::TextColored(kCutText, "an outlier rank (iteration time or wait far beyond the median): on its own row");
  if (aggregated_ && rows_[row].size() > 1) {
    ImGui::Text("%s (%zu ranks); the numbers below are rank %lld's", present::rank_row_label(rows_[row], display_ranks_).c_str(),
                rows_[row].size(), (long long)jr.rank);
    if (bands_from_pyramid()) {
      const present::BandRow& band = band_columns_->row(row, map.t0, map.t1, std::max(1, int(map.x1 - map.x0)));
      if (col >= 0 && col < int(band.median.busy.size()))
        ImGui::TextDisabled("row: GPU busy %.0f%% for the median rank, %.0f%% for the worst in this column",
                            band.median.busy[size_t(col)] * 100.0, band.worst.busy[size_t(col)] * 100.0);
    } else if (col >= 0 && row < bands_.size() && col < int(bands_[row].busy.size())) {
      ImGui::TextDisabled("row: mean GPU busy %.0f%% in this column", bands_[row].busy[size_t(col)] * 100.0);
    }
  }
  ImGui::Text("rank %lld · %s", (long long)jr.rank, fs::path(jr.path).filename().c_str());
  if (!present(jr)) ImGui::TextColored(ImVec4(0.8f, 0.1f, 0.1f, 1), "failed: %s", jr.error.to_string().c_str());
  // A cut-off rank: the banner's words first, before the numbers it makes suspect.
  if (std::string cut = cut_off_text(jr); !cut.empty()) ImGui::TextColored(kCutText, "%s", cut.c_str());
  if (const analysis::StragglerRow* s = present(jr) ? straggler_row(jr.rank) : nullptr) {
    ImGui::Text("iteration mean %s over %llu · waited %s in %llu collectives",
                s->iteration_mean ? ms(TimeNs(*s->iteration_mean)).c_str() : "-", (unsigned long long)s->iterations,
                ms(s->wait).c_str(), (unsigned long long)s->collectives);
    ImGui::Text("last in %llu · made the others wait %s%s%s", (unsigned long long)s->late_count, ms(s->delay_caused).c_str(),
                s->top_cause.empty() ? "" : ", mostly after ", analysis::cause_phrase(s->top_cause).c_str());
    ImGui::Text("GPU compute %s · communication %s · idle %s", ms(s->compute).c_str(), ms(s->communication).c_str(),
                ms(s->idle).c_str());
  }
  int k = ov_index(jr.rank);
  // The rank's own column: from the frame's bins, or (bands from their pyramid) binned for it now.
  analysis::RankBins own;
  const analysis::RankBins* bins = k >= 0 && size_t(k) < bins_.size() && !bands_from_pyramid() ? &bins_[size_t(k)] : nullptr;
  if (k >= 0 && !bins) own = analysis::bin_rank(overview_.ranks[size_t(k)], TimeNs(map.t0), TimeNs(map.t1), std::max(1, int(map.x1 - map.x0)));
  if (k >= 0 && !bins) bins = &own;
  if (bins && col >= 0 && col < int(bins->busy.size())) {
    int c = bins->cause[size_t(col)];
    ImGui::TextDisabled("at %s: GPU busy %.0f%%%s%s", present::format_duration(hit.t).c_str(), bins->busy[size_t(col)] * 100.0,
                        c >= 0 ? ", idle mostly " : "", c >= 0 ? present::idle_cause_label(c) : "");
  }
  ImGui::TextDisabled("header: mean iteration \xC2\xB7 time waited in collectives");
  ImGui::TextDisabled(expanded_source(jr.rank) >= 0 ? "click: select a collective, or collapse this rank"
                                                    : "click: select a collective, or expand this rank");
  ImGui::EndTooltip();
}

}  // namespace sl::views
