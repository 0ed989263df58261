// Scenario documents in, a Scenario or a ConfigError out (platform/scenario/scenario_loader.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/testing.h"
#include "models/switch/switch.h"
#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"
#include "platform/sm/routing.h"
#include "platform/topology/generators.h"
#include "platform/topology/ibnetdiscover.h"

namespace ibvp {
namespace {

using sc_core::sc_time;
using sc_core::SC_MS;
using sc_core::SC_NS;
using sc_core::SC_US;

// A valid scenario; tests append sections. Line numbers: name 1, duration 2, topology 3,
// flows 4, the flow 5.
const std::string kBase =
    "name: t\n"
    "duration: 1ms\n"
    "topology: {generator: single_switch, hosts: 4}\n"
    "flows:\n"
    "  - {name: f1, src: h1, dst: h2}\n";

Scenario load(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return scenario_from_yaml(yaml, "test.yaml", overrides);
}

ConfigError error_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  try {
    load(yaml, overrides);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << yaml;
  return ConfigError("", "", 0, "", "");
}

TEST(ScenarioLoader, ExampleMinimalLoadsWithItsValues) {
  const Scenario s = load_scenario(testing::source_path("configs/examples/minimal.yaml"));
  EXPECT_EQ(s.name, "minimal");
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.duration, sc_time(2, SC_MS));
  EXPECT_EQ(s.warmup, sc_time(100, SC_US));
  EXPECT_EQ(s.topology.endpoints().size(), 4u);
  EXPECT_EQ(s.topology.switches().size(), 1u);
  for (const topo::Link& l : s.topology.links) {
    EXPECT_EQ(l.cfg.speed, link::Speed::qdr);
    EXPECT_EQ(l.cfg.width, link::Width::x4);
  }
  EXPECT_EQ(s.switch_cfg.pipeline_delay, sc_time(40, SC_NS));
  EXPECT_EQ(s.switch_cfg.crossbar, sw::Crossbar::non_multiplexed);
  EXPECT_EQ(s.switch_cfg.request_order, sw::RequestOrder::fifo);
  ASSERT_EQ(s.flows.size(), 2u);
  EXPECT_EQ(s.flows[0].name, "f1");
  EXPECT_EQ(s.flows[0].generator, GeneratorKind::constant);
  EXPECT_DOUBLE_EQ(s.flows[0].load, 0.5);
  EXPECT_EQ(s.flows[0].payload_bytes, 1024u);
  EXPECT_EQ(s.flows[1].generator, GeneratorKind::saturating);
  EXPECT_EQ(s.flows[1].stop, sc_time(1, SC_MS));
  EXPECT_FALSE(s.outputs.packets_csv);
  EXPECT_EQ(s.outputs.rate_ports, std::vector<std::string>{"sw/3"});
  EXPECT_FALSE(s.traffic.enabled);
  EXPECT_NE(s.source.find("minimal.yaml"), std::string::npos);
}

TEST(ScenarioLoader, KeysLeftOutTakeTheDeclaredDefaults) {
  const Scenario s = load(kBase);
  const Scenario d;
  EXPECT_EQ(s.seed, d.seed);
  EXPECT_EQ(s.routing, "minhop");
  EXPECT_EQ(s.warmup, d.warmup);
  EXPECT_EQ(s.deadlock_timeout, d.deadlock_timeout);
  EXPECT_EQ(s.switch_cfg.pipeline_delay, d.switch_cfg.pipeline_delay);
  EXPECT_EQ(s.switch_cfg.vl_buffer_bytes, d.switch_cfg.vl_buffer_bytes);
  EXPECT_EQ(s.switch_cfg.crossbar, d.switch_cfg.crossbar);
  EXPECT_EQ(s.switch_cfg.request_order, d.switch_cfg.request_order);
  EXPECT_EQ(s.endpoint_cfg.vl_buffer_bytes, d.endpoint_cfg.vl_buffer_bytes);
  const FlowConfig& f = s.flows[0];
  EXPECT_EQ(f.generator, GeneratorKind::saturating);
  EXPECT_EQ(f.pattern, DestinationPattern::fixed);
  EXPECT_EQ(f.payload_bytes, 2048u);
  EXPECT_EQ(f.stop, sc_core::sc_max_time());
  EXPECT_TRUE(s.outputs.packets_csv);
  EXPECT_EQ(s.outputs.rate_window, d.outputs.rate_window);
  // Single-switch links are the generator's default cable.
  EXPECT_EQ(s.topology.links[0].cfg.width, link::Width::x4);
  EXPECT_EQ(s.topology.links[0].cfg.speed, link::Speed::sdr);
}

TEST(ScenarioLoader, DependentDefaultsFollowDataVlsOnSwitchAndEndpoint) {
  const Scenario s = load(kBase + "switch: {data_vls: 4}\nendpoint: {data_vls: 4}\n");
  EXPECT_EQ(s.switch_cfg.vlarb.low.size(), 4u);
  EXPECT_EQ(s.switch_cfg.sl2vl, sw::SwitchConfig::default_sl2vl(4));
  EXPECT_EQ(s.endpoint_cfg.vlarb.low.size(), 4u);
  EXPECT_EQ(s.endpoint_cfg.sl2vl, sw::SwitchConfig::default_sl2vl(4));
  EXPECT_EQ(s.endpoint_cfg.sl2vl[5], 1);
}

TEST(ScenarioLoader, UnnamedFlowsAndCapturesGetNamesFromTheirPlace) {
  const Scenario s = load(
      "duration: 1ms\n"
      "topology: {generator: single_switch, hosts: 2}\n"
      "flows: [{src: h1, dst: h2}]\n"
      "outputs: {pcaps: [{node: h1, link_type: infiniband}]}\n");
  EXPECT_EQ(s.name, "test");  // from test.yaml
  EXPECT_EQ(s.flows[0].name, "flow0");
  EXPECT_EQ(s.outputs.pcaps[0].file, "h1-1.pcap");
  EXPECT_FALSE(s.outputs.pcaps[0].upper_pdu);
}

TEST(ScenarioLoader, TwoSwitchGeneratorAppliesTheLinkSettingsToEveryCable) {
  const Scenario s = load(
      "duration: 1ms\n"
      "topology:\n"
      "  generator: two_switch\n"
      "  local: 5\n"
      "  remote: 1\n"
      "  link: {width: 4X, speed: DDR, length_m: 2, propagation_ns_per_m: 5}\n"
      "flows: [{name: L1, src: B_L1, dst: B_C}]\n");
  EXPECT_NE(s.topology.find("B_L5"), topo::Topology::npos);
  EXPECT_NE(s.topology.find("A_R1"), topo::Topology::npos);
  for (const topo::Link& l : s.topology.links) {
    EXPECT_EQ(l.cfg.speed, link::Speed::ddr);
    EXPECT_DOUBLE_EQ(l.cfg.length_m, 2.0);
  }
}

TEST(ScenarioLoader, RandomIrregularTakesTheScenarioSeedUnlessGiven) {
  const std::string base =
      "duration: 1ms\nseed: 5\ntopology: {generator: random_irregular, switches: 8}\n"
      "traffic: {load: 0.1}\n";
  const Scenario a = load(base);
  const Scenario b = load(base, {"topology.seed=5"});
  ASSERT_EQ(a.topology.links.size(), b.topology.links.size());
  for (size_t i = 0; i < a.topology.links.size(); ++i) EXPECT_TRUE(a.topology.links[i].a == b.topology.links[i].a);
  EXPECT_TRUE(a.traffic.enabled);
  EXPECT_EQ(a.topology.links[0].cfg.width, link::Width::x1);  // seed 001's cable unless link is given
}

TEST(ScenarioLoader, RandomIrregularCyclesSetsTheCableCount) {
  // seed 000 Sec. 5.1: 15 five-port switches, one host each, nine independent cycles.
  const std::string yaml =
      "duration: 1ms\nseed: 5\ntopology: {generator: random_irregular, switches: 15, switch_ports: 4, "
      "host_ports: 1, cycles: 9}\ntraffic: {load: 0.1}\n";
  const Scenario s = load(yaml);
  size_t switch_cables = 0;
  for (const auto& l : s.topology.links)
    switch_cables += s.topology.nodes[l.a.node].kind == topo::NodeKind::switch_node &&
                     s.topology.nodes[l.b.node].kind == topo::NodeKind::switch_node;
  EXPECT_EQ(switch_cables, 15u - 1 + 9);
  const ConfigError e = error_of(yaml, {"topology.cycles=17"});
  EXPECT_EQ(e.key(), "topology.cycles");
  EXPECT_NE(e.fix().find("at most 16 cycles"), std::string::npos) << e.fix();
  EXPECT_EQ(error_of(yaml, {"topology.generator=mesh", "topology.x=2", "topology.y=2"}).key(), "topology.cycles");
}

TEST(ScenarioLoader, TopologyFileIsRelativeToTheScenarioFile) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ibvp_scn_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "topo");
  std::ofstream(dir / "topo" / "pair.yaml") << "switches: [{name: s, ports: 2}]\nhosts: [a, b]\nlinks: [[s/1, a], [s/2, b]]\n";
  std::ofstream(dir / "run.yaml") << "duration: 1ms\ntopology: {file: topo/pair.yaml}\nflows: [{src: a, dst: b}]\n";
  const Scenario s = load_scenario((dir / "run.yaml").string());
  EXPECT_EQ(s.topology.nodes.size(), 3u);
  EXPECT_EQ(s.name, "run");

  std::ofstream(dir / "bad.yaml") << "duration: 1ms\ntopology:\n  file: nowhere.yaml\nflows: [{src: a, dst: b}]\n";
  try {
    load_scenario((dir / "bad.yaml").string());
    ADD_FAILURE() << "missing topology file accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "topology.file");
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(e.problem().find("nowhere.yaml"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST(ScenarioLoader, TopologyFileMayBeAnIbnetdiscoverDump) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ibvp_ibnd_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const topo::Topology fabric = topo::kary_ntree(2, 2);
  std::ofstream(dir / "fabric.net") << topo::write_ibnetdiscover(fabric);
  std::ofstream(dir / "run.yaml") << "duration: 1ms\ntopology: {file: fabric.net}\nflows: [{src: h1, dst: h4}]\n";
  const Scenario s = load_scenario((dir / "run.yaml").string());
  ASSERT_EQ(s.topology.nodes.size(), fabric.nodes.size());
  for (size_t n = 0; n < fabric.nodes.size(); ++n) {
    EXPECT_EQ(s.topology.nodes[n].name, fabric.nodes[n].name);
    EXPECT_EQ(s.topology.nodes[n].lid, fabric.nodes[n].lid);
  }
  EXPECT_EQ(s.topology.links.size(), fabric.links.size());
  std::filesystem::remove_all(dir);
}

TEST(ScenarioQos, OpensmOptionsBecomeTheTablesOfEverySwitchPortAndEndpoint) {
  const Scenario s = load(kBase +
                          "switch: {data_vls: 2}\n"
                          "endpoint: {data_vls: 2}\n"
                          "qos:\n"
                          "  sl2vl: \"0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1\"\n"
                          "  vlarb_high: \"1:255\"\n"
                          "  vlarb_low: \"0:32, 1:8\"\n"
                          "  high_limit: \"4\"\n"
                          "  ca_vlarb_low: \"0:200\"\n");
  for (const auto* cfg : {&s.switch_cfg.vlarb, &s.endpoint_cfg.vlarb}) {
    ASSERT_EQ(cfg->high.size(), 1u);
    EXPECT_EQ(cfg->high[0].vl, 1);
    EXPECT_EQ(cfg->high[0].weight, 255);
    EXPECT_EQ(cfg->high_limit, 4);
  }
  ASSERT_EQ(s.switch_cfg.vlarb.low.size(), 2u);
  EXPECT_EQ(s.switch_cfg.vlarb.low[1].vl, 1);
  EXPECT_EQ(s.switch_cfg.vlarb.low[1].weight, 8);
  // The port-type option wins for endpoints only.
  ASSERT_EQ(s.endpoint_cfg.vlarb.low.size(), 1u);
  EXPECT_EQ(s.endpoint_cfg.vlarb.low[0].weight, 200);
  for (size_t sl = 0; sl < 16; ++sl) {
    EXPECT_EQ(s.switch_cfg.sl2vl[sl], sl % 2);
    EXPECT_EQ(s.endpoint_cfg.sl2vl[sl], sl % 2);
  }
}

TEST(ScenarioQos, OptionsFileIsReadAndKeysHereWin) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ibvp_qos_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "opensm.conf") << "# from a real opensm.conf\nsm_priority 0\nqos TRUE\n"
                                        "qos_max_vls 2\nqos_vlarb_low 0:10,1:20\nqos_swe_high_limit 7\n";
  std::ofstream(dir / "run.yaml") << "duration: 1ms\ntopology: {generator: single_switch, hosts: 2}\n"
                                     "switch: {data_vls: 2}\nendpoint: {data_vls: 2}\n"
                                     "flows: [{src: h1, dst: h2}]\n"
                                     "qos: {options_file: opensm.conf, vlarb_low: \"0:30,1:40\"}\n";
  const Scenario s = load_scenario((dir / "run.yaml").string());
  ASSERT_EQ(s.switch_cfg.vlarb.low.size(), 2u);
  EXPECT_EQ(s.switch_cfg.vlarb.low[0].weight, 30);
  EXPECT_EQ(s.switch_cfg.vlarb.high_limit, 7);
  EXPECT_EQ(s.endpoint_cfg.vlarb.high_limit, 0);  // qos_swe_ is for switch ports only
  std::filesystem::remove_all(dir);
}

