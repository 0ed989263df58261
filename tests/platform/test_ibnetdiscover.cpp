// The ibnetdiscover format: real dumps load as they are (counts checked against a hand count
// of the file), write then parse gives the same fabric, and bad input is a ConfigError that
// names the file and the line, never a crash.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "platform/params/config_error.h"
#include "platform/topology/generators.h"
#include "platform/topology/ibnetdiscover.h"
#include "platform/topology/topology.h"

namespace ibvp::topo {
namespace {

// The shared dumps live next to the repository (../shared/topologies), not inside it.
std::string shared_dir() { return std::string(IBVP_SOURCE_DIR) + "/../shared/topologies"; }

#define REQUIRE_SHARED_DUMPS()                                                              \
  do {                                                                                      \
    if (!std::filesystem::is_directory(shared_dir()))                                       \
      GTEST_SKIP() << "no shared topologies at " << shared_dir() << " (checkout without them)"; \
  } while (0)

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

int line_containing(const std::string& text, const std::string& marker) {
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find(marker) != std::string::npos) return n;
  ADD_FAILURE() << "marker not in text: " << marker;
  return -1;
}

ConfigError parse_error(const std::string& text, const std::string& source = "bad.net") {
  try {
    parse_ibnetdiscover(text, source);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError for:\n" << text;
  return ConfigError("", "", 0, "", "");
}

// An error a user can act on names the file, the line, the item and the fix.
void expect_actionable(const ConfigError& e, const std::string& file, int line, const std::string& item) {
  const std::string what = e.what();
  EXPECT_EQ(e.file(), file) << what;
  EXPECT_EQ(e.line(), line) << what;
  EXPECT_EQ(e.key(), item) << what;
  EXPECT_NE(what.find(file + ":" + std::to_string(line)), std::string::npos) << what;
  EXPECT_FALSE(e.fix().empty()) << what;
}

// Nodes in order and cables as a set of unordered port pairs with their rate: what a dump
// carries. (Cable order and which end is "a" follow the order ports appear in.)
using CableKey = std::tuple<std::string, std::string, std::string>;
std::set<CableKey> cables(const Topology& t) {
  std::set<CableKey> out;
  for (const Link& l : t.links) {
    std::string a = t.nodes[l.a.node].name + "/" + std::to_string(l.a.port);
    std::string b = t.nodes[l.b.node].name + "/" + std::to_string(l.b.port);
    if (b < a) std::swap(a, b);
    out.emplace(a, b, link::width_name(l.cfg.width) + link::speed_name(l.cfg.speed));
  }
  return out;
}

std::string describe_nodes(const Topology& t) {
  // GUIDs as an SM sees them: a written dump carries synthetic ones for nodes without.
  std::ostringstream s;
  for (uint32_t i = 0; i < t.nodes.size(); ++i) {
    const Node& n = t.nodes[i];
    s << (n.kind == NodeKind::switch_node ? "switch " : "host ") << n.name << " ports " << n.num_ports << " lid "
      << n.lid << " lmc " << int(n.lmc) << " guid " << std::hex << node_guid(t, i) << " port guid " << port_guid(t, i)
      << std::dec << " description '" << node_description(n) << "'\n";
  }
  return s.str();
}

void expect_same_fabric(const Topology& x, const Topology& y) {
  EXPECT_EQ(describe_nodes(x), describe_nodes(y));
  EXPECT_EQ(cables(x), cables(y));
  EXPECT_EQ(x.links.size(), y.links.size());
}

size_t count_kind(const Topology& t, NodeKind k) {
  size_t n = 0;
  for (const Node& node : t.nodes) n += node.kind == k;
  return n;
}

const Node& node_named(const Topology& t, const std::string& name) {
  const uint32_t i = t.find(name);
  if (i == Topology::npos) throw std::runtime_error("no node " + name);
  return t.nodes[i];
}

// Two switches joined by one cable, a host on each; every fact in the comments.
const char* kSmall = R"(#
# Topology file: hand-made
#

vendid=0x2c9
devid=0xbd36
switchguid=0x10(10)
Switch	8 "S-a"		# "switch a" base port 0 lid 1 lmc 0
[1]	"S-b"[2]		# "switch b" lid 2 4xQDR
[3]	"H-x"[1](21) 		# "host x" lid 4 4xQDR

switchguid=0x11(11)
Switch	8 "S-b"		# "switch b" base port 0 lid 2 lmc 0
[2]	"S-a"[1]		# "switch a" lid 1 4xQDR
[5]	"H-y"[1](31) 		# "host y" lid 6 4xQDR

caguid=0x20
Ca	2 "H-x"		# "host x"
[1](21) 	"S-a"[3]		# lid 4 lmc 0 "switch a" lid 1 4xQDR

caguid=0x30
Ca	2 "H-y"		# "host y"
[1](31) 	"S-b"[5]		# lid 6 lmc 1 "switch b" lid 2 4xQDR
)";

// ---------------------------------------------------------------------------------------
// The shared real dumps

TEST(Ibnetdiscover, EverySharedDumpLoadsAndValidates) {
  REQUIRE_SHARED_DUMPS();
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(shared_dir())) {
    if (entry.path().extension() != ".net") continue;
    ++files;
    SCOPED_TRACE(entry.path().string());
    const std::string text = read_text(entry.path().string());
    EXPECT_TRUE(looks_like_ibnetdiscover(text));
    Topology t;
    ASSERT_NO_THROW(t = load_ibnetdiscover(entry.path().string()));
    EXPECT_NO_THROW(t.validate());
    EXPECT_EQ(t.source, entry.path().string());
    EXPECT_GT(t.switches().size(), 0u);
    EXPECT_GT(t.endpoints().size(), 0u);
  }
  EXPECT_EQ(files, 5u) << "README.md lists five dumps";
}

