// Packet lifetimes in the switch (IBA 18.2.5.4; seed 000 Sec. 3.5): the head-of-queue and
// switch lifetimes drop exactly the packets that outlive them, at the times the codes give,
// even at an output that nothing else wakes; the credits come back; selective dropping
// spares control, I-frame packets and the ends of P and B frames; a min-hop ring that
// deadlocks keeps running with lifetimes and the drops add up per flow and per port.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <fstream>
#include <sstream>
#include <systemc>

#include "common/fabrics.h"
#include "platform/builder/fabric.h"
#include "platform/builder/runner.h"
#include "platform/metrics/frame_metrics.h"
#include "common/testing.h"
#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_NS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

constexpr uint64_t kSerPs = 2'082'000;     // a 2048-byte UD SEND (2082 wire bytes) at 4X SDR
constexpr uint64_t kPropPs = 5'000;        // 1 m of cable
constexpr uint64_t kPipelinePs = 100'000;  // SwitchConfig default
constexpr uint64_t kLifePs = 8'192'000;    // code 1: 4.096 us x 2

uint8_t code(ib::DropReason r) { return static_cast<uint8_t>(r); }

FlowConfig one_packet(const std::string& name, const std::string& src, const std::string& dst) {
  FlowConfig f = tb::saturating_flow(name, src, dst);
  f.generator = GeneratorKind::constant;
  f.load = 0.01;  // the next packet would come long after stop
  f.start = sc_core::SC_ZERO_TIME;
  f.stop = sc_time(1, SC_NS);
  return f;
}

// h_src - s1 - s2 - h_dst with three one-packet flows h_src -> h_dst: the packets leave
// h_src back to back and cross s1 without waiting (cut-through), so packet k's head is in s2
// at k T + 2 prop + pipeline (s1's) and requests s2's output to h_dst (port 2) a pipeline later.
// That output gets no credits: nothing but a lifetime can move its packets.
struct BlockedChain {
  static constexpr uint32_t kS1 = 0, kS2 = 1;
  static Scenario scenario() {
    Scenario s = tb::basic_scenario(tb::chain(2));
    for (int k = 0; k < 3; ++k) s.flows.push_back(one_packet("p" + std::to_string(k), "h_src", "h_dst"));
    return s;
  }
  static void block(Fabric& f) { f.switch_at(kS2)->set_peer_buffer(2, 0, 0); }
  static uint64_t head_in_s2_ps(int k) { return k * kSerPs + 2 * kPropPs + kPipelinePs; }
  static uint64_t requests_output_ps(int k) { return head_in_s2_ps(k) + kPipelinePs; }
};

std::vector<uint64_t> drop_times(const metrics::Recorder& rec, ib::DropReason why) {
  std::vector<uint64_t> t;
  for (const metrics::PacketRecord& r : rec.packets())
    if (r.drop == code(why)) t.push_back(r.done_ps);
  std::sort(t.begin(), t.end());
  return t;
}

void expect_credits_home(Fabric& f) {
  // The credits s1 holds for s2's buffer are back to the whole buffer, and s2 holds nothing.
  EXPECT_EQ(f.switch_at(BlockedChain::kS1)->credits_held(2, 0), f.scenario().switch_cfg.vl_buffer_bytes / 64);
  EXPECT_EQ(f.switch_at(BlockedChain::kS2)->buffered_packets(), 0u);
}

}  // namespace

TEST(Lifetimes, LifetimeCodesAreIbaPowersOfTwoAndTwentyIsInfinite) {
  EXPECT_EQ(sw::lifetime_ps(0), 4'096'000u);
  EXPECT_EQ(sw::lifetime_ps(19), uint64_t{4'096'000} << 19);  // about 2.1 s
  EXPECT_EQ(sw::lifetime_ps(20), sw::kNoLifetime);
  EXPECT_EQ(sw::lifetime_ps(31), sw::kNoLifetime);
}

