// The HCA's QP0 and QP1 in its firmware (issue 16): the default image's SMA answers SubnMgt
// SMPs (IBA 14.2) and its PMA PerfMgt GMPs (IBA 16.1) through the port; what they do not
// serve reaches the host's management software (Hca::set_mad_receiver).
#include <gtest/gtest.h>

#include <algorithm>
#include <systemc>
#include <utility>
#include <vector>

#include "common/fabrics.h"
#include "models/ib/mad.h"
#include "platform/builder/fabric.h"
#include "platform/metrics/firmware_report.h"

using namespace ibvp;
using sc_core::SC_US;
using sc_core::sc_time;
namespace mad = ib::mad;

namespace {

Scenario hca_hosts(uint32_t hosts) {
  Scenario s = tb::basic_scenario(tb::star(hosts));
  s.endpoint_model = EndpointModel::hca;
  s.outputs.packets_csv = false;
  s.duration = sc_time(100, SC_US);
  return s;
}

ib::MadDatagram smp_to(uint16_t dlid, const mad::Smp& s) {
  ib::MadDatagram m;
  m.dlid = dlid;
  m.dest_qp = 0;
  mad::Bytes b;
  mad::encode(s, b);
  m.mad = b;
  return m;
}

mad::PerfMad perf_get(uint16_t attribute, uint64_t tid) {
  mad::PerfMad g;
  g.hdr.mgmt_class = mad::kClassPerfMgt;
  g.hdr.class_version = mad::kPerfClassVersion;
  g.hdr.method = mad::kMethodGet;
  g.hdr.transaction_id = tid;
  g.hdr.attribute_id = attribute;
  mad::PortCounters pc;
  pc.port_select = 1;
  pc.encode(g.data);
  return g;
}

ib::MadDatagram gmp_to(uint16_t dlid, const mad::PerfMad& g) {
  ib::MadDatagram m;
  m.dlid = dlid;
  m.dest_qp = 1;
  m.src_qp = 1;
  m.q_key = ib::kQp1QKey;
  mad::Bytes b;
  mad::encode(g, b);
  m.mad = b;
  return m;
}

// The MADs an HCA's firmware hands to its host.
struct Inbox {
  std::vector<std::pair<ib::MadDatagram, uint64_t>> got;
  void attach(hca::Hca& h) {
    h.set_mad_receiver([this](const ib::MadDatagram& m, uint64_t at) { got.emplace_back(m, at); });
  }
  mad::Smp smp(size_t i) const { return mad::decode_smp(got.at(i).first.mad); }
  mad::PerfMad perf(size_t i) const { return mad::decode_perf(got.at(i).first.mad); }
};

struct Hosts {
  Fabric f;
  std::vector<uint32_t> eps;
  explicit Hosts(const Scenario& s) : f(s), eps(f.scenario().topology.endpoints()) {}
  hca::Hca& hca(size_t i) { return f.host_at(eps.at(i))->hca; }
};

}  // namespace

TEST(HcaSma, ALidRoutedGetReturnsTheTopologysGuidsAndThePortsLid) {
  Hosts h(hca_hosts(3));
  Inbox a, b;
  a.attach(h.hca(0));
  b.attach(h.hca(1));
  const uint16_t dlid = h.hca(1).lid();
  h.hca(0).send_mad(smp_to(dlid, mad::make_lid_routed_smp(mad::kMethodGet, mad::kAttrNodeInfo, 0, 7)), 0);
  h.hca(0).send_mad(smp_to(dlid, mad::make_lid_routed_smp(mad::kMethodGet, mad::kAttrPortInfo, 1, 8)), 0);
  h.hca(0).send_mad(smp_to(dlid, mad::make_lid_routed_smp(mad::kMethodGet, mad::kAttrNodeDescription, 0, 9)), 0);
  sc_core::sc_start(sc_time(50, SC_US));
  ASSERT_EQ(a.got.size(), 3u);
  EXPECT_TRUE(b.got.empty()) << "a request the SMA served reached the host";
  const topo::Topology& t = h.f.scenario().topology;
  const mad::Smp ni = a.smp(0);
  EXPECT_EQ(ni.hdr.method, mad::kMethodGetResp);
  EXPECT_EQ(ni.hdr.status, mad::kStatusOk);
  EXPECT_EQ(ni.hdr.transaction_id, 7u);
  const mad::NodeInfo n = mad::NodeInfo::decode(ni.data);
  EXPECT_EQ(n.node_type, mad::kNodeCa);
  EXPECT_EQ(n.num_ports, 1);
  EXPECT_EQ(n.node_guid, topo::node_guid(t, h.eps[1]));
  EXPECT_EQ(n.port_guid, topo::port_guid(t, h.eps[1]));
  EXPECT_NE(n.node_guid, 0u);
  const mad::PortInfo p = mad::PortInfo::decode(a.smp(1).data);
  EXPECT_EQ(a.smp(1).hdr.transaction_id, 8u);
  EXPECT_EQ(p.lid, dlid);
  EXPECT_EQ(p.port_state, mad::kPortActive);  // the SM programmed the fabric out of band
  EXPECT_EQ(p.local_port_num, 1);
  EXPECT_EQ(p.link_width_active, 2);  // the test cables are 4x SDR
  EXPECT_EQ(p.link_speed_active, 1);
  EXPECT_EQ(mad::NodeDescription::decode(a.smp(2).data).text, "h2");
  // The responses came from B's LID, on QP0.
  EXPECT_EQ(a.got[0].first.slid, dlid);
  EXPECT_EQ(a.got[0].first.dest_qp, 0u);
  EXPECT_EQ(h.hca(1).fw_counter(IBVP_CNT_SMPS), 3u);
}

