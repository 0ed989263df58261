// OpenSM dump formats: a dump read back line by line gives exactly the tables it was
// written from, in the layout of OpenSM's osm_dump.c.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>

#include "platform/sm/opensm_dump.h"
#include "platform/topology/generators.h"
#include "platform/topology/ibnetdiscover.h"

namespace ibvp::sm {
namespace {

TEST(OpensmDump, LftsDumpReadsBackAsTheTablesItWasWrittenFrom) {
  const topo::Topology t = topo::random_irregular(8, 3);
  const RoutingTables rt = make_routing_engine("updn")->compute(t);
  std::istringstream in(opensm_lfts_dump(t, rt));
  std::string line;
  size_t blocks = 0, entries = 0, routed = 0;
  uint32_t sw = topo::Topology::npos;
  while (std::getline(in, line)) {
    unsigned max_lid = 0, lid = 0, port = 0;
    char name[64] = {0};
    if (std::sscanf(line.c_str(), "Unicast lids [0-%u] of switch Lid %u guid 0x%*x ('%63[^']", &max_lid, &lid,
                    name) == 3) {
      EXPECT_EQ(max_lid, t.max_lid());
      sw = t.find(name);
      ASSERT_NE(sw, topo::Topology::npos) << line;
      EXPECT_EQ(lid, t.nodes[sw].lid);
      ++blocks;
    } else if (std::sscanf(line.c_str(), "0x%x %u # ", &lid, &port) == 2) {
      ASSERT_NE(sw, topo::Topology::npos);
      EXPECT_EQ(port, rt.lft[sw].lookup(static_cast<uint16_t>(lid))) << line;
      const topo::Node& owner = t.nodes[t.node_of_lid(static_cast<uint16_t>(lid))];
      EXPECT_NE(line.find("'" + owner.name + "'"), std::string::npos) << line;
      EXPECT_NE(line.find(owner.kind == topo::NodeKind::switch_node ? "# Switch portguid" : "# Channel Adapter portguid"),
                std::string::npos);
      ++entries;
    } else {
      EXPECT_EQ(line, std::to_string(t.max_lid()) + " lids dumped");
    }
  }
  for (uint32_t s : t.switches())
    for (uint16_t lid = 0; lid <= t.max_lid(); ++lid) routed += rt.lft[s].lookup(lid) != Lft::kNoRoute;
  EXPECT_EQ(blocks, t.switches().size());
  EXPECT_EQ(entries, routed);  // every routed LID once, nothing else
  EXPECT_GT(routed, 0u);
}

TEST(OpensmDump, Sl2VlDumpHasOneRowPerInputForEachCabledSwitchOutputAndOnePerCa) {
  const topo::Topology t = topo::two_switch_congestion(2, 1);
  // A table that names its own (node, in, out), so each row shows where it came from.
  const Sl2VlOf tables = [](uint32_t node, uint16_t in, uint16_t out) {
    sw::Sl2VlTable tbl{};
    for (size_t sl = 0; sl < tbl.size(); ++sl) tbl[sl] = static_cast<uint8_t>((node + in + out + sl) % 15);
    return tbl;
  };
  const std::string dump = opensm_sl2vl_dump(t, tables);
  std::istringstream in(dump);
  std::string line, header;
  size_t rows = 0;
  uint32_t node = topo::Topology::npos;
  while (std::getline(in, line)) {
    char name[64] = {0};
    int lid = 0;
    if (std::sscanf(line.c_str(), "%*[A-Za-z ] 0x%*x, base LID %d, \"%63[^\"]", &lid, name) == 2) {
      node = t.find(name);
      ASSERT_NE(node, topo::Topology::npos) << line;
      EXPECT_EQ(lid, t.nodes[node].lid);
      continue;
    }
    unsigned i = 0, o = 0, vl[16];
    if (std::sscanf(line.c_str(), "%u %u : %u %u %u %u %u %u %u %u %u %u %u %u %u %u %u %u", &i, &o, &vl[0], &vl[1],
                    &vl[2], &vl[3], &vl[4], &vl[5], &vl[6], &vl[7], &vl[8], &vl[9], &vl[10], &vl[11], &vl[12], &vl[13],
                    &vl[14], &vl[15]) == 18) {
      const sw::Sl2VlTable want = tables(node, static_cast<uint16_t>(i), static_cast<uint16_t>(o));
      for (size_t sl = 0; sl < 16; ++sl) EXPECT_EQ(vl[sl], want[sl]) << line;
      if (t.nodes[node].kind == topo::NodeKind::switch_node) {
        EXPECT_GE(t.link_at(node, static_cast<uint16_t>(o)), 0) << "a row for an uncabled output: " << line;
      }
      ++rows;
    }
  }
  size_t expected = 0;
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    if (t.nodes[n].kind == topo::NodeKind::endpoint) {
      ++expected;
      continue;
    }
    for (uint16_t p = 1; p <= t.nodes[n].num_ports; ++p)
      if (t.link_at(n, p) >= 0) expected += t.nodes[n].num_ports + 1u;
  }
  EXPECT_EQ(rows, expected);
  EXPECT_NE(dump.find("#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15"), std::string::npos);
}


// single_switch(2): sw (LID 1), h1 (LID 2) on port 1, h2 (LID 3) on port 2; no GUIDs given,
// so the synthetic ones: node n has 0x0200000000000000 + (n + 1) * 256, a CA port +1.
TEST(OpensmDump, LftsOfATinyFabricAreTheHandDerivedLines) {
  const topo::Topology t = topo::single_switch(2);
  const RoutingTables rt = make_routing_engine("minhop")->compute(t);
  EXPECT_EQ(opensm_lfts_dump(t, rt),
            "Unicast lids [0-3] of switch Lid 1 guid 0x0200000000000100 ('sw'):\n"
            "0x0001 000 # Switch portguid 0x0200000000000100: 'sw'\n"
            "0x0002 001 # Channel Adapter portguid 0x0200000000000201: 'h1'\n"
            "0x0003 002 # Channel Adapter portguid 0x0200000000000301: 'h2'\n"
            "3 lids dumped\n");
}

TEST(OpensmDump, SubnetLstHasOneLinePerCabledPortWithBothSides) {
  const topo::Topology t = topo::single_switch(2);
  const std::string sw = "{ SW Ports:02 SystemGUID:0200000000000100 NodeGUID:0200000000000100 PortGUID:0200000000000100 ";
  const std::string h1 = "{ CA Ports:01 SystemGUID:0200000000000200 NodeGUID:0200000000000200 PortGUID:0200000000000201 ";
  const std::string h2 = "{ CA Ports:01 SystemGUID:0200000000000300 NodeGUID:0200000000000300 PortGUID:0200000000000301 ";
  EXPECT_EQ(opensm_subnet_lst(t),
            sw + "VenID:000000 DevID:0000 Rev:00000000 {sw} LID:0001 PN:01 } " + h1 +
                "VenID:00000000 DevID:0000 Rev:00000000 {h1} LID:0002 PN:01 } PHY=4x LOG=ACT SPD=2.5\n" + sw +
                "VenID:000000 DevID:0000 Rev:00000000 {sw} LID:0001 PN:02 } " + h2 +
                "VenID:00000000 DevID:0000 Rev:00000000 {h2} LID:0003 PN:01 } PHY=4x LOG=ACT SPD=2.5\n" + h1 +
                "VenID:000000 DevID:0000 Rev:00000000 {h1} LID:0002 PN:01 } " + sw +
                "VenID:00000000 DevID:0000 Rev:00000000 {sw} LID:0001 PN:01 } PHY=4x LOG=ACT SPD=2.5\n" + h2 +
                "VenID:000000 DevID:0000 Rev:00000000 {h2} LID:0003 PN:01 } " + sw +
                "VenID:00000000 DevID:0000 Rev:00000000 {sw} LID:0001 PN:02 } PHY=4x LOG=ACT SPD=2.5\n");
}

TEST(OpensmDump, FdbsCountHopsAndFlagARouteThatIsNotLeastHop) {
  const topo::Topology tiny = topo::single_switch(2);
  EXPECT_EQ(opensm_fdbs(tiny, make_routing_engine("minhop")->compute(tiny)),
            "dump_ucast_routes: Switch 0x0200000000000100\n"
            "LID    : Port : Hops : Optimal\n"
            "0x0001 : 000  : 00   : yes\n"
            "0x0002 : 001  : 01   : yes\n"
            "0x0003 : 002  : 01   : yes\n");
  // A ring of three switches (torus2d 3x1: port 1 to +x, 2 to -x). s0_0 sends s1_0's LID the
  // long way round, through s2_0: 2 hops where 1 through port 1 would do.
  const topo::Topology ring = topo::torus2d(3, 1, 1);
  RoutingTables rt = make_routing_engine("minhop")->compute(ring);
  const uint32_t s0 = ring.find("s0_0");
  const uint16_t s1_lid = ring.nodes[ring.find("s1_0")].lid;
  rt.lft[s0].port[s1_lid] = 2;
  const std::string fdbs = opensm_fdbs(ring, rt);
  char want[64];
  std::snprintf(want, sizeof want, "0x%04X : 002  : 02   : No 1 hop path possible via port 1!\n", s1_lid);
  EXPECT_NE(fdbs.find(want), std::string::npos) << fdbs;
  // The host on s1_0 is one more link away.
  const uint16_t h_lid = ring.nodes[ring.find("h1_0_1")].lid;
  std::snprintf(want, sizeof want, "0x%04X : 001  : 02   : yes\n", h_lid);
  EXPECT_NE(fdbs.find(want), std::string::npos) << fdbs;
}

TEST(OpensmDump, DumpsCarryTheCaPortGuidAndDescriptionOfADiscoveredFabric) {
  const topo::Topology t = topo::load_ibnetdiscover(std::string(IBVP_SOURCE_DIR) + "/tests/data/opensm/two_switch.net");
  const std::string lfts = opensm_lfts_dump(t, make_routing_engine("minhop")->compute(t));
  EXPECT_NE(lfts.find("Unicast lids [0-7] of switch Lid 1 guid 0x0000000000000010 ('switch a'):\n"), std::string::npos);
  EXPECT_NE(lfts.find("0x0007 001 # Channel Adapter portguid 0x0000000000000031: 'host y'\n"), std::string::npos) << lfts;
  EXPECT_NE(opensm_subnet_lst(t).find("PortGUID:0000000000000021 VenID:000000 DevID:0000 Rev:00000000 {host x} LID:0004"),
            std::string::npos);
}

}  // namespace
}  // namespace ibvp::sm
