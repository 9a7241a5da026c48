// A job tab: every rank of a distributed run in one view, on ONE TimelineView on the job clock.
// Its pinned custom rows are the rank overview (OverviewRow: one compact row per rank, or per band
// of consecutive ranks when they are many: GPU busy as bar height, the dominant idle cause as
// colour, a summary in the header column); each rank the user expands becomes a source of the
// same timeline (that rank's store, shifted by the rank's clock shift onto the job clock, under a
// closable "rank N" header; its lane index is built on first expand), so one ruler, one zoom and
// one scroll serve all of them. At the bottom the Ranks view (straggler table and per-rank
// breakdown). Selecting a collective instance (in the overview, or a kernel of an expanded rank)
// marks that instance on every rank: arrivals, skew, last rank.
#pragma once

#include <imgui.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/analysis/job_overview.h"
#include "core/job/job.h"
#include "core/present/rank_bands.h"
#include "core/present/rank_rows.h"
#include "core/present/rank_heatmap.h"
#include "views/insights_model.h"
#include "views/pixel_image.h"
#include "views/timeline_view.h"

namespace sl {
class JsonWriter;
}

namespace sl::views {

class JobView {
public:
  explicit JobView(std::function<void()> wake);
  ~JobView();
  JobView(const JobView&) = delete;
  JobView& operator=(const JobView&) = delete;

  // Loads a folder (`dir`) or the given rank files in the background (core load_job: parallel).
  // `rank_from` (--rank-from): where every rank's number comes from; none: the first each file has.
  void open(const std::string& dir, const std::vector<std::string>& files, std::optional<RankSource> rank_from = std::nullopt);
  // Opens a fleet file (core/fleet) in the background: the rank overview, collectives and ranks
  // table from its summaries; a rank's store loads from its source path when it is expanded.
  void open_fleet(const std::string& path);
  bool poll();  // installs a finished load; true when something changed
  bool loading() const { return job_ == nullptr && error_.empty(); }
  // Loaded (or failed as a whole), not re-aligning, the bands' pyramid (when one was started) drawn.
  bool ready() const { return !loading() && !realigning_ && !bands_pending(); }
  void cancel() { cancel_ = true; }
  const std::string& error() const { return error_; }  // the job could not be opened at all
  const std::string& title() const { return title_; }
  const Job* job() const { return job_.get(); }

  void draw(ImVec2 size);

  // The tab's lower views, by the script's `view` names: "ranks" (the Ranks table), "insights"
  // and "heatmap" (ranks × steps or × collectives, job_view_heatmap.cpp).
  static constexpr const char* kViewNames[] = {"ranks", "insights", "heatmap"};
  bool show_view(const std::string& name);
  const char* active_view() const { return heatmap_active_ ? "heatmap" : insights_active_ ? "insights" : "ranks"; }
  TimelineView& timeline() { return timeline_; }  // the job clock's: the View menu's options act on it

  // A profile row (a rank's or an aggregated band's columns) as runs of equal columns: idle
  // cause runs (value = cause) and busy runs (value = level of `levels`), cached per row.
  struct ProfileRuns {
    struct Run {
      uint32_t x0, x1;  // columns [x0, x1)
      int8_t value;
    };
    std::vector<Run> idle, busy;
    int levels = 0;
    uint64_t version = UINT64_MAX;  // of the bins they were built from
    // `below`: keep only the busy runs lower than its columns (a band's worst under its median).
    void build(const analysis::RankBins& bins, int levels, const analysis::RankBins* below = nullptr);
    // From columns already quantised to `levels` (cause null: no idle runs).
    void build(const uint8_t* level, const int8_t* cause, size_t n, int levels);
  };

  // Collective instances, by index in analysis order (first arrival).
  void select_instance(int index);
  void step_instance(int direction);
  void select_worst_skew();
  int selected_instance() const { return selected_; }
  // Re-runs the collectives analysis with raw clocks (None), offsets applied (Collectives) or the
  // default rule (Auto), in the background; the overview keeps showing the old one meanwhile.
  void realign(analysis::Align align);
  // The timeline's window (job clock ns): the overview and the expanded ranks share it.
  void zoom_to(double t0, double t1);
  TimeNs span() const { return overview_.span; }
  // The overview's bands are being aggregated on a worker thread (a partition or an overview
  // new since the last one) and not yet installed: frames meanwhile draw them from every rank's
  // bins, at that cost. `bands_built`: it is done, and the next frame installs it.
  bool bands_pending() const { return band_future_.valid(); }
  bool bands_built() const { return band_future_.valid() && band_future_.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }
  // Ranks by rank number.
  // A fleet rank's store loads first: in the background (the rank expands when poll() installs
  // it), or now with `wait` (script commands, so the next command sees it expanded).
  bool expand_rank(int64_t rank, bool expand, bool wait = false);
  bool focus_rank(int64_t rank);
  // The job's Insights: the Stragglers entry (empty when no rank was ever last with a skew).
  // Opening it focuses its rank and selects its worst collective (on every rank, and its kernel
  // on the rank's expanded timeline), as a click on it does.
  const std::vector<Insight>& insights() const { return insights_; }
  bool open_insight(size_t index);