TEST(Lifetimes, HoqLifetimeDropsEachHeadOneLifetimeAfterItBecameHeadAtABlockedOutput) {
  Scenario s = BlockedChain::scenario();
  sw::LifetimeOverride o;
  o.switch_name = "s2";
  o.port = 2;
  o.hoq_life = 1;
  s.switch_cfg.lifetime_overrides.push_back(o);
  Fabric f(s);
  BlockedChain::block(f);
  sc_core::sc_start(sc_time(100, SC_US));
  f.finish();
  // Packet 0 is head from when it requested the output; each next one from the drop before
  // it (all three are queued by then): drops at t0 + L, t0 + 2L, t0 + 3L. No other event
  // wakes the output, so these are the expiries' own.
  const uint64_t t0 = BlockedChain::requests_output_ps(0);
  EXPECT_EQ(drop_times(f.recorder(), ib::DropReason::hoq_lifetime),
            (std::vector<uint64_t>{t0 + kLifePs, t0 + 2 * kLifePs, t0 + 3 * kLifePs}));
  EXPECT_EQ(f.recorder().dropped(), 3u);
  EXPECT_EQ(f.switch_at(BlockedChain::kS2)->counters(2).xmit_discards, 3u);
  expect_credits_home(f);
}

TEST(Lifetimes, HoqLifetimeOnlyOnTheOverriddenSwitchLeavesOthersAlone) {
  // The same override on s1, whose outputs are never blocked: nothing expires there, and s2
  // (infinite lifetimes) holds all three packets at the end.
  Scenario s = BlockedChain::scenario();
  sw::LifetimeOverride o;
  o.switch_name = "s1";
  o.hoq_life = 0;
  s.switch_cfg.lifetime_overrides.push_back(o);
  Fabric f(s);
  BlockedChain::block(f);
  sc_core::sc_start(sc_time(100, SC_US));
  f.finish();
  EXPECT_EQ(f.recorder().dropped(), 0u);
  EXPECT_EQ(f.switch_at(BlockedChain::kS2)->buffered_packets(), 3u);
}

TEST(Lifetimes, SwitchLifetimeDropsEachPacketOneLifetimeAfterItsHeadCameIn) {
  Scenario s = BlockedChain::scenario();
  s.switch_cfg.switch_life = 1;
  Fabric f(s);
  BlockedChain::block(f);
  sc_core::sc_start(sc_time(100, SC_US));
  f.finish();
  std::vector<uint64_t> want;
  for (int k = 0; k < 3; ++k) want.push_back(BlockedChain::head_in_s2_ps(k) + kLifePs);
  EXPECT_EQ(drop_times(f.recorder(), ib::DropReason::switch_lifetime), want);
  EXPECT_EQ(f.recorder().dropped(), 3u);
  expect_credits_home(f);
}

TEST(Lifetimes, InfiniteLifetimesDropNothingAndTheBlockedPacketsStay) {
  Fabric f(BlockedChain::scenario());
  BlockedChain::block(f);
  sc_core::sc_start(sc_time(100, SC_US));
  f.finish();
  EXPECT_EQ(f.recorder().dropped(), 0u);
  EXPECT_EQ(f.switch_at(BlockedChain::kS2)->buffered_packets(), 3u);
}

TEST(Lifetimes, OverrideOfAnUnknownSwitchIsRefusedNamingTheKey) {
  Scenario s = BlockedChain::scenario();
  sw::LifetimeOverride o;
  o.switch_name = "nope";
  o.hoq_life = 3;
  s.switch_cfg.lifetime_overrides.push_back(o);
  try {
    Fabric f(s);
    FAIL() << "an override of an unknown switch was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("switch.lifetime_overrides[0].switch"), std::string::npos) << e.what();
  }
}

namespace {

// Checks every drop against seed 000 Sec. 3.5's rule and counts them.
struct DropCheck : sim::FabricObserver {
  uint64_t drops = 0, video_drops = 0, bad = 0;
  void on_inject(const ib::Packet&, uint64_t) override {}
  void on_deliver(const ib::Packet&, uint32_t, uint64_t) override {}
  void on_transmit(uint32_t, uint16_t, const ib::Packet&, uint64_t, uint64_t) override {}
  void on_drop(const ib::Packet& p, uint32_t, uint64_t) override {
    ++drops;
    if (p.frame != ib::kNoFrame) ++video_drops;
    if (p.lrh.vl == ib::kVl15 || p.frame_type == 'I' ||
        (p.frame != ib::kNoFrame && (p.frame_piece == 0 || p.frame_piece + 1 == p.frame_packets)))
      ++bad;
  }
};

// h1, h2, h3 on one switch; h2's cable is 1X SDR (a quarter of the others' rate).
topo::Topology slow_sink_star() {
  topo::Topology t = tb::star(3);
  t.links[1].cfg.width = link::Width::x1;
  t.index();
  return t;
}

}  // namespace

