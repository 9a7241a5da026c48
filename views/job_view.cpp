// A job tab's life: loading the ranks in the background, installing (and re-installing) the
// collectives analysis, and each frame's layout of toolbar, timeline and the analyses below it.
#include "views/job_view.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <utility>

#include "core/analysis/outlier_ranks.h"
#include "core/fleet/fleet.h"
#include "views/frame_profile.h"
#include "views/job_view_overview_row.h"
#include "views/workspace.h"

namespace sl::views {
namespace {

namespace fs = std::filesystem;

uint64_t slice_key(SliceRef s) { return (uint64_t(s.track) << 32) | s.index; }

}  // namespace

JobView::JobView(std::function<void()> wake) : wake_(std::move(wake)) {
  timeline_.overview_profile = [this](TimeNs start, TimeNs end, int columns) -> const std::vector<float>& {
    return strip_busy(start, end, columns);
  };
}

JobView::~JobView() {
  cancel_ = true;
  if (band_cancel_) *band_cancel_ = true;
  if (band_future_.valid()) band_future_.wait();
  if (thread_.joinable()) thread_.join();
  if (rank_thread_.joinable()) rank_thread_.join();
}

void JobView::open(const std::string& dir, const std::vector<std::string>& files, std::optional<RankSource> rank_from) {
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
  thread_ = std::thread([this, rank_from] {
    JobOptions options;
    options.rank_from = rank_from;
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

void JobView::open_fleet(const std::string& path) {
  fleet_ = true;
  title_ = fs::path(path).filename().string();
  started_ = ImGui::GetCurrentContext() ? ImGui::GetTime() : 0;
  thread_ = std::thread([this, path] {
    auto loaded = std::make_unique<Loaded>();
    fleet::Fleet f;
    if (fleet::read_fleet_file(path, f, loaded->error)) {
      analysing_ = true;
      wake_();
      loaded->overview = fleet::overview_of_fleet(f);
      loaded->node_of_rank = fleet::node_of_ranks(f);
      loaded->job = fleet::job_of_fleet(f);
    }
    std::lock_guard lock(mutex_);
    finished_ = std::move(loaded);
    wake_();
  });
}

void JobView::load_rank_in_background(size_t job_index) {
  if (rank_loading_ >= 0) return;  // one at a time: a second click waits for the first to land
  if (rank_thread_.joinable()) rank_thread_.join();
  rank_loading_ = job_->ranks[job_index].rank;
  rank_thread_ = std::thread([this, path = job_->ranks[job_index].path] {
    LoadOptions options;
    options.cancel = &cancel_;
    auto loaded = std::make_unique<JobRank>(load_rank(path, options, &process_cache_settings()));
    std::lock_guard lock(mutex_);
    rank_loaded_ = std::move(loaded);
    wake_();
  });
}

bool JobView::install_loaded_rank() {
  std::unique_ptr<JobRank> loaded;
  {
    std::lock_guard lock(mutex_);
    loaded = std::move(rank_loaded_);
  }
  if (!loaded) return false;
  rank_thread_.join();
  int64_t rank = std::exchange(rank_loading_, -1);
  for (JobRank& r : job_->ranks)
    if (r.rank == rank) {
      if (loaded->ok()) r.store = std::move(loaded->store);
      else r.error = loaded->error;
      ++ranks_version_;
    }
  expand_rank(rank, true, true);
  return true;
}

bool JobView::poll() {
  if (install_loaded_rank()) return true;
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
  for (size_t i = 0; i < job_->ranks.size(); ++i) job_index_of_rank_.emplace(job_->ranks[i].rank, i);
  warnings_ = job_warnings(*job_);
  node_of_rank_ = std::move(loaded.node_of_rank);
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
  straggler_by_rank_.clear();
  for (const auto& row : overview_.collectives.stragglers) straggler_by_rank_.emplace(row.rank, &row);
  outlier_ranks_ = analysis::outliers_worst_first(analysis::outlier_ranks(overview_.collectives.stragglers));
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
  build_heatmaps();
}

int JobView::ov_index(int64_t rank) const {  // overview_.ranks is by rank
  auto it = std::lower_bound(overview_.ranks.begin(), overview_.ranks.end(), rank,
                             [](const analysis::RankActivity& a, int64_t r) { return a.rank < r; });
  return it != overview_.ranks.end() && it->rank == rank ? int(it - overview_.ranks.begin()) : -1;
}

const analysis::CollectiveArrival* JobView::arrival_of(int instance, int64_t rank) const {
  if (instance < 0 || size_t(instance) >= overview_.collectives.instances.size()) return nullptr;
  for (const auto& a : overview_.collectives.instances[size_t(instance)].arrivals)
    if (a.rank == rank) return &a;
  return nullptr;
}

// ---- drawing ---------------------------------------------------------------------------

// Ranks that may not be one job (the CLI's warnings, in the same words), above everything they
// make suspect, in the warning colours of a trace tab's banner.
void JobView::draw_warnings_banner() {
  if (warnings_.empty()) return;
  ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(255, 224, 130, 255));
  ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(80, 40, 0, 255));
  const float lines = float(warnings_.size());
  ImGui::BeginChild("job_warnings", ImVec2(0, lines * ImGui::GetTextLineHeightWithSpacing() + 2 * ImGui::GetStyle().WindowPadding.y), false);
  for (const std::string& w : warnings_) {
    std::string text = w;
    text[0] = char(std::toupper(static_cast<unsigned char>(text[0])));
    ImGui::TextUnformatted(text.c_str());
  }
  ImGui::EndChild();
  ImGui::PopStyleColor(2);
}

void JobView::draw(ImVec2 size) {
  if (!job_) {
    if (error_.empty()) draw_loading();
    else ImGui::TextColored(ImVec4(0.8f, 0.2f, 0.1f, 1), "Could not open the job: %s", error_.c_str());
    return;
  }
  ImVec2 start = ImGui::GetCursorPos();
  draw_warnings_banner();
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
  {
    frame_profile::Scope scope(frame_profile::Upload);
    band_image_.upload();  // the bands' texels this frame changed, before the frame renders
  }
  after_timeline_frame();
  frame_pending_step();
  ImGui::BeginChild("ranks_view", ImVec2(0, 0), true);
  if (ImGui::BeginTabBar("job analyses")) {
    if (ImGui::BeginTabItem("Ranks", nullptr, std::exchange(show_ranks_, false) ? ImGuiTabItemFlags_SetSelected : 0)) {
      insights_active_ = heatmap_active_ = false;
      frame_profile::Scope scope(frame_profile::Table);
      draw_ranks_table();
      ImGui::EndTabItem();
    }
    std::string insights = "Insights (" + std::to_string(insights_.size()) + ")###insights";
    if (ImGui::BeginTabItem(insights.c_str(), nullptr, std::exchange(show_insights_, false) ? ImGuiTabItemFlags_SetSelected : 0)) {
      insights_active_ = true, heatmap_active_ = false;
      draw_insights();
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Heatmap", nullptr, std::exchange(show_heatmap_, false) ? ImGuiTabItemFlags_SetSelected : 0)) {
      heatmap_active_ = true, insights_active_ = false;
      frame_profile::Scope scope(frame_profile::Heatmap);
      draw_heatmap();
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
}

bool JobView::show_view(const std::string& name) {
  show_ranks_ = name == "ranks", show_insights_ = name == "insights", show_heatmap_ = name == "heatmap";
  if (!show_ranks_ && !show_insights_ && !show_heatmap_) return false;
  return true;
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

}  // namespace sl::views
