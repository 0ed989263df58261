// Output buffers (switch.output_buffer_bytes, models/switch/switch_output_buffer.cpp; seed 001
// Sec. 2: "Buffer size (input and output)"): the crossbar moves a packet from its input
// buffer into the output buffer when that has room, which frees the input and returns its
// credit; the link drains the output buffer under VL arbitration and credits. Numbers derived
// by hand from the IBA rates.
#include <gtest/gtest.h>

#include <algorithm>
#include <systemc>

#include "common/fabrics.h"
#include "common/testing.h"
#include "platform/builder/fabric.h"
#include "platform/builder/runner.h"
#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_NS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

// A UD SEND Only with 2048 payload bytes: 2082 bytes on the wire, 33 credit blocks (2112
// bytes), 2082 ns at 4X SDR (1 byte/ns).
constexpr uint64_t kSerPs = 2082'000;
constexpr uint64_t kPropPs = 5'000;        // 1 m at 5 ns/m
constexpr uint64_t kPipelinePs = 100'000;  // SwitchConfig default
constexpr uint64_t kFarPropPs = 5'000'000;  // 1 km
constexpr uint32_t kPacketBlocks = 33;
constexpr uint32_t kFourPackets = 4 * 2112;

// h1 -> s1 -> h2, with h2 on a 1 km cable (5 us each way) and a receive buffer for one
// packet: s1's output to h2 sends one packet, then waits 10 us for its credit. h1 saturates
// h2, so packets pile up in s1.
Scenario credit_starved_star(uint32_t output_buffer_bytes) {
  topo::Topology t = tb::star(2);
  t.links[1].cfg.length_m = 1000;  // h2 - s1 port 2
  t.index();
  Scenario s = tb::basic_scenario(t);
  s.endpoint_cfg.vl_buffer_bytes = 2112;
  s.switch_cfg.output_buffer_bytes = output_buffer_bytes;
  s.flows.push_back(tb::saturating_flow("to_h2", "h1", "h2"));
  s.duration = sc_time(200, SC_US);
  return s;
}

// When each of the first `n` packets of flow 0 left its source.
std::vector<uint64_t> injections(const metrics::Recorder& rec, size_t n) {
  std::vector<uint64_t> at;
  for (const metrics::PacketRecord& r : rec.packets())
    if (r.flow == 0 && at.size() < n) at.push_back(r.injected_ps);
  return at;
}

void expect_conserved(Fabric& f) {
  const metrics::Recorder& r = f.recorder();
  EXPECT_EQ(r.injected(), r.delivered() + r.dropped() + f.packets_in_flight());
  EXPECT_EQ(r.dropped(), 0u);
  // No buffer ever held more than its size.
  const Scenario& s = f.scenario();
  for (uint32_t n = 0; n < s.topology.nodes.size(); ++n) {
    if (!f.switch_at(n)) continue;
    for (uint16_t p = 1; p <= s.topology.nodes[n].num_ports; ++p) {
      if (s.topology.link_at(n, p) < 0) continue;
      for (uint8_t vl = 0; vl < s.switch_cfg.data_vls; ++vl) {
        EXPECT_LE(f.switch_at(n)->counters(p).vl[vl].buffer_hwm_blocks, s.switch_cfg.vl_buffer_bytes / 64);
        EXPECT_LE(f.switch_at(n)->output_buffer_hwm_blocks(p, vl), s.switch_cfg.output_buffer_bytes / 64);
      }
    }
  }
}

}  // namespace