TEST(Ibnetdiscover, X5CountsMatchAHandCountOfTheFile) {
  REQUIRE_SHARED_DUMPS();
  // Counted from the file with grep and awk, not with this loader:
  //   grep -c '^Switch' real_X5.net  -> 11      grep -c '^Ca' real_X5.net -> 89
  //   grep -c '^\[' real_X5.net      -> 318 port lines; keyed by the unordered pair
  //   (node/port, peer/port) every key occurs exactly twice and none joins a node to itself,
  //   so 318 / 2 = 159 cables. Every Ca is "Ca 1" with one port line: 89 endpoints.
  //   grep -o '4xQDR' -> 272 = 2 x 136 cables; grep -o '4xDDR' -> 46 = 2 x 23 cables.
  const Topology t = load_ibnetdiscover(shared_dir() + "/real_X5.net");
  EXPECT_EQ(count_kind(t, NodeKind::switch_node), 11u);
  EXPECT_EQ(count_kind(t, NodeKind::endpoint), 89u);
  EXPECT_EQ(t.links.size(), 159u);
  size_t qdr = 0, ddr = 0;
  for (const Link& l : t.links) {
    EXPECT_EQ(l.cfg.width, link::Width::x4);
    qdr += l.cfg.speed == link::Speed::qdr;
    ddr += l.cfg.speed == link::Speed::ddr;
  }
  EXPECT_EQ(qdr, 136u);
  EXPECT_EQ(ddr, 23u);
  // LIDs and GUIDs as the file states them (line 10 and lines 305-306).
  const Node& sw = node_named(t, "S-0008f10500200b50");
  EXPECT_EQ(sw.kind, NodeKind::switch_node);
  EXPECT_EQ(sw.num_ports, 36);
  EXPECT_EQ(sw.lid, 9);
  EXPECT_EQ(sw.guid, 0x8f10500200b50u);
  const Node& host = node_named(t, "H-003048c707b60000");
  EXPECT_EQ(host.lid, 93);
  EXPECT_EQ(host.guid, 0x3048c707b60000u);  // caguid= of its record
  const PortRef up = t.peer(t.find("H-003048c707b60000"), 1);
  EXPECT_EQ(t.nodes[up.node].name, "S-0008f10500200b50");
  EXPECT_EQ(up.port, 32);
  // The switch descriptions hold '#' ("Voltaire 4036 # 4036-8C5C"); the LID after it counts.
  EXPECT_EQ(node_named(t, "S-0008f10500108c5c").lid, 16);
}

