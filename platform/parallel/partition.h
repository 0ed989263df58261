#pragma once
// How a run split across processes (docs/parallel.md, issue 17) divides the fabric: every
// node on one rank, cut only at cables, balanced by cabled ports. Endpoints go with the
// switch they are cabled to, so only switch-to-switch cables are cut. The same topology
// and rank count give the same partition in every process.
#include <cstdint>
#include <vector>

#include "platform/topology/topology.h"

namespace ibvp::parallel {

struct Partition {
  uint32_t ranks = 1;
  std::vector<uint32_t> rank_of;      // per node
  std::vector<uint64_t> ports;        // cabled ports per rank (the load the split balances)
  std::vector<uint32_t> cut_links;    // topology link indices whose ends are on different ranks
  // The smallest delay of anything crossing a cut (ps): a packet's head or a credit update
  // takes at least the cable's propagation, and the receiver acts only at its arrival
  // (event_order: canonical), so windows this long never deliver into a rank's past.
  // kNoCut when no cable is cut.
  uint64_t lookahead_ps = kNoCut;
  static constexpr uint64_t kNoCut = ~uint64_t{0};
};

// Leaf switches (those with endpoints) in node order form contiguous blocks of about equal
// ports; every other switch joins, nearest to the leaves first, the rank holding most of its
// neighbours (ties: the rank with fewer ports so far, then the lower rank). On a k-ary
// n-tree with k^j ranks this cuts only cables above level n-1-j: each rank holds whole
// subtrees.
Partition partition_fabric(const topo::Topology& t, uint32_t ranks);

}  // namespace ibvp::parallel
