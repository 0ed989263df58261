// Topology: validation rules, the YAML format (errors with file, key, line and fix; save and
// load give the same fabric) and the generators (seed 001 random irregular fabrics, seed 004
// Fig. 1, regular families).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "common/testing.h"
#include "platform/params/config_error.h"
#include "platform/topology/generators.h"
#include "platform/topology/ibnetdiscover.h"
#include "platform/topology/topology.h"
#include "platform/topology/topology_yaml.h"

namespace ibvp::topo {
namespace {

// 1-based line of the first line containing `marker`, counted here rather than trusted
// from the loader.
int line_containing(const std::string& text, const std::string& marker) {
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find(marker) != std::string::npos) return n;
  ADD_FAILURE() << "marker not in text: " << marker;
  return -1;
}

ConfigError yaml_error(const std::string& text, const std::string& source = "bad.yaml") {
  try {
    topology_from_yaml(YAML::Load(text), source);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError for:\n" << text;
  return ConfigError("", "", 0, "", "");
}

ConfigError validate_error(const Topology& t) {
  try {
    t.validate();
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "validate() accepted the topology";
  return ConfigError("", "", 0, "", "");
}

// An error a user can act on names the file, the item and the fix.
void expect_actionable(const ConfigError& e, const std::string& file, const std::string& item) {
  const std::string what = e.what();
  EXPECT_NE(what.find(file), std::string::npos) << what;
  EXPECT_NE(what.find(item), std::string::npos) << what;
  EXPECT_NE(what.find("fix"), std::string::npos) << what;
  EXPECT_FALSE(e.fix().empty()) << what;
  EXPECT_EQ(e.key(), item) << what;
}

// Whole topology as text: a failed comparison shows which node or link differs.
std::string describe(const Topology& t) {
  std::ostringstream s;
  for (const Node& n : t.nodes)
    s << (n.kind == NodeKind::switch_node ? "switch " : "host ") << n.name << " ports " << n.num_ports << " lid "
      << n.lid << " lmc " << int(n.lmc) << " guid " << n.guid << "\n";
  for (const Link& l : t.links)
    s << t.nodes[l.a.node].name << "/" << l.a.port << " - " << t.nodes[l.b.node].name << "/" << l.b.port << " "
      << link::width_name(l.cfg.width) << " " << link::speed_name(l.cfg.speed) << " " << l.cfg.length_m << " m "
      << l.cfg.propagation_ns_per_m << " ns/m\n";
  return s.str();
}

// sw1 (8 ports) with hosts h1, h2; built in memory, LIDs given.
Topology small_fabric() {
  Topology t;
  t.source = "mem.yaml";
  t.nodes = {{"sw1", NodeKind::switch_node, 8, 1, 0, 0, 0, {}}, {"h1", NodeKind::endpoint, 1, 2, 0, 0, 0, {}},
             {"h2", NodeKind::endpoint, 1, 4, 1, 0, 0, {}}};
  t.links = {{{0, 1}, {1, 1}, {}}, {{0, 2}, {2, 1}, {}}};
  t.index();
  return t;
}

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "/" + name; }

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

// ---------------------------------------------------------------------------------------
// Validation of topologies built in memory

TEST(TopologyValidate, SmallFabricIsAccepted) { EXPECT_NO_THROW(small_fabric().validate()); }

TEST(TopologyValidate, PortUsedTwiceNamesBothLinkEnds) {
  Topology t = small_fabric();
  t.nodes.push_back({"h3", NodeKind::endpoint, 1, 6, 0, 0, 0, {}});
  t.links.push_back({{0, 2}, {3, 1}, {}});  // sw1/2 is already cabled to h2
  const ConfigError e = validate_error(t);
  expect_actionable(e, "mem.yaml", "links[2].a");
  EXPECT_NE(std::string(e.what()).find("links[1].a"), std::string::npos) << e.what();
}

TEST(TopologyValidate, LinkToUnknownNodeIsRefused) {
  Topology t = small_fabric();
  t.links.push_back({{0, 3}, {7, 1}, {}});
  expect_actionable(validate_error(t), "mem.yaml", "links[2].b");
}

TEST(TopologyValidate, DisconnectedFabricNamesAnUnreachableNode) {
  Topology t = small_fabric();
  t.nodes.push_back({"sw2", NodeKind::switch_node, 4, 8, 0, 0, 0, {}});
  t.nodes.push_back({"h3", NodeKind::endpoint, 1, 9, 0, 0, 0, {}});
  t.links.push_back({{3, 1}, {4, 1}, {}});
  const ConfigError e = validate_error(t);
  expect_actionable(e, "mem.yaml", "nodes.sw2");
  EXPECT_NE(std::string(e.what()).find("not connected"), std::string::npos) << e.what();
}

TEST(TopologyValidate, DuplicateLidIsRefused) {
  Topology t = small_fabric();
  t.nodes[1].lid = 1;  // the switch's LID
  expect_actionable(validate_error(t), "mem.yaml", "nodes.h1.lid");
}

TEST(TopologyValidate, LidInsideAnotherNodesLmcRangeIsRefused) {
  Topology t = small_fabric();
  t.nodes[2].lmc = 2;  // h2 answers to 4..7
  t.nodes[1].lid = 6;
  expect_actionable(validate_error(t), "mem.yaml", "nodes.h2.lid");
}

TEST(TopologyValidate, PortBeyondCountSaysHowToFixIt) {
  Topology t = small_fabric();
  t.nodes.push_back({"h3", NodeKind::endpoint, 1, 6, 0, 0, 0, {}});
  t.links.push_back({{0, 9}, {3, 1}, {}});
  const ConfigError e = validate_error(t);
  expect_actionable(e, "mem.yaml", "links[2].a");
  EXPECT_EQ(e.problem(), "port 9 of switch sw1 is beyond its 8 ports");
  EXPECT_EQ(e.fix(), "raise ports: or use a port 1..8");
}

TEST(TopologyValidate, DuplicateNameIsRefused) {
  Topology t = small_fabric();
  t.nodes[2].name = "h1";
  expect_actionable(validate_error(t), "mem.yaml", "nodes.h1");
}

TEST(TopologyValidate, LidZeroIsRefused) {
  Topology t = small_fabric();
  t.nodes[1].lid = 0;
  expect_actionable(validate_error(t), "mem.yaml", "nodes.h1.lid");
}

TEST(TopologyValidate, MulticastLidIsRefused) {
  Topology t = small_fabric();
  t.nodes[1].lid = 0xC000;
  expect_actionable(validate_error(t), "mem.yaml", "nodes.h1.lid");
}

TEST(TopologyValidate, BaseLidNotAlignedToLmcIsRefused) {
  Topology t = small_fabric();
  t.nodes[2].lid = 6;
  t.nodes[2].lmc = 2;  // path bits are the low 2 bits: the base must be a multiple of 4
  expect_actionable(validate_error(t), "mem.yaml", "nodes.h2.lid");
}

TEST(TopologyValidate, EndpointCabledOnPortTwoIsRefused) {
  Topology t = small_fabric();
  t.nodes[1].num_ports = 2;
  t.links[0].b.port = 2;
  expect_actionable(validate_error(t), "mem.yaml", "links[0].b");
}

TEST(TopologyValidate, LoopbackCableOnASwitchIsAccepted) {
  // ibnetdiscover dumps of real fabrics contain them (shared/topologies/README.md).
  Topology t = small_fabric();
  t.links.push_back({{0, 5}, {0, 6}, {}});
  t.index();
  EXPECT_NO_THROW(t.validate());
  EXPECT_EQ(t.peer(0, 5), (PortRef{0, 6}));
  EXPECT_EQ(t.peer(0, 6), (PortRef{0, 5}));
}

TEST(TopologyLookup, FindLinkAtPeerAndLids) {
  const Topology t = small_fabric();
  EXPECT_EQ(t.find("h2"), 2u);
  EXPECT_EQ(t.find("nope"), Topology::npos);
  EXPECT_EQ(t.link_at(0, 2), 1);
  EXPECT_EQ(t.link_at(0, 3), -1);
  EXPECT_EQ(t.link_at(0, 200), -1);
  EXPECT_EQ(t.peer(2, 1), (PortRef{0, 2}));
  EXPECT_EQ(t.switches(), std::vector<uint32_t>{0});
  EXPECT_EQ(t.endpoints(), (std::vector<uint32_t>{1, 2}));
  // h2 has LID 4 and LMC 1: it answers to 4 and 5; nothing answers to 3 or 6.
  EXPECT_EQ(t.node_of_lid(1), 0u);
  EXPECT_EQ(t.node_of_lid(2), 1u);
  EXPECT_EQ(t.node_of_lid(3), Topology::npos);
  EXPECT_EQ(t.node_of_lid(4), 2u);
  EXPECT_EQ(t.node_of_lid(5), 2u);
  EXPECT_EQ(t.node_of_lid(6), Topology::npos);
  EXPECT_EQ(t.max_lid(), 5);
}

TEST(TopologyLookup, AssignedLidsAreUniqueAlignedAndKeepGivenOnes) {
  Topology t;
  t.nodes = {{"s", NodeKind::switch_node, 8, 0, 0, 0, 0, {}},  {"a", NodeKind::endpoint, 1, 0, 2, 0, 0, {}},
             {"b", NodeKind::endpoint, 1, 4, 0, 0, 0, {}},     {"c", NodeKind::endpoint, 1, 0, 0, 0, 0, {}},
             {"d", NodeKind::endpoint, 1, 0, 3, 0, 0, {}},     {"e", NodeKind::endpoint, 1, 0, 1, 0, 0, {}}};
  assign_lids(t);
  // Lowest free aligned range in node order, around b's given LID 4:
  // s: 1; a (4 LIDs): 0..3 holds 0 and 1, 4..7 holds b's 4 -> 8..11; b keeps 4;
  // c: 2; d (8 LIDs): 16..23; e (2 LIDs): 2..3 holds c's 2, 4..5 holds b -> 6..7.
  EXPECT_EQ(t.nodes[0].lid, 1);
  EXPECT_EQ(t.nodes[1].lid, 8);
  EXPECT_EQ(t.nodes[2].lid, 4);
  EXPECT_EQ(t.nodes[3].lid, 2);
  EXPECT_EQ(t.nodes[4].lid, 16);
  EXPECT_EQ(t.nodes[5].lid, 6);
}

// ---------------------------------------------------------------------------------------
// YAML format

const char* const kGoodYaml = R"(defaults: {width: 4X, speed: SDR, length_m: 1.0}
switches:
  - {name: A, ports: 8, lid: 1}
  - {name: B, ports: 8}
hosts:
  - {name: h1, lid: 10, lmc: 0}
  - {name: h2, lmc: 2}
  - h3
links:
  - [A/1, h1/1]
  - [A/3, h2]
  - {a: A/2, b: B/1, width: 4X, speed: QDR, length_m: 3}
  - [B/2, h3]
)";

TEST(TopologyYaml, LoadsTheDocumentedFormat) {
  const Topology t = topology_from_yaml(YAML::Load(kGoodYaml), "good.yaml");
  EXPECT_EQ(t.source, "good.yaml");
  ASSERT_EQ(t.nodes.size(), 5u);
  ASSERT_EQ(t.links.size(), 4u);
  EXPECT_EQ(t.nodes[t.find("A")].lid, 1);
  EXPECT_EQ(t.nodes[t.find("h1")].lid, 10);
  // Assigned in node order: B gets 2, h2 (4 LIDs) the first multiple of 4 that is free: 4.
  EXPECT_EQ(t.nodes[t.find("B")].lid, 2);
  EXPECT_EQ(t.nodes[t.find("h2")].lid, 4);
  EXPECT_EQ(t.nodes[t.find("h2")].lmc, 2);
  EXPECT_EQ(t.nodes[t.find("h3")].lid, 3);
  // Short form takes the defaults, host ends default to port 1.
  EXPECT_EQ(t.links[1].b, (PortRef{t.find("h2"), 1}));
  EXPECT_EQ(t.links[1].cfg.speed, link::Speed::sdr);
  EXPECT_EQ(t.links[2].cfg.speed, link::Speed::qdr);
  EXPECT_EQ(t.links[2].cfg.length_m, 3.0);
  EXPECT_EQ(t.peer(t.find("B"), 1), (PortRef{t.find("A"), 2}));
}

// A discovered fabric saved as YAML keeps what OpenSM's dumps print: NodeDescriptions (with
// quotes and '#' inside) and CA port GUIDs.
TEST(TopologyYaml, SaveKeepsDescriptionsAndCaPortGuids) {
  Topology t = load_ibnetdiscover(ibvp::testing::source_path("tests/data/opensm/two_switch.net"));
  t.nodes[0].description = "Voltaire 4036 # 4036-8C5C: 'spine'";
  const Topology back = topology_from_yaml(YAML::Load(topology_to_yaml(t)), "saved.yaml");
  ASSERT_EQ(back.nodes.size(), t.nodes.size());
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    EXPECT_EQ(back.nodes[n].description, t.nodes[n].description) << t.nodes[n].name;
    EXPECT_EQ(port_guid(back, n), port_guid(t, n)) << t.nodes[n].name;
  }
  EXPECT_EQ(port_guid(back, back.find("H-0000000000000030")), 0x31u);
}

