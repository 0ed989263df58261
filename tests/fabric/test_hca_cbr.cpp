// Seed 002's CBR connections on HCA hosts (issue 11; platform/apps/cbr_streams.h): the
// admitted connections are sent by the hosts' programs through the verbs driver and the
// HCA's firmware, one UD QP per (host, SL), one SEND per packet at its nominal time; the
// HCAs' CA ports arbitrate with the admitted high tables; the recorder's connection metrics
// read the packets' connection tags as with fabric-only endpoints.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <systemc>
#include <unistd.h>
#include <vector>

#include "common/testing.h"
#include "platform/apps/cbr_streams.h"
#include "platform/builder/fabric.h"
#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"
#include "platform/sm/connection_manager.h"
#include "platform/sm/routing.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

// What the tests need of each delivered packet.
struct Seen : sim::FabricObserver {
  struct Packet {
    uint32_t connection, node;
    uint8_t sl, vl;
    uint64_t created_ps, delivered_ps;
  };
  std::vector<Packet> delivered;
  uint64_t dropped = 0;
  void on_deliver(const ib::Packet& p, uint32_t node, uint64_t t) override {
    delivered.push_back({p.connection, node, p.lrh.sl, p.lrh.vl, static_cast<uint64_t>(p.created.value()), t});
  }
  void on_drop(const ib::Packet&, uint32_t, uint64_t) override { dropped++; }
};

// A small fabric of seed 002's shape (random irregular, 1X SDR, 15 data VLs) on HCA hosts.
std::string yaml(const std::string& model, double fraction, const std::string& extra = "") {
  std::ostringstream y;
  y << "name: cbr\nseed: 4\nduration: 3ms\nwarmup: 0.5ms\nrouting: updn\n"
       "topology: {generator: random_irregular, switches: 4, seed: 3}\n"
       "switch: {data_vls: 15, vl_buffer_bytes: 4352}\nendpoint: {data_vls: 15, vl_buffer_bytes: 4352}\n"
       "endpoint_model: "
    << model << "\nconnections: {service_levels: seed002, refusals_in_a_row: 100, payload_bytes: 1024, "
    << "reservable_fraction: " << fraction << extra << "}\noutputs: {packets_csv: false}\n";
  return y.str();
}

Scenario hca_scenario(double fraction, const std::string& extra = "") {
  return scenario_from_yaml(yaml("hca", fraction, extra), "cbr.yaml", {}, ".");
}

const link::VlArbConfig& ca_vlarb(const Fabric& f, uint32_t node) { return f.host_at(node)->hca.vlarb(); }

}  // namespace

TEST(HcaCbr, EveryPacketIsCreatedAtItsConnectionsNominalTimeAndDeliveredOnceToItsDestination) {
  const Scenario s = hca_scenario(0.8);
  Fabric f(s);
  Seen seen;
  f.probe().attach(&seen);
  sc_core::sc_start(s.duration);
  ASSERT_NE(f.cbr_streams(), nullptr);
  EXPECT_EQ(f.cbr_streams()->error(), "");
  const auto& conns = f.connections()->connections();
  ASSERT_GT(conns.size(), 100u);
  EXPECT_EQ(seen.dropped, 0u);
  // Per connection, the k-th delivered packet is its k-th nominal packet: created exactly at
  // start + k x interval, on its SL's own VL, at its destination; nothing lost or repeated.
  std::vector<uint64_t> count(conns.size(), 0);
  for (const Seen::Packet& r : seen.delivered) {
    ASSERT_LT(r.connection, conns.size());
    const workload::CbrConnection& k = conns[r.connection];
    EXPECT_EQ(r.node, k.dst_node);
    EXPECT_EQ(r.sl, k.sl);
    EXPECT_EQ(r.vl, s.endpoint_cfg.sl2vl[k.sl]);
    ASSERT_EQ(r.created_ps, k.start_ps + count[r.connection] * k.interval_ps) << "connection " << r.connection;
    count[r.connection]++;
  }
  // Every packet created before the last 0.5 ms arrived (a lightly loaded fabric's delays
  // are far shorter; the next test bounds them).
  const uint64_t horizon = s.duration.value() - sc_time(0.5, SC_MS).value();
  uint64_t expected_total = 0;
  for (uint32_t c = 0; c < conns.size(); ++c) {
    const workload::CbrConnection& k = conns[c];
    const uint64_t due = k.start_ps < horizon ? (horizon - k.start_ps + k.interval_ps - 1) / k.interval_ps : 0;
    EXPECT_GE(count[c], due) << "connection " << c;
    expected_total += due;
  }
  ASSERT_GT(expected_total, 1000u);
  // Conservation: what the programs posted was delivered or is still on its way.
  const metrics::Recorder& r = f.recorder();
  EXPECT_EQ(r.injected(), r.delivered() + r.dropped() + f.packets_in_flight());
  EXPECT_EQ(r.delivered(), seen.delivered.size());
  EXPECT_GE(f.cbr_streams()->posted(), seen.delivered.size());
  // The destinations' programs took every packet but those their firmware was handling.
  EXPECT_LE(f.cbr_streams()->received(), seen.delivered.size());
  EXPECT_LT(seen.delivered.size() - f.cbr_streams()->received(), 64u);
}

