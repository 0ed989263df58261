// The switch's subnet management agent in band (models/switch/sma.h, switch_sma.cpp): a
// host's QP0 (Hca::send_mad, the receiver on the same host) sends SMPs into a 2-ary 2-tree
// and reads the answers: directed route through 1, 2 and 3 switches, LID-routed to a
// switch's LID, Sets that move port states and rewrite the LFT the data packets follow,
// an attribute no switch serves, the SMA's time, and a capture tshark dissects.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <systemc>
#include <unistd.h>
#include <vector>

#include "common/fabrics.h"
#include "models/ib/mad.h"
#include "platform/builder/fabric.h"
#include "platform/topology/generators.h"

using namespace ibvp;
namespace mad = ibvp::ib::mad;
using sc_core::SC_NS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

// kary_ntree(2, 2): leaves s0_0 (h1, h2 on ports 1, 2) and s0_1 (h3, h4), spines s1_0 and
// s1_1; leaf port 3 goes to s1_0, port 4 to s1_1; a spine's port 1 + w goes to leaf w.
Scenario tree_scenario() {
  Scenario s = tb::basic_scenario(topo::kary_ntree(2, 2));
  s.endpoint_model = EndpointModel::hca;
  s.hca_host.flow_transport = FlowTransport::ud;  // a dropped packet is gone, not retried
  s.outputs.packets_csv = false;
  return s;
}

// The SM side of the test: one host's QP0. Its SMI steps are the host's (IBA 14.2.2:
// HopPointer 0 -> 1 when it sends, 1 -> 0 when the response arrives).
struct SmHost {
  Fabric& f;
  hca::Hca& hca;
  std::vector<std::pair<mad::Smp, uint64_t>> got;
  uint64_t next_tid = 1;

  SmHost(Fabric& fabric, const std::string& host)
      : f(fabric), hca(fabric.host_at(fabric.scenario().topology.find(host))->hca) {
    hca.set_mad_receiver([this](const ib::MadDatagram& m, uint64_t at) {
      mad::Smp s = mad::decode_smp(m.mad);
      if (s.directed()) {
        const mad::DrHop h = mad::dr_receive(s, false, 1, 1);
        EXPECT_EQ(h.route, mad::DrRoute::local);
      }
      got.emplace_back(s, at);
    });
  }

  mad::Smp directed(uint8_t method, uint16_t attr, uint32_t mod, const std::vector<uint8_t>& path,
                    const mad::SmpData* data = nullptr) {
    mad::Smp s = mad::make_directed_smp(method, attr, mod, next_tid++, path.data(), path.size());
    if (data) s.data = *data;
    EXPECT_EQ(mad::dr_originate(s).port, 1);
    send(s, ib::kPermissiveLid);
    return s;
  }
  mad::Smp lid_routed(uint8_t method, uint16_t attr, uint32_t mod, uint16_t dlid) {
    mad::Smp s = mad::make_lid_routed_smp(method, attr, mod, next_tid++);
    send(s, dlid);
    return s;
  }
  void send(const mad::Smp& s, uint16_t dlid) {
    ib::MadDatagram m;
    m.dlid = dlid;
    mad::encode(s, m.mad);
    hca.send_mad(m, sc_core::sc_time_stamp().value());
  }
  // Runs until the answer to `tid` is in and returns it.
  mad::Smp await(uint64_t tid) {
    for (int i = 0; i < 100; ++i) {
      for (const auto& [s, at] : got)
        if (s.hdr.transaction_id == tid) return s;
      sc_core::sc_start(sc_time(1, SC_US));
    }
    ADD_FAILURE() << "no response to TID " << tid;
    return {};
  }
  mad::Smp get(uint16_t attr, uint32_t mod, const std::vector<uint8_t>& path) {
    return await(directed(mad::kMethodGet, attr, mod, path).hdr.transaction_id);
  }
  mad::Smp set(uint16_t attr, uint32_t mod, const std::vector<uint8_t>& path, const mad::SmpData& d) {
    return await(directed(mad::kMethodSet, attr, mod, path, &d).hdr.transaction_id);
  }
};

uint32_t node(const Fabric& f, const std::string& name) { return f.scenario().topology.find(name); }

