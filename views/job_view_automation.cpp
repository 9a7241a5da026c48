// A job tab's automation: the script's job commands (JobView::command) and the state JSON
// the tests read (JobView::write_state).
#include "views/job_view.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "core/text/json_writer.h"
#include "views/job_view_text.h"

namespace sl::views {
namespace {

namespace fs = std::filesystem;

}  // namespace

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
  if (command == "heatmap" || command == "heatmapcell") return heatmap_command(command, args);
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
    return expand_rank(rank, command == "expand", true) ? "" : "rank " + std::to_string(rank) + " did not load";
  if (command == "focus") return focus_rank(rank) ? "" : "no rank " + std::to_string(rank);
  // rankselect R NAME [N]: the N-th (by start) slice named NAME of rank R, as a click would.
  std::string name;
  std::getline(in >> std::ws, name);
  size_t nth = 0, space = name.find_last_of(' ');
  if (space != std::string::npos && space + 1 < name.size() &&
      name.find_first_not_of("0123456789", space + 1) == std::string::npos)
    nth = std::stoul(name.substr(space + 1)), name.erase(space);
  if (!expand_rank(rank, true, true)) return "rank " + std::to_string(rank) + " did not load";
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
  w.begin_object().field("title", title_).field("loading", loading()).field("error", error_).field("view", active_view());
  if (!job_) {
    w.end_object();
    return;
  }
  const auto& a = overview_.collectives;
  w.field("source", job_->source).field("loaded", uint64_t(job_->loaded_count())).field("aligned", a.aligned);
  w.key("warnings").begin_array();  // the banner's lines
  for (const std::string& line : warnings_) w.value(line);
  w.end_array();
  w.field("fleet", fleet_).field("summarised", uint64_t(overview_.ranks.size()));
  w.key("ranks").begin_array();
  for (const JobRank& r : job_->ranks) {
    w.begin_object().field("rank", r.rank).field("file", fs::path(r.path).filename().string());
    w.field("status", r.ok() ? "loaded" : present(r) ? "summarised" : "failed")
        .field("error", present(r) ? std::string() : r.error.to_string());
    w.field("cut_off", cut_off_text(r)).end_object();
  }
  w.end_array();
  w.key("offsets_ns").begin_object();
  for (size_t i = 0; i < a.offsets.size() && i < a.ranks.size(); ++i) w.field(std::to_string(a.ranks[i]), a.offsets[i]);
  w.end_object();
  w.field("collectives", uint64_t(a.instances.size())).field("view_start_ns", timeline_.view_start());
  w.field("view_end_ns", timeline_.view_end());
  w.field("row_height", double(row_height_)).field("rows_drawn", uint64_t(rows_drawn_)).field("ranks_per_row", uint64_t(group_));
  // The bands' source: their pyramid (and the level the window picked), or every rank's bins while it builds.
  w.field("bands_from_pyramid", bands_from_pyramid()).field("bands_pending", bands_pending());
  w.field("band_level", bands_from_pyramid() ? int64_t(band_columns_->level()) : int64_t(-1));
  // The overview's rows as partitioned (core/present/rank_rows.h): outliers alone, bands within nodes.
  w.field("aggregated", aggregated_).field("outlier_ranks", uint64_t(outlier_ranks_.size()));
  w.key("overview_rows").begin_array();
  for (const present::RankRow& r : rows_) {
    w.begin_object().field("first_rank", job_->ranks[r.first].rank).field("last_rank", job_->ranks[r.last - 1].rank);
    w.field("ranks", uint64_t(r.size())).field("outlier", r.outlier).field("label", present::rank_row_label(r, display_ranks_));
    w.end_object();
  }
  w.end_array();
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
  w.end_array();
  write_heatmap_state(w);
  w.end_object();
}

}  // namespace sl::views