TEST(HcaSma, ADirectedRouteSmpWithHopCountZeroIsAnsweredByTheHostsOwnPortWithoutTheWire) {
  Hosts h(hca_hosts(2));
  Inbox a;
  a.attach(h.hca(0));
  const mad::Smp req = mad::make_directed_smp(mad::kMethodGet, mad::kAttrPortInfo, 0, 42, nullptr, 0);
  h.hca(0).send_mad(smp_to(ib::kPermissiveLid, req), 0);
  sc_core::sc_start(sc_time(20, SC_US));
  ASSERT_EQ(a.got.size(), 1u);
  const mad::Smp r = a.smp(0);
  EXPECT_TRUE(r.directed());
  EXPECT_TRUE(r.returning());  // D bit set (IBA 14.2.1.2)
  EXPECT_EQ(r.status_code(), mad::kStatusOk);
  EXPECT_EQ(r.hdr.transaction_id, 42u);
  EXPECT_EQ(mad::PortInfo::decode(r.data).lid, h.hca(0).lid());
  EXPECT_EQ(h.hca(0).counters().packets_tx, 0u);  // IBA 14.2.2: HopCount 0 is the node itself
  EXPECT_EQ(h.hca(0).fw_counter(IBVP_CNT_SMPS), 1u);
}

TEST(HcaSma, SetPortInfoMovesThePortFromInitThroughArmedToActiveAndRefusesASkippedState) {
  Scenario s = hca_hosts(2);
  s.hca_host.hca.port_state = IBVP_PORT_INIT;  // as an in-band SM finds the ports
  Hosts h(s);
  Inbox a;
  a.attach(h.hca(0));
  hca::Hca& b = h.hca(1);
  ASSERT_EQ(b.port_state(), IBVP_PORT_INIT);
  const auto set_state = [&](uint8_t state, uint64_t tid) {
    mad::Smp get = mad::make_lid_routed_smp(mad::kMethodSet, mad::kAttrPortInfo, 1, tid);
    mad::PortInfo p;
    p.lid = b.lid();
    p.port_state = state;
    p.encode(get.data);
    h.hca(0).send_mad(smp_to(b.lid(), get), 0);
    sc_core::sc_start(sc_time(10, SC_US));
  };
  set_state(mad::kPortActive, 1);  // Init -> Active skips Armed (IBA 7.2)
  ASSERT_EQ(a.got.size(), 1u);
  EXPECT_EQ(a.smp(0).hdr.status, mad::kStatusInvalidField);
  EXPECT_EQ(b.port_state(), IBVP_PORT_INIT);
  set_state(mad::kPortArmed, 2);
  ASSERT_EQ(a.got.size(), 2u);
  EXPECT_EQ(a.smp(1).hdr.status, mad::kStatusOk);
  EXPECT_EQ(mad::PortInfo::decode(a.smp(1).data).port_state, mad::kPortArmed);
  EXPECT_EQ(b.port_state(), IBVP_PORT_ARMED);
  set_state(mad::kPortActive, 3);
  ASSERT_EQ(a.got.size(), 3u);
  EXPECT_EQ(mad::PortInfo::decode(a.smp(2).data).port_state, mad::kPortActive);
  EXPECT_EQ(b.port_state(), IBVP_PORT_ACTIVE);
}