  // Writes the rank overview figure (`render DIR --view ranks`) of the current time window:
  // .svg, .pdf or .png by extension, paper theme. Empty on success, else the error.
  std::string export_figure(const std::string& path) const;

  // Automation (the script's job commands, listed in app/gui_script.cpp kCommands): `jobexport PATH`,
  // `align collectives|none|auto`, `collective N|next|prev|worst`, `expand R`, `collapse R`, `focus R`,
  // `ranksort COLUMN [asc|desc]`, `rankselect R NAME [N]` (selects a kernel of rank R), `jobinsight N`,
  // `heatmap steps|waits [rank|node|slowness]`, `heatmapcell R C` (a click on rank R's cell C).
  // Returns "" or the error.
  std::string command(const std::string& command, const std::string& args);
  void write_state(JsonWriter& w) const;

private:
  struct RankLoad {
    std::atomic<uint64_t> done{0}, total{0};
    std::atomic<int> status{0};  // 0 waiting, 1 loading, 2 loaded, 3 failed
  };
  struct Loaded {
    std::unique_ptr<Job> job;
    analysis::JobOverview overview;
    std::map<int64_t, int64_t> node_of_rank;  // a fleet's nodes
    std::string error;
  };
  struct Span {  // one collective occurrence on one rank, job clock
    TimeNs start, end;
    int instance;
  };
  class OverviewRow;
  // A tooltip or click on an overview row: the rank under the mouse (an aggregated row: the first
  // member with a collective there), the collective instance under it (-1: none) and the time.
  struct OverviewHit {
    size_t rank = SIZE_MAX;  // into job_->ranks
    int instance = -1;
    double t = 0;
  };

  void install(Loaded loaded);
  void install_overview(analysis::JobOverview overview);
  void draw_loading();
  void draw_toolbar();
  void draw_warnings_banner();
  void draw_export_popup();
  void layout_overview(float height);
  void draw_overview_row(ImDrawList* dl, size_t row, const TimelineRect& header, const TimelineRect& canvas, const TimeMapping& map);
  void draw_selected_instance(ImDrawList* dl, size_t row, const TimelineRect& canvas, const TimeMapping& map);
  OverviewHit overview_hit(size_t row, ImVec2 mouse, const TimeMapping& map) const;
  void overview_tooltip(size_t row, ImVec2 mouse, const TimeMapping& map);
  void overview_click(size_t row, ImVec2 mouse, const TimeMapping& map);
  void after_timeline_frame();
  void draw_ranks_table();
  void draw_insights();
  const std::vector<float>& strip_busy(TimeNs start, TimeNs end, int columns);
  void rebin(const TimeMapping& map);
  const ProfileRuns& runs_of(std::vector<ProfileRuns>& cache, size_t i, const analysis::RankBins& bins, uint64_t version,
                             float height, const analysis::RankBins* below = nullptr);
  void rebuild_bands();
  // Per frame (layout): the bands' pyramid for this partition and overview, started on a worker
  // thread when either changed, installed once built; the band rows' members and labels.
  void update_band_pyramid();
  bool bands_from_pyramid() const { return aggregated_ && band_columns_ && band_group_ == partition_ && band_version_ == overview_version_; }
  void draw_band(ImDrawList* dl, size_t row, const TimelineRect& header, const TimeMapping& map, float y, float h, bool labelled);
  // A band row from the bands' image (its texel rows filled when its levels changed): one quad
  // instead of its runs. False without textures (headless), where the runs are drawn.
  bool draw_band_image(ImDrawList* dl, size_t row, const present::BandLevels& q, uint64_t version, int levels, float x0, float y,
                       float h);
  // The job ranks (indices into Job::ranks) drawn in overview row `row`.
  std::pair<size_t, size_t> row_ranks(size_t row) const;
  // The overview's rows for `rows_fit` rows (core/present/rank_rows.h), re-partitioned when that
  // or the overview changed; bumps partition_ when the rows differ.
  void partition_rows(size_t rows_fit);
  std::string rank_summary(int64_t rank) const;  // a rank row's header numbers: "it 12 ms · wait 3 ms"
  void show_instance(int index);
  void update_shifts();
  int expanded_source(int64_t rank) const;  // the rank's source in the timeline, -1 when not expanded
  void apply_highlights();
  int instance_at(size_t ov_row, TimeNs t, TimeNs tolerance) const;
  int ov_index(int64_t rank) const;  // into overview_.ranks, -1 when not loaded
  // The rank's straggler row, or null: by a lookup built per overview (analysis::straggler_of
  // scans, and the overview asks for every row every frame).
  const analysis::StragglerRow* straggler_row(int64_t rank) const {
    auto it = straggler_by_rank_.find(rank);
    return it == straggler_by_rank_.end() ? nullptr : it->second;
  }
  std::unordered_map<int64_t, const analysis::StragglerRow*> straggler_by_rank_;
  // Loaded, or (in a fleet tab) summarised: the rank has a row in the overview.
  bool present(const JobRank& r) const { return r.ok() || ov_index(r.rank) >= 0; }
  bool fleet_ = false;  // opened from a .slfleet: stores load on expand
  void load_rank_in_background(size_t job_index);
  bool install_loaded_rank();  // a finished background rank load: its store, then its expansion
  std::thread rank_thread_;              // one fleet rank's store loading, for expand_rank
  int64_t rank_loading_ = -1;            // which rank (UI thread only); -1 none
  std::unique_ptr<JobRank> rank_loaded_;  // its result, under mutex_
  const analysis::CollectiveArrival* arrival_of(int instance, int64_t rank) const;

