#include "core/store/trace_store.h"

#include "core/store/args_blocks.h"

#include <simdjson.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <tuple>

#include "core/store/both_ways.h"
#include "core/store/phase_timer.h"
#include "core/store/slice_order.h"
#include "core/store/sort_by_key.h"

namespace sl {

TraceStore::Buffer::~Buffer() {
  if (mapped_bytes) munmap(data, mapped_bytes);
  else std::free(data);
}

bool TraceStore::Buffer::reserve(size_t bytes) {
  if (bytes <= capacity) return true;
  if (mapped_bytes) return false;  // a mapping never grows
  char* grown = static_cast<char*>(std::realloc(data, bytes + kPadding));
  if (!grown) return false;
  data = grown;
  capacity = bytes;
  return true;
}

TraceStore::TraceStore() : args_blocks_(std::make_unique<ArgsBlocks>()) {}
TraceStore::~TraceStore() = default;
TraceStore::TraceStore(TraceStore&&) noexcept = default;
TraceStore& TraceStore::operator=(TraceStore&&) noexcept = default;

uint32_t Track::row_count() const {
  uint32_t rows = 0;
  for (uint16_t d : lane_depths) rows += d;
  return rows;
}

uint32_t Track::row_of(uint32_t slice) const {
  uint32_t offset = 0;
  for (uint16_t lane = 0; lane < slices.lane[slice]; ++lane) offset += lane_depths[lane];
  return offset + slices.depth[slice];
}

SliceRef TraceStore::parent(SliceRef s) const {
  uint32_t p = tracks[s.track].slices.parent[s.index];
  return p == kNone ? SliceRef{} : SliceRef{s.track, p};
}

uint64_t TraceStore::slice_count() const {
  uint64_t n = 0;
  for (const Track& t : tracks) n += t.slices.size();
  return n;
}

uint32_t TraceStore::add_args(std::string_view json) {
  args_.push_back(args_blocks_->append(json));
  return static_cast<uint32_t>(args_.size() - 1);
}

std::string_view TraceStore::args_json(uint32_t args_row) const {
  if (args_row == kNone || args_row >= args_.size()) return {};
  if (auto kept = kept_args_.find(args_row); kept != kept_args_.end()) return kept->second;
  // A ring of copies per thread: callers read a view while asking for the next one, and a view
  // into the shared cache could be evicted by another thread meanwhile.
  thread_local std::string ring[kArgsViews];
  thread_local unsigned next = 0;
  std::string& slot = ring[next++ % kArgsViews];
  args_blocks_->read(args_[args_row], slot);
  return slot;
}

std::string_view TraceStore::slice_args_json(SliceRef s) const {
  return args_json(tracks[s.track].slices.args[s.index]);
}

std::vector<std::pair<std::string, std::string>> TraceStore::decode_args(uint32_t args_row) const {
  std::vector<std::pair<std::string, std::string>> out;
  std::string_view text = args_json(args_row);
  if (text.empty()) return out;
  simdjson::padded_string padded(text);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  simdjson::ondemand::object object;
  if (parser.iterate(padded).get(doc) || doc.get_object().get(object)) return out;
  for (auto result : object) {
    if (result.error()) break;
    simdjson::ondemand::field field = result.value_unsafe();
    std::string_view key, raw;
    simdjson::ondemand::json_type type;
    if (field.unescaped_key().get(key)) break;
    simdjson::ondemand::value value = field.value();
    if (value.type().get(type)) break;
    if (type == simdjson::ondemand::json_type::string) {
      if (value.get_string().get(raw)) break;
    } else if (type == simdjson::ondemand::json_type::object) {
      simdjson::ondemand::object inner;
      if (value.get_object().get(inner) || inner.raw_json().get(raw)) break;
    } else if (type == simdjson::ondemand::json_type::array) {
      simdjson::ondemand::array inner;
      if (value.get_array().get(inner) || inner.raw_json().get(raw)) break;
    } else {
      raw = value.raw_json_token();
    }
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t'))
      raw.remove_suffix(1);
    out.emplace_back(std::string(key), std::string(raw));
  }
  return out;
}

std::pair<uint32_t, uint32_t> TraceStore::rows_overlapping(uint32_t track, TimeNs t0, TimeNs t1) const {
  const Track& t = tracks[track];
  auto hi = std::lower_bound(t.slices.start.begin(), t.slices.start.end(), t1) - t.slices.start.begin();
  auto lo = std::upper_bound(t.max_end_prefix.begin(), t.max_end_prefix.begin() + hi, t0) -
            t.max_end_prefix.begin();
  return {static_cast<uint32_t>(lo), static_cast<uint32_t>(hi)};
}

SliceRef TraceStore::slice_at(uint32_t track, TimeNs t) const {
  const auto& start = tracks[track].slices.start;
  return slice_at(track, t, size_t(std::upper_bound(start.begin(), start.end(), t) - start.begin()));
}

SliceRef TraceStore::slice_at(uint32_t track, TimeNs t, size_t after) const {
  const Track& tr = tracks[track];
  const SliceColumns& c = tr.slices;
  if (after == 0) return {};
  auto contains = [&](size_t row) { return c.start[row] <= t && t <= c.end(row); };
  // The containing slice that started last is the deepest. Nesting puts every slice of the
  // last-started one's lane group that contains t on its parent chain; other lane groups
  // (partial overlaps) are found by looking back a few rows.
  size_t last = static_cast<size_t>(after - 1);
  if (contains(last)) return {track, static_cast<uint32_t>(last)};
  if (c.lane[last] == 0) {
    for (uint32_t row = c.parent[last]; row != kNone; row = c.parent[row])
      if (contains(row)) return {track, row};
  }
  for (size_t row = last, looked = 0; looked < 64 && tr.max_end_prefix[row] >= t; --row, ++looked) {
    if (contains(row)) return {track, static_cast<uint32_t>(row)};
    if (row == 0) break;
  }
  return {};
}

std::span<const SliceRef> TraceStore::slices_named(StringId name) const {
  if (name + 1 >= name_offsets_.size()) return {};
  return {name_refs_.data() + name_offsets_[name], name_offsets_[name + 1] - name_offsets_[name]};
}

SliceRef TraceStore::launch_of(SliceRef activity) const {
  uint32_t c = tracks[activity.track].slices.corr[activity.index];
  return c == kNone ? SliceRef{} : correlations[c].launch;
}

std::span<const SliceRef> TraceStore::activities_of(SliceRef launch) const {
  uint32_t c = tracks[launch.track].slices.corr[launch.index];
  if (c == kNone) return {};
  const Correlation& corr = correlations[c];
  return {correlation_activities_.data() + corr.first_activity, corr.activity_count};
}

std::optional<int64_t> TraceStore::correlation_id(SliceRef s) const {
  uint32_t c = tracks[s.track].slices.corr[s.index];
  if (c == kNone) return std::nullopt;
  return correlations[c].id;
}

namespace {
// Rows of `flows` whose endpoint (chosen by `end`) is `s`, from an index sorted by that endpoint.
std::span<const uint32_t> flows_with(const std::vector<Flow>& flows, const std::vector<uint32_t>& index,
                                     SliceRef s, SliceRef Flow::*end) {
  auto [lo, hi] = std::equal_range(index.begin(), index.end(), s, [&](auto a, auto b) {
    if constexpr (std::is_same_v<decltype(a), SliceRef>) return a < flows[b].*end;
    else return flows[a].*end < b;
  });
  return {index.data() + (lo - index.begin()), static_cast<size_t>(hi - lo)};
}
}  // namespace

std::span<const uint32_t> TraceStore::flows_from(SliceRef s) const {
  return flows_with(flows, flows_by_from_, s, &Flow::from);
}
std::span<const uint32_t> TraceStore::flows_to(SliceRef s) const {
  return flows_with(flows, flows_by_to_, s, &Flow::to);
}

uint64_t TraceStore::launch_link_count() const { return launch_links_; }
uint64_t TraceStore::gpu_activity_count() const { return gpu_activities_; }
uint64_t TraceStore::kernel_count() const { return kernels_; }

template <class T, class Alloc>
static size_t bytes_of(const std::vector<T, Alloc>& v) {
  return v.capacity() * sizeof(T);
}

size_t TraceStore::store_bytes() const {
  size_t total = strings.bytes_used() + bytes_of(args_) + bytes_of(correlation_activities_) +
                 bytes_of(name_offsets_) + bytes_of(name_refs_) + bytes_of(flows_by_from_) +
                 bytes_of(flows_by_to_) + bytes_of(flows) + bytes_of(correlations) + bytes_of(iterations) + memory.bytes_held();
  for (const Track& t : tracks) {
    const SliceColumns& c = t.slices;
    total += sizeof(Track) + bytes_of(c.start) + bytes_of(c.dur) + bytes_of(c.name) + bytes_of(c.cat) +
             bytes_of(c.parent) + bytes_of(c.args) + bytes_of(c.corr) + bytes_of(c.depth) + bytes_of(c.lane) +
             bytes_of(t.max_end_prefix) + bytes_of(t.lane_depths);
    const InstantColumns& i = t.instants;
    total += bytes_of(i.ts) + bytes_of(i.name) + bytes_of(i.cat) + bytes_of(i.args) + bytes_of(i.scope);
  }
  for (const CounterSeries& s : counters) total += sizeof(s) + bytes_of(s.ts) + bytes_of(s.value);
  for (const Process& p : processes) total += sizeof(p) + bytes_of(p.tracks);
  return total;
}

namespace {
// Slices nest by time; see nest_slices_from (core/store/slice_order.cpp).
void nest_track(Track& track, ImportIssues& issues) {
  track.lane_depths.clear();
  track.overlapping = nest_slices_from(track, 0, issues);
  if (track.overlapping) issues.add_count(IssueKind::OverlappingSlice, track.overlapping);
}

// Pieces of work with their sizes, on two threads (run_both over `rows`): largest first, so that
// neither thread is left with a big one at the end. What each finds is only counted (overlaps,
// depth overflows), so adding up the two tallies gives what one thread would.
using Piece = std::pair<size_t, std::function<void(ImportIssues&)>>;
void run_largest_first(std::vector<Piece>& pieces, size_t rows, ImportIssues& issues) {
  std::stable_sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.first > b.first; });
  std::atomic<size_t> next{0};
  auto work = [&](ImportIssues& found) {
    for (size_t i = next++; i < pieces.size(); i = next++) pieces[i].second(found);
  };
  ImportIssues found[2];
  run_both(rows, [&] { work(found[0]); }, [&] { work(found[1]); });
  issues.merge(found[0]);
  issues.merge(found[1]);
}
}  // namespace

