// Control traffic (the scenario's control section, issue 11; seed 000 Sec. 4): one packet
// per period from every sender, on VL15 ahead of every data VL, not credited and dropped
// where a VL15 buffer overflows; the same on fabric-only endpoints and on HCA hosts.
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

// A 2048-byte UD SEND is 2082 bytes on the wire, a MAD (256 bytes) 290: at 4X SDR (1 byte
// per ns) 2082 ns and 290 ns.
constexpr uint64_t kDataPacketPs = 2082'000;
constexpr uint64_t kMadPs = 290'000;
constexpr uint64_t kPropPs = 5'000;
constexpr uint64_t kPipelinePs = 100'000;

Scenario with_control(Scenario s, sc_time period) {
  s.control.enabled = true;
  s.control.period = period;
  return s;
}

Scenario hca_hosts(uint32_t hosts) {
  Scenario s = tb::basic_scenario(tb::star(hosts));
  s.endpoint_model = EndpointModel::hca;
  s.outputs.packets_csv = false;
  return s;
}

// The control flows (control/<sender>) as the fabric built them.
std::vector<size_t> control_flows(const Fabric& f) {
  std::vector<size_t> out;
  for (size_t i = 0; i < f.flows().size(); ++i)
    if (f.flows()[i].control) out.push_back(i);
  return out;
}

void expect_one_per_period(Fabric& f, const Scenario& s, size_t senders) {
  const std::vector<size_t> flows = control_flows(f);
  ASSERT_EQ(flows.size(), senders);
  const uint64_t periods = s.duration.value() / s.control.period.value();
  for (size_t i : flows) {
    const metrics::FlowTotals& t = f.recorder().flows()[i];
    EXPECT_GE(t.delivered + 1, periods) << f.flows()[i].name;
    EXPECT_LE(t.injected, periods + 1) << f.flows()[i].name;
    EXPECT_EQ(t.dropped, 0u) << f.flows()[i].name;
    EXPECT_LE(t.injected - t.delivered, 1u) << f.flows()[i].name;  // the last may be on its way
  }
}

}  // namespace

