#include "core/store/trace_builder.h"

#include <algorithm>
#include <array>

#include "core/store/args_blocks.h"
#include "core/store/both_ways.h"
#include "core/store/phase_timer.h"
#include "core/store/sort_by_key.h"
#include "core/text/decimal.h"

namespace sl {

uint8_t category_flags(std::string_view cat) {
  if (cat == "kernel" || cat == "Kernel") return kCatGpu | kCatKernel;
  if (cat == "gpu_memcpy" || cat == "Memcpy" || cat == "gpu_memset" || cat == "Memset" ||
      cat == "gpu_user_annotation" || cat == "mtia_ccp_events" || cat == "cuda_profiler_range")
    return kCatGpu;
  if (cat == "ac2g" || cat == "async" || cat == "async_gpu" || cat == "async_cpu_to_gpu") return kCatFlow;
  return 0;
}

TraceBuilder::TraceBuilder(TraceStore& store) : store_(store) {}

uint32_t TraceBuilder::process(std::string_view text, std::optional<int64_t> number) {
  auto [it, added] = process_index_.try_emplace(std::string(text), 0);
  if (!added) return it->second;
  Process p;
  p.pid_text = store_.strings.intern(text);
  p.pid_is_number = number.has_value();
  p.pid = number.value_or(0);
  store_.processes.push_back(p);
  it->second = static_cast<uint32_t>(store_.processes.size() - 1);
  return it->second;
}

uint32_t TraceBuilder::thread_track(uint32_t process, std::string_view text, std::optional<int64_t> number) {
  std::string key = std::to_string(process);
  key += '\x1f';
  key += text;
  auto [it, added] = thread_index_.try_emplace(std::move(key), 0);
  if (!added) return it->second;
  Track t;
  t.process = process;
  t.tid_text = store_.strings.intern(text);
  t.tid_is_number = number.has_value();
  t.tid = number.value_or(0);
  // Old autograd traces name GPU threads "stream 7": keep the number for ordering.
  if (!number && text.starts_with("stream ")) {
    if (auto n = parse_int64(text.substr(7))) t.tid = *n, t.tid_is_number = true;
  }
  t.name = t.tid_text;
  store_.tracks.push_back(std::move(t));
  it->second = static_cast<uint32_t>(store_.tracks.size() - 1);
  store_.processes[process].tracks.push_back(it->second);
  return it->second;
}

uint32_t TraceBuilder::async_track(uint32_t process, StringId cat, StringId name) {
  auto [it, added] = async_index_.try_emplace({process, cat, name}, 0);
  if (!added) return it->second;
  Track t;
  t.kind = TrackKind::Async;
  t.process = process;
  t.name = name;
  store_.tracks.push_back(std::move(t));
  it->second = static_cast<uint32_t>(store_.tracks.size() - 1);
  store_.processes[process].tracks.push_back(it->second);
  return it->second;
}

void TraceBuilder::mark_gpu(uint32_t track, std::optional<int64_t> device, std::optional<int64_t> stream) {
  Track& t = store_.tracks[track];
  t.gpu_work = true;
  if (t.kind == TrackKind::GpuStream && t.stream >= 0) return;
  t.kind = TrackKind::GpuStream;
  const Process& p = store_.processes[t.process];
  t.device = device.value_or(p.pid_is_number ? p.pid : -1);
  t.stream = stream.value_or(t.tid_is_number ? t.tid : -1);
}

// Open addressing over correlation ids: one lookup per launch and per GPU activity.
uint32_t TraceBuilder::correlation_row(int64_t id) {
  if (correlation_slots_.empty() || store_.correlations.size() * 2 >= correlation_slots_.size())
    grow_correlations(store_.correlations.size());
  size_t mask = correlation_slots_.size() - 1;
  for (size_t slot = mix_id(id) & mask;; slot = (slot + 1) & mask) {
    CorrelationSlot& s = correlation_slots_[slot];
    if (s.row == kNone) {
      s = {id, uint32_t(store_.correlations.size())};
      store_.correlations.push_back({id, {}, 0, 0});
      return s.row;
    }
    if (s.id == id) return s.row;
  }
}

// At least doubles the table, and more until `rows` rows fit (under half full).
void TraceBuilder::grow_correlations(size_t rows) {
  size_t size = std::max<size_t>(1024, correlation_slots_.size() * 2);
  while (size <= 2 * rows) size *= 2;
  std::vector<CorrelationSlot> slots(size, CorrelationSlot{0, kNone});
  size_t mask = slots.size() - 1;
  for (uint32_t row = 0; row < store_.correlations.size(); ++row) {
    int64_t id = store_.correlations[row].id;
    size_t slot = mix_id(id) & mask;
    while (slots[slot].row != kNone) slot = (slot + 1) & mask;
    slots[slot] = {id, row};
  }
  correlation_slots_.swap(slots);
}

void TraceBuilder::add_slice(uint32_t track, TimeNs abs_start, TimeNs dur, StringId name, StringId cat,
                             uint32_t args, std::optional<int64_t> correlation) {
  see(abs_start);
  see(abs_start + dur);
  append_slice(track, abs_start, dur, name, cat, args, correlation ? correlation_row(*correlation) : kNone);
}

namespace {
// The columns a slice is added with (finalize() derives the others).
template <class F>
void each_input_column(SliceColumns& c, F&& f) {
  f(c.start), f(c.dur), f(c.name), f(c.cat), f(c.args), f(c.corr);
}
}  // namespace

void TraceBuilder::reserve_slices(uint32_t track, size_t rows) {
  SliceColumns& c = store_.tracks[track].slices;
  size_t n = c.size() + rows;
  each_input_column(c, [&](auto& column) { column.reserve(n); });
}

void TraceBuilder::release_unused(uint32_t track) {
  SliceColumns& c = store_.tracks[track].slices;
  if (c.start.capacity() <= 2 * c.size()) return;  // no more than doubling would have left
  each_input_column(c, [](auto& column) { column.shrink_to_fit(); });
}

void TraceBuilder::add_begin(uint32_t track, TimeNs abs_ts, StringId name, StringId cat, uint32_t args,
                             std::optional<int64_t> correlation, uint64_t offset) {
  see(abs_ts);
  begins_[track].push_back({abs_ts, order_++, name, cat, args, correlation, offset});
}

void TraceBuilder::add_end(uint32_t track, TimeNs abs_ts, uint64_t offset) {
  see(abs_ts);
  ends_[track].push_back({abs_ts, order_++, offset});
}

void TraceBuilder::add_async_begin(uint32_t track, uint64_t key, TimeNs abs_ts, StringId name, StringId cat,
                                   uint32_t args, uint64_t offset) {
  see(abs_ts);
  async_.push_back({track, key, true, abs_ts, order_++, name, cat, args, offset});
}

void TraceBuilder::add_async_end(uint64_t key, TimeNs abs_ts, uint64_t offset) {
  see(abs_ts);
  async_.push_back({kNone, key, false, abs_ts, order_++, 0, 0, kNone, offset});
}

void TraceBuilder::add_instant(uint32_t track, TimeNs abs_ts, StringId name, StringId cat, uint32_t args,
                               char scope) {
  see(abs_ts);
  InstantColumns& i = store_.tracks[track].instants;
  i.ts.push_back(abs_ts);
  i.name.push_back(name);
  i.cat.push_back(cat);
  i.args.push_back(args);
  i.scope.push_back(scope);
  ++store_.counts.instants;
}

void TraceBuilder::add_counter(uint32_t process, std::string_view series, TimeNs abs_ts, double value) {
  see(abs_ts);
  std::string key = std::to_string(process);
  key += '\x1f';
  key += series;
  auto [it, added] = counter_index_.try_emplace(std::move(key), 0);
  if (added) {
    CounterSeries s;
    s.process = process;
    s.name = store_.strings.intern(series);
    store_.counters.push_back(std::move(s));
    it->second = static_cast<uint32_t>(store_.counters.size() - 1);
  }
  store_.counters[it->second].ts.push_back(abs_ts);
  store_.counters[it->second].value.push_back(value);
}

void TraceBuilder::add_flow_point(uint32_t track, uint64_t key, StringId cat, char phase, TimeNs abs_ts,
                                  bool enclosing, uint64_t offset) {
  see(abs_ts);
  flow_points_.push_back({track, key, cat, phase, enclosing, abs_ts, order_++, offset, {}});
}

void TraceBuilder::set_process_sort_index(uint32_t process, int64_t index) {
  store_.processes[process].sort_index = index;
  store_.processes[process].has_sort_index = true;
}

void TraceBuilder::set_thread_sort_index(uint32_t track, int64_t index) {
  store_.tracks[track].sort_index = index;
  store_.tracks[track].has_sort_index = true;
}

// `B`/`E` pairs match per thread, last opened first closed, in time order (file order on ties).
void TraceBuilder::match_begin_end() {
  for (auto& entry : begins_) {
    uint32_t track = entry.first;  // a plain variable: lambdas below capture it
    auto& begins = entry.second;
    auto& ends = ends_[track];
    auto by_time = [](const auto& a, const auto& b) { return std::tie(a.ts, a.order) < std::tie(b.ts, b.order); };
    std::sort(begins.begin(), begins.end(), by_time);
    std::sort(ends.begin(), ends.end(), by_time);
    std::vector<const PendingBegin*> open;
    size_t e = 0;
    auto close_until = [&](TimeNs ts, uint64_t order, bool everything) {
      for (; e < ends.size() && (everything || std::tie(ends[e].ts, ends[e].order) < std::tie(ts, order)); ++e) {
        if (open.empty()) {
          store_.issues.add(IssueKind::EndWithoutBegin, ends[e].offset);
          ++store_.counts.skipped;
          continue;
        }
        const PendingBegin& b = *open.back();
        open.pop_back();
        append_slice(track, b.ts, ends[e].ts - b.ts, b.name, b.cat, b.args,
                     b.corr ? correlation_row(*b.corr) : kNone);
      }
    };
    for (const PendingBegin& b : begins) {
      close_until(b.ts, b.order, false);
      open.push_back(&b);
    }
    close_until(0, 0, true);
    for (const PendingBegin* b : open) {
      store_.issues.add(IssueKind::BeginWithoutEnd, b->offset);
      append_slice(track, b->ts, max_ts_ - b->ts, b->name, b->cat, b->args,
                   b->corr ? correlation_row(*b->corr) : kNone);
    }
  }
  for (auto& [track, ends] : ends_) {
    if (begins_.count(track)) continue;
    for (const PendingEnd& e : ends) store_.issues.add(IssueKind::EndWithoutBegin, e.offset);
    store_.counts.skipped += ends.size();
  }
  begins_.clear();
  ends_.clear();
}

void TraceBuilder::match_async() {
  std::stable_sort(async_.begin(), async_.end(), [](const PendingAsync& a, const PendingAsync& b) {
    return std::tie(a.key, a.ts, a.order) < std::tie(b.key, b.ts, b.order);
  });
  for (size_t i = 0; i < async_.size();) {
    size_t j = i;
    std::vector<const PendingAsync*> open;
    for (; j < async_.size() && async_[j].key == async_[i].key; ++j) {
      const PendingAsync& a = async_[j];
      if (a.begin) {
        open.push_back(&a);
      } else if (open.empty()) {
        store_.issues.add(IssueKind::AsyncEndWithoutBegin, a.offset);
        ++store_.counts.skipped;
      } else {
        const PendingAsync& b = *open.back();
        open.pop_back();
        append_slice(b.track, b.ts, a.ts - b.ts, b.name, b.cat, b.args, kNone);
      }
    }
    for (const PendingAsync* b : open) {
      store_.issues.add(IssueKind::AsyncBeginWithoutEnd, b->offset);
      append_slice(b->track, b->ts, max_ts_ - b->ts, b->name, b->cat, b->args, kNone);
    }
    i = j;
  }
  async_.clear();
}

void TraceBuilder::rebase() {
  TimeNs origin = min_ts_ == INT64_MAX ? 0 : min_ts_;
  store_.origin_ns = origin;
  for (Track& t : store_.tracks) {
    for (TimeNs& s : t.slices.start) s -= origin;
    for (TimeNs& s : t.instants.ts) s -= origin;
  }
  for (CounterSeries& c : store_.counters)
    for (TimeNs& s : c.ts) s -= origin;
  for (FlowPoint& f : flow_points_) f.ts -= origin;
}

// Binds every flow point to its slice: `s`, `t` and `f` with bp "e" to the enclosing slice,
// other `f` to the next slice starting at or after it. Points are visited per track in time
// order with cursors, so this is a merge, not a binary search per point. (A point's target
// depends on its time alone: the order of points at equal times does not matter.)
void TraceBuilder::bind_targets() {
  // Bucketed by track, then sorted by time as (time, point) pairs side by side: millions of
  // points, and a sort that looked each point up would miss the cache at every comparison.
  struct Timed {
    TimeNs ts;
    uint32_t point;
  };
  std::vector<uint32_t> first(store_.tracks.size() + 1, 0);
  for (const FlowPoint& p : flow_points_) ++first[p.track + 1];
  for (size_t t = 1; t < first.size(); ++t) first[t] += first[t - 1];
  std::vector<Timed> timed(flow_points_.size());
  {
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (uint32_t i = 0; i < flow_points_.size(); ++i) timed[fill[flow_points_[i].track]++] = {flow_points_[i].ts, i};
  }
  for (uint32_t track = 0; track + 1 < first.size(); ++track) {
    // A track's points are in point order: sorted stably by time, they are in (time, point) order.
    Timed *begin = timed.data() + first[track], *end = timed.data() + first[track + 1];
    stable_sort_by_key(begin, end, [](const Timed& t) { return sortable_key(t.ts); });
    const auto& start = store_.tracks[track].slices.start;
    size_t at_or_before = 0, before = 0;
    for (auto it = begin; it != end; ++it) {
      FlowPoint& p = flow_points_[it->point];
      while (at_or_before < start.size() && start[at_or_before] <= p.ts) ++at_or_before;
      while (before < start.size() && start[before] < p.ts) ++before;
      if (p.enclosing) p.target = store_.slice_at(track, p.ts, at_or_before);
      else if (before < start.size()) p.target = {track, uint32_t(before)};
    }
  }
}

// The points in (key, time, order) order, as indexes into flow_points_. Sorted as (key, point)
// pairs by key, then each key's points (a flow's two or three) by time and order.
std::vector<uint32_t> TraceBuilder::flow_points_by_key() const {
  struct Keyed {
    uint64_t key;
    uint32_t point;
  };
  std::vector<Keyed> keyed(flow_points_.size());
  for (uint32_t i = 0; i < flow_points_.size(); ++i) keyed[i] = {flow_points_[i].key, i};
  stable_sort_by_key(keyed, [](const Keyed& k) { return k.key; });
  for (size_t i = 0, j; i < keyed.size(); i = j) {
    for (j = i + 1; j < keyed.size() && keyed[j].key == keyed[i].key;) ++j;
    auto before = [&](const Keyed& a, const Keyed& b) {
      const FlowPoint &x = flow_points_[a.point], &y = flow_points_[b.point];
      return std::tie(x.ts, x.order) < std::tie(y.ts, y.order);  // order: total
    };
    if (j - i == 2 && before(keyed[i + 1], keyed[i])) std::swap(keyed[i], keyed[i + 1]);
    else if (j - i > 2) std::sort(keyed.begin() + std::ptrdiff_t(i), keyed.begin() + std::ptrdiff_t(j), before);
  }
  std::vector<uint32_t> points(keyed.size());
  for (size_t i = 0; i < keyed.size(); ++i) points[i] = keyed[i].point;
  return points;
}

// A flow is s → t… → f points sharing a key, in time order; each point binds to a slice on its
// own thread. One start may fan out to several ends (a CUDA graph launch reaches every kernel of
// the graph), so an `f` links from the latest `s`/`t` without closing it. Keys with ends but no
// start, or a start but no end, are counted once each, never invented. `by_key`: the points in
// (key, time, order) order (flow_points_by_key), their targets bound (bind_targets).
void TraceBuilder::bind_flows(const std::vector<uint32_t>& by_key) {
  auto point = [&](size_t k) -> const FlowPoint& { return flow_points_[by_key[k]]; };
  for (size_t i = 0; i < by_key.size();) {
    size_t j = i;
    SliceRef previous;
    const FlowPoint *start = nullptr, *orphan_end = nullptr;
    bool ended = false;
    while (j < by_key.size() && point(j).key == point(i).key) ++j;
    // The points are scattered: ask for the ones a few groups on before they are needed.
    for (size_t k = i + 16; k < j + 16 && k < by_key.size(); ++k) __builtin_prefetch(&flow_points_[by_key[k]]);
    // An end stamped before its start (host and device clocks drift) still belongs to it.
    for (size_t k = i; k < j && !start; ++k)
      if (point(k).phase == 's') {
        start = &point(k);
        previous = start->target;
      }
    for (size_t k = i; k < j; ++k) {
      const FlowPoint& p = point(k);
      SliceRef target = p.target;
      if (!target.valid()) store_.issues.add(IssueKind::FlowPointUnbound, p.offset);
      if (p.phase == 's') {
        if (&p != start) ended = false;  // the id was reused: a new flow starts
        start = &p;
        previous = target;
        continue;
      }
      if (!start) {
        if (!orphan_end) orphan_end = &p;
        continue;
      }
      if (previous.valid() && target.valid()) store_.flows.push_back({p.cat, previous, target});
      if (p.phase == 't') previous = target;
      else ended = true;
    }
    if (orphan_end) store_.issues.add(IssueKind::FlowEndWithoutStart, orphan_end->offset);
    if (start && !ended) store_.issues.add(IssueKind::FlowStartWithoutEnd, start->offset);
    i = j;
  }
  flow_points_.clear();
  flow_points_.shrink_to_fit();
}

// absorb(): the correlation rows of `from` and its tracks' slices and instants, appended to
// this store's (`track`, `str`: where its tracks and strings went; args rows shifted by
// `args_base`), each column grown once to its final size and filled column by column (growing
// by doubling would copy it several times into fresh memory).
void TraceBuilder::absorb_columns(TraceStore& from, const std::vector<uint32_t>& track,
                                  const std::vector<StringId>& str, uint32_t args_base) {
  std::vector<uint32_t> corr(from.correlations.size());
  size_t correlations = store_.correlations.size() + corr.size();
  if (correlations * 2 >= correlation_slots_.size()) grow_correlations(correlations);  // once, not by doubling
  for (uint32_t i = 0; i < corr.size(); ++i) corr[i] = correlation_row(from.correlations[i].id);
  auto append = [](auto& out, const auto& in, auto map) {
    out.reserve(out.size() + in.size());
    for (auto v : in) out.push_back(map(v));
  };
  auto same = [](auto v) { return v; };
  auto interned = [&](StringId s) { return str[s]; };
  auto args = [&](uint32_t a) { return a == kNone ? kNone : a + args_base; };
  auto correlation = [&](uint32_t c) { return c == kNone ? kNone : corr[c]; };
  for (uint32_t i = 0; i < track.size(); ++i) {
    SliceColumns& in = from.tracks[i].slices;
    SliceColumns& out = store_.tracks[track[i]].slices;
    append(out.start, in.start, same);
    append(out.dur, in.dur, same);
    append(out.name, in.name, interned);
    append(out.cat, in.cat, interned);
    append(out.args, in.args, args);
    append(out.corr, in.corr, correlation);
    store_.counts.slices += in.size();
    InstantColumns& in_instants = from.tracks[i].instants;
    InstantColumns& out_instants = store_.tracks[track[i]].instants;
    append(out_instants.ts, in_instants.ts, same);
    append(out_instants.name, in_instants.name, interned);
    append(out_instants.cat, in_instants.cat, interned);
    append(out_instants.args, in_instants.args, args);
    append(out_instants.scope, in_instants.scope, same);
    in = {};
    in_instants = {};
  }
}

void TraceBuilder::absorb(TraceBuilder& later) {
  TraceStore& from = later.store_;
  std::vector<StringId> str(from.strings.size());
  for (StringId i = 0; i < str.size(); ++i) str[i] = store_.strings.intern(from.strings.view(i));
  auto opt_number = [](bool is_number, int64_t v) { return is_number ? std::optional<int64_t>(v) : std::nullopt; };
  std::vector<uint32_t> proc(from.processes.size());
  for (uint32_t i = 0; i < proc.size(); ++i) {
    const Process& p = from.processes[i];
    proc[i] = process(from.strings.view(p.pid_text), opt_number(p.pid_is_number, p.pid));
    Process& into = store_.processes[proc[i]];
    if (p.name) into.name = str[p.name];
    if (p.labels) into.labels = str[p.labels];
    if (p.has_sort_index) into.sort_index = p.sort_index, into.has_sort_index = true;
  }
  std::vector<uint32_t> track(from.tracks.size());
  for (const auto& [key, t] : later.async_index_)
    track[t] = async_track(proc[std::get<0>(key)], str[std::get<1>(key)], str[std::get<2>(key)]);
  for (uint32_t i = 0; i < track.size(); ++i) {
    const Track& t = from.tracks[i];
    if (t.kind == TrackKind::Async) continue;
    track[i] = thread_track(proc[t.process], from.strings.view(t.tid_text), opt_number(t.tid_is_number, t.tid));
    Track& into = store_.tracks[track[i]];
    if (t.kind == TrackKind::GpuStream) into.kind = t.kind, into.device = t.device, into.stream = t.stream;
    into.gpu_work |= t.gpu_work;
    if (t.name != t.tid_text) into.name = str[t.name];
    if (t.has_sort_index) into.sort_index = t.sort_index, into.has_sort_index = true;
  }
  uint32_t args_base = uint32_t(store_.args_.size());
  auto shifts = store_.args_blocks_->absorb(std::move(*from.args_blocks_));
  uint64_t offset_shift = shifts.first;
  uint32_t block_shift = shifts.second;
  auto args = [&](uint32_t a) { return a == kNone ? kNone : a + args_base; };
  for (auto& [row, text] : from.kept_args_) store_.kept_args_.emplace(args(row), std::move(text));
  uint64_t base = order_;
  // Two parts that share nothing they write, on two threads: the correlations and the tracks'
  // columns (which refer to them); the args table, the pending begin/end/async events and the
  // flow points. `later` is spent: each part is freed once copied, to keep the peak low.
  run_both(from.counts.slices + later.flow_points_.size(), [&] { absorb_columns(from, track, str, args_base); },
           [&] {
             store_.args_.reserve(store_.args_.size() + from.args_.size());
             for (ArgsRange a : from.args_) {
               a.offset += offset_shift;
               a.block += block_shift;
               store_.args_.push_back(a);
             }
             from.args_ = {};
             for (auto& [t, list] : later.begins_)
               for (PendingBegin b : list) {
                 b.order += base, b.name = str[b.name], b.cat = str[b.cat], b.args = args(b.args);
                 begins_[track[t]].push_back(b);
               }
             for (auto& [t, list] : later.ends_)
               for (PendingEnd e : list) ends_[track[t]].push_back({e.ts, e.order + base, e.offset});
             for (PendingAsync a : later.async_) {
               a.order += base, a.name = str[a.name], a.cat = str[a.cat], a.args = args(a.args);
               if (a.track != kNone) a.track = track[a.track];
               async_.push_back(a);
             }
             flow_points_.reserve(flow_points_.size() + later.flow_points_.size());
             for (FlowPoint f : later.flow_points_) {
               f.order += base, f.track = track[f.track], f.cat = str[f.cat];
               flow_points_.push_back(f);
             }
             later.flow_points_ = {};
           });
  for (const CounterSeries& series : from.counters)
    for (size_t r = 0; r < series.ts.size(); ++r)
      add_counter(proc[series.process], from.strings.view(series.name), series.ts[r], series.value[r]);
  order_ += later.order_;
  if (later.launch_flow_cat_) launch_flow_cat_ = str[*later.launch_flow_cat_];
  min_ts_ = std::min(min_ts_, later.min_ts_);
  max_ts_ = std::max(max_ts_, later.max_ts_);
  // append_slice and add_counter counted the absorbed slices again; the events were counted once.
  uint64_t slices = store_.counts.slices;
  store_.counts.events += from.counts.events;
  store_.counts.instants += from.counts.instants;
  store_.counts.counters += from.counts.counters;
  store_.counts.flows += from.counts.flows;
  store_.counts.metadata += from.counts.metadata;
  store_.counts.skipped += from.counts.skipped;
  store_.counts.slices = slices;
  store_.issues.merge(from.issues);
}

void TraceBuilder::finish() {
  PhaseTimer timer("finish");
  match_begin_end();
  match_async();
  rebase();
  timer.mark("match+rebase");
  // The flow points' order by key needs nothing else: it is sorted on a second core while the
  // store is sorted, nested and indexed and the points bound to their slices.
  std::vector<uint32_t> by_key;
  run_both(
      store_.counts.slices + flow_points_.size(),
      [&] {
        store_.finalize(launch_flow_cat_);
        bind_targets();
      },
      [&] { by_key = flow_points_by_key(); });
  timer.mark("finalize+targets|keys");
  size_t launch_flows = store_.flows.size();  // made and indexed by finalize (flows_from_launches)
  bind_flows(by_key);
  timer.mark("bind_flows");
  if (store_.flows.size() > launch_flows) store_.finalize_flows();
  timer.mark("finalize_flows");
}

}  // namespace sl