TEST(Ibnetdiscover, CaWithTwoCabledPortsBecomesOneEndpointPerPort) {
  REQUIRE_SHARED_DUMPS();
  // real_ibtopotool_1.net: H-0008f10403960558 is cabled on port 1 (lid 10, GUID ...559) and
  // port 2 (lid 14, GUID ...55a); both lmc 1.
  const Topology t = load_ibnetdiscover(shared_dir() + "/real_ibtopotool_1.net");
  EXPECT_EQ(t.find("H-0008f10403960558"), Topology::npos);
  const Node& p1 = node_named(t, "H-0008f10403960558/p1");
  const Node& p2 = node_named(t, "H-0008f10403960558/p2");
  EXPECT_EQ(p1.lid, 10);
  EXPECT_EQ(p2.lid, 14);
  EXPECT_EQ(p1.lmc, 1);
  EXPECT_EQ(p1.guid, 0x8f10403960559u);
  EXPECT_EQ(p2.guid, 0x8f1040396055au);
  const PortRef sw = t.peer(t.find("H-0008f10403960558/p2"), 1);
  EXPECT_EQ(t.nodes[sw.node].name, "S-005442ba00003080");
  EXPECT_EQ(sw.port, 8);
  // 2 switches, 4 CA records of which one splits: 5 endpoints; 14 port lines: 7 cables.
  EXPECT_EQ(count_kind(t, NodeKind::switch_node), 2u);
  EXPECT_EQ(count_kind(t, NodeKind::endpoint), 5u);
  EXPECT_EQ(t.links.size(), 7u);
  // S-005442ba00003080[10] says 4xSDR, its peer S-0008f10400410015[1] says 1xSDR: the lower.
  const int cable = t.link_at(t.find("S-005442ba00003080"), 10);
  ASSERT_GE(cable, 0);
  EXPECT_EQ(t.links[static_cast<size_t>(cable)].cfg.width, link::Width::x1);
  EXPECT_EQ(t.links[static_cast<size_t>(cable)].cfg.speed, link::Speed::sdr);
}

TEST(Ibnetdiscover, LoopbackCablesBetweenPortsOfOneSwitchAreKept) {
  REQUIRE_SHARED_DUMPS();
  // real_ibtopotool_3.net: S-e41d2d030003e470 has cables 1-2, 19-21 and 29-30 to itself;
  // 20 port lines, 6 of them the loopbacks: 3 + 14 / 2 = 10 cables. The file starts with
  // an error message of the discovery run, which is read past.
  const Topology t = load_ibnetdiscover(shared_dir() + "/real_ibtopotool_3.net");
  EXPECT_EQ(t.links.size(), 10u);
  const uint32_t sw = t.find("S-e41d2d030003e470");
  size_t loops = 0;
  for (const Link& l : t.links) loops += l.a.node == sw && l.b.node == sw;
  EXPECT_EQ(loops, 3u);
  EXPECT_EQ(t.peer(sw, 19).port, 21);
  EXPECT_EQ(t.nodes[sw].lid, 268);
  EXPECT_EQ(t.links[static_cast<size_t>(t.link_at(sw, 1))].cfg.speed, link::Speed::edr);
  // H-0002c903003421b0 is cabled on its port 2 only: it keeps its name, and the cable sits
  // on the endpoint's one port.
  const uint32_t h = t.find("H-0002c903003421b0");
  ASSERT_NE(h, Topology::npos);
  EXPECT_EQ(t.nodes[h].lid, 3);
  EXPECT_EQ(t.peer(h, 1).port, 35);
}

