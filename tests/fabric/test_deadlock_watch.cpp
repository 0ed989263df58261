// The deadlock watch (platform/builder/deadlock_watch): a credit cycle is reported even while
// other traffic moves; nothing is reported without one, whatever the timeout; deadlock_timeout
// has a floor at load; summary.json says which packets were stuck when the run ended.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <systemc>

#include "common/fabrics.h"
#include "common/testing.h"
#include "platform/builder/runner.h"
#include "platform/params/config_error.h"
#include "platform/scenario/deadlock_timeout.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_NS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

// Five switches in a ring, every host hk sending to h(k+2) (min-hop: two hops clockwise, a
// dependency cycle round the ring), and a bystander flow x -> y through s0 alone, whose
// ports are on no ring path.
Scenario ring_with_bystander(const std::string& routing) {
  Scenario s = tb::basic_scenario(tb::ring(5, true));
  s.routing = routing;
  for (int k = 0; k < 5; ++k)
    s.flows.push_back(tb::saturating_flow("f" + std::to_string(k), "h" + std::to_string(k),
                                          "h" + std::to_string((k + 2) % 5), 2048));
  s.flows.push_back(tb::saturating_flow("bystander", "x", "y", 2048));
  s.duration = sc_time(5, SC_MS);
  s.deadlock_timeout = sc_time(100, SC_US);
  return s;
}

std::string out_dir(const std::string& test) {
  return (std::filesystem::temp_directory_path() / ("ibvp-dlw-" + test + "-" + std::to_string(getpid()))).string();
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The number after `"key": ` at the first occurrence following `from` in a JSON text.
double json_number(const std::string& text, const std::string& key, size_t from = 0) {
  const size_t at = text.find("\"" + key + "\": ", from);
  EXPECT_NE(at, std::string::npos) << key;
  return at == std::string::npos ? -1 : std::stod(text.substr(at + key.size() + 4));
}

// A shipped scenario with --set overrides.
Scenario shipped(const std::string& config, std::vector<std::string> overrides) {
  return load_scenario(ibvp::testing::source_path(config), overrides);
}

uint64_t floor_ns(const Scenario& s) { return (deadlock_timeout_floor_ps(s) + 999) / 1000; }

void expect_refused(const std::string& config, const std::string& timeout) {
  try {
    shipped(config, {"deadlock_timeout=" + timeout});
    FAIL() << config << " accepted deadlock_timeout " << timeout;
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("deadlock_timeout"), std::string::npos) << m;
    EXPECT_NE(m.find("at least"), std::string::npos) << m;  // the fix names the floor
  }
}

}  // namespace

TEST(DeadlockWatch, PartialDeadlockIsReportedWhileAnUnrelatedFlowKeepsMoving) {
  const std::string dir = out_dir("partial");
  RunOptions o;
  o.out_dir = dir;
  try {
    run_scenario(ring_with_bystander("minhop"), o);
    FAIL() << "the ring's deadlock was not reported";
  } catch (const DeadlockError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("deadlock detected at"), std::string::npos) << m;
    // The cycle: the five clockwise ring outputs, on VL 0.
    for (int k = 0; k < 5; ++k) EXPECT_NE(m.find("s" + std::to_string(k) + "/1 VL0"), std::string::npos) << m;
    // The bystander's ports are in no cycle.
    EXPECT_EQ(m.find("s0/5"), std::string::npos) << m;
  }
  // The bystander moved all along: by the time of the report (at least one timeout in), it
  // had delivered most of what its 4X SDR link carries, about one 2082-byte packet per 2.1 us.
  const std::string summary = slurp(dir + "/summary.json");
  const size_t by = summary.find("\"name\": \"bystander\"");
  ASSERT_NE(by, std::string::npos) << summary;
  const double sim_s = json_number(summary, "sim_seconds");
  EXPECT_GT(json_number(summary, "delivered", by), 0.9 * sim_s / 2.09e-6) << summary;
  EXPECT_GE(sim_s, 100e-6);
  std::filesystem::remove_all(dir);
}

