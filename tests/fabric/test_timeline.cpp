// The message timeline (outputs.timeline, platform/metrics/timeline.h): every message of a
// perftest run passes its stages in order, one timeline message per iteration, stage times
// equal the latency parts they stand for, and without the key no file is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <cstdio>
#include <set>
#include <string>
#include <systemc>
#include <tuple>
#include <vector>
#include <unistd.h>

#include <nlohmann/json.hpp>


#include "common/hca_latency.h"
#include "common/testing.h"
#include "platform/builder/runner.h"
#include "platform/metrics/timeline.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;

namespace {

constexpr uint32_t kIterations = 8;

// RC send_bw, one WR at a time, each signaled (tx_depth 1, cq_mod 1), so every message meets
// an idle host bus; firmware costs zero (the latency tests' terms).
std::string scenario_yaml(const std::string& outputs) {
  return "duration: 10ms\n"
         "topology: {generator: single_switch, hosts: 2, link: {width: 4X, speed: EDR, length_m: 2}}\n"
         "switch: {vl_buffer_bytes: 16640}\n"
         "endpoint: {vl_buffer_bytes: 16640}\n"
         "endpoint_model: hca\n"
         "hca: {event_cycles: 0, hal_call_cycles: 0}\n"
         "perftest: {test: send_bw, client: h1, server: h2, sizes: [64], iterations: " +
         std::to_string(kIterations) + ", tx_depth: 1, cq_mod: 1}\n" + outputs;
}

std::string fresh_dir(const std::string& name) {
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("ibvp-timeline-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(d);
  return d.string();
}

using Key = std::tuple<int, int, int>;  // pid (host), QPN, WQE index

// The instants of each message, read from the trace with a JSON parser (one event per
// line, as written).
std::map<Key, std::map<std::string, uint64_t>> read_stages(const std::string& path, size_t& slices) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n", 0), 0u);
  const nlohmann::json trace = nlohmann::json::parse(text);  // throws (fails the test) if invalid
  std::map<Key, std::map<std::string, uint64_t>> out;
  slices = 0;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X" && e.at("cat") == "message") ++slices;
    if (e.at("ph") != "i" || !e.at("args").contains("wqe")) continue;
    // ts is in microseconds, written so that it reads back as ps / 1e6: round to the ps.
    const uint64_t ps = static_cast<uint64_t>(std::llround(e.at("ts").get<double>() * 1e6));
    out[Key{e.at("pid").get<int>(), e.at("args").at("qpn").get<int>(), e.at("args").at("wqe").get<int>()}]
       [e.at("name").get<std::string>()] = ps;
  }
  return out;
}

}  // namespace

TEST(Timeline, EveryMessagePassesItsStagesInOrderOncePerIteration) {
  const std::string dir = fresh_dir("on");
  Scenario s = scenario_from_yaml(scenario_yaml("outputs: {packets_csv: false, timeline: trace/timeline.json}\n"),
                                  "test.yaml");
  RunOptions o;
  o.out_dir = dir;
  run_scenario(s, o);
  size_t slices = 0;
  const auto messages = read_stages(dir + "/trace/timeline.json", slices);
  ASSERT_EQ(messages.size(), kIterations);  // send_bw: the client's SENDs only
  const std::array<const char*, 8> order = {"post", "doorbell", "wqe_fetch", "first_out",
                                            "last_out", "ack", "cqe", "poll"};
  for (const auto& [key, stages] : messages) {
    SCOPED_TRACE("wqe " + std::to_string(std::get<2>(key)));
    for (size_t k = 0; k < order.size(); ++k) {
      ASSERT_TRUE(stages.count(order[k])) << order[k];
      if (k > 0) {
        EXPECT_LE(stages.at(order[k - 1]), stages.at(order[k])) << order[k - 1] << " <= " << order[k];
      }
    }
  }
  EXPECT_EQ(slices, kIterations * (order.size() - 1));  // one slice between consecutive stages

  // Each message meets an idle bus: its stages are the latency parts
  // (tests/common/hca_latency.h) to the picosecond.
  const tb::UdLatencyParts p;
  const auto dma_read = [&](uint64_t n) {
    return tb::pcie_gen3_ps(p.tlp_overhead, p.lanes) + p.bus + p.mem + tb::pcie_gen3_ps(n + p.tlp_overhead, p.lanes) + p.bus;
  };
  for (const auto& [key, t] : messages) {
    SCOPED_TRACE("wqe " + std::to_string(std::get<2>(key)));
    // post_send's call, the 32-bit doorbell store's TLP, the bus latency.
    EXPECT_EQ(t.at("doorbell") - t.at("post"), p.call + tb::pcie_gen3_ps(4 + p.tlp_overhead, p.lanes) + p.bus);
    // One DMA read of a 64-byte WQE.
    EXPECT_EQ(t.at("wqe_fetch") - t.at("doorbell"), dma_read(IBVP_SEND_WQE_BYTES));
    // The 64-byte payload read, then the tx pipeline.
    EXPECT_EQ(t.at("first_out") - t.at("wqe_fetch"), dma_read(64) + p.tx_pipe);
    // One packet: LRH 8 + BTH 12 + 64 + ICRC 4 + VCRC 2 bytes at 80 ps per byte.
    EXPECT_EQ(t.at("last_out") - t.at("first_out"), tb::edr4x_ps(8 + 12 + 64 + 4 + 2));
  }
  std::filesystem::remove_all(dir);
}

