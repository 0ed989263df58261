// Path lengths and edge forwarding index of a routing, counted by hand on small fabrics.
#include <gtest/gtest.h>

#include "common/fabrics.h"
#include "platform/sm/route_stats.h"
#include "platform/topology/generators.h"

using namespace ibvp;

TEST(RouteStats, ChainOfThreeSwitchesCountedByHand) {
  const topo::Topology t = tb::chain(3);  // h_src, a1 on s1; h_dst on s3
  const sm::RoutingTables rt = sm::make_routing_engine("minhop")->compute(t);
  const sm::TopologyStats ts = sm::topology_stats(t);
  EXPECT_EQ(ts.switches, 3u);
  EXPECT_EQ(ts.hosts, 3u);
  EXPECT_EQ(ts.diameter, 3u);
  EXPECT_EQ(ts.independent_cycles, 0);
  const sm::RouteStats rs = sm::route_stats(t, rt);
  EXPECT_EQ(rs.routes, 6u);
  EXPECT_EQ(rs.unrouted, 0u);
  // h_src <-> a1 cross one switch; the four routes to and from h_dst cross three.
  EXPECT_EQ(rs.hops, (std::map<uint32_t, uint64_t>{{1, 2}, {3, 4}}));
  // Each of the four inter-switch channels carries the two routes toward the far side.
  EXPECT_EQ(rs.efi_max, 2u);
  EXPECT_DOUBLE_EQ(rs.efi_mean, 2.0);
}

TEST(RouteStats, RingHasOneIndependentCycle) {
  const topo::Topology t = topo::torus2d(5, 1, 1);
  EXPECT_EQ(sm::topology_stats(t).independent_cycles, 1);
  EXPECT_EQ(sm::topology_stats(t).diameter, 3u);  // two hops each way around a 5-ring
}

TEST(RouteStats, FirstUnroutedNamesTheFirstHoleInTheTables) {
  topo::Topology t = tb::chain(3);  // h_src, a1 on s1; h_dst on s3
  sm::RoutingTables rt = sm::make_routing_engine("minhop")->compute(t);
  EXPECT_FALSE(sm::first_unrouted(t, rt).has_value());
  // Take h_dst's entry out of the middle switch: everyone on s1 loses it, h_dst keeps the rest.
  const uint32_t s2 = t.find("s2"), h_dst = t.find("h_dst");
  rt.lft[s2].port[t.nodes[h_dst].lid] = sm::Lft::kNoRoute;
  const std::optional<sm::UnroutedPair> hole = sm::first_unrouted(t, rt);
  ASSERT_TRUE(hole.has_value());
  EXPECT_EQ(hole->dlid, t.nodes[h_dst].lid);
  EXPECT_EQ(t.nodes[hole->src].kind, topo::NodeKind::endpoint);
  EXPECT_NE(hole->src, h_dst);
}

TEST(RouteStats, HostsCabledBackToBackNeedNoTable) {
  topo::Topology t;
  t.nodes = {topo::Node{"a", topo::NodeKind::endpoint, 1, 1, 0, 0, 0, {}}, topo::Node{"b", topo::NodeKind::endpoint, 1, 2, 0, 0, 0, {}}};
  t.links = {topo::Link{{0, 1}, {1, 1}, {}}};
  t.index();
  EXPECT_FALSE(sm::first_unrouted(t, sm::RoutingTables{}).has_value());
}