TEST(DeadlockWatch, DeadlockOnOneVlIsReportedWhileAnotherVlMovesThroughTheSamePorts) {
  // Two data VLs. The ring flows deadlock on VL 0; a flow h0 -> h1 on SL 1 (VL 1) crosses
  // s0/1, an output of the cycle, and keeps it transmitting: progress is judged per VL.
  Scenario s = tb::basic_scenario(tb::ring(5));
  for (auto* vls : {&s.switch_cfg.data_vls, &s.endpoint_cfg.data_vls}) *vls = 2;
  s.switch_cfg.sl2vl = s.endpoint_cfg.sl2vl = sw::SwitchConfig::default_sl2vl(2);
  s.switch_cfg.vlarb = s.endpoint_cfg.vlarb = link::VlArbConfig::round_robin(2);
  for (int k = 0; k < 5; ++k)
    s.flows.push_back(tb::saturating_flow("f" + std::to_string(k), "h" + std::to_string(k),
                                          "h" + std::to_string((k + 2) % 5), 2048));
  s.flows.push_back(tb::saturating_flow("other_vl", "h0", "h1", 2048, 1));
  s.duration = sc_time(5, SC_MS);
  s.deadlock_timeout = sc_time(100, SC_US);
  try {
    run_scenario(s, RunOptions{});
    FAIL() << "the ring's deadlock on VL 0 was not reported";
  } catch (const DeadlockError& e) {
    const std::string m = e.what();
    for (int k = 0; k < 5; ++k) EXPECT_NE(m.find("s" + std::to_string(k) + "/1 VL0"), std::string::npos) << m;
    EXPECT_EQ(m.find("VL1"), std::string::npos) << m;
  }
}

TEST(DeadlockWatch, SameRingRoutedUpDownRunsToTheEndWithoutDeadlock) {
  const Scenario s = ring_with_bystander("updn");
  const RunResult r = run_scenario(s, RunOptions{});
  EXPECT_FALSE(r.deadlock) << r.deadlock_report;
  EXPECT_DOUBLE_EQ(r.sim_seconds, 5e-3);
  EXPECT_GT(r.delivered, 5000u);
  EXPECT_EQ(r.injected, r.delivered + r.dropped + r.in_flight);
}

TEST(DeadlockTimeout, FloorIsTwiceTheLargestPacketOnTheSlowestLink) {
  // minimal: 2048-byte payloads, 2082 bytes on 4X QDR (32 Gb/s): 520.5 ns a packet.
  EXPECT_EQ(deadlock_timeout_floor_ps(shipped("configs/examples/minimal.yaml", {})), 2 * 520500u);
  // fig2a: the same packets on 4X SDR (8 Gb/s): 2082 ns.
  EXPECT_EQ(deadlock_timeout_floor_ps(shipped("configs/seed004/fig2a.yaml", {})), 2 * 2082000u);
}

TEST(DeadlockTimeout, AboutOnePacketTimeIsRefusedAtLoadNamingTheKeyAndTheFloor) {
  expect_refused("configs/examples/minimal.yaml", "100ns");
  expect_refused("configs/examples/minimal.yaml", "1040ns");  // just below 2 x 520.5 ns
  expect_refused("configs/seed004/fig2a.yaml", "1us");
  EXPECT_NO_THROW(shipped("configs/examples/minimal.yaml", {"deadlock_timeout=1041ns"}));
  EXPECT_NO_THROW(shipped("configs/seed004/fig2a.yaml", {"deadlock_timeout=4164ns"}));
}

TEST(DeadlockTimeout, MinimalExampleAtTheFloorRunsToTheEnd) {
  Scenario s = shipped("configs/examples/minimal.yaml", {});
  s.deadlock_timeout = sc_time(static_cast<double>(floor_ns(s)), SC_NS);
  const RunResult r = run_scenario(s, RunOptions{});
  EXPECT_FALSE(r.deadlock) << r.deadlock_report;
  EXPECT_DOUBLE_EQ(r.sim_seconds, 2e-3);
}