TEST(ControlTraffic, EverySenderSendsOnePacketPerPeriodOnVl15) {
  Scenario s = with_control(tb::basic_scenario(tb::star(4)), sc_time(100, SC_US));
  s.duration = sc_time(2, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  expect_one_per_period(f, s, 4);
  // Packet k of every sender is created at k periods, exactly (whole picoseconds), goes to
  // another endpoint and crosses every link on VL15.
  std::vector<uint64_t> next(f.flows().size(), 0);
  uint64_t seen = 0;
  for (const metrics::PacketRecord& r : f.recorder().packets()) {
    ASSERT_TRUE(f.flows()[r.flow].control);
    EXPECT_EQ(r.created_ps, next[r.flow] * s.control.period.value());
    ++next[r.flow];
    EXPECT_NE(r.src_node, r.dst_node);
    EXPECT_EQ(r.vl, ib::kVl15);
    ++seen;
  }
  EXPECT_GE(seen, 4 * 19u);
  // The default period is seed 000's 33.3 ms: 1/30 s in whole picoseconds.
  EXPECT_EQ(ControlConfig{}.period.value(), 33'333'333'333u);
}

TEST(ControlTraffic, UniformDestinationsSpreadOverEveryOtherEndpoint) {
  Scenario s = with_control(tb::basic_scenario(tb::star(4)), sc_time(10, SC_US));
  s.duration = sc_time(4, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  const topo::Topology& t = f.scenario().topology;
  // Each sender's 400 packets over 3 destinations: every destination gets some, none most.
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> count;
  for (const metrics::PacketRecord& r : f.recorder().packets()) ++count[std::make_pair(r.src_node, r.dst_node)];
  for (uint32_t a : t.endpoints())
    for (uint32_t b : t.endpoints()) {
      if (a == b) continue;
      const uint32_t n = count[std::make_pair(a, b)];
      EXPECT_GT(n, 100u) << t.nodes[a].name << " -> " << t.nodes[b].name;
      EXPECT_LT(n, 170u) << t.nodes[a].name << " -> " << t.nodes[b].name;
    }
}

TEST(ControlTraffic, AControlPacketQueuedBehindSaturatedDataLeavesNext) {
  // h1 and h3 saturate h2 with 2048-byte data packets: the switch output to h2 always has
  // data waiting for credits, and h1 always has a data packet ready. h1's control packets
  // to h2 still wait at most one data packet at h1 (the one on the wire) and one at the
  // switch output, since VL15 goes before every data VL and needs no credits.
  Scenario s = with_control(tb::basic_scenario(tb::star(3)), sc_time(50, SC_US));
  s.flows.push_back(tb::saturating_flow("d1", "h1", "h2"));
  s.flows.push_back(tb::saturating_flow("d3", "h3", "h2"));
  s.control.senders = {"h1"};
  s.control.dst = "h2";
  s.control.start = sc_time(7, SC_US);  // not in step with the data packets
  s.duration = sc_time(3, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  const size_t control = control_flows(f).at(0);
  uint64_t packets = 0, worst_wait = 0, worst_latency = 0, data_worst = 0;
  for (const metrics::PacketRecord& r : f.recorder().packets()) {
    if (!r.done_ps || r.drop) continue;
    if (r.flow != control) {
      data_worst = std::max(data_worst, r.done_ps - r.created_ps);
      continue;
    }
    ++packets;
    worst_wait = std::max(worst_wait, r.injected_ps - r.created_ps);
    worst_latency = std::max(worst_latency, r.done_ps - r.created_ps);
  }
  EXPECT_GE(packets, 59u);
  EXPECT_LE(worst_wait, kDataPacketPs);
  EXPECT_GT(worst_wait, 0u);  // it did queue behind data
  // One data packet at h1, its own time, one data packet at the switch output, two cables
  // and the pipeline.
  EXPECT_LE(worst_latency, kDataPacketPs + kMadPs + kDataPacketPs + 2 * kPropPs + kPipelinePs);
  // The data packets themselves queue far longer (a buffer of them ahead at each hop).
  EXPECT_GT(data_worst, 4 * kDataPacketPs);
}

TEST(ControlTraffic, Vl15OverflowDropsAndCountsControlPackets) {
  // h3's 4096-byte data packets hold the switch output to h2 for 4.1 us each; h1 sends a
  // MAD every microsecond to h2. The switch's VL15 buffer on h1's input holds two MADs
  // (vl15_buffer_bytes 640), so the others are dropped as they arrive (IBA 7.9.4).
  Scenario s = with_control(tb::basic_scenario(tb::star(3)), sc_time(1, SC_US));
  s.flows.push_back(tb::saturating_flow("big", "h3", "h2", 4096));
  s.control.senders = {"h1"};
  s.control.dst = "h2";
  s.duration = sc_time(1, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  const metrics::FlowTotals& t = f.recorder().flows().at(control_flows(f).at(0));
  EXPECT_GT(t.dropped, 100u);
  EXPECT_GT(t.delivered, 100u);
  EXPECT_LE(t.injected - t.delivered - t.dropped, 3u);  // at most a buffer's worth on its way
  // Every drop is a VL15 overflow at the switch's input from h1, and counted there.
  const topo::Topology& topo = f.scenario().topology;
  const uint32_t sw = topo.find("s1");
  EXPECT_EQ(f.switch_at(sw)->counters(1).vl15_dropped, t.dropped);
  EXPECT_EQ(f.recorder().drops_by_reason().at(static_cast<uint8_t>(ib::DropReason::vl15_overflow)), t.dropped);
  // The data flow loses nothing: it is credited.
  EXPECT_EQ(f.recorder().flows().at(0).dropped, 0u);
}

TEST(ControlTraffic, HcaHostsSendControlPacketsFromTheirVl15Queue) {
  Scenario s = with_control(hca_hosts(4), sc_time(100, SC_US));
  s.duration = sc_time(2, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  expect_one_per_period(f, s, 4);
  // Each HCA's management agent consumed what the others sent it, and the packets crossed
  // the links on VL15.
  uint64_t received = 0, vl15_tx = 0;
  for (uint32_t e : f.scenario().topology.endpoints()) {
    received += f.host_at(e)->hca.management_received();
    vl15_tx += f.host_at(e)->hca.counters().vl[ib::kVl15].packets_tx;
  }
  EXPECT_EQ(received, f.recorder().delivered());
  EXPECT_EQ(vl15_tx, f.recorder().injected());
  EXPECT_EQ(f.recorder().injected(), f.recorder().delivered() + f.packets_in_flight());
}

TEST(ControlTraffic, OnHcaHostsAControlPacketLeavesAheadOfAFlowsData) {
  // An RC flow keeps h1's port busy with 2048-byte packets; h1's control packets to h2
  // wait at most the data packet on the wire at h1 and one at the switch output.
  Scenario s = with_control(hca_hosts(3), sc_time(50, SC_US));
  s.flows.push_back(tb::saturating_flow("d1", "h1", "h2"));
  s.flows.push_back(tb::saturating_flow("d3", "h3", "h2"));
  s.control.senders = {"h1"};
  s.control.dst = "h2";
  s.control.start = sc_time(7, SC_US);
  s.duration = sc_time(3, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  const metrics::FlowTotals& t = f.recorder().flows().at(control_flows(f).at(0));
  EXPECT_GE(t.delivered, 59u);
  EXPECT_EQ(t.dropped, 0u);
  // An RC SEND of 2048 bytes is 2074 bytes on the wire; the MAD reaches the destination
  // HCA's agent after the rx pipeline (50 ns).
  constexpr uint64_t kRcPacketPs = 2074'000;
  EXPECT_LE(t.latency_ps.max(), kRcPacketPs + kMadPs + kRcPacketPs + 2 * kPropPs + kPipelinePs);
  EXPECT_GT(f.recorder().flows().at(0).delivered, 500u);  // the data kept flowing (half of h2's link)
}

// Why seed 003's Fig. 9 on HCA hosts loses control packets (docs/management.md, "VL15
// receive buffers at HCA ports"): seven senders' packets for h8 leave the switch back to
// back. h8's HCA holds a VL15 packet's space from its head until the rx pipeline (50 ns)
// has passed its tail, so the next packet's head finds the previous one still there. The
// default 640-byte buffer holds two MADs (290 bytes on the wire, 5 credit blocks each):
// nothing is lost. A 286-byte payload is 322 bytes on the wire, 6 blocks: one fits, and
// every second packet of the burst is dropped (the 2nd, 4th and 6th of seven), IBA 7.9.4.
// Room for two such packets (768 bytes) loses nothing again.
struct BurstLoss {
  uint64_t delivered = 0, dropped = 0, dropped_at_h8 = 0;
};

BurstLoss burst_into_h8(uint32_t payload_bytes, uint32_t vl15_buffer_bytes) {
  Scenario s = with_control(hca_hosts(8), sc_time(100, SC_US));
  s.control.dst = "h8";
  s.control.payload_bytes = payload_bytes;
  s.endpoint_cfg.vl15_buffer_bytes = vl15_buffer_bytes;
  s.duration = sc_time(1, SC_MS);  // ten bursts, at 0, 100, ..., 900 us
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  BurstLoss r;
  for (size_t i : control_flows(f)) {
    r.delivered += f.recorder().flows()[i].delivered;
    r.dropped += f.recorder().flows()[i].dropped;
  }
  r.dropped_at_h8 = f.host_at(f.scenario().topology.find("h8"))->hca.counters().vl15_dropped;
  return r;
}

TEST(ControlTraffic, OnHcaHostsABackToBackBurstOfMadsFitsTheTwoMadVl15Buffer) {
  const BurstLoss r = burst_into_h8(256, 640);
  EXPECT_EQ(r.delivered, 70u);
  EXPECT_EQ(r.dropped, 0u);
}

TEST(ControlTraffic, OnHcaHostsAVl15BufferWithRoomForOnePacketDropsEverySecondOfABurst) {
  const BurstLoss r = burst_into_h8(286, 640);
  EXPECT_EQ(r.dropped, 30u);  // 3 of every 7
  EXPECT_EQ(r.delivered, 40u);
  EXPECT_EQ(r.dropped_at_h8, r.dropped);
}

TEST(ControlTraffic, OnHcaHostsAVl15BufferWithRoomForTwoPacketsLosesNoneOfABurst) {
  const BurstLoss r = burst_into_h8(286, 768);
  EXPECT_EQ(r.delivered, 70u);
  EXPECT_EQ(r.dropped, 0u);
}

TEST(ManagementDatagrams, AMadSentFromQp0ArrivesByteForByteWithTheSendersLid) {
  // Issue 16's host interface: a MAD handed to one HCA's QP0 crosses the switch on VL15 and
  // reaches the receiver registered on the destination port with its 256 bytes unchanged.
  Scenario s = hca_hosts(3);
  s.duration = sc_time(20, SC_US);
  Fabric f(s);
  const std::vector<uint32_t> eps = f.scenario().topology.endpoints();
  hca::Hca& from = f.host_at(eps[0])->hca;
  hca::Hca& to = f.host_at(eps[2])->hca;
  std::vector<std::pair<ib::MadDatagram, uint64_t>> got;
  to.set_mad_receiver([&](const ib::MadDatagram& m, uint64_t at) { got.emplace_back(m, at); });
  ib::MadDatagram m;
  m.dlid = to.lid();
  for (size_t i = 0; i < m.mad.size(); ++i) m.mad[i] = static_cast<uint8_t>(i * 7 + 3);
  from.send_mad(m, 0);
  ib::MadDatagram other = m;
  other.dest_qp = 2;  // MADs go to QP0 or QP1 only
  EXPECT_THROW(from.send_mad(other, 0), std::invalid_argument);
  sc_core::sc_start(s.duration);
  f.finish();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first.mad, m.mad);
  EXPECT_EQ(got[0].first.slid, from.lid());
  EXPECT_EQ(got[0].first.dlid, to.lid());
  EXPECT_EQ(got[0].first.dest_qp, 0u);
  // Cut through at the switch: the tail reaches the port one serialization (290 ns at 1
  // byte/ns) after it left plus the two links' propagation and the switch's pipeline.
  EXPECT_GT(got[0].second, kMadPs + 2 * kPropPs);
  EXPECT_LT(got[0].second, 2 * kMadPs + kPipelinePs);
  EXPECT_EQ(to.management_received(), 1u);
}
