#include "core/present/rank_bands.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

namespace sl::present {

TimeNs BandPyramid::edge(size_t k) const {
  if (k >= finest) return span;
  if (k < edges.size()) return edges[k];
  return TimeNs(((__int128)span * (__int128)k + (__int128)finest - 1) / (__int128)finest);
}

namespace {

constexpr int kCauses = analysis::kIdleCauseCount;
constexpr uint32_t kWeightOne = 16384;  // a whole column's weight in levels()' integers (an int16 for SSE)

// What every worker reads: the finest edges, each level's bin widths.
struct Grid {
  const BandPyramid& p;
  std::vector<TimeNs> edges;                // finest + 1
  std::vector<std::vector<TimeNs>> widths;  // per level, per bin
  std::vector<std::vector<double>> scale;   // per level, per bin: 255 / width
  explicit Grid(const BandPyramid& pyramid) : p(pyramid), edges(pyramid.finest + 1) {
    for (size_t k = 0; k <= p.finest; ++k) edges[k] = p.edge(k);
    for (const BandLevel& l : p.levels) {
      std::vector<TimeNs> w(l.bins);
      for (size_t k = 0; k < l.bins; ++k)
        w[k] = edges[std::min(p.finest, (k + 1) * l.finest_per_bin)] - edges[k * l.finest_per_bin];
      std::vector<double> s(l.bins);
      for (size_t k = 0; k < l.bins; ++k) s[k] = 255.0 / double(w[k]);
      widths.push_back(std::move(w)), scale.push_back(std::move(s));
    }
  }
  size_t bin_of(TimeNs t) const { return size_t((__int128)t * (__int128)p.finest / (__int128)p.span); }
  // Calls f(bin, overlap) for every finest bin [a, b) (job clock, clipped to the grid) covers.
  template <class F>
  void overlaps(TimeNs a, TimeNs b, F&& f) const {
    a = std::max<TimeNs>(a, 0), b = std::min<TimeNs>(b, p.span);
    if (a >= b) return;
    for (size_t k = bin_of(a), last = bin_of(b - 1); k <= last; ++k) f(k, std::min(b, edges[k + 1]) - std::max(a, edges[k]));
  }
};

// One worker's scratch: the member being binned (stamped, so nothing is cleared per member) and
// the band's histograms per level.
struct Worker {
  const Grid& g;
  uint32_t stamp = 0;
  std::vector<uint32_t> busy_stamp, cause_stamp;
  std::vector<TimeNs> busy_ns, cause_ns;
  std::vector<int8_t> cause;
  std::vector<TimeNs> level_ns, next_ns;
  // Per level: [bucket * bins + k] count and sum of the members' busy (0..255) in that bucket.
  std::vector<std::vector<uint32_t>> count, sum;
  std::vector<std::vector<uint8_t>> worst;
  std::vector<std::vector<uint32_t>> votes;  // per level: [cause * bins + k]

  explicit Worker(const Grid& grid) : g(grid) {
    size_t n = g.p.finest;
    busy_stamp.assign(n, 0), cause_stamp.assign(n, 0);
    busy_ns.resize(n), cause_ns.resize(n), cause.resize(n);
    for (const BandLevel& l : g.p.levels) {
      count.emplace_back(l.bins * kBandBusyBuckets), sum.emplace_back(l.bins * kBandBusyBuckets);
      worst.emplace_back(l.bins), votes.emplace_back(l.bins * kCauses);
    }
  }

  void add_level(size_t level, const std::vector<TimeNs>& ns) {
    const double* scale = g.scale[level].data();
    size_t bins = g.scale[level].size();
    uint32_t* c = count[level].data();
    uint32_t* s = sum[level].data();
    uint8_t* w = worst[level].data();
    for (size_t k = 0; k < bins; ++k) {
      uint32_t v = std::min(255u, uint32_t(double(ns[k]) * scale[k] + 0.5));
      size_t bucket = std::min<size_t>(kBandBusyBuckets - 1, v * kBandBusyBuckets / 255);
      ++c[bucket * bins + k], s[bucket * bins + k] += v;
      w[k] = std::min<uint8_t>(w[k], uint8_t(v));
    }
  }

