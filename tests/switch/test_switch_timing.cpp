// Timing of packets through switches against numbers derived by hand from the IBA
// parameters: serialization at the data rate, cable propagation, pipeline delay.
#include <gtest/gtest.h>

#include <systemc>

#include "common/fabrics.h"
#include "platform/builder/fabric.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_NS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

// A UD SEND Only packet with 2048 payload bytes: LRH 8 + BTH 12 + DETH 8 + 2048 + ICRC 4 +
// VCRC 2 = 2082 bytes; at 4X SDR (10 Gb/s signalling, 8b/10b: 1 byte per ns) 2082 ns.
constexpr uint64_t kWireBytes = 2082;
constexpr uint64_t kSerNs = 2082;
constexpr uint64_t kPropNs = 5;        // 1 m at 5 ns/m
constexpr uint64_t kPipelineNs = 100;  // SwitchConfig default

FlowConfig one_packet(const std::string& name, const std::string& src, const std::string& dst) {
  FlowConfig f = tb::saturating_flow(name, src, dst);
  f.generator = GeneratorKind::constant;
  f.load = 0.01;  // next packet would come 100 packet times later, after stop
  f.start = sc_core::SC_ZERO_TIME;
  f.stop = sc_time(1, SC_NS);
  return f;
}

uint64_t delivered_ns(const metrics::Recorder& rec, uint32_t flow) {
  for (const metrics::PacketRecord& r : rec.packets())
    if (r.flow == flow && r.done_ps && !r.drop) return r.done_ps / 1000;
  return 0;
}

}  // namespace

TEST(SwitchTiming, PacketWireSizeIsByteExact) {
  ib::Packet p;
  p.bth.opcode = ib::Opcode::ud_send_only;
  p.payload_bytes = 2048;
  EXPECT_EQ(p.wire_bytes(), kWireBytes);
  p.payload_bytes = 2045;  // 3 bytes of pad restore 4-byte alignment
  EXPECT_EQ(p.wire_bytes(), kWireBytes);
  p.finalize_lengths();
  EXPECT_EQ(p.bth.pad_cnt, 3);
  EXPECT_EQ(p.lrh.pkt_len, (kWireBytes - 2) / 4);
}

TEST(SwitchTiming, UnloadedLatencyIsSumOfSerializationPipelineAndPropagation) {
  Scenario s = tb::basic_scenario(tb::chain(2));
  s.flows.push_back(one_packet("p", "h_src", "h_dst"));
  Fabric f(s);
  sc_core::sc_start(sc_time(1, SC_MS));
  f.finish();
  // Cut-through: the packet serializes once; every cable adds propagation, every switch its
  // pipeline delay. Two switches: 3 cables.
  EXPECT_EQ(delivered_ns(f.recorder(), 0), kSerNs + 3 * kPropNs + 2 * kPipelineNs);
  EXPECT_EQ(f.recorder().packets().at(0).hops, 2);
}

TEST(SwitchTiming, BlockedOutputDelaysSecondPacketByOneSerializationTime) {
  Scenario s = tb::basic_scenario(tb::chain(2));
  s.flows.push_back(one_packet("first", "h_src", "h_dst"));
  s.flows.push_back(one_packet("second", "a1", "h_dst"));
  Fabric f(s);
  sc_core::sc_start(sc_time(1, SC_MS));
  f.finish();
  const uint64_t a = delivered_ns(f.recorder(), 0), b = delivered_ns(f.recorder(), 1);
  const uint64_t unloaded = kSerNs + 3 * kPropNs + 2 * kPipelineNs;
  // Both heads reach s1 together; one waits at s1's output for the other's whole packet,
  // then finds s2's output free exactly when it arrives there.
  EXPECT_EQ(std::min(a, b), unloaded);
  EXPECT_EQ(std::max(a, b), unloaded + kSerNs);
}

TEST(SwitchTiming, SlowerOutputLinkSerializesAtItsOwnRate) {
  // Source cable 4X QDR (4 bytes/ns), destination cable 4X SDR (1 byte/ns): the switch
  // cuts through and the tail leaves at the SDR rate.
  topo::Topology t = tb::star(2);
  t.links[0].cfg.speed = link::Speed::qdr;
  t.index();
  Scenario s = tb::basic_scenario(t);
  s.flows.push_back(one_packet("p", "h1", "h2"));
  Fabric f(s);
  sc_core::sc_start(sc_time(1, SC_MS));
  f.finish();
  EXPECT_EQ(delivered_ns(f.recorder(), 0), kPropNs + kPipelineNs + kPropNs + kSerNs);
}

TEST(SwitchTiming, FasterOutputWaitsForTheTailToArrive) {
  // SDR in, QDR out: the output cannot finish before the tail has come in at 1 byte/ns.
  topo::Topology t = tb::star(2);
  t.links[1].cfg.speed = link::Speed::qdr;
  t.index();
  Scenario s = tb::basic_scenario(t);
  s.flows.push_back(one_packet("p", "h1", "h2"));
  Fabric f(s);
  sc_core::sc_start(sc_time(1, SC_MS));
  f.finish();
  // Tail reaches the switch at prop + ser; the last byte then crosses the output cable.
  EXPECT_EQ(delivered_ns(f.recorder(), 0), kPropNs + kSerNs + kPropNs);
}

struct ThroughputCase {
  link::Speed speed;
  uint32_t payload;
};

class SwitchThroughput : public ::testing::TestWithParam<ThroughputCase> {};

TEST_P(SwitchThroughput, SaturatedLinkDeliversDataRateTimesPayloadShare) {
  const ThroughputCase c = GetParam();
  link::LinkConfig cable;
  cable.speed = c.speed;
  Scenario s = tb::basic_scenario(tb::star(2, cable));
  s.flows.push_back(tb::saturating_flow("sat", "h1", "h2", c.payload));
  s.switch_cfg.vl_buffer_bytes = s.endpoint_cfg.vl_buffer_bytes = 8 * 4160;
  s.warmup = sc_time(100, SC_US);
  s.duration = sc_time(2, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  ib::Packet shape;
  shape.bth.opcode = ib::Opcode::ud_send_only;
  shape.payload_bytes = c.payload;
  const double rate = link::LinkRate(cable).data_bits_per_s() / 8;
  const double expected = rate * c.payload / shape.wire_bytes();
  const auto& ft = f.recorder().flows().at(0);
  const double measured = static_cast<double>(ft.measured_payload_bytes) /
                          (static_cast<double>((s.duration - s.warmup).value()) * 1e-12);
  EXPECT_NEAR(measured / expected, 1.0, 0.005);
}

INSTANTIATE_TEST_SUITE_P(Speeds, SwitchThroughput,
                         ::testing::Values(ThroughputCase{link::Speed::sdr, 2048}, ThroughputCase{link::Speed::qdr, 256},
                                           ThroughputCase{link::Speed::fdr, 4096}, ThroughputCase{link::Speed::edr, 1024},
                                           ThroughputCase{link::Speed::ndr, 4096}));
