// Adaptive multipath in a running fabric (seed 000 Sec. 3.4): routing multipath_adaptive
// gives switches alternatives, switch.path_selection chooses among them per packet, and the
// packets record the outputs they took.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <systemc>

#include "common/fabrics.h"
#include "platform/builder/fabric.h"
#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"
#include "platform/topology/generators.h"

using namespace ibvp;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

// A ring of four switches (tb::ring): h0 on s0 reaches h2 on s2 over s1 or s3, two equal
// shortest paths, so s0 has two alternatives for h2's LID.
Scenario ring_scenario(sw::PathSelection policy, bool bystanders = false) {
  Scenario s = tb::basic_scenario(tb::ring(4, bystanders));
  s.routing = "multipath_adaptive";
  s.switch_cfg.path_selection = policy;
  s.duration = sc_time(500, SC_US);
  return s;
}

// The alternatives of s0 (node 0) for h2's LID, and how many packets took each.
struct S0Use {
  sw::AltTable::Entry entry;
  std::array<uint64_t, sw::AltTable::kMaxAlternatives> use;
};
S0Use s0_use(const Fabric& f, const Scenario& s) {
  const uint16_t dlid = s.topology.nodes[s.topology.find("h2")].lid;
  const sw::Switch* s0 = f.switch_at(s.topology.find("s0"));
  return {s0->alternatives().entry.at(dlid), s0->path_selector().use(dlid)};
}

}  // namespace

TEST(MultipathFlows, LfuSpreadsAHotFlowEvenlyOverTwoEqualPathsAndPacketsRecordTheirRoute) {
  Scenario s = ring_scenario(sw::PathSelection::lfu);
  s.flows.push_back(tb::saturating_flow("hot", "h0", "h2"));
  Fabric f(s);
  sc_core::sc_start(s.duration);
  const S0Use u = s0_use(f, s);
  ASSERT_EQ(u.entry.count, 2);
  EXPECT_GT(u.use[0], 100u);
  EXPECT_LE(std::max(u.use[0], u.use[1]) - std::min(u.use[0], u.use[1]), 1u);
  // Every delivered packet's first recorded output is one of s0's two alternatives, and the
  // packets alternate between them (LFU on a single flow).
  size_t delivered = 0, first_port_a = 0;
  for (const metrics::PacketRecord& r : f.recorder().packets()) {
    if (r.done_ps == 0 || r.drop) continue;
    ++delivered;
    EXPECT_EQ(r.hops, 3);
    EXPECT_TRUE(r.route[0] == u.entry.port[0] || r.route[0] == u.entry.port[1]);
    first_port_a += r.route[0] == std::min(u.entry.port[0], u.entry.port[1]);
  }
  ASSERT_GT(delivered, 200u);
  EXPECT_LE(first_port_a * 2 - delivered + 1, 2u);  // half, give or take one
}