TEST(ScenarioQos, BadOptionValuesNameTheKeyAndLine) {
  ConfigError e = error_of(kBase + "qos:\n  vlarb_high: \"1:999\"\n");
  EXPECT_EQ(e.key(), "qos.vlarb_high");
  EXPECT_EQ(e.line(), 7);
  EXPECT_NE(std::string(e.what()).find("255"), std::string::npos);
  // VL 1 is not operated by ports with one data VL: the port sees it, the section is named.
  e = error_of(kBase + "qos:\n  vlarb_low: \"1:10\"\n");
  EXPECT_NE(e.key().find("vlarb_low"), std::string::npos) << e.what();
  e = error_of(kBase + "switch:\n  vlarb: {low: [{vl: 0, weight: 1}]}\nqos:\n  high_limit: \"1\"\n");
  EXPECT_EQ(e.key(), "switch.vlarb");
  e = error_of(kBase + "qos: {options_file: nowhere.conf}\n");
  EXPECT_EQ(e.key(), "qos.options_file");
  e = error_of(kBase + "qos: {}\n");
  EXPECT_EQ(e.key(), "qos");
}

TEST(ScenarioLoader, InlineTopologyErrorsPointIntoTheScenario) {
  const Scenario s = load(
      "duration: 1ms\n"
      "topology:\n"
      "  inline:\n"
      "    switches: [{name: s, ports: 2}]\n"
      "    hosts: [a, b]\n"
      "    links: [[s/1, a], [s/2, b]]\n"
      "flows: [{src: a, dst: b}]\n");
  EXPECT_EQ(s.topology.nodes.size(), 3u);
  const ConfigError e = error_of(
      "duration: 1ms\n"
      "topology:\n"
      "  inline:\n"
      "    switches: [{name: s, ports: 2}]\n"
      "    hosts: [a, b]\n"
      "    links: [[s/1, a], [s/2, c]]\n"
      "flows: [{src: a, dst: b}]\n");
  EXPECT_EQ(e.file(), "test.yaml");
  EXPECT_EQ(e.line(), 6);
  EXPECT_EQ(e.key().rfind("topology.inline.links[1]", 0), 0u) << e.what();
}