// Tracks and counter series are sorted independently of each other. Then each track's nesting
// and the store's indexes share the two threads: nesting writes only the derived columns (parent,
// depth, lane, the max-end prefix), and the indexes (names, iterations, correlations, track
// order, launch flows) read only what the sort left in place. (Nesting before the indexes, a
// report whose rows were mostly one stream's, 900k kernels, kept one thread nesting while the
// other waited.)
void TraceStore::sort_nest_and_index(std::optional<StringId> launch_flow_cat) {
  std::vector<Piece> sorts;
  for (Track& t : tracks)
    sorts.emplace_back(t.slices.size() + t.instants.size(), [&t](ImportIssues&) {
      sort_slices(t.slices);
      sort_instants(t.instants);
    });
  for (CounterSeries& c : counters) sorts.emplace_back(c.ts.size(), [&c](ImportIssues&) { sort_series(c.ts, c.value); });
  run_largest_first(sorts, slice_count(), issues);
  // Sizes in nesting's cost: a row nested costs about what two rows indexed do.
  std::vector<Piece> rest;
  for (Track& t : tracks) rest.emplace_back(2 * t.slices.size(), [&t](ImportIssues& found) { nest_track(t, found); });
  rest.emplace_back(slice_count(), [this](ImportIssues&) {
    index_names();
    find_iterations();
  });
  // Making launch flows costs about what nesting the rows does (fresh memory for each); their
  // indexes follow on both threads.
  rest.emplace_back(slice_count() * (launch_flow_cat ? 3 : 1), [this, launch_flow_cat](ImportIssues&) {
    link_correlations();
    if (launch_flow_cat) add_launch_flows(*launch_flow_cat);
    order_tracks();
  });
  run_largest_first(rest, slice_count(), issues);
  if (launch_flow_cat) index_launch_flows();
}

