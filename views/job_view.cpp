#include "views/job_view.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <utility>

#include "core/import_issues.h"
#include "core/json_writer.h"
#include "figures/cairo_output.h"
#include "figures/ranks_figure.h"
#include "core/present/palette.h"
#include "core/present/time_axis.h"
#include "views/insights_view.h"
#include "views/workspace.h"

namespace sl::views {
namespace {

namespace fs = std::filesystem;

constexpr ImU32 kBusyColor = IM_COL32(0, 114, 178, 255);  // Okabe–Ito blue, as the figure
constexpr ImU32 kLastColor = IM_COL32(213, 30, 30, 255);
constexpr ImU32 kCutColor = IM_COL32(230, 150, 0, 255);  // a rank whose file is cut off: amber, a warning
const ImVec4 kCutText(0.9f, 0.6f, 0.0f, 1);

// The single-trace banner's words for a rank whose file was cut off; "" when it was not.
std::string cut_off_text(const JobRank& r) {
  return r.ok() && r.store->issues.truncation ? describe(*r.store->issues.truncation) : std::string();
}

ImU32 cause_color(int cause, int alpha) {
  present::Rgb c = present::idle_cause_rgb(cause);
  return IM_COL32(c.r, c.g, c.b, alpha);
}

std::string ms(TimeNs ns) { return present::format_duration(double(ns)); }

uint64_t slice_key(SliceRef s) { return (uint64_t(s.track) << 32) | s.index; }

}  // namespace

// One rank's columns in two layers, each merging equal neighbours into one rectangle: the idle
// cause as background (where the column is not fully busy), then busy as bar height, quantised
// to `levels` (the row's pixel height). Built once per re-binning and row height, so a frame
// that keeps its view only replays the runs.
void JobView::ProfileRuns::build(const analysis::RankBins& b, int quantised_levels) {
  levels = quantised_levels;
  idle.clear(), busy.clear();
  size_t n = b.busy.size();
  std::vector<uint8_t> level(n);
  for (size_t i = 0; i < n; ++i) {  // std::lround for v >= 0 (halves up), without its library call
    float v = b.busy[i] * float(levels);
    int whole = int(v);
    level[i] = uint8_t(whole + (v - float(whole) >= 0.5f));
  }
  auto idle_at = [&](size_t i) { return level[i] < levels ? b.cause[i] : int8_t(-1); };
  for (size_t i = 0, j = 0; i < n; i = j) {
    for (j = i + 1; j < n && idle_at(j) == idle_at(i);) ++j;
    if (idle_at(i) >= 0) idle.push_back({uint32_t(i), uint32_t(j), idle_at(i)});
  }
  for (size_t i = 0, j = 0; i < n; i = j) {
    for (j = i + 1; j < n && level[j] == level[i];) ++j;
    if (level[i] > 0) busy.push_back({uint32_t(i), uint32_t(j), int8_t(level[i])});
  }
}

namespace {

// The runs above as rectangles; the vertex count follows the width and the row height, not events.
void draw_runs(ImDrawList* dl, const JobView::ProfileRuns& p, float x0, float y, float h) {
  for (const auto& r : p.idle)
    dl->AddRectFilled(ImVec2(x0 + float(r.x0), y), ImVec2(x0 + float(r.x1), y + h), cause_color(r.value, 140));
  for (const auto& r : p.busy)
    dl->AddRectFilled(ImVec2(x0 + float(r.x0), y + h - h * float(r.value) / float(p.levels)), ImVec2(x0 + float(r.x1), y + h),
                      kBusyColor);
}

}  // namespace

JobView::JobView(std::function<void()> wake) : wake_(std::move(wake)) {
  timeline_.overview_profile = [this](TimeNs start, TimeNs end, int columns) -> const std::vector<float>& {
    return strip_busy(start, end, columns);
  };
}

JobView::~JobView() {
  cancel_ = true;
  if (thread_.joinable()) thread_.join();
}

void JobView::open(const std::string& dir, const std::vector<std::string>& files) {
  plan_ = dir.empty() ? plan_job_files(files) : plan_job_dir(dir);
  fs::path p = fs::path(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  title_ = dir.empty() ? std::to_string(files.size()) + " ranks" : p.filename().string();
  started_ = ImGui::GetCurrentContext() ? ImGui::GetTime() : 0;
  if (!plan_.ok()) {
    auto failed = std::make_unique<Loaded>();
    failed->error = plan_.error;
    finished_ = std::move(failed);
    return;
  }
  loads_ = std::make_unique<RankLoad[]>(plan_.files.size());
  thread_ = std::thread([this] {
    JobOptions options;
    options.cancel = &cancel_;
    options.cache = &process_cache_settings();  // ranks open from (and go into) the snapshot cache
    options.on_rank_progress = [this](size_t i, const LoadProgress& p) {
      loads_[i].done = p.bytes_done, loads_[i].total = p.bytes_total, loads_[i].status = 1;
      wake_();
    };
    options.on_rank_done = [this](size_t i, const JobRank& r) {
      loads_[i].status = r.ok() ? 2 : 3;
      wake_();
    };
    JobResult result = load_job(plan_, options);
    auto loaded = std::make_unique<Loaded>();
    if (result.ok()) {
      analysing_ = true;
      wake_();
      loaded->overview = analysis::build_job_overview(*result.job);
      loaded->job = std::move(result.job);
    } else {
      loaded->error = result.error;
    }
    std::lock_guard lock(mutex_);
    finished_ = std::move(loaded);
    wake_();
  });
}

bool JobView::poll() {
  std::unique_ptr<Loaded> done;
  {
    std::lock_guard lock(mutex_);
    done = std::move(finished_);
  }
  std::unique_ptr<analysis::JobOverview> realigned;
  {
    std::lock_guard lock(mutex_);
    realigned = std::move(realigned_);
  }
  if (!done && !realigned) return false;
  if (thread_.joinable()) thread_.join();
  if (done) install(std::move(*done));
  if (realigned) {
    install_overview(std::move(*realigned));
    realigning_ = false;
  }
  return true;
}

void JobView::realign(analysis::Align align) {
  if (!job_ || realigning_) return;
  if (thread_.joinable()) thread_.join();
  realigning_ = true;
  thread_ = std::thread([this, align] {
    analysis::CollectiveOptions options;
    options.align = align;
    // Reuses the rank summaries (only read here, while frames keep drawing the current overview).
    auto overview = std::make_unique<analysis::JobOverview>(analysis::realign_job_overview(overview_, options));
    std::lock_guard lock(mutex_);
    realigned_ = std::move(overview);
    wake_();
  });
}

void JobView::install(Loaded loaded) {
  if (!loaded.job) {
    error_ = loaded.error.empty() ? "the job could not be opened" : loaded.error;
    return;
  }
  job_ = std::move(loaded.job);
  install_overview(std::move(loaded.overview));
  timeline_.show_all();
  timeline_.empty_hint = "Click a rank's row above to expand its streams and threads here, on the job clock.";
}

// A new collectives analysis (first load, or re-aligned clocks): the per-rank lookups, the
// column cache, the expanded ranks' windows and the selection (kept by group, name, instance).
void JobView::install_overview(analysis::JobOverview overview) {
  std::string group, name;
  uint64_t instance = 0;
  if (selected_ >= 0) {
    const auto& in = overview_.collectives.instances[size_t(selected_)];
    group = in.group, name = in.name, instance = in.instance;
  }
  overview_ = std::move(overview);
  bins_t0_ = -1;
  // Per rank: its collective occurrences by start (for clicks) and slice → instance (for a
  // kernel selected in its expanded timeline).
  spans_.assign(overview_.ranks.size(), {});
  instance_of_slice_.assign(overview_.ranks.size(), {});
  const auto& instances = overview_.collectives.instances;
  for (size_t i = 0; i < instances.size(); ++i)
    for (const auto& a : instances[i].arrivals) {
      int k = ov_index(a.rank);
      if (k < 0) continue;
      spans_[size_t(k)].push_back({a.arrival, a.end, int(i)});
      instance_of_slice_[size_t(k)][slice_key(a.slice)] = int(i);
    }
  for (auto& s : spans_) std::sort(s.begin(), s.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  int keep = -1;
  for (size_t i = 0; i < instances.size() && !name.empty(); ++i)
    if (instances[i].group == group && instances[i].name == name && instances[i].instance == instance) keep = int(i);
  selected_ = keep;
  ++overview_version_;
  straggler_ = straggler_finding(overview_.collectives);
  insights_.clear();
  if (straggler_) insights_.push_back(straggler_->insight);
  insight_opened_ = -1;
  timeline_.set_data_range(0, std::max<TimeNs>(overview_.span, 1000));  // the job clock: "show all" frames every rank
  update_shifts();
  apply_highlights();
}

int JobView::ov_index(int64_t rank) const {
  for (size_t i = 0; i < overview_.ranks.size(); ++i)
    if (overview_.ranks[i].rank == rank) return int(i);
  return -1;
}

const analysis::CollectiveArrival* JobView::arrival_of(int instance, int64_t rank) const {
  if (instance < 0 || size_t(instance) >= overview_.collectives.instances.size()) return nullptr;
  for (const auto& a : overview_.collectives.instances[size_t(instance)].arrivals)
    if (a.rank == rank) return &a;
  return nullptr;
}

// ---- selection -------------------------------------------------------------------------

void JobView::select_instance(int index) {
  if (index < 0 || size_t(index) >= overview_.collectives.instances.size()) return;
  selected_ = index;
  show_instance(index);
  apply_highlights();
}

void JobView::step_instance(int direction) {
  int n = int(overview_.collectives.instances.size());
  if (n == 0) return;
  select_instance(selected_ < 0 ? (direction > 0 ? 0 : n - 1) : std::clamp(selected_ + direction, 0, n - 1));
}

void JobView::select_worst_skew() {
  const auto& in = overview_.collectives.instances;
  int worst = -1;
  for (size_t i = 0; i < in.size(); ++i)
    if (worst < 0 || in[i].skew > in[size_t(worst)].skew) worst = int(i);
  select_instance(worst);
}

// Keeps the zoom when the instance fits; otherwise frames it with room around it.
void JobView::show_instance(int index) {
  const auto& in = overview_.collectives.instances[size_t(index)];
  if (in.arrivals.empty()) return;
  TimeNs a = INT64_MAX, b = INT64_MIN;
  for (const auto& x : in.arrivals) a = std::min(a, x.arrival), b = std::max(b, x.end);
  double t0 = timeline_.view_start(), t1 = timeline_.view_end(), width = t1 - t0;
  if (double(b - a) > width * 0.8) width = double(b - a) * 3;
  if (double(a) < t0 || double(b) > t1 || double(b - a) > (t1 - t0) * 0.8) {
    double mid = (double(a) + double(b)) / 2;
    timeline_.zoom_to(mid - width / 2, mid + width / 2);
  }
}

void JobView::zoom_to(double t0, double t1) { timeline_.zoom_to(t0, std::max(t1, t0 + 100)); }

// Each expanded rank's rows sit on the job clock: its source's shift is the rank's (which
// changes when clocks are aligned or not).
void JobView::update_shifts() {
  for (size_t i = 0; i < expanded_.size(); ++i)
    if (int k = ov_index(expanded_[i]); k >= 0) timeline_.set_shift(uint32_t(i), overview_.ranks[size_t(k)].shift);
}

int JobView::expanded_source(int64_t rank) const {
  auto it = std::lower_bound(expanded_.begin(), expanded_.end(), rank);
  return it != expanded_.end() && *it == rank ? int(it - expanded_.begin()) : -1;
}

void JobView::apply_highlights() {
  for (size_t i = 0; i < expanded_.size(); ++i) {
    const auto* a = arrival_of(selected_, expanded_[i]);
    timeline_.set_highlights(uint32_t(i), a ? std::vector<SliceRef>{a->slice} : std::vector<SliceRef>{});
  }
}

// Expanding adds the rank's store as a source of the one timeline, in rank order, on the job
// clock (its lane index and idle overlay are built now, lazily); collapsing removes it.
bool JobView::expand_rank(int64_t rank, bool expand) {
  int k = ov_index(rank);
  if (k < 0) return false;
  int source = expanded_source(rank);
  if (!expand) {
    if (source >= 0) {
      timeline_.remove_source(uint32_t(source));
      expanded_.erase(expanded_.begin() + source);
    }
    seen_selection_ = timeline_.selection();
    return true;
  }
  if (source >= 0) return true;
  const analysis::RankActivity& ov = overview_.ranks[size_t(k)];
  const JobRank& jr = job_->ranks[ov.job_index];
  auto at = uint32_t(std::lower_bound(expanded_.begin(), expanded_.end(), rank) - expanded_.begin());
  TimelineSource def;
  def.store = jr.store.get(), def.shift = ov.shift, def.closable = true;
  def.label = "rank " + std::to_string(rank) + " \xC2\xB7 " + fs::path(jr.path).filename().string();
  timeline_.add_source(std::move(def), at);
  timeline_.set_idle_gaps(at, idle_gap_marks(ov.summary->causes));
  expanded_.insert(expanded_.begin() + at, rank);
  seen_selection_ = timeline_.selection();
  apply_highlights();
  return true;
}

bool JobView::focus_rank(int64_t rank) {
  if (!job_ || !job_->find(rank)) return false;
  focused_ = rank;
  expand_rank(rank, true);  // a failed rank has nothing to expand; it stays focused in the table
  if (int source = expanded_source(rank); source >= 0) timeline_.scroll_to_source(uint32_t(source));
  return true;
}

bool JobView::open_insight(size_t index) {
  if (!straggler_ || index >= insights_.size()) return false;
  insight_opened_ = int(index);
  show_insights_ = true;
  focus_rank(straggler_->rank);
  if (straggler_->instance < 0) return true;
  select_instance(straggler_->instance);
  // Its own kernel of that instance, selected on its timeline as a click would (no re-framing:
  // select_instance framed the whole instance).
  int source = expanded_source(straggler_->rank);
  if (const auto* a = arrival_of(straggler_->instance, straggler_->rank); a && source >= 0) {
    timeline_.select(SourceSlice{uint32_t(source), a->slice});
    seen_selection_ = timeline_.selection();
  }
  return true;
}

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

// ---- drawing ---------------------------------------------------------------------------

void JobView::draw(ImVec2 size) {
  if (!job_) {
    if (error_.empty()) draw_loading();
    else ImGui::TextColored(ImVec4(0.8f, 0.2f, 0.1f, 1), "Could not open the job: %s", error_.c_str());
    return;
  }
  ImVec2 start = ImGui::GetCursorPos();
  draw_toolbar();
  float avail = size.y - (ImGui::GetCursorPos().y - start.y);
  // The overview's rows get up to half the tab (a third once ranks are expanded below them),
  // 26 px per rank at most; the timeline around them (ruler, legend, expanded ranks) the rest of
  // its share; the Ranks view what remains.
  float rows_h = std::max(40.f, std::min(avail * (expanded_.empty() ? 0.5f : 0.3f), float(job_->ranks.size()) * 26));
  layout_overview(rows_h);
  float chrome = timeline_.chrome_height() > 0 ? timeline_.chrome_height() : 80;
  float timeline_h = expanded_.empty() ? chrome + rows_h + 40 : std::max(chrome + rows_h + 240, avail * 0.7f);
  timeline_h = std::min(timeline_h, std::max(avail - 120, chrome + rows_h + 10));
  ImGui::PushID("job timeline");
  timeline_.draw(ImVec2(ImGui::GetContentRegionAvail().x, timeline_h));
  ImGui::PopID();
  after_timeline_frame();
  ImGui::BeginChild("ranks_view", ImVec2(0, 0), true);
  if (ImGui::BeginTabBar("job analyses")) {
    if (ImGui::BeginTabItem("Ranks")) {
      draw_ranks_table();
      ImGui::EndTabItem();
    }
    std::string insights = "Insights (" + std::to_string(insights_.size()) + ")###insights";
    if (ImGui::BeginTabItem(insights.c_str(), nullptr, std::exchange(show_insights_, false) ? ImGuiTabItemFlags_SetSelected : 0)) {
      draw_insights();
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
}

// What the timeline reports after its frame: a closed rank header collapses that rank; a new
// selection that is a collective kernel of an expanded rank selects that instance on every rank.
void JobView::after_timeline_frame() {
  if (uint32_t closed = timeline_.take_close_request(); closed < expanded_.size()) expand_rank(expanded_[closed], false);
  SourceSlice sel = timeline_.selection();
  if (sel == seen_selection_) return;
  seen_selection_ = sel;
  if (!sel.valid() || sel.source >= expanded_.size()) return;
  int k = ov_index(expanded_[sel.source]);
  if (k < 0) return;
  auto found = instance_of_slice_[size_t(k)].find(slice_key(sel.ref));
  if (found != instance_of_slice_[size_t(k)].end()) select_instance(found->second);
}

void JobView::draw_loading() {
  size_t n = plan_.files.size(), done = 0;
  double fraction = 0;
  for (size_t i = 0; i < n; ++i) {
    int st = loads_[i].status;
    uint64_t total = loads_[i].total;
    done += st >= 2;
    fraction += st >= 2 ? 1.0 : total ? double(loads_[i].done) / double(total) : 0.0;
  }
  ImGui::Text("Loading job %s: %zu of %zu ranks%s", title_.c_str(), done, n, analysing_ ? " · matching collectives..." : "");
  ImGui::ProgressBar(n ? float(fraction / double(n)) : 0.f, ImVec2(-1, 0));
  if (ImGui::Button("Cancel")) cancel_ = true;
  ImGui::BeginChild("rank_loads", ImVec2(0, 0), true);
  for (size_t i = 0; i < n; ++i) {
    int st = loads_[i].status;
    uint64_t total = loads_[i].total;
    ImGui::TextUnformatted(fs::path(plan_.files[i]).filename().c_str());
    ImGui::SameLine(std::max(260.f, ImGui::GetContentRegionAvail().x * 0.35f));
    float f = st >= 2 ? 1.f : total ? float(double(loads_[i].done) / double(total)) : 0.f;
    const char* what = st == 0 ? "waiting" : st == 1 ? "loading" : st == 2 ? "loaded" : "failed";
    ImGui::ProgressBar(f, ImVec2(ImGui::GetContentRegionAvail().x * 0.6f, 0), what);
  }
  ImGui::EndChild();
}

void JobView::draw_toolbar() {
  const auto& a = overview_.collectives;
  TimeNs largest = 0;
  for (TimeNs o : a.offsets) largest = std::max(largest, o < 0 ? -o : o);
  ImGui::Text("%zu ranks (%zu loaded) · %zu collective instances · clocks %s (largest offset %s)", job_->ranks.size(),
              job_->loaded_count(), a.instances.size(), a.aligned ? "aligned on collectives" : "raw", ms(largest).c_str());
  if (ImGui::IsItemHovered() && !a.offsets.empty()) {
    ImGui::BeginTooltip();
    ImGui::TextUnformatted("Clock offsets estimated from collective ends (added to each rank's clock):");
    for (size_t i = 0; i < a.offsets.size() && i < a.ranks.size(); ++i)
      ImGui::Text("rank %lld: %s", (long long)a.ranks[i], present::format_duration(double(a.offsets[i])).c_str());
    ImGui::EndTooltip();
  }
  ImGui::SameLine();
  bool aligned = a.aligned;
  ImGui::BeginDisabled(realigning_);
  if (ImGui::Checkbox(realigning_ ? "Align clocks (working...)" : "Align clocks", &aligned))
    realign(aligned ? analysis::Align::Collectives : analysis::Align::None);
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::SmallButton("Export figure...")) {
    if (!export_path_[0]) std::snprintf(export_path_, sizeof export_path_, "%s-ranks.pdf", title_.c_str());
    export_message_.clear();
    ImGui::OpenPopup("Export the rank overview");
  }
  draw_export_popup();
  ImGui::SameLine();
  if (ImGui::SmallButton("Show all")) timeline_.show_all();
  bool any = !a.instances.empty();
  ImGui::BeginDisabled(!any);
  if (ImGui::SmallButton("< Prev")) step_instance(-1);
  ImGui::SameLine();
  if (ImGui::SmallButton("Next >")) step_instance(1);
  ImGui::SameLine();
  if (ImGui::SmallButton("Worst skew")) select_worst_skew();
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (selected_ >= 0) {
    const auto& in = a.instances[size_t(selected_)];
    ImGui::Text("%s #%llu (group %s): skew %s, last rank %lld%s%s%s", in.name.c_str(), (unsigned long long)in.instance,
                in.group.c_str(), ms(in.skew).c_str(), (long long)in.last_rank, in.last_cause.empty() ? "" : " after ",
                analysis::cause_phrase(in.last_cause).c_str(), in.missing.empty() ? "" : " · some ranks missing");
  } else {
    ImGui::TextDisabled(any ? "Click a collective in a row (or a kernel of an expanded rank) to link it across ranks."
                            : "No collectives matched across ranks.");
  }
}

std::string JobView::export_figure(const std::string& path) const {
  if (!job_) return "the job is not loaded";
  fig::Format format;
  if (!fig::format_from_path(path, format)) return "the file must end in .svg, .pdf or .png";
  fig::RanksFigureOptions options;
  options.start = TimeNs(std::max(0.0, timeline_.view_start())), options.end = TimeNs(timeline_.view_end());
  options.title = title_;
  fig::Scene scene;
  fig::RanksFigureStats stats;
  std::string error;
  if (!fig::ranks_figure(*job_, overview_, fig::make_style(fig::FigureTheme::Paper), options, scene, stats, error)) return error;
  if (!fig::write_scene(scene, path, format, 1, error)) return "cannot write " + error;
  return "";
}

void JobView::draw_export_popup() {
  if (!ImGui::BeginPopup("Export the rank overview")) return;
  ImGui::TextUnformatted("The rank overview of the visible time window with the straggler bars, as `render DIR --view ranks`.");
  ImGui::SetNextItemWidth(420);
  ImGui::InputText("file (.pdf, .svg, .png)", export_path_, sizeof export_path_);
  if (ImGui::Button("Save")) {
    std::string error = export_figure(export_path_);
    export_message_ = error.empty() ? std::string("wrote ") + export_path_ : error;
  }
  if (!export_message_.empty()) ImGui::TextUnformatted(export_message_.c_str());
  ImGui::EndPopup();
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
                                             uint64_t version, float height) {
  if (cache.size() <= i) cache.resize(i + 1);
  ProfileRuns& runs = cache[i];
  int levels = std::clamp(int(height), 1, 16);
  if (runs.version != version || runs.levels != levels) {
    runs.build(bins, levels);
    runs.version = version;
  }
  return runs;
}

std::pair<size_t, size_t> JobView::row_ranks(size_t row) const {
  return {row * group_, std::min(job_->ranks.size(), (row + 1) * group_)};
}

// Many ranks: each row stands for `group_` consecutive ranks, with their mean busy fraction and
// the idle cause most of them show in the column.
void JobView::rebuild_bands() {
  if (group_ <= 1 || (bands_version_ == bins_version_ && bands_group_ == group_)) return;
  size_t rows = (job_->ranks.size() + group_ - 1) / group_, columns = size_t(bins_columns_);
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
  bands_version_ = bins_version_, bands_group_ = group_;
}

void JobView::draw_band(ImDrawList* dl, size_t row, const TimelineRect& header, float x0, float x1, float y, float h, bool labelled) {
  auto [a, b] = row_ranks(row);
  ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
  size_t loaded = 0;
  TimeNs worst_wait = 0;
  for (size_t r = a; r < b; ++r) {
    loaded += job_->ranks[r].ok();
    if (const auto* s = analysis::straggler_of(overview_.collectives, job_->ranks[r].rank)) worst_wait = std::max(worst_wait, s->wait);
  }
  if (labelled) {
    std::string label = std::to_string(job_->ranks[a].rank) + "-" + std::to_string(job_->ranks[b - 1].rank);
    dl->AddText(ImVec2(header.x0 + 4, y), loaded == b - a ? ink : kLastColor, label.c_str());
    std::string summary = "max wait " + ms(worst_wait);
    dl->AddText(ImVec2(header.x1 - 8 - ImGui::CalcTextSize(summary.c_str()).x, y), ink, summary.c_str());
  }
  if (loaded == 0) dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1, y + h), IM_COL32(213, 30, 30, 90));
  else draw_runs(dl, runs_of(band_runs_, row, bands_[row], bands_version_ * 4096 + bands_group_, h), x0, y, h);
}

// ---- the overview rows, as custom rows of the job's timeline ------------------------------

// One overview row (a rank, or a band of ranks) as a row of the timeline: the timeline places it
// on its axis, pinned above the expanded ranks; the job view draws it and answers its input.
class JobView::OverviewRow : public CustomRow {
public:
  OverviewRow(JobView& job, size_t row) : job_(job), row_(row) {}
  float height() const override { return job_.row_height_; }
  void draw(ImDrawList* dl, const TimelineRect& header, const TimelineRect& canvas, const TimeMapping& map) override {
    job_.draw_overview_row(dl, row_, header, canvas, map);
  }
  void hover(ImVec2 mouse, const TimelineRect&, const TimeMapping& map) override { job_.overview_tooltip(row_, mouse, map); }
  void click(ImVec2 mouse, const TimelineRect&, const TimeMapping& map) override { job_.overview_click(row_, mouse, map); }

private:
  JobView& job_;
  size_t row_;
};

// This frame's rows: they shrink with the rank count (26 px for 8 ranks, down to 3 px); beyond
// that each row aggregates consecutive ranks, so every rank stays on screen in `height` pixels.
void JobView::layout_overview(float height) {
  size_t n = job_->ranks.size();
  size_t rows_fit = std::max<size_t>(1, size_t(height / 3));
  group_ = n > rows_fit ? (n + rows_fit - 1) / rows_fit : 1;
  size_t rows = (n + group_ - 1) / group_;
  row_height_ = std::clamp(std::floor(height / float(std::max<size_t>(rows, 1))), 3.f, 26.f);
  if (overview_rows_.size() != rows) {
    overview_rows_.clear();
    std::vector<CustomRow*> shown;
    for (size_t r = 0; r < rows; ++r) shown.push_back(overview_rows_.emplace_back(std::make_unique<OverviewRow>(*this, r)).get());
    timeline_.set_custom_rows(std::move(shown));
  }
  rows_drawn_ = 0;
  marked_ranks_.clear();
  // The selected instance's arrivals by the row that shows them (one pass, not one per row).
  arrivals_by_row_.assign(rows, {});
  skew_first_ = INT64_MAX, skew_last_ = INT64_MIN;
  if (selected_ < 0) return;
  for (const auto& a : overview_.collectives.instances[size_t(selected_)].arrivals) {
    auto it = std::find_if(job_->ranks.begin(), job_->ranks.end(), [&](const JobRank& r) { return r.rank == a.rank; });
    if (it == job_->ranks.end()) continue;
    arrivals_by_row_[size_t(it - job_->ranks.begin()) / group_].push_back(&a);
    skew_first_ = std::min(skew_first_, a.arrival), skew_last_ = std::max(skew_last_, a.arrival);
  }
}

void JobView::draw_overview_row(ImDrawList* dl, size_t row, const TimelineRect& header, const TimelineRect& canvas,
                                const TimeMapping& map) {
  rebin(map);  // the first row of a frame re-bins when the window moved; the others find it done
  rebuild_bands();
  ++rows_drawn_;
  float x0 = canvas.x0, x1 = canvas.x1, y = canvas.y0;
  float gap = row_height_ >= 10 ? 2.f : 0.f, h = row_height_ - gap;
  // Rows too short for text: label (and summarise) every k-th rank so the labels never overlap.
  float font = ImGui::GetFontSize();
  size_t label_every = row_height_ >= font * 0.8f ? 1 : size_t(std::ceil(font * 1.1f / row_height_));
  bool labelled = row % label_every == 0;
  ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
  dl->PushClipRect(ImVec2(header.x0, y), ImVec2(canvas.x1, y + std::max(row_height_, font + 2)), true);
  if (group_ > 1) {
    draw_band(dl, row, header, x0, x1, y, h, labelled);
  } else {
    const JobRank& jr = job_->ranks[row];
    if (jr.rank == focused_) dl->AddRectFilled(ImVec2(header.x0, y), ImVec2(x1, y + row_height_), IM_COL32(255, 200, 0, 50));
    float text_y = y + (label_every > 1 ? 0.f : (h - font) / 2);
    if (labelled) dl->AddText(ImVec2(header.x0 + 4, text_y), jr.ok() ? ink : kLastColor, ("rank " + std::to_string(jr.rank)).c_str());
    int k = ov_index(jr.rank);
    if (!jr.ok() || k < 0) {
      std::string text = "failed to load: " + jr.error.message;
      if (labelled) dl->AddText(ImVec2(x0 + 4, text_y), kLastColor, text.c_str());
      else dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1, y + h), IM_COL32(213, 30, 30, 90));
    } else {
      draw_runs(dl, runs_of(rank_runs_, size_t(k), bins_[size_t(k)], bins_version_, h), x0, y, h);
      if (labelled) {  // the summary column: right-aligned in the header, a cut-off marker after it
        const analysis::StragglerRow* s = analysis::straggler_of(overview_.collectives, jr.rank);
        std::string summary = "it " + (s && s->iteration_mean ? ms(TimeNs(*s->iteration_mean)) : std::string("-")) + " \xC2\xB7 wait " +
                              (s ? ms(s->wait) : std::string("-"));
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
  const auto& in = overview_.collectives.instances[size_t(selected_)];
  float x0 = canvas.x0, x1 = canvas.x1, y = canvas.y0;
  float gap = row_height_ >= 10 ? 2.f : 0.f, h = row_height_ - gap;
  float fa = map.x_of(double(skew_first_)), fb = std::max(map.x_of(double(skew_last_)), fa + 1);
  if (fb >= x0 && fa <= x1) dl->AddRectFilled(ImVec2(std::max(x0, fa), y), ImVec2(std::min(x1, fb), y + row_height_), IM_COL32(213, 30, 30, 40));
  ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
  for (const analysis::CollectiveArrival* a : arrivals_by_row_[row]) {
    float xa = map.x_of(double(a->arrival)), xb = std::max(map.x_of(double(a->end)), xa + 1);
    if (xb < x0 || xa > x1) continue;
    xa = std::max(xa, x0), xb = std::min(xb, x1);
    bool is_last = a->rank == in.last_rank;
    if (row_height_ >= 10 || is_last)  // short rows: the arrival line alone, so the busy profile stays visible
      dl->AddRect(ImVec2(xa, y), ImVec2(xb, y + h), is_last ? kLastColor : ink, 0, 0, is_last ? 2.f : 1.f);
    dl->AddLine(ImVec2(xa, y - 1), ImVec2(xa, y + h + 1), is_last ? kLastColor : ink, 2.f);
    marked_ranks_.push_back(a->rank);
  }
}

JobView::OverviewHit JobView::overview_hit(size_t row, ImVec2 mouse, const TimeMapping& map) const {
  OverviewHit hit;
  hit.t = map.t_of(mouse.x);
  if (row * group_ >= job_->ranks.size()) return hit;
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
  if (group_ > 1) {
    auto [a, b] = row_ranks(row);
    ImGui::Text("ranks %lld-%lld (%zu per row); the numbers below are rank %lld's", (long long)job_->ranks[a].rank,
                (long long)job_->ranks[b - 1].rank, group_, (long long)jr.rank);
    if (col >= 0 && row < bands_.size() && col < int(bands_[row].busy.size()))
      ImGui::TextDisabled("row: mean GPU busy %.0f%% in this column", bands_[row].busy[size_t(col)] * 100.0);
  }
  ImGui::Text("rank %lld · %s", (long long)jr.rank, fs::path(jr.path).filename().c_str());
  if (!jr.ok()) ImGui::TextColored(ImVec4(0.8f, 0.1f, 0.1f, 1), "failed: %s", jr.error.to_string().c_str());
  // A cut-off rank: the banner's words first, before the numbers it makes suspect.
  if (std::string cut = cut_off_text(jr); !cut.empty()) ImGui::TextColored(kCutText, "%s", cut.c_str());
  if (const analysis::StragglerRow* s = jr.ok() ? analysis::straggler_of(overview_.collectives, jr.rank) : nullptr) {
    ImGui::Text("iteration mean %s over %llu · waited %s in %llu collectives",
                s->iteration_mean ? ms(TimeNs(*s->iteration_mean)).c_str() : "-", (unsigned long long)s->iterations,
                ms(s->wait).c_str(), (unsigned long long)s->collectives);
    ImGui::Text("last in %llu · made the others wait %s%s%s", (unsigned long long)s->late_count, ms(s->delay_caused).c_str(),
                s->top_cause.empty() ? "" : ", mostly after ", analysis::cause_phrase(s->top_cause).c_str());
    ImGui::Text("GPU compute %s · communication %s · idle %s", ms(s->compute).c_str(), ms(s->communication).c_str(),
                ms(s->idle).c_str());
  }
  int k = ov_index(jr.rank);
  if (k >= 0 && col >= 0 && size_t(k) < bins_.size() && col < int(bins_[size_t(k)].busy.size())) {
    int c = bins_[size_t(k)].cause[size_t(col)];
    ImGui::TextDisabled("at %s: GPU busy %.0f%%%s%s", present::format_duration(hit.t).c_str(), bins_[size_t(k)].busy[size_t(col)] * 100.0,
                        c >= 0 ? ", idle mostly " : "", c >= 0 ? present::idle_cause_label(c) : "");
  }
  ImGui::TextDisabled("header: mean iteration \xC2\xB7 time waited in collectives");
  ImGui::TextDisabled(expanded_source(jr.rank) >= 0 ? "click: select a collective, or collapse this rank"
                                                    : "click: select a collective, or expand this rank");
  ImGui::EndTooltip();
}

void JobView::draw_insights() {
  ImGui::TextDisabled("Findings across the ranks, ranked by the time each costs. Click one to see where it happens.");
  if (insights_.empty()) {
    ImGui::TextDisabled("No stragglers: no rank arrived last at a collective with a skew.");
    return;
  }
  if (int clicked = draw_insight_cards(insights_, insight_opened_); clicked >= 0) open_insight(size_t(clicked));
}

void JobView::draw_ranks_table() {
  const auto& a = overview_.collectives;
  ImGui::TextUnformatted("Ranks");
  std::string insight = analysis::straggler_insight(a);
  if (!insight.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(0.84f, 0.37f, 0.0f, 1), "Stragglers: %s", insight.c_str());
  }
  for (const SkippedFile& s : job_->skipped) ImGui::TextDisabled("skipped %s: %s", s.path.c_str(), s.reason.c_str());
  static const char* kColumns[] = {"rank", "status", "collectives", "last in", "made others wait", "waited", "iteration mean",
                                   "compute", "communication", "idle", "top cause"};
  constexpr int kCount = int(sizeof kColumns / sizeof *kColumns);
  ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY |
                          ImGuiTableFlags_Resizable;
  if (!ImGui::BeginTable("ranks", kCount, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (int c = 0; c < kCount; ++c)
    ImGui::TableSetupColumn(kColumns[c], c == 4 ? ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending : 0);
  ImGui::TableHeadersRow();
  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsDirty) {
    if (specs->SpecsCount > 0) {
      sort_column_ = specs->Specs[0].ColumnIndex;
      sort_descending_ = specs->Specs[0].SortDirection == ImGuiSortDirection_Descending;
    }
    specs->SpecsDirty = false;
  }
  // Sort keys per column (time columns in ns; a failed rank sorts as 0 / empty).
  auto key = [&](const JobRank& r) -> double {
    const analysis::StragglerRow* s = analysis::straggler_of(a, r.rank);
    switch (sort_column_) {
      case 0: return double(r.rank);
      case 1: return r.ok() ? 0 : 1;
      case 2: return s ? double(s->collectives) : 0;
      case 3: return s ? double(s->late_count) : 0;
      case 4: return s ? double(s->delay_caused) : 0;
      case 5: return s ? double(s->wait) : 0;
      case 6: return s && s->iteration_mean ? *s->iteration_mean : 0;
      case 7: return s ? double(s->compute) : 0;
      case 8: return s ? double(s->communication) : 0;
      case 9: return s ? double(s->idle) : 0;
      default: return 0;
    }
  };
  std::vector<const JobRank*> rows;
  for (const JobRank& r : job_->ranks) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [&](const JobRank* x, const JobRank* y) {
    if (sort_column_ == 10) {
      const auto *sx = analysis::straggler_of(a, x->rank), *sy = analysis::straggler_of(a, y->rank);
      std::string cx = sx ? sx->top_cause : "", cy = sy ? sy->top_cause : "";
      return sort_descending_ ? cx > cy : cx < cy;
    }
    return sort_descending_ ? key(*x) > key(*y) : key(*x) < key(*y);
  });
  table_order_.clear();
  for (const JobRank* r : rows) {
    table_order_.push_back(r->rank);
    const analysis::StragglerRow* s = analysis::straggler_of(a, r->rank);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    std::string label = std::to_string(r->rank);
    if (ImGui::Selectable(label.c_str(), r->rank == focused_, ImGuiSelectableFlags_SpanAllColumns)) focus_rank(r->rank);
    ImGui::TableNextColumn();
    if (std::string cut = cut_off_text(*r); !cut.empty()) {
      ImGui::TextColored(kCutText, "loaded, cut off");
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", cut.c_str());
    } else if (r->ok()) ImGui::TextUnformatted("loaded");
    else ImGui::TextColored(ImVec4(0.8f, 0.1f, 0.1f, 1), "failed: %s", r->error.message.c_str());
    if (!s) continue;
    ImGui::TableNextColumn();
    ImGui::Text("%llu", (unsigned long long)s->collectives);
    ImGui::TableNextColumn();
    ImGui::Text("%llu", (unsigned long long)s->late_count);
    for (TimeNs v : {s->delay_caused, s->wait}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(ms(v).c_str());
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(s->iteration_mean ? ms(TimeNs(*s->iteration_mean)).c_str() : "-");
    for (TimeNs v : {s->compute, s->communication, s->idle}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(ms(v).c_str());
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(analysis::cause_phrase(s->top_cause).c_str());  // in words, as the Stragglers sentence
  }
  ImGui::EndTable();
}

// ---- automation ------------------------------------------------------------------------

std::string JobView::command(const std::string& command, const std::string& args) {
  if (!job_) return "the job is not loaded";
  std::istringstream in(args);
  if (command == "collective") {
    std::string what;
    in >> what;
    if (overview_.collectives.instances.empty()) return "the job has no collectives";
    if (what == "next") step_instance(1);
    else if (what == "prev") step_instance(-1);
    else if (what == "worst") select_worst_skew();
    else {
      char* end = nullptr;
      long i = std::strtol(what.c_str(), &end, 10);
      if (what.empty() || *end || i < 0 || size_t(i) >= overview_.collectives.instances.size())
        return "collective wants next, prev, worst or an index below " + std::to_string(overview_.collectives.instances.size());
      select_instance(int(i));
    }
    return "";
  }
  if (command == "jobinsight") {
    char* end = nullptr;
    long i = std::strtol(args.c_str(), &end, 10);
    if (args.empty() || *end || i < 0 || !open_insight(size_t(i)))
      return "jobinsight wants an index below " + std::to_string(insights_.size()) + " (the job's Insights)";
    return "";
  }
  if (command == "jobexport") return args.empty() ? "jobexport wants a file (.pdf, .svg, .png)" : export_figure(args);
  if (command == "align") {
    std::string mode;
    in >> mode;
    if (mode == "collectives") realign(analysis::Align::Collectives);
    else if (mode == "none") realign(analysis::Align::None);
    else if (mode == "auto") realign(analysis::Align::Auto);
    else return "align wants collectives, none or auto";
    return "";
  }
  if (command == "ranksort") {
    static const char* kKeys[] = {"rank", "status", "collectives", "late", "delay", "wait", "iteration", "compute",
                                  "communication", "idle", "cause"};
    std::string column, order;
    in >> column >> order;
    for (int c = 0; c < 11; ++c)
      if (column == kKeys[c]) {
        sort_column_ = c, sort_descending_ = order != "asc";
        return "";
      }
    return "ranksort wants rank, status, collectives, late, delay, wait, iteration, compute, communication, idle or cause";
  }
  int64_t rank = -1;
  if (!(in >> rank) || !job_->find(rank)) return "no rank '" + args + "' in the job";
  if (command == "expand" || command == "collapse")
    return expand_rank(rank, command == "expand") ? "" : "rank " + std::to_string(rank) + " did not load";
  if (command == "focus") return focus_rank(rank) ? "" : "no rank " + std::to_string(rank);
  // rankselect R NAME [N]: the N-th (by start) slice named NAME of rank R, as a click would.
  std::string name;
  std::getline(in >> std::ws, name);
  size_t nth = 0, space = name.find_last_of(' ');
  if (space != std::string::npos && space + 1 < name.size() &&
      name.find_first_not_of("0123456789", space + 1) == std::string::npos)
    nth = std::stoul(name.substr(space + 1)), name.erase(space);
  if (!expand_rank(rank, true)) return "rank " + std::to_string(rank) + " did not load";
  const TraceStore& s = *job_->find(rank)->store;
  StringId id = s.strings.find(name);
  if (id == StringPool::kNotFound) return "no slice '" + name + "' on rank " + std::to_string(rank);
  std::vector<SliceRef> refs(s.slices_named(id).begin(), s.slices_named(id).end());
  if (nth >= refs.size()) return "no slice '" + name + "' #" + std::to_string(nth) + " on rank " + std::to_string(rank);
  std::sort(refs.begin(), refs.end(), [&](SliceRef x, SliceRef y) { return s.start(x) < s.start(y); });
  // The next frame links it like a click (after_timeline_frame).
  timeline_.select(SourceSlice{uint32_t(expanded_source(rank)), refs[nth]}, true);
  return "";
}

void JobView::write_state(JsonWriter& w) const {
  w.begin_object().field("title", title_).field("loading", loading()).field("error", error_);
  if (!job_) {
    w.end_object();
    return;
  }
  const auto& a = overview_.collectives;
  w.field("source", job_->source).field("loaded", uint64_t(job_->loaded_count())).field("aligned", a.aligned);
  w.key("ranks").begin_array();
  for (const JobRank& r : job_->ranks) {
    w.begin_object().field("rank", r.rank).field("file", fs::path(r.path).filename().string());
    w.field("status", r.ok() ? "loaded" : "failed").field("error", r.ok() ? std::string() : r.error.to_string());
    w.field("cut_off", cut_off_text(r)).end_object();
  }
  w.end_array();
  w.key("offsets_ns").begin_object();
  for (size_t i = 0; i < a.offsets.size() && i < a.ranks.size(); ++i) w.field(std::to_string(a.ranks[i]), a.offsets[i]);
  w.end_object();
  w.field("collectives", uint64_t(a.instances.size())).field("view_start_ns", timeline_.view_start());
  w.field("view_end_ns", timeline_.view_end());
  w.field("row_height", double(row_height_)).field("rows_drawn", uint64_t(rows_drawn_)).field("ranks_per_row", uint64_t(group_));
  w.key("selected_instance");
  if (selected_ >= 0) {
    const auto& in = a.instances[size_t(selected_)];
    w.begin_object().field("index", selected_).field("name", in.name).field("group", in.group).field("instance", in.instance);
    w.field("skew_ns", in.skew).field("last_rank", in.last_rank).field("last_cause", in.last_cause);
    w.key("arrivals").begin_array();
    for (const auto& x : in.arrivals)
      w.begin_object().field("rank", x.rank).field("arrival_ns", x.arrival).field("end_ns", x.end).field("wait_ns", x.wait).end_object();
    w.end_array().key("missing").begin_array();
    for (int64_t m : in.missing) w.value(m);
    w.end_array().end_object();
  } else {
    w.null();
  }
  w.key("highlighted_ranks").begin_array();
  for (int64_t r : marked_ranks_) w.value(r);
  // The overview rows' area on screen (last frame): expanded ranks' rows start below it.
  w.end_array().field("overview_bottom_y", double(timeline_.custom_rows_rect().y1));
  w.key("expanded_ranks").begin_array();
  for (size_t i = 0; i < expanded_.size(); ++i) {
    auto source = uint32_t(i);
    w.begin_object().field("rank", expanded_[i]).field("highlights", uint64_t(timeline_.highlights(source).size()));
    w.field("selected", timeline_.selection().source == source && timeline_.selection().valid());
    // Its source's shift onto the job clock, and the rank's own clock at the view's left edge.
    TimeNs shift = timeline_.source(source).shift;
    w.field("shift_ns", shift).field("rank_view_start_ns", timeline_.view_start() - double(shift));
    float y = timeline_.source_screen_y(source);  // its header row, last frame
    w.field("header_y", std::isnan(y) ? -1.0 : double(y)).end_object();
  }
  w.end_array().field("focused_rank", focused_).field("insight", analysis::straggler_insight(a));
  w.key("insights").begin_array();
  for (const Insight& in : insights_) {
    w.begin_object().field("kind", in.kind).field("title", in.title).field("detail", in.detail).field("cost_ns", in.cost);
    w.field("t0_ns", in.t0).field("t1_ns", in.t1).field("rank", straggler_->rank).field("instance", straggler_->instance).end_object();
  }
  w.end_array().field("insight_opened", insight_opened_);
  // The overview strip as last drawn: columns, how many show GPU busy, and the busy time they add up to.
  size_t busy_columns = size_t(std::count_if(strip_.busy.begin(), strip_.busy.end(), [](float b) { return b > 0; }));
  w.key("strip").begin_object().field("columns", uint64_t(strip_.busy.size())).field("busy_columns", uint64_t(busy_columns));
  w.field("busy_ns", strip_.busy_ns).end_object();
  w.key("ranks_table").begin_array();
  for (int64_t r : table_order_) w.value(r);
  w.end_array().end_object();
}

}  // namespace sl::views
