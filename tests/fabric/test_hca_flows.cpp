// The scenario's flows on HCA hosts (platform/apps/flow_streams.h): each flow one QP at each
// end, its packets counted per flow like a fabric-only source's, its rate set by the HCA
// (cable, static IPD) and its ON/OFF periods the same as a fabric-only source draws.
#include <gtest/gtest.h>

#include <systemc>

#include "common/fabrics.h"
#include "models/link/link_rate.h"
#include "platform/apps/flow_streams.h"
#include "platform/builder/fabric.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

// 4X SDR as in seed 004: 1 GB/s of data, so the cable (not PCIe or the core) limits a flow.
const link::LinkConfig kSdr{link::Width::x4, link::Speed::sdr, 1.0, 5.0};

Scenario hca_scenario(uint32_t hosts) {
  Scenario s = tb::basic_scenario(tb::star(hosts, kSdr));
  s.endpoint_model = EndpointModel::hca;
  s.outputs.rate_window = sc_core::SC_ZERO_TIME;
  return s;
}

// Payload bytes of a 2048-byte RC SEND on the wire: LRH 8, BTH 12, ICRC 4, VCRC 2.
constexpr double kRcSendWire = 2048 + 26;

double link_bytes_per_s() { return link::LinkRate(kSdr).data_bits_per_s() / 8.0; }

}  // namespace

TEST(HcaFlows, ALoneRcFlowFillsItsLinkAndEveryDataPacketCountsToIt) {
  Scenario s = hca_scenario(3);
  s.flows.push_back(tb::saturating_flow("f", "h1", "h2"));
  s.duration = sc_time(2, SC_MS);
  Fabric fabric(s);
  sc_core::sc_start(s.duration);
  const metrics::FlowTotals& t = fabric.recorder().flows().at(0);
  const apps::FlowStreams& app = *fabric.flow_streams();
  EXPECT_EQ(app.error(), "");
  // Conservation: messages completed <= received <= packets delivered <= injected, and what
  // is missing is at most the flow_depth messages still posted (one packet each).
  EXPECT_LE(app.completed(0), app.received(0));
  EXPECT_LE(app.received(0), t.delivered);
  EXPECT_LE(t.delivered, t.injected);
  EXPECT_LE(t.injected - app.completed(0), s.hca_host.flow_depth);
  // ACKs travel as no flow's packets: at most one per message the flow sent.
  const uint64_t acks = fabric.recorder().injected() - t.injected;
  EXPECT_GT(acks, 0u);
  EXPECT_LE(acks, t.injected);
  // Every packet injected is delivered, dropped or still on its way (test_hca_conservation.cpp).
  EXPECT_EQ(fabric.recorder().injected(),
            fabric.recorder().delivered() + fabric.recorder().dropped() + fabric.packets_in_flight());
  // The link's data rate, less the time before the first packet (QP set-up, first DMA).
  const double rate = static_cast<double>(t.delivered) * kRcSendWire / 2e-3;
  EXPECT_GT(rate, 0.97 * link_bytes_per_s());
  EXPECT_LE(rate, link_bytes_per_s());
}

TEST(HcaFlows, AStaticIpdGivesTheFlowOneOverOnePlusIpdOfItsLink) {
  Scenario s = hca_scenario(3);
  FlowConfig f = tb::saturating_flow("paced", "h1", "h2");
  f.ipd = 3;
  s.flows.push_back(f);
  s.duration = sc_time(4, SC_MS);
  Fabric fabric(s);
  sc_core::sc_start(s.duration);
  const double rate = static_cast<double>(fabric.recorder().flows().at(0).delivered) * kRcSendWire / 4e-3;
  EXPECT_NEAR(rate / link_bytes_per_s(), 0.25, 0.01);
}

TEST(HcaFlows, UdFlowsCarryDatagramsToTheirQp) {
  Scenario s = hca_scenario(4);
  s.hca_host.flow_transport = FlowTransport::ud;
  s.flows.push_back(tb::saturating_flow("a", "h1", "h3", 1024));
  s.flows.push_back(tb::saturating_flow("b", "h2", "h3", 1024));
  s.duration = sc_time(1, SC_MS);
  Fabric fabric(s);
  sc_core::sc_start(s.duration);
  const apps::FlowStreams& app = *fabric.flow_streams();
  EXPECT_EQ(app.error(), "");
  // Two senders share h3's link: each about half, every datagram received on its own QP.
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_GT(app.received(i), 0u);
    EXPECT_LE(app.received(i), fabric.recorder().flows().at(i).delivered);
  }
  const double a = static_cast<double>(app.received(0)), b = static_cast<double>(app.received(1));
  EXPECT_NEAR(a / (a + b), 0.5, 0.05);
}

