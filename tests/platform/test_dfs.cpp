// DFS up*/down* routing. The tree is checked against the cable list (every cable joins a
// switch and an ancestor, preorder numbers, the descent heuristic on a hand-made fabric),
// the routes against the up*/down* rule under that orientation, and the claim of Sancho et
// al. (seed 001's "DFS") against Autonet's BFS up*/down* on the same fabrics.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platform/params/config_error.h"
#include "platform/sm/channel_dependency.h"
#include "platform/sm/dfs.h"
#include "platform/sm/route_stats.h"
#include "platform/sm/updn.h"
#include "platform/topology/generators.h"

namespace ibvp::sm {
namespace {

using topo::Link;
using topo::NodeKind;
using topo::Topology;

// Inter-switch cables as (switch node, switch node), loopbacks left out.
std::vector<std::pair<uint32_t, uint32_t>> switch_cables(const Topology& t) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const Link& l : t.links)
    if (t.nodes[l.a.node].kind == NodeKind::switch_node && t.nodes[l.b.node].kind == NodeKind::switch_node &&
        l.a.node != l.b.node)
      out.push_back({l.a.node, l.b.node});
  return out;
}

// The switch an endpoint hangs on; a switch's own LID is reached at the switch.
uint32_t attach(const Topology& t, uint32_t node) {
  return t.nodes[node].kind == NodeKind::switch_node ? node : t.peer(node, 1).node;
}

bool is_ancestor(const DfsRanking& r, uint32_t above, uint32_t below) {
  for (uint32_t at = r.parent[below]; at != Topology::npos; at = r.parent[at])
    if (at == above) return true;
  return false;
}

// Every LID of every node with its owner: the 2^LMC LIDs of endpoints and the switches' LIDs.
std::vector<std::pair<uint32_t, uint16_t>> all_lids(const Topology& t) {
  std::vector<std::pair<uint32_t, uint16_t>> out;
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    const uint32_t count = t.nodes[n].kind == NodeKind::endpoint ? 1u << t.nodes[n].lmc : 1u;
    for (uint32_t i = 0; i < count; ++i) out.push_back({n, static_cast<uint16_t>(t.nodes[n].lid + i)});
  }
  return out;
}

// For every source (endpoints, and switches sending from port 0) and every LID of every other
// node: the walk arrives at the destination's switch from the source's and never takes an up
// cable (toward the lower preorder number) after a down cable. Returns the routes checked.
size_t check_dfs_routes(const Topology& t, const RoutingTables& rt, const DfsRanking& r) {
  size_t routes = 0;
  for (const auto& [dst, dlid] : all_lids(t))
    for (uint32_t src = 0; src < t.nodes.size(); ++src) {
      if (src == dst) continue;
      const std::vector<uint32_t> path = trace_route(t, rt, src, dlid);
      const std::string what = t.source + ": " + t.nodes[src].name + " -> LID " + std::to_string(dlid);
      if (path.empty()) {
        ADD_FAILURE() << what << " has no route";
        return routes;
      }
      EXPECT_EQ(path.front(), attach(t, src)) << what;
      EXPECT_EQ(path.back(), attach(t, dst)) << what;
      bool went_down = false;
      for (size_t i = 1; i < path.size(); ++i) {
        const bool up = r.order[path[i]] < r.order[path[i - 1]];
        if (up && went_down) {
          ADD_FAILURE() << what << ": up from " << t.nodes[path[i - 1]].name << " after a down cable";
          return routes;
        }
        went_down = went_down || !up;
      }
      ++routes;
    }
  return routes;
}

// Seed 001's fabric shape (4 switch ports, 4 hosts per switch), 8..32 switches to stay fast.
std::vector<Topology> fifty_fabrics() {
  std::vector<Topology> out;
  for (uint32_t i = 0; i < 50; ++i) out.push_back(topo::random_irregular(8 + i * 24 / 49, 3000 + 11 * i));
  return out;
}

double mean_switches_per_route(const RouteStats& s) {
  double sum = 0, count = 0;
  for (const auto& [switches, routes] : s.hops) {
    sum += static_cast<double>(switches) * static_cast<double>(routes);
    count += static_cast<double>(routes);
  }
  return sum / count;
}

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

// ---------------------------------------------------------------------------------------------

TEST(Dfs, RoutesEveryPairLegallyOnFiftyRandomIrregularFabrics) {
  size_t routes = 0;
  for (const Topology& t : fifty_fabrics()) {
    DfsEngine engine;
    const RoutingTables rt = engine.compute(t);
    EXPECT_EQ(rt.engine, "dfs");
    const size_t n = t.nodes.size();
    const size_t checked = check_dfs_routes(t, rt, engine.ranking());
    ASSERT_EQ(checked, n * (n - 1)) << t.source;
    routes += checked;
  }
  EXPECT_GT(routes, 500000u);
}

