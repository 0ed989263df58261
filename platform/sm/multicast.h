#pragma once
// Multicast groups with static membership and the multicast forwarding tables (MFTs) the
// subnet manager computes for them (docs/multicast.md).
//
// Seed 000 Sec. 3.6 builds the tables from source-based distribution trees: one shortest-path
// tree per sender, pruned to the group's members. An IBA MFT is indexed by MLID alone
// (IBA 18.2.4.3.2), so a switch cannot tell two senders of one MLID apart; the union of two
// senders' trees at a switch would send each of them down the other's branches too. Hence:
//  - source_trees: every (group, sender) pair gets its own MLID, group.mlid + k for the k-th
//    sender, and its own tree (as the paper's tables, which hold an entry per group and
//    source, Sec. 5.2);
//  - shared_tree: one MLID per group and one tree spanning its members' and senders'
//    switches, rooted at a central switch (OpenSM's osm_mcast_mgr.c). It serves every sender
//    because a switch never sends a multicast packet back out of its arrival port.
#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "models/switch/mft.h"
#include "platform/topology/topology.h"

namespace ibvp::sm {

using Mft = sw::Mft;

struct MulticastGroup {
  uint16_t mlid = Mft::kMlidBase;  // source_trees: the first of one MLID per sender
  std::vector<uint32_t> members;   // endpoint node indices; they receive the group's packets
  // Endpoints that send to the group (empty: all members). A sender need not be a member
  // (IBA's SendOnlyNonMember join state): it sends but receives nothing.
  std::vector<uint32_t> senders;
};

enum class MulticastMode : uint8_t { source_trees, shared_tree };

// One distribution tree, i.e. one MLID.
struct MulticastTree {
  uint16_t mlid = 0;
  uint32_t group = 0;              // index into the list of groups
  std::vector<uint32_t> senders;   // endpoints sending on this MLID: a source tree has one
  uint32_t root = topo::Topology::npos;  // switch node: the sender's switch, or the core
  std::vector<uint32_t> switches;  // switch nodes on the tree, by hops from the root
  uint32_t switch_links = 0;       // switch-to-switch cables of the tree
};

struct MulticastTables {
  MulticastMode mode = MulticastMode::source_trees;
  std::vector<MulticastTree> trees;  // in group order, then sender order
  std::vector<Mft> mft;              // indexed by topology node; empty for endpoints
  // The MLID `sender` puts in the DLID to reach group `group`: its own MLID with source
  // trees, the group's with a shared tree; 0 when it is not a sender of that group.
  uint16_t mlid_for(uint32_t group, uint32_t sender) const;
};

// Builds the trees of `groups` and the MFTs of all switches of an indexed topology. Each
// tree reaches every member over switch-hop shortest paths from its root (the sender's
// switch for source trees); where several shortest paths exist, a switch already on the tree
// is preferred (branches merge, fewer copies), then the lowest port. The shared tree's root
// is the switch with the fewest hops to the farthest switch with a member or sender (as
// OpenSM), ties to the smaller sum of hops, then the lowest node index.
// Throws ConfigError for: an MLID outside 0xC000..0xFFFE (for source trees the whole range
// mlid .. mlid + senders - 1), an MLID used twice, a member or sender that is not an endpoint
// of the topology or is listed twice, a group without members.
MulticastTables compute_multicast_tables(const topo::Topology& t, const std::vector<MulticastGroup>& groups,
                                         MulticastMode mode);

// What one multicast packet does in the fabric, following the MFTs as switches replicate it.
struct MulticastWalk {
  std::vector<uint32_t> copies;       // [node] copies delivered (endpoints; switch port 0)
  std::vector<uint32_t> switch_hops;  // [node] switches the first copy passed; 0 if none came
  std::vector<std::array<uint32_t, 2>> link_copies;  // [link] copies a->b ([0]) and b->a ([1])
  std::vector<uint32_t> reached;      // endpoints with at least one copy, ascending
  // (switch, output port) -> copies delivered to endpoints downstream of that port: the
  // destinations its copy serves (multicast_bandwidth's per-port weights, seed 000 Sec. 3.6.2).
  std::map<std::pair<uint32_t, uint16_t>, uint32_t> receivers_behind;
  // The walk stopped after 2 x links copies, more than a tree can send (one per cable and
  // direction): the tables loop.
  bool cut_off = false;
};

// Sends one packet from endpoint `sender` (out of its port 1) to `mlid` through the tables:
// each switch copies it to every port of its MFT entry except the arrival port; a port without
// a cable drops its copy. For tests and as the reference for the switch model's replication.
MulticastWalk walk_multicast(const topo::Topology& t, const std::vector<Mft>& mft, uint32_t sender, uint16_t mlid);

}  // namespace ibvp::sm