TEST(SwitchSma, DirectedRouteNodeInfoThroughOneTwoAndThreeSwitchesNamesEachSwitch) {
  Scenario s = tree_scenario();
  Fabric f(s);
  SmHost sm(f, "h1");
  const topo::Topology& t = f.scenario().topology;
  const std::vector<std::pair<std::vector<uint8_t>, std::string>> paths = {
      {{1}, "s0_0"}, {{1, 3}, "s1_0"}, {{1, 3, 2}, "s0_1"}};
  for (const auto& [path, name] : paths) {
    const mad::Smp r = sm.get(mad::kAttrNodeInfo, 0, path);
    EXPECT_TRUE(r.returning());
    EXPECT_EQ(r.hdr.method, mad::kMethodGetResp);
    EXPECT_EQ(r.status_code(), mad::kStatusOk);
    EXPECT_EQ(r.hop_pointer(), 0);
    EXPECT_EQ(r.hop_count(), path.size());
    const mad::NodeInfo ni = mad::NodeInfo::decode(r.data);
    const uint32_t n = node(f, name);
    EXPECT_EQ(ni.node_type, mad::kNodeSwitch) << name;
    EXPECT_EQ(ni.node_guid, topo::node_guid(t, n)) << name;
    EXPECT_EQ(ni.port_guid, topo::port_guid(t, n)) << name;
    EXPECT_EQ(ni.num_ports, t.nodes[n].num_ports) << name;
    const mad::NodeDescription nd = mad::NodeDescription::decode(sm.get(mad::kAttrNodeDescription, 0, path).data);
    EXPECT_EQ(nd.text, name);
  }
  // Every request was consumed by an SMA and every response, made by a switch, delivered.
  EXPECT_EQ(f.recorder().injected(), 12u);
  EXPECT_EQ(f.recorder().delivered(), 12u);
  EXPECT_EQ(f.recorder().dropped(), 0u);
  EXPECT_EQ(f.packets_in_flight(), 0u);
  f.finish();
}

TEST(SwitchSma, ReturnPathIsThePathReversedPortByPort) {
  Scenario s = tree_scenario();
  Fabric f(s);
  SmHost sm(f, "h1");
  const topo::Topology& t = f.scenario().topology;
  const std::vector<uint8_t> path = {1, 4, 2};  // h1 -> s0_0 -> s1_1 -> s0_1
  const mad::Smp r = sm.get(mad::kAttrNodeInfo, 0, path);
  ASSERT_EQ(r.status_code(), mad::kStatusOk);
  // Walk the cables: ReturnPath[i] is the port by which hop i's switch was entered, the port
  // its response leaves by.
  topo::PortRef at{node(f, "h1"), 0};
  for (size_t i = 0; i < path.size(); ++i) {
    const topo::PortRef in = t.peer(at.node, path[i]);
    EXPECT_EQ(r.return_path[i + 1], in.port) << "hop " << i + 1;
    EXPECT_EQ(r.initial_path[i + 1], path[i]);
    at = in;
  }
  EXPECT_EQ(at.node, node(f, "s0_1"));
  EXPECT_EQ(mad::NodeInfo::decode(r.data).local_port_num, r.return_path[3]);
  f.finish();
}

TEST(SwitchSma, LidRoutedPortInfoOfPortZeroReportsTheSwitchLid) {
  Scenario s = tree_scenario();
  Fabric f(s);
  SmHost sm(f, "h1");
  const topo::Node& spine = f.scenario().topology.nodes[node(f, "s1_1")];
  const mad::Smp q = sm.lid_routed(mad::kMethodGet, mad::kAttrPortInfo, 0, spine.lid);
  const mad::Smp r = sm.await(q.hdr.transaction_id);
  EXPECT_EQ(r.hdr.mgmt_class, mad::kClassSubnLid);
  EXPECT_EQ(r.status_code(), mad::kStatusOk);
  const mad::PortInfo pi = mad::PortInfo::decode(r.data);
  EXPECT_EQ(pi.lid, spine.lid);
  EXPECT_EQ(pi.port_state, mad::kPortActive);
  f.finish();
}