void TraceStore::index_names() {
  name_offsets_.assign(strings.size() + 1, 0);
  for (const Track& t : tracks)
    for (StringId id : t.slices.name) ++name_offsets_[id + 1];
  for (size_t i = 1; i < name_offsets_.size(); ++i) name_offsets_[i] += name_offsets_[i - 1];
  name_refs_.assign(name_offsets_.back(), SliceRef{});
  std::vector<uint32_t> fill(name_offsets_.begin(), name_offsets_.end() - 1);
  for (uint32_t t = 0; t < tracks.size(); ++t) {
    const auto& names = tracks[t].slices.name;
    for (uint32_t row = 0; row < names.size(); ++row) name_refs_[fill[names[row]]++] = {t, row};
  }
}

void TraceStore::link_correlations() {
  // Each correlation counts its activities in place (a separate array of counts was 4 bytes a
  // correlation of fresh memory: ~1.5 ms of page faults for 900k of them).
  launch_links_ = gpu_activities_ = kernels_ = 0;
  for (auto& c : correlations) c.launch = {}, c.activity_count = 0;
  for (uint32_t t = 0; t < tracks.size(); ++t) {
    const Track& track = tracks[t];
    const SliceColumns& c = track.slices;
    bool gpu = track.kind == TrackKind::GpuStream;
    if (gpu) gpu_activities_ += c.size();
    for (uint32_t row = 0; row < c.size(); ++row) {
      uint32_t corr = c.corr[row];
      if (corr == kNone) continue;
      if (gpu) ++correlations[corr].activity_count;
      else if (!correlations[corr].launch.valid()) correlations[corr].launch = {t, row};
    }
  }
  uint32_t offset = 0;
  for (Correlation& c : correlations) {
    c.first_activity = offset;
    offset += c.activity_count;
    c.activity_count = 0;  // counted again as the activities are listed
  }
  correlation_activities_.assign(offset, SliceRef{});
  for (uint32_t t = 0; t < tracks.size(); ++t) {
    if (tracks[t].kind != TrackKind::GpuStream) continue;
    const SliceColumns& c = tracks[t].slices;
    for (uint32_t row = 0; row < c.size(); ++row) {
      uint32_t corr = c.corr[row];
      if (corr == kNone) continue;
      Correlation& link = correlations[corr];
      correlation_activities_[link.first_activity + link.activity_count++] = {t, row};
      if (link.launch.valid()) ++launch_links_;
    }
  }
  StringId kernel = strings.find("kernel"), old_kernel = strings.find("Kernel");
  for (const Track& t : tracks)
    for (StringId cat : t.slices.cat) kernels_ += (cat == kernel || cat == old_kernel);
}

