#include "core/analysis/idle_host.h"

#include <algorithm>
#include <numeric>

namespace sl::analysis::detail {

namespace {

}  // namespace

// §2b rule 2: calls that block the host until the GPU catches up, and ops that wait for it.
bool is_blocking_call(std::string_view n) {
  static constexpr std::string_view names[] = {
      "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpy2D",
      "cudaMemset", "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize", "hipDeviceSynchronize",
      "hipStreamSynchronize", "hipEventSynchronize", "hipMemcpy", "hipMemcpyWithStream", "hipMemcpy2D",
      "hipMemset", "aten::item", "aten::_local_scalar_dense", "aten::nonzero"};
  for (auto x : names)
    if (n == x) return true;
  return n.starts_with("cuMemcpyDtoH") || n.starts_with("hipMemcpyDtoH") || n.starts_with("cuMemcpyHtoD") ||
         n == "cuMemcpy";
}

namespace {

// `.cpu()` and friends: blocking when they enclose a blocking call (marked through the nesting).
bool is_copy_op(std::string_view n) { return n == "aten::to" || n == "aten::_to_copy" || n == "aten::copy_"; }

bool is_stream_wait(std::string_view n) {
  return n == "cudaStreamWaitEvent" || n == "hipStreamWaitEvent" || n == "cuStreamWaitEvent" ||
         n == "Stream Wait Event";
}

bool is_capture_begin(std::string_view n) {
  return n == "cudaStreamBeginCapture" || n == "hipStreamBeginCapture" || n.starts_with("cuStreamBeginCapture");
}
bool is_capture_end(std::string_view n) {
  return n == "cudaStreamEndCapture" || n == "hipStreamEndCapture" || n.starts_with("cuStreamEndCapture");
}

// §2b rule 3 besides capture itself: graph instantiation, and compile, autotune and warm-up
// frames. Only frames that exist to compile or tune match: `torch/_dynamo/eval_frame.py: _fn`
// and `Torch-Compiled Region` run compiled code in the steady state too, so they do not.
bool is_warmup_region(std::string_view n) {
  if (n.starts_with("cudaGraphInstantiate") || n.starts_with("hipGraphInstantiate") ||
      n.starts_with("cuGraphInstantiate"))
    return true;
  static constexpr std::string_view parts[] = {"torch/_dynamo/convert_frame.py", "torch/_inductor/compile_fx.py",
                                               "torch/_inductor/select_algorithm.py", "autotune", "do_bench",
                                               "benchmark", "warmup", "warm_up"};
  for (auto p : parts)
    if (contains_icase(n, p)) return true;
  return false;
}

// A launch call: linked to GPU activity, or named like one (a launch inside a capture has none).
bool is_launch_call(std::string_view n) {
  return n.find("LaunchKernel") != std::string_view::npos || n.find("GraphLaunch") != std::string_view::npos ||
         n.starts_with("cuLaunch") || n.find("MemcpyAsync") != std::string_view::npos ||
         n.find("MemsetAsync") != std::string_view::npos || n.starts_with("runFunction");
}

// Labels, not work: user annotations (ProfilerStep#N, `## forward ##`) and the profiler's spans.
bool is_label(std::string_view cat) { return cat == "Trace" || contains_icase(cat, "annotation"); }

enum : uint16_t {
  kKnown = 1, kLoader = 2, kBlocking = 4, kStreamWait = 8, kCopyOp = 16, kCaptureBegin = 32, kCaptureEnd = 64,
  kWarmup = 128, kLaunch = 256
};

}  // namespace

HostIndex::HostIndex(const EventTable& t, const IdleCauseOptions& o, const std::vector<uint32_t>& threads) : t_(t) {
  const TraceStore& s = *t.store;
  auto matches_loader = [&](std::string_view n) {
    for (const auto& p : o.data_loader_patterns)
      if (n.find(p) != std::string_view::npos) return true;
    return false;
  };
  // Names and categories repeat: each distinct one is classified once.
  std::vector<uint16_t> name_flags(s.strings.size(), 0);
  auto flags = [&](StringId id) {
    uint16_t& f = name_flags[id];
    if (!f) {
      std::string_view n = s.strings.view(id);
      f = uint16_t(kKnown | (matches_loader(n) ? kLoader : 0) | (is_blocking_call(n) ? kBlocking : 0) |
                   (is_stream_wait(n) ? kStreamWait : 0) | (is_copy_op(n) ? kCopyOp : 0) |
                   (is_capture_begin(n) ? kCaptureBegin : 0) | (is_capture_end(n) ? kCaptureEnd : 0) |
                   (is_warmup_region(n) ? kWarmup : 0) | (is_launch_call(n) ? kLaunch : 0));
    }
    return f;
  };
  std::vector<int8_t> cat_kind(s.strings.size(), -1);  // 0 label, 1 Python frame, 2 op or call
  auto kind_of_cat = [&](StringId id) {
    int8_t& k = cat_kind[id];
    if (k < 0) {
      std::string_view c = s.strings.view(id);
      k = is_label(c) ? 0 : contains_icase(c, "python") ? 1 : 2;
    }
    return k;
  };
  std::vector<int32_t> slot(s.tracks.size(), -1);  // track -> indexed thread
  std::vector<std::vector<uint32_t>> rows_of;
  std::vector<std::vector<Interval>> ops;
  for (uint32_t track : threads)
    if (track != kNone && slot[track] < 0) slot[track] = int32_t(rows_of.size()), rows_of.emplace_back(), ops.emplace_back();
  std::unordered_map<uint32_t, std::vector<Interval>> loading;
  for (uint32_t i : t.cpu) {
    const Row& r = t.rows[i];
    const uint16_t f = flags(r.name);
    if (f & kLoader) loading[s.tracks[r.ref.track].process].push_back({r.ts, r.end()});
    if (f & kStreamWait) stream_waits_by_track_[r.ref.track].push_back(r.ts);
    const int32_t k = slot[r.ref.track];
    if (k < 0) continue;
    const int8_t kind = kind_of_cat(r.cat);
    if (kind == 0) continue;
    rows_of[size_t(k)].push_back(i);
    if (kind == 2) ops[size_t(k)].push_back({r.ts, r.end()});
  }
  // Launch calls of linked GPU work, and async copies to pageable memory (they block the host).
  // A linked launch among the thread's rows is taken in their walk below (in start order, so the
  // thread's launches need no sort); only those outside them (a label's) are kept here.
  std::vector<std::vector<TimeNs>> launches(rows_of.size());
  std::vector<std::vector<Interval>> pageable(rows_of.size());
  std::vector<int8_t> pageable_name(s.strings.size(), -1), dtoh_name(s.strings.size(), -1);
  std::vector<char> dtoh_launch(t.rows.size(), 0);  // CPU rows that launched a device-to-host copy
  std::vector<char> linked_launch(t.rows.size(), 0);  // CPU rows that launched GPU work
  // GPU rows need only the stream-wait test: their names (kernels' run to kilobytes) are not
  // put through the CPU tests.
  std::vector<int8_t> gpu_wait_name(s.strings.size(), -1);
  for (uint32_t i : t.gpu) {
    const Row& g = t.rows[i];
    int8_t& wait = gpu_wait_name[g.name];
    if (wait < 0) wait = is_stream_wait(t.name(g));
    if (wait) gpu_stream_waits_[g.stream].push_back(g.ts);
    if (g.launch < 0) continue;
    const Row& l = t.rows[size_t(g.launch)];
    const int32_t k = slot[l.ref.track];
    if (k < 0) continue;
    if (l.stream != -1 || kind_of_cat(l.cat) == 0) launches[size_t(k)].push_back(l.ts);
    int8_t& p = pageable_name[g.name];
    if (p < 0) {
      std::string_view n = t.name(g);
      p = n.find("DtoH") != std::string_view::npos && n.find("Pageable") != std::string_view::npos;
    }
    if (p) pageable[size_t(k)].push_back({l.ts, l.end()});
    int8_t& d = dtoh_name[g.name];
    if (d < 0) d = t.name(g).find("DtoH") != std::string_view::npos;
    if (d) dtoh_launch[size_t(g.launch)] = 1;
    linked_launch[size_t(g.launch)] = 1;
  }
  for (uint32_t track : threads) {
    if (track == kNone || threads_.count(track)) continue;
    const size_t k0 = size_t(slot[track]);
    std::vector<uint32_t>& rows = rows_of[k0];
    auto before = [&](uint32_t a, uint32_t b) {
      const Row &x = t.rows[a], &y = t.rows[b];
      return x.ts != y.ts ? x.ts < y.ts : x.dur != y.dur ? x.dur > y.dur : a < b;  // parents first
    };
    if (!std::is_sorted(rows.begin(), rows.end(), before)) std::sort(rows.begin(), rows.end(), before);  // the store's order already is
    ThreadWork w;
    std::vector<Interval> blocking = std::move(pageable[k0]), capture;
    std::vector<int32_t> stack;
    TimeNs capture_from = -1;
    // `.cpu()` and friends (§2b rule 2): a copy op waits for the GPU when it encloses both a
    // blocking call and a device-to-host copy's launch. Bit 1: blocking inside, bit 2: DtoH inside.
    std::vector<uint8_t> copy_marks(rows.size(), 0);
    for (uint32_t k = 0; k < rows.size(); ++k) {
      const Row& r = t.rows[rows[k]];
      while (!stack.empty() && w.end[size_t(stack.back())] <= r.ts) stack.pop_back();
      w.ts.push_back(r.ts), w.end.push_back(r.end()), w.name.push_back(r.name);
      w.parent.push_back(stack.empty() ? -1 : stack.back());
      stack.push_back(int32_t(k));
      const uint16_t f = flags(r.name);
      w.launch_call.push_back((f & kLaunch) || linked_launch[rows[k]]);
      if (w.launch_call.back()) w.launches.push_back(r.ts);
      if (f & kWarmup) capture.push_back({r.ts, r.end()});
      if (f & kCaptureBegin) capture_from = r.ts;
      if ((f & kCaptureEnd) && capture_from >= 0) capture.push_back({capture_from, r.end()}), capture_from = -1;
      if (f & kBlocking) blocking.push_back({r.ts, r.end()});
      const uint8_t mark = uint8_t(((f & kBlocking) ? 1 : 0) | (dtoh_launch[rows[k]] ? 2 : 0));
      if (mark)
        for (int32_t p = w.parent.back(); p >= 0; p = w.parent[size_t(p)])
          if (flags(w.name[size_t(p)]) & kCopyOp) copy_marks[size_t(p)] |= mark;
    }
    for (size_t k = 0; k < rows.size(); ++k)
      if (copy_marks[k] == 3) blocking.push_back({w.ts[k], w.end[k]});
    if (capture_from >= 0 && !w.end.empty())  // a capture the trace cut off runs to the thread's end
      capture.push_back({capture_from, *std::max_element(w.end.begin(), w.end.end())});
    if (std::vector<TimeNs>& outside = launches[k0]; !outside.empty()) {  // rare: merged in
      std::sort(outside.begin(), outside.end());
      std::vector<TimeNs> all(w.launches.size() + outside.size());
      std::merge(w.launches.begin(), w.launches.end(), outside.begin(), outside.end(), all.begin());
      w.launches = std::move(all);
    }
    if (!std::is_sorted(w.launches.begin(), w.launches.end())) std::sort(w.launches.begin(), w.launches.end());
    w.blocking = IntervalIndex(std::move(blocking));
    w.capture = IntervalIndex(std::move(capture));
    work_by_track_.emplace(track, IntervalIndex(std::move(ops[size_t(slot[track])])));
    threads_.emplace(track, std::move(w));
  }
  for (auto& [p, v] : loading) data_loading_by_process_.emplace(p, IntervalIndex(std::move(v)));
  for (auto& [k, v] : stream_waits_by_track_) std::sort(v.begin(), v.end());
  for (auto& [k, v] : gpu_stream_waits_) std::sort(v.begin(), v.end());
}

HostWindow HostIndex::window(uint32_t thread, TimeNs start, TimeNs end, bool top) const {
  HostWindow h = intervals(thread, start, end);
  if (auto it = threads_.find(thread); it != threads_.end() && end > start) measure_events(it->second, start, end, top, h);
  return h;
}

HostWindow HostIndex::intervals(uint32_t thread, TimeNs start, TimeNs end) const {
  HostWindow h;
  h.length = end - start;
  if (thread == kNone || end <= start) return h;
  auto dl = data_loading_by_process_.find(t_.store->tracks[thread].process);
  if (dl != data_loading_by_process_.end()) h.data_loading = dl->second.covered(start, end);
  auto it = threads_.find(thread);
  if (it == threads_.end()) return h;
  h.blocking = it->second.blocking.covered(start, end);
  h.capture = it->second.capture.covered(start, end);
  return h;
}

void HostIndex::add_events(uint32_t thread, TimeNs start, TimeNs end, bool compute, HostWindow& h) const {
  auto it = threads_.find(thread);
  if (thread == kNone || end <= start || it == threads_.end()) return;
  if (compute) return measure_events(it->second, start, end, false, h);
  h.any_event = any_event(it->second, start, end);
}

// measure_events' any_event alone: an event open at `a` (an ancestor of the last one starting
// before it, or that one) or one starting in [a, b) that lasts.
bool HostIndex::any_event(const ThreadWork& w, TimeNs a, TimeNs b) {
  const size_t lo = size_t(std::lower_bound(w.ts.begin(), w.ts.end(), a) - w.ts.begin());
  if (lo > 0)
    for (int32_t p = int32_t(lo - 1); p >= 0; p = w.parent[size_t(p)])
      if (w.end[size_t(p)] > a) return true;
  for (size_t k = lo; k < w.ts.size() && w.ts[k] < b; ++k)
    if (w.end[k] > w.ts[k]) return true;
  return false;
}

// Rule 4's measure and the window's top events. An event "issued a launch inside W" when a launch
// call starts inside it and inside W, W's end included (the launch that ends the gap belongs to
// the op dispatching it). Host compute is the time of W inside events that issued none: the
// innermost event at each instant decides, and an event that launched nothing has no child that
// did.
void HostIndex::measure_events(const ThreadWork& w, TimeNs a, TimeNs b, bool top, HostWindow& h) const {
  const size_t lo = size_t(std::lower_bound(w.ts.begin(), w.ts.end(), a) - w.ts.begin());
  const size_t hi = size_t(std::lower_bound(w.ts.begin(), w.ts.end(), b) - w.ts.begin());
  // Overlapping W: the events open at `a`, then those starting in W. The columns are scratch kept
  // between calls (a rank has thousands of gaps).
  std::vector<uint32_t>& events = scratch_.events;
  events.clear();
  if (lo > 0)
    for (int32_t p = int32_t(lo - 1); p >= 0; p = w.parent[size_t(p)])
      if (w.end[size_t(p)] > a) events.push_back(uint32_t(p));
  std::reverse(events.begin(), events.end());
  const size_t open = events.size();
  for (size_t k = lo; k < hi; ++k) events.push_back(uint32_t(k));
  auto slot = [&](int32_t e) -> ptrdiff_t {  // the open events are a chain of a few ancestors
    if (e < 0) return -1;
    if (size_t(e) >= lo) return ptrdiff_t(open + (size_t(e) - lo));
    for (size_t s = 0; s < open; ++s)
      if (events[s] == uint32_t(e)) return ptrdiff_t(s);
    return -1;
  };
  std::vector<TimeNs>& self = scratch_.self;
  std::vector<uint8_t>& launched = scratch_.launched;
  std::vector<ptrdiff_t>& parent_slot = scratch_.parent_slot;
  self.assign(events.size(), 0);
  launched.assign(events.size(), 0);
  parent_slot.assign(events.size(), -1);
  auto l = std::lower_bound(w.launches.begin(), w.launches.end(), a);
  for (size_t s = 0; s < events.size(); ++s) {
    const uint32_t e = events[s];
    const TimeNs c0 = std::max(w.ts[e], a), c1 = std::min(w.end[e], b);
    if (c1 <= c0) continue;
    h.any_event = true;
    self[s] += c1 - c0;
    parent_slot[s] = slot(w.parent[e]);
    if (parent_slot[s] >= 0) self[size_t(parent_slot[s])] -= c1 - c0;
    // Inside a launch call the thread is dispatching, whenever the call began. (Clipped starts
    // only grow: the open events all start at `a`.)
    while (l != w.launches.end() && *l < c0) ++l;
    launched[s] = w.launch_call[e] || (l != w.launches.end() && *l <= std::min(w.end[e] - 1, b));
  }
  // An event around a dispatching one dispatches too: children come after their parents.
  for (size_t s = events.size(); s-- > 0;)
    if (launched[s] && parent_slot[s] >= 0) launched[size_t(parent_slot[s])] = 1;
  // Compute: the time inside events that did not dispatch, merged as they come by clipped start.
  TimeNs run_start = 0, run_end = INT64_MIN;
  for (size_t s = 0; s < events.size(); ++s) {
    if (launched[s]) continue;
    const uint32_t e = events[s];
    const TimeNs c0 = std::max(w.ts[e], a), c1 = std::min(w.end[e], b);
    if (c1 <= c0) continue;
    if (c0 > run_end) h.compute += std::max<TimeNs>(0, run_end - run_start), run_start = c0, run_end = c1;
    else run_end = std::max(run_end, c1);
  }
  h.compute += std::max<TimeNs>(0, run_end - run_start);
  if (!top) return;
  // Self time by name, summed in a scratch column over the string pool (W can hold thousands of
  // events of a few dozen names).
  std::vector<TimeNs>& by_name = self_by_name_;
  if (by_name.empty()) by_name.assign(t_.store->strings.size(), 0);
  std::vector<StringId> touched;
  for (size_t s = 0; s < events.size(); ++s) {
    if (self[s] <= 0) continue;
    const StringId n = w.name[events[s]];
    if (by_name[n] == 0) touched.push_back(n);
    by_name[n] += self[s];
  }
  for (StringId n : touched) h.top.push_back({n, by_name[n]}), by_name[n] = 0;
  const size_t keep = std::min<size_t>(3, h.top.size());
  std::partial_sort(h.top.begin(), h.top.begin() + ptrdiff_t(keep), h.top.end(),
                    [](const HostEvent& x, const HostEvent& y) { return x.self != y.self ? x.self > y.self : x.name < y.name; });
  h.top.resize(keep);
}

TimeNs HostIndex::worked(uint32_t thread, TimeNs start, TimeNs end) const {
  auto it = work_by_track_.find(thread);
  return it == work_by_track_.end() ? 0 : it->second.covered(start, end);
}

namespace {
bool any_in(const std::vector<TimeNs>& v, TimeNs lo, TimeNs hi) {  // some value in [lo, hi]
  auto it = std::lower_bound(v.begin(), v.end(), lo);
  return it != v.end() && *it <= hi;
}
}  // namespace

bool HostIndex::stream_wait_between(uint32_t thread, TimeNs lo, TimeNs hi) const {
  auto it = stream_waits_by_track_.find(thread);
  return it != stream_waits_by_track_.end() && any_in(it->second, lo, hi);
}

bool HostIndex::gpu_stream_wait_between(int64_t stream, TimeNs lo, TimeNs hi) const {
  auto it = gpu_stream_waits_.find(stream);
  return it != gpu_stream_waits_.end() && any_in(it->second, lo, hi);
}

}  // namespace sl::analysis::detail
