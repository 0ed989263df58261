// Seed 002's results on small fabrics (issue 11): Table 2's traffic metrics against values
// worked out by hand, and CBR connections' packets judged through the fabric and written
// as the tables connections and service_levels. The connection manager and its sources
// come from another module; here a test-only source sends one connection's packets.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <fstream>
#include <sstream>
#include <string>
#include <systemc>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/fabrics.h"
#include "models/endpoint/traffic_source.h"
#include "models/link/link_rate.h"
#include "platform/builder/fabric.h"
#include "platform/builder/runner.h"
#include "platform/metrics/report.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

// One CBR connection's packets, one every interval from start until end (test only; the
// real sources belong to the connection manager's module).
class TestCbrSource : public ep::TrafficSource {
 public:
  TestCbrSource(uint32_t connection, const workload::CbrConnection& c, uint16_t dlid) : c_(c), index_(connection), dlid_(dlid) {
    flow = ib::kNoFlow;
    sl = c.sl;
    payload_bytes = c.payload_bytes;
    next_ps_ = c.start_ps;
  }
  uint64_t next_ready_ps(uint64_t) override { return next_ps_ < c_.end_ps ? next_ps_ : kNever; }
  void take(uint64_t, ep::PacketSpec& out) override {
    out.dst_node = c_.dst_node;
    out.dlid = dlid_;
    out.created_ps = next_ps_;
    out.connection = index_;
    next_ps_ += c_.interval_ps;
  }

