// Multicast forwarding tables: from every sender, every other member gets exactly one copy and
// no one else gets any (walked through the tables as switches replicate, not read off the
// trees), no copy runs into a dead end, source trees are shortest-path trees (checked against
// a BFS written here), a shared tree uses at most |switches| - 1 cables, and no source-tree
// entry holds the port its copies come in by. docs/multicast.md has the rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "models/switch/mft.h"
#include "platform/params/config_error.h"
#include "platform/sm/multicast.h"
#include "platform/topology/generators.h"

namespace ibvp::sm {
namespace {

using topo::Link;
using topo::NodeKind;
using topo::Topology;

// The test's own view of the fabric, from the cable list only.
struct Graph {
  std::vector<std::vector<uint32_t>> sw_neighbours;  // [switch node] -> switch nodes
  std::vector<uint32_t> attach;                      // [endpoint node] -> its switch node
};

Graph graph_of(const Topology& t) {
  Graph g;
  g.sw_neighbours.resize(t.nodes.size());
  g.attach.assign(t.nodes.size(), Topology::npos);
  for (const Link& l : t.links) {
    const bool a_sw = t.nodes[l.a.node].kind == NodeKind::switch_node;
    const bool b_sw = t.nodes[l.b.node].kind == NodeKind::switch_node;
    if (a_sw && b_sw) {
      g.sw_neighbours[l.a.node].push_back(l.b.node);
      g.sw_neighbours[l.b.node].push_back(l.a.node);
    } else if (a_sw) {
      g.attach[l.b.node] = l.a.node;
    } else if (b_sw) {
      g.attach[l.a.node] = l.b.node;
    }
  }
  return g;
}

// Switch hops from `from` to every switch.
std::vector<int> bfs(const Graph& g, uint32_t from) {
  std::vector<int> d(g.sw_neighbours.size(), -1);
  std::vector<uint32_t> q{from};
  d[from] = 0;
  for (size_t i = 0; i < q.size(); ++i)
    for (uint32_t v : g.sw_neighbours[q[i]])
      if (d[v] < 0) d[v] = d[q[i]] + 1, q.push_back(v);
  return d;
}

bool is_switch(const Topology& t, uint32_t n) { return t.nodes[n].kind == NodeKind::switch_node; }

// Groups over a fabric's endpoints: every third endpoint; a random third with two senders
// outside the group (SendOnlyNonMember); a random pair; everybody.
std::vector<MulticastGroup> some_groups(const Topology& t, uint32_t seed) {
  const std::vector<uint32_t> eps = t.endpoints();
  std::mt19937 rng(seed);
  std::vector<MulticastGroup> groups;
  MulticastGroup every_third{0xC000, {}, {}};
  for (size_t i = 0; i < eps.size(); i += 3) every_third.members.push_back(eps[i]);
  groups.push_back(every_third);

  std::vector<uint32_t> shuffled = eps;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  const size_t third = std::max<size_t>(2, eps.size() / 3);
  MulticastGroup random_third{0xC400, {shuffled.begin(), shuffled.begin() + static_cast<long>(third)}, {}};
  random_third.senders = {random_third.members[0], random_third.members[1], shuffled[third], shuffled.back()};
  groups.push_back(random_third);

  groups.push_back({0xC800, {shuffled[third + 1], shuffled[third + 2]}, {}});
  groups.push_back({0xD000, eps, {}});
  return groups;
}

// The properties every table set must have, for every group and sender.
void expect_correct_delivery(const Topology& t, const std::vector<MulticastGroup>& groups, MulticastMode mode) {
  const MulticastTables mt = compute_multicast_tables(t, groups, mode);
  const Graph g = graph_of(t);
  const size_t num_switches = t.switches().size();
  size_t walks = 0;
  for (uint32_t gi = 0; gi < groups.size(); ++gi) {
    const MulticastGroup& grp = groups[gi];
    const std::set<uint32_t> members(grp.members.begin(), grp.members.end());
    const std::vector<uint32_t>& senders = grp.senders.empty() ? grp.members : grp.senders;
    std::set<int> shared_cables;  // switch-to-switch cables used by any sender of the group
    for (size_t k = 0; k < senders.size(); ++k) {
      const uint32_t src = senders[k];
      SCOPED_TRACE(t.source + ": group " + std::to_string(gi) + " from " + t.nodes[src].name);
      const uint16_t mlid = mt.mlid_for(gi, src);
      ASSERT_EQ(static_cast<size_t>(mlid), mode == MulticastMode::source_trees ? grp.mlid + k : grp.mlid);
      const MulticastWalk w = walk_multicast(t, mt.mft, src, mlid);
      ASSERT_FALSE(w.cut_off);
      ++walks;
      for (uint32_t n = 0; n < t.nodes.size(); ++n) {
        if (is_switch(t, n)) {
          EXPECT_EQ(w.copies[n], 0u) << t.nodes[n].name;
          continue;
        }
        const uint32_t expected = members.count(n) && n != src ? 1 : 0;
        EXPECT_EQ(w.copies[n], expected) << t.nodes[n].name;
      }
      std::vector<uint32_t> expected_reached;
      for (uint32_t m : members)
        if (m != src) expected_reached.push_back(m);
      EXPECT_EQ(w.reached, expected_reached);

      const std::vector<int> d = bfs(g, g.attach[src]);
      for (size_t l = 0; l < t.links.size(); ++l) {
        const Link& cable = t.links[l];
        // A tree carries at most one copy over a cable, in one direction only.
        EXPECT_LE(w.link_copies[l][0] + w.link_copies[l][1], 1u)
            << t.nodes[cable.a.node].name << "/" << cable.a.port << " - " << t.nodes[cable.b.node].name << "/" << cable.b.port;
        if (is_switch(t, cable.a.node) && is_switch(t, cable.b.node) && w.link_copies[l][0] + w.link_copies[l][1] > 0)
          shared_cables.insert(static_cast<int>(l));
        if (mode != MulticastMode::source_trees) continue;
        // The port a copy came in through is the tree's port towards the source: the entry
        // must not hold it (the switch would skip it anyway, but the table alone is loop-free).
        for (int dir = 0; dir < 2; ++dir) {
          const topo::PortRef in = dir == 0 ? cable.b : cable.a;
          if (w.link_copies[l][static_cast<size_t>(dir)] > 0 && is_switch(t, in.node)) {
            EXPECT_FALSE(mt.mft[in.node].lookup(mlid).test(in.port)) << t.nodes[in.node].name << " port " << in.port;
          }
        }
      }
      // No copy is wasted: every switch a copy reaches passes one on.
      std::vector<uint32_t> passed_on(t.nodes.size(), 0);
      for (size_t l = 0; l < t.links.size(); ++l) {
        passed_on[t.links[l].a.node] += w.link_copies[l][0];
        passed_on[t.links[l].b.node] += w.link_copies[l][1];
      }
      for (uint32_t s : t.switches()) {
        if (w.switch_hops[s] > 0) {
          EXPECT_GT(passed_on[s], 0u) << t.nodes[s].name << " is a dead end";
        }
      }
      if (mode == MulticastMode::source_trees) {
        // Minimal hops: a member's copy passed exactly BFS distance + 1 switches.
        for (uint32_t m : members) {
          if (m != src) {
            EXPECT_EQ(static_cast<int>(w.switch_hops[m]), d[g.attach[m]] + 1) << t.nodes[m].name;
          }
        }
      }
    }
    if (mode == MulticastMode::shared_tree) {
      ASSERT_EQ(mt.trees[gi].mlid, grp.mlid);
      EXPECT_EQ(shared_cables.size(), mt.trees[gi].switch_links);
      EXPECT_LE(shared_cables.size(), num_switches - 1);
      EXPECT_EQ(mt.trees[gi].switches.size(), mt.trees[gi].switch_links + 1u);
    }
  }
  EXPECT_GT(walks, 0u);
}

void expect_correct_in_both_modes(const Topology& t, uint32_t seed) {
  const std::vector<MulticastGroup> groups = some_groups(t, seed);
  {
    SCOPED_TRACE("source trees");
    expect_correct_delivery(t, groups, MulticastMode::source_trees);
  }
  {
    SCOPED_TRACE("shared tree");
    expect_correct_delivery(t, groups, MulticastMode::shared_tree);
  }
}

TEST(Multicast, MftLooksUpByMlidAndCarriesIbaPortMaskWords) {
  sw::Mft mft;
  EXPECT_EQ(mft.multicast_fdb_top(), 0xBFFF);  // no entries
  mft.entry(0xC002).set(1).set(17).set(254);
  EXPECT_EQ(mft.port_mask.size(), 3u);
  EXPECT_EQ(mft.multicast_fdb_top(), 0xC002);
  EXPECT_TRUE(mft.lookup(0xC002).test(17));
  EXPECT_TRUE(mft.lookup(0xC000).none());
  EXPECT_TRUE(mft.lookup(0xC003).none());  // beyond MulticastFDBTop
  EXPECT_TRUE(mft.lookup(0x0002).none());  // a unicast LID is no index
  EXPECT_TRUE(mft.lookup(0xFFFF).none());  // permissive LID
  EXPECT_EQ(mft.port_mask_word(0xC002, 0), 0x0002);           // port 1
  EXPECT_EQ(mft.port_mask_word(0xC002, 1), 0x0002);           // port 17
  EXPECT_EQ(mft.port_mask_word(0xC002, 15), 0x4000);          // port 254 = 16 * 15 + 14
  EXPECT_TRUE(sw::Mft::is_mlid(0xC000) && sw::Mft::is_mlid(0xFFFE));
  EXPECT_FALSE(sw::Mft::is_mlid(0xBFFF) || sw::Mft::is_mlid(0xFFFF));
}

// 2-ary 2-tree: leaves s0_0 (h1 on port 1, h2 on 2) and s0_1 (h3, h4), each with up port 3 to
// s1_0 and 4 to s1_1; s1_x has down port 1 to s0_0 and 2 to s0_1. Group {h1, h3, h4}, every
// member sending: three MLIDs, each tree over the lowest-port root s1_0.
TEST(Multicast, SourceTreesOnATwoLevelFatTreeByHand) {
  const Topology t = topo::kary_ntree(2, 2);
  const uint32_t h1 = t.find("h1"), h3 = t.find("h3"), h4 = t.find("h4");
  const MulticastTables mt = compute_multicast_tables(t, {{0xC010, {h1, h3, h4}, {}}}, MulticastMode::source_trees);
  const uint32_t l0 = t.find("s0_0"), l1 = t.find("s0_1"), r0 = t.find("s1_0"), r1 = t.find("s1_1");
  auto word = [&mt](uint32_t sw, uint16_t mlid) { return mt.mft[sw].port_mask_word(mlid, 0); };
  ASSERT_EQ(mt.trees.size(), 3u);
  EXPECT_EQ(mt.mlid_for(0, h1), 0xC010);
  EXPECT_EQ(mt.mlid_for(0, h3), 0xC011);
  EXPECT_EQ(mt.mlid_for(0, h4), 0xC012);
  EXPECT_EQ(mt.mlid_for(0, t.find("h2")), 0);  // not a sender
  // From h1: s0_0 up to s1_0 (port 3), down to s0_1 (port 2), out to h3 and h4 (ports 1, 2).
  EXPECT_EQ(word(l0, 0xC010), 1 << 3);
  EXPECT_EQ(word(r0, 0xC010), 1 << 2);
  EXPECT_EQ(word(l1, 0xC010), (1 << 1) | (1 << 2));
  EXPECT_EQ(word(r1, 0xC010), 0);
  EXPECT_EQ(mt.trees[0].root, l0);
  EXPECT_EQ(mt.trees[0].switches, (std::vector<uint32_t>{l0, r0, l1}));
  EXPECT_EQ(mt.trees[0].switch_links, 2u);
  // From h3: to h4 on its own switch, and up and over to h1; never back to h3 (port 1).
  EXPECT_EQ(word(l1, 0xC011), (1 << 2) | (1 << 3));
  EXPECT_EQ(word(r0, 0xC011), 1 << 1);
  EXPECT_EQ(word(l0, 0xC011), 1 << 1);
  // From h4: the mirror image.
  EXPECT_EQ(word(l1, 0xC012), (1 << 1) | (1 << 3));
  // Every switch's table ends at the group's last MLID.
  for (uint32_t s : t.switches()) EXPECT_EQ(mt.mft[s].multicast_fdb_top(), 0xC012);
  for (uint32_t e : t.endpoints()) EXPECT_TRUE(mt.mft[e].port_mask.empty());
}

// Same fabric and group, one shared tree: the switches with members are s0_0 and s0_1; the
// roots s1_0 and s1_1 are one hop from both (the leaves are two from each other) and s1_0 has
// the lower index. Each entry holds all the tree's ports at that switch, towards the root too.
TEST(Multicast, SharedTreeRootsAtTheCentralSwitchByHand) {
  const Topology t = topo::kary_ntree(2, 2);
  const uint32_t h1 = t.find("h1"), h3 = t.find("h3"), h4 = t.find("h4");
  const MulticastTables mt = compute_multicast_tables(t, {{0xC010, {h1, h3, h4}, {}}}, MulticastMode::shared_tree);
  ASSERT_EQ(mt.trees.size(), 1u);
  EXPECT_EQ(mt.trees[0].root, t.find("s1_0"));
  EXPECT_EQ(mt.trees[0].switch_links, 2u);
  for (uint32_t h : {h1, h3, h4}) EXPECT_EQ(mt.mlid_for(0, h), 0xC010);
  auto word = [&](const char* sw) { return mt.mft[t.find(sw)].port_mask_word(0xC010, 0); };
  EXPECT_EQ(word("s1_0"), (1 << 1) | (1 << 2));
  EXPECT_EQ(word("s0_0"), (1 << 1) | (1 << 3));
  EXPECT_EQ(word("s0_1"), (1 << 1) | (1 << 2) | (1 << 3));
  EXPECT_EQ(word("s1_1"), 0);
}

// Seed 000 Sec. 3.6 (source-based trees): a 4-ary 3-tree has 16 leaves (4 pods of 4), 16
// middle and 16 root switches. Reaching every leaf from one leaf needs the 15 other leaves, one
// middle switch in each pod and one root: 21 switches, 20 cables. Branches that merge where a
// choice exists (a switch already on the tree) reach that minimum.
TEST(Multicast, BroadcastSourceTreeOnAFatTreeUsesTheFewestCables) {
  const Topology t = topo::kary_ntree(4, 3);
  const MulticastTables mt = compute_multicast_tables(t, {{0xC000, t.endpoints(), {t.find("h1")}}}, MulticastMode::source_trees);
  ASSERT_EQ(mt.trees.size(), 1u);
  EXPECT_EQ(mt.trees[0].switch_links, 20u);
  EXPECT_EQ(mt.trees[0].switches.size(), 21u);
  const Topology t2 = topo::kary_ntree(4, 2);  // one leaf up to one root, down to 3 leaves
  const MulticastTables mt2 = compute_multicast_tables(t2, {{0xC000, t2.endpoints(), {t2.find("h6")}}}, MulticastMode::source_trees);
  EXPECT_EQ(mt2.trees[0].switch_links, 4u);
}

TEST(Multicast, EveryMemberGetsOneCopyOnRandomIrregularFabrics) {
  for (uint32_t n : {8u, 16u, 32u})
    for (uint32_t seed : {1u, 2u}) expect_correct_in_both_modes(topo::random_irregular(n, seed), seed);
}

TEST(Multicast, EveryMemberGetsOneCopyOnFatTrees) {
  expect_correct_in_both_modes(topo::kary_ntree(4, 3), 3);
  expect_correct_in_both_modes(topo::kary_ntree(2, 4), 4);
}

TEST(Multicast, EveryMemberGetsOneCopyOnTorusAndMesh) {
  expect_correct_in_both_modes(topo::torus2d(4, 4, 2), 5);
  expect_correct_in_both_modes(topo::torus2d(5, 3, 1), 6);
  expect_correct_in_both_modes(topo::mesh2d(3, 5, 1), 7);
}

// A sender outside the group (IBA SendOnlyNonMember) reaches every member and hears nothing
// back, in both modes; on a single switch that sender's port is in no entry.
TEST(Multicast, SendOnlyNonMemberReachesTheGroupAndReceivesNothing) {
  const Topology t = topo::single_switch(5);
  const uint32_t h1 = t.find("h1"), h2 = t.find("h2"), h3 = t.find("h3"), h5 = t.find("h5");
  const std::vector<MulticastGroup> groups{{0xC000, {h1, h2, h3}, {h5, h1}}};
  for (MulticastMode mode : {MulticastMode::source_trees, MulticastMode::shared_tree}) {
    const MulticastTables mt = compute_multicast_tables(t, groups, mode);
    const MulticastWalk w = walk_multicast(t, mt.mft, h5, mt.mlid_for(0, h5));
    EXPECT_EQ(w.reached, (std::vector<uint32_t>{h1, h2, h3}));
    for (const MulticastTree& tree : mt.trees) EXPECT_FALSE(mt.mft[t.find("sw")].lookup(tree.mlid).test(5));
    const MulticastWalk back = walk_multicast(t, mt.mft, h1, mt.mlid_for(0, h1));
    EXPECT_EQ(back.reached, (std::vector<uint32_t>{h2, h3}));
  }
  EXPECT_EQ(compute_multicast_tables(t, groups, MulticastMode::source_trees).mlid_for(0, h5), 0xC000);
  EXPECT_EQ(compute_multicast_tables(t, groups, MulticastMode::source_trees).mlid_for(0, h1), 0xC001);
  EXPECT_EQ(compute_multicast_tables(t, groups, MulticastMode::source_trees).mlid_for(0, h2), 0);
}

// The walk is the referee of the other tests, so it must see a loop when there is one: make
// both spines of the 2-ary 2-tree forward to both leaves and the leaves to both spines.
TEST(Multicast, WalkCutsOffTablesThatLoop) {
  const Topology t = topo::kary_ntree(2, 2);
  const uint32_t h1 = t.find("h1"), h3 = t.find("h3");
  MulticastTables mt = compute_multicast_tables(t, {{0xC000, {h1, h3}, {}}}, MulticastMode::shared_tree);
  ASSERT_EQ(walk_multicast(t, mt.mft, h1, 0xC000).reached, std::vector<uint32_t>{h3});
  for (const char* spine : {"s1_0", "s1_1"}) mt.mft[t.find(spine)].entry(0xC000).set(1).set(2);
  for (const char* leaf : {"s0_0", "s0_1"}) mt.mft[t.find(leaf)].entry(0xC000).set(3).set(4);
  const MulticastWalk w = walk_multicast(t, mt.mft, h1, 0xC000);
  EXPECT_TRUE(w.cut_off);
  EXPECT_GT(w.copies[h3], 1u);
}

// A port in the mask without a cable loses its copy; port 0 delivers to the switch itself; an
// MLID without entries reaches nobody; a switch as sender sends nothing.
TEST(Multicast, WalkDropsAtUncabledPortsAndDeliversAtPort0) {
  const Topology t = topo::single_switch(2);  // sw with h1, h2 on ports 1, 2 only
  const uint32_t sw = t.find("sw"), h1 = t.find("h1"), h2 = t.find("h2");
  std::vector<sw::Mft> mft(t.nodes.size());
  mft[sw].entry(0xC000).set(0).set(1).set(2);
  const MulticastWalk w = walk_multicast(t, mft, h1, 0xC000);
  EXPECT_EQ(w.reached, std::vector<uint32_t>{h2});
  EXPECT_EQ(w.copies[sw], 1u);
  EXPECT_EQ(w.copies[h1], 0u);
  EXPECT_TRUE(walk_multicast(t, mft, h1, 0xC001).reached.empty());
  EXPECT_TRUE(walk_multicast(t, mft, sw, 0xC000).reached.empty());
}

TEST(Multicast, TablesAreDeterministicAndEqualInSize) {
  const Topology t = topo::random_irregular(32, 9);
  const std::vector<MulticastGroup> groups = some_groups(t, 9);
  for (MulticastMode mode : {MulticastMode::source_trees, MulticastMode::shared_tree}) {
    const MulticastTables a = compute_multicast_tables(t, groups, mode);
    const MulticastTables b = compute_multicast_tables(t, groups, mode);
    ASSERT_EQ(a.mft.size(), t.nodes.size());
    for (uint32_t s : t.switches()) {
      EXPECT_EQ(a.mft[s].port_mask, b.mft[s].port_mask);
      EXPECT_EQ(a.mft[s].multicast_fdb_top(), a.mft[t.switches().front()].multicast_fdb_top());
    }
  }
}

// Every bad group is a ConfigError naming the item and the fix.
void expect_config_error(const Topology& t, const std::vector<MulticastGroup>& groups, MulticastMode mode,
                         const std::string& key, const std::string& problem_part) {
  try {
    compute_multicast_tables(t, groups, mode);
    ADD_FAILURE() << "accepted; expected an error at " << key;
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), key) << e.what();
    EXPECT_NE(e.problem().find(problem_part), std::string::npos) << e.what();
    EXPECT_FALSE(e.fix().empty());
  }
}