TEST(SwitchSma, DirectedRouteWithALidRoutedTailReachesTheLidAndComesBack) {
  // IBA 14.2.2: directed route to s0_0, then by LID (DrDLID) to s0_1; s0_1 answers by LID to
  // s0_0, which takes the response back along ReturnPath.
  Scenario s = tree_scenario();
  Fabric f(s);
  SmHost sm(f, "h1");
  const topo::Node& far = f.scenario().topology.nodes[node(f, "s0_1")];
  mad::Smp q = mad::make_directed_smp(mad::kMethodGet, mad::kAttrNodeInfo, 0, 99, std::vector<uint8_t>{1}.data(), 1);
  q.dr_dlid = far.lid;
  mad::dr_originate(q);
  sm.send(q, ib::kPermissiveLid);
  const mad::Smp r = sm.await(99);
  EXPECT_EQ(r.status_code(), mad::kStatusOk);
  EXPECT_EQ(mad::NodeInfo::decode(r.data).node_guid, topo::node_guid(f.scenario().topology, node(f, "s0_1")));
  EXPECT_EQ(r.return_path[1], 1);
  EXPECT_EQ(r.hop_pointer(), 0);
}

TEST(SwitchSma, DirectedRouteWhoseDrDlidIsTheLastSwitchAnswersAlongTheReturnPath) {
  Scenario s = tree_scenario();
  Fabric f(s);
  SmHost sm(f, "h1");
  const topo::Node& spine = f.scenario().topology.nodes[node(f, "s1_0")];
  const std::vector<uint8_t> path = {1, 3};
  mad::Smp q = mad::make_directed_smp(mad::kMethodGet, mad::kAttrNodeInfo, 0, 77, path.data(), path.size());
  q.dr_dlid = spine.lid;  // the LID-routed part is empty: s1_0 is its own DrDLID
  mad::dr_originate(q);
  sm.send(q, ib::kPermissiveLid);
  const mad::Smp r = sm.await(77);
  EXPECT_EQ(r.status_code(), mad::kStatusOk);
  EXPECT_EQ(mad::NodeInfo::decode(r.data).node_guid, topo::node_guid(f.scenario().topology, node(f, "s1_0")));
}

TEST(SwitchSma, UnknownAttributeGetsStatusMethodAttributeNotSupported) {
  Scenario s = tree_scenario();
  Fabric f(s);
  SmHost sm(f, "h1");
  const mad::Smp r = sm.get(mad::kAttrSmInfo, 0, {1, 3});  // a switch without an SM has no SMInfo
  EXPECT_EQ(r.hdr.method, mad::kMethodGetResp);
  EXPECT_EQ(r.hdr.status, mad::kStatusDirection | 0x000C);  // IBA 13.4.7 Table 112
  const mad::Smp bad_port = sm.get(mad::kAttrPortInfo, 9, {1});  // s0_0 has 4 ports
  EXPECT_EQ(bad_port.status_code(), mad::kStatusInvalidField);
  f.finish();
}

TEST(SwitchSma, PortInfoSetsMovePortStateDownInitArmedActive) {
  Scenario s = tree_scenario();
  Fabric f(s);
  SmHost sm(f, "h1");
  sw::Switch& leaf = *f.switch_at(node(f, "s0_0"));
  auto set_state = [&](uint8_t state) {
    mad::PortInfo pi = mad::PortInfo::decode(sm.get(mad::kAttrPortInfo, 2, {1}).data);
    pi.port_state = state;
    mad::SmpData d;
    pi.encode(d);
    return sm.set(mad::kAttrPortInfo, 2, {1}, d);
  };
  EXPECT_EQ(leaf.port_state(2), mad::kPortActive);
  mad::Smp r = set_state(mad::kPortDown);
  EXPECT_EQ(r.status_code(), mad::kStatusOk);
  EXPECT_EQ(mad::PortInfo::decode(r.data).port_state, mad::kPortDown);
  // The link trains again: the port is in Init, and SwitchInfo says a port changed state.
  EXPECT_EQ(leaf.port_state(2), mad::kPortInit);
  EXPECT_TRUE(mad::SwitchInfo::decode(sm.get(mad::kAttrSwitchInfo, 0, {1}).data).port_state_change);
  // Init cannot go straight to Active (IBA 14.2.5.6): refused, nothing changes.
  r = set_state(mad::kPortActive);
  EXPECT_EQ(r.status_code(), mad::kStatusInvalidField);
  EXPECT_EQ(leaf.port_state(2), mad::kPortInit);
  r = set_state(mad::kPortArmed);
  EXPECT_EQ(mad::PortInfo::decode(r.data).port_state, mad::kPortArmed);
  EXPECT_EQ(leaf.port_state(2), mad::kPortArmed);
  r = set_state(mad::kPortActive);
  EXPECT_EQ(mad::PortInfo::decode(r.data).port_state, mad::kPortActive);
  EXPECT_EQ(leaf.port_state(2), mad::kPortActive);
  f.finish();
}

