// Up*/down* routing and the channel dependency analysis. The up*/down* rules are checked
// against ranks and shortest paths computed here from the cable list, not the engine's; the
// deadlock analysis is checked on hand-made tables whose cycles are known.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <tuple>

#include "platform/params/config_error.h"
#include "platform/sm/channel_dependency.h"
#include "platform/sm/route_stats.h"
#include "platform/sm/routing.h"
#include "platform/sm/updn.h"
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
      if (l.a.node == l.b.node) continue;
      g.sw_ports[l.a.node].push_back({l.a.port, l.b.node});
      g.sw_ports[l.b.node].push_back({l.b.port, l.a.node});
    } else if (a_sw) {
      g.attach[l.b.node] = l.a.node;
    } else if (b_sw) {
      g.attach[l.a.node] = l.b.node;
    }
  }
  for (uint32_t s : t.switches()) g.attach[s] = s;  // a switch's LID is reached at the switch
  return g;
}

// Switch hops from `from` to every switch (-1: unreachable).
std::vector<int> bfs(const Graph& g, uint32_t from) {
  std::vector<int> d(g.sw_ports.size(), -1);
  std::vector<uint32_t> q{from};
  d[from] = 0;
  for (size_t i = 0; i < q.size(); ++i)
    for (const auto& [port, v] : g.sw_ports[q[i]])
      if (d[v] < 0) d[v] = d[q[i]] + 1, q.push_back(v);
  return d;
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

// The orientation by the rules of updn.h, from the test's own BFS: `to` is above `from`.
struct Orientation {
  const Topology& t;
  std::vector<int> rank;
  bool up(uint32_t from, uint32_t to) const {
    return std::make_tuple(rank[to], t.nodes[to].guid, to) < std::make_tuple(rank[from], t.nodes[from].guid, from);
  }
};

// For every source (endpoints, and switches sending from port 0) and every LID of every other
// node: the walk arrives, runs from the source's switch to the destination's, never takes an
// up cable after a down cable, and is no shorter than a shortest path. Returns, per route,
// (source switch, destination switch, switches visited) for further checks.
struct Route {
  uint32_t src, dst;
  uint32_t from_sw, to_sw;
  size_t switches;
};
std::vector<Route> check_updn_routes(const Topology& t, const RoutingTables& rt, const UpDownRanking& ranking) {
  const Graph g = graph_of(t);
  EXPECT_EQ(ranking.roots.size(), 1u) << t.source;
  Orientation o{t, bfs(g, ranking.roots.at(0))};
  for (uint32_t s : t.switches()) EXPECT_EQ(static_cast<int>(ranking.rank[s]), o.rank[s]) << t.nodes[s].name;
  std::vector<std::vector<int>> dist(t.nodes.size());
  std::vector<Route> routes;
  for (const auto& [dst, dlid] : all_lids(t)) {
    const uint32_t to_sw = g.attach[dst];
    if (dist[to_sw].empty()) dist[to_sw] = bfs(g, to_sw);
    for (uint32_t src = 0; src < t.nodes.size(); ++src) {
      if (src == dst) continue;
      const std::vector<uint32_t> path = trace_route(t, rt, src, dlid);
      const std::string what = t.source + ": " + t.nodes[src].name + " -> LID " + std::to_string(dlid);
      if (path.empty()) {
        ADD_FAILURE() << what << " has no route";
        return routes;
      }
      EXPECT_EQ(path.front(), g.attach[src]) << what;
      EXPECT_EQ(path.back(), to_sw) << what;
      bool went_down = false;
      for (size_t i = 1; i < path.size(); ++i) {
        const bool up = o.up(path[i - 1], path[i]);
        if (up && went_down) {
          ADD_FAILURE() << what << ": up from " << t.nodes[path[i - 1]].name << " to " << t.nodes[path[i]].name
                        << " after a down cable";
          return routes;
        }
        went_down = went_down || !up;
      }
      EXPECT_GE(static_cast<int>(path.size()), dist[to_sw][g.attach[src]] + 1) << what;
      routes.push_back({src, dst, g.attach[src], to_sw, path.size()});
    }
  }
  return routes;
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

void finish(Topology& t) {
  topo::assign_lids(t);
  t.index();
  t.validate();
}

// ---------------------------------------------------------------------------------------------

// A random tree of `n` switches (switch i hangs below a random earlier one), `hosts` hosts on each.
Topology random_tree(uint32_t n, uint32_t hosts, uint32_t seed) {
  Topology t;
  std::vector<uint32_t> parent(n, 0), degree(n, 0);
  uint64_t x = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (uint32_t i = 1; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    parent[i] = static_cast<uint32_t>((x >> 33) % i);
    ++degree[i];
    ++degree[parent[i]];
  }
  for (uint32_t i = 0; i < n; ++i)
    t.nodes.push_back({"sw" + std::to_string(i), NodeKind::switch_node, static_cast<uint16_t>(degree[i] + hosts), 0, 0, 0, 0, {}});
  std::vector<uint16_t> next_port(n, 1);
  for (uint32_t i = 1; i < n; ++i) t.links.push_back({{i, next_port[i]++}, {parent[i], next_port[parent[i]]++}, {}});
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t h = 0; h < hosts; ++h) {
      t.nodes.push_back({"h" + std::to_string(i) + "_" + std::to_string(h), NodeKind::endpoint, 1, 0, 0, 0, 0, {}});
      t.links.push_back({{i, next_port[i]++}, {static_cast<uint32_t>(t.nodes.size() - 1), 1}, {}});
    }
  t.source = "random_tree(" + std::to_string(n) + ", seed " + std::to_string(seed) + ")";
  finish(t);
  return t;
}

// The 50 fabrics of the random irregular tests: 8..64 switches, a different seed each.
std::vector<std::pair<uint32_t, uint32_t>> fifty_fabrics() {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (uint32_t i = 0; i < 50; ++i) out.push_back({8 + i * 56 / 49, 1000 + 7 * i});
  return out;
}

// The channels a packet from `src` to `dlid` takes, as the sending (node, port) of each,
// injection first; followed here from the cables, independently of analyze_deadlock().
std::vector<topo::PortRef> route_ports(const Topology& t, const RoutingTables& rt, uint32_t src, uint16_t dlid) {
  std::vector<topo::PortRef> out;
  uint32_t at = src;
  if (t.nodes[src].kind == NodeKind::endpoint) {
    out.push_back({src, 1});
    at = t.peer(src, 1).node;
  }
  while (t.nodes[at].kind == NodeKind::switch_node && out.size() <= t.nodes.size()) {
    const uint8_t port = rt.lft[at].lookup(dlid);
    if (port == 0 || port == Lft::kNoRoute) break;
    out.push_back({at, port});
    at = t.peer(at, port).node;
  }
  return out;
}

std::string t_name(const Topology& t, uint32_t node) { return t.nodes[node].name; }

// ---------------------------------------------------------------------------------------------

TEST(UpDown, RoutesEveryPairOnFiftyRandomIrregularFabrics) {
  size_t routes = 0;
  for (const auto& [switches, seed] : fifty_fabrics()) {
    const Topology t = topo::random_irregular(switches, seed);
    UpDownEngine engine;
    const RoutingTables rt = engine.compute(t);
    EXPECT_EQ(rt.engine, "updn");
    // Every source (endpoints and switches) to every LID of every other node.
    const size_t n = t.nodes.size();
    const size_t pairs = check_updn_routes(t, rt, engine.ranking()).size();
    ASSERT_EQ(pairs, n * (n - 1)) << t.source;
    routes += pairs;
  }
  EXPECT_GT(routes, 1000000u);
}

TEST(UpDown, CdgIsAcyclicOnFiftyRandomIrregularFabrics) {
  for (const auto& [switches, seed] : fifty_fabrics()) {
    const Topology t = topo::random_irregular(switches, seed);
    const RoutingTables rt = UpDownEngine().compute(t);
    CdgOptions with_switches;
    with_switches.switch_sources = true;
    const CdgReport r = analyze_deadlock(t, rt, with_switches);
    EXPECT_TRUE(r.acyclic) << t.source << ": cycle of " << r.cycle.size() << ", first " << r.cycle.at(0);
    EXPECT_EQ(r.broken_routes, 0u) << t.source;
    EXPECT_EQ(r.routes, t.nodes.size() * (t.nodes.size() - 1)) << t.source;
    // 4 switch ports, 4 hosts per switch, all cabled: 8 channels leave each switch, 4 enter it from hosts.
    EXPECT_EQ(r.channels, switches * 12u) << t.source;
  }
}

// Up*/down* proper, checked against ranks from the test's own BFS: no route turns up after
// going down, whatever the root and the fabric (parallel cables, wrap-around cables, LMC).
TEST(UpDown, NoRouteTakesAnUpCableAfterADownCable) {
  std::vector<std::pair<Topology, UpDownOptions>> cases;
  for (uint32_t seed : {1u, 2u, 3u}) cases.push_back({topo::random_irregular(32, seed), {}});
  UpDownOptions by_name, by_index;
  by_name.root = "sw17";
  by_index.root_node = 5;
  cases.push_back({topo::random_irregular(24, 4), by_name});
  cases.push_back({topo::random_irregular(24, 4), by_index});
  cases.push_back({topo::torus2d(5, 4, 1), {}});
  cases.push_back({topo::mesh2d(4, 6, 1), {}});
  cases.push_back({topo::kary_ntree(3, 3), {}});
  cases.push_back({with_lmc(topo::random_irregular(16, 8), 2), {}});
  for (const auto& [t, opt] : cases) {
    UpDownEngine engine(opt);
    const RoutingTables rt = engine.compute(t);
    if (!opt.root.empty()) {
      EXPECT_EQ(engine.ranking().roots, std::vector<uint32_t>{t.find(opt.root)});
    }
    if (opt.root_node != Topology::npos) {
      EXPECT_EQ(engine.ranking().roots, std::vector<uint32_t>{opt.root_node});
    }
    check_updn_routes(t, rt, engine.ranking());
    EXPECT_TRUE(analyze_deadlock(t, rt).acyclic) << t.source;
  }
}

// The engine takes the shortest route its up*/down* states allow: never shorter than a
// shortest path (checked in check_updn_routes) and never longer than going up the BFS tree
// to the root and down to the destination (rank(source) + rank(destination) hops).
TEST(UpDown, NoRouteIsLongerThanTheWayOverTheRoot) {
  size_t longer_than_shortest = 0, total = 0;
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const Topology t = topo::random_irregular(48, seed);
    UpDownEngine engine;
    const RoutingTables rt = engine.compute(t);
    const Graph g = graph_of(t);
    const std::vector<int> rank = bfs(g, engine.ranking().roots.at(0));
    std::vector<std::vector<int>> dist(t.nodes.size());
    for (const Route& r : check_updn_routes(t, rt, engine.ranking())) {
      EXPECT_LE(static_cast<int>(r.switches) - 1, rank[r.from_sw] + rank[r.to_sw])
          << t.source << ": " << t.nodes[r.src].name << " -> " << t.nodes[r.dst].name;
      if (dist[r.to_sw].empty()) dist[r.to_sw] = bfs(g, r.to_sw);
      longer_than_shortest += static_cast<int>(r.switches) - 1 > dist[r.to_sw][r.from_sw];
      ++total;
    }
  }
  // Up*/down* does cost detours on irregular fabrics (the point of comparing it with minhop).
  EXPECT_GT(longer_than_shortest, 0u);
  EXPECT_LT(longer_than_shortest, total / 2);
}