TEST(Lifetimes, SelectivePolicyNeverDropsIFramesOrFrameEndsButDropsEligiblePackets) {
  // A video stream and a saturating best-effort flow share h2's 1X link, where a 2048-byte
  // packet takes 8.3 us: the head behind it outlives a head-of-queue lifetime of 4.096 us.
  // Frames of 256-byte packets have many middle packets.
  Scenario s = tb::basic_scenario(slow_sink_star());
  FlowConfig v = tb::saturating_flow("video", "h1", "h2", 256);
  v.generator = GeneratorKind::video;
  v.video_bit_rate = 10e6;
  v.frame_period = sc_time(1, SC_MS);
  s.flows.push_back(v);
  s.flows.push_back(tb::saturating_flow("be", "h3", "h2", 2048));
  s.switch_cfg.hoq_life = 0;
  s.switch_cfg.drop_policy = sw::DropPolicy::selective;
  s.duration = sc_time(20, SC_MS);
  DropCheck check;  // outlives the fabric, which may still report while it is torn down
  Fabric f(s);
  f.probe().attach(&check);
  sc_core::sc_start(s.duration);
  f.finish();
  EXPECT_EQ(check.bad, 0u);
  EXPECT_GT(check.video_drops, 0u);
  EXPECT_GT(check.drops - check.video_drops, 0u);
  EXPECT_EQ(check.drops, f.recorder().drops_by_reason().at(code(ib::DropReason::hoq_lifetime)));
  // Sec. 3.5 keeps every frame's last packet, so each frame that lost packets still arrives
  // and is judged (docs/realtime_metrics.md): incomplete, never lost.
  const metrics::FrameStreamStats* video = f.recorder().video_stats(0);
  ASSERT_NE(video, nullptr);
  EXPECT_GT(video->incomplete(), 0u);
  EXPECT_LE(video->incomplete(), video->frames());
  EXPECT_EQ(video->lost(), 0u);
}

TEST(Lifetimes, DropPolicyAllDropsFrameEndsToo) {
  // The same fabric with policy all: some dropped packet is one selective would have kept,
  // so the test above is not passing for want of such packets reaching an expiry.
  Scenario s = tb::basic_scenario(slow_sink_star());
  FlowConfig v = tb::saturating_flow("video", "h1", "h2", 256);
  v.generator = GeneratorKind::video;
  v.video_bit_rate = 10e6;
  v.frame_period = sc_time(1, SC_MS);
  s.flows.push_back(v);
  s.flows.push_back(tb::saturating_flow("be", "h3", "h2", 2048));
  s.switch_cfg.hoq_life = 0;
  s.duration = sc_time(20, SC_MS);
  DropCheck check;  // outlives the fabric, which may still report while it is torn down
  Fabric f(s);
  f.probe().attach(&check);
  sc_core::sc_start(s.duration);
  f.finish();
  EXPECT_GT(check.bad, 0u);
}

TEST(Lifetimes, SelectiveDropEligibilityFollowsSeed000) {
  ib::Packet p;
  EXPECT_TRUE(sw::drop_eligible(p, sw::DropPolicy::selective));  // best effort
  p.lrh.vl = ib::kVl15;
  EXPECT_FALSE(sw::drop_eligible(p, sw::DropPolicy::selective));  // control
  EXPECT_TRUE(sw::drop_eligible(p, sw::DropPolicy::all));
  p.lrh.vl = 0;
  p.frame = 7;
  p.frame_packets = 3;
  for (char type : {'I', 'P', 'B'})
    for (uint32_t piece = 0; piece < 3; ++piece) {
      p.frame_type = type;
      p.frame_piece = piece;
      EXPECT_EQ(sw::drop_eligible(p, sw::DropPolicy::selective), type != 'I' && piece == 1) << type << piece;
    }
}

