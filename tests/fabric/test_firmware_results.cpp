// What the firmware did reaches the results (issue 15 part 3, platform/metrics/
// firmware_report.h): summary.json's "firmware" block holds each HCA's counters as the
// firmware counted them (hal->counter_add), and firmware.log holds every line the images
// logged (hal->log), named by HCA.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <systemc>
#include <vector>

#include <nlohmann/json.hpp>

#include "firmware/hal/ibvp_hal.h"
#include "platform/builder/fabric.h"
#include "platform/builder/runner.h"
#include "platform/driver/host_node.h"
#include "platform/metrics/firmware_report.h"
#include "platform/metrics/report.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;

TEST(FirmwareResults, SummaryCountersEqualTheFirmwaresAndTheLogHasEveryLineTheImagesLogged) {
  const Scenario s = scenario_from_yaml(
      "duration: 2ms\n"
      "topology: {generator: single_switch, hosts: 3}\n"
      "endpoint_model: hca\n"
      "hca: {firmware_args: \"sched=rr,wqe_cycles=20\"}\n"
      "perftest: {test: send_bw, client: h1, server: h2, sizes: [2048], iterations: 32, tx_depth: 8}\n"
      "outputs: {packets_csv: false}\n",
      "test.yaml");
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ibvp-fwresults-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Fabric fab(s);
  sc_core::sc_start(s.duration);
  RunResult r;
  metrics::write_results(fab, r, dir.string());

  std::ifstream sf(dir / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(sf);
  const nlohmann::json& fw = summary.at("firmware");
  ASSERT_EQ(fw.size(), 3u);  // every HCA host, in node order
  const auto& nodes = s.topology.nodes;
  size_t k = 0;
  std::vector<std::string> expected_log;
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    const driver::HostNode* h = fab.host_at(n);
    if (h == nullptr) continue;
    const nlohmann::json& e = fw.at(k++);
    SCOPED_TRACE(nodes[n].name);
    EXPECT_EQ(e.at("hca"), nodes[n].name);
    EXPECT_EQ(e.at("events").get<uint64_t>(), h->hca.firmware_events());
    EXPECT_EQ(e.at("cycles").get<uint64_t>(), h->hca.firmware_cycles());
    EXPECT_EQ(e.at("counters").size(), size_t{IBVP_CNT_COUNT});
    for (uint32_t c = 0; c < IBVP_CNT_COUNT; ++c)
      EXPECT_EQ(e.at("counters").at(metrics::firmware_counter_name(c)).get<uint64_t>(), h->hca.fw_counter(c))
          << metrics::firmware_counter_name(c);
    for (const auto& l : h->hca.firmware_log()) expected_log.push_back(nodes[n].name + " INFO " + l.text);
    EXPECT_EQ(e.at("log_lines").get<size_t>(), h->hca.firmware_log().size());
  }
  // The run did work: 32 messages left h1 and arrived at h2 (not a vacuous equality of zeros).
  EXPECT_EQ(fw.at(0).at("counters").at("tx_messages").get<uint64_t>(), 32u);
  EXPECT_EQ(fw.at(1).at("counters").at("rx_packets").get<uint64_t>(), 32u);
  // The cycle count covers at least the dispatch and WQE costs charged (100 per event, 20 per WQE).
  EXPECT_GE(fw.at(0).at("cycles").get<uint64_t>(), 100 * fw.at(0).at("events").get<uint64_t>() + 20 * 32);

  // firmware.log: the default image logs one line per HCA at init, at time 0.
  ASSERT_EQ(expected_log.size(), 3u);
  std::ifstream lf(dir / "firmware.log");
  ASSERT_TRUE(lf.good());
  std::vector<std::string> got;
  for (std::string line; std::getline(lf, line);) {
    const std::string prefix = "0.000000 us ";
    ASSERT_EQ(line.rfind(prefix, 0), 0u) << line;
    got.push_back(line.substr(prefix.size()));
  }
  EXPECT_EQ(got, expected_log);
  EXPECT_EQ(got.at(0), "h1 INFO started with firmware_args 'sched=rr,wqe_cycles=20'");
  std::filesystem::remove_all(dir);
}
