// The partition of a run split across processes (platform/parallel, docs/parallel.md) and
// what such a run refuses.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "platform/params/config_error.h"
#include "platform/parallel/lookahead.h"
#include "platform/parallel/partition.h"
#include "platform/parallel/split_check.h"
#include "platform/scenario/scenario_loader.h"
#include "platform/topology/generators.h"

using namespace ibvp;
using parallel::partition_fabric;

namespace {

Scenario tree_scenario(const std::string& extra, const std::string& order = "canonical") {
  return scenario_from_yaml("name: t\nduration: 10us\nevent_order: " + order + "\n"
                            "topology: {generator: fat_tree, k: 4, n: 3}\n"
                            "traffic: {generator: poisson, load: 0.5, payload_bytes: 256}\n" + extra,
                            "split.yaml");
}

std::string refused_key(const Scenario& s, uint32_t ranks) {
  try {
    parallel::check_splittable(s, partition_fabric(s.topology, ranks));
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "split.yaml");
    EXPECT_FALSE(e.fix().empty());
    return e.key();
  }
  return "";
}

}  // namespace

TEST(Partition, EveryEndpointIsOnTheRankOfTheSwitchItIsCabledTo) {
  const topo::Topology t = topo::kary_ntree(4, 3);
  const parallel::Partition p = partition_fabric(t, 3);
  ASSERT_EQ(p.rank_of.size(), t.nodes.size());
  for (uint32_t e : t.endpoints()) {
    EXPECT_LT(p.rank_of[e], 3u);
    EXPECT_EQ(p.rank_of[e], p.rank_of[t.peer(e, 1).node]);
  }
  for (uint32_t i : p.cut_links) {
    EXPECT_EQ(t.nodes[t.links[i].a.node].kind, topo::NodeKind::switch_node);
    EXPECT_EQ(t.nodes[t.links[i].b.node].kind, topo::NodeKind::switch_node);
  }
}

// 4-ary 3-tree: 16 leaf switches with 4 hosts each. Two ranks each take 8 leaves and the
// level-1 switches above them (their 4-switch groups never straddle a block of 8), so only
// cables to the top level are cut, and the ports split evenly: the top level's 16 switches
// (4 ports each) go 8 and 8 by the tie rule.
TEST(Partition, TwoRanksOnAFatTreeCutOnlyTopLevelCablesAndBalancePorts) {
  const topo::Topology t = topo::kary_ntree(4, 3);
  const parallel::Partition p = partition_fabric(t, 2);
  const uint32_t per_level = 16;
  for (uint32_t i : p.cut_links) {
    const uint32_t a = t.links[i].a.node, b = t.links[i].b.node;
    EXPECT_TRUE(a >= 2 * per_level || b >= 2 * per_level) << t.nodes[a].name << " - " << t.nodes[b].name;
  }
  ASSERT_EQ(p.ports.size(), 2u);
  EXPECT_EQ(p.ports[0], p.ports[1]);
  // Every cable is counted at both ends: 64 host cables + 2 levels of 64 switch cables.
  EXPECT_EQ(p.ports[0] + p.ports[1], 2u * (64 + 64 + 64));
}

TEST(Partition, LookaheadIsTheShortestPropagationOfACutCable) {
  topo::Topology t = topo::kary_ntree(2, 2);
  const parallel::Partition one = partition_fabric(t, 1);
  EXPECT_TRUE(one.cut_links.empty());
  EXPECT_EQ(one.lookahead_ps, parallel::Partition::kNoCut);
  const parallel::Partition two = partition_fabric(t, 2);
  ASSERT_FALSE(two.cut_links.empty());
  // The default cable: 1 m at 5 ns/m.
  EXPECT_EQ(two.lookahead_ps, 5000u);
  t.links[two.cut_links.back()].cfg.length_m = 0.2;
  EXPECT_EQ(partition_fabric(t, 2).lookahead_ps, 1000u);
}

// docs/parallel.md, "Why no rank receives a message in its past": the window is the least of
// propagation + pipeline (a packet) and propagation + the smallest packet's serialization (a
// credit) over the cut cables.
TEST(Lookahead, IsPropagationPlusThePipelineWhenEveryPacketTakesLongerToSend) {
  const Scenario s = tree_scenario("");
  // 1 m at 5 ns/m, and the switch's 100 ns pipeline; a 256-byte payload's packet (282 bytes)
  // takes 282 ns at 4x SDR's 8 Gb/s.
  EXPECT_EQ(parallel::lookahead_ps(s, partition_fabric(s.topology, 2)), 5'000u + 100'000u);
  EXPECT_EQ(parallel::lookahead_ps(s, partition_fabric(s.topology, 1)), parallel::Partition::kNoCut);
}

TEST(Lookahead, IsBoundByTheSmallestPacketsCreditWhenItIsShorterThanThePipeline) {
  const Scenario s = scenario_from_yaml("name: t\nduration: 10us\nevent_order: canonical\n"
                                        "topology: {generator: fat_tree, k: 4, n: 3}\n"
                                        "traffic: {generator: poisson, load: 0.5, payload_bytes: 16}\n",
                                        "split.yaml");
  EXPECT_EQ(parallel::smallest_credited_packet(s), 16u + 26u);
  // 42 bytes at 8 Gb/s: 42 ns.
  EXPECT_EQ(parallel::lookahead_ps(s, partition_fabric(s.topology, 2)), 5'000u + 42'000u);
}

TEST(Lookahead, IsThePropagationAloneWhenLifetimesCanDropAPacketAtAnyTime) {
  const Scenario s = tree_scenario("switch: {hoq_life: 10}\n");
  EXPECT_EQ(parallel::lookahead_ps(s, partition_fabric(s.topology, 2)), 5'000u);
}

TEST(Partition, SameTopologyAndRanksGiveTheSamePartition) {
  const topo::Topology t = topo::kary_ntree(4, 3);
  EXPECT_EQ(partition_fabric(t, 4).rank_of, partition_fabric(t, 4).rank_of);
}

TEST(SplitCheck, AFabricOnlyCanonicalScenarioIsAccepted) {
  EXPECT_EQ(refused_key(tree_scenario(""), 2), "");
}

TEST(SplitCheck, FifoOrderIsRefusedNamingEventOrder) {
  EXPECT_EQ(refused_key(tree_scenario("", "fifo"), 2), "event_order");
}

TEST(SplitCheck, WhatASplitRunDoesNotSupportIsRefusedByItsKey) {
  EXPECT_EQ(refused_key(tree_scenario("control: {period: 1us}\n"), 2), "control");
  EXPECT_EQ(refused_key(tree_scenario("outputs: {pcaps: [{node: s0_0, port: 1}]}\n"), 2), "outputs.pcaps");
}

TEST(SplitCheck, MoreRanksThanLeafSwitchesIsRefused) {
  EXPECT_EQ(refused_key(tree_scenario(""), 17), "topology");
}
