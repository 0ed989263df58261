// switch.model flit_wormhole: the fabric's switches as seed 003's flit routers, with
// endpoints on IBA cables at the flit link rate (models/flit/flit_fabric.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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

// switch.flit.vc_bits must hold the largest Vtick (seed 003 Sec. 3.1): a flit of a 20 Mb/s
// stream is 6,400 ns, which 16 bits hold; a frame's Vtick (nic_vtick frame) can be the whole
// frame period, 33.3 ms for a frame of one flit, which takes 25 bits.
TEST(FlitFabric, FiniteCountersTooSmallForTheLargestVtickAreRefused) {
  const std::string base =
      "duration: 1us\ntopology: {generator: single_switch, hosts: 2}\n"
      "flows: [{name: v, src: h1, dst: h2, generator: video, video_bit_rate: 20000000, payload_bytes: 592}]\n"
      "switch: {model: flit_wormhole, flit: {nic_scheduler: virtual_clock, vc_bits: ";
  EXPECT_EQ(scenario_from_yaml(base + "16}}\n", "t.yaml").switch_cfg.flit.vc_bits, 16u);
  try {
    scenario_from_yaml(base + "24, nic_vtick: frame}}\n", "t.yaml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "switch.flit.vc_bits");
    EXPECT_EQ(e.fix(), "give vc_bits: 25 or more, or 0 (unbounded)");
  }
  EXPECT_EQ(scenario_from_yaml(base + "25, nic_vtick: frame}}\n", "t.yaml").switch_cfg.flit.vc_bits, 25u);
}

// The bug of seed 003's first Fig. 4 runs (docs/seed003.md): under P every message of a
// frame took a VC of its own, an I frame took every VC of its source's channel and of its
// outputs, and VirtualClock, which stamps a stream's burst far ahead of its reserved rate,
// let those messages crawl while best effort waited for a VC. 4 hosts, each with 4 streams
// of 20 Mb/s whose I frames (about 263 KB each, 5.3 ms of link together) come at time 0, and
// best effort at 0.5 of the link, under its 1 Gb/s unreserved rate (0.625 of the link): with
// one VC per stream, VirtualClock keeps best effort ahead of the bursts, and its mean
// latency stays under 0.2 ms, a 25th of the burst (it was 2.5-2.9 ms).
TEST(FlitFabric, PreemptiveRouterKeepsBestEffortMovingThroughFrameBursts) {
  std::string yaml =
      "name: bursts\nseed: 3\nduration: 10ms\ntopology: {generator: single_switch, hosts: 4}\n"
      "switch:\n  data_vls: 2\n  model: flit_wormhole\n"
      "  flit: {variant: preemptive, class_vcs: [1, 3, 12], vl_classes: [2, 1]}\n"
      "endpoint: {data_vls: 2}\nflows:\n";
  for (int i = 1; i <= 4; ++i) {
    for (int k = 1; k <= 4; ++k) {
      int d = (i + k - 1) % 4 + 1;
      if (d == i) d = i % 4 + 1;
      yaml += "  - {name: v" + std::to_string(i) + "_" + std::to_string(k) + ", src: h" + std::to_string(i) +
              ", dst: h" + std::to_string(d) +
              ", generator: video, video_bit_rate: 20000000, payload_bytes: 592, sl: 1}\n";
    }
    yaml += "  - {name: be" + std::to_string(i) + ", src: h" + std::to_string(i) +
            ", pattern: uniform, generator: poisson, load: 0.5, payload_bytes: 592, sl: 0}\n";
  }
  const Scenario s = scenario_from_yaml(yaml, "bursts.yaml");
  RunOptions o;
  o.out_dir = temp_dir("bursts");
  const RunResult r = run_scenario(s, o);
  EXPECT_FALSE(r.deadlock);
  std::ifstream f(o.out_dir + "/summary.json");
  const nlohmann::json j = nlohmann::json::parse(f);
  int best_effort = 0;
  for (const auto& flow : j.at("flows")) {
    if (flow.at("name").get<std::string>().rfind("be", 0) != 0) continue;
    ++best_effort;
    EXPECT_LT(flow.at("latency_ns").at("mean").get<double>(), 200e3) << flow.at("name");
    EXPECT_GT(flow.at("delivered").get<double>(), 0.99 * flow.at("injected").get<double>()) << flow.at("name");
  }
  EXPECT_EQ(best_effort, 4);
  std::filesystem::remove_all(o.out_dir);
}

// Seed 003 Fig. 5(a): a control message's latency is queueing outside the router (at its
// source and the edge, before its header flit enters the router) plus network time (to its
// tail's delivery). Per phase, the two means add up to the mean latency, and the network
// part is at least the zero-load time of a 20-flit message through one router: 2 d + 4 +
// 20 - 1 = 25 cycles of 80 ns (d = 1), plus the last cable's 5 ns. Control is the highest
// class, so under P it hardly waits in the network; TR serves it with everything else.
TEST(FlitFabric, ControlLatencySplitsIntoQueueingAndNetworkTimeThatAddUpPerPhase) {
  std::string yaml =
      "name: split\nseed: 3\nduration: 60ms\ntopology: {generator: single_switch, hosts: 4}\n"
      "switch:\n  data_vls: 2\n  model: flit_wormhole\n"
      "  flit: {variant: preemptive, class_vcs: [1, 3, 12], vl_classes: [2, 1]}\n"
      "endpoint: {data_vls: 2}\ncontrol: {payload_bytes: 286, period: 1ms}\n"
      "mix: {total_load: 0.5, phases: [[30, 70], [70, 30]]}\nflows:\n";
  for (int i = 1; i <= 4; ++i) {
    for (int k = 1; k <= 30; ++k) {
      int d = (i + k - 1) % 4 + 1;
      if (d == i) d = i % 4 + 1;
      yaml += "  - {name: v" + std::to_string(i) + "_" + std::to_string(k) + ", src: h" + std::to_string(i) +
              ", dst: h" + std::to_string(d) + ", generator: video, video_bit_rate: 20000000, payload_bytes: 592, " +
              "sl: 1, start: " + std::to_string(k * 1000) + "us}\n";
    }
    yaml += "  - {name: be" + std::to_string(i) + ", src: h" + std::to_string(i) +
            ", pattern: uniform, generator: poisson, payload_bytes: 592, sl: 0}\n";
  }
  const Scenario s = scenario_from_yaml(yaml, "split.yaml");
  RunOptions o;
  o.out_dir = temp_dir("split");
  const RunResult r = run_scenario(s, o);
  EXPECT_FALSE(r.deadlock);
  std::ifstream f(o.out_dir + "/summary.json");
  const nlohmann::json j = nlohmann::json::parse(f);
  const auto& phases = j.at("mix").at("phases");
  ASSERT_EQ(phases.size(), 2u);
  const double zero_load_network_ns = 25 * 80 + 5;
  for (const auto& ph : phases) {
    for (const char* cls : {"control", "best_effort"}) {
      SCOPED_TRACE(cls);
      const auto& c = ph.at(cls);
      const double total = c.at("mean_latency_ns").get<double>();
      const double queueing = c.at("mean_queueing_ns").get<double>();
      const double network = c.at("mean_network_ns").get<double>();
      EXPECT_NEAR(queueing + network, total, 1e-6 * total);
      EXPECT_GT(queueing, 0.0);  // at least the header's way down its first cable
      EXPECT_GE(network, zero_load_network_ns);
    }
    // 4 senders, one control message each per ms, over the 30 ms of a phase.
    EXPECT_NEAR(ph.at("control").at("packets").get<double>(), 4 * 30, 4);
  }
  // The flit router's counts reach summary.json and flit_classes.csv.
  const auto& fr = j.at("flit_router");
  EXPECT_EQ(fr.at("variant"), "preemptive");
  EXPECT_EQ(fr.at("nic_multiplexing"), "flit");
  EXPECT_EQ(fr.at("nic_scheduler"), "priority");
  ASSERT_EQ(fr.at("classes").size(), 3u);
  uint64_t preempted = 0;
  for (const auto& c : fr.at("classes")) preempted += c.at("preempted").get<uint64_t>();
  EXPECT_EQ(preempted, fr.at("preemptions").get<uint64_t>());
  EXPECT_TRUE(std::filesystem::exists(o.out_dir + "/flit_classes.csv"));
  std::filesystem::remove_all(o.out_dir);
}
