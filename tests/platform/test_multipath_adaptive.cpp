// routing: multipath_adaptive (platform/sm/multipath.h, adaptive mode): seed 000's multipath
// forwarding table with 2 or 4 entries per destination (Sec. 3.3, 5.1) on fabrics with more
// cycles than IBA's LMC can name.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>

#include "platform/params/config_error.h"
#include "platform/sm/channel_dependency.h"
#include "platform/sm/multipath.h"
#include "platform/sm/routing.h"
#include "platform/topology/generators.h"

using namespace ibvp;
using namespace ibvp::sm;
using topo::NodeKind;
using topo::Topology;

namespace {

// Seed 000 Sec. 5.1's kind of fabric: 15 switches of 5 ports, 4 of them cabled to other
// switches, one host each: 30 cables, 16 independent cycles (> 7, past IBA's LMC).
Topology irregular15(uint32_t seed = 1) {
  topo::RandomIrregularOptions o;
  o.switch_ports = 4;
  o.host_ports = 1;
  return topo::random_irregular(15, seed, o);
}

// Switch hops from every node to switch `to` (endpoints: npos), by breadth-first search.
std::vector<uint32_t> hops_to(const Topology& t, uint32_t to) {
  std::vector<uint32_t> d(t.nodes.size(), Topology::npos);
  std::vector<uint32_t> q{to};
  d[to] = 0;
  for (size_t i = 0; i < q.size(); ++i)
    for (uint16_t p = 1; p <= t.nodes[q[i]].num_ports; ++p) {
      if (t.link_at(q[i], p) < 0) continue;
      const uint32_t n = t.peer(q[i], p).node;
      if (t.nodes[n].kind == NodeKind::switch_node && d[n] == Topology::npos) d[n] = d[q[i]] + 1, q.push_back(n);
    }
  return d;
}

// The switch an endpoint hangs on.
uint32_t switch_of(const Topology& t, uint32_t e) { return t.peer(e, 1).node; }

}  // namespace

TEST(MultipathAdaptive, RoutesAFabricWithMoreCyclesThanLmcAllowsWithTwoOrFourLoopFreeAlternatives) {
  const Topology t = irregular15();
  const CycleBasis basis = find_cycles(t);
  ASSERT_GE(basis.count(), 9u);  // seed 000 Fig. 6 has nine; the cycles mode refuses past 7
  EXPECT_THROW(make_routing_engine("multipath")->compute(t), ConfigError);

  const RoutingTables rt = make_routing_engine("multipath_adaptive")->compute(t);
  ASSERT_EQ(rt.alternatives.size(), t.nodes.size());
  size_t pairs = 0, with_choice = 0;
  for (uint32_t e : t.endpoints()) {
    const uint16_t dlid = t.nodes[e].lid;
    const uint32_t exit = switch_of(t, e);
    const std::vector<uint32_t> d = hops_to(t, exit);
    for (uint32_t s = 0; s < t.nodes.size(); ++s) {
      if (t.nodes[s].kind != NodeKind::switch_node || s == exit) continue;
      const sw::AltTable::Entry& en = rt.alternatives[s].entry.at(dlid);
      ++pairs;
      // Only 1, 2 or 4 entries (seed 000 Sec. 5.1), the first the LFT's, a shortest hop.
      ASSERT_TRUE(en.count == 1 || en.count == 2 || en.count == 4) << int{en.count};
      EXPECT_EQ(en.port[0], rt.lft[s].port[dlid]);
      EXPECT_EQ(d[t.peer(s, en.port[0]).node] + 1, d[s]);
      // Every neighbour that is nearer, or as near and of lower index, could be an
      // alternative; when there are two or more, the switch has a choice.
      size_t descending = 0;
      for (uint16_t p = 1; p <= t.nodes[s].num_ports; ++p) {
        if (t.link_at(s, p) < 0) continue;
        const uint32_t n = t.peer(s, p).node;
        if (t.nodes[n].kind == NodeKind::switch_node && std::make_pair(d[n], n) < std::make_pair(d[s], s)) ++descending;
      }
      EXPECT_EQ(en.count, descending >= 4 ? 4 : descending >= 2 ? 2 : 1) << t.nodes[s].name << " to " << t.nodes[e].name;
      if (en.count > 1) ++with_choice;
      // Distinct ports, all cabled to switches.
      for (uint8_t i = 0; i < en.count; ++i)
        for (uint8_t j = 0; j < i; ++j) EXPECT_NE(en.port[i], en.port[j]);
    }
    // Loop-free whatever each switch chooses: a depth-first walk over all alternatives finds
    // no switch twice on one walk and ends at the destination's switch.
    std::vector<uint8_t> state(t.nodes.size(), 0);  // 0 new, 1 on the walk, 2 done
    std::function<void(uint32_t)> walk = [&](uint32_t s) {
      ASSERT_NE(state[s], 1) << "loop through " << t.nodes[s].name << " to " << t.nodes[e].name;
      if (state[s] == 2 || s == exit) return;
      state[s] = 1;
      const sw::AltTable::Entry& en = rt.alternatives[s].entry.at(dlid);
      ASSERT_GE(en.count, 1);
      for (uint8_t i = 0; i < en.count; ++i) walk(t.peer(s, en.port[i]).node);
      state[s] = 2;
    };
    for (uint32_t s = 0; s < t.nodes.size(); ++s)
      if (t.nodes[s].kind == NodeKind::switch_node) walk(s);
  }
  // The fabric gives most (switch, destination) pairs a choice.
  EXPECT_GT(with_choice * 2, pairs) << with_choice << " of " << pairs;
}