// On a tree the one path between two switches is legal from any root, so every route is it.
TEST(UpDown, EveryRouteIsShortestOnATree) {
  std::vector<Topology> trees;
  for (uint32_t seed : {1u, 2u, 3u}) trees.push_back(random_tree(40, 2, seed));
  trees.push_back(topo::kary_ntree(1, 5));  // a chain
  for (const Topology& t : trees) {
    for (const UpDownOptions& opt : {UpDownOptions{}, UpDownOptions{"", 0, {}}}) {
      UpDownEngine engine(opt);
      const RoutingTables rt = engine.compute(t);
      const Graph g = graph_of(t);
      for (const Route& r : check_updn_routes(t, rt, engine.ranking()))
        ASSERT_EQ(static_cast<int>(r.switches), bfs(g, r.to_sw)[r.from_sw] + 1)
            << t.source << ": " << t.nodes[r.src].name << " -> " << t.nodes[r.dst].name;
    }
  }
}

// In a k-ary n-tree the routes that start at a leaf (from a host or the leaf switch itself)
// to every host are shortest, whether the root is the default (a leaf: all switches have the
// same eccentricity) or a top switch. Routes between switches above the leaves may detour.
TEST(UpDown, FatTreeRoutesFromLeavesAreShortest) {
  for (auto [k, n] : {std::pair<uint32_t, uint32_t>{2, 3}, {4, 2}, {4, 3}, {3, 3}, {2, 4}}) {
    const Topology t = topo::kary_ntree(k, n);
    const Graph g = graph_of(t);
    for (const std::string& root : {std::string(), "s" + std::to_string(n - 1) + "_0"}) {
      SCOPED_TRACE(t.source + ", root " + (root.empty() ? "default" : root));
      UpDownOptions opt;
      opt.root = root;
      UpDownEngine engine(opt);
      const RoutingTables rt = engine.compute(t);
      size_t checked = 0;
      for (const Route& r : check_updn_routes(t, rt, engine.ranking())) {
        if (t.nodes[r.dst].kind != NodeKind::endpoint || t.nodes[r.from_sw].name.rfind("s0_", 0) != 0) continue;
        ASSERT_EQ(static_cast<int>(r.switches), bfs(g, r.to_sw)[r.from_sw] + 1)
            << t.nodes[r.src].name << " -> " << t.nodes[r.dst].name;
        ++checked;
      }
      // Hosts to the other hosts, leaf switches to all hosts.
      const size_t hosts = t.endpoints().size(), leaves = hosts / k;
      EXPECT_EQ(checked, hosts * (hosts - 1) + leaves * hosts);
    }
  }
}

