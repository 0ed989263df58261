// The connection manager of seed 002 (platform/sm/connection_manager): requests admitted
// along the LFT paths into every port's high-priority table, within the reservable share,
// all or nothing, deterministic, and released without a trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"
#include "platform/sm/connection_manager.h"
#include "platform/sm/updn.h"
#include "platform/topology/generators.h"

using namespace ibvp;

namespace {

struct Irregular {
  topo::Topology t;
  sm::RoutingTables rt;
  ConnectionsConfig cfg;
  explicit Irregular(uint32_t switches = 4, uint32_t payload = 256) {
    t = topo::random_irregular(switches, 7);
    rt = sm::make_routing_engine("updn")->compute(t);
    cfg.enabled = true;
    cfg.service_levels = sm::seed002_service_levels();
    cfg.payload_bytes = payload;
    cfg.refusals_in_a_row = 300;
  }
  sm::ConnectionManager manager(uint64_t seed = 1) const {
    sm::ConnectionTiming timing;
    timing.pipeline_delay_ps = 100'000;
    timing.max_packet_bytes = sm::ConnectionManager::wire_bytes(cfg.payload_bytes);
    return sm::ConnectionManager(t, rt, cfg, timing, seed);
  }
};

}  // namespace

TEST(ConnectionManager, Seed002PresetIsTable1WithPowerOfTwoDistances) {
  const std::vector<CbrServiceLevel> l = sm::seed002_service_levels();
  ASSERT_EQ(l.size(), 10u);
  const uint32_t distances[] = {2, 4, 8, 16, 32, 32, 64, 64, 64, 64};
  const double min_mbps[] = {0.064, 0.064, 0.064, 0.064, 0.064, 1.55, 0.008, 0.064, 1.55, 64};
  const double max_mbps[] = {1.55, 1.55, 1.55, 1.55, 1.55, 64, 0.064, 1.55, 64, 255};
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(l[i].sl, i);
    EXPECT_EQ(l[i].max_distance, distances[i]);
    EXPECT_DOUBLE_EQ(l[i].min_bandwidth_bps, min_mbps[i] * 1e6);
    EXPECT_DOUBLE_EQ(l[i].max_bandwidth_bps, max_mbps[i] * 1e6);
  }
}

TEST(ConnectionManager, NoPortReservesAboveTheReservableFraction) {
  Irregular s;
  s.cfg.reservable_fraction = 0.5;
  sm::ConnectionManager m = s.manager();
  m.establish();
  ASSERT_GT(m.connections().size(), 100u);
  double fullest = 0;
  for (const auto& p : m.ports()) {
    EXPECT_LE(p.admission.reserved_bps(), static_cast<uint64_t>(0.5 * static_cast<double>(p.link_bps)))
        << p.node << "/" << p.port;
    fullest = std::max(fullest, static_cast<double>(p.admission.reserved_bps()) / static_cast<double>(p.link_bps));
  }
  EXPECT_GT(fullest, 0.4);  // the limit, not something else, stopped them
}

TEST(ConnectionManager, EveryConnectionHoldsEntriesAtEveryPortOfItsRouteAndNowhereElse) {
  Irregular s;
  sm::ConnectionManager m = s.manager();
  m.establish();
  for (uint32_t c = 0; c < m.connections().size(); ++c) {
    const workload::CbrConnection& k = m.connections()[c];
    const std::set<uint32_t> path(m.path_begin(c), m.path_end(c));
    ASSERT_EQ(path.size(), k.hops);
    // The route: the source's CA port, then one output per switch the LFTs lead through.
    EXPECT_EQ(*m.path_begin(c), m.port_index(k.src_node, 1));
    const std::vector<uint32_t> switches = sm::trace_route(s.t, s.rt, k.src_node, k.dlid);
    ASSERT_EQ(switches.size() + 1, k.hops);
    for (size_t h = 0; h < switches.size(); ++h) {
      const uint32_t sw = switches[h];
      EXPECT_EQ(m.path_begin(c)[h + 1], m.port_index(sw, s.rt.lft[sw].lookup(k.dlid)));
    }
    for (uint32_t p = 0; p < m.ports().size(); ++p) {
      const bool holds = m.ports()[p].admission.has(c);
      ASSERT_EQ(holds, path.count(p) == 1) << "connection " << c << " port " << p;
      if (holds) {
        EXPECT_FALSE(m.ports()[p].admission.entries_of(c).empty());
      }
    }
  }
}

TEST(ConnectionManager, HighTablesAreWellFormedAndEntryWeightsAddUpToTheirSequences) {
  Irregular s;
  sm::ConnectionManager m = s.manager();
  m.establish();
  for (const auto& p : m.ports()) {
    EXPECT_TRUE(p.admission.well_formed());
    uint64_t entries = 0, sequences = 0;
    for (uint32_t t = 0; t < sm::kHighTableEntries; ++t) entries += p.admission.entry_weight(t);
    for (const sm::Sequence& q : p.admission.sequences()) sequences += std::max(q.weight, q.entries());
    EXPECT_EQ(entries, sequences) << p.node << "/" << p.port;
  }
}

