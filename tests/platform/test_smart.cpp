// Smart routing adapted to destination-based tables. Checked: every LID is reached from every
// source, the channel dependency graph ends acyclic, the prohibited turns are the only
// restriction and are down -> up turns of the reference DFS orientation, the balance against
// BFS up*/down* (seed 001 Fig. 1(c)), and the cost of the method.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "platform/params/config_error.h"
#include "platform/sm/channel_dependency.h"
#include "platform/sm/dfs.h"
#include "platform/sm/route_stats.h"
#include "platform/sm/smart.h"
#include "platform/sm/updn.h"
#include "platform/topology/generators.h"

namespace ibvp::sm {
namespace {

using topo::NodeKind;
using topo::Topology;

uint32_t attach(const Topology& t, uint32_t node) {
  return t.nodes[node].kind == NodeKind::switch_node ? node : t.peer(node, 1).node;
}

std::vector<std::pair<uint32_t, uint16_t>> all_lids(const Topology& t) {
  std::vector<std::pair<uint32_t, uint16_t>> out;
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    const uint32_t count = t.nodes[n].kind == NodeKind::endpoint ? 1u << t.nodes[n].lmc : 1u;
    for (uint32_t i = 0; i < count; ++i) out.push_back({n, static_cast<uint16_t>(t.nodes[n].lid + i)});
  }
  return out;
}

// Every source (endpoints and switches) to every LID of every other node: the walk arrives at
// the destination's switch from the source's. Returns the walks, each as the (switch, in
// port, out port) turns it makes between two inter-switch cables.
using Turn = std::tuple<uint32_t, uint16_t, uint16_t>;
size_t check_routes(const Topology& t, const RoutingTables& rt, std::set<Turn>* turns = nullptr) {
  size_t routes = 0;
  for (const auto& [dst, dlid] : all_lids(t))
    for (uint32_t src = 0; src < t.nodes.size(); ++src) {
      if (src == dst) continue;
      const std::vector<uint32_t> path = trace_route(t, rt, src, dlid);
      if (path.empty()) {
        ADD_FAILURE() << t.source << ": " << t.nodes[src].name << " -> LID " << dlid << " has no route";
        return routes;
      }
      EXPECT_EQ(path.front(), attach(t, src));
      EXPECT_EQ(path.back(), attach(t, dst));
      if (turns)
        for (size_t i = 1; i + 1 < path.size(); ++i) {
          const uint8_t out_prev = rt.lft[path[i - 1]].lookup(dlid);
          const uint16_t in_port = t.peer(path[i - 1], out_prev).port;
          turns->insert({path[i], in_port, rt.lft[path[i]].lookup(dlid)});
        }
      ++routes;
    }
  return routes;
}

std::vector<Topology> fifty_fabrics() {
  std::vector<Topology> out;
  for (uint32_t i = 0; i < 50; ++i) out.push_back(topo::random_irregular(8 + i * 24 / 49, 4000 + 13 * i));
  return out;
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

TEST(Smart, RoutesEveryPairOnFiftyRandomIrregularFabrics) {
  size_t routes = 0;
  for (const Topology& t : fifty_fabrics()) {
    const RoutingTables rt = SmartEngine().compute(t);
    EXPECT_EQ(rt.engine, "smart");
    const size_t checked = check_routes(t, rt);
    ASSERT_EQ(checked, t.nodes.size() * (t.nodes.size() - 1)) << t.source;
    routes += checked;
  }
  EXPECT_GT(routes, 500000u);
}

TEST(Smart, CdgIsAcyclicOnFiftyRandomIrregularFabrics) {
  for (const Topology& t : fifty_fabrics()) {
    SmartEngine engine;
    const RoutingTables rt = engine.compute(t);
    CdgOptions with_switches;
    with_switches.switch_sources = true;
    const CdgReport r = analyze_deadlock(t, rt, with_switches);
    EXPECT_TRUE(r.acyclic) << t.source << ": cycle of " << r.cycle.size();
    EXPECT_EQ(r.broken_routes, 0u) << t.source;
    // Shortest paths on an irregular fabric close cycles (minhop's deadlock), so some turn
    // had to go.
    EXPECT_GT(engine.cost().rounds, 0u) << t.source;
  }
}

// No route makes a prohibited turn, and every prohibited turn comes in over a down cable and
// leaves over an up cable of the reference DFS orientation (smart.h's candidates).
TEST(Smart, ProhibitedTurnsAreDownUpTurnsOfTheDfsOrientationAndNoRouteTakesOne) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    const Topology t = topo::random_irregular(24, seed);
    SmartEngine engine;
    const RoutingTables rt = engine.compute(t);
    const DfsRanking ref = dfs_rank_switches(t);
    std::set<Turn> taken;
    check_routes(t, rt, &taken);
    ASSERT_EQ(engine.prohibited().size(), engine.cost().rounds);
    std::set<Turn> prohibited;
    for (const SmartEngine::Turn& p : engine.prohibited()) {
      EXPECT_TRUE(prohibited.insert({p.sw, p.in_port, p.out_port}).second) << "prohibited twice";
      const uint32_t from = t.peer(p.sw, p.in_port).node, to = t.peer(p.sw, p.out_port).node;
      EXPECT_TRUE(ref.is_up(p.sw, from)) << t.nodes[p.sw].name << ": not entered over a down cable";
      EXPECT_TRUE(ref.is_up(p.sw, to)) << t.nodes[p.sw].name << ": not left over an up cable";
      EXPECT_EQ(taken.count({p.sw, p.in_port, p.out_port}), 0u) << t.nodes[p.sw].name << " turn taken";
    }
    // Fewer turns prohibited than DFS up*/down* forbids: the routes keep more freedom.
    EXPECT_LT(engine.cost().rounds, engine.cost().forbidden_turns) << t.source;
  }
}