TEST(UpDown, DefaultRootIsTheSwitchOfLeastEccentricityLowestIndexOnTies) {
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    const Topology t = topo::random_irregular(20 + 4 * seed, seed);
    const Graph g = graph_of(t);
    uint32_t best = Topology::npos;
    int best_ecc = 1 << 30;
    for (uint32_t s : t.switches()) {
      const std::vector<int> d = bfs(g, s);
      int ecc = 0;
      for (uint32_t o : t.switches()) ecc = std::max(ecc, d[o]);
      if (ecc < best_ecc) best_ecc = ecc, best = s;
    }
    EXPECT_EQ(rank_switches(t).roots, std::vector<uint32_t>{best}) << t.source;
  }
  // Ties: in a ring all switches have the same eccentricity.
  EXPECT_EQ(rank_switches(topo::torus2d(5, 1, 1)).roots, std::vector<uint32_t>{0});
  // The middle of a chain.
  const Topology chain = topo::kary_ntree(1, 5);
  EXPECT_EQ(t_name(chain, rank_switches(chain).roots.at(0)), "s2_0");
}

TEST(UpDown, RanksAreHopsFromTheRootAndTiesGoUpToTheLowerGuid) {
  Topology t = topo::torus2d(4, 1, 1);  // a ring s0_0 - s1_0 - s2_0 - s3_0 - s0_0
  const UpDownRanking r = rank_switches(t);
  ASSERT_EQ(r.roots, std::vector<uint32_t>{0});
  const uint32_t s1 = t.find("s1_0"), s2 = t.find("s2_0"), s3 = t.find("s3_0");
  EXPECT_EQ(r.rank[s1], 1u);
  EXPECT_EQ(r.rank[s3], 1u);
  EXPECT_EQ(r.rank[s2], 2u);
  EXPECT_EQ(r.rank[t.find("h0_0_1")], Topology::npos);
  EXPECT_TRUE(r.is_up(t, s1, 0));
  EXPECT_TRUE(r.is_up(t, s2, s1));
  EXPECT_FALSE(r.is_up(t, s1, s2));
  // Equal ranks: node index decides while GUIDs are equal, the GUID once they differ.
  EXPECT_TRUE(r.is_up(t, s3, s1));
  t.nodes[s1].guid = 0x20;
  t.nodes[s3].guid = 0x10;
  EXPECT_TRUE(r.is_up(t, s1, s3));
  EXPECT_FALSE(r.is_up(t, s3, s1));
}

