// A link that goes down during a run (issue 16, docs/management.md "A link that goes down"):
// both ends drop what they carry and count it, the switches send Trap 128 to the in-band SM,
// the SM represses it, sweeps, Sets only the LFT blocks that changed, and the traffic routes
// around the dead cable; out of band nothing reroutes.
#include <gtest/gtest.h>

#include <systemc>

#include "common/fabrics.h"
#include "models/ib/mad.h"
#include "platform/builder/fabric.h"
#include "platform/builder/runner.h"
#include "platform/topology/generators.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

Scenario in_band(topo::Topology t) {
  Scenario s = tb::basic_scenario(std::move(t));
  s.endpoint_model = EndpointModel::hca;
  s.hca_host.flow_transport = FlowTransport::ud;  // a lost packet is lost, not retransmitted
  s.outputs.packets_csv = false;
  s.subnet_manager.mode = SmMode::in_band;
  s.subnet_manager.transaction_timeout = sc_time(100, SC_US);
  s.duration = sc_time(1, SC_MS);
  return s;
}

// The switch ports a packet from `src` to `dst` leaves by, following the switches' own LFTs;
// fails the test if the walk meets a port without a route, a down cable or a loop.
std::vector<topo::PortRef> walk(const Fabric& f, uint32_t src, uint32_t dst) {
  const topo::Topology& t = f.scenario().topology;
  std::vector<topo::PortRef> out;
  topo::PortRef at = t.peer(src, 1);
  while (t.nodes[at.node].kind == topo::NodeKind::switch_node && out.size() < 16) {
    const uint8_t port = f.switch_at(at.node)->lft().lookup(t.nodes[dst].lid);
    if (port == sw::Lft::kNoRoute) {
      ADD_FAILURE() << t.nodes[at.node].name << " has no route to " << t.nodes[dst].name;
      return out;
    }
    EXPECT_TRUE(f.switch_at(at.node)->link_up(port))
        << t.nodes[src].name << " -> " << t.nodes[dst].name << " leaves " << t.nodes[at.node].name << " by down port "
        << int(port);
    out.push_back({at.node, port});
    at = t.peer(at.node, port);
  }
  EXPECT_EQ(at.node, dst) << t.nodes[src].name << " -> " << t.nodes[dst].name;
  return out;
}

}  // namespace