  void add_member(const analysis::RankActivity& r) {
    ++stamp;
    size_t n = g.p.finest;
    for (const analysis::Interval& iv : r.summary->busy.merged())
      g.overlaps(iv.start + r.shift, iv.end + r.shift, [&](size_t k, TimeNs ov) {
        if (busy_stamp[k] != stamp) busy_stamp[k] = stamp, busy_ns[k] = 0;
        busy_ns[k] += ov;
      });
    // The cause with the most idle time per bin (the first such, as bin_rank picks it).
    for (int c = 0; c < kCauses && r.idle; ++c) {
      size_t at = SIZE_MAX;
      TimeNs run = 0;
      auto flush = [&] {
        if (at == SIZE_MAX) return;
        if (cause_stamp[at] != stamp || run > cause_ns[at]) cause_stamp[at] = stamp, cause_ns[at] = run, cause[at] = int8_t(c);
      };
      for (const analysis::Interval& iv : (*r.idle)[size_t(c)].merged())
        g.overlaps(iv.start + r.shift, iv.end + r.shift, [&](size_t k, TimeNs ov) {
          if (k != at) flush(), at = k, run = 0;
          run += ov;
        });
      flush();
    }
    level_ns.resize(n);
    uint32_t* v = votes[0].data();
    for (size_t k = 0; k < n; ++k) {
      level_ns[k] = busy_stamp[k] == stamp ? busy_ns[k] : 0;
      if (cause_stamp[k] == stamp) ++v[size_t(cause[k]) * n + k];
    }
    add_level(0, level_ns);
    for (size_t l = 1; l < g.widths.size(); ++l) {
      next_ns.assign(g.widths[l].size(), 0);
      for (size_t k = 0; k < level_ns.size(); ++k) next_ns[k / 4] += level_ns[k];
      std::swap(level_ns, next_ns);
      add_level(l, level_ns);
    }
  }

