// A firmware image and its arguments chosen by a scenario (hca.firmware_image,
// hca.firmware_args), with no rebuild of the platform: the same send_lat scenario runs with
// the default image and with firmware/examples' fcfs_doorbells image (paths the build
// knows: IBVP_FW_DEFAULT_IMAGE, IBVP_FW_FCFS_DOORBELLS_IMAGE), each with and without
// firmware path costs. Each combination is its own test, so its own process.
//
// What is measured: the fastest half round trip equals the sum of a message's parts
// (tests/common/hca_latency.h) plus, with "wqe_cycles=W,rx_cycles=R", exactly (W + R) / f:
// the sender's firmware spends W cycles on the WQE and the receiver's R cycles on the
// packet, both on the path (f = core_clock_hz, 1 GHz). The example image differs from the
// default only in serving doorbells in arrival order across priority classes; a perftest
// has one QP per host, so its latency is the default image's, to the picosecond (the
// order shows with QPs in several classes: HcaFirmware.ExampleImageServesDoorbellsInArrivalOrder).
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <systemc>
#include <tuple>

#include "common/hca_latency.h"
#include "common/testing.h"
#include "platform/apps/perftest.h"
#include "platform/builder/fabric.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;

namespace {

struct ImageCase {
  const char* name;
  const char* image;
  uint32_t wqe_cycles, rx_cycles;  // 0, 0: firmware_args ""
};

void PrintTo(const ImageCase& c, std::ostream* os) { *os << c.name; }

class FirmwareImageByConfig : public ::testing::TestWithParam<ImageCase> {};

std::string yaml_for(const ImageCase& c) {
  std::string args;
  if (c.wqe_cycles || c.rx_cycles)
    args = "wqe_cycles=" + std::to_string(c.wqe_cycles) + ",rx_cycles=" + std::to_string(c.rx_cycles);
  return "duration: 10ms\n"
         "topology: {generator: single_switch, hosts: 2, link: {width: 4X, speed: EDR, length_m: 2}}\n"
         "switch: {vl_buffer_bytes: 16640}\n"
         "endpoint: {vl_buffer_bytes: 16640}\n"
         "endpoint_model: hca\n"
         "hca: {event_cycles: 0, hal_call_cycles: 0, firmware_image: \"" +
         std::string(c.image) + "\", firmware_args: \"" + args +
         "\"}\n"
         "perftest: {test: send_lat, client: h1, server: h2, sizes: [64], iterations: 5, qp_type: UD}\n";
}

}  // namespace

TEST_P(FirmwareImageByConfig, LatencyIsTheSumOfPartsPlusTheImagesCyclesOverClock) {
  const ImageCase& c = GetParam();
  const Scenario s = scenario_from_yaml(yaml_for(c), "test.yaml");
  Fabric f(s);
  sc_core::sc_start(s.duration);
  for (uint32_t node : {s.topology.find("h1"), s.topology.find("h2")})
    EXPECT_EQ(f.host_at(node)->hca.firmware().path(), c.image);  // the image the scenario named was loaded
  const apps::Perftest* pt = f.perftest();
  ASSERT_NE(pt, nullptr);
  ASSERT_TRUE(pt->finished()) << pt->error();
  ASSERT_EQ(pt->rows().size(), 1u);
  const double base_us = static_cast<double>(tb::ud_send_latency_ps({}, 64)) * 1e-6;
  const double firmware_us = (c.wqe_cycles + c.rx_cycles) * 1e-3;  // cycles at 1 GHz, in us
  EXPECT_NEAR(pt->rows()[0].t_min_us, base_us + firmware_us, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(
    Images, FirmwareImageByConfig,
    ::testing::Values(ImageCase{"Default", IBVP_FW_DEFAULT_IMAGE, 0, 0},
                      ImageCase{"DefaultWithCosts", IBVP_FW_DEFAULT_IMAGE, 40, 60},
                      ImageCase{"FcfsDoorbells", IBVP_FW_FCFS_DOORBELLS_IMAGE, 0, 0},
                      ImageCase{"FcfsDoorbellsWithCosts", IBVP_FW_FCFS_DOORBELLS_IMAGE, 40, 60}),
    [](const ::testing::TestParamInfo<ImageCase>& i) { return std::string(i.param.name); });