TEST(UpDown, BadRootIsAConfigError) {
  const Topology t = topo::random_irregular(8, 1);
  auto message = [&t](const UpDownOptions& opt) -> std::string {
    try {
      UpDownEngine(opt).compute(t);
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), "routing.updn.root");
      return e.what();
    }
    return "accepted";
  };
  UpDownOptions unknown, host, beyond, host_index;
  unknown.root = "sw99";
  host.root = "h0_1";
  beyond.root_node = 1000;
  host_index.root_node = t.find("h3_1");
  EXPECT_NE(message(unknown).find("'sw99' is not a node"), std::string::npos) << message(unknown);
  EXPECT_NE(message(host).find("'h0_1' is an endpoint"), std::string::npos) << message(host);
  EXPECT_NE(message(beyond).find("beyond"), std::string::npos) << message(beyond);
  EXPECT_NE(message(host_index).find("is an endpoint"), std::string::npos) << message(host_index);
}

// With LMC = 2 an endpoint answers to 4 LIDs; in a 4-ary 2-tree every leaf reaches a host on
// another leaf legally over each of its 4 up ports, so the 4 LIDs leave over all of them.
TEST(UpDown, LmcPathBitLidsLeaveOverDifferentLegalPorts) {
  const Topology t = with_lmc(topo::kary_ntree(4, 2), 2);
  UpDownEngine engine;
  const RoutingTables rt = engine.compute(t);
  check_updn_routes(t, rt, engine.ranking());  // every path-bit LID routed legally
  const Graph g = graph_of(t);
  for (uint32_t dst : t.endpoints())
    for (uint32_t leaf : t.switches()) {
      if (t.nodes[leaf].name.rfind("s0_", 0) != 0 || leaf == g.attach[dst]) continue;
      std::set<uint8_t> used;
      for (uint16_t i = 0; i < 4; ++i) used.insert(rt.lft[leaf].lookup(static_cast<uint16_t>(t.nodes[dst].lid + i)));
      EXPECT_EQ(used, (std::set<uint8_t>{5, 6, 7, 8})) << t.nodes[leaf].name << " -> " << t.nodes[dst].name;
    }
  // On an irregular fabric some destinations get their 4 LIDs spread as well.
  const Topology irr = with_lmc(topo::random_irregular(16, 5), 2);
  UpDownEngine e2;
  const RoutingTables rt2 = e2.compute(irr);
  check_updn_routes(irr, rt2, e2.ranking());
  size_t spread = 0;
  for (uint32_t dst : irr.endpoints())
    for (uint32_t s : irr.switches()) {
      std::set<uint8_t> used;
      for (uint16_t i = 0; i < 4; ++i) used.insert(rt2.lft[s].lookup(static_cast<uint16_t>(irr.nodes[dst].lid + i)));
      spread += used.size() > 1;
    }
  EXPECT_GT(spread, 0u);
}

