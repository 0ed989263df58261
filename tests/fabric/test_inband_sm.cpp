// The in-band subnet manager (issue 16, platform/sm/inband_sm.h): an SM on one HCA host
// brings a fabric up by SMPs alone, and the flows run once it is up.
#include <gtest/gtest.h>

#include <systemc>

#include "common/fabrics.h"
#include "firmware/hal/ibvp_hal.h"
#include "models/ib/mad.h"
#include "platform/apps/flow_streams.h"
#include "platform/builder/fabric.h"
#include "platform/sm/multicast.h"
#include "platform/topology/generators.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

Scenario in_band(topo::Topology t) {
  Scenario s = tb::basic_scenario(std::move(t));
  s.endpoint_model = EndpointModel::hca;
  s.outputs.packets_csv = false;
  s.subnet_manager.mode = SmMode::in_band;
  return s;
}

// The SMPs the sweep must send on a fabric whose nodes each answer once (analytically, from
// the topology): discovery reads NodeInfo through every cabled switch port but the one it
// came in by (plus the SM's own CA and its neighbour), NodeDescription of every node, and
// PortInfo of every switch port (0..N) and of every CA port.
uint64_t discovery_smps(const topo::Topology& t) {
  uint64_t n = 2;  // NodeInfo of the SM's CA and of its switch
  for (uint32_t sw : t.switches()) {
    uint32_t cabled = 0;
    for (uint16_t p = 1; p <= t.nodes[sw].num_ports; ++p) cabled += t.link_at(sw, p) >= 0;
    n += cabled - 1;                          // NodeInfo
    n += 1 + t.nodes[sw].num_ports + 1u;      // NodeDescription, PortInfo 0..N
  }
  n += 2 * t.endpoints().size();  // NodeDescription, PortInfo
  return n;
}

// A VLArb table as an arbiter serves it: entries of weight 0 serve nothing (IBA 7.6.9), and
// an HCA's firmware keeps only the others.
std::string arb_text(const link::VlArbConfig& c) {
  std::string s = "limit " + std::to_string(c.high_limit) + " high";
  for (const link::VlArbEntry& e : c.high)
    if (e.weight) s += " " + std::to_string(e.vl) + ":" + std::to_string(e.weight);
  s += " low";
  for (const link::VlArbEntry& e : c.low)
    if (e.weight) s += " " + std::to_string(e.vl) + ":" + std::to_string(e.weight);
  return s;
}

// Two SLs on two VLs (SL 1 on VL 1, every other SL on VL 0) and a weighted round robin with
// a high-priority entry; the CAs get other weights than the switches, so the SM must tell
// the port kinds apart. Neither is the reset table (every SL on VL 0, VL 0 alone served).
Scenario qos_in_band(topo::Topology t) {
  Scenario s = in_band(std::move(t));
  s.switch_cfg.data_vls = s.endpoint_cfg.data_vls = 2;
  sw::Sl2VlTable sl2vl{};
  sl2vl[1] = 1;
  s.switch_cfg.sl2vl = s.endpoint_cfg.sl2vl = sl2vl;
  s.switch_cfg.vlarb.high = {{1, 2}};
  s.switch_cfg.vlarb.low = {{0, 1}, {1, 4}};
  s.switch_cfg.vlarb.high_limit = 4;
  s.endpoint_cfg.vlarb.high.clear();
  s.endpoint_cfg.vlarb.low = {{0, 3}, {1, 2}};
  s.endpoint_cfg.vlarb.high_limit = 0;
  return s;
}

}  // namespace