 private:
  workload::CbrConnection c_;
  uint32_t index_;
  uint16_t dlid_;
  uint64_t next_ps_ = 0;
};

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("ibvp-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace

TEST(Table2Traffic, OneConstantFlowOnOneSwitchGivesHalfItsLoadPerNodeAndPerSwitchPort) {
  // h1 -> h2 at load L of its link, over 1 ms after a 0.5 ms warm-up. Per node (2 hosts):
  // injected L/2 bytes per cycle (h1 sends L, h2 nothing), delivered L/2 (h2 receives L);
  // host interfaces busy L and 0, mean L/2; the switch's two cabled ports busy L (to h2)
  // and 0, mean L/2. A transmission counts where it starts: one 282-byte packet more or
  // less at each end of the span per port, 0.1 % of the link over 1 ms.
  const double L = 0.4;
  Scenario s = tb::basic_scenario(tb::star(2));
  FlowConfig f = tb::saturating_flow("f", "h1", "h2", 256);
  f.generator = GeneratorKind::constant;
  f.load = L;
  s.flows.push_back(f);
  s.warmup = sc_time(0.5, SC_MS);
  s.duration = sc_time(1.5, SC_MS);
  const RunResult r = run_scenario(s, RunOptions{});
  EXPECT_EQ(r.stopped_by, "duration");
  const metrics::TrafficSummary& t = r.traffic;
  EXPECT_DOUBLE_EQ(t.span_s, 1e-3);
  EXPECT_EQ(t.hosts, 2u);
  EXPECT_EQ(t.switch_ports, 2u);
  EXPECT_NEAR(t.injected_bytes_per_cycle_per_node, L / 2, 0.002);
  EXPECT_NEAR(t.delivered_bytes_per_cycle_per_node, L / 2, 0.002);
  EXPECT_NEAR(t.host_utilization, L / 2, 0.002);
  EXPECT_NEAR(t.switch_port_utilization, L / 2, 0.002);
  // The bytes of 1 ms at L of the link's data rate.
  const double rate_Bps = link::LinkRate(s.topology.links[0].cfg).data_bits_per_s() / 8.0;
  EXPECT_NEAR(static_cast<double>(t.injected_bytes), L * rate_Bps * 1e-3, 2 * 282);
  EXPECT_NEAR(static_cast<double>(t.delivered_bytes), static_cast<double>(t.injected_bytes), 2 * 282);
}

TEST(ConnectionResults, AConnectionsPacketsAreJudgedThroughTheFabricAndWrittenAsTables) {
  // One connection h1 -> h2 on SL 0 every 10 us; on an idle fabric every packet arrives a
  // few us after its creation, so within D = 100 us, and exactly one nominal IAT apart.
  Scenario s = tb::basic_scenario(tb::star(2));
  s.warmup = sc_time(100, SC_US);
  s.duration = sc_time(1, SC_MS);
  // The connection list and the source are declared before the Fabric so they outlive it:
  // ~Fabric runs the kernel once more to unwind its threads, and the endpoint may still pull
  // from its sources then (UBSan caught a destroyed source being called).
  const topo::Topology& topo = s.topology;
  workload::CbrConnections conns(1);
  workload::CbrConnection& c = conns[0];
  c.src_node = topo.find("h1");
  c.dst_node = topo.find("h2");
  c.sl = 0;
  c.hops = 2;
  c.payload_bytes = 256;
  c.bandwidth_bps = 256 * 8 * 100'000;  // one 256-byte payload per 10 us
  c.interval_ps = 10'000'000;
  c.deadline_ps = 100'000'000;
  c.start_ps = 0;
  TestCbrSource src(0, c, topo.nodes[c.dst_node].lid);
  Fabric fab(s);
  fab.recorder().track_connections(conns);
  fab.endpoint_at(c.src_node)->add_source(&src);
  sc_core::sc_start(s.duration);
  fab.finish();

  const metrics::ConnectionMetrics* m = fab.recorder().connection_metrics();
  ASSERT_NE(m, nullptr);
  // Created at 100, 110, ..., 990 us (90 packets at or after the warm-up), all delivered.
  EXPECT_EQ(m->state(0).delivered, 90u);
  EXPECT_EQ(m->late(0), 0u);
  EXPECT_GT(m->state(0).delay_max_ps, 0u);
  EXPECT_EQ(m->iat_count(0, 4), 89u);  // the central interval [0.95, 1.05)

  RunResult r;
  r.sim_seconds = 1e-3;
  const std::filesystem::path dir = fresh_dir("conn-results");
  metrics::write_results(fab, r, dir.string());
  for (const char* f : {"connections.csv", "connections.parquet", "service_levels.csv", "service_levels.parquet"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  const std::string csv = read_text(dir / "connections.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "connection,src,dst,sl,hops,distance,payload_bytes,bandwidth_bps,reserved_bps,interval_ns,deadline_ns,"
            "delivered,within_0.01D,within_0.02D,within_0.05D,within_0.1D,within_0.2D,within_0.5D,within_1D,late,"
            "iat_lt_0.5,iat_0.5_0.75,iat_0.75_0.9,iat_0.9_0.95,iat_0.95_1.05,iat_1.05_1.1,iat_1.1_1.25,iat_1.25_1.5,"
            "iat_ge_1.5,delay_mean_ns,delay_max_ns");
  EXPECT_NE(csv.find("\n0,h1,h2,0,2,0,256,"), std::string::npos) << csv;
  const nlohmann::json js = nlohmann::json::parse(read_text(dir / "summary.json"));
  EXPECT_EQ(js["stopped_by"], "duration");
  EXPECT_EQ(js["connections"]["connections"], 1);
  EXPECT_EQ(js["connections"]["packets"], 90);
  EXPECT_EQ(js["connections"]["all_met_deadline"], true);
  EXPECT_EQ(js["connections"]["service_levels"][0]["within"]["1D"], 1.0);
  EXPECT_EQ(js["connections"]["service_levels"][0]["best_worst"]["best"], 0);
  EXPECT_TRUE(js.contains("traffic"));
  std::filesystem::remove_all(dir);
}

TEST(ConnectionResults, ARunWithoutConnectionsWritesNoConnectionTables) {
  Scenario s = tb::basic_scenario(tb::star(2));
  s.flows.push_back(tb::saturating_flow("f", "h1", "h2", 256));
  s.duration = sc_time(50, SC_US);
  const std::filesystem::path dir = fresh_dir("no-conn");
  RunOptions o;
  o.out_dir = dir.string();
  run_scenario(s, o);
  EXPECT_FALSE(std::filesystem::exists(dir / "connections.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir / "service_levels.csv"));
  const nlohmann::json js = nlohmann::json::parse(read_text(dir / "summary.json"));
  EXPECT_TRUE(js["connections"].is_null());
  EXPECT_EQ(js["stopped_by"], "duration");
  // A saturating flow: h1's interface is busy the whole run, h2's never.
  EXPECT_NEAR(js["traffic"]["host_utilization"].get<double>(), 0.5, 0.01);
  std::filesystem::remove_all(dir);
}

namespace {

// Two connections into h3 on a star of three hosts: c0 from h1 every 10 us, c1 from h2
// every 40 us (the smaller bandwidth); the runner's slices end every 50 us.
struct StopRuleRun {
  Scenario s = tb::basic_scenario(tb::star(3));
  workload::CbrConnections conns = workload::CbrConnections(2);
  std::vector<std::unique_ptr<TestCbrSource>> sources;

  explicit StopRuleRun(uint64_t n, uint64_t c1_end_ps = ~uint64_t{0}) {
    s.warmup = sc_time(100, SC_US);
    s.duration = sc_time(10, SC_MS);
    s.deadlock_timeout = sc_time(50, SC_US);
    s.connections.stop_after_packets = n;
    const topo::Topology& t = s.topology;
    for (uint32_t k = 0; k < 2; ++k) {
      workload::CbrConnection& c = conns[k];
      c.src_node = t.find(k == 0 ? "h1" : "h2");
      c.dst_node = t.find("h3");
      c.payload_bytes = 256;
      c.interval_ps = k == 0 ? 10'000'000 : 40'000'000;
      c.deadline_ps = 100'000'000;
    }
    conns[1].end_ps = c1_end_ps;
  }
  RunResult run(const std::string& out_dir = "") {
    RunOptions o;
    o.out_dir = out_dir;
    o.on_elaborated = [this](Fabric& f) {
      metrics::ConnectionMetricsConfig cfg;
      cfg.stop_after_packets = s.connections.stop_after_packets;
      f.recorder().track_connections(conns, cfg);
      for (uint32_t k = 0; k < conns.size(); ++k) {
        sources.push_back(std::make_unique<TestCbrSource>(k, conns[k], s.topology.nodes[conns[k].dst_node].lid));
        f.endpoint_at(conns[k].src_node)->add_source(sources.back().get());
      }
    };
    return run_scenario(s, o);
  }
};

}  // namespace

TEST(StopRule, TheRunEndsAtTheFirstSliceAfterTheSlowestConnectionDeliveredNPackets) {
  // c1's 20th packet after the warm-up is created at 100 + 19 x 40 = 860 us and delivered
  // a few us later; the next slice ends at 900 us.
  StopRuleRun r(20);
  const std::filesystem::path dir = fresh_dir("stop-rule");
  const RunResult res = r.run(dir.string());
  EXPECT_EQ(res.stopped_by, "connections");
  EXPECT_DOUBLE_EQ(res.sim_seconds, 900e-6);
  const nlohmann::json js = nlohmann::json::parse(read_text(dir / "summary.json"));
  EXPECT_EQ(js["stopped_by"], "connections");
  EXPECT_EQ(js["connections"]["packets"], 20 + 80);  // c0: created at 100, 110, ..., 890 us
  std::filesystem::remove_all(dir);
}

TEST(StopRule, AConnectionWhoseEndHasPassedNoLongerHoldsTheRun) {
  // c1 stops sending at 300 us with 5 packets counted; c0 has its 20th (created at 290 us)
  // by then, so the run ends at the 300 us slice.
  StopRuleRun r(20, 300'000'000);
  const RunResult res = r.run();
  EXPECT_EQ(res.stopped_by, "connections");
  EXPECT_DOUBLE_EQ(res.sim_seconds, 300e-6);
}

TEST(StopRule, DurationStaysTheUpperBound) {
  StopRuleRun r(1000);  // c1 would need 40 ms
  r.s.duration = sc_time(2, SC_MS);
  const RunResult res = r.run();
  EXPECT_EQ(res.stopped_by, "duration");
  EXPECT_DOUBLE_EQ(res.sim_seconds, 2e-3);
}