TEST(Ibnetdiscover, WriteThenParseGivesTheSameNodesCablesAndLids) {
  REQUIRE_SHARED_DUMPS();
  for (const auto& entry : std::filesystem::directory_iterator(shared_dir())) {
    if (entry.path().extension() != ".net") continue;
    SCOPED_TRACE(entry.path().string());
    const Topology t = load_ibnetdiscover(entry.path().string());
    const std::string text = write_ibnetdiscover(t);
    EXPECT_TRUE(looks_like_ibnetdiscover(text));
    Topology back;
    ASSERT_NO_THROW(back = parse_ibnetdiscover(text, "written.net")) << text;
    expect_same_fabric(t, back);
    // Written a second time, the text is the same: nothing drifts.
    back.source = t.source;
    EXPECT_EQ(write_ibnetdiscover(back), text);
  }
}

TEST(Ibnetdiscover, GeneratedFabricsRoundTripIncludingLmcAndRates) {
  link::LinkConfig cfg;
  cfg.width = link::Width::x12;
  cfg.speed = link::Speed::hdr;
  Topology tree = kary_ntree(2, 3, cfg);
  Topology torus = torus2d(3, 3, 2);
  torus.nodes[torus.endpoints().front()].lmc = 2;
  torus.nodes[torus.endpoints().front()].lid = 0;
  torus.nodes[torus.endpoints().front()].guid = 0xabcdef;
  assign_lids(torus);
  for (Topology* t : {&tree, &torus}) {
    const Topology back = parse_ibnetdiscover(write_ibnetdiscover(*t), "gen.net");
    expect_same_fabric(*t, back);
  }
}

// The fuzzer's dumps (tests/fuzz/corpus) are this writer's output for small generated
// fabrics, so they need no licence of their own. IBVP_WRITE_FUZZ_CORPUS=1 writes them anew.
TEST(Ibnetdiscover, FuzzCorpusDumpsAreTheWritersOutputForGeneratedFabrics) {
  link::LinkConfig qdr;
  qdr.speed = link::Speed::qdr;
  Topology mesh = mesh2d(2, 2, 1);
  mesh.nodes[mesh.endpoints().front()].lmc = 1;
  mesh.nodes[mesh.endpoints().front()].lid = 0;
  assign_lids(mesh);
  std::vector<std::pair<std::string, Topology>> dumps = {
      {"single_switch_4.net", single_switch(4)},
      {"two_switch_2_1.net", two_switch_congestion(2, 1, qdr)},
      {"mesh_2x2_lmc.net", mesh}};
  // GUIDs as real dumps carry them (the fuzzer duplicates them).
  for (auto& [file, t] : dumps)
    for (size_t i = 0; i < t.nodes.size(); ++i) t.nodes[i].guid = 0x0002c90300a1b200ull + i;
  const std::string dir = std::string(IBVP_SOURCE_DIR) + "/tests/fuzz/corpus/";
  for (const auto& [file, t] : dumps) {
    SCOPED_TRACE(file);
    const std::string text = write_ibnetdiscover(t);
    if (std::getenv("IBVP_WRITE_FUZZ_CORPUS")) std::ofstream(dir + file, std::ios::binary) << text;
    EXPECT_EQ(read_text(dir + file), text);
  }
}

// ---------------------------------------------------------------------------------------
// What the reader takes from a dump

TEST(Ibnetdiscover, HandMadeDumpGivesLidsLmcGuidsAndRates) {
  const Topology t = parse_ibnetdiscover(kSmall, "small.net");
  ASSERT_EQ(t.nodes.size(), 4u);
  EXPECT_EQ(t.nodes[0].name, "S-a");  // switches first, in file order, then endpoints
  EXPECT_EQ(t.nodes[1].name, "S-b");
  EXPECT_EQ(t.nodes[2].name, "H-x");
  EXPECT_EQ(t.nodes[3].name, "H-y");
  EXPECT_EQ(t.nodes[1].guid, 0x11u);
  EXPECT_EQ(t.nodes[1].lid, 2);
  EXPECT_EQ(t.nodes[2].guid, 0x20u);
  EXPECT_EQ(t.nodes[3].lid, 6);
  EXPECT_EQ(t.nodes[3].lmc, 1);
  ASSERT_EQ(t.links.size(), 3u);
  EXPECT_EQ(t.links[0].a, (PortRef{0, 1}));
  EXPECT_EQ(t.links[0].b, (PortRef{1, 2}));
  EXPECT_EQ(t.links[0].cfg.speed, link::Speed::qdr);
}