// A flow from the launch to each GPU activity it launched, read off the links just made: an
// Nsight report's launch flows. Both ends are the slices themselves, not the slices enclosing
// two times as flow points bind: no search, and no list of flows kept through the load. They go
// correlation by correlation (each one's activities in track and row order), so the rows of a
// correlation's flows are a range known up front (first_launch_flows), which
// index_launch_flows() uses. Call on a store without flows, after link_correlations.
void TraceStore::add_launch_flows(StringId cat) {
  flows.reserve(launch_links_);
  for (const Correlation& c : correlations)
    if (c.launch.valid())
      for (uint32_t a = 0; a < c.activity_count; ++a)
        flows.push_back({cat, c.launch, correlation_activities_[c.first_activity + a]});
}

namespace {
// Per correlation, the row of its first launch flow (TraceStore::add_launch_flows' order).
std::vector<uint32_t> first_launch_flows(const std::vector<Correlation>& correlations) {
  std::vector<uint32_t> first(correlations.size());
  uint32_t rows = 0;
  for (size_t c = 0; c < correlations.size(); ++c) {
    first[c] = rows;
    if (correlations[c].launch.valid()) rows += correlations[c].activity_count;
  }
  return first;
}
}  // namespace

// Both indexes of the launch flows, one per thread, each by walking the tracks' rows in order:
// a launch lists its correlation's range of rows, an activity takes the next row of its
// correlation's. No sort (a counting sort by endpoint, as finalize_flows does, took two passes
// over the flows and a bucket per slice for each index). Few flows beside the rows (a report
// whose kernels' launches are mostly missing) are sorted instead, as finalize_flows does.
void TraceStore::index_launch_flows() {
  if (flows.size() < slice_count() / 4) return finalize_flows();
  auto each_launched = [&](bool on_gpu, auto visit) {
    for (uint32_t t = 0; t < tracks.size(); ++t) {
      if ((tracks[t].kind == TrackKind::GpuStream) != on_gpu) continue;
      const Column<uint32_t>& corr = tracks[t].slices.corr;
      for (uint32_t row = 0; row < corr.size(); ++row)
        if (corr[row] != kNone && correlations[corr[row]].launch.valid()) visit(t, row, corr[row]);
    }
  };
  run_both(
      flows.size(),
      [&] {
        std::vector<uint32_t> first = first_launch_flows(correlations);
        flows_by_from_.clear();
        flows_by_from_.reserve(flows.size());
        each_launched(false, [&](uint32_t t, uint32_t row, uint32_t c) {
          if (correlations[c].launch != SliceRef{t, row}) return;  // a later call of the same launch
          for (uint32_t a = 0; a < correlations[c].activity_count; ++a) flows_by_from_.push_back(first[c] + a);
        });
      },
      [&] {
        std::vector<uint32_t> next = first_launch_flows(correlations);
        flows_by_to_.clear();
        flows_by_to_.reserve(flows.size());
        each_launched(true, [&](uint32_t, uint32_t, uint32_t c) { flows_by_to_.push_back(next[c]++); });
      });
}