TEST(ConnectionManager, ReservationCountsHeadersAndAddsUpPerPort) {
  Irregular s;
  sm::ConnectionManager m = s.manager();
  m.establish();
  const uint64_t wire = sm::ConnectionManager::wire_bytes(256);  // 290: 34 bytes of headers and CRCs
  ASSERT_EQ(wire, 290u);
  std::vector<uint64_t> sum(m.ports().size(), 0);
  for (uint32_t c = 0; c < m.connections().size(); ++c) {
    const workload::CbrConnection& k = m.connections()[c];
    EXPECT_EQ(k.reserved_bps, (k.bandwidth_bps * wire + 255) / 256);
    EXPECT_EQ(k.interval_ps, 256 * 8 * 1'000'000'000'000ULL / k.bandwidth_bps);
    EXPECT_LT(k.start_ps, k.interval_ps);
    for (const uint32_t* p = m.path_begin(c); p != m.path_end(c); ++p) sum[*p] += k.reserved_bps;
  }
  for (uint32_t p = 0; p < m.ports().size(); ++p) EXPECT_EQ(sum[p], m.ports()[p].admission.reserved_bps());
}

TEST(ConnectionManager, DeadlineCoversEveryPortsTableCycleAtItsDistance) {
  Irregular s;
  sm::ConnectionManager m = s.manager();
  m.establish();
  for (uint32_t c = 0; c < m.connections().size(); ++c) {
    const workload::CbrConnection& k = m.connections()[c];
    uint64_t table_ps = 0;
    for (const uint32_t* p = m.path_begin(c); p != m.path_end(c); ++p) {
      const auto& port = m.ports()[*p];
      // d x 255 x 64 bytes at 2 Gb/s (1X SDR data rate): 4 ps per bit.
      table_ps += uint64_t{port.admission.distance_of(c)} * 255 * 64 * 8 * 500;
      EXPECT_LE(port.admission.distance_of(c), k.distance);
    }
    EXPECT_GT(k.deadline_ps, table_ps);
    EXPECT_LE(k.distance, s.cfg.service_levels[k.sl].max_distance);
  }
}

TEST(ConnectionManager, OneRefusalInARowStopsTheRequestsAtTheFirstRefusal) {
  Irregular s;
  s.cfg.refusals_in_a_row = 1;
  sm::ConnectionManager m = s.manager();
  m.establish();
  EXPECT_EQ(m.totals().refused, 1u);
  EXPECT_EQ(m.totals().requested, m.connections().size() + 1);
}

TEST(ConnectionManager, MaxConnectionsStopsTheRequests) {
  Irregular s;
  s.cfg.max_connections = 25;
  sm::ConnectionManager m = s.manager();
  m.establish();
  EXPECT_EQ(m.connections().size(), 25u);
  EXPECT_EQ(m.totals().established, 25u);
  EXPECT_EQ(m.totals().requested, 25u + m.totals().refused);
  uint64_t verdicts = 0;
  for (uint64_t v : m.by_verdict()) verdicts += v;
  EXPECT_EQ(verdicts, m.totals().requested);
}

TEST(ConnectionManager, SameSeedGivesTheSameConnectionsAndAnotherSeedOthers) {
  Irregular s;
  sm::ConnectionManager a = s.manager(5), b = s.manager(5), c = s.manager(6);
  a.establish();
  b.establish();
  c.establish();
  ASSERT_EQ(a.connections().size(), b.connections().size());
  auto same = [](const workload::CbrConnection& x, const workload::CbrConnection& y) {
    return x.src_node == y.src_node && x.dst_node == y.dst_node && x.sl == y.sl && x.bandwidth_bps == y.bandwidth_bps &&
           x.start_ps == y.start_ps && x.deadline_ps == y.deadline_ps && x.distance == y.distance;
  };
  for (size_t i = 0; i < a.connections().size(); ++i) EXPECT_TRUE(same(a.connections()[i], b.connections()[i])) << i;
  EXPECT_FALSE(same(a.connections()[0], c.connections()[0]) && same(a.connections()[1], c.connections()[1]));
}

TEST(ConnectionManager, LargerPacketsCarryLessHeaderSoEachConnectionReservesLess) {
  Irregular small(4, 256), large(4, 4096);
  small.cfg.max_connections = large.cfg.max_connections = 1;
  sm::ConnectionManager a = small.manager(), b = large.manager();
  a.establish();
  b.establish();
  // The same first request (the stream draws src, dst, SL and bandwidth first).
  ASSERT_EQ(a.connections()[0].bandwidth_bps, b.connections()[0].bandwidth_bps);
  EXPECT_GT(a.connections()[0].reserved_bps, b.connections()[0].reserved_bps);
}