TEST(OutputBuffer, UnloadedPacketLeavesTheSwitchWhenItWouldWithoutOutputBuffers) {
  // Both stages start at once (head in + pipeline delay): the output buffer adds no delay.
  Scenario s = tb::basic_scenario(tb::star(2));
  s.switch_cfg.output_buffer_bytes = kFourPackets;
  FlowConfig f = tb::saturating_flow("one", "h1", "h2");
  f.generator = GeneratorKind::constant;
  f.load = 0.01;
  f.start = sc_core::SC_ZERO_TIME;
  f.stop = sc_time(1, SC_NS);
  s.flows.push_back(f);
  Fabric fab(s);
  sc_core::sc_start(sc_time(1, SC_MS));
  fab.finish();
  ASSERT_EQ(fab.recorder().delivered(), 1u);
  const metrics::PacketRecord& r = fab.recorder().packets().front();
  // h1 sends at 0; s1 starts sending at prop + pipeline; the tail reaches h2 a packet time
  // and a cable later.
  EXPECT_EQ(r.done_ps, kPropPs + kPipelinePs + kSerPs + kPropPs);
  EXPECT_EQ(fab.switch_at(0)->output_buffer_hwm_blocks(2, 0), kPacketBlocks);
  EXPECT_EQ(fab.switch_at(0)->buffered_packets(), 0u);
}

TEST(OutputBuffer, WithoutOutputBuffersAnInputCreditReturnsWhenThePacketLeavesOnTheLink) {
  // s1's input holds 4 packets; the first leaves at once, so h1 sends packets 1-5 back to
  // back. Packet 6 needs the credit of packet 2, which leaves s1 only once h2's credit for
  // packet 1 came back: packet 1's tail reaches h2 at 105 ns + 2082 ns + 5 us, its credit is
  // back at s1 5 us later, packet 2's tail leaves 2082 ns after that, and its credit reaches
  // h1 a 1 m cable later.
  Fabric f(credit_starved_star(0));
  sc_core::sc_start(sc_time(200, SC_US));
  f.finish();
  const std::vector<uint64_t> at = injections(f.recorder(), 6);
  ASSERT_EQ(at.size(), 6u);
  for (size_t k = 0; k < 5; ++k) EXPECT_EQ(at[k], k * kSerPs) << k;
  EXPECT_EQ(at[5], kPropPs + kPipelinePs + kSerPs + 2 * kFarPropPs + kSerPs + kPropPs);
  EXPECT_EQ(f.switch_at(0)->output_buffer_hwm_blocks(2, 0), 0u);
  expect_conserved(f);
}

TEST(OutputBuffer, WithOutputBuffersAnInputCreditReturnsWhenThePacketHasCrossedIntoTheOutputBuffer) {
  // The same fabric with an output buffer of 4 packets. Packets 2-5 cross into it as their
  // tails come in, each returning its input credit to h1 then, so h1 sends packets 1-9 back
  // to back (1 on the link, 2-5 in the output buffer, 6-9 in the input). Packet 6 crosses
  // when packet 2 has left on the link (one credit round trip of h2's 1 km cable, 10 us,
  // after packet 1), in time for packet 10. Packet 11 takes packet 7's credit, which crosses
  // when packet 3 has left, a second round trip later.
  Fabric f(credit_starved_star(kFourPackets));
  sc_core::sc_start(sc_time(200, SC_US));
  f.finish();
  const std::vector<uint64_t> at = injections(f.recorder(), 11);
  ASSERT_EQ(at.size(), 11u);
  for (size_t k = 0; k < 10; ++k) EXPECT_EQ(at[k], k * kSerPs) << k;
  // Packet 3 starts on the link at 105 ns + 2 x (2082 ns + 10 us); packet 7 crosses in the
  // next two packet times; its credit reaches h1 a 1 m cable later.
  EXPECT_EQ(at[10], kPropPs + kPipelinePs + 2 * (kSerPs + 2 * kFarPropPs) + 2 * kSerPs + kPropPs);
  // s1 held 8 packets at most: 4 in its input and 4 in its output buffer, both full.
  EXPECT_EQ(f.switch_at(0)->output_buffer_hwm_blocks(2, 0), 4 * kPacketBlocks);
  EXPECT_EQ(f.switch_at(0)->counters(1).vl[0].buffer_hwm_blocks, 4 * kPacketBlocks);
  expect_conserved(f);
}

