// The CA side of the InfiniBand CC annex (IBA Vol 1 Annex A10) in the default firmware,
// "cc=cct": the Congestion Control Table and its index (firmware/cc/cct.h) directly, then
// on the HCA bench (a BECN raises the flow's gap to CCT[CCTI_Increase], the CCTI_Timer brings
// it back step by step), and end to end with the switch's cc_annex marking in an incast.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "firmware/cc/cct.h"
#include "hca/hca_bench.h"
#include "hca/incast.h"

using namespace ibvp;
using namespace ibvp::verbs;
using sc_core::SC_MS;
using sc_core::sc_time;

// ---- the table and its index ---------------------------------------------------------------

TEST(Cct, DefaultTableRisesLinearlyFromZeroToTheLargestIpdIn128Entries) {
  const fw::cc::Cct t{fw::cc::CctOptions{}};
  EXPECT_EQ(t.ipd(0), 0u);
  EXPECT_EQ(t.ipd(1), 2u);    // 255/127 = 2.008 packet times per step, rounded
  EXPECT_EQ(t.ipd(63), 126u);  // 126.496
  EXPECT_EQ(t.ipd(64), 129u);  // 128.504
  EXPECT_EQ(t.ipd(127), 255u);
  for (uint32_t i = 0; i < 128; ++i) {
    EXPECT_LE(t.ipd(i) * 127.0, i * 255.0 + 63.5) << i;
    EXPECT_GE(t.ipd(i) * 127.0, i * 255.0 - 63.5) << i;
  }
}

TEST(Cct, EachBecnRaisesTheIndexByTheIncreaseUpToTheLimit) {
  fw::cc::CctOptions o;
  o.increase = 3;
  o.limit = 10;
  const fw::cc::Cct t(o);
  uint32_t ccti = 0;
  const uint32_t expect[] = {3, 6, 9, 10, 10};
  for (uint32_t e : expect) {
    ccti = t.after_becn(ccti);
    EXPECT_EQ(ccti, e);
  }
  EXPECT_EQ(t.ipd(ccti), t.ipd(10));
}

TEST(Cct, EachTimerExpiryLowersTheIndexByOneDownToTheMinimum) {
  fw::cc::CctOptions o;
  o.min = 2;
  const fw::cc::Cct t(o);
  uint32_t ccti = 5;
  const uint32_t expect[] = {4, 3, 2, 2};
  for (uint32_t e : expect) {
    ccti = t.after_timer(ccti);
    EXPECT_EQ(ccti, e);
  }
  EXPECT_TRUE(t.at_rest(2));
  EXPECT_FALSE(t.at_rest(3));
  EXPECT_EQ(o.timer_ps(), 16 * 1'024'000u);  // the annex's unit, 1.024 us
}

// ---- on the HCA bench ---------------------------------------------------------------------

namespace {

// h2 marks the packet of PSN 0x100 + 40 (tb::run_paced).
constexpr uint32_t kMarkIndex = 40;

}  // namespace

TEST(HcaCcAnnex, OneBecnRaisesTheGapToCctOfTheIncreaseAndTheTimerStepsItBackToZero) {
  // CCTI_Increase 3: one BECN takes the flow to CCTI 3 (IPD CCT[3] = 6 packet times); each
  // CCTI_Timer of 50 x 1.024 us lowers it by one: IPD 4, 2, then 0 after 3 x 51.2 us.
  const int n = 800;
  const tb::PacedRun run = tb::run_paced("cc=cct,cct_increase=3,cct_timer=50", n, kMarkIndex);
  ASSERT_EQ(run.data.size(), static_cast<size_t>(n));
  ASSERT_EQ(run.becn_acks, 1u);
  const fw::cc::Cct table{fw::cc::CctOptions{}};
  const uint64_t d = run.data[0].end - run.data[0].start;  // one packet time
  const uint64_t timer_ps = 50 * fw::cc::CctOptions::kTimerUnitPs;
  int count[256] = {};
  int first_paced = -1, last_paced = -1;
  uint64_t last_ipd = 255;
  for (int i = 1; i < n; ++i) {
    const uint64_t gap = run.data[i].start - run.data[i - 1].end;
    if (gap == 0) continue;
    // A whole number of packet times from the table, never rising again.
    ASSERT_EQ(gap % d, 0u) << "packet " << i;
    const uint64_t ipd = gap / d;
    ASSERT_TRUE(ipd == table.ipd(3) || ipd == table.ipd(2) || ipd == table.ipd(1)) << "packet " << i << " IPD " << ipd;
    EXPECT_LE(ipd, last_ipd) << "packet " << i;
    last_ipd = ipd;
    count[ipd]++;
    if (first_paced < 0) first_paced = i;
    last_paced = i;
  }
  ASSERT_GE(first_paced, 0);
  EXPECT_EQ(table.ipd(3), 6u);
  EXPECT_GT(run.data[first_paced].start, run.becn_ps);
  // One timer period at each step, seen on the wire through the tx buffer: it holds B = 4
  // packets (tx_vl_buffer_bytes, four 4 KiB-MTU packets), each posted with the gap of its
  // time, so the wire shows level j for T + B (1 + IPD_j) d - B (1 + IPD_j-1) d.
  constexpr double B = 4;
  double ipd_before = 0;
  for (uint32_t ccti = 3; ccti >= 1; --ccti) {
    const double ipd = table.ipd(ccti);
    const double level_ps = timer_ps + B * (1 + ipd) * d - B * (1 + ipd_before) * d;
    EXPECT_NEAR(count[table.ipd(ccti)], level_ps / ((1 + ipd) * d), 1.5) << "IPD " << ipd;
    ipd_before = ipd;
  }
  // Back at full rate three timer periods after the BECN, plus the last level's B packets.
  const double back_ps = static_cast<double>(run.data[last_paced].end - run.becn_ps);
  EXPECT_NEAR(back_ps * 1e-6, (3 * timer_ps + B * (1 + table.ipd(1)) * d) * 1e-6, 1.5);
  EXPECT_LT(last_paced, n - 1) << "back at full rate before the end";
}