  std::function<void()> wake_;
  std::string title_, error_;
  std::vector<std::string> warnings_;  // job_warnings(): why these ranks may not be one job (the banner)
  JobPlan plan_;
  std::unique_ptr<RankLoad[]> loads_;
  std::atomic<bool> cancel_{false}, analysing_{false};
  double started_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::unique_ptr<Loaded> finished_;
  std::unique_ptr<analysis::JobOverview> realigned_;  // a finished realign(), under mutex_
  std::atomic<bool> realigning_{false};

  std::unique_ptr<Job> job_;
  analysis::JobOverview overview_;
  std::vector<std::vector<Span>> spans_;  // per overview rank, by start
  std::vector<std::unordered_map<uint64_t, int>> instance_of_slice_;  // per overview rank

  TimelineView timeline_;  // job clock; source i = expanded_[i]
  std::vector<std::unique_ptr<OverviewRow>> overview_rows_;
  std::vector<std::vector<const analysis::CollectiveArrival*>> arrivals_by_row_;  // the selected instance's
  TimeNs skew_first_ = 0, skew_last_ = 0;                                         // its first and last arrival
  struct ArrivalsKey {  // what arrivals_by_row_ was sorted out for
    int selected = -1;
    uint64_t partition = UINT64_MAX, overview = UINT64_MAX;
    size_t rows = 0;
    bool operator==(const ArrivalsKey&) const = default;
  } arrivals_key_;
  SourceSlice seen_selection_;  // the timeline's selection last frame: a new one may be a collective kernel
  std::vector<analysis::RankBins> bins_;
  double bins_t0_ = -1, bins_t1_ = -1;
  int bins_columns_ = 0;
  int selected_ = -1;
  std::vector<int64_t> marked_ranks_;  // ranks whose arrival mark was drawn last frame
  std::vector<int64_t> expanded_;      // ranks by rank number; expanded_[i] is the timeline's source i
  int64_t focused_ = -1;
  int sort_column_ = 4;  // delay caused
  bool sort_descending_ = true;
  std::vector<int64_t> table_order_;  // ranks as the table shows them
  std::vector<size_t> table_rows_;    // the same as indices into job_->ranks
  struct TableKey {                   // what table_order_ was sorted for
    int column = -1;
    bool descending = false;
    uint64_t overview = UINT64_MAX, ranks = UINT64_MAX;
    bool operator==(const TableKey&) const = default;
  } table_key_;
  uint64_t ranks_version_ = 0;  // bumped when a rank's store loads (its status changes)
  char export_path_[512] = "";
  std::string export_message_;
  float row_height_ = 0;
  size_t group_ = 1;                       // the most ranks an overview row shows (> 1: rows aggregate)
  // The overview's rows (ranks in Job::ranks order): a rank each, or (aggregated_) outlier ranks
  // alone and bands of consecutive ranks within a node; partition_ names the current one.
  std::vector<present::RankRow> rows_;
  std::vector<size_t> row_of_job_index_;
  std::vector<int64_t> display_ranks_;
  bool aggregated_ = false;
  uint64_t partition_ = 0;
  size_t partition_fit_ = 0;
  uint64_t partition_version_ = UINT64_MAX;
  // The outlier ranks, worst first (core/analysis/outlier_ranks.h: the `outliers` table's), for
  // the clocks as aligned now.
  std::vector<int64_t> outlier_ranks_;
  std::vector<char> row_labelled_;  // per row, this frame: whether its header has room for a label
  std::vector<analysis::RankBins> bands_;  // per row when aggregating: mean busy, most common cause
  std::vector<ProfileRuns> rank_runs_, band_runs_;  // per overview rank / per band row
  uint64_t bins_version_ = 0, bands_version_ = 0;
  uint64_t bands_group_ = 0;
  // The bands from their pyramid (core/present/rank_bands.h): what the frame draws once built.
  std::unique_ptr<present::BandColumns> band_columns_;
  uint64_t band_group_ = 0;
  uint64_t band_version_ = UINT64_MAX, band_generation_ = 0;
  std::future<std::shared_ptr<const present::BandPyramid>> band_future_;  // the build in flight
  uint64_t band_future_group_ = 0;
  uint64_t band_future_version_ = UINT64_MAX;
  std::shared_ptr<std::atomic<bool>> band_cancel_;
  std::vector<ProfileRuns> band_worst_runs_;  // per band row: the worst member's busy
  // The bands as one image: band row d is texel rows [d · levels, (d + 1) · levels), a column per
  // pixel column; per row, the (version, levels) its texels were filled for. Uploaded per frame
  // (when changed) after the timeline drew.
  PixelImage band_image_;
  std::vector<std::pair<uint64_t, int>> band_texels_;
  struct BandLabel {  // per band row, per partition: what its header says
    size_t loaded = 0;
    TimeNs worst_wait = 0;
    std::string label, summary;           // "node 3 · ranks 24–31", "max wait 3 ms" (or an outlier's numbers)
    float label_w = -1, summary_w = -1;   // their widths at font_size
    float font_size = 0;
  };
  std::vector<BandLabel> band_labels_;
  uint64_t band_labels_group_ = 0;
  uint64_t band_labels_version_ = UINT64_MAX;
  std::unordered_map<int64_t, size_t> job_index_of_rank_;  // rank → index into job_->ranks
  size_t rows_drawn_ = 0;
  std::vector<Insight> insights_;                // the Stragglers entry, when there is one
  std::optional<StragglerFinding> straggler_;    // what opening it shows
  int insight_opened_ = -1;
  bool show_insights_ = false;                   // select the Insights tab next frame
  bool show_ranks_ = false;                      // select the Ranks tab next frame
  bool insights_active_ = false;                 // the Insights tab is the one shown
  // The timeline's overview strip: mean GPU busy over every loaded rank per column of the job's
  // whole range (not only the expanded ranks'), cached until the range, width or clocks change.
  struct StripCache {
    TimeNs start = 0, end = 0;
    int columns = 0;
    uint64_t version = UINT64_MAX;
    std::vector<float> busy;
    double busy_ns = 0;  // the columns' busy × width, summed: the mean rank's GPU busy time
  } strip_;
  uint64_t overview_version_ = 0;  // bumped per installed overview