// h1 -> h8 crosses the spine of a 2-ary 3-tree; the cable between its path's second and third
// switch goes down 100 us after the subnet is up.
TEST(LinkDown, InBandTrapIsRepressedTheSmReroutesAroundTheDeadCableAndTheFlowResumes) {
  const topo::Topology tree = topo::kary_ntree(2, 3);
  const std::vector<uint32_t> eps = tree.endpoints();
  const uint32_t src = eps.front(), dst = eps.back();
  // Where the flow's path goes is the SM's to decide: the test reads it from the switches'
  // tables once the subnet is up, then takes a cable of that path down by hand (Switch::
  // set_link, what a link event does at both ends).
  Scenario s = in_band(tree);
  s.duration = sc_time(10, SC_MS);
  // A trap or its TrapRepress may cross the dead cable (the LFTs still lead there until the
  // SM changes them) and be lost; the SMA then resends it after SubnetTimeout: 8 is 1.05 ms.
  s.subnet_manager.subnet_timeout = 8;
  s.flows.push_back(tb::saturating_flow("f", tree.nodes[src].name, tree.nodes[dst].name));
  s.flows.back().payload_bytes = 1024;
  Fabric probe_fabric(s);
  // Until the subnet is up (about 1.3 ms), in steps shorter than the 100 us to the event.
  while (!probe_fabric.subnet_manager()->done() && sc_core::sc_time_stamp() < sc_time(5, SC_MS))
    sc_core::sc_start(sc_time(10, SC_US));
  ASSERT_TRUE(probe_fabric.subnet_manager()->report().up);
  const std::vector<topo::PortRef> path = walk(probe_fabric, src, dst);
  ASSERT_GE(path.size(), 3u);
  const topo::PortRef cut = path[1];  // the second switch's output toward the third
  const topo::PortRef far = tree.peer(cut.node, cut.port);
  const uint64_t up_ps = probe_fabric.subnet_manager()->report().up_ps;

  // 100 us after the subnet is up, both ends at once.
  sw::Switch& a = *probe_fabric.switch_at(cut.node);
  sw::Switch& b = *probe_fabric.switch_at(far.node);
  const uint64_t event_ps = up_ps + 100'000'000;
  ASSERT_LT(sc_core::sc_time_stamp().value(), event_ps);
  sc_core::sc_start(sc_time::from_value(event_ps - sc_core::sc_time_stamp().value()));
  const uint64_t delivered_before = probe_fabric.recorder().flows().at(0).delivered;
  ASSERT_GT(delivered_before, 0u);
  a.set_link(cut.port, false, ib::mad::kPortInit);
  b.set_link(far.port, false, ib::mad::kPortInit);
  EXPECT_EQ(a.port_state(cut.port), ib::mad::kPortDown);
  EXPECT_EQ(b.port_state(far.port), ib::mad::kPortDown);
  EXPECT_FALSE(a.link_up(cut.port));

  sc_core::sc_start(sc_time(2500, SC_US));
  const sm::InbandSm& smgr = *probe_fabric.subnet_manager();
  // Both ends trapped; the SM read the traps and repressed them (IBA 13.4.9).
  ASSERT_EQ(a.traps().size(), 1u);
  ASSERT_EQ(b.traps().size(), 1u);
  for (const sw::Switch* s : {&a, &b}) {
    const sw::Switch::TrapRecord& tr = s->traps().front();
    EXPECT_GE(tr.first_sent_ps, event_ps);
    EXPECT_GE(tr.sends, 1u);
    EXPECT_LE(tr.sends, 3u);
    EXPECT_GT(tr.repressed_ps, tr.first_sent_ps);
  }
  ASSERT_GE(smgr.traps().size(), 1u);
  EXPECT_EQ(smgr.traps().front().trap_number, ib::mad::kTrapLinkStateChange);
  ASSERT_GE(smgr.sweeps().size(), 1u);
  const sm::InbandSweep& w = smgr.sweeps().front();
  EXPECT_TRUE(w.error.empty()) << w.error;
  EXPECT_GT(w.ended_ps, w.started_ps);
  // The dead cable is absent from what it found; nothing was lost from the fabric.
  EXPECT_EQ(w.links, tree.links.size() - 1);
  EXPECT_EQ(w.switches, tree.switches().size());
  EXPECT_EQ(w.cas, eps.size());
  EXPECT_TRUE(w.lost.empty());
  // Only the blocks that changed were Set: some, and not all.
  EXPECT_GT(w.lft_blocks_set, 0u);
  EXPECT_LT(w.lft_blocks_set, w.lft_blocks_total);
  EXPECT_GT(w.last_lft_answer_ps, w.discovered_ps);

  // Every pair routes again, around the dead cable (walk() fails on a down port).
  for (uint32_t x : eps)
    for (uint32_t y : eps)
      if (x != y) walk(probe_fabric, x, y);

  // The flow lost packets to the cable, and delivers again after the recovery, losing no
  // more: dropped as link_down between the event and the last LFT Set, none after.
  const uint64_t recovered_ps = w.last_lft_answer_ps;
  const metrics::FlowTotals& ft = probe_fabric.recorder().flows().at(0);
  EXPECT_GT(ft.dropped, 0u);
  const uint64_t dropped_at_recovery_check = ft.dropped;
  const uint64_t delivered_mid = ft.delivered;
  sc_core::sc_start(sc_time(200, SC_US));
  EXPECT_GT(sc_core::sc_time_stamp().value(), recovered_ps);
  EXPECT_GT(ft.delivered, delivered_mid);
  EXPECT_EQ(ft.dropped, dropped_at_recovery_check);
  const auto& reasons = probe_fabric.recorder().drops_by_reason();
  ASSERT_TRUE(reasons.count(static_cast<uint8_t>(ib::DropReason::link_down)));
  EXPECT_EQ(reasons.at(static_cast<uint8_t>(ib::DropReason::link_down)), probe_fabric.recorder().dropped());

  // Credits do not leak: nothing crosses the dead cable any more, so each end holds every
  // credit of the buffer across it.
  const uint32_t limit = s.switch_cfg.vl_buffer_bytes / ib::kCreditBlockBytes;
  EXPECT_EQ(a.credits_held(cut.port, 0), limit);
  EXPECT_EQ(b.credits_held(far.port, 0), limit);
  // Conservation: every packet injected is delivered, dropped or still in the fabric.
  probe_fabric.finish();
  const metrics::Recorder& rec = probe_fabric.recorder();
  EXPECT_EQ(rec.injected(), rec.delivered() + rec.dropped() + probe_fabric.packets_in_flight());
}