TEST(Ibnetdiscover, MissingLidsAreAssignedAndMissingRatesDefaultTo4xSdr) {
  const Topology t = parse_ibnetdiscover(
      "Switch 4 \"core switch\"\n"
      "[1] \"node 1 HCA\"[1]\n"
      "[2] \"node 2 HCA\"[1]\n"
      "Ca 1 \"node 1 HCA\"\n"
      "[1] \"core switch\"[1]\n"
      "Ca 1 \"node 2 HCA\"\n"
      "[1] \"core switch\"[2]\n",
      "bare.net");
  // assign_lids(): lowest free LIDs in node order.
  EXPECT_EQ(node_named(t, "core switch").lid, 1);
  EXPECT_EQ(node_named(t, "node 1 HCA").lid, 2);
  EXPECT_EQ(node_named(t, "node 2 HCA").lid, 3);
  for (const Link& l : t.links) {
    EXPECT_EQ(l.cfg.width, link::Width::x4);
    EXPECT_EQ(l.cfg.speed, link::Speed::sdr);
  }
}

TEST(Ibnetdiscover, LidZeroMeansUnassigned) {
  // A fabric dumped before an SM ran reports every LID as 0.
  const Topology t = parse_ibnetdiscover(
      "Switch 4 \"S\" # \"s\" base port 0 lid 0 lmc 0\n"
      "[1] \"H\"[1](5) # \"h\" lid 0 4xEDR\n"
      "Ca 1 \"H\" # \"h\"\n"
      "[1](5) \"S\"[1] # lid 0 lmc 0 \"s\" lid 0 4xEDR\n",
      "nolid.net");
  EXPECT_EQ(node_named(t, "S").lid, 1);
  EXPECT_EQ(node_named(t, "H").lid, 2);
}

TEST(Ibnetdiscover, GroupedOutputExtPortsAndChassisLinesAreReadPast) {
  const Topology t = parse_ibnetdiscover(
      "Chassis 1 (guid 0x8f104004121fe)\n"
      "\n# Spine Nodes\n"
      "switchguid=0x5(5)\t# ISR9288/ISR9096 Voltaire sLB-24D\n"
      "Switch 24 \"S-5\" # \"spine\" base port 0 lid 3 lmc 0\n"
      "[1][ext 7] \"H-9\"[1](a) # \"h\" lid 4 4xDDR s=2 w=2 v=4\n"
      "\nNon-Chassis Nodes\n"
      "caguid=0x9\n"
      "Ca 2 \"H-9\" # \"h\"\n"
      "[1](a) \"S-5\"[1][ext 7] # lid 4 lmc 0 \"spine\" lid 3 4xDDR\n",
      "grouped.net");
  EXPECT_EQ(t.links.size(), 1u);
  EXPECT_EQ(t.links[0].cfg.speed, link::Speed::ddr);
}

TEST(Ibnetdiscover, LooksLikeTellsDumpsFromYaml) {
  EXPECT_TRUE(looks_like_ibnetdiscover(kSmall));
  EXPECT_TRUE(looks_like_ibnetdiscover("# only a header\nSwitch 8 \"a\"\n[1] \"b\"[1]\n"));
  EXPECT_FALSE(looks_like_ibnetdiscover("switches:\n  - {name: A, ports: 8}\nhosts: [h1]\nlinks:\n  - [A/1, h1]\n"));
  EXPECT_FALSE(looks_like_ibnetdiscover(""));
  EXPECT_FALSE(looks_like_ibnetdiscover("Switch: 8\n"));
}

// ---------------------------------------------------------------------------------------
// Errors name the file, the line, the item and a fix