TEST(TopologyYaml, PortUsedTwiceGivesLineOfSecondUse) {
  const std::string text = "switches:\n  - {name: A, ports: 4}\nhosts: [h1, h2]\nlinks:\n"
                           "  - [A/1, h1]\n  - [A/1, h2]   # second\n";
  const ConfigError e = yaml_error(text);
  expect_actionable(e, "bad.yaml", "links[1].a");
  EXPECT_EQ(e.line(), line_containing(text, "# second"));
}

TEST(TopologyYaml, UnknownNodeInLinkIsRefused) {
  const std::string text = "switches:\n  - {name: A, ports: 4}\nhosts: [h1]\nlinks:\n"
                           "  - [A/1, h1]\n  - [A/2, h9]   # typo\n";
  const ConfigError e = yaml_error(text);
  expect_actionable(e, "bad.yaml", "links[1].b");
  EXPECT_NE(std::string(e.what()).find("h9"), std::string::npos);
  EXPECT_EQ(e.line(), line_containing(text, "# typo"));
}

TEST(TopologyYaml, DisconnectedFabricIsRefused) {
  const std::string text = "switches:\n  - {name: A, ports: 4}\n  - {name: B, ports: 4}   # alone\n"
                           "hosts: [h1]\nlinks:\n  - [A/1, h1]\n";
  const ConfigError e = yaml_error(text);
  expect_actionable(e, "bad.yaml", "nodes.B");
  EXPECT_EQ(e.line(), line_containing(text, "# alone"));
}