// --- Each kind of error names the file, the key path, the line and the fix.

TEST(ScenarioErrors, UnknownTopLevelKey) {
  const ConfigError e = error_of(kBase + "durration: 2ms\n");
  EXPECT_EQ(e.file(), "test.yaml");
  EXPECT_EQ(e.key(), "durration");
  EXPECT_EQ(e.line(), 6);
  EXPECT_NE(e.fix().find("did you mean duration?"), std::string::npos);
  EXPECT_NE(e.fix().find("name, seed, duration"), std::string::npos);
}

TEST(ScenarioErrors, UnknownKeyInAFlow) {
  const ConfigError e = error_of(kBase + "  - {name: f2, src: h1, dst: h3, bandwidth: 1}\n");
  EXPECT_EQ(e.key(), "flows[1].bandwidth");
  EXPECT_EQ(e.line(), 6);
  EXPECT_NE(e.fix().find("allowed keys are name, src, dst"), std::string::npos);
}

TEST(ScenarioLoader, CcAnnexMarkingTakesTheAnnexSwitchSettings) {
  const Scenario s = load(kBase +
                          "switch:\n  ecn: {policy: cc_annex, threshold: 12, marking_rate: 3, packet_size: 4, "
                          "victim_mask: [2, 4]}\n");
  const sw::EcnConfig& c = s.switch_cfg.ecn;
  EXPECT_EQ(c.policy, sw::MarkingPolicy::cc_annex);
  EXPECT_EQ(c.threshold, 12);
  EXPECT_EQ(c.marking_rate, 3);
  EXPECT_EQ(c.packet_size, 4);
  EXPECT_EQ(c.victim_mask, (std::vector<uint16_t>{2, 4}));
}

TEST(ScenarioErrors, CcAnnexSettingsOutOfRangeOrWithoutTheAnnexPolicy) {
  ConfigError e = error_of(kBase + "switch:\n  ecn: {policy: cc_annex, threshold: 16}\n");
  EXPECT_EQ(e.file(), "test.yaml");
  EXPECT_EQ(e.key(), "switch.ecn.threshold");
  EXPECT_EQ(e.problem(), "16 is out of range 0..15");
  e = error_of(kBase + "switch:\n  ecn: {policy: cc_annex, victim_mask: [3, 0]}\n");
  EXPECT_EQ(e.key(), "switch.ecn.victim_mask[1]");
  EXPECT_EQ(e.problem(), "0 is out of range 1..254");
  e = error_of(kBase + "switch:\n  ecn: {policy: cc_annex, victim_mask: [3, 3]}\n");
  EXPECT_EQ(e.key(), "switch.ecn.victim_mask[1]");
  EXPECT_EQ(e.fix(), "list each port once");
  e = error_of(kBase + "switch:\n  ecn: {policy: input_triggered, marking_rate: 4}\n");
  EXPECT_EQ(e.key(), "switch.ecn.marking_rate");
  EXPECT_EQ(e.problem(), "marking_rate is only used with policy cc_annex");
  EXPECT_EQ(e.fix(), "remove it or set policy: cc_annex");
}