  void build_band(size_t band, const std::vector<const analysis::RankActivity*>& members, BandPyramid& out,
                  const std::atomic<bool>* cancel) {
    for (size_t l = 0; l < count.size(); ++l) {
      std::fill(count[l].begin(), count[l].end(), 0u), std::fill(sum[l].begin(), sum[l].end(), 0u);
      std::fill(worst[l].begin(), worst[l].end(), uint8_t(255)), std::fill(votes[l].begin(), votes[l].end(), 0u);
    }
    uint32_t m = 0;
    for (const analysis::RankActivity* r : members) {
      if (cancel && cancel->load(std::memory_order_relaxed)) return;
      if (r && r->summary) add_member(*r), ++m;
    }
    out.members[band] = m;
    for (size_t l = 0; l < count.size(); ++l) {
      BandLevel& level = out.levels[l];
      size_t bins = level.bins;
      if (l > 0)  // a coarser bin's votes: its four finer bins' summed
        for (int c = 0; c < kCauses; ++c)
          for (size_t k = 0; k < out.levels[l - 1].bins; ++k) votes[l][size_t(c) * bins + k / 4] += votes[l - 1][size_t(c) * out.levels[l - 1].bins + k];
      for (size_t k = 0; k < bins; ++k) {
        size_t at = band * bins + k;
        if (m == 0) {
          level.median[at] = 0, level.worst[at] = 0, level.cause[at] = -1;
          continue;
        }
        // The lower median's bucket, and the mean of the members in it.
        uint32_t seen = 0, target = (m + 1) / 2;
        size_t b = 0;
        while ((seen += count[l][b * bins + k]) < target) ++b;
        uint32_t in = count[l][b * bins + k];
        level.median[at] = uint8_t((sum[l][b * bins + k] + in / 2) / in);
        level.worst[at] = worst[l][k];
        uint32_t best = 0;
        int8_t best_cause = -1;
        for (int c = 0; c < kCauses; ++c)
          if (votes[l][size_t(c) * bins + k] > best) best = votes[l][size_t(c) * bins + k], best_cause = int8_t(c);
        level.cause[at] = best_cause;
      }
    }
  }
};

}  // namespace

BandPyramid build_band_pyramid(const std::vector<std::vector<const analysis::RankActivity*>>& bands, TimeNs span,
                               unsigned threads, const std::atomic<bool>* cancel, size_t finest_bins) {
  BandPyramid p;
  p.span = std::max<TimeNs>(span, 1);
  p.finest = size_t(std::min<TimeNs>(TimeNs(std::max<size_t>(finest_bins, 1)), p.span));
  p.bands = bands.size();
  p.members.assign(bands.size(), 0);
  for (uint32_t per = 1;; per *= 4) {
    BandLevel l;
    l.finest_per_bin = per;
    l.bins = (p.finest + per - 1) / per;
    // 8 bytes past the last band's bins: BandColumns reads a column's bins 8 at a time.
    l.median.resize(l.bins * p.bands + 8), l.worst.resize(l.bins * p.bands + 8), l.cause.resize(l.bins * p.bands + 8);
    p.levels.push_back(std::move(l));
    if (p.levels.back().bins == 1) break;
  }
  if (bands.empty()) return p;
  Grid grid(p);
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = unsigned(std::min<size_t>(threads, bands.size()));
  std::atomic<size_t> next{0};
  auto work = [&] {
    Worker w(grid);
    for (size_t b; (b = next.fetch_add(1)) < bands.size();) {
      if (cancel && cancel->load(std::memory_order_relaxed)) return;
      w.build_band(b, bands[b], p, cancel);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  p.edges = std::move(grid.edges);  // a frame's columns look them up, not divide 128-bit
  return p;
}

// The level whose bins are the widest still no wider than a column (the finest when columns are
// narrower than it), and each column's share of each bin it overlaps.
void BandColumns::set_window(double t0, double t1, int columns) {
  t0_ = t0, t1_ = t1, columns_ = columns;
  ++version_;
  const BandPyramid& p = *pyramid_;
  size_t n = size_t(std::max(columns, 0));
  first_.assign(n + 1, 0);
  pieces_.clear();
  stride_ = 0, padded_first_.clear(), padded_weight16_.clear();
  weights8_.clear();
  if (n == 0 || t1 <= t0 || p.levels.empty()) return;
  double column = (t1 - t0) / double(n), finest = double(p.span) / double(p.finest);
  level_ = 0;
  while (level_ + 1 < p.levels.size() && finest * double(p.levels[level_ + 1].finest_per_bin) <= column) ++level_;
  const BandLevel& l = p.levels[level_];
  auto edge = [&](size_t k) { return double(p.edge(std::min(p.finest, k * l.finest_per_bin))); };
  for (size_t c = 0; c < n; ++c) {
    first_[c] = uint32_t(pieces_.size());
    double a = std::max(0.0, t0 + column * double(c)), b = std::min(double(p.span), t0 + column * double(c + 1));
    if (a < b) {
      auto k = size_t(std::min(double(p.finest - 1), a * double(p.finest) / double(p.span))) / l.finest_per_bin;
      while (k > 0 && edge(k) > a) --k;  // rounding: the bin that holds `a`
      for (; k < l.bins && edge(k) < b; ++k) {
        double overlap = std::min(b, edge(k + 1)) - std::max(a, edge(k));
        if (overlap > 0) pieces_.push_back({uint32_t(k), float(overlap / column)});
      }
    }
  }
  first_[n] = uint32_t(pieces_.size());
  // A column's pieces are consecutive bins; a column near the end starts earlier, its own
  // weights then later in its stride (so no column reads past the band's bins).
  stride_ = 0;
  for (size_t c = 0; c < n; ++c)
    if (first_[c] < first_[c + 1]) stride_ = std::max<size_t>(stride_, pieces_[first_[c + 1] - 1].bin - pieces_[first_[c]].bin + 1);
  padded_first_.assign(n, 0), padded_weight16_.assign(n * stride_, 0);
  for (size_t c = 0; c < n; ++c) {
    if (first_[c] == first_[c + 1]) continue;
    size_t k0 = pieces_[first_[c]].bin, start = std::min(k0, l.bins - stride_);
    padded_first_[c] = uint32_t(start);
    for (uint32_t i = first_[c]; i < first_[c + 1]; ++i) {
      size_t at = c * stride_ + (pieces_[i].bin - start);
      padded_weight16_[at] = uint16_t(std::lround(std::min(1.f, pieces_[i].weight) * float(kWeightOne)));
    }
  }
  // Eight weights per column (levels_sse reads its bins 8 at a time; the pyramid has the slack).
  if (stride_ <= 8) {
    weights8_.assign(n * 8, 0);
    for (size_t c = 0; c < n; ++c)
      for (size_t i = 0; i < stride_; ++i) weights8_[c * 8 + i] = int16_t(padded_weight16_[c * stride_ + i]);
  }
}

const BandRow& BandColumns::row(size_t band, double t0, double t1, int columns) {
  if (t0 != t0_ || t1 != t1_ || columns != columns_) set_window(t0, t1, columns);
  const BandPyramid& p = *pyramid_;
  if (rows_.size() != p.bands) rows_.resize(p.bands), row_version_.assign(p.bands, 0);
  BandRow& out = rows_[std::min(band, rows_.size() - 1)];
  if (band >= p.bands || row_version_[band] == version_ + 1) return out;
  row_version_[band] = version_ + 1;
  ++rows_computed_;
  size_t n = first_.empty() ? 0 : first_.size() - 1;
  out.median.busy.assign(n, 0.f), out.median.cause.assign(n, -1), out.worst.busy.assign(n, 0.f), out.worst.cause.assign(n, -1);
  if (p.levels.empty()) return out;
  const BandLevel& l = p.levels[level_];
  const uint8_t* median = l.median.data() + band * l.bins;
  const uint8_t* worst = l.worst.data() + band * l.bins;
  const int8_t* cause = l.cause.data() + band * l.bins;
  for (size_t c = 0; c < n; ++c) {
    float m = 0, w = 0, most = 0;
    int8_t most_cause = -1;  // the cause of the bin with the largest share of the column
    for (uint32_t i = first_[c]; i < first_[c + 1]; ++i) {
      const Piece& piece = pieces_[i];
      m += piece.weight * float(median[piece.bin]), w += piece.weight * float(worst[piece.bin]);
      if (cause[piece.bin] >= 0 && piece.weight > most) most = piece.weight, most_cause = cause[piece.bin];
    }
    out.median.busy[c] = std::min(1.f, m / 255.f), out.worst.busy[c] = std::min(1.f, w / 255.f);
    out.median.cause[c] = most_cause;
  }
  return out;
}

// Column c's levels from its weighted sums (in 1/(255 · kWeightOne)ths), rounded halves up; the
// worst only where below the median.
inline void store_levels(BandLevels& out, size_t c, uint32_t m, uint32_t w, int8_t cause, int levels) {
  const uint64_t whole = 255 * uint64_t(kWeightOne), twice = 2 * uint64_t(levels), top = uint64_t(levels);
  auto lm = uint8_t(std::min(top, (twice * m + whole) / (2 * whole)));
  auto lw = uint8_t(std::min(top, (twice * w + whole) / (2 * whole)));
  out.median[c] = lm, out.worst[c] = lw < lm ? lw : 0, out.cause[c] = cause;
}

// levels() per column in integers (branch-free: the columns' busy is random-looking at a wide
// zoom): the weighted median and worst in 1/(255 · 16384)ths, rounded to `levels` halves up, and
// the cause of the largest piece that has one (the first such).
template <size_t Stride>
void BandColumns::levels_fixed(size_t band, size_t stride, int levels, BandLevels& out) const {
  const BandLevel& l = pyramid_->levels[level_];
  const uint8_t* median = l.median.data() + band * l.bins;
  const uint8_t* worst = l.worst.data() + band * l.bins;
  const int8_t* cause = l.cause.data() + band * l.bins;
  const size_t n = padded_first_.size(), s = Stride ? Stride : stride;
  const uint32_t* first = padded_first_.data();
  const uint16_t* weights = padded_weight16_.data();
  for (size_t c = 0; c < n; ++c, weights += s) {
    const size_t k = first[c];
    uint32_t m = 0, w = 0, most = 0;
    int most_cause = -1;
    for (size_t i = 0; i < s; ++i) {
      uint32_t weight = weights[i];
      m += weight * median[k + i], w += weight * worst[k + i];
      int c8 = cause[k + i];
      uint32_t key = weight & (0u - uint32_t(c8 >= 0));
      bool better = key > most;
      most = better ? key : most, most_cause = better ? c8 : most_cause;
    }
    store_levels(out, c, m, w, int8_t(most_cause), levels);
  }
}

#if defined(__SSE4_1__)
// levels_fixed's integers with a column's (at most 8) consecutive bins in one register each: its
// median and worst as two multiply-adds by the weights, the cause of its first largest piece
// that has one by a min-position search; the rounding to levels as there (the same levels).
void BandColumns::levels_sse(size_t band, int levels, BandLevels& out) const {
  const BandLevel& l = pyramid_->levels[level_];
  const uint8_t* median = l.median.data() + band * l.bins;
  const uint8_t* worst = l.worst.data() + band * l.bins;
  const int8_t* cause = l.cause.data() + band * l.bins;
  const size_t n = padded_first_.size();
  const __m128i none = _mm_set1_epi16(-1), ones = _mm_set1_epi16(-1);
  const int16_t* weights = weights8_.data();
  for (size_t c = 0; c < n; ++c, weights += 8) {
    const size_t k = padded_first_[c];
    uint64_t m8, w8, c8;
    std::memcpy(&m8, median + k, 8), std::memcpy(&w8, worst + k, 8), std::memcpy(&c8, cause + k, 8);
    __m128i weight = _mm_loadu_si128(reinterpret_cast<const __m128i*>(weights));
    __m128i sm = _mm_madd_epi16(weight, _mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(m8))));
    __m128i sw = _mm_madd_epi16(weight, _mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(w8))));
    __m128i sums = _mm_hadd_epi32(sm, sw);
    sums = _mm_hadd_epi32(sums, sums);  // median, worst, median, worst
    auto m = uint32_t(_mm_cvtsi128_si32(sums)), w = uint32_t(_mm_extract_epi32(sums, 1));
    __m128i valid = _mm_cmpgt_epi16(_mm_cvtepi8_epi16(_mm_cvtsi64_si128(int64_t(c8))), none);
    __m128i key = _mm_and_si128(weight, valid);
    // minpos finds the least value, the first such: of the complement, the first largest key.
    auto found = uint32_t(_mm_cvtsi128_si32(_mm_minpos_epu16(_mm_xor_si128(key, ones))));
    bool any = (found & 0xFFFF) != 0xFFFF;
    auto most_cause = any ? int8_t(uint8_t(c8 >> (8 * ((found >> 16) & 7)))) : int8_t(-1);
    store_levels(out, c, m, w, most_cause, levels);
  }
}
#endif

