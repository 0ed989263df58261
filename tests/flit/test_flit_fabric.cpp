// switch.model flit_wormhole: the fabric's switches as seed 003's flit routers, with
// endpoints on IBA cables at the flit link rate (models/flit/flit_fabric.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <systemc>

#include "common/fabrics.h"
#include "platform/builder/runner.h"
#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;
using sc_core::sc_time;
using sc_core::SC_US;

namespace {

Scenario flit_scenario(topo::Topology t, flit::Variant v) {
  Scenario s = tb::basic_scenario(std::move(t));
  s.switch_cfg.model = sw::SwitchModel::flit_wormhole;
  s.switch_cfg.flit.variant = v;
  s.switch_cfg.flit.vcs_per_channel = 4;
  s.switch_cfg.flit.class_vcs = {1, 1, 2};
  return s;
}

// packets.csv's done_ns column of every packet, in id order.
std::vector<double> done_ns(const std::string& dir) {
  std::ifstream f(dir + "/packets.csv");
  std::string line;
  std::getline(f, line);
  std::vector<double> out;
  while (std::getline(f, line)) {
    std::stringstream ss(line);
    std::string cell;
    for (int c = 0; c <= 12; ++c) std::getline(ss, cell, ',');  // done_ns is column 12
    out.push_back(std::stod(cell));
  }
  return out;
}

std::string temp_dir(const std::string& tag) {
  return std::filesystem::temp_directory_path() / ("ibvp-flit-" + tag + "-" + std::to_string(getpid()));
}

}  // namespace

TEST(FlitFabric, OnePacketArrivesAtItsZeroLoadFlitTime) {
  // A 592-byte UD payload is 626 wire bytes, 40 flits of 128 bits; 80 ns per flit at 1.6 Gb/s.
  // Its header reaches the router's edge 5 ns after it is sent (1 m of cable), the flit cycle
  // after that (cycle 1); the tail flit reaches the far edge 2d + 4 + n - 1 = 45 cycles later
  // (router_test's zero-load formula, d = 1), and the packet crosses 1 m more: 46 x 80 + 5 ns.
  Scenario s = flit_scenario(tb::star(2), flit::Variant::preemptive);
  s.trace.packets.push_back({0, s.topology.find("h1"), s.topology.find("h2"), 592, 0});
  s.outputs.packets_csv = true;
  s.duration = sc_time(20, SC_US);
  RunOptions o;
  o.out_dir = temp_dir("zero");
  const RunResult r = run_scenario(s, o);
  EXPECT_EQ(r.delivered, 1u);
  const std::vector<double> done = done_ns(o.out_dir);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_DOUBLE_EQ(done[0], 46 * 80 + 5);
  std::filesystem::remove_all(o.out_dir);
}

TEST(FlitFabric, EveryPacketThroughAChainOfRoutersIsDeliveredAndNoneStaysHeld) {
  Scenario s = flit_scenario(tb::chain(3), flit::Variant::preemptive);
  s.traffic.enabled = true;
  s.traffic.generator = GeneratorKind::poisson;
  s.traffic.load = 0.4;
  s.traffic.payload_bytes = 592;
  s.traffic.stop = sc_time(200, SC_US);
  s.duration = sc_time(400, SC_US);
  const RunResult r = run_scenario(s, RunOptions{});
  EXPECT_GT(r.injected, 50u);
  EXPECT_EQ(r.delivered, r.injected);
  EXPECT_EQ(r.in_flight, 0u);
  EXPECT_FALSE(r.deadlock);
}

// Five routers in a ring with one VC and min-hop routes: every host sends to the host two
// routers clockwise, and the wormholes close a cycle of held VCs (Dally and Seitz).
TEST(FlitFabric, RingWithOneVcDeadlocksAndTheWatchReportsTheFlitsHeld) {
  Scenario s = flit_scenario(tb::ring(5), flit::Variant::traditional);
  s.switch_cfg.flit.vcs_per_channel = 1;
  s.switch_cfg.flit.class_vcs = {1};
  s.switch_cfg.flit.vl_classes = {0};
  for (int k = 0; k < 5; ++k)
    s.flows.push_back(tb::saturating_flow("f" + std::to_string(k), "h" + std::to_string(k),
                                          "h" + std::to_string((k + 2) % 5), 2048));
  s.duration = sc_time(2000, SC_US);
  s.deadlock_timeout = sc_time(100, SC_US);
  try {
    run_scenario(s, RunOptions{});
    FAIL() << "the ring did not deadlock";
  } catch (const DeadlockError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("flit routers have moved no flit"), std::string::npos) << m;
    EXPECT_NE(m.find("VC0"), std::string::npos) << m;
  }
}

TEST(FlitFabric, IbaSwitchFeaturesTheFlitRouterLacksAreRefusedNamingTheKey) {
  Scenario s = flit_scenario(tb::star(2), flit::Variant::preemptive);
  s.switch_cfg.scheduling = sw::Scheduling::virtual_clock;
  try {
    run_scenario(s, RunOptions{});
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "switch.scheduling");
    EXPECT_NE(e.fix().find("switch.model: iba"), std::string::npos);
  }
}

TEST(FlitFabric, FlitBlockWithoutTheFlitModelIsRefused) {
  const std::string yaml =
      "duration: 1us\ntopology: {generator: single_switch, hosts: 2}\n"
      "switch: {flit: {variant: traditional}}\n";
  try {
    scenario_from_yaml(yaml, "t.yaml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "switch.flit");
    EXPECT_NE(e.fix().find("model: flit_wormhole"), std::string::npos);
  }
  const std::string bad = "duration: 1us\ntopology: {generator: single_switch, hosts: 2}\n"
                          "switch: {model: flit_wormhole, flit: {vcs_per_channel: 4, class_vcs: [2, 2, 2]}}\n";
  try {
    scenario_from_yaml(bad, "t.yaml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "switch.flit");
    EXPECT_NE(e.problem().find("class_vcs gives 6 VCs"), std::string::npos) << e.problem();
  }
}