// Two switches joined by two cables (A/1-B/1, A/2-B/2), four hosts on B: both cables lead
// down from the root A, so A gives them two destinations each, the first to the lower port.
TEST(UpDown, ParallelCablesShareDestinationsAlternately) {
  Topology t;
  t.nodes = {{"A", NodeKind::switch_node, 3, 0, 0, 0, 0, {}}, {"B", NodeKind::switch_node, 6, 0, 0, 0, 0, {}}};
  t.links = {{{0, 1}, {1, 1}, {}}, {{0, 2}, {1, 2}, {}}};
  t.nodes.push_back({"a", NodeKind::endpoint, 1, 0, 0, 0, 0, {}});
  t.links.push_back({{0, 3}, {2, 1}, {}});
  for (uint32_t h = 0; h < 4; ++h) {
    t.nodes.push_back({"b" + std::to_string(h), NodeKind::endpoint, 1, 0, 0, 0, 0, {}});
    t.links.push_back({{1, static_cast<uint16_t>(3 + h)}, {3 + h, 1}, {}});
  }
  finish(t);
  const RoutingTables rt = UpDownEngine().compute(t);
  std::vector<uint8_t> ports;
  for (uint32_t h = 0; h < 4; ++h) ports.push_back(rt.lft[0].lookup(t.nodes[3 + h].lid));
  EXPECT_EQ(ports, (std::vector<uint8_t>{1, 2, 1, 2}));
}

TEST(UpDown, SwitchLidsRouteToManagementPort0AndTablesCoverEveryLid) {
  const Topology t = topo::random_irregular(12, 3);
  const RoutingTables rt = UpDownEngine().compute(t);
  ASSERT_EQ(rt.lft.size(), t.nodes.size());
  for (uint32_t e : t.endpoints()) EXPECT_TRUE(rt.lft[e].port.empty());
  for (uint32_t s : t.switches()) {
    ASSERT_EQ(rt.lft[s].port.size(), t.max_lid() + 1u);
    EXPECT_EQ(rt.lft[s].lookup(t.nodes[s].lid), 0);
    for (uint32_t lid = 1; lid <= t.max_lid(); ++lid) {
      EXPECT_NE(rt.lft[s].lookup(static_cast<uint16_t>(lid)), Lft::kNoRoute) << t.nodes[s].name << " LID " << lid;
      if (lid != t.nodes[s].lid) {
        EXPECT_NE(rt.lft[s].lookup(static_cast<uint16_t>(lid)), 0);
      }
    }
  }
}