TEST(Ibnetdiscover, CableEndsThatDisagreeNameBothLines) {
  std::string text = kSmall;
  // S-b says its port 2 goes to S-a port 4; S-a says its port 1 goes to S-b port 2.
  text.replace(text.find("[2]\t\"S-a\"[1]"), 12, "[2]\t\"S-a\"[4]");
  const ConfigError e = parse_error(text, "swapped.net");
  expect_actionable(e, "swapped.net", line_containing(text, "[1]\t\"S-b\"[2]"), "S-a[1]");
  EXPECT_NE(e.problem().find("line " + std::to_string(line_containing(text, "[2]\t\"S-a\"[4]"))), std::string::npos)
      << e.what();
}

TEST(Ibnetdiscover, CableListedFromOneEndOnlyIsAnError) {
  std::string text = kSmall;
  const int line = line_containing(text, "[5]\t\"H-y\"");
  const size_t at = text.find("[1](31) \t\"S-b\"");  // H-y's own port line
  ASSERT_NE(at, std::string::npos);
  text.erase(at, text.find('\n', at) - at);
  const ConfigError e = parse_error(text, "half.net");
  expect_actionable(e, "half.net", line, "S-b[5]");
  EXPECT_NE(e.problem().find("does not list port 1"), std::string::npos) << e.what();
}

TEST(Ibnetdiscover, DisagreeingLidsNameBothLines) {
  std::string text = kSmall;
  text.replace(text.find("lid 6 lmc 1"), 5, "lid 8");  // H-y's own line; S-b's line says 6
  const ConfigError e = parse_error(text, "lids.net");
  const int own = line_containing(text, "lid 8 lmc 1");
  const int other = line_containing(text, "\"host y\" lid 6");
  EXPECT_EQ(e.key(), "nodes.H-y") << e.what();
  EXPECT_TRUE((e.line() == own && e.problem().find("line " + std::to_string(other)) != std::string::npos) ||
              (e.line() == other && e.problem().find("line " + std::to_string(own)) != std::string::npos))
      << e.what();
}

TEST(Ibnetdiscover, PortBeyondTheHeaderCountNamesTheLine) {
  const std::string text = "Switch 4 \"S\"\n[1] \"H\"[1]\n[9] \"H\"[2]\nCa 2 \"H\"\n[1] \"S\"[1]\n[2] \"S\"[9]\n";
  expect_actionable(parse_error(text), "bad.net", 3, "S[9]");
}

TEST(Ibnetdiscover, RouterRecordIsRefusedNamingItsLine) {
  std::string text = kSmall;
  text += "\nvendid=0x2c9\nrtguid=0x77\nRt 2 \"R-77\" # \"router\"\n";
  const ConfigError e = parse_error(text, "router.net");
  EXPECT_EQ(e.line(), line_containing(text, "rtguid")) << e.what();
  EXPECT_NE(e.problem().find("router"), std::string::npos) << e.what();
  EXPECT_FALSE(e.fix().empty());
}

TEST(Ibnetdiscover, TwoRecordsWithOneNameNameBothLines) {
  const std::string text = "Switch 4 \"S\"\n[1] \"H\"[1]\nCa 1 \"H\"\n[1] \"S\"[1]\nSwitch 4 \"S\"\n";
  const ConfigError e = parse_error(text);
  expect_actionable(e, "bad.net", 5, "nodes.S");
  EXPECT_NE(e.problem().find("line 1"), std::string::npos) << e.what();
}

TEST(Ibnetdiscover, ValidateErrorsAreMappedToTheNodesLine) {
  // Both nodes claim LID 5: found by validate(), reported at the endpoint's line.
  const std::string text =
      "Switch 4 \"S\" # \"s\" base port 0 lid 5 lmc 0\n[1] \"H\"[1]\nCa 1 \"H\"\n[1] \"S\"[1] # lid 5 lmc 0\n";
  const ConfigError e = parse_error(text);
  EXPECT_EQ(e.key(), "nodes.H.lid") << e.what();
  EXPECT_EQ(e.line(), 4) << e.what();
}

