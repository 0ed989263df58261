// Multipath routing with DLID path bits (seed 000 Sec. 3.2-3.3) and its link-disjoint LMC mode.
// Cycle counts and path counts are derived by hand for each fabric; the paper's own example
// (Fig. 4a) is rebuilt and its path bits and forwarding entries compared with the text.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "platform/params/config_error.h"
#include "platform/sm/multipath.h"
#include "platform/sm/routing.h"
#include "platform/topology/generators.h"

namespace ibvp::sm {
namespace {

using topo::NodeKind;
using topo::PortRef;
using topo::Topology;

void finish(Topology& t) {
  topo::assign_lids(t);
  t.index();
  t.validate();
}

// Re-LID a fabric with the given LMC on every endpoint.
Topology with_lmc(Topology t, uint8_t lmc) {
  for (topo::Node& n : t.nodes) {
    n.lid = 0;
    if (n.kind == NodeKind::endpoint) n.lmc = lmc;
  }
  finish(t);
  return t;
}

// Seed 000 Fig. 4a: switches a, b, c, d with cables ab, ac, bc, bd, cd, one host each
// ("ha".."hd", LMC 2: the two path bits of its two cycles).
//   a: 1->b 2->c 3 host     b: 1->a 2->c 3->d 4 host
//   c: 1->a 2->b 3->d 4 host d: 1->b 2->c 3 host
Topology fig4a() {
  Topology t;
  for (const char* s : {"a", "b", "c", "d"}) t.nodes.push_back({s, NodeKind::switch_node, 4, 0, 0, 0, 0, {}});
  t.nodes[0].num_ports = 3;
  t.nodes[3].num_ports = 3;
  for (const char* h : {"ha", "hb", "hc", "hd"}) t.nodes.push_back({h, NodeKind::endpoint, 1, 0, 2, 0, 0, {}});
  t.links = {{{0, 1}, {1, 1}, {}}, {{0, 2}, {2, 1}, {}}, {{1, 2}, {2, 2}, {}}, {{1, 3}, {3, 1}, {}},
             {{2, 3}, {3, 2}, {}}, {{0, 3}, {4, 1}, {}}, {{1, 4}, {5, 1}, {}}, {{2, 4}, {6, 1}, {}},
             {{3, 3}, {7, 1}, {}}};
  t.source = "seed 000 Fig. 4a";
  finish(t);
  return t;
}

// The ports a packet from `src` to `dlid` leaves switches from, switch-to-switch hops only
// (the last switch's exit to the host is left out); empty if the walk does not arrive.
std::vector<PortRef> switch_hops(const Topology& t, const RoutingTables& rt, uint32_t src, uint16_t dlid) {
  const std::vector<uint32_t> path = trace_route(t, rt, src, dlid);
  std::vector<PortRef> hops;
  for (size_t i = 0; i + 1 < path.size(); ++i) hops.push_back({path[i], rt.lft[path[i]].lookup(dlid)});
  return hops;
}

std::string names(const Topology& t, const std::vector<uint32_t>& path) {
  std::string s;
  for (uint32_t n : path) s += t.nodes[n].name;
  return s;
}

// Every source (endpoints and switches) reaches every LID of every other node, from its own
// switch to the destination's.
void expect_all_routed(const Topology& t, const RoutingTables& rt) {
  for (uint32_t dst = 0; dst < t.nodes.size(); ++dst) {
    const uint32_t lids = t.nodes[dst].kind == NodeKind::endpoint ? 1u << t.nodes[dst].lmc : 1u;
    for (uint32_t k = 0; k < lids; ++k) {
      const uint16_t dlid = static_cast<uint16_t>(t.nodes[dst].lid + k);
      for (uint32_t src = 0; src < t.nodes.size(); ++src) {
        if (src == dst) continue;
        const std::vector<uint32_t> path = trace_route(t, rt, src, dlid);
        ASSERT_FALSE(path.empty()) << t.source << ": " << t.nodes[src].name << " -> LID " << dlid;
        if (t.nodes[src].kind == NodeKind::switch_node) {
          EXPECT_EQ(path.front(), src);
        }
      }
    }
  }
}

// The largest number of pairwise link-disjoint paths among `paths` (small sets: by subsets).
size_t most_disjoint(const std::vector<std::vector<PortRef>>& paths) {
  auto key = [](const PortRef& p) { return (static_cast<uint64_t>(p.node) << 16) | p.port; };
  size_t best = 0;
  for (uint32_t mask = 1; mask < (1u << paths.size()); ++mask) {
    std::set<uint64_t> used;
    size_t hops = 0, count = 0;
    for (size_t i = 0; i < paths.size(); ++i)
      if (mask & (1u << i)) {
        ++count;
        for (const PortRef& h : paths[i]) used.insert(key(h)), ++hops;
      }
    if (used.size() == hops) best = std::max(best, count);
  }
  return best;
}

// Over every pair of hosts on different switches and the 2^LMC LIDs of the destination: the
// fewest distinct paths and (if asked: it tries every subset) the fewest pairwise link-disjoint
// paths a pair gets, and how many pairs get a different path for every LID.
struct PairSpread {
  size_t distinct = SIZE_MAX, disjoint = SIZE_MAX;
  size_t pairs = 0, all_distinct = 0;
};

PairSpread spread(const Topology& t, const RoutingTables& rt, bool count_disjoint = true) {
  PairSpread r;
  for (uint32_t dst : t.endpoints())
    for (uint32_t src : t.endpoints()) {
      if (t.peer(src, 1).node == t.peer(dst, 1).node) continue;
      const uint32_t lids = 1u << t.nodes[dst].lmc;
      std::vector<std::vector<PortRef>> paths;
      std::set<std::vector<uint64_t>> different;
      for (uint32_t k = 0; k < lids; ++k) {
        paths.push_back(switch_hops(t, rt, src, static_cast<uint16_t>(t.nodes[dst].lid + k)));
        EXPECT_FALSE(paths.back().empty()) << t.nodes[src].name << " -> " << t.nodes[dst].name << " LID " << k;
        std::vector<uint64_t> id;
        for (const PortRef& h : paths.back()) id.push_back((static_cast<uint64_t>(h.node) << 16) | h.port);
        different.insert(id);
      }
      r.distinct = std::min(r.distinct, different.size());
      if (count_disjoint) r.disjoint = std::min(r.disjoint, most_disjoint(paths));
      ++r.pairs;
      r.all_distinct += different.size() == lids;
    }
  return r;
}

MultipathOptions disjoint_mode() {
  MultipathOptions o;
  o.mode = MultipathMode::disjoint;
  return o;
}

// ---------------------------------------------------------------------------------------------

// seed 000 Sec. 3.2: C = |E| - |V| + 1 independent cycles, counted by hand per fabric.
TEST(Multipath, CycleCountIsEdgesMinusVerticesPlusOne) {
  struct Case {
    Topology t;
    size_t switches, cables, cycles;
  };
  Topology parallel;  // two switches joined by three cables: two cycles of two hops
  parallel.nodes = {{"s0", NodeKind::switch_node, 4, 0, 0, 0, 0, {}}, {"s1", NodeKind::switch_node, 4, 0, 0, 0, 0, {}},
                    {"h0", NodeKind::endpoint, 1, 0, 0, 0, 0, {}}};
  parallel.links = {{{0, 1}, {1, 1}, {}}, {{0, 2}, {1, 2}, {}}, {{0, 3}, {1, 3}, {}}, {{0, 4}, {2, 1}, {}}};
  finish(parallel);
  std::vector<Case> cases;
  cases.push_back({fig4a(), 4, 5, 2});                   // the paper's example: acba and cdbc
  cases.push_back({topo::torus2d(6, 1, 1), 6, 6, 1});    // a ring
  cases.push_back({topo::mesh2d(3, 3, 1), 9, 12, 4});    // 3 x 3 grid: its 4 squares
  cases.push_back({topo::torus2d(3, 3, 1), 9, 18, 10});  // 2 cables per switch and dimension
  cases.push_back({topo::kary_ntree(2, 2), 4, 4, 1});    // 2 leaves, 2 roots: one square
  cases.push_back({topo::kary_ntree(3, 2), 6, 9, 4});    // K(3,3)
  cases.push_back({topo::kary_ntree(2, 3), 12, 16, 5});  // 8 lower switches with 2 up cables each
  cases.push_back({topo::kary_ntree(1, 4), 4, 3, 0});    // a chain: a tree
  cases.push_back({parallel, 2, 3, 2});
  for (const Case& c : cases) {
    const CycleBasis b = find_cycles(c.t);
    EXPECT_EQ(b.switches, c.switches) << c.t.source;
    EXPECT_EQ(b.cables, c.cables) << c.t.source;
    EXPECT_EQ(b.components, 1u) << c.t.source;
    ASSERT_EQ(b.count(), c.cycles) << c.t.source;
    EXPECT_EQ(b.count(), c.cables - c.switches + 1) << c.t.source;
    // Each is a closed walk of cables, and its first hop (the back edge) is on no other cycle,
    // so the cycles are independent.
    for (size_t i = 0; i < b.count(); ++i) {
      const std::vector<PortRef>& cyc = b.cycles[i];
      ASSERT_GE(cyc.size(), 2u);
      for (size_t h = 0; h < cyc.size(); ++h)
        EXPECT_EQ(c.t.peer(cyc[h].node, cyc[h].port).node, cyc[(h + 1) % cyc.size()].node) << c.t.source;
      EXPECT_EQ(b.cycle_list(c.t, cyc[0]).size(), 1u) << c.t.source << ": cycle " << i;
    }
  }
}

// seed 000 Sec. 3.2 on Fig. 4a: BFS root b, back edges (a, c) and (c, d), C_1 = acba and
// C_2 = cdbc; path bits b->a "1X", bca "01", bdca "00"; a->b "0X", acb "10", acdb "11".
TEST(Multipath, PathBitsOfThePapersExample) {
  const Topology t = fig4a();
  const CycleBasis b = find_cycles(t);
  ASSERT_EQ(b.roots, std::vector<uint32_t>{t.find("b")});
  ASSERT_EQ(b.count(), 2u);
  auto walk = [&](const std::vector<PortRef>& cyc) {
    std::vector<uint32_t> nodes;
    for (const PortRef& h : cyc) nodes.push_back(h.node);
    nodes.push_back(cyc.front().node);
    return names(t, nodes);
  };
  EXPECT_EQ(walk(b.cycles[0]), "acba");
  EXPECT_EQ(walk(b.cycles[1]), "cdbc");
  const uint32_t a = t.find("a"), bb = t.find("b"), c = t.find("c"), d = t.find("d");
  // Definition 1: bc lies on both cycles, against C_1 and along C_2.
  EXPECT_EQ(b.cycle_list(t, {bb, 2}), (std::vector<std::pair<uint32_t, bool>>{{0, false}, {1, true}}));
  EXPECT_EQ(b.path_bits(t, {{bb, 1}}), "1X");
  EXPECT_EQ(b.path_bits(t, {{bb, 2}, {c, 1}}), "01");
  EXPECT_EQ(b.path_bits(t, {{bb, 3}, {d, 2}, {c, 1}}), "00");
  EXPECT_EQ(b.path_bits(t, {{a, 1}}), "0X");
  EXPECT_EQ(b.path_bits(t, {{a, 2}, {c, 2}}), "10");
  EXPECT_EQ(b.path_bits(t, {{a, 2}, {c, 3}, {d, 1}}), "11");
  // Definition 2, "not defined": ab then ba runs C_1 both ways on single-cycle hops.
  EXPECT_EQ(b.path_bits(t, {{a, 1}, {bb, 1}}), "");
}

// seed 000 Sec. 3.3 on Fig. 4a: the multipath table sends DLID b0X over ab, b10 over acb and
// b11 over acdb; from b, a's LIDs 1X go ba, 01 bca, 00 bdca. Vertex a lies on C_1 only, so
// its table looks at the first path bit only (Fig. 5c).
TEST(Multipath, ForwardingTableOfThePapersExample) {
  const Topology t = fig4a();
  MultipathEngine engine;
  const RoutingTables rt = engine.compute(t);
  EXPECT_EQ(rt.engine, "multipath");
  EXPECT_TRUE(rt.path_sl.empty());
  const uint32_t ha = t.find("ha"), hb = t.find("hb"), a = t.find("a");
  const uint16_t lid_a = t.nodes[ha].lid, lid_b = t.nodes[hb].lid;
  auto route = [&](uint32_t src, uint16_t dlid) { return names(t, trace_route(t, rt, src, dlid)); };
  EXPECT_EQ(route(ha, lid_b + 0), "ab");
  EXPECT_EQ(route(ha, lid_b + 1), "ab");
  EXPECT_EQ(route(ha, lid_b + 2), "acb");
  EXPECT_EQ(route(ha, lid_b + 3), "acdb");
  EXPECT_EQ(route(hb, lid_a + 0), "bdca");
  EXPECT_EQ(route(hb, lid_a + 1), "bca");
  EXPECT_EQ(route(hb, lid_a + 2), "ba");
  EXPECT_EQ(route(hb, lid_a + 3), "ba");
  // Every route's path bits (Algorithm 3) agree with the DLID's path bits.
  const CycleBasis& basis = engine.cycles();
  for (uint32_t src : t.endpoints())
    for (uint32_t dst : t.endpoints()) {
      if (src == dst) continue;
      for (uint32_t k = 0; k < 4; ++k) {
        const uint16_t dlid = static_cast<uint16_t>(t.nodes[dst].lid + k);
        const std::string bits = basis.path_bits(t, switch_hops(t, rt, src, dlid));
        ASSERT_EQ(bits.size(), 2u);
        for (size_t i = 0; i < 2; ++i) {
          if (bits[i] == 'X') continue;
          EXPECT_EQ(bits[i] - '0', static_cast<int>((k >> (1 - i)) & 1u))
              << t.nodes[src].name << " -> " << t.nodes[dst].name << " path bits " << k;
        }
      }
    }
  for (uint32_t dst : t.endpoints())
    for (uint32_t k : {0u, 2u})
      EXPECT_EQ(rt.lft[a].lookup(static_cast<uint16_t>(t.nodes[dst].lid + k)),
                rt.lft[a].lookup(static_cast<uint16_t>(t.nodes[dst].lid + k + 1)))
          << t.nodes[dst].name;
  expect_all_routed(t, rt);
}

// A ring has one cycle, so one path bit: between two switches there are exactly two paths,
// one each way round, and the two LIDs take them (link-disjoint, together the whole ring).
TEST(Multipath, RingLidsGoBothWaysRound) {
  for (uint32_t n : {3u, 5u, 6u}) {
    const Topology t = with_lmc(topo::torus2d(n, 1, 1), 1);
    const RoutingTables rt = MultipathEngine().compute(t);
    expect_all_routed(t, rt);
    const PairSpread r = spread(t, rt);
    EXPECT_EQ(r.distinct, 2u) << t.source;
    EXPECT_EQ(r.disjoint, 2u) << t.source;
    for (uint32_t src : t.endpoints())
      for (uint32_t dst : t.endpoints()) {
        if (t.peer(src, 1).node == t.peer(dst, 1).node) continue;
        const uint16_t lid = t.nodes[dst].lid;
        EXPECT_EQ(switch_hops(t, rt, src, lid).size() + switch_hops(t, rt, src, lid + 1).size(), n);
      }
  }
}

// With more LIDs than cycles the low C path bits choose the path; K(3,3) (C = 4) with LMC 4
// routes all 16 LIDs, and between two leaves (3 two-hop paths, each leaf on 3 cycles) the
// 16 LIDs take at least 3 different paths.
TEST(Multipath, EveryLidRoutedOnFatTrees) {
  {
    const Topology t = with_lmc(topo::kary_ntree(3, 2), 4);
    MultipathEngine engine;
    const RoutingTables rt = engine.compute(t);
    EXPECT_EQ(engine.cycles().count(), 4u);
    expect_all_routed(t, rt);
    EXPECT_GE(spread(t, rt, false).distinct, 3u);
  }
  {
    // More LMC than cycles: the higher bits are ignored, LID base + 2 routes as base + 0.
    const Topology t = with_lmc(topo::kary_ntree(2, 2), 2);
    const RoutingTables rt = MultipathEngine().compute(t);
    expect_all_routed(t, rt);
    const PairSpread r = spread(t, rt);
    EXPECT_EQ(r.distinct, 2u);  // leaf -> either root -> leaf
    EXPECT_EQ(r.disjoint, 2u);
    for (uint32_t s : t.switches())
      for (uint32_t dst : t.endpoints())
        EXPECT_EQ(rt.lft[s].lookup(t.nodes[dst].lid), rt.lft[s].lookup(t.nodes[dst].lid + 2));
  }
}

// More cycles than path bits: a ConfigError naming the LMC needed, never a silent truncation.
TEST(Multipath, TooFewPathBitsIsAConfigError) {
  auto message = [](const Topology& t) -> std::string {
    try {
      MultipathEngine().compute(t);
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), "routing.multipath.mode");
      return std::string(e.what()) + " | " + e.fix();
    }
    return "accepted";
  };
  const std::string k33 = message(with_lmc(topo::kary_ntree(3, 2), 2));
  EXPECT_NE(k33.find("has LMC 2, but the cycles mode needs LMC 4"), std::string::npos) << k33;
  EXPECT_NE(k33.find("lmc: 4"), std::string::npos) << k33;
  EXPECT_NE(k33.find("mode: disjoint"), std::string::npos) << k33;
  const std::string torus = message(topo::torus2d(3, 3, 1));  // 10 cycles > LMC 7
  EXPECT_NE(torus.find("10 independent cycles"), std::string::npos) << torus;
  EXPECT_NE(torus.find("mode: disjoint"), std::string::npos) << torus;
  // A tree needs no path bit.
  EXPECT_EQ(message(topo::kary_ntree(1, 4)), "accepted");
  EXPECT_THROW(parse_multipath_mode("spf"), ConfigError);
  EXPECT_EQ(parse_multipath_mode("disjoint"), MultipathMode::disjoint);
  EXPECT_EQ(parse_multipath_mode("cycles"), MultipathMode::cycles);
}

