// The rank overview's bands (issue 38, "The fleet in the GUI"): when ranks are too many for a row
// each (below ~3 px a row), consecutive ranks aggregate into one band row showing, per pixel
// column, the median and the worst (lowest) GPU busy of its members and the idle cause most of
// them show. GUI-free, so a frame's work is bounded by pixels and tested headless.
//
// `build_band_pyramid` bins every member rank ONCE onto one grid of the job clock (about
// span/65,536 a bin, then levels of a quarter as many bins each, as a rank summary's pyramid) and
// keeps per band and bin only the aggregates: O(ranks × bins) once per partition into bands (and
// per clock alignment), on worker threads. A frame then costs O(bands × columns) whatever the
// rank count: `BandColumns` picks the level whose bins are just narrower than a pixel column,
// resamples each band's bins into the columns, and caches the result per (window, width) so a
// frame that keeps its view recomputes nothing, and one that changes it recomputes only the bands
// it draws.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/analysis/job_overview.h"

namespace sl::present {

// One level: per band b and bin k (index b * bins + k) the members' median and worst busy
// (0..255), and the idle cause most members show (IdleCause, -1 none); 8 entries of slack after
// the last band's (BandColumns reads a column's bins 8 at a time).
struct BandLevel {
  size_t bins = 0;
  uint32_t finest_per_bin = 1;  // finest bins per bin of this level (4^level)
  std::vector<uint8_t> median, worst;
  std::vector<int8_t> cause;
};

struct BandPyramid {
  TimeNs span = 0;      // the grid covers the job clock's [0, span)
  size_t finest = 0;    // finest bins: min(kBandFinestBins, span)
  size_t bands = 0;
  std::vector<uint32_t> members;  // per band: how many loaded ranks it aggregates
  std::vector<BandLevel> levels;  // finest first; the last has one bin
  // The finest grid's edges: bin k is [edge(k), edge(k + 1)), edge(k) = ceil(k · span / finest).
  TimeNs edge(size_t k) const;
  std::vector<TimeNs> edges;  // edge(0..finest), kept by the build (empty: edge() computes them)
};
constexpr size_t kBandFinestBins = 65536;
// The median is taken over the members' busy quantised to this many levels (a band row is 3 px
// tall: its bar has 3 levels), the worst is exact to 1/255.
constexpr int kBandBusyBuckets = 16;

// `bands[b]`: the ranks band b aggregates (an empty band has no members: median 0, no cause).
// `threads` 0: one per core. `cancel`, when set, stops the build early (the result is then
// incomplete and must be dropped).
BandPyramid build_band_pyramid(const std::vector<std::vector<const analysis::RankActivity*>>& bands, TimeNs span,
                               unsigned threads = 0, const std::atomic<bool>* cancel = nullptr,
                               size_t finest_bins = kBandFinestBins);

// One band row over a window, per column: the members' median busy in [0, 1] with the cause most
// of them show, and the worst member's busy (its `cause` all -1).
struct BandRow {
  analysis::RankBins median, worst;
};

// A column's busy fraction as a bar of `levels` pixel levels: rounded, halves up (std::lround for
// busy >= 0, without its library call).
inline uint8_t busy_level(float busy, int levels) {
  float v = busy * float(levels);
  int whole = int(v);
  return uint8_t(whole + (v - float(whole) >= 0.5f));
}

// One band row quantised for a bar of `levels` pixels, per column: the median member's level, the
// worst member's where it is lower than the median's (else 0), and the cause most members show.
struct BandLevels {
  std::vector<uint8_t> median, worst;
  std::vector<int8_t> cause;
};

// A band pyramid's rows in pixel columns over the window last asked for, each row computed on
// first use after the window (or width) changed.
class BandColumns {
public:
  explicit BandColumns(std::shared_ptr<const BandPyramid> pyramid) : pyramid_(std::move(pyramid)) {}
  const BandPyramid& pyramid() const { return *pyramid_; }
  // Band `band` over [t0, t1) (job clock) in `columns` columns.
  const BandRow& row(size_t band, double t0, double t1, int columns);
  // The same row quantised (what a frame draws): the same columns as row()'s, without its floats.
  const BandLevels& levels(size_t band, double t0, double t1, int columns, int levels);
  // Bumped whenever the window or width changes: rows drawn from an older one are stale.
  uint64_t version() const { return version_; }
  size_t level() const { return level_; }  // the pyramid level of the current window
  double column_ns() const { return columns_ > 0 ? (t1_ - t0_) / double(columns_) : 0; }
  uint64_t rows_computed() const { return rows_computed_; }  // since construction (for tests and the state)

private:
  struct Piece {  // one bin's share of a column
    uint32_t bin;
    float weight;  // overlap / column width
  };
  void set_window(double t0, double t1, int columns);

  std::shared_ptr<const BandPyramid> pyramid_;
  double t0_ = 0, t1_ = -1;
  int columns_ = -1;
  uint64_t version_ = 0, rows_computed_ = 0;
  size_t level_ = 0;
  std::vector<uint32_t> first_;  // per column: its pieces are pieces_[first_[c], first_[c + 1])
  std::vector<Piece> pieces_;
  // For levels(): the same pieces as `stride_` consecutive bins per column from padded_first_[c],
  // weighing padded_weight16_[c * stride_ + i] (in 1/16384ths; 0 for bins not its own): a fixed
  // trip count per column, so quantising a band neither gathers nor mispredicts at every column's end.
  size_t stride_ = 0;
  std::vector<uint32_t> padded_first_;
  std::vector<uint16_t> padded_weight16_;
  template <size_t Stride>
  void levels_fixed(size_t band, size_t stride, int levels, BandLevels& out) const;
  // The same with a column's bins in one SSE register (a stride of at most 8).
  void levels_sse(size_t band, int levels, BandLevels& out) const;
  std::vector<int16_t> weights8_;  // per column: its padded weights, 8 of them
  std::vector<BandRow> rows_;
  std::vector<uint64_t> row_version_;  // per band: version_ + 1 when rows_[band] is current
  std::vector<BandLevels> levels_;
  std::vector<uint64_t> levels_version_;  // per band: version_ + 1 when levels_[band] is current
  std::vector<int> levels_of_;            // per band: the levels it was quantised to
};

}  // namespace sl::present
