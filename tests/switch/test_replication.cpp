// Multicast replication in the switch (seed 000 Sec. 3.6.1, switch.multicast_replication):
// every member gets each packet once and nobody else does, copies leave as the scheme says,
// and the input buffer frees only after the last copy. Each TEST is its own process (one
// SystemC kernel each), so a property that compares schemes is one test per scheme with the
// bound derived by hand; the cross-scheme latency trends are tests/python/test_multicast.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <systemc>

#include "common/fabrics.h"
#include "platform/builder/fabric.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_NS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

// 4X SDR: one byte per ns. A UD SEND Only of 2048 payload bytes is 2082 bytes on the wire;
// of 256 bytes, 290.
constexpr uint64_t kBigSerPs = 2082'000;

// Copies leaving the switch: (output port) -> start times, for one flow.
struct SwitchTx : sim::FabricObserver {
  uint32_t node = 0;
  uint32_t flow = 0;
  std::map<uint16_t, std::vector<uint64_t>> starts;
  void on_transmit(uint32_t n, uint16_t port, const ib::Packet& p, uint64_t s, uint64_t) override {
    if (n == node && p.flow == flow) starts[port].push_back(s);
  }
};

uint32_t switch_node(const Scenario& s) {
  for (uint32_t n = 0; n < s.topology.nodes.size(); ++n)
    if (s.topology.nodes[n].kind == topo::NodeKind::switch_node) return n;
  return 0;
}

// One switch, six hosts: h1 sends to the group {h2, h3, h4}; h5 and h6 are bystanders.
Scenario group_star(sw::Replication scheme, MulticastDelivery delivery = MulticastDelivery::replicate) {
  Scenario s = tb::basic_scenario(tb::star(6));
  s.switch_cfg.multicast_replication = scheme;
  MulticastGroupConfig g;
  g.name = "g";
  g.source = "h1";
  g.members = {"h2", "h3", "h4"};
  g.delivery = delivery;
  s.multicast.push_back(g);
  return s;
}

FlowConfig multicast_flow(double load, uint32_t payload = 256) {
  FlowConfig f = tb::saturating_flow("mc", "h1", "g", payload);
  f.generator = GeneratorKind::constant;
  f.load = load;
  return f;
}

FlowConfig one_packet(const std::string& name, const std::string& src, const std::string& dst, sc_time at,
                      uint32_t payload) {
  FlowConfig f = tb::saturating_flow(name, src, dst, payload);
  f.generator = GeneratorKind::constant;
  f.load = 0.001;
  f.start = at;
  f.stop = at + sc_time(1, SC_NS);
  return f;
}

// Every member receives each packet exactly once, nobody else any; counting the copies the
// switch made, nothing is lost or duplicated.
void expect_each_member_once(sw::Replication scheme) {
  Scenario s = group_star(scheme);
  s.flows.push_back(multicast_flow(0.3));
  // Unicast load on a member's output, so copies wait there.
  s.flows.push_back(tb::saturating_flow("bg", "h5", "h3", 2048));
  s.flows.back().generator = GeneratorKind::poisson;
  s.flows.back().load = 0.5;
  s.duration = sc_time(1, SC_MS);
  s.flows[0].stop = sc_time(800, SC_US);  // every packet has time to arrive
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  const metrics::Recorder& r = f.recorder();
  const uint64_t sent = r.flows()[0].injected;
  ASSERT_GT(sent, 100u);
  const std::vector<uint64_t> copies = r.member_copies(0);
  ASSERT_EQ(copies.size(), 3u);
  for (uint64_t c : copies) EXPECT_EQ(c, sent);
  EXPECT_EQ(r.non_member_copies(0), 0u);
  EXPECT_EQ(r.flows()[0].delivered, 3 * sent);
  EXPECT_EQ(r.replicated(), 2 * sent);  // three copies of each packet: two beyond the original
  const topo::Topology& t = f.scenario().topology;
  EXPECT_EQ(f.endpoint_at(t.find("h6"))->counters().packets_rx, 0u);
  EXPECT_EQ(r.injected() + r.replicated(), r.delivered() + r.dropped() + f.packets_in_flight());
  EXPECT_EQ(r.dropped(), 0u);
  EXPECT_EQ(f.packets_in_flight(), 0u);
  EXPECT_EQ(f.packets_buffered_in_switches(), 0u);
}