TEST(TopologyYaml, DuplicateLidIsRefused) {
  const std::string text = "switches:\n  - {name: A, ports: 4, lid: 7}\nhosts:\n"
                           "  - {name: h1,\n     lid: 7}   # taken\nlinks:\n  - [A/1, h1]\n";
  const ConfigError e = yaml_error(text);
  expect_actionable(e, "bad.yaml", "nodes.h1.lid");
  EXPECT_EQ(e.line(), line_containing(text, "# taken"));
}

TEST(TopologyYaml, PortBeyondCountIsRefused) {
  const std::string text = "switches:\n  - {name: sw1, ports: 8}\nhosts: [h1]\nlinks:\n"
                           "  - [sw1/9, h1]   # nine\n";
  const ConfigError e = yaml_error(text);
  expect_actionable(e, "bad.yaml", "links[0].a");
  EXPECT_EQ(e.problem(), "port 9 of switch sw1 is beyond its 8 ports");
  EXPECT_EQ(e.fix(), "raise ports: or use a port 1..8");
  EXPECT_EQ(e.line(), line_containing(text, "# nine"));
}

TEST(TopologyYaml, DuplicateNameIsRefused) {
  const std::string text = "switches:\n  - {name: A, ports: 4}\nhosts:\n  - {name: h1}\n"
                           "  - {name: h1}   # again\nlinks:\n  - [A/1, h1]\n";
  const ConfigError e = yaml_error(text);
  expect_actionable(e, "bad.yaml", "hosts[1].name");
  EXPECT_EQ(e.line(), line_containing(text, "# again"));
}