TEST(MultipathAdaptive, AllLidsOfADestinationShareItsAlternativesAndTheTablesAreDeterministic) {
  Topology t = irregular15(3);
  for (topo::Node& n : t.nodes) n.lid = 0;
  for (uint32_t e : t.endpoints()) t.nodes[e].lmc = 1;
  topo::assign_lids(t);
  t.index();
  const RoutingTables a = make_routing_engine("multipath_adaptive")->compute(t);
  const RoutingTables b = make_routing_engine("multipath_adaptive")->compute(t);
  for (uint32_t s = 0; s < t.nodes.size(); ++s) {
    if (t.nodes[s].kind != NodeKind::switch_node) continue;
    EXPECT_EQ(a.lft[s].port, b.lft[s].port);
    for (uint32_t e : t.endpoints()) {
      const auto& x = a.alternatives[s].entry.at(t.nodes[e].lid);
      const auto& y = a.alternatives[s].entry.at(t.nodes[e].lid + 1);
      const auto& z = b.alternatives[s].entry.at(t.nodes[e].lid);
      EXPECT_EQ(x.count, y.count);
      EXPECT_EQ(x.port, y.port);
      EXPECT_EQ(x.port, z.port);
    }
  }
}

TEST(MultipathAdaptive, TheFirstAlternativesAloneAreTheDeterministicRoutesAndReachEveryone) {
  const Topology t = irregular15(2);
  const RoutingTables rt = make_routing_engine("multipath_adaptive")->compute(t);
  const RoutingTables mh = make_routing_engine("minhop")->compute(t);
  for (uint32_t src : t.endpoints())
    for (uint32_t dst : t.endpoints()) {
      if (src == dst) continue;
      const std::vector<uint32_t> path = trace_route(t, rt, src, t.nodes[dst].lid);
      ASSERT_FALSE(path.empty()) << t.nodes[src].name << " -> " << t.nodes[dst].name;
      // Shortest: as many switches as min-hop's route.
      EXPECT_EQ(path.size(), trace_route(t, mh, src, t.nodes[dst].lid).size());
    }
}

TEST(MultipathAdaptive, DeadlockAnalysisCountsTheDependenciesOfEveryAlternative) {
  const Topology t = irregular15();
  RoutingTables rt = make_routing_engine("multipath_adaptive")->compute(t);
  const CdgReport all = analyze_deadlock(t, rt);
  RoutingTables first = rt;
  first.alternatives.clear();
  const CdgReport lft = analyze_deadlock(t, first);
  EXPECT_EQ(all.broken_routes, 0u);
  // The alternatives add channels and dependencies to the LFT's own; a cycle of the LFT's
  // graph stays a cycle of the larger one.
  EXPECT_GE(all.channels, lft.channels);
  EXPECT_GT(all.dependencies, lft.dependencies);
  if (!lft.acyclic) {
    EXPECT_FALSE(all.acyclic);
  }
  // The example fabric (configs/examples/multipath_adaptive.yaml, docs/routing.md): both
  // graphs have cycles, so the scheme relies on the deadlock watch and seed 000's dropping.
  EXPECT_FALSE(lft.acyclic);
  EXPECT_FALSE(all.acyclic);
}

TEST(MultipathAdaptive, ATriangleKeepsItsChannelDependenciesAcyclicWithAlternatives) {
  // Three switches in a ring, one host each: every alternative beside the direct cable goes
  // to a lower-indexed neighbour, and the descending order leaves no cycle of dependencies.
  Topology t;
  t.source = "test:triangle";
  for (int k = 0; k < 3; ++k) {
    topo::Node s;
    s.name = "s" + std::to_string(k);
    s.kind = NodeKind::switch_node;
    s.num_ports = 3;
    t.nodes.push_back(s);
  }
  for (int k = 0; k < 3; ++k) {
    topo::Node h;
    h.name = "h" + std::to_string(k);
    h.kind = NodeKind::endpoint;
    h.num_ports = 1;
    t.nodes.push_back(h);
  }
  auto cable = [&](uint32_t a, uint16_t pa, uint32_t b, uint16_t pb) {
    topo::Link l;
    l.a = {a, pa};
    l.b = {b, pb};
    t.links.push_back(l);
  };
  for (uint32_t k = 0; k < 3; ++k) {
    cable(k, 1, (k + 1) % 3, 2);
    cable(3 + k, 1, k, 3);
  }
  topo::assign_lids(t);
  t.index();
  const RoutingTables rt = make_routing_engine("multipath_adaptive")->compute(t);
  size_t with_choice = 0;
  for (uint32_t s = 0; s < 3; ++s)
    for (uint32_t h = 3; h < 6; ++h) with_choice += rt.alternatives[s].entry.at(t.nodes[h].lid).count > 1;
  EXPECT_EQ(with_choice, 3u);  // s1 to h2 (via s0), s2 to h0 (via s1), s2 to h1 (via s0)
  EXPECT_TRUE(analyze_deadlock(t, rt).acyclic);
}