TEST(SwitchSma, DataLeavesOnlyThroughActivePorts) {
  // h3 sends to h2 from the start; the SM takes s0_0's port 2 (h2's) down at once and brings
  // it back through Armed to Active: packets routed to it meanwhile are dropped, none after.
  Scenario s = tree_scenario();
  FlowConfig fl = tb::saturating_flow("d", "h3", "h2", 256);
  fl.load = 0.2;
  fl.generator = GeneratorKind::constant;
  s.flows.push_back(fl);
  Fabric f(s);
  SmHost sm(f, "h1");
  auto set_state = [&](uint8_t state) {
    mad::PortInfo pi;
    pi.port_state = state;
    pi.hoq_life = sw::kLifetimeInfinite;
    mad::SmpData d;
    pi.encode(d);
    EXPECT_EQ(sm.set(mad::kAttrPortInfo, 2, {1}, d).status_code(), mad::kStatusOk);
  };
  sc_core::sc_start(sc_time(20, SC_US));
  const uint64_t before = f.recorder().flows().at(0).delivered;
  EXPECT_GT(before, 0u);
  set_state(mad::kPortDown);
  set_state(mad::kPortArmed);
  sc_core::sc_start(sc_time(20, SC_US));  // Armed: data still may not leave
  const auto& drops = f.recorder().drops_by_reason();
  const auto it = drops.find(static_cast<uint8_t>(ib::DropReason::port_state));
  ASSERT_NE(it, drops.end());
  const uint64_t dropped = it->second;
  EXPECT_GT(dropped, 0u);
  set_state(mad::kPortActive);
  const uint64_t at_active = f.recorder().flows().at(0).delivered;
  sc_core::sc_start(sc_time(50, SC_US));
  EXPECT_GT(f.recorder().flows().at(0).delivered, at_active);
  EXPECT_EQ(f.recorder().drops_by_reason().at(static_cast<uint8_t>(ib::DropReason::port_state)), dropped);
  f.finish();
}

TEST(SwitchSma, PortsStartedInInitCarryDataOnlyOnceTheSmArmsAndActivatesThem) {
  // In-band bring-up: s0_0's ports train to Init; h2 -> h1 is dropped there until the SM has
  // taken both ports through Armed to Active.
  Scenario s = tree_scenario();
  FlowConfig fl = tb::saturating_flow("d", "h2", "h1", 256);
  fl.load = 0.2;
  fl.generator = GeneratorKind::constant;
  s.flows.push_back(fl);
  Fabric f(s);
  sw::Switch& leaf = *f.switch_at(node(f, "s0_0"));
  leaf.start_ports_in_init();
  EXPECT_EQ(leaf.port_state(1), mad::kPortInit);
  EXPECT_EQ(leaf.port_state(4), mad::kPortInit);
  SmHost sm(f, "h3");  // on s0_1: its SMPs reach s0_0 through a spine, still in Init
  const std::vector<uint8_t> path = {1, 3, 1};  // h3 -> s0_1 -> s1_0 -> s0_0
  sc_core::sc_start(sc_time(20, SC_US));
  EXPECT_EQ(f.recorder().flows().at(0).delivered, 0u);
  for (uint8_t state : {mad::kPortArmed, mad::kPortActive})
    for (uint16_t port = 1; port <= 4; ++port) {
      mad::PortInfo pi = mad::PortInfo::decode(sm.get(mad::kAttrPortInfo, port, path).data);
      pi.port_state = state;
      mad::SmpData d;
      pi.encode(d);
      EXPECT_EQ(sm.set(mad::kAttrPortInfo, port, path, d).status_code(), mad::kStatusOk) << port;
    }
  EXPECT_EQ(leaf.port_state(1), mad::kPortActive);
  const uint64_t at_active = f.recorder().flows().at(0).delivered;
  sc_core::sc_start(sc_time(30, SC_US));
  EXPECT_GT(f.recorder().flows().at(0).delivered, at_active);
}