namespace {

// Every host sends to its mirror image (h1 -> h8, h2 -> h7, ...): every leaf's up cables
// carry some flow, whichever way the SM spreads them.
Scenario mirrored_flows(Scenario s) {
  const std::vector<uint32_t> eps = s.topology.endpoints();
  for (size_t i = 0; i < eps.size(); ++i) {
    s.flows.push_back(tb::saturating_flow("f" + std::to_string(i), s.topology.nodes[eps[i]].name,
                                          s.topology.nodes[eps[eps.size() - 1 - i]].name));
    s.flows.back().payload_bytes = 1024;
  }
  return s;
}

// node/port of the first switch-to-switch cable of the first endpoint's leaf.
std::string leaf_uplink(const topo::Topology& t) {
  const uint32_t leaf = t.peer(t.endpoints().front(), 1).node;
  for (uint16_t p = 1; p <= t.nodes[leaf].num_ports; ++p)
    if (t.link_at(leaf, p) >= 0 && t.nodes[t.peer(leaf, p).node].kind == topo::NodeKind::switch_node)
      return t.nodes[leaf].name + "/" + std::to_string(p);
  return "";
}

}  // namespace

// The scenario key drives the same thing, and the report joins the event, the switches'
// traps and the SM's sweep: times in causal order, recovery after the last LFT Set, and the
// lost packets equal to the run's link_down drops.
TEST(LinkDown, ScenarioEventIsReportedWithTrapSweepRecoveryAndTheLostPackets) {
  Scenario s = mirrored_flows(in_band(topo::kary_ntree(2, 3)));
  s.duration = sc_time(5, SC_MS);
  // A trap or its repress that crosses the dead cable is lost; the resend (SubnetTimeout 8:
  // 1.05 ms) gets through once the SM has rerouted.
  s.subnet_manager.subnet_timeout = 8;
  const std::string cable = leaf_uplink(s.topology);
  ASSERT_FALSE(cable.empty());
  s.link_events.push_back({sc_time(100, SC_US), cable, false});
  Fabric f(s);
  sc_core::sc_start(sc_time(3, SC_MS));
  f.finish();
  ASSERT_NE(f.link_events(), nullptr);
  const std::vector<LinkEventReport> rows = f.link_events()->report();
  ASSERT_EQ(rows.size(), 1u);
  const LinkEventReport& r = rows[0];
  ASSERT_TRUE(r.fired);
  EXPECT_EQ(r.at_ps, f.subnet_manager()->report().up_ps + 100'000'000);
  EXPECT_EQ(r.end_a == cable || r.end_b == cable, true);
  EXPECT_GT(r.trap_sent_ps, r.at_ps);
  EXPECT_GT(r.trap_received_ps, r.trap_sent_ps);
  EXPECT_GT(r.trap_repressed_ps, r.trap_received_ps);
  EXPECT_GE(r.trap_sends, 2u);  // one per end, and a resend of one that was lost
  EXPECT_LE(r.trap_sends, 4u);
  EXPECT_GE(r.sweeps, 1u);
  EXPECT_GT(r.sweep_smps, 0u);
  EXPECT_GT(r.lft_blocks_set, 0u);
  EXPECT_GT(r.recovered_ps, r.trap_received_ps);
  EXPECT_TRUE(r.unreachable.empty());
  EXPECT_TRUE(r.sweep_error.empty()) << r.sweep_error;
  EXPECT_GT(r.lost, 0u);
  EXPECT_EQ(r.lost, f.recorder().drops_by_reason().at(static_cast<uint8_t>(ib::DropReason::link_down)));
  EXPECT_EQ(r.lost_to_recovery, r.lost);  // nothing lost once rerouted
  EXPECT_EQ(r.unroutable, 0u);
  EXPECT_NE(LinkEvents::text(rows).find("rerouted"), std::string::npos);
}