// Seed 001 Fig. 1(c): smart routing balances link load better than BFS up*/down*. Measured
// on these 50 fabrics (seeds 4000 + 13 i, 8..32 switches): the most loaded channel carries
// fewer routes than under updn on 47 and as many on 1; the bounds leave a margin. Against
// DFS up*/down* (recorded, not asserted) the gain is small: lower on 37 of 50; the sum of the maxima over seeds
// 1..10 is 2456 vs 2512 at 16 switches, 7920 vs 8348 at 32, 24236 vs 24932 at 64.
TEST(Smart, MaxEdgeForwardingIndexIsNoWorseThanBfsUpDownOnMostFabrics) {
  size_t no_worse = 0, better = 0, below_dfs = 0;
  uint64_t smart_sum = 0, updn_sum = 0;
  for (const Topology& t : fifty_fabrics()) {
    const RouteStats s = route_stats(t, SmartEngine().compute(t));
    const RouteStats u = route_stats(t, UpDownEngine().compute(t));
    ASSERT_EQ(s.unrouted, 0u);
    no_worse += s.efi_max <= u.efi_max;
    better += s.efi_max < u.efi_max;
    below_dfs += s.efi_max < route_stats(t, DfsEngine().compute(t)).efi_max;
    smart_sum += s.efi_max;
    updn_sum += u.efi_max;
  }
  RecordProperty("smart_max_efi_no_worse_on", std::to_string(no_worse));
  RecordProperty("smart_max_efi_better_on", std::to_string(better));
  RecordProperty("smart_max_efi_below_dfs_on", std::to_string(below_dfs));
  EXPECT_GE(no_worse, 45u);
  EXPECT_GE(better, 40u);
  EXPECT_LT(smart_sum * 4, updn_sum * 3);  // a quarter lower in sum at least
}

// A ring of 5 switches: shortest routes go both ways round and each direction closes a cycle
// of 5 channels, so at least one turn per direction goes; the rest stays shortest-path.
TEST(Smart, RingLosesOneTurnPerDirection) {
  const Topology t = topo::torus2d(5, 1, 1);
  SmartEngine engine;
  const RoutingTables rt = engine.compute(t);
  EXPECT_TRUE(analyze_deadlock(t, rt).acyclic);
  ASSERT_GE(engine.prohibited().size(), 2u);
  std::set<bool> directions;  // true: the turn follows the ring upward in node order
  for (const SmartEngine::Turn& p : engine.prohibited()) {
    const uint32_t to = t.peer(p.sw, p.out_port).node;
    directions.insert(to == (p.sw + 1) % 5);
  }
  EXPECT_EQ(directions.size(), 2u);
  EXPECT_EQ(check_routes(t, rt), t.nodes.size() * (t.nodes.size() - 1));
}

// In a fat tree every shortest path between hosts goes up, then down, so those routes close
// no cycle; only routes to the switches' own LIDs (a top switch reaches another top switch
// down and up again) may need a prohibited turn. Every host-to-host route stays shortest.
TEST(Smart, FatTreeRoutesBetweenHostsStayShortest) {
  for (auto [k, n] : {std::pair<uint32_t, uint32_t>{4, 2}, {2, 3}, {3, 3}}) {
    const Topology t = topo::kary_ntree(k, n);
    SmartEngine engine;
    const RoutingTables rt = engine.compute(t);
    CdgOptions with_switches;
    with_switches.switch_sources = true;
    EXPECT_TRUE(analyze_deadlock(t, rt, with_switches).acyclic);
    const RouteStats s = route_stats(t, rt);
    const RouteStats m = route_stats(t, make_routing_engine("minhop")->compute(t));
    EXPECT_EQ(s.hops, m.hops) << t.source;
    RecordProperty(t.source + "_rounds", std::to_string(engine.cost().rounds));
  }
}