TEST(ScenarioLoader, RateSchedulingAndReservedRatesLoad) {
  const Scenario s = load(
      "name: t\nduration: 1ms\ntopology: {generator: single_switch, hosts: 4}\n"
      "flows:\n  - {name: f1, src: h1, dst: h2, reserved_rate: 2.5e8}\n"
      "switch: {scheduling: fair_queueing, scheduling_scope: across_vls, unreserved_rate: 1e8}\n");
  EXPECT_EQ(s.switch_cfg.scheduling, sw::Scheduling::fair_queueing);
  EXPECT_EQ(s.switch_cfg.scheduling_scope, sw::SchedulingScope::across_vls);
  EXPECT_EQ(s.switch_cfg.unreserved_rate, 1e8);
  EXPECT_EQ(s.flows[0].reserved_rate, 2.5e8);
}

TEST(ScenarioErrors, MulticastPriorityGoesOnlyWithAsynchronousReplication) {
  // Seed 000 Sec. 3.6.1: synchronous and central-buffer copies always go ahead of unicast, so
  // the key would change nothing there.
  const Scenario s = load(kBase + "switch: {multicast_priority: true}\n");
  EXPECT_TRUE(s.switch_cfg.multicast_priority);
  ConfigError e = error_of(kBase + "switch: {multicast_replication: synchronous, multicast_priority: false}\n");
  EXPECT_EQ(e.key(), "switch.multicast_priority");
  EXPECT_EQ(e.problem(), "synchronous copies always go ahead of unicast (seed 000 Sec. 3.6.1)");
  EXPECT_EQ(e.fix(), "remove multicast_priority or set multicast_replication: asynchronous");
}

TEST(ScenarioErrors, RateSchedulerKeysGoWithARateSchedulerAndFifoKeysWithFifo) {
  ConfigError e = error_of(kBase + "switch: {scheduling_scope: across_vls}\n");
  EXPECT_EQ(e.key(), "switch.scheduling_scope");
  EXPECT_EQ(e.problem(), "scheduling_scope is only used by a rate scheduler");
  EXPECT_EQ(e.fix(), "remove it or set scheduling: virtual_clock (or fair_queueing)");
  e = error_of(kBase + "switch: {scheduling: virtual_clock, bypass_limit: 2}\n");
  EXPECT_EQ(e.key(), "switch.bypass_limit");
  EXPECT_EQ(e.fix(), "remove it or set scheduling: fifo");
  e = error_of(kBase + "switch: {scheduling: round_robin}\n");
  EXPECT_EQ(e.key(), "switch.scheduling");
  e = error_of(kBase + "switch: {scheduling: virtual_clock, unreserved_rate: 0}\n");
  EXPECT_EQ(e.key(), "switch.unreserved_rate");
  e = error_of(kBase + "  - {name: f2, src: h1, dst: h3, reserved_rate: -1}\n");
  EXPECT_EQ(e.key(), "flows[1].reserved_rate");
}

TEST(ScenarioErrors, VcBitsGoWithVirtualClockAndHoldTheLargestVtick) {
  const std::string base = "name: t\nduration: 1ms\ntopology: {generator: single_switch, hosts: 4}\n"
                           "flows:\n  - {name: slow, src: h1, dst: h2, reserved_rate: 2e7}\n";
  // Seed 003 Sec. 3.1: the counter must hold the largest Vtick; a 4,224-byte packet at the
  // 20 Mb/s flow's rate is 1,689,600 ns, 21 bits.
  ConfigError e = error_of(base + "switch: {scheduling: virtual_clock, vc_bits: 20}\n");
  EXPECT_EQ(e.key(), "switch.vc_bits");
  EXPECT_NE(e.problem().find("flow \"slow\""), std::string::npos) << e.problem();
  EXPECT_EQ(e.fix(), "give vc_bits: 21 or more, or 0 (unbounded)");
  EXPECT_EQ(load(base + "switch: {scheduling: virtual_clock, vc_bits: 21}\n").switch_cfg.vc_bits, 21u);
  e = error_of(base + "switch: {scheduling: fair_queueing, vc_bits: 32}\n");
  EXPECT_EQ(e.key(), "switch.vc_bits");
  EXPECT_EQ(e.fix(), "remove it or set scheduling: virtual_clock");
  e = error_of(base + "switch: {scheduling: virtual_clock, vc_bits: 8}\n");
  EXPECT_EQ(e.key(), "switch.vc_bits");
}

TEST(ScenarioErrors, MulticastGroupsAreRefusedWithARateScheduler) {
  const ConfigError e = error_of(
      "name: t\nduration: 1ms\ntopology: {generator: single_switch, hosts: 4}\n"
      "switch: {scheduling: virtual_clock}\n"
      "multicast:\n  - {name: g, source: h1, members: [h2, h3]}\n"
      "flows:\n  - {name: f1, src: h1, dst: g}\n");
  EXPECT_EQ(e.file(), "test.yaml");
  EXPECT_EQ(e.key(), "switch.scheduling");
  EXPECT_NE(e.fix().find("scheduling: fifo"), std::string::npos);
}

TEST(ScenarioErrors, WrongTypeAndRangeInAFlow) {
  ConfigError e = error_of(kBase + "  - {name: f2, src: h1, dst: h3, load: high}\n");
  EXPECT_EQ(e.key(), "flows[1].load");
  EXPECT_EQ(e.problem(), "expected a number, got \"high\"");
  e = error_of(kBase + "  - {name: f2, src: h1, dst: h3, load: 0}\n");
  EXPECT_EQ(e.problem(), "0 is out of range (0, 1]");
  e = error_of(kBase + "  - {name: f2, src: h1, dst: h3, payload_bytes: 5000}\n");
  EXPECT_EQ(e.problem(), "5000 is out of range 0..4096");
  EXPECT_EQ(e.line(), 6);
}

TEST(ScenarioErrors, UnknownChoiceListsAllowedValues) {
  const ConfigError e = error_of(kBase + "routing: ftree\n");
  EXPECT_EQ(e.key(), "routing");
  EXPECT_EQ(e.line(), 6);
  EXPECT_NE(e.fix().find("allowed values are minhop"), std::string::npos);
  for (const std::string& n : sm::routing_engine_names()) EXPECT_NE(e.fix().find(n), std::string::npos) << n;
}