TEST(TopologyYaml, LidZeroIsRefused) {
  const std::string text = "switches:\n  - {name: A, ports: 4}\nhosts:\n  - {name: h1, lid: 0}   # zero\n"
                           "links:\n  - [A/1, h1]\n";
  const ConfigError e = yaml_error(text);
  expect_actionable(e, "bad.yaml", "hosts[0].lid");
  EXPECT_EQ(e.line(), line_containing(text, "# zero"));
}

TEST(TopologyYaml, UnknownKeyIsRefusedListingAllowedKeys) {
  const std::string text = "switches:\n  - {name: A, ports: 4}\nhosts: [h1]\nlinks:\n"
                           "  - {a: A/1, b: h1, lenght_m: 2}   # misspelt\n";
  const ConfigError e = yaml_error(text);
  expect_actionable(e, "bad.yaml", "links[0].lenght_m");
  EXPECT_EQ(e.fix(), "use one of: a, b, width, speed, length_m, propagation_ns_per_m");
  EXPECT_EQ(e.line(), line_containing(text, "# misspelt"));
}

TEST(TopologyYaml, UnknownSpeedListsTheKnownOnes) {
  const std::string text = "defaults:\n  speed: XDR   # here\nswitches:\n  - {name: A, ports: 4}\n";
  const ConfigError e = yaml_error(text);
  expect_actionable(e, "bad.yaml", "defaults.speed");
  EXPECT_NE(e.fix().find("QDR"), std::string::npos);
  EXPECT_EQ(e.line(), line_containing(text, "# here"));
}