TEST(Dfs, CdgIsAcyclicOnFiftyRandomIrregularFabrics) {
  for (const Topology& t : fifty_fabrics()) {
    const RoutingTables rt = DfsEngine().compute(t);
    CdgOptions with_switches;
    with_switches.switch_sources = true;
    const CdgReport r = analyze_deadlock(t, rt, with_switches);
    EXPECT_TRUE(r.acyclic) << t.source << ": cycle of " << r.cycle.size();
    EXPECT_EQ(r.broken_routes, 0u) << t.source;
    EXPECT_EQ(r.routes, t.nodes.size() * (t.nodes.size() - 1)) << t.source;
  }
}

// An undirected DFS leaves no cross edges: every cable joins a switch and one of its
// ancestors, so "up" (toward the lower preorder number) is "toward the ancestor" and the
// depth falls by at least one on every up cable.
TEST(Dfs, EveryCableJoinsASwitchAndItsAncestorInPreorder) {
  std::vector<Topology> fabrics = {topo::random_irregular(32, 1), topo::random_irregular(64, 2),
                                   topo::torus2d(5, 4, 1), topo::mesh2d(4, 6, 1), topo::kary_ntree(3, 3)};
  for (const Topology& t : fabrics) {
    const DfsRanking r = dfs_rank_switches(t);
    ASSERT_EQ(r.roots.size(), 1u) << t.source;
    EXPECT_EQ(r.order[r.roots[0]], 0u);
    EXPECT_EQ(r.depth[r.roots[0]], 0u);
    std::vector<bool> seen(t.switches().size(), false);
    for (uint32_t s : t.switches()) {
      ASSERT_LT(r.order[s], seen.size());
      EXPECT_FALSE(seen[r.order[s]]) << "preorder number used twice";
      seen[r.order[s]] = true;
      if (s == r.roots[0]) continue;
      const uint32_t p = r.parent[s];
      ASSERT_NE(p, Topology::npos) << t.nodes[s].name;
      EXPECT_LT(r.order[p], r.order[s]);
      EXPECT_EQ(r.depth[s], r.depth[p] + 1);
      bool cabled = false;
      for (const auto& [a, b] : switch_cables(t)) cabled = cabled || (a == s && b == p) || (a == p && b == s);
      EXPECT_TRUE(cabled) << t.nodes[s].name << "'s tree parent is not a neighbour";
    }
    for (const auto& [a, b] : switch_cables(t)) {
      const uint32_t lower = r.order[a] < r.order[b] ? a : b, upper = lower == a ? b : a;
      EXPECT_TRUE(is_ancestor(r, lower, upper)) << t.source << ": cable " << t.nodes[a].name << " - " << t.nodes[b].name;
      EXPECT_TRUE(r.is_up(upper, lower));
      EXPECT_LT(r.depth[lower], r.depth[upper]);
    }
    for (uint32_t e : t.endpoints()) EXPECT_EQ(r.order[e], Topology::npos);
  }
}

// r - a, r - c, a - b, a - c (hosts left out). From r, a and c each have one cable into the
// tree: a, the lower index, is entered. From a, b has one cable into the tree and c two (to r
// and a), so c is entered before b although b comes first: preorder r, a, c, b.
TEST(Dfs, DescendsToTheNeighbourWithMostCablesIntoTheTree) {
  Topology t;
  for (const char* name : {"r", "a", "b", "c"}) t.nodes.push_back({name, NodeKind::switch_node, 4, 0, 0, 0, 0, {}});
  t.links = {{{0, 1}, {1, 1}, {}}, {{0, 2}, {3, 1}, {}}, {{1, 2}, {2, 1}, {}}, {{1, 3}, {3, 2}, {}}};
  t.index();
  DfsOptions opt;
  opt.root = "r";
  const DfsRanking r = dfs_rank_switches(t, opt);
  EXPECT_EQ(r.order, (std::vector<uint32_t>{0, 1, 3, 2}));
  EXPECT_EQ(r.parent, (std::vector<uint32_t>{Topology::npos, 0, 1, 1}));
  EXPECT_EQ(r.depth, (std::vector<uint32_t>{0, 1, 2, 2}));
  // Default root: least total distance. a: 1 + 1 + 1 = 3; r and c: 4; b: 5.
  EXPECT_EQ(dfs_rank_switches(t).roots, std::vector<uint32_t>{1});
}