TEST(ScenarioErrors, MissingRequiredKeys) {
  ConfigError e = error_of("duration: 1ms\nflows: []\n");
  EXPECT_EQ(e.key(), "topology");
  EXPECT_EQ(e.problem(), "required key is missing");
  e = error_of(kBase + "  - {name: f2, dst: h3}\n");
  EXPECT_EQ(e.key(), "flows[1].src");
  EXPECT_EQ(e.line(), 6);
  e = error_of(kBase + "  - {name: f2, src: h1}\n");
  EXPECT_EQ(e.key(), "flows[1].dst");
  EXPECT_NE(e.fix().find("pattern uniform"), std::string::npos);
}

TEST(ScenarioErrors, FlowEndpointsMustExistAndTheFixListsSome) {
  const ConfigError e = error_of(kBase + "  - {name: f2, src: h9, dst: h3}\n");
  EXPECT_EQ(e.key(), "flows[1].src");
  EXPECT_EQ(e.line(), 6);
  EXPECT_EQ(e.problem(), "no endpoint named \"h9\" in the topology");
  EXPECT_NE(e.fix().find("h1, h2, h3, h4"), std::string::npos);
  EXPECT_EQ(error_of(kBase + "  - {name: f2, src: sw, dst: h3}\n").problem(), "sw is a switch, not an endpoint");
  EXPECT_EQ(error_of(kBase + "  - {name: f2, src: h1, dst: h1}\n").key(), "flows[1].dst");
  EXPECT_EQ(error_of(kBase + "  - {name: f1, src: h1, dst: h3}\n").key(), "flows[1].name");
}

TEST(ScenarioErrors, PatternKeysMustFitThePattern) {
  EXPECT_EQ(error_of(kBase + "  - {name: f2, src: h1, pattern: hotspot}\n").key(), "flows[1].hotspots");
  EXPECT_EQ(error_of(kBase + "  - {name: f2, src: h1, pattern: uniform, dst: h2}\n").key(), "flows[1].dst");
  EXPECT_EQ(error_of(kBase + "  - {name: f2, src: h1, dst: h2, hotspots: [h3]}\n").key(), "flows[1].hotspots");
  EXPECT_EQ(error_of(kBase + "  - {name: f2, src: h1, pattern: hotspot, hotspots: [h7], hotspot_fraction: 0.5}\n").key(),
            "flows[1].hotspots[0]");
  const Scenario s = load(kBase + "  - {name: f2, src: h1, pattern: hotspot, hotspots: [h3], hotspot_fraction: 0.5}\n");
  EXPECT_EQ(s.flows[1].hotspots, std::vector<std::string>{"h3"});
}

TEST(ScenarioErrors, OnOffFlowsMustBeSaturating) {
  const ConfigError e = error_of(
      "duration: 1ms\ntopology: {generator: single_switch, hosts: 2}\n"
      "flows: [{src: h1, dst: h2, generator: poisson, load: 0.5, on_off_mean: 1ms}]\n");
  EXPECT_EQ(e.key(), "flows[0].on_off_mean");
  EXPECT_NE(e.fix().find("saturating"), std::string::npos);
  const Scenario s = load("duration: 1ms\ntopology: {generator: single_switch, hosts: 2}\n"
                          "flows: [{src: h1, dst: h2, on_off_mean: 250us}]\n");
  EXPECT_EQ(s.flows[0].on_off_mean, sc_core::sc_time(250, sc_core::SC_US));
}

TEST(ScenarioErrors, TimesMustBeOrdered) {
  ConfigError e = error_of(kBase + "warmup: 1ms\n");
  EXPECT_EQ(e.key(), "warmup");
  EXPECT_EQ(e.line(), 6);
  e = error_of(kBase + "  - {name: f2, src: h1, dst: h3, start: 50us, stop: 10us}\n");
  EXPECT_EQ(e.key(), "flows[1].stop");
  e = error_of(kBase + "  - {name: f2, src: h1, dst: h3, start: 2ms}\n");
  EXPECT_EQ(e.key(), "flows[1].start");
  EXPECT_NE(e.problem().find("send nothing"), std::string::npos);
  e = error_of("duration: 0s\ntopology: {generator: single_switch, hosts: 2}\nflows: [{src: h1, dst: h2}]\n");
  EXPECT_EQ(e.key(), "duration");
  EXPECT_NE(e.problem().find("out of range"), std::string::npos);
}

TEST(ScenarioErrors, BufferMustHoldTheLargestPacketAndTheFixSaysWhy) {
  const ConfigError e = error_of(kBase + "  - {name: big, src: h1, dst: h3, payload_bytes: 4096}\nswitch:\n  vl_buffer_bytes: 4096\n");
  EXPECT_EQ(e.key(), "switch.vl_buffer_bytes");
  EXPECT_EQ(e.line(), 8);
  // 4096 + LRH 8 + BTH 12 + DETH 8 + ICRC 4 + VCRC 2 = 4130 bytes = 65 blocks.
  EXPECT_NE(e.problem().find("flow big sends 4096-byte payloads, 4130 bytes on the wire, 4160 bytes"),
            std::string::npos)
      << e.problem();
  EXPECT_NE(e.fix().find("at least 4160"), std::string::npos);
  EXPECT_NE(e.fix().find("LRH"), std::string::npos);
  EXPECT_EQ(error_of(kBase + "endpoint: {vl_buffer_bytes: 1024}\n").key(), "endpoint.vl_buffer_bytes");
}

TEST(ScenarioErrors, FlowSlMustMapToAnArbitratedVl) {
  const ConfigError e = error_of(kBase +
                                 "  - {name: f2, src: h1, dst: h3, sl: 1}\n"
                                 "switch:\n"
                                 "  data_vls: 2\n"
                                 "  vlarb: {low: [{vl: 0, weight: 255}]}\n"
                                 "endpoint: {data_vls: 2}\n");
  EXPECT_EQ(e.key(), "flows[1].sl");
  EXPECT_NE(e.problem().find("switch.vlarb has no entry for VL 1"), std::string::npos) << e.problem();
}

