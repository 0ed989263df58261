// What the loader refuses on HCA hosts before anything is built (issue 18, "crashes, hangs
// and accepted nonsense"): a firmware image that cannot run, host memory too small for the
// run's buffers, values that make no sense against each other. Each error names the key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/hca/firmware_image.h"
#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;
namespace fs = std::filesystem;

namespace {

const std::string kPerftest =
    "duration: 1ms\n"
    "topology: {generator: single_switch, hosts: 2}\n"
    "endpoint_model: hca\n"
    "perftest: {test: send_lat, client: h1, server: h2, sizes: [64], iterations: 2}\n";

ConfigError error_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  try {
    scenario_from_yaml(yaml, "test.yaml", overrides);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << yaml;
  return ConfigError("", "", 0, "", "");
}

// A directory of its own under the system's temporary directory, removed at the end.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("ibvp-limits-" + std::to_string(getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST(HcaLimitsLoader, AFirmwareImageThatIsNoElfFileIsRefusedAtLoadNamingTheKey) {
  TempDir d;
  std::ofstream(d.path / "fw.so") << "not a shared library\n";
  const ConfigError e = error_of(kPerftest + "hca: {firmware_image: \"" + (d.path / "fw.so").string() + "\"}\n");
  EXPECT_EQ(e.key(), "hca.firmware_image");
  EXPECT_NE(e.problem().find("is not an ELF file"), std::string::npos) << e.problem();
  EXPECT_NE(e.fix().find("built from firmware/"), std::string::npos) << e.fix();
}

TEST(HcaLimitsLoader, AFirmwareImageThatIsADirectoryIsRefusedAtLoad) {
  TempDir d;
  const ConfigError e = error_of(kPerftest + "hca: {firmware_image: \"" + d.path.string() + "\"}\n");
  EXPECT_EQ(e.key(), "hca.firmware_image");
  EXPECT_NE(e.problem().find("not a regular file"), std::string::npos) << e.problem();
}

TEST(HcaLimitsLoader, AFirmwareImageForAnotherHalVersionIsRefusedAtLoad) {
  const ConfigError e = error_of(kPerftest + "hca: {firmware_image: \"" IBVP_FW_WRONG_HAL_VERSION_IMAGE "\"}\n");
  EXPECT_EQ(e.key(), "hca.firmware_image");
  EXPECT_NE(e.problem().find("HAL version"), std::string::npos) << e.problem();
}

// A scenario named by a bare relative path ("run.yaml") and an image named by a bare file
// name ("fw.so") next to it: the loader gives the image's absolute path, which loads from
// any working directory (a bare name would make dlopen search the library path).
TEST(HcaLimitsLoader, ARelativeFirmwareImageNextToARelativeScenarioLoadsFromAnyDirectory) {
  TempDir d;
  fs::copy_file(IBVP_FW_DEFAULT_IMAGE, d.path / "fw.so");
  std::ofstream(d.path / "run.yaml") << kPerftest << "hca: {firmware_image: fw.so}\n";
  const fs::path before = fs::current_path();
  fs::current_path(d.path);
  const Scenario s = load_scenario("run.yaml");
  fs::current_path(before);
  EXPECT_EQ(s.hca_host.hca.firmware_image, (d.path / "fw.so").string());
  EXPECT_NO_THROW(hca::FirmwareImage image(s.hca_host.hca.firmware_image));
}

TEST(HcaLimitsLoader, HostMemoryTooSmallForThePerftestIsRefusedWithTheSizeItNeeds) {
  const ConfigError e = error_of(kPerftest + "hca: {host_memory: {size_bytes: 4096}}\n");
  EXPECT_EQ(e.key(), "hca.host_memory.size_bytes");
  EXPECT_NE(e.fix().find("raise hca.host_memory.size_bytes to at least "), std::string::npos) << e.fix();
}

TEST(HcaLimitsLoader, HostMemoryTooSmallForTheFlowsIsRefused) {
  const ConfigError e = error_of(
      "duration: 1ms\n"
      "topology: {generator: single_switch, hosts: 3}\n"
      "endpoint_model: hca\n"
      "hca: {host_memory: {size_bytes: 16384}, flow_depth: 64}\n"
      "flows: [{src: h1, dst: h3, payload_bytes: 4096}, {src: h2, dst: h3, payload_bytes: 4096}]\n");
  EXPECT_EQ(e.key(), "hca.host_memory.size_bytes");
  EXPECT_NE(e.problem().find("flow_depth"), std::string::npos) << e.problem();
}

