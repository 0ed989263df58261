// What flows on HCA hosts may be (platform/apps/flow_streams.h), and flow_defaults: the
// loader refuses what the hosts cannot run, naming the key, before anything is built.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;

namespace {

const std::string kHca =
    "name: t\n"
    "duration: 1ms\n"
    "topology: {generator: single_switch, hosts: 4}\n"
    "endpoint_model: hca\n";

ConfigError error_of(const std::string& yaml) {
  try {
    scenario_from_yaml(yaml, "test.yaml", {});
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << yaml;
  return ConfigError("", "", 0, "", "");
}

}  // namespace

TEST(HcaFlowLoader, FixedFlowsRunOnHcaHostsWithTheHcaSectionsTransport) {
  const Scenario s = scenario_from_yaml(kHca +
                                            "hca: {flow_transport: UC, flow_depth: 4, flow_mtu: 1024}\n"
                                            "flows: [{name: f, src: h1, dst: h2, payload_bytes: 4096}]\n",
                                        "test.yaml", {});
  ASSERT_EQ(s.flows.size(), 1u);
  EXPECT_EQ(s.hca_host.flow_transport, FlowTransport::uc);
  EXPECT_EQ(s.hca_host.flow_depth, 4u);
  EXPECT_EQ(s.hca_host.flow_mtu, 1024u);
}

TEST(HcaFlowLoader, ADestinationPatternIsRefusedOnHcaHosts) {
  const ConfigError e = error_of(kHca + "flows: [{name: f, src: h1, pattern: uniform}]\n");
  EXPECT_EQ(e.key(), "flows[0].pattern");
}

TEST(HcaFlowLoader, HcaHostsOnTheFlitRouterAreRefused) {
  // Its edges read the kernel's time; HCAs run ahead of it (docs/hca.md, Not yet).
  const std::string flows = "flows: [{name: f, src: h1, dst: h2, payload_bytes: 4096}]\n";
  const ConfigError e = error_of(kHca + "switch: {model: flit_wormhole}\n" + flows);
  EXPECT_EQ(e.key(), "endpoint_model");
  EXPECT_NE(std::string(e.what()).find("switch.model: iba"), std::string::npos) << e.what();
  // The same flows on the IBA switch load.
  EXPECT_EQ(scenario_from_yaml(kHca + flows, "test.yaml", {}).flows.size(), 1u);
}

TEST(HcaFlowLoader, TrafficAndTraceStayWithFabricEndpoints) {
  const ConfigError e = error_of(kHca + "traffic: {load: 0.2}\n");
  EXPECT_EQ(e.key(), "traffic");
}

TEST(HcaFlowLoader, APerftestAndFlowsInOneRunAreRefused) {
  const ConfigError e =
      error_of(kHca + "perftest: {test: send_bw, client: h1, server: h2}\nflows: [{name: f, src: h3, dst: h4}]\n");
  EXPECT_EQ(e.key(), "perftest");
}

TEST(HcaFlowLoader, AUdMessageLargerThanTheMtuIsRefusedWithTheFix) {
  const ConfigError e =
      error_of(kHca + "hca: {flow_transport: UD, flow_mtu: 1024}\nflows: [{name: f, src: h1, dst: h2, payload_bytes: 2048}]\n");
  EXPECT_EQ(e.key(), "flows[0].payload_bytes");
  EXPECT_NE(e.fix().find("1024"), std::string::npos);
}

TEST(HcaFlowLoader, FlowDefaultsFillWhatAFlowLeavesOut) {
  const Scenario s = scenario_from_yaml(kHca +
                                            "flow_defaults: {on_off_mean: 2ms, payload_bytes: 512}\n"
                                            "flows:\n"
                                            "  - {name: a, src: h1, dst: h2}\n"
                                            "  - {name: b, src: h3, dst: h2, on_off_mean: 0ns}\n",
                                        "test.yaml", {"flow_defaults.on_off_mean=3ms"});
  ASSERT_EQ(s.flows.size(), 2u);
  EXPECT_EQ(s.flows[0].on_off_mean, sc_core::sc_time(3, sc_core::SC_MS));  // the override reaches every flow
  EXPECT_EQ(s.flows[0].payload_bytes, 512u);
  EXPECT_EQ(s.flows[1].on_off_mean, sc_core::SC_ZERO_TIME);  // its own value wins
  EXPECT_EQ(s.flows[1].payload_bytes, 512u);
}

TEST(HcaFlowLoader, ABadFlowDefaultIsReportedAtTheFlowThatTakesIt) {
  const ConfigError e = error_of(kHca + "flow_defaults: {payload_bytes: lots}\nflows: [{name: f, src: h1, dst: h2}]\n");
  EXPECT_EQ(e.key(), "flows[0].payload_bytes");
  EXPECT_NE(e.problem().find("lots"), std::string::npos);
}

TEST(HcaFlowLoader, DoorbellClassAndReservedRateLoadForHcaFlows) {
  const Scenario s = scenario_from_yaml(
      kHca + "flows: [{name: f, src: h1, dst: h2, doorbell_class: 3, reserved_rate: 2.5e8}]\n", "test.yaml", {});
  EXPECT_EQ(s.flows[0].doorbell_class, 3);
  EXPECT_EQ(s.flows[0].reserved_rate, 2.5e8);
}

TEST(HcaFlowLoader, ADoorbellClassTheHcaDoesNotHaveIsRefusedWithTheFix) {
  // hca.doorbell_classes is 4 by default: classes 0..3.
  const ConfigError e = error_of(kHca + "flows: [{name: f, src: h1, dst: h2, doorbell_class: 4}]\n");
  EXPECT_EQ(e.file(), "test.yaml");
  EXPECT_EQ(e.key(), "flows[0].doorbell_class");
  EXPECT_EQ(e.fix(), "use a class below 4, or raise hca.doorbell_classes");
}

TEST(HcaFlowLoader, AReservedRateBelowTheHalsMegabitIsRefused) {
  const ConfigError e = error_of(kHca + "flows: [{name: f, src: h1, dst: h2, reserved_rate: 5e5}]\n");
  EXPECT_EQ(e.key(), "flows[0].reserved_rate");
  EXPECT_EQ(e.fix(), "reserve at least 1e6 b/s on HCA hosts");
}

TEST(HcaFlowLoader, ADoorbellClassOnFabricEndpointsIsRefused) {
  const ConfigError e = error_of(
      "name: t\nduration: 1ms\ntopology: {generator: single_switch, hosts: 4}\n"
      "flows: [{name: f, src: h1, dst: h2, doorbell_class: 1}]\n");
  EXPECT_EQ(e.key(), "flows[0].doorbell_class");
  EXPECT_EQ(e.fix(), "add endpoint_model: hca, or remove doorbell_class");
}
