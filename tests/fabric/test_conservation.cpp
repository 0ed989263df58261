// Conservation of packets and credits on loaded fabrics: nothing lost, nothing duplicated,
// no buffer over its size, and what cannot be routed is dropped and counted.
#include <gtest/gtest.h>

#include <systemc>

#include "common/fabrics.h"
#include "platform/builder/fabric.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::sc_time;

namespace {

void expect_conserved(Fabric& f) {
  const metrics::Recorder& r = f.recorder();
  // The pool counts packets that exist; the recorder counts events. They must agree.
  EXPECT_EQ(r.injected(), r.delivered() + r.dropped() + f.packets_in_flight());
  uint64_t delivered_per_flow = 0;
  for (const auto& ft : r.flows()) delivered_per_flow += ft.delivered;
  EXPECT_EQ(delivered_per_flow, r.delivered());
}

void expect_buffers_within_capacity(Fabric& f) {
  const Scenario& s = f.scenario();
  for (uint32_t n = 0; n < s.topology.nodes.size(); ++n) {
    for (uint16_t p = 1; p <= s.topology.nodes[n].num_ports; ++p) {
      if (s.topology.link_at(n, p) < 0) continue;
      const link::PortCounters& c = f.switch_at(n) ? f.switch_at(n)->counters(p) : f.endpoint_at(n)->counters();
      const uint32_t cap = (f.switch_at(n) ? s.switch_cfg.vl_buffer_bytes : s.endpoint_cfg.vl_buffer_bytes) / 64;
      for (uint8_t vl = 0; vl < 15; ++vl) EXPECT_LE(c.vl[vl].buffer_hwm_blocks, cap);
    }
  }
}

}  // namespace

