// Trace workloads: every listed packet is sent at its time, to its destination, with its
// size, and arrives after the unloaded latency of that size.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <systemc>

#include "common/fabrics.h"
#include "platform/builder/fabric.h"
#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::sc_time;

TEST(Trace, EachPacketArrivesAtItsTimePlusUnloadedLatencyForItsSize) {
  Scenario s = tb::basic_scenario(tb::star(3));
  // (time, src, dst, payload, sl): spaced so that they never meet in the switch.
  s.trace.packets = {{1'000'000, 1, 3, 100, 0}, {5'000'000, 2, 3, 2048, 0}, {9'000'000, 1, 2, 0, 0}};
  s.duration = sc_time(1, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  const auto& recs = f.recorder().packets();
  ASSERT_EQ(recs.size(), 3u);
  const uint32_t payloads[] = {100, 2048, 0};
  for (size_t i = 0; i < 3; ++i) {
    // UD SEND Only: 34 bytes of headers and CRCs + payload + pad; 4X SDR: 1 byte per ns;
    // two 1-m cables (5 ns each) and a 100 ns pipeline.
    const uint64_t wire = 34 + payloads[i] + (4 - payloads[i] % 4) % 4;
    EXPECT_EQ(recs[i].wire_bytes, wire);
    EXPECT_EQ(recs[i].done_ps - recs[i].created_ps, (wire + 10 + 100) * 1000) << "packet " << i;
    EXPECT_EQ(recs[i].dst_node, s.trace.packets[i].dst);
  }
  // Flows are per (source, SL): h1 sent two packets, h2 one.
  ASSERT_EQ(f.flows().size(), 2u);
  EXPECT_EQ(f.flows()[0].name, "trace/h1/sl0");
  EXPECT_EQ(f.recorder().flows()[0].delivered, 2u);
  EXPECT_EQ(f.recorder().flows()[1].delivered, 1u);
}

TEST(Trace, FileRowsWithUnknownEndpointsAreRefusedWithFileLineAndColumn) {
  const auto dir = std::filesystem::temp_directory_path() / ("ibvp-trace-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "t.csv") << "time_s,src,dst,payload_bytes,sl\n1e-6,h1,h2,64,0\n2e-6,h1,nobody,64,0\n";
  const std::string yaml =
      "duration: 1ms\ntopology: {generator: single_switch, hosts: 2}\ntrace: {file: t.csv}\n";
  try {
    scenario_from_yaml(yaml, (dir / "s.yaml").string(), {}, dir.string());
    FAIL() << "accepted a trace naming an unknown endpoint";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.key(), "dst");
    EXPECT_NE(e.file().find("t.csv"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("nobody"), std::string::npos);
  }
  std::ofstream(dir / "t.csv") << "time_s,src,dst,payload_bytes,sl\n2e-6,h2,h1,64,0\n1e-6,h1,h2,64,0\n";
  const Scenario s = scenario_from_yaml(yaml, (dir / "s.yaml").string(), {}, dir.string());
  ASSERT_EQ(s.trace.packets.size(), 2u);
  EXPECT_EQ(s.trace.packets[0].time_ps, 1'000'000u);  // sorted by time
  std::filesystem::remove_all(dir);
}