TEST(HcaSma, ASetPortInfoGivesThePortItsNewLidForLidRoutedMads) {
  // The SMA writes the LID into the port: LID-routed SMPs to the old LID are dropped by the
  // port's DLID check, and the GetResp comes from the new one.
  Hosts h(hca_hosts(2));
  Inbox a;
  a.attach(h.hca(0));
  hca::Hca& b = h.hca(1);
  const uint16_t old_lid = b.lid();
  // Its own port, by directed route (no LFT knows the new LID).
  mad::Smp set = mad::make_directed_smp(mad::kMethodSet, mad::kAttrPortInfo, 0, 5, nullptr, 0);
  mad::PortInfo p;
  p.lid = 0x0123;
  p.encode(set.data);
  Inbox bi;
  bi.attach(b);
  b.send_mad(smp_to(ib::kPermissiveLid, set), 0);
  sc_core::sc_start(sc_time(10, SC_US));
  ASSERT_EQ(bi.got.size(), 1u);
  EXPECT_EQ(bi.smp(0).status_code(), mad::kStatusOk);
  EXPECT_EQ(b.lid(), 0x0123);
  h.hca(0).send_mad(smp_to(old_lid, mad::make_lid_routed_smp(mad::kMethodGet, mad::kAttrNodeInfo, 0, 6)), 0);
  sc_core::sc_start(sc_time(10, SC_US));
  EXPECT_TRUE(a.got.empty()) << "the port still took its old LID";
  EXPECT_EQ(b.rx_dropped(), 1u);
}

TEST(HcaSma, UnsupportedAttributesAndBadModifiersAreAnsweredWithTheirStatus) {
  Hosts h(hca_hosts(2));
  Inbox a;
  a.attach(h.hca(0));
  const uint16_t dlid = h.hca(1).lid();
  // SwitchInfo at a CA: no such attribute (IBA 13.4.7 status 3, "unsupported method/attribute").
  h.hca(0).send_mad(smp_to(dlid, mad::make_lid_routed_smp(mad::kMethodGet, mad::kAttrSwitchInfo, 0, 1)), 0);
  // PortInfo of port 5 of a one-port CA: an invalid attribute modifier (status 7).
  h.hca(0).send_mad(smp_to(dlid, mad::make_lid_routed_smp(mad::kMethodGet, mad::kAttrPortInfo, 5, 2)), 0);
  // A Set of NodeInfo, which is read-only.
  h.hca(0).send_mad(smp_to(dlid, mad::make_lid_routed_smp(mad::kMethodSet, mad::kAttrNodeInfo, 0, 3)), 0);
  // PerfMgt PortSamplesControl (0x0010): the PMA keeps PortCounters only.
  h.hca(0).send_mad(gmp_to(dlid, perf_get(0x0010, 4)), 0);
  sc_core::sc_start(sc_time(30, SC_US));
  ASSERT_EQ(a.got.size(), 4u);
  std::vector<std::pair<uint64_t, uint16_t>> status;
  for (size_t i = 0; i < a.got.size(); ++i) {
    const mad::MadHeader hd = mad::decode_header(a.got[i].first.mad);
    EXPECT_EQ(hd.method, mad::kMethodGetResp);
    status.emplace_back(hd.transaction_id, hd.status);
  }
  std::sort(status.begin(), status.end());
  EXPECT_EQ(status[0].second, mad::kStatusUnsupportedAttribute);
  EXPECT_EQ(status[1].second, mad::kStatusInvalidField);
  EXPECT_EQ(status[2].second, mad::kStatusUnsupportedAttribute);
  EXPECT_EQ(status[3].second, mad::kStatusUnsupportedAttribute);
}