// Sancho et al.'s claim, the reason seed 001 evaluates DFS: the DFS orientation leaves more
// shortest paths legal and spreads the load. Measured on these 50 fabrics (seeds 3000 + 11 i,
// 8..32 switches): the mean route is no longer than BFS up*/down*'s on 49 (shorter on 43;
// 3.100 against 3.182 switches per route over all 50), and the most loaded channel carries
// fewer routes on 42. The bounds leave a small margin; the result is deterministic.
TEST(Dfs, RoutesAreNoLongerOnAverageAndBetterBalancedThanBfsUpDown) {
  size_t no_longer = 0, shorter = 0, lighter = 0;
  double dfs_sum = 0, updn_sum = 0;
  for (const Topology& t : fifty_fabrics()) {
    const RouteStats d = route_stats(t, DfsEngine().compute(t));
    const RouteStats u = route_stats(t, UpDownEngine().compute(t));
    ASSERT_EQ(d.unrouted, 0u);
    const double dm = mean_switches_per_route(d), um = mean_switches_per_route(u);
    no_longer += dm <= um + 1e-12;
    shorter += dm < um - 1e-12;
    lighter += d.efi_max < u.efi_max;
    dfs_sum += dm;
    updn_sum += um;
  }
  RecordProperty("dfs_no_longer_on", std::to_string(no_longer));
  RecordProperty("dfs_shorter_on", std::to_string(shorter));
  RecordProperty("dfs_mean_switches", std::to_string(dfs_sum / 50));
  RecordProperty("updn_mean_switches", std::to_string(updn_sum / 50));
  RecordProperty("dfs_lower_max_efi_on", std::to_string(lighter));
  EXPECT_GE(no_longer, 45u);
  EXPECT_GE(shorter, 35u);
  EXPECT_GE(lighter, 40u);
  EXPECT_LT(dfs_sum, updn_sum * 0.98);
}

TEST(Dfs, SelectedRootIsTheTreeRootAndRoutesStayLegal) {
  const Topology t = topo::random_irregular(24, 4);
  DfsOptions by_name, by_index;
  by_name.root = "sw17";
  by_index.root_node = 5;
  for (const DfsOptions& opt : {by_name, by_index}) {
    DfsEngine engine(opt);
    const RoutingTables rt = engine.compute(t);
    const uint32_t root = opt.root.empty() ? opt.root_node : t.find(opt.root);
    EXPECT_EQ(engine.ranking().roots, std::vector<uint32_t>{root});
    EXPECT_EQ(engine.ranking().order[root], 0u);
    check_dfs_routes(t, rt, engine.ranking());
    EXPECT_TRUE(analyze_deadlock(t, rt).acyclic);
  }
}

TEST(Dfs, LmcLidsAndRegularFabricsRouteLegally) {
  for (const Topology& t : {with_lmc(topo::random_irregular(16, 8), 2), topo::torus2d(5, 4, 1),
                            topo::kary_ntree(4, 2)}) {
    DfsEngine engine;
    const RoutingTables rt = engine.compute(t);
    EXPECT_EQ(check_dfs_routes(t, rt, engine.ranking()), all_lids(t).size() * (t.nodes.size() - 1))
        << t.source;
    EXPECT_TRUE(analyze_deadlock(t, rt).acyclic) << t.source;
  }
}

TEST(Dfs, RoutingIsDeterministic) {
  const Topology t = topo::random_irregular(32, 9);
  const RoutingTables x = DfsEngine().compute(t);
  const RoutingTables y = make_dfs_engine()->compute(t);
  for (size_t n = 0; n < t.nodes.size(); ++n) EXPECT_EQ(x.lft[n].port, y.lft[n].port);
  EXPECT_STREQ(make_dfs_engine()->name(), "dfs");
}

TEST(Dfs, BadRootIsAConfigError) {
  const Topology t = topo::random_irregular(8, 1);
  auto message = [&t](const DfsOptions& opt) -> std::string {
    try {
      DfsEngine(opt).compute(t);
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), "routing.dfs.root");
      return e.what();
    }
    return "accepted";
  };
  DfsOptions unknown, host, beyond;
  unknown.root = "sw99";
  host.root = "h0_1";
  beyond.root_node = 1000;
  EXPECT_NE(message(unknown).find("'sw99' is not a node"), std::string::npos) << message(unknown);
  EXPECT_NE(message(host).find("'h0_1' is an endpoint"), std::string::npos) << message(host);
  EXPECT_NE(message(beyond).find("beyond"), std::string::npos) << message(beyond);
}

TEST(Dfs, EachSwitchIslandGetsItsOwnTree) {
  Topology t;
  t.nodes = {{"sw0", NodeKind::switch_node, 2, 1, 0, 0, 0, {}}, {"sw1", NodeKind::switch_node, 2, 2, 0, 0, 0, {}},
             {"sw2", NodeKind::switch_node, 1, 3, 0, 0, 0, {}}, {"h0", NodeKind::endpoint, 1, 4, 0, 0, 0, {}},
             {"h1", NodeKind::endpoint, 1, 5, 0, 0, 0, {}}};
  t.links = {{{0, 1}, {1, 1}, {}}, {{1, 2}, {3, 1}, {}}, {{2, 1}, {4, 1}, {}}};
  t.index();
  DfsEngine engine;
  const RoutingTables rt = engine.compute(t);
  EXPECT_EQ(engine.ranking().roots, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(engine.ranking().order[2], 2u);  // numbers continue across islands
  EXPECT_EQ(rt.lft[0].lookup(4), 1);
  EXPECT_EQ(rt.lft[0].lookup(5), Lft::kNoRoute);
  EXPECT_EQ(rt.lft[2].lookup(5), 1);
  EXPECT_EQ(trace_route(t, rt, 3, 1), (std::vector<uint32_t>{1, 0}));
}

}  // namespace
}  // namespace ibvp::sm
