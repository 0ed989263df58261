// DFSSSP (Domke, Hoefler and Nagel, IPDPS 2011): shortest paths, checked against the test's
// own BFS distances, made deadlock-free by VL layers, checked with analyze_deadlock() on
// the per-route SLs the engine reports.
#include <gtest/gtest.h>

#include <algorithm>

#include "platform/params/config_error.h"
#include "platform/sm/channel_dependency.h"
#include "platform/sm/dfsssp.h"
#include "platform/sm/routing.h"
#include "platform/topology/generators.h"

namespace ibvp::sm {
namespace {

using topo::NodeKind;
using topo::Topology;

// Switch hops between switches, from the cable list only (-1: unreachable).
std::vector<std::vector<int>> switch_distances(const Topology& t) {
  std::vector<std::vector<uint32_t>> adj(t.nodes.size());
  for (const topo::Link& l : t.links)
    if (t.nodes[l.a.node].kind == NodeKind::switch_node && t.nodes[l.b.node].kind == NodeKind::switch_node &&
        l.a.node != l.b.node) {
      adj[l.a.node].push_back(l.b.node);
      adj[l.b.node].push_back(l.a.node);
    }
  std::vector<std::vector<int>> d(t.nodes.size());
  for (uint32_t s : t.switches()) {
    d[s].assign(t.nodes.size(), -1);
    std::vector<uint32_t> q{s};
    d[s][s] = 0;
    for (size_t i = 0; i < q.size(); ++i)
      for (uint32_t v : adj[q[i]])
        if (d[s][v] < 0) d[s][v] = d[s][q[i]] + 1, q.push_back(v);
  }
  return d;
}

uint32_t switch_of(const Topology& t, uint32_t node) {
  return t.nodes[node].kind == NodeKind::switch_node ? node : t.peer(node, 1).node;
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

// The deadlock analysis with every route on the VL of its SL (SL2VL the identity), switches
// sending from port 0 included.
CdgReport analyze_with_sls(const Topology& t, const RoutingTables& rt) {
  CdgOptions opt;
  opt.switch_sources = true;
  opt.vl = [&rt](uint32_t src, uint16_t dlid) { return rt.sl(src, dlid); };
  return analyze_deadlock(t, rt, opt);
}

CdgReport analyze_on_one_vl(const Topology& t, const RoutingTables& rt) {
  CdgOptions opt;
  opt.switch_sources = true;
  return analyze_deadlock(t, rt, opt);
}

// ---------------------------------------------------------------------------------------------

// Every source (endpoints and switches) reaches every LID of every other node in exactly the
// BFS distance between their switches.
TEST(Dfsssp, EveryRouteIsAShortestPath) {
  std::vector<Topology> fabrics{topo::random_irregular(24, 5), topo::torus2d(5, 4, 1), topo::kary_ntree(3, 3),
                                topo::mesh2d(4, 3, 2), with_lmc(topo::random_irregular(12, 9), 1)};
  for (const Topology& t : fabrics) {
    const RoutingTables rt = DfssspEngine().compute(t);
    EXPECT_EQ(rt.engine, "dfsssp");
    const auto dist = switch_distances(t);
    size_t routes = 0;
    for (uint32_t dst = 0; dst < t.nodes.size(); ++dst) {
      const uint32_t lids = t.nodes[dst].kind == NodeKind::endpoint ? 1u << t.nodes[dst].lmc : 1u;
      for (uint32_t k = 0; k < lids; ++k)
        for (uint32_t src = 0; src < t.nodes.size(); ++src) {
          if (src == dst) continue;
          const uint16_t dlid = static_cast<uint16_t>(t.nodes[dst].lid + k);
          const std::vector<uint32_t> path = trace_route(t, rt, src, dlid);
          ASSERT_FALSE(path.empty()) << t.source << ": " << t.nodes[src].name << " -> LID " << dlid;
          ASSERT_EQ(static_cast<int>(path.size()) - 1, dist[switch_of(t, src)][switch_of(t, dst)])
              << t.source << ": " << t.nodes[src].name << " -> LID " << dlid;
          ++routes;
        }
    }
    EXPECT_GT(routes, 0u);
  }
}

// Domke et al. Sec. IV: each layer's channel dependency graph is acyclic, so with SL l on VL l
// the whole routing is. Shortest paths alone (minhop, or dfsssp's own tables on one VL) are
// cyclic on some of these fabrics, so the check has something to find.
TEST(Dfsssp, LayersAreAcyclicOnFiftyRandomIrregularFabrics) {
  size_t minhop_cyclic = 0, one_vl_cyclic = 0, more_layers = 0;
  for (uint32_t i = 0; i < 50; ++i) {
    const uint32_t switches = 8 + i * 24 / 49;
    const Topology t = topo::random_irregular(switches, 2000 + 13 * i);
    DfssspEngine engine;
    const RoutingTables rt = engine.compute(t);
    const CdgReport r = analyze_with_sls(t, rt);
    EXPECT_TRUE(r.acyclic) << t.source << ": cycle of " << r.cycle.size() << ", first " << r.cycle.at(0);
    EXPECT_EQ(r.broken_routes, 0u) << t.source;
    EXPECT_EQ(r.routes, t.nodes.size() * (t.nodes.size() - 1)) << t.source;
    // The SLs in use are exactly the layers reported, and every route is on one.
    uint8_t top = 0;
    for (const std::vector<uint8_t>& row : rt.path_sl)
      for (uint8_t sl : row) top = std::max(top, sl);
    const DfssspReport& rep = engine.report();
    EXPECT_EQ(top + 1u, rep.layers) << t.source;
    EXPECT_LE(rep.layers, 8u) << t.source;
    uint64_t sum = 0;
    for (uint64_t c : rep.paths_per_layer) sum += c;
    EXPECT_EQ(sum, t.nodes.size() * (t.nodes.size() - 1)) << t.source;
    more_layers += rep.layers > 1;
    one_vl_cyclic += !analyze_on_one_vl(t, rt).acyclic;
    minhop_cyclic += !analyze_on_one_vl(t, make_routing_engine("minhop")->compute(t)).acyclic;
  }
  EXPECT_GT(minhop_cyclic, 0u);
  EXPECT_GT(one_vl_cyclic, 0u);
  EXPECT_EQ(more_layers, one_vl_cyclic);  // a second layer exactly where one VL would deadlock
}

// Shortest paths around a ring of 5 or more switches depend on each other all the way round,
// so a 2-D torus of such rings needs more than one layer. On a tree no route can come back to
// a channel it depended on, so one layer does.
TEST(Dfsssp, TorusNeedsMoreThanOneLayerTreeOne) {
  for (const Topology& t : {topo::torus2d(5, 5, 1), topo::torus2d(6, 5, 2), with_lmc(topo::torus2d(5, 3, 1), 1)}) {
    DfssspEngine engine;
    const RoutingTables rt = engine.compute(t);
    EXPECT_GT(engine.report().layers, 1u) << t.source;
    EXPECT_GT(engine.report().dependencies_removed, 0u) << t.source;
    EXPECT_FALSE(analyze_on_one_vl(t, rt).acyclic) << t.source;
    EXPECT_TRUE(analyze_with_sls(t, rt).acyclic) << t.source;
  }
  for (const Topology& t : {topo::kary_ntree(1, 6), topo::single_switch(4)}) {
    DfssspEngine engine;
    const RoutingTables rt = engine.compute(t);
    EXPECT_EQ(engine.report().layers, 1u) << t.source;
    EXPECT_EQ(engine.report().dependencies_removed, 0u) << t.source;
    for (uint32_t src = 0; src < t.nodes.size(); ++src)
      for (uint16_t dlid = 1; dlid <= t.max_lid(); ++dlid) ASSERT_EQ(rt.sl(src, dlid), 0) << t.source;
  }
  // Whatever the fabric, the layers make it acyclic: 4 x 4 tori and fat trees (whose routes
  // between switches may go down and up again) included.
  for (const Topology& t : {topo::torus2d(4, 4, 1), topo::kary_ntree(2, 3), topo::kary_ntree(4, 2)}) {
    const RoutingTables rt = DfssspEngine().compute(t);
    EXPECT_TRUE(analyze_with_sls(t, rt).acyclic) << t.source;
  }
}

// Fewer VLs than layers: a ConfigError naming the number needed.
TEST(Dfsssp, TooFewVlsIsAConfigError) {
  const Topology t = topo::torus2d(5, 5, 1);
  DfssspEngine full;
  full.compute(t);
  const uint32_t needed = full.report().layers;
  ASSERT_GT(needed, 1u);
  DfssspOptions few;
  few.max_vls = static_cast<uint8_t>(needed - 1);
  try {
    DfssspEngine(few).compute(t);
    ADD_FAILURE() << "accepted with " << needed - 1 << " VLs";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "routing.dfsssp.max_vls");
    EXPECT_NE(std::string(e.what()).find("needs " + std::to_string(needed) + " VLs"), std::string::npos) << e.what();
    EXPECT_NE(e.fix().find("raise max_vls to " + std::to_string(needed)), std::string::npos) << e.fix();
  }
  DfssspOptions exact;
  exact.max_vls = static_cast<uint8_t>(needed);
  EXPECT_NO_THROW(DfssspEngine(exact).compute(t));
  for (uint8_t bad : {uint8_t{0}, uint8_t{16}}) {
    DfssspOptions o;
    o.max_vls = bad;
    EXPECT_THROW(DfssspEngine(o).compute(t), ConfigError);
  }
}

// SSSP balancing (Hoefler et al. 2009): in a 4-ary 2-tree every leaf has 4 equally short ways
// up to each remote host; the weights spread its 12 remote host LIDs over all 4 up ports, 3
// each give or take one (the switches' LIDs weigh in as well).
TEST(Dfsssp, WeightsSpreadRoutesOverEqualPaths) {
  const Topology t = topo::kary_ntree(4, 2);
  const RoutingTables rt = DfssspEngine().compute(t);
  for (uint32_t leaf : t.switches()) {
    if (t.nodes[leaf].name.rfind("s0_", 0) != 0) continue;
    std::vector<uint32_t> per_port(9, 0);
    for (uint32_t h : t.endpoints())
      if (t.peer(h, 1).node != leaf) ++per_port.at(rt.lft[leaf].lookup(t.nodes[h].lid));
    for (uint16_t up = 5; up <= 8; ++up) {
      EXPECT_GE(per_port[up], 2u) << t.nodes[leaf].name << " port " << up;
      EXPECT_LE(per_port[up], 4u) << t.nodes[leaf].name << " port " << up;
    }
  }
}

}  // namespace
}  // namespace ibvp::sm