TEST(Conservation, PoissonUniformTrafficLosesAndDuplicatesNothing) {
  Scenario s = tb::basic_scenario(tb::chain(3));
  s.traffic.enabled = true;
  s.traffic.generator = GeneratorKind::poisson;
  s.traffic.pattern = DestinationPattern::uniform;
  s.traffic.load = 0.7;
  s.traffic.payload_bytes = 256;
  s.switch_cfg.vl_buffer_bytes = s.endpoint_cfg.vl_buffer_bytes = 2 * 320;  // two packets: credits bind
  s.duration = sc_time(3, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  EXPECT_GT(f.recorder().delivered(), 1000u);
  EXPECT_EQ(f.recorder().dropped(), 0u);
  expect_conserved(f);
  expect_buffers_within_capacity(f);
  // Every packet id appears once, and each delivered one reached the node it was sent to.
  std::vector<bool> seen(f.recorder().packets().size());
  for (const auto& rec : f.recorder().packets()) {
    ASSERT_FALSE(seen[rec.id]);
    seen[rec.id] = true;
  }
}

namespace {
// Five saturating flows into one host: nothing lost, credits within the buffers, and the
// five share the hot-spot link equally (round-robin FIFO crossbar), within 2 %.
void expect_saturated_hotspot_shared_equally(EventOrder order) {
  Scenario s = tb::basic_scenario(tb::star(6));
  s.event_order = order;
  for (int h = 1; h <= 5; ++h)
    s.flows.push_back(tb::saturating_flow("f" + std::to_string(h), "h" + std::to_string(h), "h6", 1024));
  s.duration = sc_time(2, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  expect_conserved(f);
  expect_buffers_within_capacity(f);
  const auto& flows = f.recorder().flows();
  for (const auto& ft : flows)
    EXPECT_NEAR(static_cast<double>(ft.delivered) / static_cast<double>(flows[0].delivered), 1.0, 0.02);
}
}  // namespace

TEST(Conservation, SaturatedHotspotKeepsCreditsWithinBuffers) { expect_saturated_hotspot_shared_equally(EventOrder::fifo); }

// Canonical event order (event_order: canonical): a packet's admission and a credit's
// arrival are actions of the receiver; with buffers of two packets, credits bind all the time.
TEST(Conservation, CanonicalOrderLosesNothingAndKeepsCreditsWithinBuffers) {
  Scenario s = tb::congested_chain(EventOrder::canonical, sc_time(3, SC_MS));
  s.traffic.load = 0.7;
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  EXPECT_GT(f.recorder().delivered(), 1000u);
  EXPECT_EQ(f.recorder().dropped(), 0u);
  expect_conserved(f);
  expect_buffers_within_capacity(f);
}

TEST(Conservation, CanonicalOrderSaturatedHotspotSharesTheLinkEqually) {
  expect_saturated_hotspot_shared_equally(EventOrder::canonical);
}

TEST(Conservation, DlidWithoutRouteIsDroppedAndCounted) {
  Scenario s = tb::basic_scenario(tb::star(2));
  FlowConfig f = tb::saturating_flow("stray", "h1", "h2", 256);
  f.dlid_offset = 7;  // h2 has LMC 0: LID 12 + 7 = 19 belongs to nobody
  s.flows.push_back(f);
  s.flows.push_back(tb::saturating_flow("good", "h2", "h1", 256));
  s.duration = sc_time(1, SC_MS);
  Fabric fab(s);
  sc_core::sc_start(s.duration);
  fab.finish();
  const auto& flows = fab.recorder().flows();
  EXPECT_GT(flows[0].dropped, 100u);
  EXPECT_EQ(flows[0].delivered, 0u);
  EXPECT_GT(flows[1].delivered, 100u);
  EXPECT_EQ(fab.recorder().drops_by_reason().at(static_cast<uint8_t>(ib::DropReason::no_route)), flows[0].dropped);
  expect_conserved(fab);
}

TEST(Vl15, OverflowingManagementTrafficIsDroppedAndCountedNotBlocked) {
  // Two saturating VL15 flows into one link: VL15 is not credited, so the switch's VL15
  // input buffers overflow and the excess is dropped (IBA 7.9.4), about half of it.
  Scenario s = tb::basic_scenario(tb::star(3));
  for (int h = 1; h <= 2; ++h) {
    FlowConfig f = tb::saturating_flow("smp" + std::to_string(h), "h" + std::to_string(h), "h3", 256);
    f.vl15 = true;
    s.flows.push_back(f);
  }
  s.duration = sc_time(2, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  expect_conserved(f);
  const metrics::Recorder& r = f.recorder();
  ASSERT_GT(r.dropped(), 1000u);
  EXPECT_EQ(r.drops_by_reason().at(static_cast<uint8_t>(ib::DropReason::vl15_overflow)), r.dropped());
  EXPECT_EQ(f.switch_at(0)->counters(1).vl15_dropped + f.switch_at(0)->counters(2).vl15_dropped, r.dropped());
  // The output link stays busy with VL15 packets: 290-byte packets at 1 byte/ns.
  const double delivered_per_ns = static_cast<double>(r.delivered()) * 290.0 / 2e6;
  EXPECT_NEAR(delivered_per_ns, 1.0, 0.01);
  EXPECT_NEAR(static_cast<double>(r.dropped()) / static_cast<double>(r.injected()), 0.5, 0.02);
}

TEST(Vl15, ManagementTrafficGoesBeforeDataOnASharedOutput) {
  Scenario s = tb::basic_scenario(tb::star(3));
  FlowConfig smp = tb::saturating_flow("smp", "h1", "h3", 256);
  smp.vl15 = true;
  s.flows.push_back(smp);
  s.flows.push_back(tb::saturating_flow("data", "h1", "h3", 256));  // same port, VL0
  s.duration = sc_time(2, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  expect_conserved(f);
  const auto& flows = f.recorder().flows();
  // The port always has a VL15 packet ready, so the data VL never gets the link.
  EXPECT_EQ(flows[0].dropped, 0u);
  EXPECT_GT(flows[0].delivered, 6000u);
  EXPECT_EQ(flows[1].injected, 0u);
}