TEST(HcaSma, ResponsesTrapsAndRequestsWithoutAnAgentReachTheHostServedRequestsDoNot) {
  Hosts h(hca_hosts(2));
  Inbox b;
  b.attach(h.hca(1));
  const uint16_t dlid = h.hca(1).lid();
  mad::Smp trap = mad::make_lid_routed_smp(mad::kMethodTrap, mad::kAttrNotice, 0, 1);
  mad::Smp resp = mad::make_lid_routed_smp(mad::kMethodGetResp, mad::kAttrNodeInfo, 0, 2);
  mad::Smp sminfo = mad::make_lid_routed_smp(mad::kMethodGet, mad::kAttrSmInfo, 0, 3);  // the SM's
  mad::Smp served = mad::make_lid_routed_smp(mad::kMethodGet, mad::kAttrNodeInfo, 0, 4);
  for (const mad::Smp* s : {&trap, &resp, &sminfo, &served}) h.hca(0).send_mad(smp_to(dlid, *s), 0);
  sc_core::sc_start(sc_time(30, SC_US));
  std::vector<uint64_t> tids;
  for (size_t i = 0; i < b.got.size(); ++i) tids.push_back(b.smp(i).hdr.transaction_id);
  std::sort(tids.begin(), tids.end());
  EXPECT_EQ(tids, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(h.hca(1).fw_counter(IBVP_CNT_MADS_TO_HOST), 3u);
  EXPECT_EQ(h.hca(1).fw_counter(IBVP_CNT_SMPS), 1u);
}

TEST(HcaSma, ARequestNobodyServesIsAnsweredClassNotSupportedWhenTheHostHasNoListener) {
  Hosts h(hca_hosts(2));
  Inbox a;
  a.attach(h.hca(0));
  mad::Smp sminfo = mad::make_lid_routed_smp(mad::kMethodGet, mad::kAttrSmInfo, 0, 3);
  h.hca(0).send_mad(smp_to(h.hca(1).lid(), sminfo), 0);
  sc_core::sc_start(sc_time(20, SC_US));
  ASSERT_EQ(a.got.size(), 1u);
  EXPECT_EQ(a.smp(0).hdr.status, mad::kStatusBadVersion);  // IBA 13.4.7 status 1
}

TEST(HcaSma, TheSmasCycleCostShowsInTheFirmwareBlockAndTheResponseTime) {
  // mad_cycles=5000 at the 1 GHz core: 5 us per MAD answered, on top of event and HAL costs.
  Scenario s = hca_hosts(3);
  s.hca_host.hca.firmware_args = "mad_cycles=5000";
  Hosts h(s);
  Inbox a;
  a.attach(h.hca(0));
  h.hca(0).send_mad(smp_to(h.hca(1).lid(), mad::make_lid_routed_smp(mad::kMethodGet, mad::kAttrNodeInfo, 0, 1)), 0);
  sc_core::sc_start(sc_time(30, SC_US));
  ASSERT_EQ(a.got.size(), 1u);
  // h2 answered one SMP, h3 nothing: the difference is that event's cost.
  const uint64_t answered = h.hca(1).firmware_cycles() - h.hca(2).firmware_cycles();
  EXPECT_GE(answered, 5000u + h.hca(1).config().event_cycles);
  EXPECT_LT(answered, 5000u + h.hca(1).config().event_cycles + 100 * h.hca(1).config().hal_call_cycles);
  EXPECT_GE(a.got[0].second, 5'000'000u);  // ps
  EXPECT_EQ(h.hca(1).firmware_events() - h.hca(2).firmware_events(), 1u);
  // summary.json's firmware block reports the same cycles and the SMP answered.
  const nlohmann::ordered_json fw = metrics::firmware_json(h.f);
  EXPECT_EQ(fw.at(1).at("cycles").get<uint64_t>() - fw.at(2).at("cycles").get<uint64_t>(), answered);
  EXPECT_EQ(fw.at(1).at("counters").at("smps").get<uint64_t>(), 1u);
  EXPECT_EQ(fw.at(2).at("counters").at("smps").get<uint64_t>(), 0u);
}

TEST(HcaPma, PortCountersOverQp1EqualThePortsCountersWithDataInFourByteWords) {
  // An RC flow h1 -> h2 for 20 us; at 60 us, long after its last ACK, h1 reads h2's
  // PortCounters over QP1. The PMA reads the counters with the request counted in (it has
  // arrived) and its own response not yet sent.
  Scenario s = hca_hosts(2);
  s.flows.push_back(tb::saturating_flow("d", "h1", "h2"));
  s.flows.back().stop = sc_time(20, SC_US);
  Hosts h(s);
  Inbox a;
  a.attach(h.hca(0));
  sc_core::sc_start(sc_time(60, SC_US));
  hca::Hca& b = h.hca(1);
  ASSERT_GT(b.counters().packets_rx, 10u);
  h.hca(0).send_mad(gmp_to(b.lid(), perf_get(mad::kAttrPortCounters, 9)), 0);
  sc_core::sc_start(sc_time(20, SC_US));
  ASSERT_EQ(a.got.size(), 1u);
  EXPECT_EQ(a.got[0].first.dest_qp, 1u);
  EXPECT_EQ(a.got[0].first.q_key, ib::kQp1QKey);
  const mad::PerfMad r = a.perf(0);
  EXPECT_EQ(r.hdr.status, mad::kStatusOk);
  EXPECT_EQ(r.hdr.transaction_id, 9u);
  const mad::PortCounters pc = mad::PortCounters::decode(r.data);
  // The response: LRH 8 + BTH 12 + DETH 8 + MAD 256 + ICRC 4 + VCRC 2 bytes.
  constexpr uint64_t kGmpBytes = 290;
  const link::PortCounters& c = b.counters();
  EXPECT_EQ(pc.port_xmit_pkts, c.packets_tx - 1);
  EXPECT_EQ(pc.port_rcv_pkts, c.packets_rx);
  // IBA 16.1.3.5: octets from LRH to ICRC (no VCRC), divided by 4.
  EXPECT_EQ(pc.port_xmit_data, (c.bytes_tx - kGmpBytes - 2 * (c.packets_tx - 1)) / 4);
  EXPECT_EQ(pc.port_rcv_data, (c.bytes_rx - 2 * c.packets_rx) / 4);
  EXPECT_EQ(h.hca(1).fw_counter(IBVP_CNT_GMPS), 1u);
}

TEST(HcaPma, PortXmitWaitGrowsWhenTheReceiverWithholdsCredits) {
  // h3's firmware takes 20 us per UD packet and holds the packet's buffer space (and its credit)
  // until then: h1's flow to it stalls on credits. h2 sends nothing. Each host reads its own
  // port's counters over QP1 (LID-routed to its own LID), twice.
  Scenario s = hca_hosts(3);
  s.hca_host.hca.firmware_args = "rx_cycles=20000";
  s.hca_host.flow_transport = FlowTransport::ud;  // no ACKs: h1's core stays free
  s.flows.push_back(tb::saturating_flow("d", "h1", "h3"));
  Hosts h(s);
  Inbox a, b;
  a.attach(h.hca(0));
  b.attach(h.hca(1));
  sc_core::sc_start(sc_time(100, SC_US));
  h.hca(0).send_mad(gmp_to(h.hca(0).lid(), perf_get(mad::kAttrPortCounters, 1)), 0);
  h.hca(1).send_mad(gmp_to(h.hca(1).lid(), perf_get(mad::kAttrPortCounters, 1)), 0);
  sc_core::sc_start(sc_time(200, SC_US));
  h.hca(0).send_mad(gmp_to(h.hca(0).lid(), perf_get(mad::kAttrPortCounters, 2)), 0);
  sc_core::sc_start(sc_time(50, SC_US));
  ASSERT_EQ(a.got.size(), 2u);
  ASSERT_EQ(b.got.size(), 1u);
  const uint32_t first = mad::PortCounters::decode(a.perf(0).data).port_xmit_wait;
  const uint32_t second = mad::PortCounters::decode(a.perf(1).data).port_xmit_wait;
  EXPECT_GT(first, 0u);
  EXPECT_GT(second, first);
  // Most of the 200 us between the reads h1 waited (ticks of 1 ns).
  EXPECT_GT(second - first, 100'000u);
  EXPECT_LE(second - first, 200'000u + 100u);
  EXPECT_EQ(mad::PortCounters::decode(b.perf(0).data).port_xmit_wait, 0u);
}

TEST(HcaPort, OutsideActiveThePortDiscardsTheDataGivenToItAndStillCarriesSmps) {
  // IBA 7.2: in Init a port sends and takes only SMPs. A UD flow from h1 leaves nothing on
  // the wire (its packets are PortXmitDiscards) while an SMP from h1 to h2 is answered.
  Scenario s = hca_hosts(2);
  s.hca_host.hca.port_state = IBVP_PORT_INIT;
  s.hca_host.flow_transport = FlowTransport::ud;
  s.flows.push_back(tb::saturating_flow("d", "h1", "h2"));
  Hosts h(s);
  Inbox a;
  a.attach(h.hca(0));
  h.hca(0).send_mad(smp_to(h.hca(1).lid(), mad::make_lid_routed_smp(mad::kMethodGet, mad::kAttrNodeInfo, 0, 1)), 0);
  sc_core::sc_start(sc_time(20, SC_US));
  h.f.finish();
  ASSERT_EQ(a.got.size(), 1u);
  EXPECT_EQ(a.smp(0).hdr.status, mad::kStatusOk);
  const link::PortCounters& c = h.hca(0).counters();
  EXPECT_EQ(c.packets_tx, c.vl[ib::kVl15].packets_tx);  // the SMP only
  EXPECT_EQ(c.packets_tx, 1u);
  EXPECT_GT(c.xmit_discards, 0u);
  EXPECT_EQ(h.hca(1).counters().packets_rx, 1u);
  EXPECT_EQ(h.f.recorder().flows().at(0).delivered, 0u);
}

TEST(HcaPma, ASetPortCountersClearsTheSelectedCountersOnly) {
  // After 20 us of a flow h1 -> h2, h1 clears h2's PortXmitData and PortXmitPkts
  // (CounterSelect bits 12 and 14, IBA 16.1.3.5). The Set's response shows them zero and the
  // receive counters untouched; a later Get counts only what h2 sent since: the Set's response.
  Scenario s = hca_hosts(2);
  s.flows.push_back(tb::saturating_flow("d", "h1", "h2"));
  s.flows.back().stop = sc_time(20, SC_US);
  Hosts h(s);
  Inbox a;
  a.attach(h.hca(0));
  sc_core::sc_start(sc_time(60, SC_US));
  const uint16_t dlid = h.hca(1).lid();
  mad::PerfMad clear = perf_get(mad::kAttrPortCounters, 1);
  clear.hdr.method = mad::kMethodSet;
  mad::PortCounters sel;
  sel.port_select = 1;
  sel.counter_select = (1u << 12) | (1u << 14);
  sel.encode(clear.data);
  h.hca(0).send_mad(gmp_to(dlid, clear), 0);
  sc_core::sc_start(sc_time(20, SC_US));
  h.hca(0).send_mad(gmp_to(dlid, perf_get(mad::kAttrPortCounters, 2)), 0);
  sc_core::sc_start(sc_time(20, SC_US));
  ASSERT_EQ(a.got.size(), 2u);
  const mad::PortCounters after_set = mad::PortCounters::decode(a.perf(0).data);
  EXPECT_EQ(a.perf(0).hdr.status, mad::kStatusOk);
  EXPECT_EQ(after_set.port_xmit_pkts, 0u);
  EXPECT_EQ(after_set.port_xmit_data, 0u);
  EXPECT_GT(after_set.port_rcv_pkts, 10u);
  const mad::PortCounters later = mad::PortCounters::decode(a.perf(1).data);
  EXPECT_EQ(later.port_xmit_pkts, 1u);
  EXPECT_EQ(later.port_xmit_data, (290u - 2u) / 4u);  // one GMP: LRH..ICRC is 288 bytes
  EXPECT_EQ(later.port_rcv_pkts, after_set.port_rcv_pkts + 1);
}

TEST(HcaSma, ADirectedRouteSmpThroughTheSwitchReachesAnotherHostsSmaAndComesBack) {
  // h1's SM discovers h2 as OpenSM does: directed route out of h1's port 1, then out of the
  // switch's port 2 (IBA 14.2.2). Once with HopPointer 0 (h1's firmware SMI steps it) and
  // once stepped by the host's software first, as Linux's kernel SMI does.
  Hosts h(hca_hosts(3));
  Inbox a, b;
  a.attach(h.hca(0));
  b.attach(h.hca(1));
  const uint8_t path[] = {1, 2};
  mad::Smp raw = mad::make_directed_smp(mad::kMethodGet, mad::kAttrNodeInfo, 0, 1, path, 2);
  mad::Smp stepped = mad::make_directed_smp(mad::kMethodGet, mad::kAttrNodeInfo, 0, 2, path, 2);
  mad::dr_originate(stepped);
  h.hca(0).send_mad(smp_to(ib::kPermissiveLid, raw), 0);
  h.hca(0).send_mad(smp_to(ib::kPermissiveLid, stepped), 0);
  sc_core::sc_start(sc_time(50, SC_US));
  ASSERT_EQ(a.got.size(), 2u);
  EXPECT_TRUE(b.got.empty());
  for (size_t i = 0; i < 2; ++i) {
    const mad::Smp r = a.smp(i);
    EXPECT_TRUE(r.returning());
    EXPECT_EQ(r.status_code(), mad::kStatusOk);
    EXPECT_EQ(r.hop_pointer(), 0);
    EXPECT_EQ(mad::NodeInfo::decode(r.data).node_guid, topo::node_guid(h.f.scenario().topology, h.eps[1]));
  }
  EXPECT_EQ(h.hca(1).fw_counter(IBVP_CNT_SMPS), 2u);
}