TEST(Ibnetdiscover, MissingFileIsAConfigErrorNamingIt) {
  try {
    load_ibnetdiscover("/nonexistent/fabric.net");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "/nonexistent/fabric.net");
    EXPECT_FALSE(e.fix().empty());
  }
}

TEST(Ibnetdiscover, GarbledLinesAreConfigErrorsWithFileAndLine) {
  // Each junk line follows a valid record, so it is inside the records (not a preamble).
  const std::string head = "Switch 4 \"S\"\n[1] \"H\"[1]\nCa 1 \"H\"\n[1] \"S\"[1]\n";
  const std::vector<std::string> junk = {
      "[",
      "[2",
      "[2]",
      "[2] \"S",
      "[2] \"S\"",
      "[2] \"S\"[",
      "[2] \"S\"[3",
      "[99999999999999999999] \"S\"[3]",
      "[2] \"S\"[3] trailing words",
      "[2](zz) \"S\"[3]",
      "[2] \"S\"[3](12",
      "[2][ext \"S\"[3]",
      "[2] \"S\"[3] # lid 70000",
      "[2] \"S\"[3] # lid 4 lmc 9",
      "Switch",
      "Switch 4",
      "Switch x \"T\"",
      "Switch 4 \"T",
      "Switch 300 \"T\"",
      "Switch 0 \"T\"",
      "Switch 4 \"\"",
      "Ca 2 \"T\" junk",
      "caguid=",
      "caguid=0xnothex",
      "switchguid=0x123456789abcdef01",
      "hello world",
      "\x01\x02\x03",
  };
  for (const std::string& j : junk) {
    SCOPED_TRACE(j);
    const ConfigError e = parse_error(head + j + "\n", "junk.net");
    EXPECT_EQ(e.file(), "junk.net") << e.what();
    EXPECT_EQ(e.line(), 5) << e.what();
    EXPECT_FALSE(e.fix().empty()) << e.what();
  }
  EXPECT_EQ(parse_error("", "empty.net").file(), "empty.net");
  EXPECT_EQ(parse_error("just some text\n", "text.net").file(), "text.net");
}

TEST(Ibnetdiscover, TruncatedOrCutDumpsNeverCrash) {
  REQUIRE_SHARED_DUMPS();
  // Every prefix of a small dump, and a large dump with any one line removed, either loads
  // and validates or is a ConfigError naming the file: no other exception, no crash.
  auto check = [](const std::string& text) {
    try {
      parse_ibnetdiscover(text, "cut.net").validate();
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.file(), "cut.net") << e.what();
    }
  };
  const std::string small = read_text(shared_dir() + "/real_ibtopotool_1.net");
  for (size_t n = 0; n <= small.size(); ++n) check(small.substr(0, n));
  const std::string x5 = read_text(shared_dir() + "/real_X5.net");
  size_t start = 0, removed = 0, errors = 0;
  while (start < x5.size()) {
    const size_t end = x5.find('\n', start);
    const size_t next = end == std::string::npos ? x5.size() : end + 1;
    const std::string cut = x5.substr(0, start) + x5.substr(next);
    try {
      parse_ibnetdiscover(cut, "cut.net");
    } catch (const ConfigError& e) {
      ++errors;
      EXPECT_EQ(e.file(), "cut.net") << e.what();
    }
    ++removed;
    start = next;
  }
  EXPECT_EQ(removed, 922u);
  // Removing a port line leaves a cable listed from one end: each of the 318 is caught.
  EXPECT_GE(errors, 318u);
}


// ---------------------------------------------------------------------------------------
// Identities: descriptions, port GUIDs, node-name maps, export