TEST(UpDown, EachSwitchIslandIsRankedFromItsOwnRoot) {
  // Two islands (sw0 - sw1 + h0, sw2 + h1): not a valid fabric, but the engine must route
  // within each and not into nowhere.
  Topology t;
  t.nodes = {{"sw0", NodeKind::switch_node, 2, 1, 0, 0, 0, {}}, {"sw1", NodeKind::switch_node, 2, 2, 0, 0, 0, {}},
             {"sw2", NodeKind::switch_node, 1, 3, 0, 0, 0, {}}, {"h0", NodeKind::endpoint, 1, 4, 0, 0, 0, {}},
             {"h1", NodeKind::endpoint, 1, 5, 0, 0, 0, {}}};
  t.links = {{{0, 1}, {1, 1}, {}}, {{1, 2}, {3, 1}, {}}, {{2, 1}, {4, 1}, {}}};
  t.index();
  UpDownEngine engine;
  const RoutingTables rt = engine.compute(t);
  EXPECT_EQ(engine.ranking().roots, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(rt.lft[0].lookup(4), 1);
  EXPECT_EQ(rt.lft[1].lookup(4), 2);
  EXPECT_EQ(rt.lft[0].lookup(5), Lft::kNoRoute);
  EXPECT_EQ(rt.lft[2].lookup(4), Lft::kNoRoute);
  EXPECT_EQ(rt.lft[2].lookup(5), 1);
  EXPECT_EQ(trace_route(t, rt, 4, 3), std::vector<uint32_t>{2});
  EXPECT_EQ(trace_route(t, rt, 3, 1), (std::vector<uint32_t>{1, 0}));
  EXPECT_TRUE(trace_route(t, rt, 3, 5).empty());
}

TEST(UpDown, RoutingIsDeterministic) {
  const Topology t = topo::random_irregular(32, 9);
  const RoutingTables x = UpDownEngine().compute(t);
  const RoutingTables y = make_updn_engine()->compute(t);
  for (size_t n = 0; n < t.nodes.size(); ++n) EXPECT_EQ(x.lft[n].port, y.lft[n].port);
  EXPECT_STREQ(make_updn_engine()->name(), "updn");
}

// The brief: 256 switches in well under a second (about 10 ms in a Release build; the
// bound leaves room for Debug builds and loaded machines).
TEST(UpDown, TwoHundredFiftySixSwitchesRouteInWellUnderASecond) {
  const Topology t = topo::random_irregular(256, 1);
  const auto start = std::chrono::steady_clock::now();
  const RoutingTables rt = UpDownEngine().compute(t);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("updn_256_switches_ms", std::to_string(static_cast<int>(seconds * 1000)));
  EXPECT_LT(seconds, 0.5);
  const CdgReport r = analyze_deadlock(t, rt);
  EXPECT_TRUE(r.acyclic);
  EXPECT_EQ(r.broken_routes, 0u);
}

// ---------------------------------------------------------------------------------------------

// A ring of four switches, sw<i>/1 cabled to sw<i+1>/2, host h<i> on sw<i>/3, with every
// foreign LID sent clockwise over port 1: the textbook cyclic dependency (Dally and Seitz 1987).
struct Ring {
  Topology t;
  RoutingTables rt;
};
Ring clockwise_ring() {
  Ring r;
  Topology& t = r.t;
  for (uint32_t i = 0; i < 4; ++i) t.nodes.push_back({"sw" + std::to_string(i), NodeKind::switch_node, 3, 0, 0, 0, 0, {}});
  for (uint32_t i = 0; i < 4; ++i) t.nodes.push_back({"h" + std::to_string(i), NodeKind::endpoint, 1, 0, 0, 0, 0, {}});
  for (uint32_t i = 0; i < 4; ++i) t.links.push_back({{i, 1}, {(i + 1) % 4, 2}, {}});
  for (uint32_t i = 0; i < 4; ++i) t.links.push_back({{i, 3}, {4 + i, 1}, {}});
  finish(t);
  r.rt.engine = "clockwise";
  r.rt.lft.resize(t.nodes.size());
  for (uint32_t s = 0; s < 4; ++s) {
    r.rt.lft[s].port.assign(t.max_lid() + 1u, 1);
    r.rt.lft[s].port[0] = Lft::kNoRoute;
    r.rt.lft[s].port[t.nodes[s].lid] = 0;
    r.rt.lft[s].port[t.nodes[4 + s].lid] = 3;
  }
  return r;
}

TEST(ChannelDependency, ClockwiseRingHasTheRingAsItsCycle) {
  const Ring ring = clockwise_ring();
  const CdgReport r = analyze_deadlock(ring.t, ring.rt);
  EXPECT_FALSE(r.acyclic);
  EXPECT_EQ(std::set<std::string>(r.cycle.begin(), r.cycle.end()),
            (std::set<std::string>{"sw0/1->sw1/2", "sw1/1->sw2/2", "sw2/1->sw3/2", "sw3/1->sw0/2"}));
  ASSERT_EQ(r.cycle_channels.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(r.cycle_channels[i].to.node, r.cycle_channels[(i + 1) % 4].from.node);
  // 4 ring channels, 4 injection, 4 ejection. Dependencies: injection -> ring (4), ring ->
  // ring (4), ring -> ejection (4). Routes: 4 hosts to the 7 LIDs not their own.
  EXPECT_EQ(r.channels, 12u);
  EXPECT_EQ(r.dependencies, 12u);
  EXPECT_EQ(r.routes, 28u);
  EXPECT_EQ(r.broken_routes, 0u);
}

// Channels are per VL: with each host's packets on a VL of their own, every VL carries the
// routes of one source, a tree, and the cycle is gone (what VL-based schemes such as LASH
// and DFSSSP do with fewer VLs). All on VL 1, the cycle is back and named with its VL.
TEST(ChannelDependency, ChannelsAreSeparatePerVl) {
  const Ring ring = clockwise_ring();
  CdgOptions per_source;
  per_source.vl = [](uint32_t src, uint16_t) { return static_cast<uint8_t>(src - 4); };
  const CdgReport r = analyze_deadlock(ring.t, ring.rt, per_source);
  EXPECT_TRUE(r.acyclic);
  EXPECT_TRUE(r.cycle.empty());
  // Each source: its injection channel, 3 ring channels, 3 ejection channels.
  EXPECT_EQ(r.channels, 4u * 7u);
  CdgOptions vl1;
  vl1.vl = [](uint32_t, uint16_t) { return uint8_t{1}; };
  const CdgReport c = analyze_deadlock(ring.t, ring.rt, vl1);
  EXPECT_FALSE(c.acyclic);
  ASSERT_EQ(c.cycle.size(), 4u);
  EXPECT_EQ(c.cycle[0].substr(c.cycle[0].size() - 4), " vl1");
  EXPECT_EQ(c.cycle_channels[0].vl, 1);
}

TEST(ChannelDependency, CountsChannelsDependenciesAndRoutesOnASwitch) {
  const Topology t = topo::single_switch(3);
  const RoutingTables rt = UpDownEngine().compute(t);
  const CdgReport r = analyze_deadlock(t, rt);
  EXPECT_TRUE(r.acyclic);
  EXPECT_EQ(r.channels, 6u);      // 3 in, 3 out
  EXPECT_EQ(r.dependencies, 6u);  // each host's channel in to the 2 others' channels out
  EXPECT_EQ(r.routes, 9u);        // 3 hosts x (2 other hosts + the switch)
  CdgOptions with_switch;
  with_switch.switch_sources = true;
  const CdgReport s = analyze_deadlock(t, rt, with_switch);
  EXPECT_EQ(s.routes, 12u);
  EXPECT_EQ(s.channels, 6u);
  EXPECT_EQ(s.dependencies, 6u);
}

// Tables broken by hand: a missing entry counts the routes through it as broken, and a
// forwarding loop is a cycle of the graph as well.
TEST(ChannelDependency, BrokenRoutesAreCountedAndALoopIsACycle) {
  const Topology t = topo::kary_ntree(2, 2);  // leaves s0_0, s0_1 under roots s1_0, s1_1
  RoutingTables rt = UpDownEngine().compute(t);
  const uint32_t s00 = t.find("s0_0");
  const uint16_t dlid = t.nodes[t.find("h4")].lid;
  ASSERT_TRUE(analyze_deadlock(t, rt).acyclic);
  RoutingTables missing = rt;
  missing.lft[s00].port[dlid] = Lft::kNoRoute;
  const CdgReport m = analyze_deadlock(t, missing);
  EXPECT_TRUE(m.acyclic);
  EXPECT_EQ(m.broken_routes, 2u);  // h1 and h2 on s0_0
  // The roots send h4's LID back down to s0_0 (port 1), which sends it up: a loop.
  RoutingTables loop = rt;
  for (uint32_t s : t.switches())
    if (t.nodes[s].name.rfind("s1_", 0) == 0) loop.lft[s].port[dlid] = 1;
  const CdgReport l = analyze_deadlock(t, loop);
  EXPECT_FALSE(l.acyclic);
  EXPECT_EQ(l.cycle.size(), 2u);  // s0_0 up to a root and back down
  EXPECT_EQ(l.broken_routes, 2u);  // h1 and h2; h3 shares s0_1 with h4 and never leaves it
}

// Minhop routes every LID on a shortest path with no regard for turns, and on an irregular
// fabric the dependencies of those paths close cycles (seed 001's reason for up*/down*).
// The cycle reported is checked to be real: consecutive channels meet at a switch and each
// dependency is made by an actual route, found by walking the tables here.
TEST(ChannelDependency, FindsTheCycleInMinhopOnRandomIrregular16Seed1) {
  const Topology t = topo::random_irregular(16, 1);
  const RoutingTables rt = make_routing_engine("minhop")->compute(t);
  const CdgReport r = analyze_deadlock(t, rt);
  ASSERT_FALSE(r.acyclic);
  EXPECT_EQ(r.broken_routes, 0u);
  ASSERT_GE(r.cycle.size(), 3u);
  ASSERT_EQ(r.cycle.size(), r.cycle_channels.size());
  const size_t n = r.cycle_channels.size();
  std::set<std::pair<size_t, size_t>> made;  // (i, i+1) dependencies seen on a route
  for (size_t i = 0; i < n; ++i) {
    const Channel& a = r.cycle_channels[i];
    const Channel& b = r.cycle_channels[(i + 1) % n];
    EXPECT_EQ(r.cycle[i], channel_name(t, a));
    EXPECT_EQ(a.to.node, b.from.node);
    EXPECT_EQ(t.peer(a.from.node, a.from.port), a.to);
    EXPECT_EQ(t.nodes[a.from.node].kind, NodeKind::switch_node);
  }
  for (const auto& [dst, dlid] : all_lids(t))
    for (uint32_t src : t.endpoints()) {
      if (src == dst) continue;
      const std::vector<topo::PortRef> hops = route_ports(t, rt, src, dlid);
      for (size_t h = 1; h < hops.size(); ++h)
        for (size_t i = 0; i < n; ++i)
          if (hops[h - 1] == r.cycle_channels[i].from && hops[h] == r.cycle_channels[(i + 1) % n].from)
            made.insert({i, (i + 1) % n});
    }
  EXPECT_EQ(made.size(), n) << "some dependency of the cycle is made by no route";
  // The same fabric under up*/down* has none.
  EXPECT_TRUE(analyze_deadlock(t, UpDownEngine().compute(t)).acyclic);
}


// ---------------------------------------------------------------------------------------
// Given roots (OpenSM's root_guid_file)

// sw0 and its neighbours as roots: sw0 is first in the (rank, GUID, index) order, so every
// root climbs to it and every pair keeps a legal route.
TEST(UpDown, SeveralGivenRootsAllHaveRankZeroAndTheTablesStayDeadlockFree) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    const Topology t = topo::random_irregular(16, seed);
    UpDownOptions opt;
    opt.roots = {t.find("sw0")};
    for (uint16_t p = 1; p <= 4; ++p)
      if (t.link_at(opt.roots[0], p) >= 0) opt.roots.push_back(t.peer(opt.roots[0], p).node);
    ASSERT_GE(opt.roots.size(), 3u);
    UpDownEngine engine(opt);
    const RoutingTables rt = engine.compute(t);
    const UpDownRanking& r = engine.ranking();
    std::vector<uint32_t> sorted = opt.roots;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(r.roots, sorted);  // in node order
    // Rank = switch hops to the nearest root.
    const std::vector<uint32_t> want{0, 0, 0};
    EXPECT_EQ((std::vector<uint32_t>{r.rank[opt.roots[0]], r.rank[opt.roots[1]], r.rank[opt.roots[2]]}), want);
    // No other switch has rank 0.
    for (uint32_t s : t.switches()) {
      const bool root = std::find(opt.roots.begin(), opt.roots.end(), s) != opt.roots.end();
      EXPECT_EQ(r.rank[s] == 0, root) << t.nodes[s].name;
    }
    EXPECT_FALSE(first_unrouted(t, rt).has_value());
    EXPECT_TRUE(analyze_deadlock(t, rt).acyclic) << "seed " << seed;
  }
}

