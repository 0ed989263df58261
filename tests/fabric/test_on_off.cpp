// ON/OFF dynamic flows (seed 004 Sec. 6.3.2): exponential ON and OFF periods of equal mean,
// the flow sending all it can while ON and nothing while OFF.
#include <gtest/gtest.h>

#include <systemc>
#include <vector>

#include "common/fabrics.h"
#include "platform/builder/fabric.h"
#include "platform/workload/flow_source.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

// ON periods as the source shows them: runs of next_ready_ps(t) == t, probed every 1 us.
struct Periods {
  std::vector<double> on_us, off_us;
  double on_fraction = 0;
};

Periods probe_periods(workload::FlowSource& src, uint64_t end_ps) {
  Periods p;
  const uint64_t step = 1'000'000;  // 1 us
  bool on = false;
  uint64_t since = 0, on_total = 0;
  for (uint64_t t = 0; t < end_ps; t += step) {
    const bool now_on = src.next_ready_ps(t) == t;
    if (now_on != on && t > 0) (on ? p.on_us : p.off_us).push_back(static_cast<double>(t - since) * 1e-6);
    if (now_on != on) since = t;
    on = now_on;
    on_total += now_on ? step : 0;
  }
  p.on_fraction = static_cast<double>(on_total) / static_cast<double>(end_ps);
  return p;
}

workload::FlowSource on_off_source(double mean_us, uint64_t seed) {
  FlowConfig f = tb::saturating_flow("dyn", "h1", "h2");
  f.on_off_mean = sc_time(mean_us, SC_US);
  return workload::FlowSource(f, 0, 2'000'000, {1, 12}, {}, {}, sim::Rng(seed, "flow/0/dyn"));
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

}  // namespace

TEST(OnOff, PeriodsAreExponentialWithTheConfiguredMeanAndHalfTheTimeOn) {
  auto src = on_off_source(200, 1);
  const Periods p = probe_periods(src, 2'000'000'000'000ull / 10);  // 200 ms: ~500 periods each
  ASSERT_GT(p.on_us.size(), 300u);
  ASSERT_GT(p.off_us.size(), 300u);
  // Means within 10 % (the standard error of a mean of ~500 exponentials is ~4.5 %).
  EXPECT_NEAR(mean(p.on_us), 200, 20);
  EXPECT_NEAR(mean(p.off_us), 200, 20);
  EXPECT_NEAR(p.on_fraction, 0.5, 0.05);
  // Exponential, not constant: about e^-1 of the periods outlast the mean.
  size_t longer = 0;
  for (double d : p.on_us) longer += d > 200;
  EXPECT_NEAR(static_cast<double>(longer) / static_cast<double>(p.on_us.size()), 0.368, 0.06);
}

TEST(OnOff, SameSeedSamePeriodsOtherSeedOthers) {
  auto a = on_off_source(50, 7), b = on_off_source(50, 7), c = on_off_source(50, 8);
  const uint64_t end = 20'000'000'000ull;  // 20 ms
  EXPECT_EQ(probe_periods(a, end).on_us, probe_periods(b, end).on_us);
  EXPECT_NE(probe_periods(a = on_off_source(50, 7), end).on_us, probe_periods(c, end).on_us);
}

TEST(OnOff, ADynamicFlowDeliversAboutHalfOfAStaticOne) {
  Scenario s = tb::basic_scenario(tb::star(4));
  s.flows.push_back(tb::saturating_flow("static", "h1", "h2"));
  FlowConfig dyn = tb::saturating_flow("dynamic", "h3", "h4");
  dyn.on_off_mean = sc_time(500, SC_US);
  s.flows.push_back(dyn);
  s.duration = sc_time(100, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  const double ratio = static_cast<double>(f.recorder().flows()[1].delivered) /
                       static_cast<double>(f.recorder().flows()[0].delivered);
  EXPECT_NEAR(ratio, 0.5, 0.1);  // 100 ms hold ~100 periods of each kind
}
