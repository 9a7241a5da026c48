// A job tab's selection: a collective instance marked on every rank, and the ranks expanded,
// collapsed or focused on the shared timeline (an insight opens through both).
#include "views/job_view.h"

#include <algorithm>
#include <filesystem>

#include "views/workspace.h"

namespace sl::views {
namespace {

namespace fs = std::filesystem;

}  // namespace

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
    bool known = a && a->slice.valid();  // a summary may not know its kernel's place in the store
    timeline_.set_highlights(uint32_t(i), known ? std::vector<SliceRef>{a->slice} : std::vector<SliceRef>{});
  }
}

// Expanding adds the rank's store as a source of the one timeline, in rank order, on the job
// clock (its lane index and idle overlay are built now, lazily); collapsing removes it.
bool JobView::expand_rank(int64_t rank, bool expand, bool wait) {
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
  JobRank& jr = job_->ranks[ov.job_index];
  if (!jr.store) {  // a fleet rank: its store loads from its source (through the cache)
    if (!wait) {
      load_rank_in_background(ov.job_index);
      return true;
    }
    JobRank loaded = load_rank(jr.path, {}, &process_cache_settings());
    if (!loaded.ok()) {
      jr.error = loaded.error;
      return false;
    }
    jr.store = std::move(loaded.store);
  }
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
  if (const auto* a = arrival_of(straggler_->instance, straggler_->rank); a && a->slice.valid() && source >= 0) {
    timeline_.select(SourceSlice{uint32_t(source), a->slice});
    seen_selection_ = timeline_.selection();
  }
  return true;
}

}  // namespace sl::views
