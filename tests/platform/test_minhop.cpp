// Min-hop routing: every route is a shortest path (checked against a BFS written here, not
// the engine's), destinations are spread evenly over equal paths, and LMC path bits take
// different ports where there is a choice.
#include <algorithm>
#include <map>
#include <gtest/gtest.h>

#include <set>

#include "platform/params/config_error.h"
#include "platform/sm/minhop.h"
#include "platform/sm/routing.h"
#include "platform/topology/generators.h"

namespace ibvp::sm {
namespace {

using topo::Link;
using topo::NodeKind;
using topo::Topology;

// The test's own view of the fabric, from the cable list only.
struct Graph {
  std::vector<std::vector<std::pair<uint16_t, uint32_t>>> sw_ports;  // [switch node] -> (port, switch node)
  std::vector<uint32_t> attach;                                      // [endpoint node] -> its switch node
};

Graph graph_of(const Topology& t) {
  Graph g;
  g.sw_ports.resize(t.nodes.size());
  g.attach.assign(t.nodes.size(), Topology::npos);
  for (const Link& l : t.links) {
    const bool a_sw = t.nodes[l.a.node].kind == NodeKind::switch_node;
    const bool b_sw = t.nodes[l.b.node].kind == NodeKind::switch_node;
    if (a_sw && b_sw) {
      g.sw_ports[l.a.node].push_back({l.a.port, l.b.node});
      g.sw_ports[l.b.node].push_back({l.b.port, l.a.node});
    } else if (a_sw) {
      g.attach[l.b.node] = l.a.node;
    } else if (b_sw) {
      g.attach[l.a.node] = l.b.node;
    }
  }
  return g;
}

// Switch hops from every switch to `to`.
std::vector<int> bfs(const Graph& g, uint32_t to) {
  std::vector<int> d(g.sw_ports.size(), -1);
  std::vector<uint32_t> q{to};
  d[to] = 0;
  for (size_t i = 0; i < q.size(); ++i)
    for (const auto& [port, v] : g.sw_ports[q[i]])
      if (d[v] < 0) d[v] = d[q[i]] + 1, q.push_back(v);
  return d;
}

uint32_t lids_of(const topo::Node& n) { return 1u << n.lmc; }

// For every source endpoint and every LID of every endpoint: the walk arrives, starts at the
// source's switch, ends at the destination's, and visits shortest-path-hops + 1 switches.
void expect_all_routes_shortest(const Topology& t) {
  const RoutingTables rt = make_routing_engine("minhop")->compute(t);
  const Graph g = graph_of(t);
  size_t checked = 0;
  for (uint32_t dst : t.endpoints()) {
    const std::vector<int> d = bfs(g, g.attach[dst]);
    for (uint32_t i = 0; i < lids_of(t.nodes[dst]); ++i) {
      const uint16_t dlid = static_cast<uint16_t>(t.nodes[dst].lid + i);
      for (uint32_t src : t.endpoints()) {
        const std::vector<uint32_t> path = trace_route(t, rt, src, dlid);
        ASSERT_FALSE(path.empty()) << t.source << ": " << t.nodes[src].name << " -> LID " << dlid;
        EXPECT_EQ(path.front(), g.attach[src]);
        EXPECT_EQ(path.back(), g.attach[dst]);
        ASSERT_EQ(static_cast<int>(path.size()), d[g.attach[src]] + 1)
            << t.source << ": " << t.nodes[src].name << " -> " << t.nodes[dst].name;
        ++checked;
      }
    }
  }
  const size_t e = t.endpoints().size();
  EXPECT_GE(checked, e * e);
}

// Re-LID a generated fabric with the given LMC on every endpoint.
Topology with_lmc(Topology t, uint8_t lmc) {
  for (topo::Node& n : t.nodes) {
    n.lid = 0;
    if (n.kind == NodeKind::endpoint) n.lmc = lmc;
  }
  topo::assign_lids(t);
  t.index();
  t.validate();
  return t;
}

TEST(Minhop, EveryRouteIsAShortestPathOnRandomIrregularFabrics) {
  for (uint32_t n : {16u, 32u, 64u})
    for (uint32_t seed : {1u, 2u}) expect_all_routes_shortest(topo::random_irregular(n, seed));
}

TEST(Minhop, EveryRouteIsAShortestPathOnAFatTree) {
  expect_all_routes_shortest(topo::kary_ntree(4, 3));
  expect_all_routes_shortest(topo::kary_ntree(2, 4));
}

TEST(Minhop, EveryRouteIsAShortestPathOnTorusAndMesh) {
  expect_all_routes_shortest(topo::torus2d(4, 4, 2));
  expect_all_routes_shortest(topo::torus2d(5, 3, 1));
  expect_all_routes_shortest(topo::mesh2d(3, 5, 1));
}

TEST(Minhop, EveryPathBitLidIsRoutedOnAShortestPath) {
  expect_all_routes_shortest(with_lmc(topo::random_irregular(16, 3), 2));
  expect_all_routes_shortest(with_lmc(topo::kary_ntree(4, 2), 2));
}

// In a k-ary n-tree every up port of a switch leads to switches that cover the same hosts, so
// a balanced min-hop routing loads every channel of a level alike. A channel from level l up
// to l+1 (0 = leaves) carries the routes from the k^(l+1) hosts of its subtree to the
// k^n - k^(l+1) others, shared by the k^(l+1) such channels of the subtree: k^n - k^(l+1)
// routes each. By symmetry a channel down from level l to l-1 carries k^n - k^l, and a
// leaf's host port k^n - 1. Balancing by destinations counted per switch breaks this: with
// LIDs in host order a level-1 switch of the 4-ary 3-tree then sends all 192 of its routes
// up one channel of four (issue 17).
TEST(Minhop, KaryNtreeChannelsOfALevelCarryEqualRoutes) {
  for (auto [k, n] : {std::pair<uint32_t, uint32_t>{2, 3}, {4, 2}, {4, 3}, {3, 3}, {2, 5}}) {
    SCOPED_TRACE(std::to_string(k) + "-ary " + std::to_string(n) + "-tree");
    const Topology t = topo::kary_ntree(k, n);
    const RoutingTables rt = make_routing_engine("minhop")->compute(t);
    // Routes crossing each (switch, output port), walked through the tables.
    std::map<std::pair<uint32_t, uint16_t>, uint64_t> routes;
    for (uint32_t src : t.endpoints())
      for (uint32_t dst : t.endpoints()) {
        if (src == dst) continue;
        uint32_t at = t.peer(src, 1).node;
        for (int hops = 0; at != dst; ++hops) {
          ASSERT_LT(hops, 2 * static_cast<int>(n)) << t.nodes[src].name << " -> " << t.nodes[dst].name;
          const uint16_t out = rt.lft[at].lookup(t.nodes[dst].lid);
          ++routes[{at, out}];
          at = t.peer(at, out).node;
        }
      }
    uint32_t k_n = 1;
    for (uint32_t i = 0; i < n; ++i) k_n *= k;
    for (uint32_t s : t.switches()) {
      const std::string& name = t.nodes[s].name;  // "s<level>_<w>"
      const uint32_t level = static_cast<uint32_t>(std::stoul(name.substr(1, name.find('_') - 1)));
      uint32_t k_l = 1;
      for (uint32_t i = 0; i < level; ++i) k_l *= k;
      for (uint16_t p = 1; p <= k; ++p) EXPECT_EQ(routes[std::make_pair(s, p)], k_n - k_l) << name << " down port " << p;
      if (level + 1 < n) {
        for (uint16_t p = static_cast<uint16_t>(k + 1); p <= 2 * k; ++p)
          EXPECT_EQ(routes[std::make_pair(s, p)], k_n - k_l * k) << name << " up port " << p;
      }
    }
  }
}

// Two switches joined by two cables (A/1-B/1, A/2-B/2), four hosts on B: both cables are
// shortest, so A gives them two destinations each, the first to the lower port.
TEST(Minhop, ParallelCablesShareDestinationsAlternately) {
  Topology t;
  t.nodes = {{"A", NodeKind::switch_node, 3, 0, 0, 0, 0, {}}, {"B", NodeKind::switch_node, 6, 0, 0, 0, 0, {}}};
  t.links = {{{0, 1}, {1, 1}, {}}, {{0, 2}, {1, 2}, {}}};
  t.nodes.push_back({"a", NodeKind::endpoint, 1, 0, 0, 0, 0, {}});
  t.links.push_back({{0, 3}, {2, 1}, {}});
  for (uint32_t h = 0; h < 4; ++h) {
    t.nodes.push_back({"b" + std::to_string(h), NodeKind::endpoint, 1, 0, 0, 0, 0, {}});
    t.links.push_back({{1, static_cast<uint16_t>(3 + h)}, {3 + h, 1}, {}});
  }
  topo::assign_lids(t);
  t.index();
  t.validate();
  const RoutingTables rt = make_routing_engine("minhop")->compute(t);
  std::vector<uint8_t> ports;
  for (uint32_t h = 0; h < 4; ++h) ports.push_back(rt.lft[0].lookup(t.nodes[3 + h].lid));
  EXPECT_EQ(ports, (std::vector<uint8_t>{1, 2, 1, 2}));
}

// With LMC = 2 an endpoint answers to 4 LIDs; where c ports of a switch lie on shortest paths
// to it, its 4 LIDs leave that switch over min(4, c) different ports.
TEST(Minhop, LmcPathBitLidsLeaveOverDifferentShortestPathPorts) {
  for (const Topology& t : {with_lmc(topo::kary_ntree(4, 2), 2), with_lmc(topo::kary_ntree(2, 3), 2),
                            with_lmc(topo::random_irregular(16, 5), 2), with_lmc(topo::torus2d(4, 4, 1), 2)}) {
    SCOPED_TRACE(t.source);
    const RoutingTables rt = make_routing_engine("minhop")->compute(t);
    const Graph g = graph_of(t);
    size_t with_choice = 0;
    for (uint32_t dst : t.endpoints()) {
      const std::vector<int> d = bfs(g, g.attach[dst]);
      for (uint32_t s : t.switches()) {
        if (s == g.attach[dst]) continue;
        size_t candidates = 0;
        for (const auto& [port, v] : g.sw_ports[s]) candidates += d[v] == d[s] - 1;
        std::set<uint8_t> used;
        for (uint32_t i = 0; i < 4; ++i) used.insert(rt.lft[s].lookup(static_cast<uint16_t>(t.nodes[dst].lid + i)));
        EXPECT_EQ(used.size(), std::min<size_t>(4, candidates)) << t.nodes[s].name << " -> " << t.nodes[dst].name;
        with_choice += candidates > 1;
      }
    }
    EXPECT_GT(with_choice, 0u) << "the fabric offers no choice: the test shows nothing";
  }
}

TEST(Minhop, SwitchOwnLidRoutesToManagementPort0) {
  const Topology t = topo::random_irregular(8, 1);
  const RoutingTables rt = make_routing_engine("minhop")->compute(t);
  for (uint32_t s : t.switches()) {
    EXPECT_EQ(rt.lft[s].lookup(t.nodes[s].lid), 0);
    for (uint32_t other : t.switches())
      if (other != s) {
        EXPECT_NE(rt.lft[s].lookup(t.nodes[other].lid), 0);
      }
  }
}

TEST(Minhop, TablesCoverEveryLidAndEndpointsHaveNone) {
  const Topology t = topo::two_switch_congestion(5, 1);
  const RoutingTables rt = make_routing_engine("minhop")->compute(t);
  EXPECT_EQ(rt.engine, "minhop");
  ASSERT_EQ(rt.lft.size(), t.nodes.size());
  for (uint32_t s : t.switches()) EXPECT_EQ(rt.lft[s].port.size(), t.max_lid() + 1u);
  for (uint32_t e : t.endpoints()) EXPECT_TRUE(rt.lft[e].port.empty());
}

// Seed 004 Fig. 1 by hand: A reaches everything on B over A/1, B reaches A's hosts over B/1,
// and each switch sends its own hosts' LIDs to their ports.
TEST(Minhop, TwoSwitchCongestionRoutesFollowFigure1) {
  const Topology t = topo::two_switch_congestion(5, 1);
  const RoutingTables rt = make_routing_engine("minhop")->compute(t);
  const uint32_t a = t.find("A"), b = t.find("B");
  auto lid = [&t](const char* name) { return t.nodes[t.find(name)].lid; };
  EXPECT_EQ(rt.lft[a].lookup(lid("B_C")), 1);
  EXPECT_EQ(rt.lft[a].lookup(lid("B_V")), 1);
  EXPECT_EQ(rt.lft[a].lookup(lid("A_V")), 3);
  EXPECT_EQ(rt.lft[b].lookup(lid("B_C")), 7);
  EXPECT_EQ(rt.lft[b].lookup(lid("A_R1")), 1);
  EXPECT_EQ(trace_route(t, rt, t.find("A_R1"), lid("B_C")), (std::vector<uint32_t>{a, b}));
  EXPECT_EQ(trace_route(t, rt, t.find("B_L3"), lid("B_C")), (std::vector<uint32_t>{b}));
}

TEST(Minhop, UnreachableLidsHaveNoRoute) {
  // Two islands (sw0 + h0, sw1 + h1): not a valid fabric, but the engine must not route
  // into nowhere.
  Topology t;
  t.nodes = {{"sw0", NodeKind::switch_node, 2, 1, 0, 0, 0, {}}, {"sw1", NodeKind::switch_node, 2, 2, 0, 0, 0, {}},
             {"h0", NodeKind::endpoint, 1, 3, 0, 0, 0, {}},     {"h1", NodeKind::endpoint, 1, 4, 0, 0, 0, {}}};
  t.links = {{{0, 1}, {2, 1}, {}}, {{1, 1}, {3, 1}, {}}};
  t.index();
  const RoutingTables rt = make_routing_engine("minhop")->compute(t);
  EXPECT_EQ(rt.lft[0].lookup(4), Lft::kNoRoute);
  EXPECT_EQ(rt.lft[0].lookup(2), Lft::kNoRoute);
  EXPECT_EQ(rt.lft[0].lookup(3), 1);
  EXPECT_TRUE(trace_route(t, rt, 2, 4).empty());
  EXPECT_EQ(trace_route(t, rt, 2, 3), std::vector<uint32_t>{0});
}

TEST(Minhop, TraceRouteIsEmptyOnALoopOrAMissingEntry) {
  const Topology t = topo::kary_ntree(2, 2);  // leaves s0_0, s0_1 under roots s1_0, s1_1
  RoutingTables rt = make_routing_engine("minhop")->compute(t);
  const uint32_t src = t.find("h1"), dst = t.find("h4");
  const uint16_t dlid = t.nodes[dst].lid;
  ASSERT_FALSE(trace_route(t, rt, src, dlid).empty());
  // Send h4's LID from the roots back down to s0_0, which sends it up: a loop.
  for (uint32_t s : t.switches())
    if (t.nodes[s].name.rfind("s1_", 0) == 0) rt.lft[s].port[dlid] = 1;  // down port 1 -> s0_0
  EXPECT_TRUE(trace_route(t, rt, src, dlid).empty());
  rt.lft[t.find("s0_0")].port[dlid] = Lft::kNoRoute;
  EXPECT_TRUE(trace_route(t, rt, src, dlid).empty());
  EXPECT_TRUE(trace_route(t, rt, src, 0).empty());  // LID 0 is nobody's
}

TEST(Minhop, RoutingIsDeterministic) {
  const Topology t = topo::random_irregular(32, 9);
  const RoutingTables x = make_routing_engine("minhop")->compute(t);
  const RoutingTables y = make_routing_engine("minhop")->compute(t);
  for (size_t n = 0; n < t.nodes.size(); ++n) EXPECT_EQ(x.lft[n].port, y.lft[n].port);
}

TEST(Minhop, UnknownEngineIsAConfigErrorListingTheKnownOnes) {
  // Every registered name makes the engine of that name.
  const std::vector<std::string> names = routing_engine_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "minhop"), names.end());
  for (const std::string& n : names) EXPECT_EQ(make_routing_engine(n)->name(), n);
  try {
    make_routing_engine("ftree");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("ftree"), std::string::npos);
    EXPECT_NE(e.fix().find("minhop"), std::string::npos);
  }
}

}  // namespace
}  // namespace ibvp::sm
