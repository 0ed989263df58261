// Routing engine "file": the tables of a dump in OpenSM's opensm-lfts.dump format are the
// tables loaded, ibvp's own dumps of every engine load back identical, and a dump that does
// not fit the topology is refused naming the file, the line and the fix.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "platform/params/config_error.h"
#include "platform/sm/file_routing.h"
#include "platform/sm/opensm_dump.h"
#include "platform/topology/generators.h"
#include "platform/topology/ibnetdiscover.h"

namespace ibvp::sm {
namespace {

using topo::Topology;

std::string data(const std::string& name) { return std::string(IBVP_SOURCE_DIR) + "/tests/data/opensm/" + name; }

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

ConfigError refusal(const Topology& t, const std::string& text) {
  try {
    parse_lfts_dump(t, text, "lfts.dump");
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError for:\n" << text;
  return ConfigError("", "", 0, "", "");
}

TEST(FileRouting, OpensmFormatSampleLoadsAsItsLines) {
  const Topology t = topo::load_ibnetdiscover(data("two_switch.net"));
  const RoutingTables rt = make_routing_engine("file", {{}, data("two_switch-lfts.dump")})->compute(t);
  EXPECT_EQ(rt.engine, "file");
  const uint32_t a = t.find("S-0000000000000010"), b = t.find("S-0000000000000011");
  // LID: 1 2 (3) 4 (5) 6 7, read off the sample's lines.
  const uint8_t no = Lft::kNoRoute;
  EXPECT_EQ(rt.lft[a].port, (std::vector<uint8_t>{no, 0, 1, no, 3, no, 1, 1}));
  EXPECT_EQ(rt.lft[b].port, (std::vector<uint8_t>{no, 2, 0, no, 2, no, 5, 5}));
}

TEST(FileRouting, EveryEnginesDumpLoadsBackAsIdenticalTables) {
  for (const Topology& t : {topo::random_irregular(8, 1), topo::kary_ntree(3, 2), topo::torus2d(3, 3, 2)}) {
    for (const std::string engine : {"minhop", "updn", "dfs", "smart", "multipath_disjoint", "dfsssp"}) {
      SCOPED_TRACE(t.source + " " + engine);
      const RoutingTables rt = make_routing_engine(engine)->compute(t);
      const RoutingTables back = parse_lfts_dump(t, opensm_lfts_dump(t, rt), "written.dump");
      for (uint32_t s : t.switches()) EXPECT_EQ(back.lft[s].port, rt.lft[s].port) << t.nodes[s].name;
    }
  }
}

// OpenSM's remap_lid: when the port GUID on a line names a port whose LIDs moved, the entry
// follows the port (its base LID plus the line's path bits).
TEST(FileRouting, EntriesFollowTheirPortGuidWhenLidsMoved) {
  const Topology t = topo::load_ibnetdiscover(data("two_switch.net"));
  std::string text = read_text(data("two_switch-lfts.dump"));
  text = replace(text, "0x0006 001 # Channel Adapter portguid 0x0000000000000031", "0x0016 003 # Channel Adapter portguid 0x0000000000000031");
  text = replace(text, "0x0007 001 # Channel Adapter portguid 0x0000000000000031", "0x0017 003 # Channel Adapter portguid 0x0000000000000031");
  text = replace(text, "0x0004 003 # Channel Adapter", "0x0004 001 # Channel Adapter");
  // Entries now make a->y leave on port 3 (towards x), which leaves y unreachable from x:
  // the loader refuses it, naming the switch that holds the wrong entry... unless the ports
  // agree again. Point them back at port 1 to load.
  const ConfigError e = refusal(t, text);
  EXPECT_NE(std::string(e.what()).find("without a route"), std::string::npos) << e.what();
  text = replace(text, "0x0016 003", "0x0016 001");
  text = replace(text, "0x0017 003", "0x0017 001");
  text = replace(text, "0x0004 001 # Channel Adapter", "0x0004 003 # Channel Adapter");
  const RoutingTables rt = parse_lfts_dump(t, text, "moved.dump");
  EXPECT_EQ(rt.lft[t.find("S-0000000000000010")].port[6], 1);
  EXPECT_EQ(rt.lft[t.find("S-0000000000000010")].port[7], 1);
}

TEST(FileRouting, DumpsThatDoNotFitTheTopologyAreRefusedWithFileLineAndFix) {
  const Topology t = topo::load_ibnetdiscover(data("two_switch.net"));
  const std::string good = read_text(data("two_switch-lfts.dump"));
  struct Case {
    std::string from, to;
    int line;
    std::string says;
  };
  const Case cases[] = {
      {"Lid 2 guid 0x0000000000000011", "Lid 2 guid 0x0000000000000099", 8, "is not a switch of the topology"},
      {"0x0004 002", "0x0004 009", 11, "port 9 is beyond the 8 ports"},
      {"0x0004 002 # Channel Adapter portguid 0x0000000000000021: 'host x'", "0x0005 002", 11, "is no LID of a node"},
      {"0x0001 000", "0xzz 000", 2, "does not start with a LID"},
      {"7 lids dumped\nUnicast", "garbage\nUnicast", 7, "line not understood"},
      {"Unicast lids [0-7] of switch Lid 1 guid", "Multicast mlids [0xc000-0xc001] of switch Lid 1 guid", 1,
       "multicast"},
  };
  for (const Case& c : cases) {
    const ConfigError e = refusal(t, replace(good, c.from, c.to));
    SCOPED_TRACE(e.what());
    EXPECT_EQ(e.file(), "lfts.dump");
    EXPECT_EQ(e.line(), c.line);
    EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos);
    EXPECT_FALSE(e.fix().empty());
  }
  // A switch block duplicated; an entry before any block.
  EXPECT_EQ(refusal(t, good + good).line(), 15);
  EXPECT_EQ(refusal(t, "0x0001 000\n" + good).line(), 1);
}

TEST(FileRouting, MissingEntriesThatLeaveAnEndpointUnreachableAreRefusedNamingTheSwitch) {
  const Topology t = topo::load_ibnetdiscover(data("two_switch.net"));
  const std::string good = read_text(data("two_switch-lfts.dump"));
  const ConfigError e =
      refusal(t, replace(good, "0x0004 002 # Channel Adapter portguid 0x0000000000000021: 'host x'\n", ""));
  const std::string what = e.what();
  EXPECT_NE(what.find("H-0000000000000030 without a route to H-0000000000000020"), std::string::npos) << what;
  EXPECT_NE(what.find("switch S-0000000000000011"), std::string::npos) << what;
  // A switch with no block at all.
  const std::string only_a = good.substr(0, good.find("Unicast lids [0-7] of switch Lid 2"));
  EXPECT_NE(std::string(refusal(t, only_a).what()).find("has no block in the dump"), std::string::npos);
}

TEST(FileRouting, WithoutAnLftsFileTheEngineSaysWhichKeyToGive) {
  try {
    make_routing_engine("file")->compute(topo::single_switch(2));
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "routing_options.lfts_file");
  }
}

}  // namespace
}  // namespace ibvp::sm
