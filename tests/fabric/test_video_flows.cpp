// Video flows on fabric-only endpoints (issue 11): frames created one period apart, split
// into packets, reassembled at the receiver and judged by seed 000's deadline rule
// (platform/workload/video_source.h, platform/metrics/frame_metrics.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <string>
#include <systemc>
#include <vector>

#include "common/fabrics.h"
#include "platform/builder/fabric.h"
#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"
#include "platform/workload/video_frames.h"
#include "platform/workload/video_source.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

constexpr uint64_t kMs = 1'000'000'000;  // ps

FlowConfig video_flow(const std::string& name, const std::string& src, const std::string& dst,
                      std::vector<uint32_t> frame_bytes, uint64_t period_ps = kMs) {
  FlowConfig f = tb::saturating_flow(name, src, dst);
  f.generator = GeneratorKind::video;
  f.video_frame_bytes = std::move(frame_bytes);
  f.frame_period = sc_time::from_value(period_ps);
  return f;
}

ConfigError error_of(const std::string& yaml, const std::string& dir = ".") {
  try {
    scenario_from_yaml(yaml, "test.yaml", {}, dir);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << yaml;
  return ConfigError("", "", 0, "", "");
}

const std::string kFabric =
    "name: t\n"
    "duration: 1ms\n"
    "topology: {generator: single_switch, hosts: 4}\n";

}  // namespace