TEST(InbandSm, BringsAFatTreeUpBySmpsAndEveryPairRoutesThroughTheTablesItWrote) {
  Scenario s = in_band(topo::kary_ntree(2, 3));
  const std::vector<uint32_t> eps = s.topology.endpoints();
  s.flows.push_back(tb::saturating_flow("f", s.topology.nodes[eps.front()].name, s.topology.nodes[eps.back()].name));
  s.duration = sc_time(2, SC_MS);
  s.subnet_manager.transaction_timeout = sc_time(100, SC_US);
  s.subnet_manager.retries = 0;
  Fabric f(s);
  sc_core::sc_start(sc_time(2, SC_MS));
  const sm::InbandSm* smgr = f.subnet_manager();
  ASSERT_NE(smgr, nullptr);
  const sm::InbandSmReport& r = smgr->report();
  ASSERT_TRUE(r.up) << r.error;
  const topo::Topology& t = f.scenario().topology;
  EXPECT_EQ(r.switches, t.switches().size());
  EXPECT_EQ(r.cas, eps.size());
  EXPECT_EQ(r.links, t.links.size());
  EXPECT_EQ(r.resends, 0u);
  EXPECT_EQ(r.smps_sent, r.smps_received);
  EXPECT_EQ(r.phase_smps[sm::kPhaseDiscover], discovery_smps(t));
  // Arm and activate touch both ends of every cable.
  EXPECT_EQ(r.phase_smps[sm::kPhaseArm], 2 * t.links.size());
  EXPECT_EQ(r.phase_smps[sm::kPhaseActivate], 2 * t.links.size());
  EXPECT_EQ(r.phase_smps[sm::kPhaseMulticast], 0u);  // no groups
  EXPECT_LT(r.discovered_ps, r.programmed_ps);
  EXPECT_LT(r.programmed_ps, r.qos_ps);
  EXPECT_LE(r.qos_ps, r.multicast_ps);
  EXPECT_LT(r.multicast_ps, r.armed_ps);
  EXPECT_LT(r.armed_ps, r.up_ps);

  // The LIDs are the topology's (the SM's guid2lid), every port is Active, and the switches'
  // own tables (written by Set LFT) lead from every CA to every other.
  for (uint32_t e : eps) {
    EXPECT_EQ(f.host_at(e)->hca.lid(), t.nodes[e].lid) << t.nodes[e].name;
    EXPECT_EQ(f.host_at(e)->hca.port_state(), IBVP_PORT_ACTIVE) << t.nodes[e].name;
  }
  for (uint32_t sw : t.switches())
    for (uint16_t p = 1; p <= t.nodes[sw].num_ports; ++p)
      if (t.link_at(sw, p) >= 0) {
        EXPECT_EQ(f.switch_at(sw)->port_state(p), ib::mad::kPortActive);
      }
  for (uint32_t a : eps)
    for (uint32_t b : eps) {
      if (a == b) continue;
      topo::PortRef at = t.peer(a, 1);
      uint32_t hops = 0;
      while (t.nodes[at.node].kind == topo::NodeKind::switch_node && hops < 16) {
        const uint8_t out = f.switch_at(at.node)->lft().lookup(t.nodes[b].lid);
        ASSERT_NE(out, sw::Lft::kNoRoute) << t.nodes[at.node].name << " has no route to " << t.nodes[b].name;
        at = t.peer(at.node, out);
        ++hops;
      }
      EXPECT_EQ(at.node, b) << t.nodes[a].name << " -> " << t.nodes[b].name;
    }

  // The flow started when the subnet was up and lost nothing.
  sc_core::sc_start(sc_time(1, SC_MS));
  f.finish();
  const metrics::FlowTotals& ft = f.recorder().flows().at(0);
  EXPECT_GT(ft.delivered, 0u);
  EXPECT_EQ(ft.dropped, 0u);
  EXPECT_EQ(f.recorder().dropped(), 0u);
}

