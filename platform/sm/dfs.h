#pragma once
// Up*/down* routing on a depth-first spanning tree (Sancho, Robles and Duato, "A new
// methodology to compute deadlock-free routing tables for irregular networks", CANPC 2000,
// and "An effective methodology to improve the performance of the up*/down* routing
// algorithm", IEEE TPDS 15(8), 2004), the "DFS" routing seed paper 001 evaluates against
// BFS up*/down* ("UD") and smart routing; its destination-based (IBA) form follows Sancho,
// Robles and Duato, "Effective strategy to compute forwarding tables for InfiniBand
// networks", ICPP 2001 (seed 001 ref. [3]).
//
// Autonet's up*/down* (updn.h) orients the cables by a breadth-first tree: many cables join
// switches of one level, their direction is decided by GUID alone, and every route between
// two branches climbs toward the root, which concentrates traffic there. In a depth-first
// tree every cable joins a switch and one of its ancestors (an undirected DFS has no cross
// edges), so each cable has a natural direction, "up" toward the ancestor, and the cables
// that are not tree edges are back edges that skip several levels: shortcuts that a legal
// route may take. Sancho et al. report fewer routes forced off a shortest path and traffic
// spread away from the root (seed 001 Fig. 1(c): DFS balances link load far better than UD).
//
// Orientation: switches are numbered in DFS preorder (the root is 0) and a cable leads up
// toward the lower number. On every cable this agrees with "toward the ancestor" and with
// "toward the lower DFS depth", and being a total order it makes the up cables acyclic, as
// are the down cables; a route that never takes an up cable after a down cable is therefore
// free of deadlock (Dally and Seitz 1987), which analyze_deadlock() checks.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "platform/sm/routing.h"

namespace ibvp::sm {

struct DfsOptions {
  // The root switch, by name; or, when `root` is empty, by node index. Neither given: in each
  // connected set of switches the switch with the least sum of switch-hop distances to the
  // others, ties to the lowest node index: a DFS tree is deep, and a root close to all
  // switches on average keeps the climbs toward it short (updn takes the least eccentricity,
  // which ties on most random fabrics).
  std::string root;
  uint32_t root_node = topo::Topology::npos;
};

// The orientation DFS up*/down* routes follow.
struct DfsRanking {
  std::vector<uint32_t> roots;   // root switch (node index) of each connected set of switches
  std::vector<uint32_t> order;   // [node] DFS preorder number, unique over the fabric; npos for endpoints
  std::vector<uint32_t> depth;   // [node] depth in the DFS tree (0 at a root); npos for endpoints
  std::vector<uint32_t> parent;  // [node] parent in the DFS tree; npos for roots and endpoints
  // True when the cable from switch `from` to switch `to` leads up: `to` comes first in DFS
  // preorder (for every cable of the fabric: `to` is an ancestor of `from`).
  bool is_up(uint32_t from, uint32_t to) const { return order[to] < order[from]; }
};

// Builds the DFS tree of every connected set of switches of an indexed topology. From the
// switch on top of the stack the search descends to the unvisited neighbour with the most
// cables to switches already in the tree (Sancho et al.'s heuristic: that neighbour's other
// cables become back edges, shortcuts toward the root), ties to the lowest node index.
// Throws ConfigError (key "routing.dfs.root") when the requested root is not a switch.
DfsRanking dfs_rank_switches(const topo::Topology& t, const DfsOptions& opt = {});

class DfsEngine : public RoutingEngine {
 public:
  explicit DfsEngine(DfsOptions opt = {}) : opt_(std::move(opt)) {}
  const char* name() const override { return "dfs"; }
  // Every LID (the 2^LMC LIDs of each endpoint, each switch's LID at its port 0) is routed on
  // a legal up*/down* path under the DFS orientation, one output port per (switch, DLID) as
  // in updn: a switch that another switch routes down into must itself go on down, so each
  // switch is "down-only" or "up-first" per destination and the shortest route its state
  // allows is taken. Among legal next hops: an endpoint's other LIDs spread first (other
  // neighbour switch, then other port), then the port carrying the fewest endpoint LIDs so
  // far, then the lowest port. LIDs of another connected set of switches get Lft::kNoRoute.
  // Needs an indexed topology; throws ConfigError for a bad root.
  RoutingTables compute(const topo::Topology& topology) override;
  // The orientation used by the last compute().
  const DfsRanking& ranking() const { return ranking_; }

 private:
  DfsOptions opt_;
  DfsRanking ranking_;
};

std::unique_ptr<RoutingEngine> make_dfs_engine(DfsOptions opt = {});

}  // namespace ibvp::sm