TEST(HcaFlows, ADynamicFlowDeliversAboutHalfOfAStaticOne) {
  Scenario s = hca_scenario(4);
  s.flows.push_back(tb::saturating_flow("static", "h1", "h2"));
  FlowConfig dyn = tb::saturating_flow("dynamic", "h3", "h4");
  dyn.on_off_mean = sc_time(250, SC_US);
  s.flows.push_back(dyn);
  s.duration = sc_time(50, SC_MS);
  Fabric fabric(s);
  sc_core::sc_start(s.duration);
  const double ratio = static_cast<double>(fabric.recorder().flows()[1].delivered) /
                       static_cast<double>(fabric.recorder().flows()[0].delivered);
  EXPECT_NEAR(ratio, 0.5, 0.1);  // 50 ms hold ~100 periods of each kind
}

// Seed 003 Sec. 3.3: the QoS NIC from the scenario. A flow's doorbell_class and reserved_rate
// reach its send QP through the verbs driver; the firmware's VirtualClock (sched=vc) then
// shares the HCA's link by the reserved rates, and the packets carry the rate to switches.
TEST(HcaFlows, ReservedRatesFromTheScenarioShareTheNicsLinkUnderVirtualClock) {
  Scenario s = hca_scenario(3);
  s.hca_host.hca.firmware_args = "sched=vc";
  FlowConfig a = tb::saturating_flow("a", "h1", "h2");
  FlowConfig b = tb::saturating_flow("b", "h1", "h3");
  a.reserved_rate = 200e6;
  b.reserved_rate = 600e6;
  a.doorbell_class = 1;
  b.doorbell_class = 3;
  s.flows = {a, b};
  s.warmup = sc_time(200, SC_US);
  s.duration = sc_time(2, SC_MS);
  Fabric fabric(s);
  // Every data packet of a flow carries its reservation to the switch.
  struct Rates : sim::FabricObserver {
    void on_inject(const ib::Packet& p, uint64_t) override {
      if (p.flow == 0 && p.reserved_bps != 200'000'000) wrong++;
      if (p.flow == 1 && p.reserved_bps != 600'000'000) wrong++;
      if (p.flow <= 1) seen++;
    }
    uint64_t wrong = 0, seen = 0;
  } rates;
  fabric.probe().attach(&rates);
  sc_core::sc_start(s.duration);
  fabric.finish();
  const apps::FlowStreams& app = *fabric.flow_streams();
  EXPECT_EQ(app.error(), "");
  const hca::Hca& nic = fabric.host_at(s.topology.find("h1"))->hca;
  EXPECT_EQ(nic.qp_class(app.send_qpn(0)), 1u);
  EXPECT_EQ(nic.qp_class(app.send_qpn(1)), 3u);
  const double x = static_cast<double>(fabric.recorder().flows()[0].measured_payload_bytes);
  const double y = static_cast<double>(fabric.recorder().flows()[1].measured_payload_bytes);
  // 1 : 3 of the link both saturate (the HCA's port, not the two destinations, is the limit).
  EXPECT_NEAR(x / (x + y), 0.25, 0.02);
  EXPECT_GT(rates.seen, 100u);
  EXPECT_EQ(rates.wrong, 0u);
}

TEST(HcaFlows, WithoutReservedRatesVirtualClockSharesTheLinkEvenly) {
  // The same two flows without reservations: both get the firmware's default rate.
  Scenario s = hca_scenario(3);
  s.hca_host.hca.firmware_args = "sched=vc";
  s.flows = {tb::saturating_flow("a", "h1", "h2"), tb::saturating_flow("b", "h1", "h3")};
  s.warmup = sc_time(200, SC_US);
  s.duration = sc_time(2, SC_MS);
  Fabric fabric(s);
  sc_core::sc_start(s.duration);
  fabric.finish();
  const double x = static_cast<double>(fabric.recorder().flows()[0].measured_payload_bytes);
  const double y = static_cast<double>(fabric.recorder().flows()[1].measured_payload_bytes);
  EXPECT_NEAR(x / (x + y), 0.5, 0.02);
}