TEST(ScenarioErrors, TopologySectionTakesExactlyOneSourceAndOnlyItsGeneratorsKeys) {
  ConfigError e = error_of("duration: 1ms\ntopology: {generator: single_switch, hosts: 4, file: x.yaml}\nflows: []\n");
  EXPECT_EQ(e.key(), "topology");
  EXPECT_EQ(e.line(), 2);
  EXPECT_NE(e.fix().find("exactly one of"), std::string::npos);
  e = error_of("duration: 1ms\ntopology: {generator: single_switch, hosts: 4, local: 3}\nflows: []\n");
  EXPECT_EQ(e.key(), "topology.local");
  EXPECT_EQ(e.problem(), "local is not a parameter of generator single_switch");
  EXPECT_NE(e.fix().find("single_switch takes hosts, link"), std::string::npos);
  e = error_of("duration: 1ms\ntopology: {generator: two_switch, local: 3}\nflows: []\n");
  EXPECT_EQ(e.key(), "topology.remote");
  EXPECT_EQ(e.problem(), "generator two_switch needs remote");
  e = error_of("duration: 1ms\ntopology: {generator: star}\nflows: []\n");
  EXPECT_EQ(e.key(), "topology.generator");
  EXPECT_NE(e.fix().find("two_switch, random_irregular, single_switch, fat_tree, mesh, torus"), std::string::npos);
}

TEST(ScenarioErrors, EndpointsAndSwitchesMustOperateTheSameVls) {
  ConfigError e = error_of(kBase + "switch:\n  data_vls: 2\n");
  EXPECT_EQ(e.key(), "switch.data_vls");
  EXPECT_EQ(e.line(), 7);
  e = error_of(kBase + "switch: {data_vls: 2}\nendpoint: {data_vls: 3}\n");
  EXPECT_EQ(e.key(), "endpoint.data_vls");
  EXPECT_EQ(e.line(), 7);
  EXPECT_EQ(e.fix(), "give endpoint.data_vls and switch.data_vls the same value");
}

TEST(ScenarioErrors, NothingToSendIsRefusedAtTheFlowsKey) {
  const ConfigError e = error_of("duration: 1ms\ntopology: {generator: single_switch, hosts: 4}\n");
  EXPECT_NE(e.problem().find("neither flows nor a traffic section"), std::string::npos);
  // Found by tests/fuzz: the message named no key; flows is where the fix goes.
  EXPECT_EQ(e.key(), "flows");
  EXPECT_EQ(error_of("duration: 1ms\ntopology: {generator: single_switch, hosts: 4}\nflows: []\n").line(), 3);
}

TEST(ScenarioErrors, OutputsMustNameCabledPorts) {
  ConfigError e = error_of(kBase + "outputs:\n  rate_ports: [sw/1, sw/9]\n");
  EXPECT_EQ(e.key(), "outputs.rate_ports[1]");
  EXPECT_EQ(e.line(), 7);
  EXPECT_NE(e.problem().find("sw has no port 9"), std::string::npos);
  e = error_of(kBase + "outputs:\n  rate_ports: [sw]\n");
  EXPECT_NE(e.fix().find("e.g. B/1"), std::string::npos);
  e = error_of(kBase + "outputs:\n  rate_ports: [S/1]\n");
  EXPECT_NE(e.problem().find("no node named \"S\""), std::string::npos);
  e = error_of(kBase + "outputs:\n  pcaps: [{node: hx}]\n");
  EXPECT_EQ(e.key(), "outputs.pcaps[0].node");
  e = error_of(kBase + "outputs:\n  pcaps: [{node: h1, file: a.pcap}, {node: h2, file: a.pcap}]\n");
  EXPECT_EQ(e.key(), "outputs.pcaps[1].file");
}

// --- --set overrides

TEST(ScenarioOverrides, ReplaceValuesBeforeValidation) {
  const Scenario s = load(kBase, {"switch.pipeline_delay=40ns", "flows[0].ipd=3", "topology.hosts=6",
                                  "endpoint.sl2vl=[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]", "name=other"});
  EXPECT_EQ(s.switch_cfg.pipeline_delay, sc_time(40, SC_NS));
  EXPECT_EQ(s.flows[0].ipd, 3u);
  EXPECT_EQ(s.topology.endpoints().size(), 6u);
  EXPECT_EQ(s.name, "other");
}

TEST(ScenarioOverrides, CanAddFlowMappingsAndLaterOverridesWin) {
  const Scenario s = load(kBase, {"flows=[{src: h2, dst: h3}, {src: h3, dst: h4}]", "flows[1].sl=0",
                                  "duration=2ms", "duration=3ms"});
  ASSERT_EQ(s.flows.size(), 2u);
  EXPECT_EQ(s.flows[0].src, "h2");
  EXPECT_EQ(s.duration, sc_time(3, SC_MS));
}

TEST(ScenarioOverrides, UnknownKeyIsRefusedNamingSet) {
  const ConfigError e = error_of(kBase, {"switch.crosbar=fifo"});
  EXPECT_EQ(e.file(), "--set");
  EXPECT_EQ(e.key(), "switch.crosbar");
  EXPECT_EQ(e.line(), 0);
  EXPECT_EQ(e.problem(), "unknown key");
  EXPECT_NE(e.fix().find("did you mean crossbar?"), std::string::npos);
  EXPECT_EQ(std::string(e.what()).rfind("--set: switch.crosbar: unknown key", 0), 0u) << e.what();
}

TEST(ScenarioLoader, OldCrossbarRequestOrderValuesAreRefusedPointingAtRequestOrder) {
  // Before issue 11, switch.crossbar held the request order.
  for (const std::string old : {"fifo", "fifo_bypass"}) {
    const ConfigError e = error_of(
        "name: t\nduration: 1ms\ntopology: {generator: single_switch, hosts: 4}\nswitch:\n  crossbar: " + old + "\n");
    EXPECT_EQ(e.file(), "test.yaml");
    EXPECT_EQ(e.key(), "switch.crossbar");
    EXPECT_EQ(e.line(), 5);
    EXPECT_NE(e.fix().find("now `switch.request_order: " + old + "`"), std::string::npos) << e.what();
    // The same through --set.
    const ConfigError o = error_of(kBase, {"switch.crossbar=" + old});
    EXPECT_EQ(o.file(), "--set");
    EXPECT_NE(o.fix().find("switch.request_order: " + old), std::string::npos) << o.what();
  }
  EXPECT_EQ(load(kBase, {"switch.crossbar=multiplexed"}).switch_cfg.crossbar, sw::Crossbar::multiplexed);
}