TEST(HcaCcAnnex, CctLimitZeroKeepsTheFlowAtFullRateDespiteTheBecn) {
  const int n = 200;
  const tb::PacedRun run = tb::run_paced("cc=cct,cct_limit=0", n, kMarkIndex);
  ASSERT_EQ(run.data.size(), static_cast<size_t>(n));
  ASSERT_EQ(run.becn_acks, 1u);
  for (int i = 1; i < n; ++i) EXPECT_EQ(run.data[i].start, run.data[i - 1].end) << "packet " << i;
}

// ---- incast end to end: the switch marks by the annex, the senders answer by the CCT -------

namespace {

// Threshold 15 (mark as soon as a packet waits behind the one leaving), and one mark in
// three eligible packets: marking every packet raises each flow's CCTI several times per
// timer period and overshoots (84 % of the link here), while the countdown spreads marks.
sw::EcnConfig annex_marking() {
  sw::EcnConfig c;
  c.policy = sw::MarkingPolicy::cc_annex;
  c.threshold = 15;
  c.marking_rate = 2;
  return c;
}

// A table rising by one packet time per CCTI (cct_max_ipd=127): each sender's four flows need
// an IPD near 7 for half the link, and the default table's steps of two packet times are
// coarse for so few flows (89.6 % of the link with it).
const char* kCctArgs = "sched=rr,cc=cct,cct_max_ipd=127";

}  // namespace

namespace {

// The incast under CCT: the receiver's link stays above 92 % busy, both senders hear marks
// and neither is credit-blocked more than 2.5 % of the time.
void expect_controlled_incast(bool rc) {
  const tb::Incast r = tb::run_incast(kCctArgs, rc, 4, annex_marking());
  ASSERT_GT(r.window_ps, 0u);
  const double util = tb::utilization(r);
  testing::Test::RecordProperty("utilization", std::to_string(util));
  EXPECT_GT(util, 0.92);
  EXPECT_LE(util, 1.0 + 1e-9);
  for (int i = 0; i < 2; ++i) {
    EXPECT_GT(r.becn_received[i], 0u) << "sender " << i;
    testing::Test::RecordProperty("blocked" + std::to_string(i), std::to_string(r.blocked_ps[i] * 1.0 / r.window_ps));
    EXPECT_LT(r.blocked_ps[i], r.window_ps / 40) << "sender " << i;
  }
}

}  // namespace

TEST(HcaCcAnnex, RcIncastWithCctStopsTheSendersBeingCreditBlockedAndKeepsTheLinkBusy) {
  // Without congestion control the same incast leaves each sender credit-blocked about half
  // the time (test_congestion.cpp, IncastWithoutCcKeepsSendingAtFullRateAndTheBuffersFull,
  // and AnnexMarkingAloneDoesNotSlowTheSenders below).
  expect_controlled_incast(true);
}

TEST(HcaCcAnnex, UdIncastWithCctAnswersCnpsAndKeepsTheLinkBusy) { expect_controlled_incast(false); }

TEST(HcaCcAnnex, AnnexMarkingAloneDoesNotSlowTheSenders) {
  const tb::Incast r = tb::run_incast("sched=rr", true, 4, annex_marking());
  ASSERT_GT(r.window_ps, 0u);
  EXPECT_GT(tb::utilization(r), 0.99);
  // One in three packets leaving the congested output is marked, and nobody answers.
  EXPECT_NEAR(static_cast<double>(r.marked) / static_cast<double>(r.sent[0] + r.sent[1]), 1.0 / 3, 0.01);
  for (int i = 0; i < 2; ++i) EXPECT_GT(r.blocked_ps[i], r.window_ps * 4 / 10) << "sender " << i;
}

// ---- arguments ----------------------------------------------------------------------------

TEST(HcaCcAnnex, TimerOfZeroIsRefused) {
  tb::expect_firmware_refused("cc=cct,cct_timer=0", "cct_timer '0' is out of range (1..65535, units of 1.024 us)");
}
TEST(HcaCcAnnex, LimitBeyondTheTableIsRefused) {
  tb::expect_firmware_refused("cc=cct,cct_limit=128", "cct_limit '128' is out of range (0..127, the largest CCTI)");
}
TEST(HcaCcAnnex, MinAboveLimitIsRefused) {
  tb::expect_firmware_refused("cc=cct,cct_limit=3,cct_min=5", "cct_min 5 is above cct_limit 3");
}
TEST(HcaCcAnnex, CctKeysWithoutCcCctAreRefused) {
  tb::expect_firmware_refused("cc=lipd,cct_increase=2", "cct_increase is only used with cc=cct");
}
TEST(HcaCcAnnex, UnknownCctKeyIsRefused) {
  tb::expect_firmware_refused("cc=cct,cct_size=2", "unknown key 'cct_size' (cct_increase, cct_limit, cct_min, cct_timer, cct_max_ipd)");
}
