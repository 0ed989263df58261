// Whole runs: a fabric that deadlocks is detected and reported with the cycle; the same
// scenario and seed give byte-identical result files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <systemc>

#include "common/fabrics.h"
#include "platform/builder/runner.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::sc_time;

// Five switches in a ring, one host each; every host sends to the host two switches
// clockwise. Min-hop routes are unique (2 hops one way, 3 the other), so the five flows'
// channel dependencies close a cycle around the ring.
TEST(Deadlock, RingWithMinHopRoutesIsDetectedAndItsCycleReported) {
  Scenario s = tb::basic_scenario(tb::ring(5));
  for (int k = 0; k < 5; ++k)
    s.flows.push_back(tb::saturating_flow("f" + std::to_string(k), "h" + std::to_string(k),
                                               "h" + std::to_string((k + 2) % 5), 2048));
  s.duration = sc_time(50, SC_MS);
  s.deadlock_timeout = sc_time(1, SC_MS);
  try {
    run_scenario(s, RunOptions{});
    FAIL() << "the ring did not deadlock";
  } catch (const DeadlockError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("deadlock detected"), std::string::npos) << m;
    // The cycle names the five inter-switch output ports.
    for (int k = 0; k < 5; ++k) EXPECT_NE(m.find("s" + std::to_string(k) + "/1"), std::string::npos) << m;
  }
}

TEST(Determinism, SameScenarioAndSeedGiveByteIdenticalResults) {
  Scenario s = tb::basic_scenario(tb::chain(3));
  s.traffic.enabled = true;
  s.traffic.generator = GeneratorKind::poisson;
  s.traffic.pattern = DestinationPattern::hotspot;
  s.traffic.hotspots = {"h_dst"};
  s.traffic.hotspot_fraction = 0.5;
  s.traffic.load = 0.5;
  s.seed = 42;
  s.duration = sc_time(2, SC_MS);
  s.outputs.rate_window = sc_time(200, sc_core::SC_US);
  s.outputs.rate_step = sc_time(50, sc_core::SC_US);
  s.outputs.rate_ports = {"s1/2"};
  const std::string base = std::filesystem::temp_directory_path() / ("ibvp-det-" + std::to_string(getpid()));
  ASSERT_EQ(tb::run_in_child(s, base + "/a"), 0);
  ASSERT_EQ(tb::run_in_child(s, base + "/b"), 0);
  for (const char* file : {"summary.json", "packets.csv", "flows.csv", "ports.csv", "rates.csv"}) {
    const std::string a = tb::slurp(base + "/a/" + file), b = tb::slurp(base + "/b/" + file);
    EXPECT_FALSE(a.empty()) << file;
    EXPECT_EQ(a, b) << file << " differs between two runs";
  }
  // A different seed gives a different run (the seed is really used).
  s.seed = 43;
  ASSERT_EQ(tb::run_in_child(s, base + "/c"), 0);
  EXPECT_NE(tb::slurp(base + "/a/packets.csv"), tb::slurp(base + "/c/packets.csv"));
  std::filesystem::remove_all(base);
}
