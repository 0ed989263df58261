// The rate-based schedulers of seed 003 Sec. 3.1 (models/sched): VirtualClock with
// unbounded and finite counters, and weighted Fair Queueing, against numbers derived by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/sched/fair_queueing.h"
#include "models/sched/virtual_clock.h"

namespace ibvp::sched {
namespace {

// A link that sends one unit after another: the backlogged connection with the smallest
// VirtualClock stamp goes. Returns the order of service.
std::vector<size_t> serve_backlogged(VirtualClock& vc, const std::vector<uint64_t>& vtick, size_t units) {
  for (size_t i = 0; i < vtick.size(); ++i) vc.activate(i, 0);
  std::vector<size_t> order;
  for (size_t n = 0; n < units; ++n) {
    size_t best = 0;
    for (size_t i = 1; i < vtick.size(); ++i)
      if (vc.stamp(i, vtick[i]) < vc.stamp(best, vtick[best])) best = i;
    vc.charge(best, vtick[best]);
    order.push_back(best);
  }
  return order;
}

std::vector<size_t> counts(const std::vector<size_t>& order, size_t connections) {
  std::vector<size_t> c(connections, 0);
  for (size_t i : order) c[i]++;
  return c;
}

TEST(VirtualClock, BackloggedConnectionsShareInProportionToTheirReservedRates) {
  // Rates 1 : 2 : 5 (Vtick 10 : 5 : 2 ns per unit). After 800 units each connection has had
  // 800 * r_i / 8 units, within one: its clock is within one Vtick of the others'.
  VirtualClock vc;
  const auto c = counts(serve_backlogged(vc, {10, 5, 2}, 800), 3);
  EXPECT_NEAR(static_cast<double>(c[0]), 100.0, 1.0);
  EXPECT_NEAR(static_cast<double>(c[1]), 200.0, 1.0);
  EXPECT_NEAR(static_cast<double>(c[2]), 500.0, 1.0);
}

TEST(VirtualClock, AnIdleConnectionEarnsNoCreditForItsIdleTime) {
  // Connection 0 alone sends 100 units of Vtick 10 by time 1000; connection 1 (same rate)
  // becomes active at 1000 with auxVC 0. Zhang's real-time term starts it at 1000, so from
  // then the two alternate instead of connection 1 taking 100 units in a row.
  VirtualClock vc;
  vc.activate(0, 0);
  for (int k = 0; k < 100; ++k) vc.charge(0, 10);
  EXPECT_EQ(vc.aux_vc(0), 1000u);
  vc.activate(1, 1000);
  EXPECT_EQ(vc.aux_vc(1), 1000u);
  EXPECT_EQ(vc.stamp(1, 10), vc.stamp(0, 10));
}

TEST(VirtualClock, FiniteCountersFollowThePapersOverflowRule) {
  // 16 bits, limit 65535. auxVC = 60000, 62000, 30000; connection 0 charged 8000 overflows:
  // it restarts at 0 (then + 8000), the others lose its old 60000 (0 if negative).
  VirtualClock vc(16);
  vc.resize(3);
  vc.charge(0, 60000);
  vc.charge(1, 62000);
  vc.charge(2, 30000);
  vc.charge(0, 8000);
  EXPECT_EQ(vc.aux_vc(0), 8000u);
  EXPECT_EQ(vc.aux_vc(1), 2000u);
  EXPECT_EQ(vc.aux_vc(2), 0u);
}

TEST(VirtualClock, FiniteCountersWithEqualVticksServeInTheUnboundedOrder) {
  // With equal Vticks the overflowing clock is the smallest, so no difference is lost: the
  // 16-bit counters wrap thousands of times and serve exactly as 64-bit counters do.
  const std::vector<uint64_t> vtick = {1000, 1000, 1000, 1000};
  VirtualClock wide, narrow(16);
  const auto a = serve_backlogged(wide, vtick, 20000);
  const auto b = serve_backlogged(narrow, vtick, 20000);
  EXPECT_EQ(a, b);
  EXPECT_GT(wide.aux_vc(0), 50u * narrow.counter_limit());  // it wrapped some 76 times
}

TEST(VirtualClock, FiniteCountersKeepTheProportionsAcrossOverflows) {
  // Unequal Vticks (rates 1 : 3) through 12-bit counters (limit 4095, about 25 units of the
  // slow connection): the shares stay 1 : 3 within two units over hundreds of overflows,
  // and no counter ever exceeds its width.
  VirtualClock vc(12);
  const std::vector<uint64_t> vtick = {150, 50};
  vc.activate(0, 0);
  vc.activate(1, 0);
  std::vector<size_t> c(2, 0);
  for (int n = 0; n < 40000; ++n) {
    const size_t best = vc.stamp(1, vtick[1]) < vc.stamp(0, vtick[0]) ? 1 : 0;
    vc.charge(best, vtick[best]);
    c[best]++;
    ASSERT_LE(vc.aux_vc(0), vc.counter_limit());
    ASSERT_LE(vc.aux_vc(1), vc.counter_limit());
  }
  EXPECT_NEAR(static_cast<double>(c[0]), 10000.0, 2.0);
  EXPECT_NEAR(static_cast<double>(c[1]), 30000.0, 2.0);
}

TEST(VirtualClock, VtickIsTheTimeOfThePacketAtTheReservedRateRoundedUp) {
  EXPECT_EQ(vtick_ns(2048, 1'000'000'000), 16384u);  // 2048 * 8 bits at 1 Gb/s
  EXPECT_EQ(vtick_ns(1, 3'000'000'000), 3u);          // 8/3 ns rounds up
}

// Fair Queueing: C = 1 Gb/s, two connections of 0.5 Gb/s, times in us (1 us = 1e6 ps).
constexpr uint64_t us(double t) { return static_cast<uint64_t>(t * 1e6); }

TEST(FairQueueing, FinishTagsFollowTheRoundNumberOfTheFluidSystem) {
  FairQueueing fq(1e9);
  // t = 0: A and B each 1000 bits, F = 0 + 1000 / 0.5e9 = 2 us.
  EXPECT_DOUBLE_EQ(fq.arrive(0, 0, 1000, 0.5e9), 2e-6);
  EXPECT_DOUBLE_EQ(fq.arrive(1, 0, 1000, 0.5e9), 2e-6);
  // Both active, weights sum to C: R grows at 1. At 1 us, A's next: max(2, 1) + 2 = 4 us.
  EXPECT_DOUBLE_EQ(fq.round(us(1)), 1e-6);
  EXPECT_DOUBLE_EQ(fq.arrive(0, us(1), 1000, 0.5e9), 4e-6);
  // R reaches 2 at t = 2 us and B leaves the fluid system; alone, A's 0.5 Gb/s makes R grow
  // at C / 0.5e9 = 2, so R = 4 at t = 3 us, when A leaves too.
  EXPECT_DOUBLE_EQ(fq.round(us(2)), 2e-6);
  EXPECT_NEAR(fq.round(us(2.5)), 3e-6, 1e-15);
  EXPECT_NEAR(fq.round(us(3)), 4e-6, 1e-15);
  EXPECT_EQ(fq.active_weight(), 0.0);
  // Idle: R stays; a new packet of B starts from R, not from its old tag.
  EXPECT_NEAR(fq.round(us(10)), 4e-6, 1e-15);
  EXPECT_NEAR(fq.arrive(1, us(10), 1000, 0.5e9), 6e-6, 1e-15);
}

TEST(FairQueueing, BackloggedConnectionsShareInProportionToTheirRates) {
  // Rates 1 : 3 with 100 packets each queued at t = 0: served in finish-tag order, the first
  // 80 packets are 20 of the slow connection and 60 of the fast one (within one).
  FairQueueing fq(1e9);
  std::vector<std::pair<double, size_t>> tags;
  for (int k = 0; k < 100; ++k) {
    tags.emplace_back(fq.arrive(0, 0, 8000, 0.25e9), 0);
    tags.emplace_back(fq.arrive(1, 0, 8000, 0.75e9), 1);
  }
  std::stable_sort(tags.begin(), tags.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<size_t> c(2, 0);
  for (size_t n = 0; n < 80; ++n) c[tags[n].second]++;
  EXPECT_NEAR(static_cast<double>(c[0]), 20.0, 1.0);
  EXPECT_NEAR(static_cast<double>(c[1]), 60.0, 1.0);
}

TEST(FairQueueing, TagsOfOneConnectionGrowSoItsPacketsKeepTheirOrder) {
  FairQueueing fq(1e9);
  double last = 0;
  for (int k = 0; k < 50; ++k) {
    const double f = fq.arrive(0, us(k * 0.3), 1000 + 100 * (k % 7), 0.1e9);
    EXPECT_GT(f, last);
    last = f;
  }
}

}  // namespace
}  // namespace ibvp::sched
