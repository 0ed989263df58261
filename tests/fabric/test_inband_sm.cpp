// The in-band subnet manager (issue 16, platform/sm/inband_sm.h): an SM on one HCA host
// brings a fabric up by SMPs alone, and the flows run once it is up.
#include <gtest/gtest.h>

#include <systemc>

#include "common/fabrics.h"
#include "models/ib/mad.h"
#include "platform/builder/fabric.h"
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

}  // namespace

TEST(InbandSm, BringsAFatTreeUpBySmpsAndEveryPairRoutesThroughTheTablesItWrote) {
  Scenario s = in_band(topo::kary_ntree(2, 3));
  const std::vector<uint32_t> eps = s.topology.endpoints();
  s.flows.push_back(tb::saturating_flow("f", s.topology.nodes[eps.front()].name, s.topology.nodes[eps.back()].name));
  s.duration = sc_time(2, SC_MS);
  s.subnet_manager.transaction_timeout = sc_time(100, SC_US);
  s.subnet_manager.retries = 0;
  Fabric f(s);
  sc_core::sc_start(sc_time(1, SC_MS));
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
  EXPECT_EQ(r.phase_smps[0], discovery_smps(t));
  // Arm and activate touch both ends of every cable.
  EXPECT_EQ(r.phase_smps[2], 2 * t.links.size());
  EXPECT_EQ(r.phase_smps[3], 2 * t.links.size());
  EXPECT_LT(r.discovered_ps, r.programmed_ps);
  EXPECT_LT(r.programmed_ps, r.armed_ps);
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
