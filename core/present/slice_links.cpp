#include "core/present/slice_links.h"

#include <algorithm>
#include <tuple>

namespace sl::present {

void SliceLinks::update(const TraceStore& store, SliceRef selected, uint64_t version) {
  bool gpu = selected.valid() && store.is_gpu(selected);
  std::span<const SliceRef> activities = selected.valid() && !gpu ? store.activities_of(selected) : std::span<const SliceRef>{};
  Key key{&store, version, selected, store.flows.size(), activities.size()};
  if (key == key_) return;
  key_ = key;
  links_.clear();
  for (Listed& l : listed_) l.count = 0;
  if (!selected.valid()) return;
  auto add = [&](SliceRef from, SliceRef to, Kind kind) {
    Link& l = links_.emplace_back(Link{from, to, 0, kind});
    l.far_start = store.start(l.far());
  };
  if (gpu) {
    if (SliceRef launch = store.launch_of(selected); launch.valid()) add(launch, selected, Kind::LaunchedBy);
  }
  for (SliceRef a : activities) add(selected, a, Kind::Runs);
  for (uint32_t f : store.flows_to(selected)) add(store.flows[f].from, selected, Kind::FlowFrom);
  for (uint32_t f : store.flows_from(selected)) add(selected, store.flows[f].to, Kind::FlowTo);
  // Each pair once: a launch's flow to its kernel (Kineto's ac2g, Nsight's launch flows) is the
  // same arrow as the launch link, which names it better (kinds order launch links first).
  std::sort(links_.begin(), links_.end(), [](const Link& a, const Link& b) {
    return std::tie(a.far_start, a.from, a.to, a.kind) < std::tie(b.far_start, b.from, b.to, b.kind);
  });
  links_.erase(std::unique(links_.begin(), links_.end(),
                           [](const Link& a, const Link& b) { return a.from == b.from && a.to == b.to; }),
               links_.end());
  for (uint32_t i = 0; i < links_.size(); ++i) {
    Listed& l = listed_[size_t(links_[i].kind)];
    if (l.count < kListed) l.first[l.count] = i;
    ++l.count;
  }
}

std::pair<size_t, size_t> SliceLinks::around(TimeNs lo, TimeNs hi) const {
  auto begin = std::partition_point(links_.begin(), links_.end(), [&](const Link& l) { return l.far_start < lo; });
  auto end = std::partition_point(begin, links_.end(), [&](const Link& l) { return l.far_start <= hi; });
  size_t b = size_t(begin - links_.begin()), e = size_t(end - links_.begin());
  return {b > 0 ? b - 1 : b, e < links_.size() ? e + 1 : e};
}

}  // namespace sl::present