TEST(MultipathFlows, VideoPacketsAlwaysTakeTheFirstAlternative) {
  Scenario s = ring_scenario(sw::PathSelection::lfu);
  FlowConfig v = tb::saturating_flow("video", "h0", "h2");
  v.generator = GeneratorKind::video;
  v.video_frame_bytes = {50'000};
  v.frame_period = sc_time(20, SC_US);
  s.flows.push_back(v);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  const S0Use u = s0_use(f, s);
  ASSERT_EQ(u.entry.count, 2);
  EXPECT_GT(u.use[0], 200u);
  EXPECT_EQ(u.use[1], 0u);
}

TEST(MultipathFlows, MaxCreditMovesAHotFlowOffTheOutputAnotherFlowHolds) {
  // x on s0 floods h1 over s0's only way to s1, and h1 floods h2 over s1's way to s2: the
  // path over s1 is congested, so s1's buffer for s0 stays full and s0's output to s1 lacks
  // credits. With max_credit s0 sends h0's packets for h2 mostly the other way (over s3).
  Scenario s = ring_scenario(sw::PathSelection::max_credit, true);
  s.flows.push_back(tb::saturating_flow("hot", "h0", "h2"));
  s.flows.push_back(tb::saturating_flow("other", "h1", "h2"));
  s.flows.push_back(tb::saturating_flow("cross", "x", "h1"));
  Fabric f(s);
  sc_core::sc_start(s.duration);
  const S0Use u = s0_use(f, s);
  ASSERT_EQ(u.entry.count, 2);
  // The alternative leaving on port 2 goes to s3 (tb::ring: port 1 of sk to port 2 of sk+1).
  const int via_s3 = u.entry.port[0] == 2 ? 0 : 1;
  EXPECT_GT(u.use[via_s3], 2 * u.use[1 - via_s3]) << u.use[0] << " " << u.use[1];
}

TEST(MultipathFlows, RandomSourcePathsSpreadPerTheSeedWhateverTheSwitchPolicy) {
  Scenario s = ring_scenario(sw::PathSelection::first);
  s.seed = 7;
  FlowConfig rd = tb::saturating_flow("rd", "h0", "h2");
  rd.multipath = FlowMultipath::random;
  s.flows.push_back(rd);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  const S0Use u = s0_use(f, s);
  const double n = static_cast<double>(u.use[0] + u.use[1]);
  ASSERT_GT(n, 200);
  // Binomial(n, 1/2): within 5 standard deviations of n/2, though the switch policy is first.
  EXPECT_NEAR(static_cast<double>(u.use[0]), n / 2, 5 * std::sqrt(n) / 2);
  EXPECT_GT(u.use[1], 0u);
}

namespace {

// Runs ibvp-sim on `scenario` into `out`; returns its exit status.
int run_sim(const std::string& scenario, const std::filesystem::path& out) {
  const std::string cmd = std::string(IBVP_BINARY_DIR) + "/ibvp-sim " + scenario + " --out " + out.string() +
                          " --quiet > /dev/null 2>&1";
  return std::system(cmd.c_str());
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

ConfigError refusal(const std::string& yaml) {
  try {
    scenario_from_yaml(yaml, "test.yaml", {}, ".");
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << yaml;
  return ConfigError("", "", 0, "", "");
}

}  // namespace

TEST(MultipathFlows, TheExampleRunsTwiceWithIdenticalPacketsAndPathTables) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ibvp-mpath-" + std::to_string(getpid()));
  const std::string example = std::string(IBVP_SOURCE_DIR) + "/configs/examples/multipath_adaptive.yaml";
  ASSERT_EQ(run_sim(example, dir / "a"), 0);
  ASSERT_EQ(run_sim(example, dir / "b"), 0);
  for (const char* table : {"packets.csv", "paths.csv", "flows.csv"}) {
    const std::string a = read_all(dir / "a" / table);
    EXPECT_GT(a.size(), 100u) << table;
    EXPECT_EQ(a, read_all(dir / "b" / table)) << table;
  }
  // LFU spread the best-effort load: packets left by alternatives other than the first
  // (paths.csv: node,dlid,dst,alternative,port,packets).
  std::istringstream paths(read_all(dir / "a" / "paths.csv"));
  std::string line;
  uint64_t later = 0;
  std::getline(paths, line);
  EXPECT_EQ(line, "node,dlid,dst,alternative,port,packets");
  while (std::getline(paths, line)) {
    std::vector<std::string> f;
    std::istringstream cells(line);
    for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
    ASSERT_EQ(f.size(), 6u) << line;
    if (f[3] != "0") later += std::stoull(f[5]);
  }
  EXPECT_GT(later, 100u);
  std::filesystem::remove_all(dir);
}

TEST(MultipathFlows, RandomPathsNeedTheAdaptiveEngineAndAreRefusedForVideo) {
  const std::string base =
      "name: t\nduration: 1ms\ntopology: {generator: single_switch, hosts: 4}\n";
  const ConfigError e = refusal(base + "flows:\n  - {src: h1, dst: h2, multipath: random}\n");
  EXPECT_EQ(e.key(), "flows[0].multipath");
  EXPECT_NE(e.fix().find("multipath_adaptive"), std::string::npos);
  const ConfigError v = refusal(base + "routing: multipath_adaptive\nflows:\n"
                                       "  - {src: h1, dst: h2, generator: video, video_bit_rate: 1e6, multipath: random}\n");
  EXPECT_EQ(v.key(), "flows[0].multipath");
  // Accepted with the adaptive engine.
  EXPECT_NO_THROW(scenario_from_yaml(base + "routing: multipath_adaptive\nswitch: {path_selection: max_credit}\n"
                                            "flows:\n  - {src: h1, dst: h2, multipath: random}\n",
                                     "test.yaml", {}, "."));
}

namespace {

// Uniform Poisson traffic from every host of the 15-switch example fabric (16 cycles), routed
// multipath_adaptive with `policy`; checks that every packet is delivered or still on its way,
// none dropped (a choice back out of its input or to a dead port would be), and that no packet
// crossed more switches than the fabric has (the alternatives descend: no loop).
void run_irregular(sw::PathSelection policy) {
  topo::RandomIrregularOptions o;
  o.switch_ports = 4;
  o.host_ports = 1;
  o.cfg = link::LinkConfig{};
  Scenario s = tb::basic_scenario(topo::random_irregular(15, 1, o));
  s.routing = "multipath_adaptive";
  s.switch_cfg.path_selection = policy;
  s.duration = sc_time(300, SC_US);
  for (uint32_t e : s.topology.endpoints()) {
    FlowConfig f = tb::saturating_flow("f" + std::to_string(e), s.topology.nodes[e].name, "");
    f.pattern = DestinationPattern::uniform;
    f.generator = GeneratorKind::poisson;
    f.load = 0.6;
    f.payload_bytes = 512;
    s.flows.push_back(f);
  }
  Fabric f(s);
  sc_core::sc_start(s.duration);
  const metrics::Recorder& rec = f.recorder();
  EXPECT_EQ(rec.dropped(), 0u);
  uint64_t delivered = 0, later = 0;
  for (const metrics::PacketRecord& r : rec.packets()) {
    if (r.done_ps == 0) continue;
    ++delivered;
    EXPECT_LE(r.hops, 15);
  }
  EXPECT_GT(delivered, 1000u);
  EXPECT_LE(delivered, rec.injected());
  for (uint32_t n : s.topology.switches()) {
    const sw::Switch* sw = f.switch_at(n);
    for (uint16_t dlid = 0; dlid < sw->alternatives().entry.size(); ++dlid)
      if (sw->alternatives().entry[dlid].count > 1)
        for (uint8_t a = 1; a < sw->alternatives().entry[dlid].count; ++a) later += sw->path_selector().use(dlid)[a];
  }
  EXPECT_GT(later, delivered / 10);  // the policy did leave by other alternatives than the first
}

}  // namespace

TEST(MultipathFlows, LfuOnAFabricWithSixteenCyclesDropsNothingAndNeverLoops) { run_irregular(sw::PathSelection::lfu); }

TEST(MultipathFlows, MaxCreditOnAFabricWithSixteenCyclesDropsNothingAndNeverLoops) {
  run_irregular(sw::PathSelection::max_credit);
}