// On a 2-ary 3-tree the natural roots are the top switches. Rooted at one leaf instead,
// every route between the other leaves' hosts must climb toward that leaf: the tables change,
// routes get longer, and the result is still deadlock-free.
TEST(UpDown, ALeafAsRootChangesTheTablesAndKeepsThemDeadlockFree) {
  const Topology t = topo::kary_ntree(2, 3);
  const RoutingTables top = make_routing_engine("updn", {{t.find("s2_0"), t.find("s2_1"), t.find("s2_2"), t.find("s2_3")}, ""})->compute(t);
  const RoutingTables leaf = make_routing_engine("updn", {{t.find("s0_0")}, ""})->compute(t);
  EXPECT_TRUE(analyze_deadlock(t, top).acyclic);
  EXPECT_TRUE(analyze_deadlock(t, leaf).acyclic);
  EXPECT_FALSE(first_unrouted(t, leaf).has_value());
  bool differ = false;
  for (uint32_t s : t.switches()) differ = differ || top.lft[s].port != leaf.lft[s].port;
  EXPECT_TRUE(differ);
  // With the top level as roots, a fat tree routes every pair on a shortest path: the
  // farthest hosts (h1 and h8) are 5 switches apart.
  EXPECT_EQ(trace_route(t, top, t.find("h1"), t.nodes[t.find("h8")].lid).size(), 5u);
}