TEST(Lifetimes, AFrameWithADroppedPacketIsNotLeftInProgress) {
  metrics::FrameReassembly r;
  EXPECT_FALSE(r.on_packet(0, 3, 10).done);
  EXPECT_FALSE(r.on_lost(0, 3));
  const auto f0 = r.on_packet(0, 3, 20);  // its last packet: the frame arrives, incomplete
  EXPECT_TRUE(f0.done && f0.incomplete);
  EXPECT_EQ(r.in_progress(), 0u);
  EXPECT_FALSE(r.on_lost(1, 2));
  EXPECT_TRUE(r.on_lost(1, 2));  // both dropped: lost, counted once
  EXPECT_EQ(r.in_progress(), 0u);
  EXPECT_TRUE(r.on_lost(2, 1));
  EXPECT_EQ(r.in_progress(), 0u);
}

namespace {

// Five switches in a ring, every host hk sending to h(k+2): min-hop routes two hops
// clockwise, a credit cycle round the ring (as tests/fabric/test_deadlock_watch.cpp).
Scenario deadlocking_ring() {
  Scenario s = tb::basic_scenario(tb::ring(5));
  s.routing = "minhop";
  for (int k = 0; k < 5; ++k)
    s.flows.push_back(tb::saturating_flow("f" + std::to_string(k), "h" + std::to_string(k),
                                          "h" + std::to_string((k + 2) % 5), 2048));
  s.duration = sc_time(2, SC_MS);
  s.deadlock_timeout = sc_time(100, SC_US);
  return s;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

TEST(Lifetimes, DeadlockingMinhopRingWithHoqLifetimeFinishesAndReportsItsDrops) {
  Scenario s = deadlocking_ring();
  s.switch_cfg.hoq_life = 2;  // 16.4 us, well below the watch's 100 us
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("ibvp-life-ring-" + std::to_string(getpid()))).string();
  RunOptions o;
  o.out_dir = dir;
  EXPECT_NO_THROW(run_scenario(s, o));
  const std::string summary = slurp(dir + "/summary.json");
  EXPECT_NE(summary.find("\"hoq_lifetime\""), std::string::npos) << summary;
  std::filesystem::remove_all(dir);
}

TEST(Lifetimes, DeadlockingMinhopRingWithInfiniteLifetimesIsReported) {
  EXPECT_THROW(run_scenario(deadlocking_ring(), RunOptions{}), DeadlockError);
}

TEST(Lifetimes, DeadlockWithOnlyIneligibleHeadsIsStillReported) {
  // Selective dropping of video whose every packet is an I-frame's: nothing may go, so the
  // lifetimes do not break the cycle and the watch must still say so.
  Scenario s = deadlocking_ring();
  s.switch_cfg.hoq_life = 2;
  s.switch_cfg.drop_policy = sw::DropPolicy::selective;
  for (FlowConfig& f : s.flows) {
    f.generator = GeneratorKind::video;
    f.video_gop = "I";
    f.video_bit_rate = 400e6;  // 1.7 MB frames every 100 us: far above the link rate, the ring fills
    f.frame_period = sc_time(100, SC_US);
  }
  EXPECT_THROW(run_scenario(s, RunOptions{}), DeadlockError);
}

TEST(Lifetimes, DropsPerFlowAndPerPortAddUpToTheRunsTotal) {
  Scenario s = deadlocking_ring();
  s.switch_cfg.hoq_life = 2;
  s.switch_cfg.switch_life = 3;
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  const metrics::Recorder& r = f.recorder();
  const auto& by = r.drops_by_reason();
  uint64_t lifetime = 0;
  for (ib::DropReason why : {ib::DropReason::hoq_lifetime, ib::DropReason::switch_lifetime})
    if (by.count(code(why))) lifetime += by.at(code(why));
  EXPECT_GT(lifetime, 0u);
  EXPECT_EQ(lifetime, r.dropped());
  uint64_t per_flow = 0;
  for (const metrics::FlowTotals& ft : r.flows()) per_flow += ft.dropped;
  EXPECT_EQ(per_flow, r.dropped());
  uint64_t per_port = 0;
  for (uint32_t n = 0; n < 5; ++n)
    for (uint16_t p = 1; p <= 3; ++p) per_port += f.switch_at(n)->counters(p).xmit_discards;
  EXPECT_EQ(per_port, r.dropped());
  EXPECT_EQ(r.injected(), r.delivered() + r.dropped() + f.packets_in_flight());
}

TEST(Lifetimes, ExampleConfigLoadsAndAnOverrideThatChangesNothingIsRefused) {
  const Scenario s = load_scenario(ibvp::testing::source_path("configs/examples/lifetimes.yaml"));
  EXPECT_EQ(s.switch_cfg.hoq_life, 4);
  EXPECT_EQ(s.switch_cfg.drop_policy, sw::DropPolicy::selective);
  ASSERT_EQ(s.switch_cfg.lifetime_overrides.size(), 2u);
  EXPECT_EQ(s.switch_cfg.lifetime_overrides[1].switch_life, 10);
  try {
    load_scenario(ibvp::testing::source_path("configs/examples/lifetimes.yaml"),
                  {"switch.lifetime_overrides=[{switch: s0_0, port: 1}]"});
    FAIL() << "an override without a lifetime was accepted";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("lifetime_overrides[0]"), std::string::npos) << m;
  }
}