TEST(Multicast, BadGroupsAreConfigErrors) {
  const Topology t = topo::single_switch(4);
  const uint32_t h1 = t.find("h1"), h2 = t.find("h2"), h3 = t.find("h3");
  const MulticastMode src = MulticastMode::source_trees, shared = MulticastMode::shared_tree;
  // MLIDs outside 0xC000..0xFFFE: a unicast LID, the permissive LID, a source-tree range
  // running past the top (three senders from 0xFFFD need 0xFFFD..0xFFFF).
  expect_config_error(t, {{0xBFFF, {h1, h2}, {}}}, shared, "multicast[0].mlid", "0xBFFF");
  expect_config_error(t, {{0xFFFF, {h1, h2}, {}}}, shared, "multicast[0].mlid", "0xFFFF");
  expect_config_error(t, {{0xFFFD, {h1, h2, h3}, {}}}, src, "multicast[0].mlid", "0xFFFD .. 0xFFFF");
  EXPECT_NO_THROW(compute_multicast_tables(t, {{0xFFFD, {h1, h2, h3}, {}}}, shared));
  EXPECT_NO_THROW(compute_multicast_tables(t, {{0xFFFC, {h1, h2, h3}, {}}}, src));
  // Duplicate MLIDs: the same one twice, and source-tree ranges that overlap.
  expect_config_error(t, {{0xC000, {h1, h2}, {}}, {0xC000, {h3}, {}}}, shared, "multicast[1].mlid", "0xC000");
  expect_config_error(t, {{0xC000, {h1, h2, h3}, {}}, {0xC002, {h1}, {}}}, src, "multicast[1].mlid", "0xC002");
  EXPECT_NO_THROW(compute_multicast_tables(t, {{0xC000, {h1, h2, h3}, {}}, {0xC002, {h1}, {}}}, shared));
  // Unknown, wrong-kind and repeated members and senders; a group without members.
  expect_config_error(t, {{0xC000, {h1, 99}, {}}}, src, "multicast[0].members[1]", "unknown member");
  expect_config_error(t, {{0xC000, {h1, t.find("sw")}, {}}}, src, "multicast[0].members[1]", "is a switch");
  expect_config_error(t, {{0xC000, {h1, h2, h1}, {}}}, src, "multicast[0].members[2]", "listed twice");
  expect_config_error(t, {{0xC000, {h1, h2}, {12345}}}, shared, "multicast[0].senders[0]", "unknown sender");
  expect_config_error(t, {{0xC000, {h1, h2}, {h3, h3}}}, shared, "multicast[0].senders[1]", "listed twice");
  expect_config_error(t, {{0xC000, {}, {h1}}}, shared, "multicast[0].members", "no members");
}

}  // namespace
}  // namespace ibvp::sm