TEST(HcaCbr, EveryPacketMeetsItsDeadlineOnALightlyLoadedFabric) {
  const Scenario s = hca_scenario(0.2);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  EXPECT_EQ(f.cbr_streams()->error(), "");
  const metrics::ConnectionMetrics* m = f.recorder().connection_metrics();
  ASSERT_NE(m, nullptr);
  uint64_t packets = 0;
  for (uint32_t c = 0; c < m->size(); ++c) {
    EXPECT_EQ(m->late(c), 0u) << "connection " << c;
    EXPECT_LE(m->state(c).delay_max_ps, m->connections()[c].deadline_ps) << "connection " << c;
    packets += m->state(c).delivered;
  }
  EXPECT_GT(packets, 500u);
}

TEST(HcaCbr, HcaPortsCarryTheAdmittedHighTables) {
  const Scenario s = hca_scenario(0.8);
  Fabric f(s);
  const sm::ConnectionManager* m = f.connections();
  size_t ca_ports = 0;
  for (const auto& p : m->ports()) {
    if (!p.host) continue;
    ++ca_ports;
    ASSERT_NE(f.host_at(p.node), nullptr);
    const link::VlArbConfig& have = ca_vlarb(f, p.node);
    const std::vector<link::VlArbEntry> want = p.admission.vlarb_high(s.endpoint_cfg.sl2vl);
    ASSERT_EQ(have.high.size(), want.size());
    size_t busy = 0;
    for (size_t e = 0; e < want.size(); ++e) {
      EXPECT_EQ(have.high[e].vl, want[e].vl);
      EXPECT_EQ(have.high[e].weight, want[e].weight);
      busy += want[e].weight > 0;
    }
    EXPECT_GT(busy, 0u) << "host " << p.node << " admitted nothing";
    EXPECT_EQ(have.low.size(), s.endpoint_cfg.vlarb.low.size());
    EXPECT_EQ(have.high_limit, s.endpoint_cfg.vlarb.high_limit);
  }
  EXPECT_EQ(ca_ports, s.topology.endpoints().size());
}

TEST(HcaCbr, ConnectionsThatEndReleaseTheirEntriesOnHcaHostsToo) {
  const Scenario s = hca_scenario(0.8, ", hold_time: 100us");
  Fabric f(s);
  Seen seen;
  f.probe().attach(&seen);
  const auto& conns = f.connections()->connections();
  uint64_t last_end = 0;
  for (const auto& k : conns) last_end = std::max(last_end, k.end_ps);
  ASSERT_LT(last_end, s.duration.value() / 2);
  sc_core::sc_start(s.duration);
  EXPECT_EQ(f.cbr_streams()->error(), "");
  for (const auto& p : f.connections()->ports()) {
    EXPECT_EQ(p.admission.connections(), 0u);
    const link::VlArbConfig& have = p.host ? ca_vlarb(f, p.node) : f.switch_at(p.node)->vlarb(p.port);
    for (const link::VlArbEntry& e : have.high) EXPECT_EQ(e.weight, 0) << p.node << "/" << p.port;
  }
  EXPECT_EQ(f.packets_in_flight(), 0u);
  EXPECT_EQ(seen.dropped, 0u);
  ASSERT_GT(seen.delivered.size(), 100u);
  for (const Seen::Packet& r : seen.delivered) EXPECT_LT(r.created_ps, conns[r.connection].end_ps);
  // Every tag was used by its packet.
  for (uint32_t n = 0; n < s.topology.nodes.size(); ++n)
    if (const driver::HostNode* h = f.host_at(n)) {
      EXPECT_EQ(h->hca.connection_tags_pending(), 0u) << n;
    }
}

// ---- Runs of ibvp-sim: one kernel per process. ----