const BandLevels& BandColumns::levels(size_t band, double t0, double t1, int columns, int levels) {
  if (t0 != t0_ || t1 != t1_ || columns != columns_) set_window(t0, t1, columns);
  const BandPyramid& p = *pyramid_;
  if (levels_.size() != p.bands) levels_.resize(p.bands), levels_version_.assign(p.bands, 0), levels_of_.assign(p.bands, 0);
  BandLevels& out = levels_[std::min(band, levels_.size() - 1)];
  if (band >= p.bands || (levels_version_[band] == version_ + 1 && levels_of_[band] == levels)) return out;
  levels_version_[band] = version_ + 1, levels_of_[band] = levels;
  ++rows_computed_;
  size_t n = first_.empty() ? 0 : first_.size() - 1;
  out.median.assign(n, 0), out.worst.assign(n, 0), out.cause.assign(n, -1);
  if (p.levels.empty() || padded_first_.empty()) return out;
#if defined(__SSE4_1__)
  if (stride_ <= 8) {
    levels_sse(band, levels, out);
    return out;
  }
#endif
  switch (stride_) {
    case 1: levels_fixed<1>(band, 1, levels, out); break;
    case 2: levels_fixed<2>(band, 2, levels, out); break;
    case 3: levels_fixed<3>(band, 3, levels, out); break;
    case 4: levels_fixed<4>(band, 4, levels, out); break;
    case 5: levels_fixed<5>(band, 5, levels, out); break;
    case 6: levels_fixed<6>(band, 6, levels, out); break;
    default: levels_fixed<0>(band, stride_, levels, out); break;
  }
  return out;
}

}  // namespace sl::present