TEST(SwitchSma, LftBlockSetInBandChangesWhereDataPacketsGo) {
  // h1 -> h3 crosses a spine; whichever the routing chose, the SM points s0_0's entry for
  // h3's LID at the other one, and the packets sent afterwards cross that one.
  Scenario s = tree_scenario();
  FlowConfig fl = tb::saturating_flow("d", "h1", "h3", 256);
  fl.generator = GeneratorKind::constant;
  fl.load = 0.2;
  fl.start = sc_time(30, SC_US);
  s.flows.push_back(fl);
  Fabric f(s);
  SmHost sm(f, "h2");
  const topo::Topology& t = f.scenario().topology;
  const uint16_t h3 = t.nodes[node(f, "h3")].lid;
  sw::Switch& leaf = *f.switch_at(node(f, "s0_0"));
  const uint8_t before = leaf.lft().lookup(h3);
  ASSERT_TRUE(before == 3 || before == 4);
  const uint8_t after = before == 3 ? 4 : 3;
  const uint32_t block = h3 / 64;
  mad::LftBlock b = mad::LftBlock::decode(sm.get(mad::kAttrLinearForwardingTable, block, {1}).data);
  EXPECT_EQ(b.port[h3 % 64], before);  // the SMA reads the table the builder loaded
  b.port[h3 % 64] = after;
  mad::SmpData d;
  b.encode(d);
  const mad::Smp r = sm.set(mad::kAttrLinearForwardingTable, block, {1}, d);
  EXPECT_EQ(r.status_code(), mad::kStatusOk);
  EXPECT_EQ(mad::LftBlock::decode(r.data).port[h3 % 64], after);
  EXPECT_EQ(leaf.lft().lookup(h3), after);
  ASSERT_LT(sc_core::sc_time_stamp(), fl.start);
  const uint32_t spine_before = node(f, before == 3 ? "s1_0" : "s1_1");
  const uint32_t spine_after = node(f, after == 3 ? "s1_0" : "s1_1");
  // The spines' ports towards s0_1 (port 2): what crossed them so far was management only.
  const uint64_t old_tx = f.port_counters(spine_before, 2).packets_tx;
  const uint64_t new_tx = f.port_counters(spine_after, 2).packets_tx;
  sc_core::sc_start(sc_time(60, SC_US));
  const uint64_t delivered = f.recorder().flows().at(0).delivered;
  EXPECT_GT(delivered, 10u);
  EXPECT_EQ(f.port_counters(spine_before, 2).packets_tx, old_tx);
  EXPECT_GE(f.port_counters(spine_after, 2).packets_tx - new_tx, delivered);
  f.finish();
}

