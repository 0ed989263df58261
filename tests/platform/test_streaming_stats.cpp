// The recorder's streaming statistics (issue 18: memory flat with run length): latency
// quantiles from a log-linear histogram within its stated relative error of the exact order
// statistic, and sliding-window rates from binned bytes equal to the rates of the events.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/sim/rng.h"
#include "platform/metrics/latency_histogram.h"
#include "platform/metrics/recorder.h"

namespace {

using ibvp::metrics::LatencyHistogram;
using ibvp::metrics::RateSeries;
using ibvp::metrics::Recorder;

TEST(LatencyHistogram, BucketsTileTheValuesWithoutGapsOrOverlap) {
  // Every value falls in the bucket whose [lower, lower + width) holds it, and bucket b + 1
  // starts where b ends, up to the largest 64-bit value.
  for (size_t b = 0; b + 1 < LatencyHistogram::bucket_of(~uint64_t{0}); ++b)
    ASSERT_EQ(LatencyHistogram::bucket_lower(b) + LatencyHistogram::bucket_width(b), LatencyHistogram::bucket_lower(b + 1))
        << "bucket " << b;
  ibvp::sim::Rng rng(7, "histogram");
  for (int i = 0; i < 100000; ++i) {
    const uint64_t v = rng.next() >> (rng.next() % 64);
    const size_t b = LatencyHistogram::bucket_of(v);
    ASSERT_GE(v, LatencyHistogram::bucket_lower(b));
    ASSERT_LT(v - LatencyHistogram::bucket_lower(b), LatencyHistogram::bucket_width(b));
    // Relative width bounded by 2^-(kSubBits-1): the midpoint is within 2^-kSubBits.
    if (v >= LatencyHistogram::kLinear) {
      ASSERT_LE(static_cast<double>(LatencyHistogram::bucket_width(b)) / static_cast<double>(LatencyHistogram::bucket_lower(b)),
                1.0 / LatencyHistogram::kPerOctave);
    }
  }
}

TEST(LatencyHistogram, QuantilesWithinRelativeErrorOfExactOrderStatistics) {
  // Latencies spread over four decades (ns to tens of us), as in a congested run.
  ibvp::sim::Rng rng(11, "latencies");
  std::vector<uint64_t> v;
  LatencyHistogram h;
  for (int i = 0; i < 200001; ++i) {
    const uint64_t x = 1000 + static_cast<uint64_t>(std::exp(rng.uniform() * 10.0) * 1000.0);
    v.push_back(x);
    h.add(x);
  }
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (uint64_t x : v) sum += static_cast<double>(x);
  EXPECT_EQ(h.count(), v.size());
  EXPECT_EQ(h.min(), v.front());
  EXPECT_EQ(h.max(), v.back());
  EXPECT_NEAR(h.mean(), sum / static_cast<double>(v.size()), 1e-6 * h.mean());
  for (double q : {0.01, 0.25, 0.5, 0.9, 0.99, 0.999}) {
    const double exact = static_cast<double>(v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))]);
    EXPECT_NEAR(h.quantile(q), exact, exact / static_cast<double>(LatencyHistogram::kLinear)) << "q " << q;
  }
  EXPECT_EQ(h.quantile(0.0), static_cast<double>(v.front()));
  EXPECT_EQ(h.quantile(1.0), static_cast<double>(v.back()));
}

TEST(LatencyHistogram, SmallValuesAreExactAndMeanHasNoRoundingDrift) {
  LatencyHistogram h;
  for (uint64_t x = 0; x < 200; ++x) h.add(x);
  EXPECT_EQ(h.quantile(0.5), 99.0);  // rank floor(0.5 * 199) = 99
  EXPECT_EQ(h.mean(), 99.5);
  // Huge values: the 128-bit sum does not wrap.
  LatencyHistogram big;
  big.add(~uint64_t{0});
  big.add(~uint64_t{0});
  EXPECT_EQ(big.mean(), static_cast<double>(~uint64_t{0}));
}

// The rates of binned bytes against the rates computed from every event, for windows and
// steps that divide each other and that do not (edges at arbitrary offsets).
std::vector<double> rates_from_events(const std::vector<std::pair<uint64_t, uint32_t>>& ev, uint64_t w, uint64_t step,
                                      uint64_t end) {
  std::vector<double> out;
  for (uint64_t t = step; t <= end; t += step) {
    const uint64_t lo = t > w / 2 ? t - w / 2 : 0, hi = std::min(t + w / 2, end);
    uint64_t bytes = 0;
    for (const auto& [te, b] : ev)
      if (te >= lo && te < hi) bytes += b;
    out.push_back(static_cast<double>(bytes) / (static_cast<double>(hi - lo) * 1e-12));
  }
  return out;
}

TEST(RateSeries, BinnedRatesEqualTheRatesOfTheEvents) {
  struct Grid { uint64_t window, step; };
  for (const Grid g : {Grid{2000, 250}, Grid{2000, 300}, Grid{1000, 1000}, Grid{999, 7}, Grid{10, 4000}}) {
    const uint64_t end = 50000;
    Recorder rec(0, 0, false);
    rec.set_rate_grid(g.window, g.step, end);
    rec.track_port(0, 1, "p", 1.0);
    ibvp::sim::Rng rng(3, "events");
    std::vector<std::pair<uint64_t, uint32_t>> ev;
    uint64_t t = 0;
    while (true) {
      t += rng.next() % 97;
      if (t > end + 500) break;  // some after the end, as transmissions still under way
      const uint32_t bytes = 1 + static_cast<uint32_t>(rng.next() % 4096);
      ev.emplace_back(t, bytes);
      const_cast<RateSeries&>(rec.series()[0]).add(t, bytes);
    }
    const std::vector<double> want = rates_from_events(ev, g.window, g.step, end);
    const std::vector<double> got = Recorder::sample(rec.series()[0], g.window, g.step, end);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], want[k]) << "window " << g.window << " step " << g.step << " k " << k;
    // Two bins per sample at most, whatever the number of events.
    EXPECT_LE(rec.series()[0].bins.size(), 2 * (end / g.step + 1) + 1);
  }
}

}  // namespace
