// Congestion marking in the switch (seed 004 Sec. 5): which packets leave with FECN set
// under each policy, and the cnt1/cnt2 counters that mark at transmission.
#include <gtest/gtest.h>

#include <map>
#include <systemc>

#include "common/fabrics.h"
#include "models/switch/ecn_marker.h"
#include "platform/builder/fabric.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_US;
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

// One switch: h1 and h2 saturate h4; h3 sends lightly to h4 (its buffer never fills); the
// victim h5 -> h6 crosses the switch to an idle output.
Scenario contention(sw::MarkingPolicy policy) {
  Scenario s = tb::basic_scenario(tb::star(6));
  s.switch_cfg.ecn.policy = policy;
  s.flows.push_back(tb::saturating_flow("heavy1", "h1", "h4"));
  s.flows.push_back(tb::saturating_flow("heavy2", "h2", "h4"));
  FlowConfig light = tb::saturating_flow("light", "h3", "h4");
  light.generator = GeneratorKind::constant;
  light.load = 0.1;
  s.flows.push_back(light);
  FlowConfig victim = tb::saturating_flow("victim", "h5", "h6");
  victim.generator = GeneratorKind::constant;
  victim.load = 0.5;
  s.flows.push_back(victim);
  s.duration = sc_time(5, SC_MS);
  return s;
}

}  // namespace

TEST(EcnMarker, InputTriggerMarksTheNextCnt1TransmissionsOfThatOutput) {
  sw::EcnConfig cfg;
  cfg.policy = sw::MarkingPolicy::input_triggered;
  sw::EcnMarker m(cfg, 4);
  for (int i = 0; i < 5; ++i) m.waiting(3);
  m.waiting(2);
  EXPECT_FALSE(m.transmit(3));  // nothing triggered yet
  m.trigger(3);                 // cnt2 <- cnt1 = 4
  EXPECT_EQ(m.cnt2(3), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(m.transmit(3)) << i;
  m.waiting(3);
  EXPECT_FALSE(m.transmit(3));  // cnt2 counted down to 0
  EXPECT_FALSE(m.transmit(2));  // another output is not congested
  EXPECT_EQ(m.cnt1(3), 0u);
}

TEST(EcnMarker, OutputThresholdTriggersWhenMoreThanThresholdWait) {
  sw::EcnConfig cfg;
  cfg.policy = sw::MarkingPolicy::input_output_triggered;
  cfg.output_threshold = 3;
  sw::EcnMarker m(cfg, 2);
  for (int i = 0; i < 3; ++i) m.waiting(1);
  EXPECT_EQ(m.cnt2(1), 0u);  // 3 waiting: not above the threshold
  m.waiting(1);
  EXPECT_EQ(m.cnt2(1), 4u);  // the 4th: cnt2 <- cnt1
  cfg.policy = sw::MarkingPolicy::input_triggered;
  sw::EcnMarker only_input(cfg, 2);
  for (int i = 0; i < 10; ++i) only_input.waiting(1);
  EXPECT_EQ(only_input.cnt2(1), 0u);
}

TEST(EcnMarking, NaiveMarksOnlyPacketsOfFullBuffers) {
  Scenario s = contention(sw::MarkingPolicy::naive);
  Fabric f(s);
  MarkCount mc;
  f.probe().attach(&mc);
  sc_core::sc_start(s.duration);
  EXPECT_GT(mc.marked[0] + mc.marked[1], 100u);  // the saturating inputs fill and get marked
  EXPECT_EQ(mc.marked[2], 0u);                   // h3's buffer never fills
  EXPECT_EQ(mc.marked[3], 0u);                   // the victim's output is not congested
  EXPECT_GT(mc.delivered[2], 0u);
}

TEST(EcnMarking, InputTriggeredAlsoMarksFlowsWhoseBuffersAreNotFull) {
  // Sec. 5: all generating packets are marked, also those of inputs that are not full,
  // which is what makes the policy fairer than naive marking.
  Scenario s = contention(sw::MarkingPolicy::input_triggered);
  Fabric f(s);
  MarkCount mc;
  f.probe().attach(&mc);
  sc_core::sc_start(s.duration);
  EXPECT_GT(mc.marked[0] + mc.marked[1], 100u);
  EXPECT_GT(mc.marked[2], 0u);
  EXPECT_EQ(mc.marked[3], 0u);
  // Marks are counted where they are made: at output h4's port.
  const uint32_t sw_node = s.topology.find("s1");
  ASSERT_NE(sw_node, topo::Topology::npos);
  uint64_t delivered_marked = 0;
  for (auto& [flow, n] : mc.marked) delivered_marked += n;
  const uint64_t counted = f.switch_at(sw_node)->counters(4).fecn_marked;
  EXPECT_GE(counted, delivered_marked);
  EXPECT_LE(counted, delivered_marked + 8);  // the rest are still in flight
}

// Three flows at 40 % each oversubscribe h4 by 20 % for 400 us: the queue for the output
// grows by one packet every ~5 packet times, while each input buffer (64 packets) stays far
// from full. Only the output-triggered part of input_output_triggered can see that.
static Scenario building_queue(sw::MarkingPolicy policy) {
  Scenario s = tb::basic_scenario(tb::star(4));
  s.switch_cfg.vl_buffer_bytes = s.endpoint_cfg.vl_buffer_bytes = 64 * 2112;
  s.switch_cfg.ecn.policy = policy;
  s.switch_cfg.ecn.output_threshold = 8;
  for (const char* h : {"h1", "h2", "h3"}) {
    FlowConfig f = tb::saturating_flow(std::string("f") + h, h, "h4");
    f.generator = GeneratorKind::constant;
    f.load = 0.4;
    f.stop = sc_time(400, SC_US);
    s.flows.push_back(f);
  }
  s.duration = sc_time(1, SC_MS);
  return s;
}

TEST(EcnMarking, OutputThresholdMarksABuildingQueueBeforeAnyBufferFills) {
  const Scenario s = building_queue(sw::MarkingPolicy::input_output_triggered);
  Fabric fabric(s);
  MarkCount mc;
  fabric.probe().attach(&mc);
  sc_core::sc_start(s.duration);
  uint64_t marked = 0;
  for (auto& [flow, n] : mc.marked) marked += n;
  EXPECT_GT(marked, 10u);
}

TEST(EcnMarking, InputTriggeredAloneDoesNotMarkAQueueThatFillsNoBuffer) {
  const Scenario s = building_queue(sw::MarkingPolicy::input_triggered);
  Fabric fabric(s);
  MarkCount mc;
  fabric.probe().attach(&mc);
  sc_core::sc_start(s.duration);
  for (auto& [flow, n] : mc.marked) EXPECT_EQ(n, 0u) << "flow " << flow;
  EXPECT_GT(mc.delivered[0], 50u);  // 400 us at 40 % of 1 GB/s: about 77 packets of 2082 bytes
}

TEST(EcnMarking, NoPolicyMarksNothing) {
  Scenario s = contention(sw::MarkingPolicy::none);
  Fabric f(s);
  MarkCount mc;
  f.probe().attach(&mc);
  sc_core::sc_start(s.duration);
  for (auto& [flow, n] : mc.marked) EXPECT_EQ(n, 0u);
  EXPECT_GT(mc.delivered[0], 1000u);
}