// h6 sends one 2048-byte packet to h3 at 0; h1's 256-byte multicast packet comes at 500 ns,
// while output 3 is busy until the unicast's tail has left (about 2.2 us).
SwitchTx* copies_behind_a_busy_output(Scenario& s, sw::Replication scheme, sw::Crossbar xbar) {
  s = group_star(scheme);
  s.switch_cfg.crossbar = xbar;
  s.flows.push_back(one_packet("mc", "h1", "g", sc_time(500, SC_NS), 256));
  s.flows.push_back(one_packet("uni", "h6", "h3", sc_core::SC_ZERO_TIME, 2048));
  auto* tx = new SwitchTx;
  tx->node = switch_node(s);
  tx->flow = 0;
  return tx;
}

}  // namespace

TEST(Replication, SynchronousEveryMemberReceivesEachPacketOnce) { expect_each_member_once(sw::Replication::synchronous); }
TEST(Replication, AsynchronousEveryMemberReceivesEachPacketOnce) { expect_each_member_once(sw::Replication::asynchronous); }
TEST(Replication, CentralBufferEveryMemberReceivesEachPacketOnce) {
  expect_each_member_once(sw::Replication::central_buffer);
}

TEST(Replication, SynchronousCopiesStartTogetherWhenTheLastOutputFrees) {
  Scenario s;
  std::unique_ptr<SwitchTx> tx(copies_behind_a_busy_output(s, sw::Replication::synchronous, sw::Crossbar::non_multiplexed));
  Fabric f(s);
  f.probe().attach(tx.get());
  sc_core::sc_start(sc_time(20, SC_US));
  f.finish();
  ASSERT_EQ(tx->starts.size(), 3u);
  const uint64_t t2 = tx->starts[2].at(0), t3 = tx->starts[3].at(0), t4 = tx->starts[4].at(0);
  EXPECT_EQ(t2, t3);
  EXPECT_EQ(t4, t3);
  // Not before the unicast has left output 3: it started at 100 ns + 5 ns at the latest.
  EXPECT_GE(t3, kBigSerPs);
}