TEST(ScenarioLoader, ControlSectionLoadsWithSeed000DefaultsAndIsEnoughToRun) {
  const Scenario s = load("name: t\nduration: 1ms\ntopology: {generator: single_switch, hosts: 4}\ncontrol: {}\n");
  EXPECT_TRUE(s.control.enabled);
  EXPECT_EQ(s.control.period.value(), 33'333'333'333u);  // 1/30 s
  EXPECT_EQ(s.control.payload_bytes, 256u);             // one MAD
  EXPECT_TRUE(s.control.senders.empty());
  EXPECT_TRUE(s.control.dst.empty());
  EXPECT_FALSE(load(kBase).control.enabled);
}

TEST(ScenarioLoader, ControlSectionErrorsNameTheKeyAndTheFix) {
  const std::string base = "name: t\nduration: 1ms\ntopology: {generator: single_switch, hosts: 4}\n";
  ConfigError e = error_of(base + "control: {senders: [h1, h9]}\n");
  EXPECT_EQ(e.key(), "control.senders[1]");
  EXPECT_NE(e.problem().find("no endpoint named \"h9\""), std::string::npos) << e.what();
  e = error_of(base + "control: {senders: [h1, h2], dst: h2}\n");
  EXPECT_EQ(e.key(), "control.senders[1]");
  EXPECT_NE(e.fix().find("remove it from senders"), std::string::npos) << e.what();
  e = error_of(base + "control: {senders: [h1, h1]}\n");
  EXPECT_EQ(e.key(), "control.senders[1]");
  e = error_of(base + "control: {dst: sw}\n");
  EXPECT_EQ(e.key(), "control.dst");
  EXPECT_NE(e.problem().find("is a switch"), std::string::npos) << e.what();
  // 1024 + 34 header bytes do not fit the default VL15 buffers of two MADs (640 bytes).
  e = error_of(base + "control: {payload_bytes: 1024}\n");
  EXPECT_EQ(e.key(), "control.payload_bytes");
  EXPECT_NE(e.fix().find("at most 604-byte payloads"), std::string::npos) << e.what();
  e = error_of(base + "control: {start: 2ms}\n");
  EXPECT_EQ(e.key(), "control.start");
  e = error_of(base + "control: {start: 500us, stop: 100us}\n");
  EXPECT_EQ(e.key(), "control.stop");
  e = error_of(base + "control: {period: 1ns}\n");
  EXPECT_EQ(e.key(), "control.period");
}

TEST(ScenarioOverrides, BadValuesAndCrossFieldErrorsAtTheOverriddenKeyNameSet) {
  ConfigError e = error_of(kBase, {"switch.bypass_limit=four"});
  EXPECT_EQ(e.file(), "--set");
  EXPECT_EQ(e.problem(), "expected an integer, got \"four\"");
  e = error_of(kBase, {"flows[0].src=h9"});
  EXPECT_EQ(e.file(), "--set");
  EXPECT_EQ(e.key(), "flows[0].src");
  // An error elsewhere in the file still names the file.
  e = error_of(kBase + "switch: {crosbar: fifo}\n", {"seed=3"});
  EXPECT_EQ(e.file(), "test.yaml");
  EXPECT_EQ(e.line(), 6);
}

TEST(ScenarioOverrides, MalformedOverridesAreRefused) {
  ConfigError e = error_of(kBase, {"switch.pipeline_delay"});
  EXPECT_EQ(e.file(), "--set");
  EXPECT_EQ(e.problem(), "expected KEY=VALUE");
  e = error_of(kBase, {"flows[5].ipd=3"});
  EXPECT_EQ(e.key(), "flows[5]");
  EXPECT_NE(e.problem().find("the list has 1 items"), std::string::npos);
  e = error_of(kBase, {"switch..x=1"});
  EXPECT_EQ(e.problem(), "malformed key path");
  e = error_of(kBase, {"name=[1"});
  EXPECT_NE(e.problem().find("not valid YAML"), std::string::npos);
  e = error_of(kBase, {"duration="});
  EXPECT_EQ(e.problem(), "no value given");
}

// --- Robustness: any junk in any place is a ConfigError, never a crash or another exception.

void scalar_paths(const YAML::Node& n, const std::string& path, std::vector<std::string>& out) {
  if (n.IsMap()) {
    for (auto it = n.begin(); it != n.end(); ++it)
      scalar_paths(it->second, (path.empty() ? "" : path + ".") + it->first.Scalar(), out);
  } else if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i) scalar_paths(n[i], path + "[" + std::to_string(i) + "]", out);
  }
  if (!path.empty()) out.push_back(path);
}

TEST(ScenarioRobustness, JunkAtEveryKeyIsAConfigErrorOrAValidScenario) {
  const std::string path = testing::source_path("configs/examples/minimal.yaml");
  std::vector<std::string> paths;
  scalar_paths(YAML::LoadFile(path), "", paths);
  ASSERT_GT(paths.size(), 20u);
  const char* junk[] = {"",     "~",      "[]",     "{}",        "-1",    "0",         "1e400", "-0.0",
                        "99999999999999999999",   "ns",     "'x'",   "[1, [2]]",  "{a: 1}", "0x10",
                        "true", ".nan",   "1ms",    "18446744073709551615s", "h1/1", "\"\\u0000\""};
  size_t refused = 0;
  for (const std::string& p : paths) {
    for (const char* j : junk) {
      try {
        load_scenario(path, {p + "=" + j});
      } catch (const ConfigError& e) {
        ++refused;
        EXPECT_FALSE(e.problem().empty()) << p << "=" << j;
      } catch (const std::exception& e) {
        ADD_FAILURE() << p << "=" << j << " threw a non-ConfigError: " << e.what();
      }
    }
  }
  EXPECT_GT(refused, paths.size() * 10);
}

}  // namespace

// routing_options: roots by name or GUID become switches; a root that is not a switch, an
// option for another engine, and engine file without its dump are refused at their key.
TEST(ScenarioRouting, RoutingOptionsResolveRootsAndRefuseWhatDoesNotFit) {
  const Scenario s = load(kBase + "routing: updn\nrouting_options: {roots: [sw, \"0x0200000000000100\"]}\n");
  EXPECT_EQ(s.routing_options.roots, std::vector<uint32_t>{s.topology.find("sw")});  // both name sw
  const ConfigError host = error_of(kBase + "routing: updn\nrouting_options:\n  roots: [sw, h2]\n");
  EXPECT_EQ(host.key(), "routing_options.roots[1]");
  EXPECT_EQ(host.line(), 8);
  EXPECT_NE(std::string(host.what()).find("h2 is an endpoint"), std::string::npos) << host.what();
  EXPECT_EQ(error_of(kBase + "routing: updn\nrouting_options: {roots: [nosuch]}\n").key(), "routing_options.roots[0]");
  EXPECT_EQ(error_of(kBase + "routing_options: {roots: [sw]}\n").key(), "routing_options.roots");
  EXPECT_EQ(error_of(kBase + "routing: file\n").key(), "routing");
  EXPECT_EQ(error_of(kBase + "routing: file\nrouting_options: {lfts_file: nosuch.dump}\n").key(),
            "routing_options.lfts_file");
  EXPECT_EQ(error_of(kBase + "routing_options: {lfts_file: x.dump}\n").key(), "routing_options.lfts_file");
}