TEST(TopologyYaml, SwitchEndWithoutPortIsRefused) {
  const std::string text = "switches:\n  - {name: A, ports: 4}\n  - {name: B, ports: 4}\nlinks:\n"
                           "  - [A/1, B]   # which port\n";
  const ConfigError e = yaml_error(text);
  expect_actionable(e, "bad.yaml", "links[0].b");
  EXPECT_EQ(e.line(), line_containing(text, "# which port"));
}

TEST(TopologyYaml, KeyPrefixNamesTheSectionOfAScenario) {
  const std::string text = "topology:\n  switches:\n    - {name: A, ports: 4}\n  hosts: [h1]\n"
                           "  links:\n    - [A/5, h1]   # five\n";
  try {
    topology_from_yaml(YAML::Load(text)["topology"], "scenario.yaml", "topology");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    expect_actionable(e, "scenario.yaml", "topology.links[0].a");
    EXPECT_EQ(e.line(), line_containing(text, "# five"));
  }
}

TEST(TopologyYaml, SyntaxErrorNamesFileAndLine) {
  const std::string path = temp_path("syntax_error.yaml");
  const std::string text = "switches:\n  - {name: A, ports: 4}\nhosts: [h1\nlinks: []\n";
  write_file(path, text);
  try {
    load_topology_yaml(path);
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_GT(e.line(), 0);
    EXPECT_NE(std::string(e.what()).find("fix"), std::string::npos);
  }
}

TEST(TopologyYaml, MissingFileIsAConfigError) {
  EXPECT_THROW(load_topology_yaml(temp_path("does_not_exist.yaml")), ConfigError);
}

TEST(TopologyYaml, SaveThenLoadGivesTheSameFabric) {
  // Node attributes the format must carry: LMC, GUID, extra endpoint ports; links that differ
  // from the most common settings in width, speed, length and propagation.
  Topology t = kary_ntree(2, 3);
  t.nodes[t.find("h3")].lmc = 2;
  t.nodes[t.find("h3")].lid = 0;
  t.nodes[t.find("h5")].num_ports = 2;
  t.nodes[t.find("s0_1")].guid = 0x0002c90300001234ull;
  t.links[0].cfg = {link::Width::x12, link::Speed::edr, 0.3, 5.0};
  t.links[3].cfg.length_m = 1.0 / 3.0;
  t.links[4].cfg.propagation_ns_per_m = 4.9;
  assign_lids(t);
  t.index();
  t.validate();
  const std::string path = temp_path("roundtrip.yaml");
  save_topology_yaml(t, path);
  const Topology back = load_topology_yaml(path);
  EXPECT_EQ(describe(back), describe(t));
  EXPECT_EQ(back.source, path);
}

TEST(TopologyYaml, GeneratedFabricsSurviveSaveAndLoad) {
  for (const Topology& t : {random_irregular(16, 7), two_switch_congestion(5, 1), torus2d(3, 3, 2)}) {
    const Topology back = topology_from_yaml(YAML::Load(topology_to_yaml(t)), "string");
    EXPECT_EQ(describe(back), describe(t)) << t.source;
  }
}

TEST(TopologyYaml, ConfigSeed004TwoSwitchIsFigure1WithFiveLocalAndOneRemote) {
  const Topology t = load_topology_yaml(ibvp::testing::source_path("configs/topologies/seed004_two_switch.yaml"));
  EXPECT_EQ(describe(t), describe(two_switch_congestion(5, 1)));
}

