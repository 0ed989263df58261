// Congestion marking of the InfiniBand CC annex (IBA Vol 1 Annex A10), switch.ecn policy
// cc_annex: an output whose queue is over Threshold marks FECN when it is the root of the
// congestion, as a victim (idle for lack of credits) only if its port is in Victim_Mask;
// packets under Packet_Size are not marked, and Marking_Rate eligible packets pass unmarked
// between two marks.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <systemc>

#include "common/fabrics.h"
#include "models/switch/ecn_marker.h"
#include "platform/builder/fabric.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::sc_time;

namespace {

// Counts, per flow, the packets delivered and those delivered with FECN.
class MarkCount : public sim::FabricObserver {
 public:
  void on_deliver(const ib::Packet& p, uint32_t, uint64_t) override {
    delivered[p.flow]++;
    if (p.bth.fecn) marked[p.flow]++;
  }
  std::map<uint32_t, uint64_t> delivered, marked;
};

sw::EcnConfig annex(uint8_t threshold, uint16_t marking_rate = 0) {
  sw::EcnConfig c;
  c.policy = sw::MarkingPolicy::cc_annex;
  c.threshold = threshold;
  c.marking_rate = marking_rate;
  return c;
}

// One switch: h1 and h2 saturate h3 (output 3 is the root: h3 takes whatever comes); h4
// sends lightly to h2, whose output has no queue. Packets of 2048 bytes of payload, input
// buffers of four 2112-byte packets (132 credits per VL).
Scenario incast(const sw::EcnConfig& ecn, uint32_t h2_payload = 2048) {
  Scenario s = tb::basic_scenario(tb::star(4));
  s.switch_cfg.ecn = ecn;
  s.flows.push_back(tb::saturating_flow("heavy1", "h1", "h3"));
  s.flows.push_back(tb::saturating_flow("heavy2", "h2", "h3", h2_payload));
  FlowConfig light = tb::saturating_flow("light", "h4", "h2");
  light.generator = GeneratorKind::constant;
  light.load = 0.3;
  s.flows.push_back(light);
  s.duration = sc_time(5, SC_MS);
  return s;
}

struct Marks {
  MarkCount mc;
  uint64_t marked_at[5] = {};  // per port of s1: fecn_marked
  uint64_t sent_at[5] = {};    // per port of s1: packets_tx
};

void run(const Scenario& s, Marks& r) {
  Fabric f(s);
  f.probe().attach(&r.mc);
  sc_core::sc_start(s.duration);
  const uint32_t node = s.topology.find("s1");
  ASSERT_NE(node, topo::Topology::npos);
  for (uint16_t p = 1; p <= 4; ++p) {
    if (!f.switch_at(node)->attached(p)) continue;
    r.marked_at[p] = f.switch_at(node)->counters(p).fecn_marked;
    r.sent_at[p] = f.switch_at(node)->counters(p).packets_tx;
  }
}

}  // namespace

// ---- the marker's rules, one transmission at a time --------------------------------------

TEST(EcnAnnexMarker, ThresholdIsAFractionOfOneInputVlBuffer) {
  // (16 - t)/16 of a 132-credit buffer: 15 -> 8 credits, 8 -> 66, 1 -> 123.
  EXPECT_EQ(sw::EcnMarker(annex(15), 4).threshold_blocks(132), 8u);
  EXPECT_EQ(sw::EcnMarker(annex(8), 4).threshold_blocks(132), 66u);
  EXPECT_EQ(sw::EcnMarker(annex(1), 4).threshold_blocks(132), 123u);
  sw::EcnMarker m(annex(8), 4);
  EXPECT_FALSE(m.annex_transmit(1, 66, 132, 33, false));  // at the threshold: not over it
  EXPECT_TRUE(m.annex_transmit(1, 67, 132, 33, false));
}