TEST(HcaLimitsLoader, ATransmitBufferBelowOnePacketIsRefusedWithTheSizeItNeeds) {
  const ConfigError e = error_of(
      "duration: 1ms\n"
      "topology: {generator: single_switch, hosts: 2}\n"
      "endpoint_model: hca\n"
      "hca: {tx_vl_buffer_bytes: 1024, flow_mtu: 2048}\n"
      "flows: [{src: h1, dst: h2, payload_bytes: 4096}]\n");
  EXPECT_EQ(e.key(), "hca.tx_vl_buffer_bytes");
  // One packet: 2048 bytes of payload (the path MTU) plus 64 bytes of header room.
  EXPECT_NE(e.fix().find("at least 2112"), std::string::npos) << e.fix();
}

namespace {
const std::string kFabric =
    "duration: 10ms\n"
    "topology: {generator: single_switch, hosts: 2}\n"
    "flows: [{src: h1, dst: h2}]\n";
}  // namespace

TEST(LoaderBounds, ARateStepGivingMoreThanAMillionSamplesPerSeriesIsRefused) {
  for (const char* step : {"1ns", "1ps"}) {
    const ConfigError e = error_of(kFabric, {std::string("outputs.rate_step=") + step});
    EXPECT_EQ(e.key(), "outputs.rate_step") << step;
    EXPECT_NE(e.fix().find("at least 10ns"), std::string::npos) << e.fix();  // 10 ms / 10^6
  }
  EXPECT_NO_THROW(scenario_from_yaml(kFabric, "test.yaml", {"outputs.rate_step=10ns"}));
}

TEST(LoaderBounds, ADurationBeyondAnHourIsRefused) {
  for (const char* d : {"18446744073709551615ps", "3601s"}) {
    const ConfigError e = error_of(kFabric, {std::string("duration=") + d});
    EXPECT_EQ(e.key(), "duration") << d;
  }
}

TEST(LoaderBounds, PipelineDelaysBeyondAMillisecondAreRefused) {
  EXPECT_EQ(error_of(kFabric, {"switch.pipeline_delay=172800s"}).key(), "switch.pipeline_delay");
  EXPECT_EQ(error_of(kPerftest, {"hca.rx_pipeline_delay=2ms"}).key(), "hca.rx_pipeline_delay");
  EXPECT_EQ(error_of(kPerftest, {"hca.tx_pipeline_delay=1s"}).key(), "hca.tx_pipeline_delay");
}

TEST(LoaderBounds, FirmwareCycleCostsBeyondAMillionCyclesAreRefused) {
  EXPECT_EQ(error_of(kPerftest, {"hca.event_cycles=4294967295"}).key(), "hca.event_cycles");
  EXPECT_EQ(error_of(kPerftest, {"hca.hal_call_cycles=1000001"}).key(), "hca.hal_call_cycles");
}

TEST(LoaderMessages, AHugeValueIsQuotedAsAShortExcerptWithItsSize) {
  // In a document a scalar may hold up to 4 KiB (params/input_text.h: kMaxScalarBytes); a
  // --set override or key has no such bound before the loader quotes it.
  const std::string sevens(4000, '7'), huge_sevens(10'000'000, '7'), keys(10'000'000, 'k');
  const struct {
    std::string yaml;
    std::vector<std::string> overrides;
    char c;
    size_t bytes;
  } cases[] = {{kFabric + "seed: \"" + sevens + "\"\n", {}, '7', 4000},
               {kFabric + "switch: {pipeline_delay: " + sevens + "}\n", {}, '7', 4000},
               {kFabric, {"seed=\"" + huge_sevens + "\""}, '7', 10'000'000},
               {kFabric, {keys + "=1"}, 'k', 10'000'000}};  // an unknown key, echoed as the error's key
  for (const auto& c : cases) {
    const std::string m = error_of(c.yaml, c.overrides).what();
    EXPECT_LT(m.size(), 1000u) << m.substr(0, 300);
    EXPECT_NE(m.find(std::string(80, c.c) + "... (" + std::to_string(c.bytes) + " bytes)"), std::string::npos)
        << m.substr(0, 300);
  }
}

TEST(FlowDefaults, AnUnknownKeyIsReportedUnderFlowDefaults) {
  const ConfigError e = error_of(kFabric + "flow_defaults: {on_of_mean: 5ms}\n");
  EXPECT_EQ(e.key(), "flow_defaults.on_of_mean");
  EXPECT_NE(e.fix().find("did you mean on_off_mean?"), std::string::npos) << e.fix();
}