// An exported dump with ibnetdiscover's ids loads with its node-name map under the names
// the flows use; the map goes with a topology file only.
TEST(ScenarioLoader, TopologyNodeNameMapNamesTheNodesOfADump) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ibvp_nnm_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const topo::Topology fabric = topo::kary_ntree(2, 2);
  topo::IbnetdiscoverWriteOptions ids;
  ids.guid_names = true;
  std::ofstream(dir / "fabric.net") << topo::write_ibnetdiscover(fabric, ids);
  std::ofstream(dir / "fabric.map") << topo::write_node_name_map(fabric);
  std::ofstream(dir / "run.yaml") << "duration: 1ms\ntopology: {file: fabric.net, node_name_map: fabric.map}\n"
                                     "flows: [{src: h1, dst: h4}]\n";
  const Scenario s = load_scenario((dir / "run.yaml").string());
  for (size_t n = 0; n < fabric.nodes.size(); ++n) EXPECT_EQ(s.topology.nodes[n].name, fabric.nodes[n].name);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(error_of("name: t\nduration: 1ms\ntopology: {generator: single_switch, hosts: 2, node_name_map: m}\n"
                     "flows: [{src: h1, dst: h2}]\n")
                .key(),
            "topology.node_name_map");
}

// Link events (docs/management.md): a cable named by one end, node/port, within the run;
// down only while up and up only while down; fabric-only endpoints have no port state.
TEST(ScenarioErrors, LinkEventsNameACableOfTheTopologyWithinTheRunAndAlternate) {
  const std::string base =
      "name: t\nduration: 1ms\ntopology: {generator: fat_tree, k: 2, n: 2}\n"
      "flows:\n  - {name: f1, src: h1, dst: h4}\n";
  const Scenario ok = load(base + "link_events:\n  - {at: 100us, link: s0_0/3, state: down}\n"
                                  "  - {at: 300us, link: s1_0/1, state: up}\n");
  ASSERT_EQ(ok.link_events.size(), 2u);
  EXPECT_EQ(ok.link_events[0].at, sc_time(100, SC_US));
  EXPECT_FALSE(ok.link_events[0].up);
  EXPECT_TRUE(ok.link_events[1].up);

  struct Case {
    std::string event, key, message;
  };
  const std::vector<Case> cases = {
      {"{at: 1us, link: nosuch/1, state: down}", "link_events[0].link", "no node named \"nosuch\""},
      {"{at: 1us, link: s0_0, state: down}", "link_events[0].link", "is not node/port"},
      {"{at: 1us, link: s0_0/9, state: down}", "link_events[0].link", "has no port 9"},
      {"{at: 1ms, link: s0_0/3, state: down}", "link_events[0].at", "not before the end of the run"},
      {"{at: 1us, link: s0_0/3, state: up}", "link_events[0].state", "already up"},
      {"{at: 1us, link: h1/1, state: down}", "link_events[0].link", "fabric-only endpoint"},
      {"{at: 1us, link: s0_0/3}", "link_events[0].state", ""},
      {"{at: 1us, link: s0_0/3, state: off}", "link_events[0].state", ""},
  };
  for (const Case& c : cases) {
    const ConfigError e = error_of(base + "link_events:\n  - " + c.event + "\n");
    EXPECT_EQ(e.file(), "test.yaml") << c.event;
    EXPECT_EQ(e.key(), c.key) << c.event;
    EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << c.event << ": " << e.what();
    EXPECT_FALSE(e.fix().empty()) << c.event;
  }
  // reroute_delay is the out-of-band reroute; in band the SM reroutes on its traps.
  const ConfigError rr = error_of(base + "endpoint_model: hca\nsubnet_manager: {mode: in_band, reroute_delay: 10us}\n");
  EXPECT_EQ(rr.key(), "subnet_manager.reroute_delay");
  EXPECT_TRUE(load(base + "subnet_manager: {reroute_delay: 10us}\n").subnet_manager.reroute);
  EXPECT_FALSE(load(base).subnet_manager.reroute);
  // Twice down: the second names the first's time.
  const ConfigError twice = error_of(base + "link_events:\n  - {at: 1us, link: s0_0/3, state: down}\n"
                                            "  - {at: 5us, link: s1_0/1, state: down}\n");
  EXPECT_EQ(twice.key(), "link_events[1].state");
  EXPECT_NE(std::string(twice.what()).find("already down at 5us (since 1us)"), std::string::npos) << twice.what();
}

}  // namespace ibvp

namespace ibvp {

// Issue 16: the in-band SM writes the MFTs and one VLArb table per port kind, so multicast
// runs in band; per-port multicast weights (multicast_bandwidth destinations: downstream)
// are still the builder's alone and refused, naming the key and the fix.
TEST(ScenarioErrors, InBandTakesMulticastGroupsButNotPerPortMulticastWeights) {
  const std::string base =
      "name: t\nduration: 1ms\ntopology: {generator: fat_tree, k: 2, n: 2}\nendpoint_model: hca\n"
      "hca: {flow_transport: UD}\nsubnet_manager: {mode: in_band}\nswitch: {data_vls: 2}\nendpoint: {data_vls: 2}\n"
      "multicast:\n  - {name: g, source: h1, members: [h2, h3]}\n"
      "flows:\n  - {name: m, src: h1, dst: g, sl: 1, generator: constant, load: 0.1, payload_bytes: 256}\n";
  EXPECT_EQ(load(base).multicast.size(), 1u);
  EXPECT_EQ(load(base + "multicast_bandwidth: {sl: 1, destinations: group}\n").multicast_bandwidth.enabled, true);
  const ConfigError e = error_of(base + "multicast_bandwidth: {sl: 1}\n");
  EXPECT_EQ(e.key(), "subnet_manager.mode");
  EXPECT_NE(std::string(e.what()).find("destinations: downstream"), std::string::npos) << e.what();
  EXPECT_NE(e.fix().find("destinations: group"), std::string::npos) << e.fix();
}

}  // namespace ibvp