TEST(Ibnetdiscover, HeaderDescriptionsAndCaPortGuidsAreKept) {
  const Topology t = parse_ibnetdiscover(kSmall, "small.net");
  EXPECT_EQ(node_named(t, "S-a").description, "switch a");
  EXPECT_EQ(node_named(t, "H-y").description, "host y");
  // The CA port's own GUID from "[1](31)", not the node GUID 0x30.
  EXPECT_EQ(port_guid(t, t.find("H-y")), 0x31u);
  EXPECT_EQ(node_guid(t, t.find("H-y")), 0x30u);
  // A switch answers on port 0, whose GUID is the node GUID.
  EXPECT_EQ(port_guid(t, t.find("S-b")), 0x11u);
}

TEST(Ibnetdiscover, NodesWithoutGuidsGetDistinctSyntheticOnesAndCaPortsNodeGuidPlusOne) {
  const Topology t = single_switch(3);
  std::set<uint64_t> seen;
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    EXPECT_EQ(node_guid(t, n), kSyntheticGuidBase + ((n + 1ull) << 8));
    EXPECT_TRUE(seen.insert(node_guid(t, n)).second);
    if (t.nodes[n].kind == NodeKind::endpoint) {
      EXPECT_EQ(port_guid(t, n), node_guid(t, n) + 1);
    }
  }
}

TEST(Ibnetdiscover, NodeNameMapRenamesNodesByNodeGuid) {
  const NodeNameMap names = parse_node_name_map(
      "# site map\n0x10 \"spine-1\"\n0x0000000000000030   \"host y\"  # HCA of y\n0xdead \"elsewhere\"\n", "site.map");
  const Topology t = parse_ibnetdiscover(kSmall, "small.net", names);
  EXPECT_NE(t.find("spine-1"), Topology::npos);
  EXPECT_NE(t.find("host y"), Topology::npos);
  EXPECT_NE(t.find("S-b"), Topology::npos);  // not in the map: the dump's name
  EXPECT_EQ(t.find("S-a"), Topology::npos);
  EXPECT_EQ(t.nodes.size(), 4u);
}

TEST(Ibnetdiscover, NodeNameMapErrorsNameTheFileAndLine) {
  auto error = [](const std::string& text) {
    try {
      parse_node_name_map(text, "site.map");
    } catch (const ConfigError& e) {
      return e;
    }
    ADD_FAILURE() << "no error for " << text;
    return ConfigError("", "", 0, "", "");
  };
  EXPECT_EQ(error("0x10 \"a\"\nswitch-a 0x11\n").line(), 2);
  EXPECT_EQ(error("0x10 \"a\"\n\n0x12\n").line(), 3);  // a GUID without a name
  const ConfigError twice = error("0x10 \"a\"\n0x10 \"b\"\n");
  EXPECT_EQ(twice.line(), 2);
  EXPECT_NE(std::string(twice.what()).find("first on line 1"), std::string::npos) << twice.what();
  EXPECT_EQ(twice.file(), "site.map");
}

// Every generator's fabric, exported with ibnetdiscover's ids (S-/H-<GUID>) and a node-name
// map, loads back with the map as the same fabric: names, ports, LIDs, GUIDs, cables, rates.
TEST(Ibnetdiscover, EveryGeneratorExportsAndReloadsThroughANodeNameMap) {
  const std::vector<Topology> fabrics = {single_switch(4),       kary_ntree(2, 3),     mesh2d(3, 2, 2),
                                         torus2d(3, 3, 1),       random_irregular(8, 1), two_switch_congestion(3, 2)};
  for (const Topology& t : fabrics) {
    SCOPED_TRACE(t.source);
    IbnetdiscoverWriteOptions ids;
    ids.guid_names = true;
    const std::string dump = write_ibnetdiscover(t, ids);
    EXPECT_EQ(dump.find("\"" + t.nodes[0].name + "\"[") , std::string::npos) << "names are descriptions only";
    const Topology back = parse_ibnetdiscover(dump, "export.net", parse_node_name_map(write_node_name_map(t), "export.map"));
    expect_same_fabric(t, back);
    // Without a map the ids are the names.
    const Topology plain = parse_ibnetdiscover(write_ibnetdiscover(t), "plain.net");
    expect_same_fabric(t, plain);
  }
}

}  // namespace
}  // namespace ibvp::topo