TEST(TopologyYaml, ConfigSingleSwitch4IsFourHostsOnOneSwitch) {
  const Topology t = load_topology_yaml(ibvp::testing::source_path("configs/topologies/single_switch_4.yaml"));
  EXPECT_EQ(describe(t), describe(single_switch(4)));
  EXPECT_EQ(t.endpoints().size(), 4u);
}

// ---------------------------------------------------------------------------------------
// Generators

// Inter-switch neighbour lists read straight from the cables, independent of Topology's
// index.
std::vector<std::vector<uint32_t>> switch_graph(const Topology& t) {
  std::vector<std::vector<uint32_t>> adj(t.nodes.size());
  for (const Link& l : t.links)
    if (t.nodes[l.a.node].kind == NodeKind::switch_node && t.nodes[l.b.node].kind == NodeKind::switch_node) {
      adj[l.a.node].push_back(l.b.node);
      adj[l.b.node].push_back(l.a.node);
    }
  return adj;
}

bool switches_connected(const Topology& t) {
  const auto adj = switch_graph(t);
  const auto sw = t.switches();
  std::vector<bool> seen(t.nodes.size(), false);
  std::vector<uint32_t> stack{sw[0]};
  seen[sw[0]] = true;
  size_t count = 0;
  while (!stack.empty()) {
    const uint32_t u = stack.back();
    stack.pop_back();
    ++count;
    for (uint32_t v : adj[u])
      if (!seen[v]) seen[v] = true, stack.push_back(v);
  }
  return count == sw.size();
}

std::set<std::pair<uint32_t, uint32_t>> switch_pairs(const Topology& t) {
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  for (const Link& l : t.links)
    if (t.nodes[l.a.node].kind == NodeKind::switch_node && t.nodes[l.b.node].kind == NodeKind::switch_node)
      pairs.insert({std::min(l.a.node, l.b.node), std::max(l.a.node, l.b.node)});
  return pairs;
}

TEST(Generator, RandomIrregularHasSeed001Shape) {
  // Seed 001 Sec. 3: 8-64 switches, 8 ports each, 4 to switches and 4 to hosts.
  for (uint32_t n : {8u, 9u, 16u, 24u, 32u, 48u, 64u})
    for (uint32_t seed : {1u, 2u, 3u, 42u, 2024u}) {
      SCOPED_TRACE("switches " + std::to_string(n) + " seed " + std::to_string(seed));
      const Topology t = random_irregular(n, seed);
      ASSERT_EQ(t.switches().size(), n);
      ASSERT_EQ(t.endpoints().size(), 4u * n);
      EXPECT_TRUE(switches_connected(t));
      const auto adj = switch_graph(t);
      std::vector<int> hosts(t.nodes.size(), 0);
      for (const Link& l : t.links) {
        EXPECT_NE(l.a.node, l.b.node) << "self-link";
        if (t.nodes[l.b.node].kind == NodeKind::endpoint) ++hosts[l.a.node];
      }
      for (uint32_t s : t.switches()) {
        EXPECT_EQ(t.nodes[s].num_ports, 8);
        EXPECT_EQ(hosts[s], 4) << t.nodes[s].name;
        // With 5 or more switches a 4-regular simple graph exists, and the generator finds one.
        EXPECT_EQ(adj[s].size(), 4u) << t.nodes[s].name;
      }
      // No two cables join the same pair of switches.
      EXPECT_EQ(switch_pairs(t).size(), 2u * n);
    }
}

TEST(Generator, RandomIrregularTooSmallForFourRegularLeavesPortsFree) {
  for (uint32_t n : {1u, 2u, 3u, 4u}) {
    const Topology t = random_irregular(n, 5);
    const auto adj = switch_graph(t);
    for (uint32_t s : t.switches()) EXPECT_EQ(adj[s].size(), n - 1) << "complete graph on " << n;
  }
}

TEST(Generator, RandomIrregularSameSeedGivesSameFabric) {
  for (uint32_t n : {8u, 32u, 64u}) EXPECT_EQ(describe(random_irregular(n, 11)), describe(random_irregular(n, 11)));
}

TEST(Generator, RandomIrregularDifferentSeedsGiveDifferentFabrics) {
  for (uint32_t n : {8u, 16u, 64u}) {
    std::set<std::set<std::pair<uint32_t, uint32_t>>> graphs;
    for (uint32_t seed = 1; seed <= 5; ++seed) graphs.insert(switch_pairs(random_irregular(n, seed)));
    EXPECT_EQ(graphs.size(), 5u) << n << " switches";
  }
}