  // The Heatmap view (job_view_heatmap.cpp): the three matrices per installed overview, the bands as
  // last drawn (rebinned when the kind, order, size or overview change), the clicked cell.
  void build_heatmaps();
  const present::HeatmapMatrix& shown_heatmap() const;
  void rebin_heatmap(size_t max_rows, size_t max_columns);
  void draw_heatmap();
  bool open_heatmap_cell(int64_t rank, size_t column);
  void frame_pending_step();
  std::string heatmap_command(const std::string& command, const std::string& args);
  void write_heatmap_state(JsonWriter& w) const;
  struct HeatBandsKey {
    present::HeatmapKind kind = present::HeatmapKind::StepTime;
    present::RowOrder order = present::RowOrder::Rank;
    size_t rows = 0, columns = 0;
    uint64_t version = UINT64_MAX;
    bool operator==(const HeatBandsKey&) const = default;
  };
  struct HeatCell {
    int64_t rank = -1, column = -1;
  };
  std::map<int64_t, int64_t> node_of_rank_;
  present::HeatmapMatrix heat_matrices_[3];  // by HeatmapKind
  present::HeatmapBands heat_bands_;
  HeatBandsKey heat_bands_key_;
  struct HeatRun {
    uint32_t row, c0, c1;  // band row, band columns [c0, c1)
    ImU32 color;
  };
  std::vector<HeatRun> heat_runs_;  // of heat_bands_, by row
  present::HeatmapKind heat_kind_ = present::HeatmapKind::StepTime;
  present::RowOrder heat_order_ = present::RowOrder::Rank;
  ImVec4 heat_rect_{0, 0, 0, 0};    // the cells on screen last frame: x0, y0, x1, y1
  HeatCell heat_clicked_, heat_pending_step_;
  bool show_heatmap_ = false, heatmap_active_ = false;
};

}  // namespace sl::views