TEST(Multipath, BadRootIsAConfigError) {
  MultipathOptions host, unknown;
  host.root = "ha";
  unknown.root = "zz";
  EXPECT_THROW(MultipathEngine(host).compute(fig4a()), ConfigError);
  EXPECT_THROW(MultipathEngine(unknown).compute(fig4a()), ConfigError);
  MultipathOptions c;
  c.root = "c";
  EXPECT_EQ(find_cycles(fig4a(), c).roots, std::vector<uint32_t>{fig4a().find("c")});
}

// Disjoint mode, counted by hand: a ring has 2 link-disjoint paths between two switches, so
// its 4 LIDs (LMC 2) take both ways round; a 4-ary 2-tree has 4 (one over each root) between
// hosts on different leaves, and the 4 LIDs take all 4. A 4 x 4 torus has 4 as well (4 cables
// per switch), but one tree per LID cannot give every pair all of them at once (the trees of
// the other sources constrain it); the heuristic gets every pair 2 link-disjoint paths and
// most pairs 4 different ones.
TEST(Multipath, DisjointModeSpreadsLidsOverLinkDisjointPaths) {
  {
    const Topology t = with_lmc(topo::torus2d(6, 1, 2), 2);
    const RoutingTables rt = MultipathEngine(disjoint_mode()).compute(t);
    expect_all_routed(t, rt);
    const PairSpread r = spread(t, rt);
    EXPECT_EQ(r.distinct, 2u);
    EXPECT_EQ(r.disjoint, 2u);
    // Shortest paths alone take one way round between neighbours.
    EXPECT_EQ(spread(t, make_routing_engine("minhop")->compute(t)).disjoint, 1u);
  }
  {
    const Topology t = with_lmc(topo::kary_ntree(4, 2), 2);
    const RoutingTables rt = MultipathEngine(disjoint_mode()).compute(t);
    expect_all_routed(t, rt);
    const PairSpread r = spread(t, rt);
    EXPECT_EQ(r.distinct, 4u);
    EXPECT_EQ(r.disjoint, 4u);
  }
  {
    const Topology t = with_lmc(topo::torus2d(4, 4, 1), 2);
    const RoutingTables rt = MultipathEngine(disjoint_mode()).compute(t);
    expect_all_routed(t, rt);
    const PairSpread r = spread(t, rt);
    EXPECT_GE(r.distinct, 2u);
    EXPECT_GE(r.disjoint, 2u);
    EXPECT_GE(r.all_distinct * 2, r.pairs);
  }
}

// The base LID takes a shortest path in disjoint mode, and without LMC the mode is shortest
// path routing; every LID of random irregular fabrics is routed.
TEST(Multipath, DisjointModeBaseLidIsShortestAndAllLidsRouted) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    for (uint8_t lmc : {uint8_t{0}, uint8_t{2}}) {
      const Topology t = with_lmc(topo::random_irregular(16, seed), lmc);
      const RoutingTables rt = MultipathEngine(disjoint_mode()).compute(t);
      const RoutingTables ref = make_routing_engine("minhop")->compute(t);
      expect_all_routed(t, rt);
      for (uint32_t src : t.endpoints())
        for (uint32_t dst : t.endpoints()) {
          if (src == dst) continue;
          const uint16_t lid = t.nodes[dst].lid;
          EXPECT_EQ(trace_route(t, rt, src, lid).size(), trace_route(t, ref, src, lid).size())
              << t.source << ": " << t.nodes[src].name << " -> " << t.nodes[dst].name;
        }
    }
  }
}

}  // namespace
}  // namespace ibvp::sm