namespace {
std::string run_sim(const std::filesystem::path& yaml_file, const std::filesystem::path& out) {
  const std::string cmd = std::string(IBVP_BINARY_DIR) + "/ibvp-sim " + yaml_file.string() + " --out " +
                          out.string() + " --quiet 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "popen failed";
  std::string output;
  std::array<char, 4096> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) output.append(buf.data(), n);
  const int status = pclose(p);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "ibvp-sim failed: " + output;
  return "";
}
std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
std::vector<std::vector<std::string>> csv(const std::filesystem::path& p) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(slurp(p));
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> row;
    std::istringstream l(line);
    for (std::string cell; std::getline(l, cell, ',');) row.push_back(cell);
    rows.push_back(row);
  }
  return rows;
}
size_t column(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  ADD_FAILURE() << "no column " << name;
  return 0;
}
// summary.json's admission block reports the admission's wall-clock time: the one line
// that may differ between two runs.
std::string without_wall_clock(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.find("\"wall_seconds\"") == std::string::npos) out += line + "\n";
  return out;
}
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag)
      : path(std::filesystem::temp_directory_path() / ("ibvp-hcacbr-" + tag + "-" + std::to_string(getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};
}  // namespace

// The admission does not depend on the endpoint model (same requests, same paths), so both
// runs have the same connections and their packets are due at the same times. The packets
// each SL delivers may differ only by those that are on their way at the end in one run and
// not the other: packets due (after the warm-up) within the longest delay of either run
// before the end. Their number, per SL, is the tolerance; the schedule comes from the same
// connection manager run here (no simulation needed for it).
TEST(HcaCbr, PerSlPacketCountsMatchAFabricEndpointRunOfTheSameScenario) {
  TempDir dir("sl");
  std::ofstream(dir.path / "fabric.yaml") << yaml("fabric", 0.8);
  std::ofstream(dir.path / "hca.yaml") << yaml("hca", 0.8);
  ASSERT_EQ(run_sim(dir.path / "fabric.yaml", dir.path / "fabric"), "");
  ASSERT_EQ(run_sim(dir.path / "hca.yaml", dir.path / "hca"), "");
  // Same connections: source, destination, SL, path, rate, interval, D.
  const auto fc = csv(dir.path / "fabric" / "connections.csv"), hc = csv(dir.path / "hca" / "connections.csv");
  ASSERT_GT(fc.size(), 100u);
  ASSERT_EQ(fc.size(), hc.size());
  ASSERT_EQ(fc[0], hc[0]);
  for (const char* name :
       {"src", "dst", "sl", "hops", "distance", "bandwidth_bps", "reserved_bps", "interval_ns", "deadline_ns"}) {
    const size_t col = column(fc[0], name);
    for (size_t i = 1; i < fc.size(); ++i) ASSERT_EQ(fc[i][col], hc[i][col]) << name << " row " << i;
  }
  const auto fs = csv(dir.path / "fabric" / "service_levels.csv"), hs = csv(dir.path / "hca" / "service_levels.csv");
  ASSERT_EQ(fs.size(), hs.size());
  ASSERT_EQ(fs.size(), 11u);  // header + the ten SLs of seed 002 Table 1
  const size_t sl_col = column(fs[0], "sl"), packets = column(fs[0], "packets"), max_col = column(fs[0], "delay_max_ns");
  const Scenario s = hca_scenario(0.8);
  const sm::RoutingTables routing = sm::make_routing_engine(s.routing, s.routing_options)->compute(s.topology);
  sm::ConnectionManager manager(s.topology, routing, s.connections, sm::ConnectionTiming{}, s.seed);
  manager.establish();
  const workload::CbrConnections& conns = manager.connections();
  ASSERT_EQ(conns.size() + 1, fc.size());
  const size_t c_src = column(fc[0], "src");
  for (uint32_t c = 0; c < conns.size(); ++c) ASSERT_EQ(s.topology.nodes[conns[c].src_node].name, fc[c + 1][c_src]);
  const uint64_t end = s.duration.value(), warmup = s.warmup.value();
  // Nominal times of connection c in [from, end), at or after the warm-up.
  auto due_in = [&](const workload::CbrConnection& k, uint64_t from) {
    from = std::max({from, warmup, k.start_ps});
    auto first_at_or_after = [&](uint64_t t) { return (t - k.start_ps + k.interval_ps - 1) / k.interval_ps; };
    return from >= end ? uint64_t{0} : first_at_or_after(end) - first_at_or_after(from);
  };
  const size_t mean_col = column(fs[0], "delay_mean_ns");
  uint64_t total = 0, differing = 0;
  for (size_t i = 1; i < fs.size(); ++i) {
    // Delay counts from the nominal time on both; on HCA hosts it also holds the host's
    // post and doorbell, the WQE and payload reads and the firmware: every SL's mean grows.
    EXPECT_GT(std::stod(hs[i][mean_col]), std::stod(fs[i][mean_col]) + 1000.0) << "SL " << fs[i][sl_col];
    const double a = std::stod(fs[i][packets]), b = std::stod(hs[i][packets]);
    ASSERT_GT(a, 0) << "SL row " << i;
    const uint64_t delay_max_ps =
        static_cast<uint64_t>(std::ceil(1e3 * std::max(std::stod(fs[i][max_col]), std::stod(hs[i][max_col]))));
    uint64_t tol = 0;
    for (const workload::CbrConnection& k : conns)
      if (std::to_string(k.sl) == fs[i][sl_col]) tol += due_in(k, end - std::min(end, delay_max_ps));
    EXPECT_LE(std::abs(b - a), static_cast<double>(tol)) << "SL " << fs[i][sl_col] << ": fabric " << a << ", hca " << b;
    // The bound is well below the counts: the comparison can fail.
    EXPECT_LT(static_cast<double>(tol), 0.25 * a) << "SL " << fs[i][sl_col];
    total += static_cast<uint64_t>(a);
    differing += static_cast<uint64_t>(std::abs(b - a));
  }
  // Over all SLs, under 1 % of the packets differ.
  EXPECT_LT(static_cast<double>(differing), 0.01 * static_cast<double>(total)) << differing << " of " << total;
}

TEST(HcaCbr, TwoRunsOfTheSameScenarioWriteTheSameResults) {
  TempDir dir("det");
  std::ofstream(dir.path / "hca.yaml") << yaml("hca", 0.8, ", hold_time: 2ms");
  ASSERT_EQ(run_sim(dir.path / "hca.yaml", dir.path / "a"), "");
  ASSERT_EQ(run_sim(dir.path / "hca.yaml", dir.path / "b"), "");
  for (const char* file : {"summary.json", "connections.csv", "service_levels.csv", "ports.csv", "admission.csv"}) {
    const std::string a = without_wall_clock(slurp(dir.path / "a" / file));
    EXPECT_GT(a.size(), 100u) << file;
    EXPECT_EQ(a, without_wall_clock(slurp(dir.path / "b" / file))) << file;
  }
}

TEST(HcaCbrLoader, AcceptsConnectionsOnHcaHostsAndTheShippedExample) {
  const Scenario s = hca_scenario(0.8);
  EXPECT_TRUE(s.connections.enabled);
  EXPECT_EQ(s.endpoint_model, EndpointModel::hca);
  const Scenario example = load_scenario(ibvp::testing::source_path("configs/examples/connections_hca.yaml"));
  EXPECT_EQ(example.endpoint_model, EndpointModel::hca);
  EXPECT_TRUE(example.connections.enabled);
}

TEST(HcaCbrLoader, RefusesConnectionsWithFlowsOnHcaHostsNamingTheKey) {
  try {
    scenario_from_yaml(yaml("hca", 0.8) + "flows: [{src: h1, dst: h2}]\n", "cbr.yaml", {}, ".");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "connections") << e.what();
    EXPECT_NE(std::string(e.what()).find("separate scenarios"), std::string::npos) << e.what();
  }
}