TEST(Smart, LmcLidsAreRoutedWithoutCycles) {
  const Topology t = with_lmc(topo::random_irregular(16, 5), 2);
  SmartEngine engine;
  const RoutingTables rt = engine.compute(t);
  EXPECT_EQ(check_routes(t, rt), all_lids(t).size() * (t.nodes.size() - 1));
  CdgOptions with_switches;
  with_switches.switch_sources = true;
  EXPECT_TRUE(analyze_deadlock(t, rt, with_switches).acyclic);
  EXPECT_EQ(engine.cost().trees, all_lids(t).size());
}

TEST(Smart, CostCountersAreConsistent) {
  const Topology t = topo::random_irregular(20, 7);
  SmartEngine engine;
  const RoutingTables rt = engine.compute(t);
  const SmartCost& c = engine.cost();
  EXPECT_EQ(c.trees, all_lids(t).size());
  EXPECT_EQ(c.channels, 20u * 4u);  // 4 switch cables per switch, both directions
  EXPECT_EQ(c.rounds, engine.prohibited().size());
  EXPECT_GE(c.candidates, c.rounds);
  EXPECT_GE(c.tree_builds, c.trees + c.rounds);
  EXPECT_GT(c.seconds, 0.0);
  // The load the engine balanced is route_stats' edge forwarding index.
  EXPECT_EQ(c.max_channel_load, route_stats(t, rt).efi_max);
}

// Seed 001 could not compute smart routing for 64 switches. This adaptation's cost, recorded
// as test properties (Release, one core, mean of seeds 1..10): 0.3 ms at 16 switches (37
// rounds), 2.3 ms at 32 (82), 20 ms at 64 (166); 0.18 s at 128 and 2.1 s at 256, about
// S^3.3. The bound leaves room for Debug builds and loaded machines.
TEST(Smart, SixtyFourSwitchesRouteInUnderTwoSeconds) {
  for (uint32_t switches : {16u, 32u, 64u}) {
    const Topology t = topo::random_irregular(switches, 1);
    SmartEngine engine;
    const RoutingTables rt = engine.compute(t);
    const SmartCost& c = engine.cost();
    const std::string key = "smart_" + std::to_string(switches) + "_switches_";
    RecordProperty(key + "ms", std::to_string(c.seconds * 1000));
    RecordProperty(key + "rounds", std::to_string(c.rounds));
    RecordProperty(key + "candidates", std::to_string(c.candidates));
    RecordProperty(key + "tree_builds", std::to_string(c.tree_builds));
    EXPECT_LT(c.seconds, 2.0);
    const CdgReport r = analyze_deadlock(t, rt);
    EXPECT_TRUE(r.acyclic);
    EXPECT_EQ(r.broken_routes, 0u);
  }
}

TEST(Smart, RoutingIsDeterministic) {
  const Topology t = topo::random_irregular(32, 9);
  SmartEngine a;
  const RoutingTables x = a.compute(t);
  const RoutingTables y = make_smart_engine()->compute(t);
  for (size_t n = 0; n < t.nodes.size(); ++n) EXPECT_EQ(x.lft[n].port, y.lft[n].port);
  EXPECT_STREQ(make_smart_engine()->name(), "smart");
  // The same engine twice: its cost is per compute(), not accumulated.
  const uint32_t rounds = a.cost().rounds;
  a.compute(t);
  EXPECT_EQ(a.cost().rounds, rounds);
}

TEST(Smart, BadRootIsAConfigError) {
  const Topology t = topo::random_irregular(8, 1);
  auto message = [&t](const SmartOptions& opt) -> std::string {
    try {
      SmartEngine(opt).compute(t);
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), "routing.smart.root");
      return e.what();
    }
    return "accepted";
  };
  SmartOptions unknown, host;
  unknown.root = "sw99";
  host.root_node = t.find("h3_1");
  EXPECT_NE(message(unknown).find("'sw99' is not a node"), std::string::npos) << message(unknown);
  EXPECT_NE(message(host).find("is an endpoint"), std::string::npos) << message(host);
  SmartOptions good;
  good.root = "sw3";
  EXPECT_NO_THROW(SmartEngine(good).compute(t));
}

}  // namespace
}  // namespace ibvp::sm
