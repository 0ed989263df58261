#pragma once
// Streaming latency statistics: exact count, sum, minimum and maximum, and quantiles read
// from a log-linear histogram (HdrHistogram's layout: 2^kSubBits linear buckets below
// 2^kSubBits, then 2^(kSubBits-1) buckets per power of two). A quantile is the order
// statistic of the exact rank to within 2^-kSubBits of its value (0.4 %), and memory
// depends on how widely the latencies spread, not on how many packets were delivered: a
// run of seconds keeps as much as a run of milliseconds.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ibvp::metrics {

class ByteReader;

class LatencyHistogram {
 public:
  static constexpr unsigned kSubBits = 8;
  static constexpr uint64_t kLinear = uint64_t{1} << kSubBits;       // exact below this, ps
  static constexpr uint64_t kPerOctave = uint64_t{1} << (kSubBits - 1);

  void add(uint64_t value);

  uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  uint64_t min() const { return min_; }
  uint64_t max() const { return max_; }
  // Exact: the sum is kept in 128 bits, so 2^64 ps latencies of 2^64 packets do not wrap.
  double mean() const;
  // The value of rank floor(q (n - 1)) in ascending order (the rule the per-packet writer
  // used), as the middle of the bucket that holds it, clamped to [min, max]. Exact for
  // values below kLinear and for the extremes.
  double quantile(double q) const;

  // A run split across processes (docs/parallel.md): `other`'s values added to these. Bins
  // add, so the merged histogram is the one a single process would have built.
  void merge(const LatencyHistogram& other);
  void save(std::string& out) const;
  static LatencyHistogram load(ByteReader& in);

  // Bucket arithmetic, public for the tests that pin the layout.
  static size_t bucket_of(uint64_t value);
  static uint64_t bucket_lower(size_t bucket);
  static uint64_t bucket_width(size_t bucket);

 private:
  // counts_[k] counts bucket first_ + k: only the span between the smallest and largest
  // bucket seen is stored.
  std::vector<uint64_t> counts_;
  size_t first_ = 0;
  uint64_t count_ = 0;
  uint64_t min_ = 0;
  uint64_t max_ = 0;
  unsigned __int128 sum_ = 0;
};

}  // namespace ibvp::metrics