// Issue 16: in band the SM writes the SL2VL and VLArb tables the builder loads out of band
// (Fabric: every switch pair and port from switch_cfg, every CA port from endpoint_cfg).
TEST(InbandSm, LeavesEverySwitchAndHcaWithTheSl2VlAndVlArbTablesTheOutOfBandBuilderLoads) {
  const Scenario s = qos_in_band(topo::kary_ntree(2, 2));
  Fabric f(s);
  const topo::Topology& t = f.scenario().topology;
  const uint32_t sw0 = t.switches().front();
  // Before the SM: the reset tables, not the scenario's.
  ASSERT_NE(f.switch_at(sw0)->sl2vl(1, 2), s.switch_cfg.sl2vl);
  ASSERT_NE(arb_text(f.switch_at(sw0)->vlarb(1)), arb_text(s.switch_cfg.vlarb));
  ASSERT_NE(f.host_at(t.endpoints().front())->hca.sl2vl(), s.endpoint_cfg.sl2vl);
  sc_core::sc_start(sc_time(1, SC_MS));
  const sm::InbandSmReport& r = f.subnet_manager()->report();
  ASSERT_TRUE(r.up) << r.error;
  uint64_t cabled = 0;
  for (uint32_t sw : t.switches()) {
    const sw::Switch& x = *f.switch_at(sw);
    for (uint16_t in = 0; in <= t.nodes[sw].num_ports; ++in)
      for (uint16_t out = 0; out <= t.nodes[sw].num_ports; ++out)
        EXPECT_EQ(x.sl2vl(in, out), s.switch_cfg.sl2vl) << t.nodes[sw].name << " " << in << " -> " << out;
    for (uint16_t p = 1; p <= t.nodes[sw].num_ports; ++p) {
      if (t.link_at(sw, p) < 0) continue;
      ++cabled;
      EXPECT_EQ(arb_text(x.vlarb(p)), arb_text(s.switch_cfg.vlarb)) << t.nodes[sw].name << "/" << p;
    }
  }
  for (uint32_t e : t.endpoints()) {
    const hca::Hca& h = f.host_at(e)->hca;
    EXPECT_EQ(h.sl2vl(), s.endpoint_cfg.sl2vl) << t.nodes[e].name;
    EXPECT_EQ(arb_text(h.vlarb()), arb_text(s.endpoint_cfg.vlarb)) << t.nodes[e].name;
  }
  // One all-ports SL2VL Set per switch (OptimizedSLtoVLMappingProgramming), one per CA; the
  // four VLArb blocks of every switch port with a cable and of every CA port.
  const uint64_t nodes = t.switches().size() + t.endpoints().size();
  EXPECT_EQ(r.sl2vl_sets, nodes);
  EXPECT_EQ(r.vlarb_sets, 4 * (cabled + t.endpoints().size()));
  EXPECT_EQ(r.phase_smps[sm::kPhaseQos], r.sl2vl_sets + r.vlarb_sets);
  EXPECT_EQ(r.mft_sets, 0u);
}

// The MFTs: in band the switches start with none, and the SM writes the groups' trees, so a
// UD multicast flow started when the subnet is up reaches every member once per packet.
TEST(InbandSm, WritesTheMulticastTablesAndEveryMemberGetsEveryCopy) {
  Scenario s = in_band(topo::kary_ntree(2, 3));
  s.hca_host.flow_transport = FlowTransport::ud;
  s.outputs.rate_window = sc_core::SC_ZERO_TIME;
  MulticastGroupConfig g;
  g.name = "g";
  g.source = "h1";
  g.members = {"h2", "h4", "h7"};
  s.multicast.push_back(g);
  FlowConfig mc = tb::saturating_flow("mc", "h1", "g", 256);
  mc.generator = GeneratorKind::constant;
  mc.load = 0.1;
  mc.stop = sc_time(300, SC_US);
  s.flows.push_back(mc);
  s.duration = sc_time(500, SC_US);
  Fabric f(s);
  const topo::Topology& t = f.scenario().topology;
  for (uint32_t sw : t.switches()) ASSERT_TRUE(f.switch_at(sw)->mft().port_mask.empty()) << t.nodes[sw].name;
  sc_core::sc_start(sc_time(2, SC_MS));
  f.finish();
  const sm::InbandSmReport& r = f.subnet_manager()->report();
  ASSERT_TRUE(r.up) << r.error;
  EXPECT_GT(r.mft_sets, 0u);
  EXPECT_EQ(r.phase_smps[sm::kPhaseMulticast], r.mft_sets);
  const metrics::Recorder& rec = f.recorder();
  const uint64_t sent = rec.flows()[0].injected;
  ASSERT_GT(sent, 50u);
  const std::vector<uint64_t> copies = rec.member_copies(0);
  ASSERT_EQ(copies.size(), 3u);
  for (uint64_t c : copies) EXPECT_EQ(c, sent);
  EXPECT_EQ(rec.non_member_copies(0), 0u);
  EXPECT_EQ(f.flow_streams()->received(0), 3 * sent);
  EXPECT_EQ(rec.dropped(), 0u);
}

