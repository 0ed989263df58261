// CBR connections on the fabric (seed 002): the sources create each connection's packets at
// its nominal times, the ports carry the admitted high-priority tables, every packet is
// accounted for, and connections that end give their entries back mid-run.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <systemc>

#include "common/fabrics.h"
#include "platform/builder/fabric.h"
#include "platform/scenario/scenario_loader.h"
#include "platform/sm/connection_manager.h"
#include "platform/workload/cbr_source.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_US;
using sc_core::sc_time;

TEST(CbrSource, CreatesEachConnectionsPacketsAtItsNominalInterval) {
  workload::CbrConnections conns(3);
  const uint64_t intervals[] = {1'000'000, 3'300'001, 700'000};
  for (uint32_t c = 0; c < 3; ++c) {
    conns[c].dst_node = 10 + c;
    conns[c].dlid = static_cast<uint16_t>(20 + c);
    conns[c].payload_bytes = 256;
    conns[c].interval_ps = intervals[c];
    conns[c].start_ps = 123'457 * (c + 1);
  }
  conns[2].end_ps = 50'000'000;  // it stops creating packets then
  workload::CbrSource src(conns, {0, 1, 2}, 4);
  EXPECT_EQ(src.flow, ib::kNoFlow);
  EXPECT_EQ(src.sl, 4);
  const uint64_t window_end = 200'000'000;
  std::map<uint32_t, uint64_t> count, last;
  uint64_t now = 0;
  while (src.next_ready_ps(now) < window_end) {
    now = src.next_ready_ps(now);
    ep::PacketSpec spec;
    src.take(now, spec);
    const uint32_t c = spec.connection;
    ASSERT_LT(c, 3u);
    EXPECT_EQ(spec.dlid, conns[c].dlid);
    EXPECT_EQ(spec.dst_node, conns[c].dst_node);
    // created at start + k x interval exactly
    EXPECT_EQ(spec.created_ps, conns[c].start_ps + count[c] * conns[c].interval_ps);
    EXPECT_GE(spec.created_ps, last[c]);
    last[c] = spec.created_ps;
    count[c]++;
  }
  for (uint32_t c = 0; c < 2; ++c) {
    const double expect = static_cast<double>(window_end) / static_cast<double>(intervals[c]);
    EXPECT_NEAR(static_cast<double>(count[c]), expect, 1.0) << c;
  }
  EXPECT_NEAR(static_cast<double>(count[2]), 50'000'000.0 / 700'000.0, 1.0);
  EXPECT_LT(last[2], conns[2].end_ps);
  EXPECT_EQ(src.active(), 2u);
}

namespace {

// What the test needs of each packet: its connection, where it went, its SL and VL.
struct Seen : sim::FabricObserver {
  struct Packet {
    uint32_t connection, dst_node;
    uint8_t sl, vl;
    uint64_t created_ps;
  };
  std::vector<Packet> delivered;
  uint64_t dropped = 0;
  void on_deliver(const ib::Packet& p, uint32_t node, uint64_t) override {
    delivered.push_back({p.connection, node, p.lrh.sl, p.lrh.vl, static_cast<uint64_t>(p.created.value())});
  }
  void on_drop(const ib::Packet&, uint32_t, uint64_t) override { dropped++; }
};

Scenario connection_scenario(uint32_t payload, sc_time hold = sc_core::SC_ZERO_TIME) {
  std::string yaml =
      "duration: 2ms\nwarmup: 0.1ms\nrouting: updn\n"
      "topology: {generator: random_irregular, switches: 4, seed: 3}\n"
      "switch: {data_vls: 15, vl_buffer_bytes: 4352}\nendpoint: {data_vls: 15, vl_buffer_bytes: 4352}\n"
      "connections: {service_levels: seed002, refusals_in_a_row: 100, payload_bytes: " +
      std::to_string(payload) + "}\n";
  Scenario s = scenario_from_yaml(yaml, "cbr.yaml");
  s.connections.hold_time = hold;
  return s;
}

}  // namespace

TEST(CbrConnections, PortsCarryTheAdmittedHighTablesAndEachSlItsOwnVl) {
  const Scenario s = connection_scenario(1024);
  Fabric f(s);
  const sm::ConnectionManager* m = f.connections();
  ASSERT_NE(m, nullptr);
  ASSERT_GT(m->connections().size(), 50u);
  for (const auto& p : m->ports()) {
    const bool host = p.host;
    const link::VlArbConfig& have = host ? f.endpoint_at(p.node)->vlarb() : f.switch_at(p.node)->vlarb(p.port);
    const auto& sl2vl = host ? s.endpoint_cfg.sl2vl : s.switch_cfg.sl2vl;
    const std::vector<link::VlArbEntry> want = p.admission.vlarb_high(sl2vl);
    ASSERT_EQ(have.high.size(), want.size());
    for (size_t e = 0; e < want.size(); ++e) {
      EXPECT_EQ(have.high[e].vl, want[e].vl);
      EXPECT_EQ(have.high[e].weight, want[e].weight);
    }
    // The low table and the limit stay the scenario's.
    const link::VlArbConfig& base = host ? s.endpoint_cfg.vlarb : s.switch_cfg.vlarb;
    EXPECT_EQ(have.low.size(), base.low.size());
    EXPECT_EQ(have.high_limit, base.high_limit);
    // Every sequence's entries carry its SL's own VL.
    for (const sm::Sequence& q : p.admission.sequences())
      for (uint32_t t = q.start; t < sm::kHighTableEntries; t += q.distance) EXPECT_EQ(have.high[t].vl, sl2vl[q.sl]);
  }
  std::set<uint8_t> vls;
  for (const CbrServiceLevel& lv : s.connections.service_levels) vls.insert(s.switch_cfg.sl2vl[lv.sl]);
  EXPECT_EQ(vls.size(), s.connections.service_levels.size());
}

TEST(CbrConnections, EveryPacketIsDeliveredToItsConnectionsDestinationOrStillInFlight) {
  const Scenario s = connection_scenario(256);
  Fabric f(s);
  Seen seen;
  f.probe().attach(&seen);
  sc_core::sc_start(s.duration);
  f.finish();
  const auto& conns = f.connections()->connections();
  uint64_t injected = 0, delivered = 0;
  for (uint32_t n = 0; n < s.topology.nodes.size(); ++n)
    if (ep::Endpoint* e = f.endpoint_at(n)) {
      injected += e->injected();
      delivered += e->delivered();
    }
  ASSERT_GT(delivered, 1000u);
  EXPECT_EQ(injected, delivered + f.packets_in_flight());
  EXPECT_EQ(seen.dropped, 0u);
  EXPECT_EQ(seen.delivered.size(), delivered);
  for (const Seen::Packet& r : seen.delivered) {
    ASSERT_LT(r.connection, conns.size());
    EXPECT_EQ(r.dst_node, conns[r.connection].dst_node);
    EXPECT_EQ(r.sl, conns[r.connection].sl);
    EXPECT_EQ(r.vl, s.switch_cfg.sl2vl[r.sl]);
  }
}

TEST(CbrConnections, ConnectionsThatEndReleaseEveryEntryAndTheirPortsAreReprogrammedMidRun) {
  const Scenario s = connection_scenario(1024, sc_time(50, SC_US));
  Fabric f(s);
  Seen seen;
  f.probe().attach(&seen);
  const auto& conns = f.connections()->connections();
  ASSERT_GT(conns.size(), 50u);
  uint64_t last_end = 0;
  for (const auto& k : conns) {
    ASSERT_NE(k.end_ps, ~uint64_t{0});
    last_end = std::max(last_end, k.end_ps);
  }
  ASSERT_LT(last_end, s.duration.value() / 2);  // all of them end well within the run
  sc_core::sc_start(s.duration);
  f.finish();
  for (const auto& p : f.connections()->ports()) {
    EXPECT_EQ(p.admission.reserved_bps(), 0u);
    EXPECT_EQ(p.admission.connections(), 0u);
    const link::VlArbConfig& have = p.host ? f.endpoint_at(p.node)->vlarb() : f.switch_at(p.node)->vlarb(p.port);
    for (const link::VlArbEntry& e : have.high) EXPECT_EQ(e.weight, 0) << p.node << "/" << p.port;
  }
  // Nothing was lost while the tables changed, and no packet was created after its end.
  EXPECT_EQ(f.packets_in_flight(), 0u);
  EXPECT_EQ(seen.dropped, 0u);
  ASSERT_GT(seen.delivered.size(), 0u);
  for (const Seen::Packet& r : seen.delivered) EXPECT_LT(r.created_ps, conns[r.connection].end_ps);
}