TEST(EcnAnnexMarker, ThresholdZeroNeverMarks) {
  sw::EcnMarker m(annex(0), 4);
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(m.annex_transmit(1, 10'000, 132, 33, false));
}

TEST(EcnAnnexMarker, MarkingRateNMarksOneInNPlusOneEligiblePacketsStartingWithTheFirst) {
  sw::EcnMarker m(annex(15, 3), 4);
  int marks = 0;
  for (int i = 0; i < 100; ++i) {
    const bool mark = m.annex_transmit(2, 100, 132, 33, false);
    EXPECT_EQ(mark, i % 4 == 0) << "packet " << i;
    marks += mark;
    // Packets that are not eligible do not count towards the rate.
    EXPECT_FALSE(m.annex_transmit(2, 0, 132, 33, false));
  }
  EXPECT_EQ(marks, 25);
  // Each output counts for itself.
  EXPECT_TRUE(m.annex_transmit(3, 100, 132, 33, false));
}

TEST(EcnAnnexMarker, VictimMarksOnlyWhenItsPortIsInTheVictimMask) {
  sw::EcnConfig c = annex(15);
  c.victim_mask = {2};
  sw::EcnMarker m(c, 4);
  EXPECT_FALSE(m.annex_transmit(1, 100, 132, 33, true));  // credit-starved, not in the mask
  EXPECT_TRUE(m.annex_transmit(1, 100, 132, 33, false));  // the same port as a root
  EXPECT_TRUE(m.annex_transmit(2, 100, 132, 33, true));
}

TEST(EcnAnnexMarker, PacketsUnderPacketSizeAreNotMarked) {
  sw::EcnConfig c = annex(15);
  c.packet_size = 10;
  sw::EcnMarker m(c, 4);
  EXPECT_FALSE(m.annex_transmit(1, 100, 132, 9, false));
  EXPECT_TRUE(m.annex_transmit(1, 100, 132, 10, false));
}

// ---- in a fabric --------------------------------------------------------------------------

TEST(EcnAnnexMarking, ThresholdZeroMarksNothingUnderCongestion) {
  Marks r;
  run(incast(annex(0)), r);
  for (auto& [flow, n] : r.mc.marked) EXPECT_EQ(n, 0u) << "flow " << flow;
  // The output was congested all along: two saturating inputs share it.
  EXPECT_GT(r.mc.delivered[0], 1000u);
  EXPECT_GT(r.mc.delivered[1], 1000u);
}

TEST(EcnAnnexMarking, RootOutputMarksThePacketsLeavingWhileOthersWait) {
  Marks r;
  run(incast(annex(15)), r);
  // Output 3 always has the other input's packet waiting behind the one leaving: every
  // transmission but the very first ones is eligible, and marking_rate 0 marks them all.
  EXPECT_GT(r.sent_at[3], 2000u);  // 5 ms of a 1 GB/s link: 2400 packets of 2082 bytes
  EXPECT_GE(r.marked_at[3], r.sent_at[3] - 4);
  EXPECT_LE(r.marked_at[3], r.sent_at[3]);
  EXPECT_GT(r.mc.marked[0], r.mc.delivered[0] * 99 / 100);
  EXPECT_GT(r.mc.marked[1], r.mc.delivered[1] * 99 / 100);
  // The light flow's output never has a queue behind the packet leaving.
  EXPECT_GT(r.mc.delivered[2], 100u);
  EXPECT_EQ(r.mc.marked[2], 0u);
  EXPECT_EQ(r.marked_at[2], 0u);
}

TEST(EcnAnnexMarking, MarkingRateFourMarksOneInFiveTransmissions) {
  Marks r;
  run(incast(annex(15, 4)), r);
  // The countdown makes it exact over the eligible packets (all but the first few).
  const double fraction = static_cast<double>(r.marked_at[3]) / static_cast<double>(r.sent_at[3]);
  EXPECT_NEAR(fraction, 1.0 / 5, 0.002) << r.marked_at[3] << " of " << r.sent_at[3];
  uint64_t delivered_marked = r.mc.marked[0] + r.mc.marked[1];
  EXPECT_LE(delivered_marked, r.marked_at[3]);
  EXPECT_GE(delivered_marked + 8, r.marked_at[3]);  // the rest are still in flight
}

TEST(EcnAnnexMarking, PacketsSmallerThanPacketSizeAreNeverMarked) {
  sw::EcnConfig c = annex(15);
  c.packet_size = 10;  // 640 bytes: h1's 2048-byte packets are eligible, h2's 256-byte ones not
  Marks r;
  run(incast(c, 256), r);
  EXPECT_GT(r.mc.delivered[1], 1000u);
  EXPECT_EQ(r.mc.marked[1], 0u);
  EXPECT_GT(r.mc.marked[0], r.mc.delivered[0] * 9 / 10);
}

namespace {

// Two switches: h1 and h2 on s1 send through s1's port 3 to s2, where h4 competes with them
// for h3's output. s2's output to h3 is the root; s1's port 3 is offered twice its link but
// gets only what s2 forwards, so it waits for s2's credits before nearly every packet: a
// victim.
topo::Topology two_switches() {
  topo::Topology t;
  t.source = "test:two_switches";
  const auto node = [&](const std::string& name, topo::NodeKind kind, uint16_t ports, uint16_t lid) {
    topo::Node n;
    n.name = name;
    n.kind = kind;
    n.num_ports = ports;
    n.lid = lid;
    t.nodes.push_back(n);
    return static_cast<uint32_t>(t.nodes.size() - 1);
  };
  const auto cable = [&](uint32_t a, uint16_t pa, uint32_t b, uint16_t pb) {
    t.links.push_back(topo::Link{{a, pa}, {b, pb}, link::LinkConfig{}});
  };
  const uint32_t s1 = node("s1", topo::NodeKind::switch_node, 4, 1);
  const uint32_t s2 = node("s2", topo::NodeKind::switch_node, 4, 2);
  const uint32_t h[4] = {node("h1", topo::NodeKind::endpoint, 1, 11), node("h2", topo::NodeKind::endpoint, 1, 12),
                         node("h3", topo::NodeKind::endpoint, 1, 13), node("h4", topo::NodeKind::endpoint, 1, 14)};
  cable(h[0], 1, s1, 1);
  cable(h[1], 1, s1, 2);
  cable(s1, 3, s2, 1);
  cable(h[2], 1, s2, 2);
  cable(h[3], 1, s2, 3);
  t.index();
  return t;
}

Scenario victim(const sw::EcnConfig& ecn) {
  Scenario s = tb::basic_scenario(two_switches());
  s.switch_cfg.ecn = ecn;
  s.flows.push_back(tb::saturating_flow("a", "h1", "h3"));
  s.flows.push_back(tb::saturating_flow("b", "h2", "h3"));
  s.flows.push_back(tb::saturating_flow("c", "h4", "h3"));
  s.duration = sc_time(5, SC_MS);
  return s;
}

}  // namespace

// One fabric per test process: the two halves of "a victim marks only if in Victim_Mask".
TEST(EcnAnnexMarking, CreditStarvedVictimPortNotInVictimMaskDoesNotMark) {
  Marks r;
  run(victim(annex(15)), r);
  // s1's port 3 has a queue (two inputs feed it) and sends over a thousand packets, but as a
  // victim: only the packets before s2's buffer first filled left with credits at hand.
  RecordProperty("marked", std::to_string(r.marked_at[3]) + " of " + std::to_string(r.sent_at[3]));
  EXPECT_GT(r.sent_at[3], 1000u);
  EXPECT_LE(r.marked_at[3], 8u);
}

TEST(EcnAnnexMarking, CreditStarvedVictimPortInVictimMaskMarks) {
  sw::EcnConfig c = annex(15);
  c.victim_mask = {3};
  Marks r;
  run(victim(c), r);
  RecordProperty("marked", std::to_string(r.marked_at[3]) + " of " + std::to_string(r.sent_at[3]));
  EXPECT_GT(r.sent_at[3], 1000u);
  EXPECT_GT(r.marked_at[3], r.sent_at[3] * 99 / 100);
}