TEST(SwitchSma, TablesSetInBandReadBackAndDriveTheSwitch) {
  Scenario s = tree_scenario();
  Fabric f(s);
  SmHost sm(f, "h1");
  sw::Switch& spine = *f.switch_at(node(f, "s1_0"));
  const std::vector<uint8_t> path = {1, 3};
  // SLtoVL of input 1 to output 2: SL 5 to VL 0, read back.
  mad::SlToVlTable t;
  t.vl[5] = 0;
  t.vl[6] = 15;
  mad::SmpData d;
  t.encode(d);
  EXPECT_EQ(sm.set(mad::kAttrSlToVlMappingTable, mad::sl2vl_modifier(1, 2), path, d).status_code(), mad::kStatusOk);
  EXPECT_EQ(mad::SlToVlTable::decode(sm.get(mad::kAttrSlToVlMappingTable, mad::sl2vl_modifier(1, 2), path).data).vl,
            t.vl);
  // VLArbitration low entries of port 2: the arbiter takes them.
  mad::VlArbBlock v;
  v.entry[0] = {0, 32};
  v.encode(d);
  EXPECT_EQ(sm.set(mad::kAttrVlArbitrationTable, mad::vlarb_modifier(2, mad::kVlArbLow0), path, d).status_code(),
            mad::kStatusOk);
  ASSERT_EQ(spine.vlarb(2).low.size(), 1u);
  EXPECT_EQ(spine.vlarb(2).low[0].weight, 32);
  // MFT: port 1 and 2 for MLID 0xC001.
  mad::MftBlock m;
  m.port_mask[1] = 0x0006;
  m.encode(d);
  EXPECT_EQ(sm.set(mad::kAttrMulticastForwardingTable, mad::mft_modifier(0, 0), path, d).status_code(),
            mad::kStatusOk);
  EXPECT_TRUE(spine.mft().lookup(0xC001).test(1));
  EXPECT_TRUE(spine.mft().lookup(0xC001).test(2));
  EXPECT_EQ(mad::MftBlock::decode(sm.get(mad::kAttrMulticastForwardingTable, 0, path).data).port_mask[1], 0x0006);
  // P_Key block 0 of port 1.
  mad::PKeyBlock k;
  k.p_key[0] = 0xFFFF;
  k.p_key[1] = 0x8001;
  k.encode(d);
  EXPECT_EQ(sm.set(mad::kAttrPKeyTable, mad::pkey_modifier(1, 0), path, d).status_code(), mad::kStatusOk);
  EXPECT_EQ(mad::PKeyBlock::decode(sm.get(mad::kAttrPKeyTable, mad::pkey_modifier(1, 0), path).data).p_key[1],
            0x8001);
  // SwitchInfo: LifeTimeValue is the switch lifetime from then on.
  mad::SwitchInfo si = mad::SwitchInfo::decode(sm.get(mad::kAttrSwitchInfo, 0, path).data);
  EXPECT_EQ(si.linear_fdb_cap, 0xC000);
  si.life_time_value = 10;
  si.encode(d);
  EXPECT_EQ(mad::SwitchInfo::decode(sm.set(mad::kAttrSwitchInfo, 0, path, d).data).life_time_value, 10);
  f.finish();
}

// Optimized SLtoVL programming (SwitchInfo says the switch takes it; OpenSM's
// use_optimized_slvl): bit 17 of the modifier is every input port, bit 16 every output
// port, in a Set. A Get names one pair, so a wildcard there is an invalid field.
TEST(SwitchSma, OneSl2VlSetWithBothWildcardsWritesEveryInputOutputPair) {
  Scenario s = tree_scenario();
  Fabric f(s);
  SmHost sm(f, "h1");
  const uint32_t spine_node = node(f, "s1_0");
  const sw::Switch& spine = *f.switch_at(spine_node);
  const std::vector<uint8_t> path = {1, 3};
  EXPECT_NE(mad::SwitchInfo::decode(sm.get(mad::kAttrSwitchInfo, 0, path).data).optimized_sl2vl_programming, 0);
  mad::SlToVlTable t;
  for (uint8_t sl = 0; sl < 16; ++sl) t.vl[sl] = sl % 2 ? 15 : 0;
  mad::SmpData d;
  t.encode(d);
  EXPECT_EQ(sm.set(mad::kAttrSlToVlMappingTable, mad::kSl2VlAllInputs | mad::kSl2VlAllOutputs, path, d).status_code(),
            mad::kStatusOk);
  const uint16_t ports = f.scenario().topology.nodes[spine_node].num_ports;
  for (uint16_t in = 0; in <= ports; ++in)
    for (uint16_t out = 0; out <= ports; ++out)
      EXPECT_TRUE(std::equal(t.vl.begin(), t.vl.end(), spine.sl2vl(in, out).begin())) << in << " -> " << out;
  // Every input to output 2 only: the other outputs keep what they had.
  mad::SlToVlTable u;
  u.vl.fill(0);
  u.encode(d);
  EXPECT_EQ(sm.set(mad::kAttrSlToVlMappingTable, mad::kSl2VlAllInputs | mad::sl2vl_modifier(0, 2), path, d).status_code(),
            mad::kStatusOk);
  for (uint16_t in = 0; in <= ports; ++in) {
    EXPECT_EQ(spine.sl2vl(in, 2)[1], 0) << in;
    EXPECT_EQ(spine.sl2vl(in, 1)[1], 15) << in;
  }
  EXPECT_EQ(sm.get(mad::kAttrSlToVlMappingTable, mad::kSl2VlAllOutputs, path).status_code(), mad::kStatusInvalidField);
  f.finish();
}