TEST(Generator, RandomIrregularIsPinnedForSeed1) {
  // Experiments name a fabric by (switches, seed); this pins seed 1 with 8 switches so a
  // change of the generator (or of the random stream) cannot go unnoticed.
  const Topology t = random_irregular(8, 1);
  std::string pairs;
  for (const auto& [a, b] : switch_pairs(t)) pairs += std::to_string(a) + "-" + std::to_string(b) + " ";
  EXPECT_EQ(pairs, "0-1 0-3 0-5 0-6 1-2 1-4 1-7 2-3 2-4 2-7 3-4 3-5 4-6 5-6 5-7 6-7 ");
}

RandomIrregularOptions seed000_options(int64_t cycles) {
  // Seed 000 Sec. 4: 5-port switches, one host each, so 4 ports to other switches.
  RandomIrregularOptions opt;
  opt.switch_ports = 4;
  opt.host_ports = 1;
  opt.cycles = cycles;
  return opt;
}

TEST(Generator, RandomIrregularCyclesGivesExactlyThatManyIndependentCycles) {
  // Independent cycles of a connected graph = cables - switches + 1 (seed 000 Sec. 3.2).
  for (uint32_t n : {2u, 5u, 15u, 30u})
    for (int64_t c : {0, 1, 5, 9, 16, 31})
      for (uint32_t seed : {1u, 2u, 3u, 17u}) {
        const uint64_t most = std::min<uint64_t>(n * 4 / 2, n * (n - 1) / 2) - (n - 1);
        if (static_cast<uint64_t>(c) > most) continue;
        SCOPED_TRACE(std::to_string(n) + " switches, " + std::to_string(c) + " cycles, seed " + std::to_string(seed));
        const Topology t = random_irregular(n, seed, seed000_options(c));
        EXPECT_TRUE(switches_connected(t));
        const auto pairs = switch_pairs(t);
        size_t cables = 0;
        for (const Link& l : t.links)
          cables += t.nodes[l.a.node].kind == NodeKind::switch_node && t.nodes[l.b.node].kind == NodeKind::switch_node;
        EXPECT_EQ(pairs.size(), cables) << "parallel cables";
        EXPECT_EQ(static_cast<int64_t>(cables) - n + 1, c);
      }
}

TEST(Generator, RandomIrregularCyclesRespectsSwitchPorts) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const Topology t = random_irregular(15, seed, seed000_options(16));  // every port used: 30 cables
    const auto adj = switch_graph(t);
    std::vector<int> hosts(t.nodes.size(), 0);
    for (const Link& l : t.links)
      if (t.nodes[l.b.node].kind == NodeKind::endpoint) ++hosts[l.a.node];
    for (uint32_t s : t.switches()) {
      EXPECT_EQ(t.nodes[s].num_ports, 5);
      EXPECT_LE(adj[s].size(), 4u) << t.nodes[s].name;
      EXPECT_EQ(hosts[s], 1) << t.nodes[s].name;
    }
  }
}

TEST(Generator, RandomIrregularCyclesSameSeedGivesSameFabric) {
  EXPECT_EQ(describe(random_irregular(15, 3, seed000_options(9))), describe(random_irregular(15, 3, seed000_options(9))));
  EXPECT_NE(switch_pairs(random_irregular(15, 3, seed000_options(9))),
            switch_pairs(random_irregular(15, 4, seed000_options(9))));
}

TEST(Generator, RandomIrregularWithoutCyclesIsUnchanged) {
  // cycles absent (-1) keeps seed 001's fabric: the pinned seed-1 graph above, same bytes.
  RandomIrregularOptions opt;
  EXPECT_EQ(describe(random_irregular(8, 1, opt)), describe(random_irregular(8, 1)));
}

TEST(Generator, RandomIrregularTooManyCyclesIsAConfigErrorNamingCycles) {
  // 15 switches with 4 switch ports hold 30 cables: 16 independent cycles at most.
  EXPECT_NO_THROW(random_irregular(15, 1, seed000_options(16)));
  try {
    random_irregular(15, 1, seed000_options(17));
    FAIL() << "17 cycles accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "cycles");
    EXPECT_NE(std::string(e.fix()).find("at most 16"), std::string::npos) << e.fix();
  }
  // Four switches: the complete graph K4 has 3 independent cycles, whatever the ports.
  EXPECT_THROW(random_irregular(4, 1, seed000_options(4)), ConfigError);
  EXPECT_NO_THROW(random_irregular(4, 1, seed000_options(3)));
}

