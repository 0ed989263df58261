// Real-time traffic metrics of seeds 000 and 003 (issue 11): deadline missing probability
// (DMP) and time (DMT) by the papers' deadline rule, inter-frame delivery time and SD,
// their exact aggregation per class, and frame reassembly from packets in bounded memory.
// The deadline examples use a period of 100 ps so the arithmetic can be followed by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "models/sim/rng.h"
#include "platform/metrics/frame_metrics.h"

namespace {

using ibvp::metrics::FrameClassStats;
using ibvp::metrics::FrameReassembly;
using ibvp::metrics::FrameStreamStats;
using ibvp::metrics::kFramePeriod30Hz_ps;

FrameStreamStats feed(const std::vector<uint64_t>& delivered_ps, uint64_t period_ps) {
  FrameStreamStats s(period_ps);
  for (size_t i = 0; i < delivered_ps.size(); ++i) s.on_frame(i, delivered_ps[i]);
  return s;
}

// Two-pass mean and population SD, the reference for the streaming moments.
struct TwoPass {
  double mean = 0, sd = 0;
};
TwoPass two_pass(const std::vector<double>& xs) {
  TwoPass r;
  if (xs.empty()) return r;
  for (double x : xs) r.mean += x;
  r.mean /= static_cast<double>(xs.size());
  double ss = 0;
  for (double x : xs) ss += (x - r.mean) * (x - r.mean);
  r.sd = std::sqrt(ss / static_cast<double>(xs.size()));
  return r;
}

std::vector<double> gaps(const std::vector<uint64_t>& delivered_ps) {
  std::vector<double> g;
  for (size_t i = 1; i < delivered_ps.size(); ++i) g.push_back(static_cast<double>(delivered_ps[i] - delivered_ps[i - 1]));
  return g;
}

// Deliveries one period apart plus jitter in [-max_early, max_late] ps, from a fixed seed.
std::vector<uint64_t> jittered(uint64_t seed, size_t frames, uint64_t period_ps, uint64_t max_early, uint64_t max_late) {
  ibvp::sim::Rng rng(seed, "frames");
  std::vector<uint64_t> t;
  uint64_t last = 0;
  for (size_t i = 0; i < frames; ++i) {
    const uint64_t nominal = 1'000'000 + i * period_ps;
    uint64_t at = nominal - max_early + rng.next() % (max_early + max_late + 1);
    if (at < last) at = last;
    t.push_back(at);
    last = at;
  }
  return t;
}

TEST(FrameStreamStats, DefaultPeriodIsOneThirtiethSecondRoundedDownToWholePicoseconds) {
  // 1/30 s = 33,333,333,333.3 ps: 30 periods fall 10 ps short of one second, never over.
  EXPECT_EQ(kFramePeriod30Hz_ps * 30, 1'000'000'000'000ull - 10);
  EXPECT_EQ(FrameStreamStats().period_ps(), kFramePeriod30Hz_ps);
  EXPECT_THROW(FrameStreamStats(0), std::invalid_argument);
}

TEST(FrameStreamStats, FramesOnOrBeforeTheirDeadlinesNeverMiss) {
  // Period 100. Frame 0 at 0 anchors; deadlines 100, 200, 300, 400. Deliveries 100
  // (exactly at the deadline: on time), 195 (early), 300, 400.
  const FrameStreamStats s = feed({0, 100, 195, 300, 400}, 100);
  EXPECT_EQ(s.frames(), 5u);
  EXPECT_EQ(s.missed(), 0u);
  EXPECT_EQ(s.dmp(), 0.0);
  EXPECT_EQ(s.dmt_ps(), 0.0);
  // An early frame does not move later deadlines: they advance from the previous deadline.
  EXPECT_EQ(s.next_deadline_ps(), 500u);
}

TEST(FrameStreamStats, ConstantLatencyStreamAtThirtyHertzNeverMisses) {
  // Frames injected every 1/30 s and delivered after the same latency: the deadlines
  // advance in the same steps, so none is missed over 10,000 frames.
  FrameStreamStats s;
  for (uint64_t i = 0; i < 10000; ++i) s.on_frame(i, 5'000'000 + i * kFramePeriod30Hz_ps);
  EXPECT_EQ(s.missed(), 0u);
  EXPECT_DOUBLE_EQ(s.inter_frame_mean_ps(), static_cast<double>(kFramePeriod30Hz_ps));
  EXPECT_EQ(s.inter_frame_sd_ps(), 0.0);
}

TEST(FrameStreamStats, MissedFrameRebasesTheNextDeadlineOnItsArrival) {
  // Period 100, seed 000 Sec. 4's rule worked by hand:
  //   frame  delivered  deadline  result
  //   0      1000       -         anchors the clock, next deadline 1000 + 100 = 1100
  //   1      1100       1100      on time (at the deadline), next 1100 + 100 = 1200
  //   2      1230       1200      missed by 30, next = arrival + 100 = 1330
  //   3      1320       1330      on time; without the re-basing its deadline would be
  //                               1300 and it would miss. next 1330 + 100 = 1430
  //   4      1430       1430      on time, next 1530
  //   5      1540       1530      missed by 10, next 1540 + 100 = 1640
  // DMP = 2 / 6, DMT = (30 + 10) / 2 = 20.
  const FrameStreamStats s = feed({1000, 1100, 1230, 1320, 1430, 1540}, 100);
  EXPECT_EQ(s.frames(), 6u);
  EXPECT_EQ(s.missed(), 2u);
  EXPECT_EQ(s.lateness_sum_ps(), 40u);
  EXPECT_DOUBLE_EQ(s.dmp(), 2.0 / 6.0);
  EXPECT_DOUBLE_EQ(s.dmt_ps(), 20.0);
  EXPECT_EQ(s.next_deadline_ps(), 1640u);
}

TEST(FrameStreamStats, RunOfLateFramesMeasuresEachAgainstTheRebasedDeadline) {
  // Period 100:
  //   frame  delivered  deadline  result
  //   0      0          -         next 100
  //   1      150        100       missed by 50, next 250
  //   2      400        250       missed by 150, next 500
  //   3      620        500       missed by 120, next 720
  //   4      700        720       on time, next 820
  // DMP = 3 / 5, DMT = (50 + 150 + 120) / 3. Deadlines fixed at 100 i would instead give
  // lateness 50, 200, 320: the re-basing keeps one slow frame from charging every later one.
  const FrameStreamStats s = feed({0, 150, 400, 620, 700}, 100);
  EXPECT_EQ(s.missed(), 3u);
  EXPECT_EQ(s.lateness_sum_ps(), 320u);
  EXPECT_DOUBLE_EQ(s.dmp(), 3.0 / 5.0);
  EXPECT_DOUBLE_EQ(s.dmt_ps(), 320.0 / 3.0);
  EXPECT_EQ(s.next_deadline_ps(), 820u);
}

TEST(FrameStreamStats, InterFrameMeanAndSdEqualTwoPassComputation) {
  // Hand example first: deliveries 0, 30, 70, 100 give gaps 30, 40, 30: mean 100/3,
  // population SD sqrt(((30-m)^2 + (40-m)^2 + (30-m)^2) / 3) = sqrt(200/9).
  const FrameStreamStats small = feed({0, 30, 70, 100}, 100);
  EXPECT_DOUBLE_EQ(small.inter_frame_mean_ps(), 100.0 / 3.0);
  EXPECT_NEAR(small.inter_frame_sd_ps(), std::sqrt(200.0 / 9.0), 1e-12);
  // Then 20,000 frames at 30 Hz with up to 2 ms of jitter: values near 3.3e10 ps, where a
  // sum-of-squares formula loses the SD to cancellation; Welford matches the two-pass value.
  const std::vector<uint64_t> t = jittered(11, 20000, kFramePeriod30Hz_ps, 1'000'000'000, 2'000'000'000);
  const FrameStreamStats s = feed(t, kFramePeriod30Hz_ps);
  const TwoPass ref = two_pass(gaps(t));
  ASSERT_GT(ref.sd, 1e8);
  EXPECT_EQ(s.inter_frame().count(), t.size() - 1);
  EXPECT_NEAR(s.inter_frame_mean_ps(), ref.mean, ref.mean * 1e-12);
  EXPECT_NEAR(s.inter_frame_sd_ps(), ref.sd, ref.sd * 1e-9);
}

TEST(FrameStreamStats, FramesCountInCompletionOrderAndReorderingIsCounted) {
  // Period 100. Frame 2 completes before frame 1: the frame completing second takes the
  // second deadline whatever its index. 0 at 0 (next 100), 2 at 90 (on time, next 200),
  // 1 at 210 (missed by 10, next 310), 3 at 300 (on time).
  FrameStreamStats s(100);
  s.on_frame(0, 0);
  s.on_frame(2, 90);
  s.on_frame(1, 210);
  s.on_frame(3, 300);
  EXPECT_EQ(s.frames(), 4u);
  EXPECT_EQ(s.missed(), 1u);
  EXPECT_EQ(s.lateness_sum_ps(), 10u);
  EXPECT_EQ(s.reordered(), 1u);
}

TEST(FrameStreamStats, DeliveryTimeGoingBackwardsIsRefused) {
  FrameStreamStats s(100);
  s.on_frame(0, 500);
  EXPECT_THROW(s.on_frame(1, 499), std::invalid_argument);
  s.on_frame(1, 500);  // equal times are two frames completing in the same instant
  EXPECT_EQ(s.frames(), 2u);
}

TEST(FrameClassStats, ClassTotalsEqualComputationOnAllStreamsFramesTogether) {
  // Three streams of different lengths and lateness. The class DMP is missed frames over
  // all frames (not the mean of the streams' DMPs), DMT the mean over all missed frames,
  // and the inter-frame moments those of all streams' gaps together.
  const uint64_t p = kFramePeriod30Hz_ps;
  const std::vector<std::vector<uint64_t>> streams = {
      jittered(1, 3000, p, 0, 3'000'000'000),       // late often
      jittered(2, 500, p, 2'000'000'000, 100'000),  // rarely late
      jittered(3, 1200, p, 5'000'000'000, 8'000'000'000),
  };
  FrameClassStats cls;
  uint64_t frames = 0, missed = 0, lateness = 0;
  double mean_of_dmps = 0;
  std::vector<double> all_gaps;
  for (const auto& t : streams) {
    const FrameStreamStats s = feed(t, p);
    cls.add(s);
    frames += s.frames();
    missed += s.missed();
    lateness += s.lateness_sum_ps();
    mean_of_dmps += s.dmp() / static_cast<double>(streams.size());
    for (double g : gaps(t)) all_gaps.push_back(g);
  }
  ASSERT_GT(missed, 0u);
  EXPECT_EQ(cls.streams(), 3u);
  EXPECT_EQ(cls.frames(), 4700u);
  EXPECT_EQ(cls.missed(), missed);
  EXPECT_DOUBLE_EQ(cls.dmp(), static_cast<double>(missed) / static_cast<double>(frames));
  EXPECT_GT(std::abs(cls.dmp() - mean_of_dmps), 1e-3);  // the weighting matters here
  EXPECT_DOUBLE_EQ(cls.dmt_ps(), static_cast<double>(lateness) / static_cast<double>(missed));
  const TwoPass ref = two_pass(all_gaps);
  EXPECT_NEAR(cls.inter_frame_mean_ps(), ref.mean, ref.mean * 1e-12);
  EXPECT_NEAR(cls.inter_frame_sd_ps(), ref.sd, ref.sd * 1e-9);
}

TEST(FrameClassStats, EmptyClassAndStreamsWithoutFramesReadZero) {
  FrameClassStats cls;
  EXPECT_EQ(cls.dmp(), 0.0);
  EXPECT_EQ(cls.dmt_ps(), 0.0);
  cls.add(FrameStreamStats());
  EXPECT_EQ(cls.frames(), 0u);
  EXPECT_EQ(cls.dmp(), 0.0);
  EXPECT_EQ(cls.inter_frame_sd_ps(), 0.0);
}

TEST(FrameReassembly, InterleavedFramesCompleteAtTheirLastPacketAndAreForgotten) {
  // Frame 7 has 3 packets, frame 8 has 2; their packets interleave and frame 8 completes
  // first. Each completes with the delivery time of its last packet.
  FrameReassembly r;
  EXPECT_FALSE(r.on_packet(7, 3, 100).done);
  EXPECT_FALSE(r.on_packet(8, 2, 110).done);
  EXPECT_FALSE(r.on_packet(7, 3, 120).done);
  EXPECT_EQ(r.in_progress(), 2u);
  const auto f8 = r.on_packet(8, 2, 130);
  ASSERT_TRUE(f8.done);
  EXPECT_EQ(f8.frame_index, 8u);
  EXPECT_EQ(f8.delivered_ps, 130u);
  EXPECT_EQ(r.in_progress(), 1u);
  const auto f7 = r.on_packet(7, 3, 150);
  ASSERT_TRUE(f7.done);
  EXPECT_EQ(f7.frame_index, 7u);
  EXPECT_EQ(f7.delivered_ps, 150u);
  EXPECT_EQ(r.in_progress(), 0u);
  // A single-packet frame completes at once and is never held.
  const auto f9 = r.on_packet(9, 1, 160);
  EXPECT_TRUE(f9.done);
  EXPECT_EQ(f9.delivered_ps, 160u);
  EXPECT_EQ(r.in_progress(), 0u);
}

TEST(FrameReassembly, HeldFramesStayBoundedByFramesInFlightOverALongRun) {
  // 50,000 frames of 4 packets, two frames in flight at a time with their packets
  // alternating: never more than two frames held, none left at the end, and the frames
  // feed the stream statistics in completion order.
  FrameReassembly r;
  FrameStreamStats s(100);
  uint64_t t = 0;
  size_t most_held = 0;
  for (uint64_t f = 0; f < 50000; f += 2) {
    for (int k = 0; k < 4; ++k) {
      for (uint64_t g : {f, f + 1}) {
        const auto done = r.on_packet(g, 4, t += 10);
        if (done.done) s.on_frame(done.frame_index, done.delivered_ps);
        most_held = std::max(most_held, r.in_progress());
      }
    }
  }
  EXPECT_EQ(most_held, 2u);
  EXPECT_EQ(r.in_progress(), 0u);
  EXPECT_EQ(s.frames(), 50000u);
  EXPECT_EQ(s.reordered(), 0u);
}

TEST(FrameReassembly, PacketCountsThatDisagreeOrAreZeroAreRefused) {
  FrameReassembly r;
  EXPECT_THROW(r.on_packet(1, 0, 10), std::invalid_argument);
  EXPECT_FALSE(r.on_packet(1, 3, 10).done);
  EXPECT_THROW(r.on_packet(1, 4, 20), std::invalid_argument);
  EXPECT_EQ(r.in_progress(), 1u);
}

}  // namespace

TEST(FrameStreamStats, WithCreationTimesEachFrameIsDueOnePeriodAfterItsCreation) {
  // Period 100; frames created at 0, 100, 200, 300, arriving at 5, 160, 330, 340.
  // Due at 100, 200, 300 (creation + period, the first anchored on its creation): frame 2
  // misses by 30 and re-bases the next deadline on its arrival (330 + 100 = 430), so
  // frame 3 at 340 is on time and the next deadline is 530.
  FrameStreamStats s(100);
  s.on_frame(0, 5, 0);
  s.on_frame(1, 160, 100);
  s.on_frame(2, 330, 200);
  s.on_frame(3, 340, 300);
  EXPECT_EQ(s.frames(), 4u);
  EXPECT_EQ(s.missed(), 1u);
  EXPECT_EQ(s.lateness_sum_ps(), 30u);
  EXPECT_EQ(s.next_deadline_ps(), 530u);
}

TEST(FrameStreamStats, AFirstFrameLaterThanOnePeriodAfterItsCreationMisses) {
  FrameStreamStats s(100);
  s.on_frame(0, 150, 0);
  EXPECT_EQ(s.missed(), 1u);
  EXPECT_EQ(s.lateness_sum_ps(), 50u);
  EXPECT_EQ(s.next_deadline_ps(), 250u);
}

// Seed 000 Sec. 3.5 never drops the first or last packet of a frame, so that a frame that
// lost packets on the way still arrives: its DMP is over delivered frames, this one included.
TEST(FrameReassembly, AFrameThatLostMiddlePacketsArrivesIncompleteWithItsLastPacket) {
  FrameReassembly r;
  EXPECT_FALSE(r.on_packet(0, 4, 10).done);
  EXPECT_FALSE(r.on_lost(0, 4));
  EXPECT_FALSE(r.on_lost(0, 4));
  const auto f0 = r.on_packet(0, 4, 40);
  ASSERT_TRUE(f0.done);
  EXPECT_TRUE(f0.incomplete);
  EXPECT_EQ(f0.delivered_ps, 40u);
  EXPECT_EQ(r.in_progress(), 0u);
  // Dropped before any packet of it arrived: the same, once its last packet is in.
  EXPECT_FALSE(r.on_lost(1, 2));
  const auto f1 = r.on_packet(1, 2, 50);
  ASSERT_TRUE(f1.done);
  EXPECT_TRUE(f1.incomplete);
  // A whole frame is not incomplete.
  EXPECT_FALSE(r.on_packet(2, 1, 60).incomplete);
}

TEST(FrameReassembly, AFrameWhoseLastAccountedPacketIsDroppedIsLostAndForgotten) {
  FrameReassembly r;
  EXPECT_FALSE(r.on_packet(0, 2, 10).done);
  EXPECT_TRUE(r.on_lost(0, 2));  // the last of its packets: it never arrives
  EXPECT_EQ(r.in_progress(), 0u);
  EXPECT_TRUE(r.on_lost(1, 1));
  EXPECT_EQ(r.in_progress(), 0u);
}

TEST(FrameStreamStats, IncompleteFramesAreJudgedAndCountedBesides) {
  // Period 100, frames created at 0, 100, 200; frame 1 lost a packet and arrives at 150,
  // on time; frame 2 arrives at 320, 20 late.
  FrameStreamStats s(100);
  s.on_frame(0, 50, 0);
  s.on_frame(1, 150, 100, true);
  s.on_frame(2, 320, 200);
  EXPECT_EQ(s.frames(), 3u);
  EXPECT_EQ(s.incomplete(), 1u);
  EXPECT_EQ(s.missed(), 1u);
  EXPECT_EQ(s.lateness_sum_ps(), 20u);
  FrameClassStats c;
  c.add(s);
  EXPECT_EQ(c.incomplete(), 1u);
}

TEST(FrameStreamStats, ALostFramesDeadlineSlotPassesSoTheNextFrameIsNotJudgedAPeriodEarly) {
  // Period 100, frames created at 0, 100, 200, each arriving 60 after its creation; frame 1
  // never arrives. Frame 2 is due at 300 (frame 0's deadline 100, + 100 for the lost frame's
  // slot, + 100), so its arrival at 260 is on time. Judged against the lost frame's deadline
  // (200) it would count missed by 60.
  FrameStreamStats s(100);
  s.on_frame(0, 60, 0);
  s.on_lost_frame();
  s.on_frame(2, 260, 200);
  EXPECT_EQ(s.frames(), 2u);
  EXPECT_EQ(s.lost(), 1u);
  EXPECT_EQ(s.missed(), 0u);
  EXPECT_EQ(s.next_deadline_ps(), 400u);
  // Before any frame arrived there is no deadline to move: the first arrival anchors it.
  FrameStreamStats t(100);
  t.on_lost_frame();
  t.on_frame(1, 160, 100);
  EXPECT_EQ(t.missed(), 0u);
  EXPECT_EQ(t.next_deadline_ps(), 300u);
}