// Inline sends (send_lat, 32 bytes inline: the WQE's slot holds the data, 256-byte slots)
// on the ConnectX-4 profile, with BlueFlame (`blueflame_bytes`, the profile's 256) or
// without (0: the firmware reads each slot from the ring). Returns the messages; every one
// of them must pass every stage in order, except that the server never polls its last
// SEND's completion (the test is over for it).
std::map<Key, std::map<std::string, uint64_t>> inline_send_lat(const std::string& name, uint32_t blueflame_bytes) {
  const std::string dir = fresh_dir(name);
  Scenario s = scenario_from_yaml(
      "duration: 10ms\n"
      "topology: {inline: {defaults: {width: 4X, speed: EDR, length_m: 2.0}, switches: [],\n"
      "           hosts: [{name: h1, lid: 1}, {name: h2, lid: 2}], links: [[h1, h2]]}}\n"
      "endpoint: {vl_buffer_bytes: 16640}\n"
      "endpoint_model: hca\n"
      "hca: {profile: connectx4_edr, blueflame_bytes: " + std::to_string(blueflame_bytes) + "}\n"
      "perftest: {test: send_lat, client: h1, server: h2, sizes: [32], iterations: " + std::to_string(kIterations) +
      ", qp_type: RC, inline_size: 188}\n"
      "outputs: {packets_csv: false, timeline: timeline.json}\n",
      "test.yaml");
  RunOptions o;
  o.out_dir = dir;
  run_scenario(s, o);
  size_t slices = 0;
  const auto messages = read_stages(dir + "/timeline.json", slices);
  std::filesystem::remove_all(dir);
  // Ping-pong: each host sends once per iteration, and nothing else appears (a fetch
  // misplaced by the slot size would make messages of WQEs never posted).
  EXPECT_EQ(messages.size(), 2 * kIterations);
  const std::array<const char*, 8> order = {"post", "doorbell", "wqe_fetch", "first_out",
                                            "last_out", "ack", "cqe", "poll"};
  size_t unpolled = 0;
  for (const auto& [key, stages] : messages) {
    SCOPED_TRACE("host " + std::to_string(std::get<0>(key)) + " wqe " + std::to_string(std::get<2>(key)));
    const char* prev = nullptr;
    for (const char* stage : order) {
      if (!stages.count(stage)) {
        EXPECT_STREQ(stage, "poll") << "missing";
        ++unpolled;
        continue;
      }
      if (prev != nullptr) {
        EXPECT_LE(stages.at(prev), stages.at(stage)) << prev << " <= " << stage;
      }
      prev = stage;
    }
  }
  EXPECT_LE(unpolled, 1u);
  return messages;
}

TEST(Timeline, EveryInlineSendByBlueFlameHasItsStagesInOrderWithItsWqeArrivingAtTheDoorbell) {
  const auto messages = inline_send_lat("blueflame", 256);
  for (const auto& [key, t] : messages) {
    SCOPED_TRACE("wqe " + std::to_string(std::get<2>(key)));
    // The BlueFlame write carried the WQE with its doorbell: no read of the ring.
    EXPECT_EQ(t.at("wqe_fetch"), t.at("doorbell"));
  }
}