TEST(OutputBuffer, SaturatedSharedOutputDeliversItsLinkRateAndConservesPackets) {
  // Three hosts saturate h4 through one switch, over 2 data VLs (SL 0 and 1): the output
  // link stays busy (one SDR link's payload rate in total), every packet is delivered or
  // still in the fabric, and no buffer exceeds its size.
  Scenario s = tb::basic_scenario(tb::star(4));
  for (auto* vls : {&s.switch_cfg.data_vls, &s.endpoint_cfg.data_vls}) *vls = 2;
  s.switch_cfg.sl2vl = s.endpoint_cfg.sl2vl = sw::SwitchConfig::default_sl2vl(2);
  s.switch_cfg.vlarb = s.endpoint_cfg.vlarb = link::VlArbConfig::round_robin(2);
  s.switch_cfg.output_buffer_bytes = kFourPackets;
  s.flows.push_back(tb::saturating_flow("a", "h1", "h4", 2048, 0));
  s.flows.push_back(tb::saturating_flow("b", "h2", "h4", 2048, 1));
  s.flows.push_back(tb::saturating_flow("c", "h3", "h4", 256, 0));
  s.warmup = sc_time(100, SC_US);
  s.duration = sc_time(2, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  // 4X SDR: 1 byte/ns of wire bytes; the port counters count wire bytes.
  const uint64_t wire = f.switch_at(0)->counters(4).bytes_tx;
  EXPECT_NEAR(static_cast<double>(wire) / (static_cast<double>(s.duration.value()) * 1e-3), 1.0, 0.01);
  for (const metrics::FlowTotals& ft : f.recorder().flows()) EXPECT_GT(ft.measured_payload_bytes, 0u);
  // Both VLs used the output buffer.
  EXPECT_GT(f.switch_at(0)->output_buffer_hwm_blocks(4, 0), 0u);
  EXPECT_GT(f.switch_at(0)->output_buffer_hwm_blocks(4, 1), 0u);
  expect_conserved(f);
}

TEST(OutputBuffer, EveryPacketOfBurstsThroughOneInputToSeveralOutputsIsDelivered) {
  // Bursts from every host to every other, h1 on a fast (QDR) cable so that its input
  // holds packets for several outputs at once and is offered to them in turn as its
  // crossbar connection frees (non-multiplexed crossbar, FIFO requests). The sources stop
  // at 300 us; 2 ms is ample to drain: no packet may be left waiting for a wake-up that
  // never comes.
  topo::Topology t = tb::star(5);
  t.links[0].cfg.speed = link::Speed::qdr;
  t.index();
  Scenario s = tb::basic_scenario(t);
  s.switch_cfg.output_buffer_bytes = kFourPackets;
  s.switch_cfg.request_order = sw::RequestOrder::fifo;
  for (int a = 1; a <= 5; ++a)
    for (int b = 1; b <= 5; ++b) {
      if (a == b) continue;
      FlowConfig f = tb::saturating_flow("f" + std::to_string(a) + std::to_string(b), "h" + std::to_string(a),
                                         "h" + std::to_string(b), 512);
      f.generator = GeneratorKind::poisson;
      // h1: 0.15 of its QDR link in all, 0.6 of an SDR output; the others 0.4 of theirs. Each
      // output gets 0.45 of its rate: the bursts drain long before the end.
      f.load = a == 1 ? 0.0375 : 0.1;
      f.stop = sc_time(300, SC_US);
      s.flows.push_back(f);
    }
  s.duration = sc_time(2, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  EXPECT_GT(f.recorder().injected(), 500u);
  EXPECT_EQ(f.recorder().delivered(), f.recorder().injected());
  EXPECT_EQ(f.switch_at(0)->buffered_packets(), 0u);
  expect_conserved(f);
}

TEST(OutputBuffer, MultiplexedCrossbarFeedsTwoOutputBuffersFromOneInputAtOnce) {
  // seed 002's multiplexed crossbar with output buffers: h1's QDR input feeds two SDR
  // outputs at once, so each flow gets a whole SDR link (as without output buffers), and
  // every packet is accounted for.
  topo::Topology t = tb::star(3);
  t.links[0].cfg.speed = link::Speed::qdr;
  t.index();
  Scenario s = tb::basic_scenario(t);
  s.switch_cfg.crossbar = sw::Crossbar::multiplexed;
  s.switch_cfg.output_buffer_bytes = kFourPackets;
  s.flows.push_back(tb::saturating_flow("to_h2", "h1", "h2"));
  s.flows.push_back(tb::saturating_flow("to_h3", "h1", "h3"));
  s.warmup = sc_time(100, SC_US);
  s.duration = sc_time(2, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  const double sdr_payload_Bps = link::LinkRate(link::LinkConfig{}).data_bits_per_s() / 8 * 2048.0 / 2082.0;
  const double span_s = static_cast<double>((s.duration - s.warmup).value()) * 1e-12;
  for (const metrics::FlowTotals& ft : f.recorder().flows())
    EXPECT_NEAR(static_cast<double>(ft.measured_payload_bytes) / span_s / sdr_payload_Bps, 1.0, 0.005);
  expect_conserved(f);
}

TEST(OutputBuffer, CreditCycleThroughOutputBuffersIsStillReportedAsDeadlock) {
  // Five switches in a ring, every host hk sending to h(k+2) by min-hop: a credit cycle round
  // the ring. Output buffers only add room to each channel; once they fill, the cycle holds.
  Scenario s = tb::basic_scenario(tb::ring(5));
  s.routing = "minhop";
  s.switch_cfg.output_buffer_bytes = kFourPackets;
  for (int k = 0; k < 5; ++k)
    s.flows.push_back(tb::saturating_flow("f" + std::to_string(k), "h" + std::to_string(k),
                                          "h" + std::to_string((k + 2) % 5), 2048));
  s.duration = sc_time(5, SC_MS);
  s.deadlock_timeout = sc_time(100, SC_US);
  try {
    run_scenario(s, RunOptions{});
    FAIL() << "the ring's deadlock was not reported";
  } catch (const DeadlockError& e) {
    const std::string m = e.what();
    for (int k = 0; k < 5; ++k) EXPECT_NE(m.find("s" + std::to_string(k) + "/1 VL0"), std::string::npos) << m;
  }
}

TEST(OutputBuffer, SameRingRoutedUpDownRunsToTheEndWithoutDeadlock) {
  Scenario s = tb::basic_scenario(tb::ring(5));
  s.routing = "updn";
  s.switch_cfg.output_buffer_bytes = kFourPackets;
  for (int k = 0; k < 5; ++k)
    s.flows.push_back(tb::saturating_flow("f" + std::to_string(k), "h" + std::to_string(k),
                                          "h" + std::to_string((k + 2) % 5), 2048));
  s.duration = sc_time(2, SC_MS);
  s.deadlock_timeout = sc_time(100, SC_US);
  const RunResult r = run_scenario(s, RunOptions{});
  EXPECT_FALSE(r.deadlock) << r.deadlock_report;
  EXPECT_GT(r.delivered, 1000u);
  EXPECT_EQ(r.injected, r.delivered + r.dropped + r.in_flight);
}

TEST(OutputBuffer, LoaderRefusesAnOutputBufferSmallerThanTheInputBuffer) {
  try {
    load_scenario(ibvp::testing::source_path("configs/examples/minimal.yaml"),
                  {"switch.vl_buffer_bytes=8448", "switch.output_buffer_bytes=4096"});
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("output_buffer_bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("at least 8448"), std::string::npos) << m;
  }
}

TEST(OutputBuffer, LoaderRefusesOutputBuffersWithFiniteLifetimes) {
  try {
    load_scenario(ibvp::testing::source_path("configs/examples/minimal.yaml"),
                  {"switch.output_buffer_bytes=65536", "switch.hoq_life=10"});
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("output_buffer_bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("lifetimes"), std::string::npos) << m;
  }
}