namespace {
// Rows of `flows` ordered by one endpoint, rows of equal endpoints in row order (as a stable
// sort of the rows would give). The endpoints are sorted with their rows beside them: sorting
// rows by looking each flow up misses the cache at every comparison (millions of flows).
std::vector<uint32_t> flows_ordered_by(const std::vector<Track>& tracks, const std::vector<Flow>& flows, SliceRef Flow::*end) {
  // As many flows as a quarter of the slices or more (a linked Nsight report: one per GPU
  // activity): a counting sort with a bucket per slice, two passes over the flows whatever their
  // order. Launches of CUDA graphs, each the start of thousands of flows interleaved with other
  // launches', made the radix sort below take three passes after a failed insertion sort.
  std::vector<size_t> first_of_track(tracks.size() + 1, 0);
  for (size_t t = 0; t < tracks.size(); ++t) first_of_track[t + 1] = first_of_track[t] + tracks[t].slices.size();
  if (size_t slices = first_of_track.back(); flows.size() >= slices / 4) {
    auto bucket = [&](const Flow& f) { return first_of_track[(f.*end).track] + (f.*end).index; };
    std::vector<uint32_t> at(slices + 1, 0);  // flows of the slices before each, once summed
    for (const Flow& f : flows) ++at[bucket(f) + 1];
    for (size_t i = 1; i < at.size(); ++i) at[i] += at[i - 1];
    std::vector<uint32_t> rows(flows.size());
    for (uint32_t row = 0; row < flows.size(); ++row) rows[at[bucket(flows[row])]++] = row;
    return rows;
  }
  struct Entry {
    SliceRef at;
    uint32_t row;
  };
  std::vector<Entry> entries(flows.size());
  for (uint32_t row = 0; row < flows.size(); ++row) entries[row] = {flows[row].*end, row};
  // In row order now: sorted stably by endpoint, rows of one endpoint stay in row order.
  stable_sort_by_key(entries, [](const Entry& e) { return uint64_t(e.at.track) << 32 | e.at.index; });
  std::vector<uint32_t> rows(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) rows[i] = entries[i].row;
  return rows;
}
}  // namespace

void TraceStore::finalize_flows() {
  run_both(
      flows.size(), [&] { flows_by_from_ = flows_ordered_by(tracks, flows, &Flow::from); },
           [&] { flows_by_to_ = flows_ordered_by(tracks, flows, &Flow::to); });
}

