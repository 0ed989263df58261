// Video flows on HCA hosts (issue 11; platform/apps/flow_streams.h, run_video): each frame
// posted at its creation time as one-packet SENDs, the packets tagged with their frame by
// the HCA (Hca::tag_frame), the recorder's frame metrics read as on fabric-only endpoints.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <systemc>
#include <unistd.h>
#include <vector>

#include "common/fabrics.h"
#include "platform/apps/flow_streams.h"
#include "platform/builder/fabric.h"
#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"
#include "platform/workload/video_frames.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::sc_time;

namespace {

constexpr uint64_t kMs = 1'000'000'000;  // ps

// 4X SDR: 1 GB/s of data.
const link::LinkConfig kSdr{link::Width::x4, link::Speed::sdr, 1.0, 5.0};

Scenario hca_scenario(uint32_t hosts, FlowTransport transport = FlowTransport::rc) {
  Scenario s = tb::basic_scenario(tb::star(hosts, kSdr));
  s.endpoint_model = EndpointModel::hca;
  s.hca_host.flow_transport = transport;
  s.outputs.rate_window = sc_core::SC_ZERO_TIME;
  return s;
}

FlowConfig video_flow(const std::string& name, const std::string& src, const std::string& dst,
                      std::vector<uint32_t> frame_bytes, uint64_t period_ps = kMs) {
  FlowConfig f = tb::saturating_flow(name, src, dst);
  f.generator = GeneratorKind::video;
  f.video_frame_bytes = std::move(frame_bytes);
  f.frame_period = sc_time::from_value(period_ps);
  return f;
}

// An idle fabric: frames of the trace, one per ms for 30.5 ms.
void expect_every_frame_in_order(FlowTransport transport) {
  const std::vector<uint32_t> trace = {100'000, 1'000, 20'000};  // 49, 1 and 10 packets of 2048 bytes
  Scenario s = hca_scenario(2, transport);
  s.flows.push_back(video_flow("v", "h1", "h2", trace));
  s.duration = sc_time(30.5, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  EXPECT_EQ(f.flow_streams()->error(), "");
  const metrics::FrameStreamStats* v = f.recorder().video_stats(0);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->frames(), 31u);  // duration / period: frames created at 0, 1, ..., 30 ms
  EXPECT_EQ(v->missed(), 0u);
  EXPECT_EQ(v->reordered(), 0u);
  EXPECT_EQ(f.recorder().video_frames_in_progress(0), 0u);
  uint64_t packets = 0;
  for (size_t k = 0; k <= 30; ++k) packets += workload::split_frame(trace[k % trace.size()], 2048).packets;
  EXPECT_EQ(f.recorder().flows()[0].delivered, packets);
  EXPECT_EQ(f.recorder().flows()[0].injected, packets);
  // Frames complete one period apart, give or take the difference of two frames' sizes
  // on the link (99 KB at 1 GB/s: 0.1 ms).
  EXPECT_NEAR(v->inter_frame_mean_ps(), static_cast<double>(kMs), 0.01 * kMs);
}

}  // namespace

TEST(HcaVideo, AnIdleFabricDeliversEveryFrameInOrderWithoutMissesOverRc) {
  expect_every_frame_in_order(FlowTransport::rc);
}

TEST(HcaVideo, AnIdleFabricDeliversEveryFrameInOrderWithoutMissesOverUd) {
  expect_every_frame_in_order(FlowTransport::ud);
}

TEST(HcaVideo, EqualFramesCompleteExactlyOnePeriodApart) {
  // Starting at 1 ms, after the QP set-up at time zero, which delays a frame posted at 0.
  Scenario s = hca_scenario(2);
  s.flows.push_back(video_flow("v", "h1", "h2", {50'000}));
  s.flows[0].start = sc_time(1, SC_MS);
  s.duration = sc_time(20.5, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  const metrics::FrameStreamStats* v = f.recorder().video_stats(0);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->frames(), 20u);  // created at 1, 2, ..., 20 ms
  EXPECT_EQ(v->missed(), 0u);
  EXPECT_NEAR(v->inter_frame_mean_ps(), static_cast<double>(kMs), 1e-3 * kMs);
  EXPECT_LT(v->inter_frame_sd_ps(), 1e-3 * kMs);
}

TEST(HcaVideo, AStreamAboveItsLinkRateMissesDeadlinesAndOneBelowDoesNot) {
  // 1.5 MB per ms is 1.5 GB/s on a 1 GB/s link: frame k completes about 1.5 (k + 1) ms
  // after the start, later than its deadline from the second frame on. 0.5 MB per ms fits.
  // One process, one elaboration: the slow stream and the fast one on two hosts' links.
  Scenario s = hca_scenario(4);
  s.flows.push_back(video_flow("fits", "h1", "h2", {500'000}));
  s.flows.push_back(video_flow("over", "h3", "h4", {1'500'000}));
  s.duration = sc_time(12.9, SC_MS);  // the frame created at 12 ms is in by 12.6 ms
  Fabric f(s);
  sc_core::sc_start(s.duration);
  EXPECT_EQ(f.flow_streams()->error(), "");
  const metrics::FrameStreamStats* fits = f.recorder().video_stats(0);
  const metrics::FrameStreamStats* over = f.recorder().video_stats(1);
  ASSERT_TRUE(fits && over);
  EXPECT_EQ(fits->frames(), 13u);
  EXPECT_EQ(fits->missed(), 0u);
  EXPECT_GE(over->frames(), 7u);  // 12.9 ms at 1.5 ms a frame
  EXPECT_GT(over->dmp(), 0.8);
  EXPECT_GT(over->dmt_ps(), 0.0);
}

TEST(HcaVideoLoader, AcceptsVideoFlowsOnHcaHosts) {
  const Scenario s = scenario_from_yaml(
      "duration: 1ms\n"
      "topology: {generator: single_switch, hosts: 2}\n"
      "endpoint_model: hca\n"
      "flows: [{src: h1, dst: h2, generator: video, video_bit_rate: 1e6}]\n",
      "test.yaml", {}, ".");
  ASSERT_EQ(s.flows.size(), 1u);
  EXPECT_EQ(s.flows[0].generator, GeneratorKind::video);
}

TEST(HcaVideoLoader, RefusesPiecesLargerThanTheFlowMtu) {
  try {
    scenario_from_yaml(
        "duration: 1ms\n"
        "topology: {generator: single_switch, hosts: 2}\n"
        "endpoint_model: hca\n"
        "hca: {flow_mtu: 1024}\n"
        "flows: [{src: h1, dst: h2, generator: video, video_bit_rate: 1e6, payload_bytes: 2048}]\n",
        "test.yaml", {}, ".");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "flows[0].payload_bytes") << e.what();
    EXPECT_NE(std::string(e.what()).find("1024"), std::string::npos) << e.what();
  }
}

namespace {
std::string run_sim(const std::filesystem::path& yaml, const std::filesystem::path& out) {
  const std::string cmd =
      std::string(IBVP_BINARY_DIR) + "/ibvp-sim " + yaml.string() + " --out " + out.string() + " --quiet 2>&1";
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
}  // namespace

TEST(HcaVideo, TwoRunsOfTheSameScenarioWriteTheSameResults) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ibvp-hcavideo-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "v.yaml") << "name: v\n"
                                   "seed: 5\n"
                                   "duration: 70ms\n"
                                   "topology: {generator: single_switch, hosts: 3, link: {width: 4X, speed: SDR}}\n"
                                   "endpoint_model: hca\n"
                                   "flows:\n"
                                   "  - {name: v, src: h1, dst: h3, generator: video, video_bit_rate: 40e6}\n"
                                   "  - {name: be, src: h2, dst: h3, generator: poisson, load: 0.5}\n";
  ASSERT_EQ(run_sim(dir / "v.yaml", dir / "a"), "");
  ASSERT_EQ(run_sim(dir / "v.yaml", dir / "b"), "");
  for (const char* file : {"summary.json", "flows.csv"}) {
    const std::string a = slurp(dir / "a" / file);
    EXPECT_FALSE(a.empty()) << file;
    EXPECT_EQ(a, slurp(dir / "b" / file)) << file;
  }
  EXPECT_NE(slurp(dir / "a" / "summary.json").find("\"frames\""), std::string::npos);
  std::filesystem::remove_all(dir);
}