TEST(UpDown, RootGuidFileNamesSwitchesByNodeGuidAndRefusesOthersNamingTheLine) {
  const Topology t = topo::kary_ntree(2, 2);
  const uint32_t s1 = t.find("s1_0"), s2 = t.find("s1_1");
  char text[256];
  std::snprintf(text, sizeof text, "# roots\n0x%016llx\n\n%llu  # decimal works too\n",
                static_cast<unsigned long long>(topo::node_guid(t, s1)), static_cast<unsigned long long>(topo::node_guid(t, s2)));
  EXPECT_EQ(parse_root_guids(t, text, "roots.txt"), (std::vector<uint32_t>{s1, s2}));
  auto error = [&](const std::string& bad) {
    try {
      parse_root_guids(t, bad, "roots.txt");
    } catch (const ConfigError& e) {
      return e;
    }
    ADD_FAILURE() << bad;
    return ConfigError("", "", 0, "", "");
  };
  char endpoint[64];
  std::snprintf(endpoint, sizeof endpoint, "0x%llx\n", static_cast<unsigned long long>(topo::node_guid(t, t.find("h1"))));
  const ConfigError host = error(std::string(text) + endpoint);
  EXPECT_EQ(host.line(), 5);
  EXPECT_EQ(host.file(), "roots.txt");
  EXPECT_NE(std::string(host.what()).find("is not the node GUID of a switch"), std::string::npos) << host.what();
  EXPECT_EQ(error("0x10\nswitch-a\n").line(), 1);  // 0x10 is no switch here
  EXPECT_EQ(error("# nothing\n").line(), 0);
  EXPECT_EQ(find_switch(t, "s1_1"), s2);
  EXPECT_EQ(find_switch(t, "h1"), Topology::npos);
}

// Roots no common switch joins split the fabric into parts without legal routes between them.
TEST(UpDown, RootsThatLeavePairsWithoutALegalRouteAreRefusedNamingTheKey) {
  const Topology t = topo::random_irregular(16, 1);
  try {
    make_routing_engine("updn", {{t.find("sw3"), t.find("sw7"), t.find("sw12")}, ""})->compute(t);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "routing_options.roots");
    EXPECT_NE(std::string(e.what()).find("sw3, sw7, sw12"), std::string::npos) << e.what();
  }
}

TEST(UpDown, RootsAreRefusedForOtherEngines) {
  EXPECT_THROW(make_routing_engine("minhop", {{0}, ""}), ConfigError);
  EXPECT_THROW(make_routing_engine("updn", {{}, "lfts.dump"}), ConfigError);
}

}  // namespace
}  // namespace ibvp::sm
