#include "platform/metrics/latency_histogram.h"

#include <algorithm>
#include <cmath>

#include "platform/metrics/bytes.h"

namespace ibvp::metrics {

size_t LatencyHistogram::bucket_of(uint64_t v) {
  if (v < kLinear) return static_cast<size_t>(v);
  // v >> shift lands in [kPerOctave, kLinear): the top kSubBits bits of v pick the bucket.
  const unsigned msb = 63u - static_cast<unsigned>(__builtin_clzll(v));
  const unsigned shift = msb - (kSubBits - 1);
  return static_cast<size_t>(kLinear + (shift - 1) * kPerOctave + ((v >> shift) - kPerOctave));
}

uint64_t LatencyHistogram::bucket_lower(size_t b) {
  if (b < kLinear) return b;
  const uint64_t j = b - kLinear;
  const unsigned shift = static_cast<unsigned>(j / kPerOctave) + 1;
  return (kPerOctave + j % kPerOctave) << shift;
}

uint64_t LatencyHistogram::bucket_width(size_t b) {
  if (b < kLinear) return 1;
  return uint64_t{1} << (static_cast<unsigned>((b - kLinear) / kPerOctave) + 1);
}

void LatencyHistogram::add(uint64_t v) {
  const size_t b = bucket_of(v);
  if (counts_.empty()) {
    first_ = b;
    counts_.assign(1, 0);
  } else if (b < first_) {
    counts_.insert(counts_.begin(), first_ - b, 0);
    first_ = b;
  } else if (b >= first_ + counts_.size()) {
    counts_.resize(b - first_ + 1, 0);
  }
  counts_[b - first_]++;
  min_ = count_ ? std::min(min_, v) : v;
  max_ = count_ ? std::max(max_, v) : v;
  count_++;
  sum_ += v;
}

double LatencyHistogram::mean() const {
  if (count_ == 0) return NAN;
  // Integer part and remainder separately, so the division is exact before rounding once.
  const unsigned __int128 q = sum_ / count_, r = sum_ % count_;
  return static_cast<double>(q) + static_cast<double>(r) / static_cast<double>(count_);
}

double LatencyHistogram::quantile(double q) const {
  if (count_ == 0) return NAN;
  const uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(count_ - 1));
  if (rank == 0) return static_cast<double>(min_);
  if (rank == count_ - 1) return static_cast<double>(max_);
  uint64_t seen = 0;
  for (size_t k = 0; k < counts_.size(); ++k) {
    seen += counts_[k];
    if (seen > rank) {
      const size_t b = first_ + k;
      const double mid = static_cast<double>(bucket_lower(b)) + static_cast<double>(bucket_width(b) - 1) / 2.0;
      return std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

void LatencyHistogram::merge(const LatencyHistogram& o) {
  if (o.count_ == 0) return;
  if (count_ == 0) {
    *this = o;
    return;
  }
  // The union of both spans of buckets, as add() would have grown it.
  const size_t lo = std::min(first_, o.first_);
  const size_t hi = std::max(first_ + counts_.size(), o.first_ + o.counts_.size());
  std::vector<uint64_t> c(hi - lo, 0);
  for (size_t k = 0; k < counts_.size(); ++k) c[first_ - lo + k] += counts_[k];
  for (size_t k = 0; k < o.counts_.size(); ++k) c[o.first_ - lo + k] += o.counts_[k];
  counts_ = std::move(c);
  first_ = lo;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
  count_ += o.count_;
  sum_ += o.sum_;
}

void LatencyHistogram::save(std::string& out) const {
  put(out, static_cast<uint64_t>(first_));
  put(out, count_);
  put(out, min_);
  put(out, max_);
  put(out, sum_);
  put_vector(out, counts_);
}

LatencyHistogram LatencyHistogram::load(ByteReader& in) {
  LatencyHistogram h;
  h.first_ = static_cast<size_t>(in.get<uint64_t>());
  h.count_ = in.get<uint64_t>();
  h.min_ = in.get<uint64_t>();
  h.max_ = in.get<uint64_t>();
  h.sum_ = in.get<unsigned __int128>();
  h.counts_ = in.get_vector<uint64_t>();
  return h;
}

}  // namespace ibvp::metrics