TEST(Generator, TwoSwitchCongestionIsSeed004Figure1) {
  const Topology t = two_switch_congestion(5, 2);
  const uint32_t a = t.find("A"), b = t.find("B");
  ASSERT_NE(a, Topology::npos);
  ASSERT_NE(b, Topology::npos);
  EXPECT_EQ(t.nodes[a].num_ports, 1 + 2 + 1);  // B, R remote sources, victim source
  EXPECT_EQ(t.nodes[b].num_ports, 1 + 5 + 2);  // A, L local sources, B_C, B_V
  EXPECT_EQ(t.peer(a, 1), (PortRef{b, 1}));
  for (const char* h : {"A_R1", "A_R2", "A_V"}) EXPECT_EQ(t.peer(t.find(h), 1).node, a) << h;
  for (const char* h : {"B_L1", "B_L2", "B_L3", "B_L4", "B_L5", "B_C", "B_V"}) EXPECT_EQ(t.peer(t.find(h), 1).node, b) << h;
  EXPECT_EQ(t.endpoints().size(), 2u + 1 + 5 + 2);
  EXPECT_EQ(t.links.size(), 1u + 3 + 7);
  EXPECT_EQ(t.links[0].cfg.width, link::Width::x4);  // 1 GB/s: 4X SDR
  EXPECT_EQ(t.links[0].cfg.speed, link::Speed::sdr);
}

TEST(Generator, SingleSwitchPutsHostIOnPortI) {
  const Topology t = single_switch(6);
  EXPECT_EQ(t.switches().size(), 1u);
  for (uint16_t p = 1; p <= 6; ++p) EXPECT_EQ(t.nodes[t.peer(0, p).node].name, "h" + std::to_string(p));
}

TEST(Generator, KaryNtreeHasKToTheNHostsAndNLevels) {
  for (auto [k, n] : {std::pair<uint32_t, uint32_t>{2, 3}, {4, 2}, {4, 3}, {3, 3}}) {
    SCOPED_TRACE(std::to_string(k) + "-ary " + std::to_string(n) + "-tree");
    const Topology t = kary_ntree(k, n);
    uint32_t kn = 1;
    for (uint32_t i = 0; i < n; ++i) kn *= k;
    EXPECT_EQ(t.endpoints().size(), kn);
    EXPECT_EQ(t.switches().size(), n * kn / k);
    // Cables: k^n host cables plus (n-1) levels of k^(n-1) switches with k up cables each.
    EXPECT_EQ(t.links.size(), kn + (n - 1) * kn);
    EXPECT_TRUE(switches_connected(t));
    // Every non-root switch uses all 2k ports, roots their k down ports.
    std::vector<int> used(t.nodes.size(), 0);
    for (const Link& l : t.links) ++used[l.a.node], ++used[l.b.node];
    for (uint32_t s : t.switches()) EXPECT_EQ(used[s], t.nodes[s].num_ports) << t.nodes[s].name;
  }
}

TEST(Generator, MeshAndTorusHaveGridCableCounts) {
  const Topology mesh = mesh2d(4, 3, 2);
  EXPECT_EQ(mesh.switches().size(), 12u);
  EXPECT_EQ(mesh.endpoints().size(), 24u);
  EXPECT_EQ(switch_pairs(mesh).size(), 3u * 3 + 4u * 2);  // (x-1)y + x(y-1)
  const Topology torus = torus2d(4, 3, 1);
  EXPECT_EQ(switch_pairs(torus).size(), 2u * 4 * 3);  // every switch has 4 distinct neighbours
  const auto adj = switch_graph(torus);
  for (uint32_t s : torus.switches()) EXPECT_EQ(adj[s].size(), 4u);
}

TEST(Generator, BadParametersAreConfigErrors) {
  EXPECT_THROW(random_irregular(0, 1), ConfigError);
  EXPECT_THROW(single_switch(300), ConfigError);
  EXPECT_THROW(kary_ntree(0, 2), ConfigError);
  EXPECT_THROW(mesh2d(0, 3, 1), ConfigError);
}

}  // namespace
}  // namespace ibvp::topo