TEST(VideoFlows, AnUnloadedFabricMeetsEveryDeadlineAndFramesArriveOnePeriodApart) {
  Scenario s = tb::basic_scenario(tb::star(2));
  s.flows.push_back(video_flow("v", "h1", "h2", {100'000}));  // 49 packets a frame, 10 % of the link
  s.duration = sc_time(30.5, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  const metrics::FrameStreamStats* v = f.recorder().video_stats(0);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->frames(), 31u);  // created at 0, 1, ..., 30 ms
  EXPECT_EQ(v->missed(), 0u);
  EXPECT_EQ(v->dmp(), 0.0);
  EXPECT_NEAR(v->inter_frame_mean_ps(), static_cast<double>(kMs), 2000.0);  // within 2 ns
  EXPECT_LT(v->inter_frame_sd_ps(), 2000.0);
}

TEST(VideoFlows, FramesOfDifferentSizesAllMeetTheirDeadlinesOnAnUnloadedFabric) {
  // Each frame is due one period after its creation (the recorder anchors the deadlines on
  // the source's clock): a frame larger than the first one takes longer to arrive and is
  // still on time. Anchored on the first arrival instead, the 100 KB frames after the 1 KB
  // first one would all miss by their extra serialization time.
  Scenario s = tb::basic_scenario(tb::star(2));
  s.flows.push_back(video_flow("v", "h1", "h2", {1'000, 100'000, 20'000}));
  s.duration = sc_time(30.5, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  const metrics::FrameStreamStats* v = f.recorder().video_stats(0);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->frames(), 31u);
  EXPECT_EQ(v->missed(), 0u);
}

TEST(VideoFlows, FramesAndPacketsAreConserved) {
  const std::vector<uint32_t> trace = {5000, 100, 4096, 2048};  // the trace loops
  Scenario s = tb::basic_scenario(tb::star(2));
  s.flows.push_back(video_flow("v", "h1", "h2", trace));
  s.duration = sc_time(10.5, SC_MS);  // frames 0..10
  Fabric f(s);
  sc_core::sc_start(s.duration);
  uint64_t packets = 0;
  for (size_t k = 0; k <= 10; ++k) packets += workload::split_frame(trace[k % trace.size()], 2048).packets;
  EXPECT_EQ(f.recorder().flows()[0].injected, packets);
  EXPECT_EQ(f.recorder().flows()[0].delivered, packets);
  ASSERT_NE(f.recorder().video_stats(0), nullptr);
  EXPECT_EQ(f.recorder().video_stats(0)->frames(), 11u);
  EXPECT_EQ(f.recorder().video_frames_in_progress(0), 0u);
  EXPECT_EQ(f.recorder().video_stats(0)->reordered(), 0u);
}

TEST(VideoFlows, ASaturatedDestinationLinkMissesDeadlines) {
  // 1X SDR: 250 MB/s of data. Four streams of 100 KB per ms (100 MB/s each) into one host.
  link::LinkConfig slow;
  slow.width = link::Width::x1;
  Scenario s = tb::basic_scenario(tb::star(5, slow));
  for (int i = 1; i <= 4; ++i)
    s.flows.push_back(video_flow("v" + std::to_string(i), "h" + std::to_string(i), "h5", {100'000}));
  s.duration = sc_time(20, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  metrics::FrameClassStats all;
  for (uint32_t i = 0; i < 4; ++i) {
    ASSERT_NE(f.recorder().video_stats(i), nullptr);
    all.add(*f.recorder().video_stats(i));
  }
  EXPECT_GT(all.frames(), 0u);
  EXPECT_GT(all.dmp(), 0.0);
  EXPECT_GT(all.dmt_ps(), 0.0);
}

TEST(VideoFlows, OtherFlowsHaveNoFrameStatistics) {
  Scenario s = tb::basic_scenario(tb::star(3));
  s.flows.push_back(tb::saturating_flow("bulk", "h1", "h2"));
  s.flows.push_back(video_flow("v", "h3", "h2", {3000}));
  s.duration = sc_time(2.5, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  EXPECT_EQ(f.recorder().video_stats(0), nullptr);
  ASSERT_NE(f.recorder().video_stats(1), nullptr);
  EXPECT_EQ(f.recorder().video_stats(1)->frames(), 3u);
}

TEST(VideoFlowLoader, RefusesBothOrNeitherFrameSource) {
  ConfigError e = error_of(kFabric + "flows: [{src: h1, dst: h2, generator: video}]\n");
  EXPECT_EQ(e.key(), "flows[0].video_trace") << e.what();
  EXPECT_NE(std::string(e.what()).find("video_bit_rate"), std::string::npos) << e.what();
  e = error_of(kFabric + "flows: [{src: h1, dst: h2, generator: video, video_bit_rate: 1e6, video_trace: x.txt}]\n");
  EXPECT_NE(e.key().find("video_"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("both"), std::string::npos) << e.what();
  e = error_of(kFabric + "flows: [{src: h1, dst: h2, generator: poisson, load: 0.1, video_bit_rate: 1e6}]\n");
  EXPECT_EQ(e.key(), "flows[0].video_bit_rate") << e.what();
  e = error_of(kFabric + "flows: [{src: h1, dst: h2, generator: video, video_bit_rate: 1e6, video_gop: PBB}]\n");
  EXPECT_EQ(e.key(), "flows[0].video_gop") << e.what();
}

TEST(VideoFlowLoader, ABadTraceNamesTheFileAndLine) {
  const auto dir = std::filesystem::temp_directory_path() / ("ibvp_video_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "bad.txt") << "# frames\n0 I 1000\n1 X 200\n";
  const ConfigError e =
      error_of(kFabric + "flows: [{src: h1, dst: h2, generator: video, video_trace: bad.txt}]\n", dir.string());
  EXPECT_NE(e.file().find("bad.txt"), std::string::npos) << e.what();
  EXPECT_EQ(e.line(), 3) << e.what();
  const ConfigError missing =
      error_of(kFabric + "flows: [{src: h1, dst: h2, generator: video, video_trace: none.txt}]\n", dir.string());
  EXPECT_EQ(missing.key(), "flows[0].video_trace") << missing.what();
  std::filesystem::remove_all(dir);
}

TEST(VideoFlowLoader, LoadsATraceRelativeToTheScenarioFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("ibvp_video_ok_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "t.txt") << "0 I 1000\n1 B 200\n";
  const Scenario s = scenario_from_yaml(
      kFabric + "flows: [{src: h1, dst: h2, generator: video, video_trace: t.txt, frame_period: 1ms}]\n", "test.yaml",
      {}, dir.string());
  ASSERT_EQ(s.flows.size(), 1u);
  EXPECT_EQ(s.flows[0].video_frame_bytes, (std::vector<uint32_t>{1000, 200}));
  EXPECT_EQ(s.flows[0].frame_period.value(), kMs);
  std::filesystem::remove_all(dir);
}

TEST(VideoFlows, FramesCreatedBeforeTheWarmupAreNotCounted) {
  Scenario s = tb::basic_scenario(tb::star(2));
  s.flows.push_back(video_flow("v", "h1", "h2", {10'000}));
  s.warmup = sc_time(5.5, SC_MS);
  s.duration = sc_time(10.5, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  // Frames 0..10 are delivered; those created at 6..10 ms are measured.
  EXPECT_EQ(f.recorder().flows()[0].delivered, 11u * workload::split_frame(10'000, 2048).packets);
  EXPECT_EQ(f.recorder().video_stats(0)->frames(), 5u);
  EXPECT_EQ(f.recorder().video_frames_in_progress(0), 0u);
}

namespace {
// Payload sizes of the first packets a video source hands out, taken when due.
std::vector<uint32_t> first_packets(const std::string& name, uint32_t flow_index, size_t n) {
  FlowConfig v = video_flow(name, "h1", "h2", {});
  v.video_bit_rate = 20e6;  // the built-in MPEG-2 generator
  workload::VideoSource src(v, flow_index, {1, 2}, 7);
  std::vector<uint32_t> sizes;
  ep::PacketSpec spec;
  while (sizes.size() < n) {
    const uint64_t t = src.next_ready_ps(0);
    sizes.push_back(src.next_payload_bytes());
    src.take(t, spec);
    EXPECT_EQ(spec.created_ps, uint64_t{spec.frame} * kMs);  // frame k at k periods
  }
  return sizes;
}
}  // namespace

TEST(VideoFlows, GeneratedFrameSizesDependOnTheFlowsNameNotOnItsIndex) {
  const std::vector<uint32_t> a = first_packets("gen", 0, 2000);
  EXPECT_EQ(first_packets("gen", 5, 2000), a);
  EXPECT_NE(first_packets("other", 0, 2000), a);
}