TEST(Timeline, EveryInlineSendReadFromTheRingHasItsStagesInOrderWithOneReadPerWqe) {
  const auto messages = inline_send_lat("ring", 0);
  for (const auto& [key, t] : messages) {
    SCOPED_TRACE("wqe " + std::to_string(std::get<2>(key)));
    // The firmware read the WQE's 256-byte slot after the doorbell (a PCIe round trip).
    EXPECT_GT(t.at("wqe_fetch"), t.at("doorbell") + 400'000);
  }
}

TEST(Timeline, WithoutTheKeyNoTimelineIsWritten) {
  const std::string dir = fresh_dir("off");
  Scenario s = scenario_from_yaml(scenario_yaml("outputs: {packets_csv: false}\n"), "test.yaml");
  EXPECT_TRUE(s.outputs.timeline.empty());
  RunOptions o;
  o.out_dir = dir;
  run_scenario(s, o);
  std::set<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    files.insert(std::filesystem::relative(e.path(), dir).string());
  // A perftest run also writes perftest.txt, perftest's own report (docs/perftest.md).
  EXPECT_EQ(files, (std::set<std::string>{"flows.csv", "flows.parquet", "ports.csv", "ports.parquet", "rates.csv",
                                          "rates.parquet", "run.json", "summary.json", "firmware.log",
                                          "perftest.txt"}));
  std::filesystem::remove_all(dir);
}

// Perfetto and chrome://tracing draw the X slices of one track as a stack: two slices of a
// track must be disjoint or nested. A send_bw run with 16 WQEs in flight overlaps the
// messages of one QP (post of the next before the CQE of the previous), so each message
// needs a slot track of its own while it lives; the firmware core handles one event at a
// time on its own track.
TEST(Timeline, NoTwoSlicesOfOneTrackPartiallyOverlapInAPipelinedSendBwRun) {
  const std::string dir = fresh_dir("tracks");
  Scenario s = scenario_from_yaml(
      "duration: 10ms\n"
      "topology: {generator: single_switch, hosts: 2, link: {width: 4X, speed: EDR, length_m: 2}}\n"
      "endpoint_model: hca\n"
      "perftest: {test: send_bw, client: h1, server: h2, sizes: [4096], iterations: 64, tx_depth: 16}\n"
      "outputs: {packets_csv: false, timeline: timeline.json}\n",
      "test.yaml");
  RunOptions o;
  o.out_dir = dir;
  run_scenario(s, o);
  std::ifstream f(dir + "/timeline.json");
  const nlohmann::json trace = nlohmann::json::parse(f);
  struct Slice {
    uint64_t start, end;
  };
  std::map<std::pair<int, int>, std::vector<Slice>> tracks;  // (pid, tid) -> X slices
  std::map<std::pair<int, int>, std::string> names;          // thread names
  std::map<int, std::set<int>> slots_of_qp;                  // message slices' tids per QPN
  size_t firmware_slices = 0;
  uint64_t firmware_cycles = 0;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      names[{e.at("pid").get<int>(), e.at("tid").get<int>()}] = e.at("args").at("name").get<std::string>();
    if (e.at("ph") != "X") continue;
    const auto ps = [](const nlohmann::json& v) { return static_cast<uint64_t>(std::llround(v.get<double>() * 1e6)); };
    const uint64_t start = ps(e.at("ts"));
    tracks[{e.at("pid").get<int>(), e.at("tid").get<int>()}].push_back({start, start + ps(e.at("dur"))});
    if (e.at("cat") == "message") slots_of_qp[e.at("args").at("qpn").get<int>()].insert(e.at("tid").get<int>());
    if (e.at("cat") == "firmware") {
      ++firmware_slices;
      firmware_cycles += e.at("args").at("cycles").get<uint64_t>();
      EXPECT_EQ(names.at({e.at("pid").get<int>(), e.at("tid").get<int>()}), "firmware core");
    }
  }
  size_t checked = 0;
  for (auto& [track, slices] : tracks) {
    SCOPED_TRACE(names.count(track) ? names.at(track) : "unnamed track");
    ASSERT_TRUE(names.count(track));  // every track is named
    // Sorted by start, longest first at equal starts: each slice must end by the end of every
    // open slice that contains its start, or start at or after its end.
    std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::vector<uint64_t> open;  // ends of the enclosing slices
    for (const Slice& sl : slices) {
      while (!open.empty() && open.back() <= sl.start) open.pop_back();
      if (!open.empty()) {
        EXPECT_LE(sl.end, open.back()) << "slice [" << sl.start << ", " << sl.end << "] ps crosses the end of its parent";
      }
      open.push_back(sl.end);
      ++checked;
    }
  }
  EXPECT_GT(checked, 64u * 7);
  // The property is not met by accident: the client's QP needed several slots.
  size_t max_slots = 0;
  for (const auto& [qpn, tids] : slots_of_qp) max_slots = std::max(max_slots, tids.size());
  EXPECT_GE(max_slots, 2u);
  // Firmware events: every doorbell, command, packet and completion of both hosts, each
  // charged at least hca.event_cycles (100).
  EXPECT_GT(firmware_slices, 64u);
  EXPECT_GE(firmware_cycles, 100 * firmware_slices);
  std::filesystem::remove_all(dir);
}