TEST(Replication, AsynchronousCopiesStartWhenTheirOwnOutputsFree) {
  Scenario s;
  std::unique_ptr<SwitchTx> tx(copies_behind_a_busy_output(s, sw::Replication::asynchronous, sw::Crossbar::multiplexed));
  Fabric f(s);
  f.probe().attach(tx.get());
  sc_core::sc_start(sc_time(20, SC_US));
  f.finish();
  ASSERT_EQ(tx->starts.size(), 3u);
  const uint64_t t2 = tx->starts[2].at(0), t3 = tx->starts[3].at(0), t4 = tx->starts[4].at(0);
  // Outputs 2 and 4 are idle: their copies leave after the pipeline delay (head at 505 ns,
  // request at 605 ns), together through the multiplexed crossbar.
  EXPECT_EQ(t2, 605'000u);
  EXPECT_EQ(t4, 605'000u);
  // Output 3's copy waits for the unicast's tail: it left at 105 ns, ends 2082 ns later.
  EXPECT_EQ(t3, 105'000u + kBigSerPs);
  EXPECT_EQ(f.recorder().member_copies(0), (std::vector<uint64_t>{1, 1, 1}));
}

// Output 3 (to h3) sends h6's 2048-byte unicast from 105 ns to 2187 ns. Meanwhile h5's
// 2048-byte unicast to h3 requests output 3 (at 405 ns), then h1's 256-byte multicast packet's
// copy (at 605 ns). Returns when each of the two waiting packets starts on output 3.
struct Output3 : sim::FabricObserver {
  uint32_t node = 0;
  std::map<uint32_t, uint64_t> start_by_flow;
  void on_transmit(uint32_t n, uint16_t port, const ib::Packet& p, uint64_t s, uint64_t) override {
    if (n == node && port == 3 && !start_by_flow.count(p.flow)) start_by_flow[p.flow] = s;
  }
};
Output3 copy_and_unicast_waiting_at_output_3(bool priority) {
  Scenario s = group_star(sw::Replication::asynchronous);
  s.switch_cfg.crossbar = sw::Crossbar::multiplexed;
  s.switch_cfg.multicast_priority = priority;
  s.flows.push_back(one_packet("mc", "h1", "g", sc_time(500, SC_NS), 256));
  s.flows.push_back(one_packet("busy", "h6", "h3", sc_core::SC_ZERO_TIME, 2048));
  s.flows.push_back(one_packet("waiting", "h5", "h3", sc_time(300, SC_NS), 2048));
  Output3 tx;
  tx.node = switch_node(s);
  Fabric f(s);
  f.probe().attach(&tx);
  sc_core::sc_start(sc_time(20, SC_US));
  f.finish();
  EXPECT_EQ(f.recorder().member_copies(0), (std::vector<uint64_t>{1, 1, 1}));
  return tx;
}

// The multicast's input buffer (h1's port) holds the packet until the copy to h3 has left;// The multicast's input buffer (h1's port) holds the packet until the copy to h3 has left;
// with the central buffer it frees once the copies are written, long before.
uint32_t held_while_a_copy_waits(sw::Replication scheme) {
  Scenario s;
  std::unique_ptr<SwitchTx> tx(copies_behind_a_busy_output(s, scheme, sw::Crossbar::multiplexed));
  Fabric f(s);
  sc_core::sc_start(sc_time(1500, SC_NS));  // copies to h2 and h4 have left (605 + 290 ns)
  bool releasing = false;
  const uint32_t held = f.switch_at(switch_node(s))->input_held_blocks(1, 0, 1'500'000, releasing);
  sc_core::sc_start(sc_time(10, SC_US));
  bool r2 = false;
  EXPECT_EQ(f.switch_at(switch_node(s))->input_held_blocks(1, 0, 11'500'000, r2), 0u);
  EXPECT_EQ(f.recorder().member_copies(0), (std::vector<uint64_t>{1, 1, 1}));
  f.finish();
  return held;
}

TEST(Replication, AsynchronousInputIsHeldUntilTheLastCopyHasLeft) {
  // 290 bytes: 5 credit blocks.
  EXPECT_EQ(held_while_a_copy_waits(sw::Replication::asynchronous), 5u);
}

TEST(Replication, CentralBufferFreesTheInputOnceTheCopiesAreWritten) {
  EXPECT_EQ(held_while_a_copy_waits(sw::Replication::central_buffer), 0u);
}

TEST(Replication, ReplicatedUnicastSendsOnePacketPerMemberOnTheSourceLink) {
  Scenario s = group_star(sw::Replication::asynchronous, MulticastDelivery::replicated_unicast);
  s.flows.push_back(multicast_flow(0.2));
  s.flows[0].stop = sc_time(400, SC_US);
  s.duration = sc_time(600, SC_US);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  const metrics::Recorder& r = f.recorder();
  const std::vector<uint64_t> copies = r.member_copies(0);
  ASSERT_EQ(copies.size(), 3u);
  ASSERT_GT(copies[0], 50u);
  EXPECT_EQ(copies[1], copies[0]);
  EXPECT_EQ(copies[2], copies[0]);
  EXPECT_EQ(r.replicated(), 0u);  // the switch copies nothing
  EXPECT_EQ(f.endpoint_at(f.scenario().topology.find("h1"))->counters().packets_tx, 3 * copies[0]);
  EXPECT_EQ(r.non_member_copies(0), 0u);
}

TEST(Replication, AGroupWithoutReplicationUsesMembersTimesFewerSourcePackets) {
  Scenario s = group_star(sw::Replication::asynchronous);
  s.flows.push_back(multicast_flow(0.2));
  s.flows[0].stop = sc_time(400, SC_US);
  s.duration = sc_time(600, SC_US);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  const std::vector<uint64_t> copies = f.recorder().member_copies(0);
  EXPECT_EQ(f.endpoint_at(f.scenario().topology.find("h1"))->counters().packets_tx, copies.at(0));
}

// Seed 000 Sec. 3.6.2: the multicast VL's VLArb weight is the unicast weight times 1, n or
// log2 n for n destinations: with destinations: group, the largest group's members on every
// switch port and endpoint; with downstream (the default), the receivers behind each port.
namespace {
std::vector<uint32_t> weights_by_vl(const link::VlArbConfig& c) {
  std::vector<uint32_t> w(2, 0);
  for (const link::VlArbEntry& e : c.low) w.at(e.vl) += e.weight;
  return w;
}

Scenario weighted(MulticastAllocation a, std::vector<std::string> members) {
  Scenario s = group_star(sw::Replication::asynchronous);
  s.multicast[0].members = std::move(members);
  s.switch_cfg.data_vls = s.endpoint_cfg.data_vls = 2;
  s.switch_cfg.sl2vl = s.endpoint_cfg.sl2vl = sw::SwitchConfig::default_sl2vl(2);
  s.multicast_bandwidth.enabled = true;
  s.multicast_bandwidth.allocation = a;
  s.multicast_bandwidth.sl = 1;
  s.multicast_bandwidth.unicast_weight = 100;
  s.multicast_bandwidth.destinations = MulticastDestinations::group;
  s.flows.push_back(multicast_flow(0.1));
  s.flows.back().sl = 1;
  return s;
}
}  // namespace

TEST(MulticastBandwidth, LinearWeighsTheMulticastVlByTheNumberOfMembers) {
  Fabric f(weighted(MulticastAllocation::linear, {"h2", "h3", "h4"}));
  const uint32_t sw_node = switch_node(f.scenario());
  for (uint16_t port = 1; port <= 6; ++port)
    EXPECT_EQ(weights_by_vl(f.switch_at(sw_node)->vlarb(port)), (std::vector<uint32_t>{100, 300}));
  EXPECT_EQ(weights_by_vl(f.scenario().endpoint_cfg.vlarb), (std::vector<uint32_t>{100, 300}));
}

TEST(MulticastBandwidth, LogarithmicWeighsTheMulticastVlByLog2OfTheMembers) {
  Fabric f(weighted(MulticastAllocation::logarithmic, {"h2", "h3", "h4", "h5"}));
  EXPECT_EQ(weights_by_vl(f.switch_at(switch_node(f.scenario()))->vlarb(1)), (std::vector<uint32_t>{100, 200}));
}

TEST(MulticastBandwidth, EqualGivesBothVlsTheUnicastWeight) {
  Fabric f(weighted(MulticastAllocation::equal, {"h2", "h3", "h4", "h5"}));
  EXPECT_EQ(weights_by_vl(f.switch_at(switch_node(f.scenario()))->vlarb(1)), (std::vector<uint32_t>{100, 100}));
}

// Seed 000 Sec. 5.2: "with separate VLs, multicast traffic uses the limited number of VLs".
// A synchronous multicast on a VL of its own gets its turns at an output from the VLArb
// table, like any VL: h1 multicasts to {h2, h3} and h4 sends unicast to h2, both saturating,
// so output 2 is asked for twice its rate. With the multicast VL weighted 198 against 99
// (linear, two members; 6 and 3 packets of 33 credit blocks per turn) multicast gets about
// two thirds of output 2. (Skipping the arbiter, it would take nearly all of it.)
TEST(MulticastBandwidth, SynchronousMulticastOnItsOwnVlTakesItsVlArbShareOfAContendedOutput) {
  Scenario s = group_star(sw::Replication::synchronous);
  s.multicast[0].members = {"h2", "h3"};
  s.switch_cfg.data_vls = s.endpoint_cfg.data_vls = 2;
  s.switch_cfg.sl2vl = s.endpoint_cfg.sl2vl = sw::SwitchConfig::default_sl2vl(2);
  s.multicast_bandwidth.enabled = true;
  s.multicast_bandwidth.allocation = MulticastAllocation::linear;
  s.multicast_bandwidth.destinations = MulticastDestinations::group;
  s.multicast_bandwidth.sl = 1;
  s.multicast_bandwidth.unicast_weight = 99;
  s.flows.push_back(tb::saturating_flow("mc", "h1", "g", 2048, 1));
  s.flows.push_back(tb::saturating_flow("uni", "h4", "h2", 2048, 0));
  s.duration = sc_time(2, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  const link::PortCounters& c = f.switch_at(switch_node(f.scenario()))->counters(2);
  const double mc = static_cast<double>(c.vl[1].bytes_tx), uni = static_cast<double>(c.vl[0].bytes_tx);
  ASSERT_GT(uni + mc, 0.0);
  EXPECT_NEAR(mc / (mc + uni), 2.0 / 3.0, 0.04);
  EXPECT_EQ(f.recorder().non_member_copies(0), 0u);
}

// Downstream: x on s0 sends to {h1, h2, y} over a ring of four switches. The source tree takes
// s0 -> s1 -> s2 (s2 grafts onto the tree through s1, which is on it already), so s0's port to
// s1 serves two members, s1's port to s2 and each member's own port one, the source's CA port
// three; ports that carry no multicast (s0 towards s3) weigh it as one.
TEST(MulticastBandwidth, DownstreamWeighsEachPortByTheMembersBehindIt) {
  Scenario s = tb::basic_scenario(tb::ring(4, true));
  s.routing = "updn";
  s.switch_cfg.data_vls = s.endpoint_cfg.data_vls = 2;
  s.switch_cfg.sl2vl = s.endpoint_cfg.sl2vl = sw::SwitchConfig::default_sl2vl(2);
  MulticastGroupConfig g;
  g.name = "g";
  g.source = "x";
  g.members = {"h1", "h2", "y"};
  s.multicast.push_back(g);
  s.multicast_bandwidth.enabled = true;
  s.multicast_bandwidth.allocation = MulticastAllocation::linear;
  s.multicast_bandwidth.sl = 1;
  s.multicast_bandwidth.unicast_weight = 100;
  FlowConfig mc = tb::saturating_flow("mc", "x", "g", 256);
  mc.generator = GeneratorKind::constant;
  mc.load = 0.1;
  mc.sl = 1;
  s.flows.push_back(mc);
  Fabric f(s);
  const topo::Topology& t = f.scenario().topology;
  auto at = [&](const char* sw, uint16_t port) { return weights_by_vl(f.switch_at(t.find(sw))->vlarb(port)); };
  using W = std::vector<uint32_t>;
  EXPECT_EQ(at("s0", 1), (W{100, 200}));  // towards s1: h1 and h2
  EXPECT_EQ(at("s0", 5), (W{100, 100}));  // y
  EXPECT_EQ(at("s0", 2), (W{100, 100}));  // towards s3: no multicast
  EXPECT_EQ(at("s1", 1), (W{100, 100}));  // towards s2: h2
  EXPECT_EQ(at("s1", 3), (W{100, 100}));  // h1
  EXPECT_EQ(at("s2", 3), (W{100, 100}));  // h2
  EXPECT_EQ(weights_by_vl(f.endpoint_at(t.find("x"))->vlarb()), (W{100, 300}));
  EXPECT_EQ(weights_by_vl(f.endpoint_at(t.find("h3"))->vlarb()), (W{100, 100}));
  // Every member still gets each packet once through those tables.
  sc_core::sc_start(sc_time(300, SC_US));
  const std::vector<uint64_t> copies = f.recorder().member_copies(0);
  EXPECT_GT(copies.at(0), 0u);
  EXPECT_EQ(f.recorder().non_member_copies(0), 0u);
}

// A shared tree over several switches (OpenSM's kind): still each member once, nobody else.
TEST(Replication, SharedTreeOnARingReachesEachMemberOnce) {
  Scenario s = tb::basic_scenario(tb::ring(4, true));
  s.routing = "updn";
  s.switch_cfg.multicast_replication = sw::Replication::synchronous;
  s.switch_cfg.multicast_order = sw::MulticastOrder::round_robin;
  MulticastGroupConfig g;
  g.name = "g";
  g.source = "x";
  g.members = {"h1", "h2", "h3"};
  g.tree = MulticastTree::shared;
  s.multicast.push_back(g);
  FlowConfig mc = tb::saturating_flow("mc", "x", "g", 512);
  mc.generator = GeneratorKind::constant;
  mc.load = 0.3;
  mc.stop = sc_time(400, SC_US);
  s.flows.push_back(mc);
  s.duration = sc_time(600, SC_US);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  const metrics::Recorder& r = f.recorder();
  const uint64_t sent = r.flows()[0].injected;
  ASSERT_GT(sent, 50u);
  EXPECT_EQ(r.member_copies(0), (std::vector<uint64_t>{sent, sent, sent}));
  EXPECT_EQ(r.non_member_copies(0), 0u);
  const topo::Topology& t = f.scenario().topology;
  for (const char* other : {"h0", "y"}) EXPECT_EQ(f.endpoint_at(t.find(other))->counters().packets_rx, 0u) << other;
  EXPECT_EQ(r.injected() + r.replicated(), r.delivered() + r.dropped() + f.packets_in_flight());
}

// Seed 000 Sec. 5.2 (Fig. 10(f)'s scheme 1): "we give multicast traffic higher priority over
// unicast traffic in reserving the output VLs". With multicast_priority the copy that came
// later leaves first when output 3 frees; without, it waits its turn behind the unicast.
TEST(Replication, AsynchronousCopyWithPriorityLeavesAheadOfAnEarlierUnicast) {
  Output3 tx = copy_and_unicast_waiting_at_output_3(true);
  EXPECT_EQ(tx.start_by_flow.at(0), 105'000u + kBigSerPs);
  EXPECT_EQ(tx.start_by_flow.at(2), 105'000u + kBigSerPs + 290'000u);  // after the 290-byte copy
}

TEST(Replication, AsynchronousCopyWithoutPriorityWaitsBehindAnEarlierUnicast) {
  Output3 tx = copy_and_unicast_waiting_at_output_3(false);
  EXPECT_EQ(tx.start_by_flow.at(2), 105'000u + kBigSerPs);
  EXPECT_EQ(tx.start_by_flow.at(0), 105'000u + 2 * kBigSerPs);
}
