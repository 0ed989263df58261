// Multicast from HCA hosts (docs/multicast.md, "Multicast on HCA hosts"): the source's UD QP
// sends to the group's MLID with DestQP 0xFFFFFF, the switch replicates, and every member's
// HCA hands each copy to the QP its host attached to the MLID (verbs::attach_mcast, IBA 10.5).
#include <gtest/gtest.h>

#include <systemc>

#include "common/fabrics.h"
#include "firmware/hal/ibvp_hal.h"
#include "platform/apps/flow_streams.h"
#include "platform/builder/fabric.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

// One switch, six HCA hosts: h1 sends to {h2, h3, h4}; h5 loads h3's link; h6 is a bystander.
Scenario hca_group_star(sw::Replication scheme) {
  Scenario s = tb::basic_scenario(tb::star(6));
  s.endpoint_model = EndpointModel::hca;
  s.hca_host.flow_transport = FlowTransport::ud;
  s.outputs.rate_window = sc_core::SC_ZERO_TIME;
  s.switch_cfg.multicast_replication = scheme;
  MulticastGroupConfig g;
  g.name = "g";
  g.source = "h1";
  g.members = {"h2", "h3", "h4"};
  s.multicast.push_back(g);
  FlowConfig mc = tb::saturating_flow("mc", "h1", "g", 256);
  mc.generator = GeneratorKind::constant;
  // 256-byte SENDs at a tenth of the link: the hosts and HCAs keep up (at 0.3 the source HCA
  // falls behind its posts), and every datagram has arrived by the end.
  mc.load = 0.1;
  mc.stop = sc_time(600, SC_US);
  s.flows.push_back(mc);
  FlowConfig bg = tb::saturating_flow("bg", "h5", "h3", 2048);
  bg.generator = GeneratorKind::poisson;
  bg.load = 0.5;
  bg.stop = sc_time(600, SC_US);
  s.flows.push_back(bg);
  s.duration = sc_time(1, SC_MS);
  return s;
}

void expect_each_member_qp_receives_each_datagram_once(sw::Replication scheme) {
  const Scenario s = hca_group_star(scheme);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  const apps::FlowStreams& app = *f.flow_streams();
  ASSERT_EQ(app.error(), "");
  const metrics::Recorder& r = f.recorder();
  const uint64_t sent = r.flows()[0].injected;
  ASSERT_GT(sent, 100u);
  EXPECT_EQ(f.packets_in_flight(), 0u);
  // The program reaps send completions before each post: after the last, some are left.
  EXPECT_LE(app.completed(0), sent);
  // At the ports: each member's CA port took one copy of each packet, nobody else any.
  const std::vector<uint64_t> copies = r.member_copies(0);
  ASSERT_EQ(copies.size(), 3u);
  for (uint64_t c : copies) EXPECT_EQ(c, sent);
  EXPECT_EQ(r.non_member_copies(0), 0u);
  // At the QPs: every copy completed one receive on its member's attached QP (3 per packet),
  // so none was dropped by the firmware for want of an attached QP or a receive WQE.
  EXPECT_EQ(app.received(0), 3 * sent);
  const topo::Topology& t = f.scenario().topology;
  for (const char* m : {"h2", "h3", "h4"})
    EXPECT_EQ(f.host_at(t.find(m))->hca.fw_counter(IBVP_CNT_RX_DROPPED), 0u) << m;
  // Conservation counting copies: the switch made two beyond each original.
  EXPECT_EQ(r.replicated(), 2 * sent);
  EXPECT_EQ(r.injected() + r.replicated(), r.delivered() + r.dropped() + f.packets_in_flight());
  EXPECT_EQ(r.dropped(), 0u);
  EXPECT_EQ(f.packets_buffered_in_switches(), 0u);
}

}  // namespace

TEST(HcaMulticast, SynchronousEveryMemberQpReceivesEachDatagramOnce) {
  expect_each_member_qp_receives_each_datagram_once(sw::Replication::synchronous);
}
TEST(HcaMulticast, AsynchronousEveryMemberQpReceivesEachDatagramOnce) {
  expect_each_member_qp_receives_each_datagram_once(sw::Replication::asynchronous);
}
TEST(HcaMulticast, CentralBufferEveryMemberQpReceivesEachDatagramOnce) {
  expect_each_member_qp_receives_each_datagram_once(sw::Replication::central_buffer);
}

// A copy that reaches a CA whose host attached no QP to the MLID is taken by the port and
// dropped by the firmware (IBA 10.5: only attached QPs receive): h6 is put in the MFT entry by
// hand, but its host runs no receiver of the flow.
TEST(HcaMulticast, ACopyToAnHcaWithoutAnAttachedQpIsDroppedByItsFirmware) {
  const Scenario s = hca_group_star(sw::Replication::asynchronous);
  Fabric f(s);
  const topo::Topology& t = f.scenario().topology;
  const uint32_t sw_node = [&] {
    for (uint32_t n = 0; n < t.nodes.size(); ++n)
      if (t.nodes[n].kind == topo::NodeKind::switch_node) return n;
    return 0u;
  }();
  const uint16_t mlid = static_cast<uint16_t>(f.scenario().multicast[0].mlid);
  sw::Mft mft = f.switch_at(sw_node)->mft();
  mft.entry(mlid).set(6);  // h6 is on port 6 of the star
  f.switch_at(sw_node)->set_mft(mft);
  sc_core::sc_start(s.duration);
  f.finish();
  const metrics::Recorder& r = f.recorder();
  const uint64_t sent = r.flows()[0].injected;
  ASSERT_GT(sent, 100u);
  EXPECT_EQ(r.non_member_copies(0), sent);
  EXPECT_EQ(f.host_at(t.find("h6"))->hca.fw_counter(IBVP_CNT_RX_DROPPED), sent);
  EXPECT_EQ(f.flow_streams()->received(0), 3 * sent);  // the members' QPs are unaffected
  EXPECT_EQ(r.injected() + r.replicated(), r.delivered() + r.dropped() + f.packets_in_flight());
  EXPECT_EQ(f.packets_in_flight(), 0u) << f.packets_buffered_in_switches();
}