// A host's own cable: its loss partitions the fabric. The sweep reports the host gone, every
// switch's LFT loses its LID (the blocks Set), and packets to it stop at their first switch
// (no_route) instead of at the dead cable.
TEST(LinkDown, LosingAHostsCablePartitionsTheFabricAndTheReportNamesTheHost) {
  Scenario s = mirrored_flows(in_band(topo::kary_ntree(2, 3)));
  const topo::Topology& t = s.topology;
  const uint32_t lost_host = t.endpoints().back();
  s.link_events.push_back({sc_time(100, SC_US), t.nodes[lost_host].name + "/1", false});
  Fabric f(s);
  sc_core::sc_start(sc_time(2100, SC_US));
  f.finish();
  const LinkEventReport r = f.link_events()->report().at(0);
  ASSERT_EQ(r.unreachable.size(), 1u);
  EXPECT_EQ(r.unreachable[0], topo::node_description(t.nodes[lost_host]));
  EXPECT_GT(r.recovered_ps, 0u);
  EXPECT_GT(r.unroutable, 0u);
  for (uint32_t sw : t.switches()) EXPECT_EQ(f.switch_at(sw)->lft().lookup(t.nodes[lost_host].lid), sw::Lft::kNoRoute);
  EXPECT_FALSE(f.host_at(lost_host)->hca.link_up());
  EXPECT_EQ(f.host_at(lost_host)->hca.port_state(), IBVP_PORT_DOWN);
  EXPECT_NE(LinkEvents::text({r}).find("unreachable now: " + r.unreachable[0]), std::string::npos);
}

// IBA 13.4.9: an SMA resends its trap until the SM represses it. With SubnetTimeout 2
// (16.4 us) and an SM host that takes 50 us per MAD, each end sends its trap more than once;
// the resends are repressed and start no second sweep of their own.
TEST(LinkDown, TrapIsResentEverySubnetTimeoutUntilRepressed) {
  Scenario s = in_band(topo::kary_ntree(2, 3));
  s.allow_idle = true;  // no traffic: only the SM's and the SMAs' MADs
  s.subnet_manager.subnet_timeout = 2;
  s.subnet_manager.mad_processing = sc_time(50, SC_US);
  s.subnet_manager.transaction_timeout = sc_time(20, SC_MS);  // the SM's host is slow, not the fabric
  s.duration = sc_time(60, SC_MS);
  s.link_events.push_back({sc_time(100, SC_US), leaf_uplink(s.topology), false});
  Fabric f(s);
  sc_core::sc_start(sc_time(40, SC_MS));
  f.finish();
  ASSERT_TRUE(f.subnet_manager()->report().up) << f.subnet_manager()->report().error;
  const LinkEventReport r = f.link_events()->report().at(0);
  EXPECT_GT(r.trap_sends, 2u);
  EXPECT_GT(r.trap_repressed_ps, 0u);
  EXPECT_EQ(f.subnet_manager()->traps().size(), 2u);  // one per end; resends are not new traps
  EXPECT_LE(r.sweeps, 2u);
  EXPECT_GT(r.recovered_ps, 0u);
}

// Out of band there is no SM in the run: the cable goes down, its traffic is dropped and
// counted, nothing traps or reroutes, and the deadlock watch does not take the dead cable's
// idle outputs for a deadlock.
TEST(LinkDown, OutOfBandTheCableDropsItsTrafficNoOneReroutesAndNoDeadlockIsReported) {
  Scenario s = tb::basic_scenario(topo::kary_ntree(2, 3));
  s.outputs.packets_csv = false;
  s.duration = sc_time(2, SC_MS);
  s.deadlock_timeout = sc_time(100, SC_US);
  s = mirrored_flows(s);
  s.link_events.push_back({sc_time(200, SC_US), leaf_uplink(s.topology), false});
  const RunResult res = run_scenario(s, RunOptions{});
  EXPECT_FALSE(res.deadlock) << res.deadlock_report;
  EXPECT_EQ(res.injected, res.delivered + res.dropped + res.in_flight);
  EXPECT_GT(res.dropped, 0u);
  EXPECT_NE(res.link_events_text.find("no SM in band to reroute"), std::string::npos) << res.link_events_text;
}

