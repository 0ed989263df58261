// Seed 004 Sec. 6.2 source response functions, checked against the paper's own numbers and
// the principles it derives them from.
#include <gtest/gtest.h>

#include "firmware/cc/response.h"

using namespace ibvp::fw::cc;

namespace {

// Fig. 6's example: 1 GB/s links and 2048-byte packets, rates in packets per second.
RateLimits paper_limits() {
  RateLimits l;
  l.r_max = 1e9 / 2048;
  l.r_min = l.r_max / 256;
  return l;
}

// Unmarked ACKs one after another, each 1/r after the last: time to climb from `from` to at
// least `to`.
double climb(const ResponseFunction& f, double from, double to) {
  double t = 0, r = from;
  for (int acks = 0; r < to * (1 - 1e-12); ++acks) {
    t += 1 / r;
    r = f.increase(r);
    if (acks > 10'000'000) return -1;
  }
  return t;
}

}  // namespace

TEST(CcResponse, RecoveryTimesAreThePapersExample) {
  // "recovery time from minimum to maximum rate limit is 4.2 ms for FIMD and 133.7 ms for
  // LIPD and AIMD"
  const RateLimits l = paper_limits();
  EXPECT_NEAR(Fimd(l).recovery_time() * 1e3, 4.2, 0.05);
  EXPECT_NEAR(Lipd(l).recovery_time() * 1e3, 133.7, 0.05);
  EXPECT_NEAR(Aimd(l).recovery_time() * 1e3, 133.7, 0.05);
  for (const char* name : {"fimd", "lipd", "aimd"}) {
    const auto f = make_response(name, l);
    ASSERT_TRUE(f);
    EXPECT_DOUBLE_EQ(f->recovery(0), l.r_min) << name;
    EXPECT_NEAR(f->recovery(f->recovery_time()), l.r_max, 1e-9 * l.r_max) << name;
    EXPECT_LT(f->recovery(f->recovery_time() * 0.99), l.r_max) << name;
  }
  EXPECT_EQ(make_response("cubic", l), nullptr);
}

TEST(CcResponse, AckByAckIncreaseFollowsTheRecoveryCurve) {
  // f_inc(r) = F_inc^r(1/r): stepping ACK by ACK from R_min reaches R_max in F_inc's time,
  // give or take the last ACK interval.
  const RateLimits l = paper_limits();
  for (const char* name : {"fimd", "lipd", "aimd"}) {
    const auto f = make_response(name, l);
    const double t = climb(*f, l.r_min, l.r_max);
    EXPECT_NEAR(t, f->recovery_time(), 1.0 / l.r_min) << name;
  }
}

TEST(CcResponse, AnyRateRecoversFromOneMarkInTimeT) {
  // Sec. 6.2, second design choice: a rate decreased by a mark returns to its prior value in
  // constant time T = 1/R_min (checked where the decrease is not clamped at R_min).
  const RateLimits l = paper_limits();
  for (const char* name : {"fimd", "lipd", "aimd"}) {
    const auto f = make_response(name, l);
    for (double frac : {0.05, 0.2, 0.5, 0.9, 1.0}) {
      const double r = l.r_max * frac;
      const double lower = f->decrease(r);
      if (lower <= l.r_min) continue;
      const double t = climb(*f, lower, r);
      // AIMD's additive rise is not built on this principle: only FIMD and LIPD satisfy it.
      if (std::string(name) == "aimd") {
        EXPECT_GT(t, l.t()) << "AIMD recovers more slowly than T at " << frac;
        continue;
      }
      EXPECT_NEAR(t, l.t(), 1.0 / lower) << name << " at " << frac;
    }
  }
}

TEST(CcResponse, LipdDecreaseAddsOneToTheIpdAndFlowsReachTheFairShare) {
  const RateLimits l = paper_limits();
  const Lipd f(l);
  for (unsigned ipd = 0; ipd < 255; ++ipd) {
    const double r = rate_of_ipd(ipd, l);
    EXPECT_NEAR(f.decrease(r), rate_of_ipd(ipd + 1, l), 1e-9 * l.r_max) << ipd;
    EXPECT_EQ(ipd_for(f.decrease(r), l), ipd + 1);
  }
  // n flows at R_max/n each take one mark when a new flow arrives: R_max/(n+1), the new
  // fair share (Sec. 6.2).
  EXPECT_NEAR(f.decrease(l.r_max / 4), l.r_max / 5, 1e-9 * l.r_max);
  EXPECT_DOUBLE_EQ(f.decrease(l.r_min), l.r_min);
}

TEST(CcResponse, DiscreteIpdRatesNeverExceedTheLimit) {
  const RateLimits l = paper_limits();
  EXPECT_EQ(ipd_for(l.r_max, l), 0u);
  EXPECT_EQ(ipd_for(l.r_min, l), 255u);
  EXPECT_EQ(ipd_for(l.r_min / 10, l), 255u);  // IBA's IPD stops at 255
  for (double frac = 0.004; frac <= 1.0; frac *= 1.07) {
    const double r = l.r_max * frac;
    const unsigned ipd = ipd_for(r, l);
    EXPECT_LE(rate_of_ipd(ipd, l), r * (1 + 1e-12)) << frac;
    if (ipd > 0) {
      EXPECT_GT(rate_of_ipd(ipd - 1, l), r) << frac;  // the fastest such rate
    }
  }
}

TEST(CcResponse, MultiplicativeDecreasesHalveAndStopAtRmin) {
  const RateLimits l = paper_limits();
  for (const char* name : {"fimd", "aimd"}) {
    const auto f = make_response(name, l);
    EXPECT_DOUBLE_EQ(f->decrease(l.r_max), l.r_max / 2) << name;
    double r = l.r_max;
    for (int i = 0; i < 8; ++i) r = f->decrease(r);
    EXPECT_DOUBLE_EQ(r, l.r_min) << name;  // 2^8 = 256
    EXPECT_DOUBLE_EQ(f->decrease(r), l.r_min) << name;
  }
}