TEST(HcaCbrLoader, RefusesHostMemoryBelowTheConnectionsQueues) {
  const uint64_t need = apps::CbrStreams::host_memory_bytes(hca_scenario(0.8));
  try {
    scenario_from_yaml(yaml("hca", 0.8) + "hca: {host_memory: {size_bytes: 8192}}\n", "cbr.yaml", {}, ".");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "hca.host_memory.size_bytes") << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(need)), std::string::npos) << e.what();
  }
}

TEST(HcaCbrLoader, RefusesATransmitBufferThatCannotHoldOneConnectionPacket) {
  try {
    // 1024-byte payloads need 1024 + 64 bytes of header room in a VL's transmit buffer.
    scenario_from_yaml(yaml("hca", 0.8) + "hca: {tx_vl_buffer_bytes: 1024}\n", "cbr.yaml", {}, ".");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "hca.tx_vl_buffer_bytes") << e.what();
    EXPECT_NE(std::string(e.what()).find("1088"), std::string::npos) << e.what();
  }
}

TEST(HcaCbr, EveryPacketCarriesWhatItsConnectionReservedToTheSwitches) {
  // Seed 003 Sec. 4.2: a connection's packets carry its reservation, which the switches'
  // rate schedulers (switch.scheduling) charge them at.
  const Scenario s = hca_scenario(0.5);
  Fabric f(s);
  struct Rates : sim::FabricObserver {
    const workload::CbrConnections* conns = nullptr;
    uint64_t seen = 0, wrong = 0;
    void on_inject(const ib::Packet& p, uint64_t) override {
      if (p.connection == ~uint32_t{0}) return;
      seen++;
      if (p.reserved_bps == 0 || p.reserved_bps != (*conns)[p.connection].reserved_bps) wrong++;
    }
  } rates;
  rates.conns = &f.connections()->connections();
  f.probe().attach(&rates);
  sc_core::sc_start(s.duration);
  EXPECT_EQ(f.cbr_streams()->error(), "");
  EXPECT_GT(rates.seen, 100u);
  EXPECT_EQ(rates.wrong, 0u);
}