namespace {

// Every delivered video packet's frame, position and type.
struct FrameTags : sim::FabricObserver {
  std::map<uint32_t, std::vector<uint32_t>> pieces;  // frame -> positions delivered
  std::map<uint32_t, std::set<char>> types;
  void on_inject(const ib::Packet&, uint64_t) override {}
  void on_drop(const ib::Packet&, uint32_t, uint64_t) override {}
  void on_transmit(uint32_t, uint16_t, const ib::Packet&, uint64_t, uint64_t) override {}
  void on_deliver(const ib::Packet& p, uint32_t, uint64_t) override {
    if (p.frame == ib::kNoFrame) return;
    pieces[p.frame].push_back(p.frame_piece);
    types[p.frame].insert(p.frame_type);
  }
};

}  // namespace

class VideoTags : public ::testing::TestWithParam<EndpointModel> {};

TEST_P(VideoTags, VideoPacketsCarryTheirFramesTypeAndPositionOnBothEndpointModels) {
  // Frames of 3, 2 and 1 packets of 2048 bytes, typed I, P, B by the trace.
  Scenario s = tb::basic_scenario(tb::star(2));
  s.endpoint_model = GetParam();
  if (s.endpoint_model == EndpointModel::hca) {
    s.hca_host.flow_transport = FlowTransport::ud;
    s.outputs.rate_window = sc_core::SC_ZERO_TIME;
  }
  FlowConfig v = tb::saturating_flow("v", "h1", "h2");
  v.generator = GeneratorKind::video;
  v.video_frame_bytes = {5000, 3000, 1000};
  v.video_frame_types = "IPB";
  v.frame_period = sc_time(1, SC_MS);
  s.flows.push_back(v);
  s.duration = sc_time(5.5, SC_MS);
  FrameTags tags;  // outlives the fabric
  Fabric f(s);
  f.probe().attach(&tags);
  sc_core::sc_start(s.duration);
  f.finish();
  ASSERT_EQ(tags.pieces.size(), 6u);  // frames created at 0, 1, ..., 5 ms
  for (const auto& [frame, got] : tags.pieces) {
    std::vector<uint32_t> sorted = got;
    std::sort(sorted.begin(), sorted.end());
    std::vector<uint32_t> want(3 - frame % 3);
    for (uint32_t i = 0; i < want.size(); ++i) want[i] = i;
    EXPECT_EQ(sorted, want) << "frame " << frame;
    EXPECT_EQ(tags.types[frame], (std::set<char>{"IPB"[frame % 3]})) << "frame " << frame;
  }
}

INSTANTIATE_TEST_SUITE_P(Lifetimes, VideoTags, ::testing::Values(EndpointModel::fabric, EndpointModel::hca));