TEST(SwitchSma, TheSmaAnswersOneSmpPerSmaDelayAfterTheRequestsTail) {
  // One switch away at 4X SDR (1 byte/ns): the 290-byte packet's tail is in 290 ns + 5 ns
  // propagation after it leaves h1; the response leaves sma_delay later and its tail is back
  // another 295 ns on. The HCA adds its tx and rx pipelines (50 ns each).
  Scenario s = tree_scenario();
  s.switch_cfg.sma_delay = sc_time(7, SC_US);
  Fabric f(s);
  SmHost sm(f, "h1");
  sm.directed(mad::kMethodGet, mad::kAttrNodeInfo, 0, {1});
  sm.directed(mad::kMethodGet, mad::kAttrNodeInfo, 0, {1});
  sc_core::sc_start(sc_time(30, SC_US));
  ASSERT_EQ(sm.got.size(), 2u);
  const uint64_t at = sm.got[0].second;
  const uint64_t wire = 2 * (290'000 + 5'000);
  EXPECT_GE(at, wire + 7'000'000);
  EXPECT_LE(at, wire + 7'000'000 + 200'000);
  // The second request was in 290 ns after the first: the SMA takes it when done with the
  // first, so its answer comes sma_delay after the first's.
  EXPECT_EQ(sm.got[1].second - at, 7'000'000u);
  f.finish();
}

TEST(SwitchSma, CaptureOfTheExchangeIsDissectedByTshark) {
  if (std::system("command -v tshark > /dev/null 2>&1") != 0) GTEST_SKIP() << "tshark is not installed";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("ibvp_sma_pcap_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Scenario s = tree_scenario();
  s.outputs.pcaps.push_back(PcapConfig{"h1", 1, "h1.pcap", true});
  uint64_t spine_guid = 0;
  {
    Fabric f(s, dir.string());
    spine_guid = topo::node_guid(f.scenario().topology, node(f, "s1_0"));
    SmHost sm(f, "h1");
    sm.get(mad::kAttrNodeInfo, 0, {1, 3});
    sm.get(mad::kAttrPortInfo, 1, {1});
      f.finish();
  }
  const std::string out = (dir / "tshark.txt").string();
  const std::string cmd = "tshark -r " + (dir / "h1.pcap").string() + " -V > " + out + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  const std::string v = text.str();
  std::filesystem::remove_all(dir);
  // Wireshark's own InfiniBand dissector reads the requests, the responses and their fields.
  char guid[40];
  std::snprintf(guid, sizeof guid, "NodeGUID: 0x%016llx", static_cast<unsigned long long>(spine_guid));
  for (const std::string& want : std::vector<std::string>{"Management Class: 0x81", "SMP (Directed Route) SubnGet(NodeInfo)",
                                 "SMP (Directed Route) SubnGetResp(NodeInfo)", "NumPorts: 0x02", std::string(guid),
                                 "SMP (Directed Route) SubnGetResp(PortInfo)", "PortState: 0x4, Active",
                                 "PortPhysicalState: 0x5, LinkUp", "LinkWidthActive: 0x02, 4x"})
    EXPECT_NE(v.find(want), std::string::npos) << want << "\n" << v;
  // The response's PortInfo holds only values the dissector knows (the Get's zeros do not).
  const size_t resp = v.find("SubnGetResp(PortInfo)");
  const std::string port_info = v.substr(resp, v.find("\nFrame ", resp) - resp);
  EXPECT_EQ(port_info.find("Possible Error"), std::string::npos) << port_info;
  EXPECT_EQ(v.find("Malformed"), std::string::npos) << v;
}

}  // namespace