// A cable that comes back trains to Init (IBA 7.2); its traps start a sweep that finds it
// again, arms and activates both its ports, and routes over it; the report says when the
// ports were Active again.
TEST(LinkDown, CableThatComesBackIsArmedAndActivatedByTheSmAndRoutedAgain) {
  Scenario s = mirrored_flows(in_band(topo::kary_ntree(2, 3)));
  s.duration = sc_time(5, SC_MS);
  s.subnet_manager.subnet_timeout = 8;
  const std::string cable = leaf_uplink(s.topology);
  s.link_events.push_back({sc_time(100, SC_US), cable, false});
  s.link_events.push_back({sc_time(2000, SC_US), cable, true});
  Fabric f(s);
  sc_core::sc_start(sc_time(5100, SC_US));
  f.finish();
  const std::vector<LinkEventReport> rows = f.link_events()->report();
  ASSERT_EQ(rows.size(), 2u);
  const LinkEventReport& up = rows[1];
  ASSERT_TRUE(up.fired);
  EXPECT_TRUE(up.up);
  EXPECT_GT(up.trap_received_ps, up.at_ps);
  EXPECT_TRUE(up.sweep_error.empty()) << up.sweep_error;
  EXPECT_GT(up.recovered_ps, up.trap_received_ps);
  EXPECT_LT(rows[0].recovered_ps, up.at_ps);
  const topo::Topology& t = f.scenario().topology;
  const size_t slash = cable.rfind('/');
  const uint32_t node = t.find(cable.substr(0, slash));
  const uint16_t port = static_cast<uint16_t>(std::stoi(cable.substr(slash + 1)));
  const topo::PortRef far = t.peer(node, port);
  EXPECT_TRUE(f.switch_at(node)->link_up(port));
  EXPECT_EQ(f.switch_at(node)->port_state(port), ib::mad::kPortActive);
  EXPECT_EQ(f.switch_at(far.node)->port_state(far.port), ib::mad::kPortActive);
  const sm::InbandSweep* activating = nullptr;
  for (const sm::InbandSweep& w : f.subnet_manager()->sweeps())
    if (w.started_ps >= up.at_ps && w.ports_activated) activating = &w;
  ASSERT_NE(activating, nullptr);
  EXPECT_EQ(activating->ports_activated, 2u);
  EXPECT_EQ(activating->links, t.links.size());
  const std::vector<uint32_t> eps = t.endpoints();
  for (uint32_t x : eps)
    for (uint32_t y : eps)
      if (x != y) walk(f, x, y);
}

// Out of band with subnet_manager.reroute_delay: the routing engine routes the fabric
// without the dead cable that long after the event and the tables go straight into the
// switches; from then on every pair routes around it and nothing more is lost.
TEST(LinkDown, OutOfBandRerouteDelayLoadsTablesWithoutTheDeadCableAfterTheDelay) {
  Scenario s = tb::basic_scenario(topo::kary_ntree(2, 3));
  s.outputs.packets_csv = false;
  s.duration = sc_time(2, SC_MS);
  s = mirrored_flows(s);
  s.subnet_manager.reroute = true;
  s.subnet_manager.reroute_delay = sc_time(50, SC_US);
  s.link_events.push_back({sc_time(200, SC_US), leaf_uplink(s.topology), false});
  Fabric f(s);
  sc_core::sc_start(sc_time(1, SC_MS));
  const LinkEventReport r = f.link_events()->report().at(0);
  EXPECT_EQ(r.at_ps, 200'000'000u);
  EXPECT_EQ(r.recovered_ps, 250'000'000u);
  EXPECT_TRUE(r.sweep_error.empty()) << r.sweep_error;
  EXPECT_EQ(r.trap_sent_ps, 0u);  // no SM has set MasterSMLID: no trap
  EXPECT_GT(r.lft_blocks_set, 0u);
  EXPECT_GT(r.lost, 0u);
  EXPECT_EQ(r.lost_to_recovery, r.lost);
  const std::vector<uint32_t> eps = f.scenario().topology.endpoints();
  for (uint32_t x : eps)
    for (uint32_t y : eps)
      if (x != y) walk(f, x, y);
  const uint64_t dropped = f.recorder().dropped();
  sc_core::sc_start(sc_time(500, SC_US));
  EXPECT_EQ(f.recorder().dropped(), dropped);
  EXPECT_NE(LinkEvents::text({r}).find("rerouted out of band"), std::string::npos);
}