// A resweep (Trap 128, a cable down) recomputes the groups' trees on the new graph and Sets
// the MFT blocks that changed: the tree no longer crosses the dead cable and still reaches
// every member (walked through the switches' own MFTs, sm::walk_multicast).
TEST(InbandSm, AResweepMovesAMulticastTreeOffACableThatWentDown) {
  Scenario s = in_band(topo::kary_ntree(2, 3));
  s.hca_host.flow_transport = FlowTransport::ud;
  s.outputs.rate_window = sc_core::SC_ZERO_TIME;
  s.subnet_manager.transaction_timeout = sc_time(100, SC_US);
  // A trap routed over the dead cable is lost; its switch resends it after 1.05 ms.
  s.subnet_manager.subnet_timeout = 8;
  MulticastGroupConfig g;
  g.name = "g";
  g.source = "h1";
  g.members = {"h5", "h8"};
  s.multicast.push_back(g);
  FlowConfig mc = tb::saturating_flow("mc", "h1", "g", 256);
  mc.generator = GeneratorKind::constant;
  mc.load = 0.1;
  s.flows.push_back(mc);
  s.duration = sc_time(10, SC_MS);
  Fabric f(s);
  while (!f.subnet_manager()->done() && sc_core::sc_time_stamp() < sc_time(5, SC_MS))
    sc_core::sc_start(sc_time(10, SC_US));
  ASSERT_TRUE(f.subnet_manager()->report().up) << f.subnet_manager()->report().error;
  const topo::Topology& t = f.scenario().topology;
  const uint16_t mlid = static_cast<uint16_t>(f.scenario().multicast.at(0).mlid);
  const uint32_t src = t.find("h1");
  const std::vector<uint32_t> members = {t.find("h5"), t.find("h8")};
  auto walk = [&] {
    std::vector<sw::Mft> mft(t.nodes.size());
    for (uint32_t sw : t.switches()) mft[sw] = f.switch_at(sw)->mft();
    return sm::walk_multicast(t, mft, src, mlid);
  };
  const sm::MulticastWalk before = walk();
  ASSERT_EQ(before.reached, members);
  // A switch-to-switch cable of the tree goes down at both ends.
  int cut = -1;
  for (size_t l = 0; l < t.links.size() && cut < 0; ++l) {
    const topo::Link& c = t.links[l];
    const bool switches = t.nodes[c.a.node].kind == topo::NodeKind::switch_node &&
                          t.nodes[c.b.node].kind == topo::NodeKind::switch_node;
    if (switches && before.link_copies[l][0] + before.link_copies[l][1] > 0) cut = static_cast<int>(l);
  }
  ASSERT_GE(cut, 0);
  const topo::Link& c = t.links[static_cast<size_t>(cut)];
  sc_core::sc_start(sc_time(50, SC_US));
  f.switch_at(c.a.node)->set_link(c.a.port, false, ib::mad::kPortInit);
  f.switch_at(c.b.node)->set_link(c.b.port, false, ib::mad::kPortInit);
  sc_core::sc_start(sc_time(3, SC_MS));
  const std::vector<sm::InbandSweep>& sweeps = f.subnet_manager()->sweeps();
  ASSERT_FALSE(sweeps.empty());
  uint64_t mft_blocks = 0;
  for (const sm::InbandSweep& w : sweeps) {
    EXPECT_TRUE(w.error.empty()) << w.error;
    EXPECT_GT(w.ended_ps, 0u);
    mft_blocks += w.mft_blocks_set;
  }
  EXPECT_GT(mft_blocks, 0u);
  const sm::MulticastWalk after = walk();
  EXPECT_EQ(after.reached, members);
  EXPECT_EQ(after.link_copies[static_cast<size_t>(cut)][0] + after.link_copies[static_cast<size_t>(cut)][1], 0u);
  EXPECT_FALSE(after.cut_off);
}