TEST(DeadlockTimeout, CongestedFig2aAtTheFloorRunsToTheEnd) {
  // Seed 004 Fig. 2(a) without congestion control: six flows into one port fill the buffers
  // back to the sources and outputs wait for credits for many packet times, but in a tree.
  Scenario s = shipped("configs/seed004/fig2a.yaml", {"duration=3ms", "flows[6].start=1ms", "flows[6].stop=2ms"});
  s.deadlock_timeout = sc_time(static_cast<double>(floor_ns(s)), SC_NS);
  const RunResult r = run_scenario(s, RunOptions{});
  EXPECT_FALSE(r.deadlock) << r.deadlock_report;
  EXPECT_DOUBLE_EQ(r.sim_seconds, 3e-3);
}

TEST(DeadlockWatch, NoCycleNoDeadlockEvenWithATimeoutFarBelowOnePacket) {
  // Past the loader's floor (a Scenario built in code): the watch looks every 100 ns at a
  // congested fabric whose outputs are blocked for credits most of the time, and still finds
  // nothing, because nothing there waits in a cycle.
  Scenario s = shipped("configs/seed004/fig2a.yaml", {"duration=2ms", "flows[6].start=1ms", "flows[6].stop=2ms"});
  s.deadlock_timeout = sc_time(100, SC_NS);
  const RunResult r = run_scenario(s, RunOptions{});
  EXPECT_FALSE(r.deadlock) << r.deadlock_report;
  EXPECT_DOUBLE_EQ(r.sim_seconds, 2e-3);
}

TEST(StuckReport, DeadlockedRunListsTheStuckPacketsInSummaryJson) {
  const std::string dir = out_dir("stuck");
  RunOptions o;
  o.out_dir = dir;
  Scenario s = ring_with_bystander("minhop");
  EXPECT_THROW(run_scenario(s, o), DeadlockError);
  const std::string summary = slurp(dir + "/summary.json");
  const size_t at = summary.find("\"stuck\": {");
  ASSERT_NE(at, std::string::npos) << summary;
  // Five ring outputs, each holding a buffer's worth (4 packets) waiting for the next.
  EXPECT_GE(json_number(summary, "packets", at), 5 * 4) << summary;
  EXPECT_GE(json_number(summary, "outputs", at), 5) << summary;
  EXPECT_GE(json_number(summary, "longest_wait_ns", at), 100e3) << summary;  // at least the timeout
  EXPECT_NE(summary.find("\"port\": \"s", at), std::string::npos) << summary;
  std::filesystem::remove_all(dir);
}

TEST(StuckReport, HealthyRunHasNoStuckPackets) {
  const std::string dir = out_dir("healthy");
  RunOptions o;
  o.out_dir = dir;
  const RunResult r = run_scenario(shipped("configs/examples/minimal.yaml", {}), o);
  EXPECT_FALSE(r.stuck.has_value());
  EXPECT_NE(slurp(dir + "/summary.json").find("\"stuck\": null"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(DeadlockWatch, CycleBehindHeadsPassedBypassLimitTimesIsReported) {
  // Seed 000's Fig. 7 fabric with 64 KiB buffers at 40 % load: video bursts deadlock VL1 on
  // min-hop routes while best effort keeps VL0 (and so the inputs) busy. Younger requests
  // with credits sit behind heads that have been passed bypass_limit times and may not
  // pass again; the watch once took such outputs for movable and let the run end with the
  // packets stuck (docs/seed000.md). The routes are the ones min-hop gave this fabric when
  // the bug was found (tests/data/seed000/README.md): with them the run reaches that state.
  const Scenario s = shipped(
      "configs/seed000/fig7.yaml",
      {"mix.total_load=0.4", "switch.vl_buffer_bytes=65536", "endpoint.vl_buffer_bytes=65536", "duration=60ms",
       "routing=file",
       "routing_options.lfts_file=" + ibvp::testing::source_path("tests/data/seed000/fig7-minhop-ltr-lfts.dump")});
  ASSERT_EQ(s.switch_cfg.request_order, sw::RequestOrder::fifo_bypass);
  try {
    run_scenario(s, RunOptions{});
    FAIL() << "the VL1 deadlock was not reported";
  } catch (const DeadlockError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("VL1 ->"), std::string::npos) << m;
    EXPECT_EQ(m.find("VL0"), std::string::npos) << m;
  }
}