TEST(ConnectionManager, ReleasingEveryConnectionLeavesEveryPortEmpty) {
  Irregular s;
  sm::ConnectionManager m = s.manager();
  m.establish();
  ASSERT_GT(m.connections().size(), 0u);
  for (uint32_t c = 0; c < m.connections().size(); ++c) EXPECT_EQ(m.release(c), m.connections()[c].hops);
  for (const auto& p : m.ports()) {
    EXPECT_EQ(p.admission.reserved_bps(), 0u);
    EXPECT_EQ(p.admission.connections(), 0u);
    EXPECT_EQ(p.admission.free_entries(), sm::kHighTableEntries);
    EXPECT_TRUE(p.admission.well_formed());
  }
}

// ---- the scenario section ----------------------------------------------------------------

namespace {
const char* kBase =
    "duration: 1ms\n"
    "topology: {generator: single_switch, hosts: 4}\n"
    "switch: {data_vls: 15}\n"
    "endpoint: {data_vls: 15}\n";
}  // namespace

TEST(ConnectionsSection, Seed002ShorthandExpandsToTable1) {
  const Scenario s = scenario_from_yaml(std::string(kBase) + "connections: {service_levels: seed002, payload_bytes: 1024}\n",
                                        "c.yaml");
  ASSERT_TRUE(s.connections.enabled);
  EXPECT_EQ(s.connections.service_levels.size(), 10u);
  EXPECT_EQ(s.connections.service_levels[5].max_distance, 32u);
  EXPECT_EQ(s.connections.payload_bytes, 1024u);
}

TEST(ConnectionsSection, ExplicitServiceLevelsAreReadInMbps) {
  const Scenario s = scenario_from_yaml(
      std::string(kBase) +
          "connections:\n  service_levels: [{sl: 3, max_distance: 8, bandwidth_mbps: [0.5, 2]}]\n  hold_time: 1ms\n",
      "c.yaml");
  ASSERT_EQ(s.connections.service_levels.size(), 1u);
  EXPECT_EQ(s.connections.service_levels[0].sl, 3);
  EXPECT_DOUBLE_EQ(s.connections.service_levels[0].min_bandwidth_bps, 0.5e6);
  EXPECT_DOUBLE_EQ(s.connections.service_levels[0].max_bandwidth_bps, 2e6);
  EXPECT_EQ(s.connections.hold_time, sc_core::sc_time(1, sc_core::SC_MS));
}

namespace {
ConfigError refusal(const std::string& yaml) {
  try {
    scenario_from_yaml(yaml, "c.yaml");
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << yaml;
  return ConfigError("", "", 0, "", "");
}
}  // namespace

TEST(ConnectionsSection, AnUnknownPresetIsRefusedWithTheKeyAndThePresets) {
  const ConfigError e = refusal(std::string(kBase) + "connections: {service_levels: seed001}\n");
  EXPECT_EQ(e.file(), "c.yaml");
  EXPECT_NE(e.key().find("service_levels"), std::string::npos);
  EXPECT_NE(e.fix().find("seed002"), std::string::npos);
}

TEST(ConnectionsSection, SlsSharingAVlAreRefusedWithTheFix) {
  // 4 data VLs and the default SL2VL (SL mod 4): SL 4 lands on SL 0's VL.
  const ConfigError e = refusal(
      "duration: 1ms\ntopology: {generator: single_switch, hosts: 4}\nswitch: {data_vls: 4}\nendpoint: {data_vls: 4}\n"
      "connections: {service_levels: seed002}\n");
  EXPECT_NE(e.key().find("connections.service_levels"), std::string::npos);
  EXPECT_NE(std::string(e.what()).find("both map to VL 0"), std::string::npos);
  EXPECT_NE(e.fix().find("data_vls"), std::string::npos);
}

TEST(ConnectionsSection, HcaHostsAreRefused) {
  const ConfigError e = refusal(std::string(kBase) + "endpoint_model: hca\nflows: [{src: h1, dst: h2}]\n"
                                                      "connections: {service_levels: seed002}\n");
  EXPECT_EQ(e.key(), "connections");
  EXPECT_NE(e.fix().find("endpoint_model: fabric"), std::string::npos);
}

TEST(ConnectionsSection, AnInvertedBandwidthRangeIsRefused) {
  const ConfigError e = refusal(std::string(kBase) +
                                "connections: {service_levels: [{sl: 0, max_distance: 2, bandwidth_mbps: [2, 1]}]}\n");
  EXPECT_NE(e.key().find("bandwidth_mbps"), std::string::npos);
}