void TraceStore::find_iterations() {
  iterations.clear();
  constexpr std::string_view kPrefix = "ProfilerStep#";
  for (StringId id = 0; id < strings.size(); ++id) {
    std::string_view name = strings.view(id);
    if (!name.starts_with(kPrefix)) continue;
    int64_t number = 0;
    auto digits = name.substr(kPrefix.size());
    if (std::from_chars(digits.data(), digits.data() + digits.size(), number).ec != std::errc{}) continue;
    for (SliceRef s : slices_named(id)) {
      if (tracks[s.track].kind != TrackKind::CpuThread) continue;
      iterations.push_back({number, s, start(s), end(s)});
      break;  // one instance per step number: the first on the CPU
    }
  }
  std::sort(iterations.begin(), iterations.end(),
            [](const Iteration& a, const Iteration& b) { return a.start < b.start; });
}

// Display order: sort indices where given (Kineto gives GPU devices large ones), then CPU
// before GPU, then pid/tid as numbers, then as text.
void TraceStore::order_tracks() {
  auto gpu_process = [&](const Process& p) {
    return !p.tracks.empty() && std::all_of(p.tracks.begin(), p.tracks.end(), [&](uint32_t t) {
      return tracks[t].kind == TrackKind::GpuStream;
    });
  };
  process_order.resize(processes.size());
  std::iota(process_order.begin(), process_order.end(), 0u);
  std::stable_sort(process_order.begin(), process_order.end(), [&](uint32_t a, uint32_t b) {
    const Process &pa = processes[a], &pb = processes[b];
    auto key = [&](const Process& p) {
      return std::tuple(gpu_process(p), p.has_sort_index ? p.sort_index : p.pid, p.pid,
                        strings.view(p.pid_text));
    };
    return key(pa) < key(pb);
  });
  for (Process& p : processes) {
    std::stable_sort(p.tracks.begin(), p.tracks.end(), [&](uint32_t a, uint32_t b) {
      const Track &ta = tracks[a], &tb = tracks[b];
      auto key = [&](const Track& t) {
        return std::tuple(int(t.kind), t.has_sort_index ? t.sort_index : t.tid, t.tid,
                          strings.view(t.tid_text));
      };
      return key(ta) < key(tb);
    });
  }
}

// Kineto writes GPU work under pid = device. Other tracks of such a process (device-wide syncs
// on tid -1, MTIA runtime queues) belong to the device too, not to the host: unless they hold
// host work, as the Python thread Kineto sometimes files under the GPU's pid does.
void TraceStore::adopt_device_tracks() {
  std::vector<StringId> host_cats;
  for (std::string_view c : {"python_function", "cpu_op", "user_annotation", "cuda_runtime", "cuda_driver", "Trace",
                             "Operator", "Runtime", "cpu_instant_event"})
    if (StringId id = strings.find(c); id != StringPool::kNotFound) host_cats.push_back(id);
  auto holds_host_work = [&](const Track& t) {
    return std::any_of(t.slices.cat.begin(), t.slices.cat.end(),
                       [&](StringId c) { return std::find(host_cats.begin(), host_cats.end(), c) != host_cats.end(); });
  };
  for (const Process& p : processes) {
    const Track* gpu = nullptr;
    for (uint32_t t : p.tracks)
      if (tracks[t].kind == TrackKind::GpuStream) gpu = &tracks[t];
    if (!gpu) continue;
    int64_t device = gpu->device;
    for (uint32_t t : p.tracks) {
      Track& track = tracks[t];
      if (track.kind != TrackKind::CpuThread || holds_host_work(track)) continue;
      track.kind = TrackKind::GpuStream;
      track.device = device;
      track.stream = track.tid_is_number ? track.tid : -1;
    }
  }
}

void TraceStore::finalize(std::optional<StringId> launch_flow_cat) {
  PhaseTimer timer("finalize");
  adopt_device_tracks();
  sort_nest_and_index(launch_flow_cat);
  end_ns = latest_end(*this);
  timer.mark("sort, nest and index");
}

TimeNs latest_end(const TraceStore& store) {
  TimeNs end = 0;
  for (const Track& t : store.tracks) {
    if (!t.max_end_prefix.empty()) end = std::max(end, t.max_end_prefix.back());
    if (!t.instants.ts.empty()) end = std::max(end, t.instants.ts.back());
  }
  for (const CounterSeries& s : store.counters)
    if (!s.ts.empty()) end = std::max(end, s.ts.back());
  if (!store.memory.empty()) end = std::max(end, store.memory.ts.back());
  return end;
}

}  // namespace sl
