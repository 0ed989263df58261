#pragma once
// Smart routing (Cherkasova, Kotov and Rokicki, "Fibre channel fabrics: evaluation and
// design", HICSS 1996), the best of the three routings seed paper 001 evaluates on IBA
// (its Sec. 3: highest throughput, best link balance, but too slow to compute for 64
// switches). The method: take shortest paths for all pairs, build their channel dependency
// graph (Dally and Seitz 1987), and while it has a cycle remove one dependency of the cycle,
// re-routing the paths that used it; the dependency removed is the one whose re-routing
// leaves the links best balanced. Every removal is judged by re-routing, which is what
// makes the method expensive.
//
// Adapted to IBA's destination-based forwarding (seed 001 footnote 1 and ref. [3], Sancho,
// Robles and Duato, ICPP 2001): a switch has one output port per DLID, so the routes to one
// DLID form a tree toward its switch, and removing the dependency "in over channel a, out
// over channel b" at switch X means prohibiting that turn at X for every tree. Routes are
// kept per DLID (each of the 2^LMC LIDs of an endpoint, and each switch LID), so the LIDs of
// the switches' hosts are balanced separately.
//   1. Every DLID gets a shortest-path tree; each switch takes, among its neighbours one hop
//      closer, the channel with the least load so far (load: source endpoints routed over
//      the channel, the edge forwarding index of route_stats.h).
//   2. While the dependency graph of all trees' turns has a cycle: for each turn of the cycle
//      that is a candidate (below), prohibit it on trial, rebuild every tree that used it as
//      the shortest tree avoiding all prohibited turns (greedy level by level from the
//      destination, balanced as in 1), and score the loads: (most loaded channel, sum of
//      squared channel loads), lower is better, ties to the lower turn. The best turn is
//      prohibited for good and its rebuilt trees kept.
// Candidates: the turns of the cycle that a reference up*/down* orientation (the DFS tree of
// dfs.h) forbids, i.e. a down cable followed by an up cable. Every cycle of channels has
// such a turn (a walk that never turns down -> up goes up, then down, and cannot close), so
// there always is a candidate, and the prohibited turns stay within the up*/down*-forbidden
// ones: the DFS up*/down* tree of a DLID avoids them all, and is taken whenever the greedy
// rebuild cannot reach every switch. Each round prohibits a turn some tree uses, so the loop
// ends after at most as many rounds as there are forbidden turns, with an acyclic
// dependency graph (at worst plain DFS up*/down*). The restriction is this adaptation's, not
// Cherkasova et al.'s (their source routes can always be re-routed); it costs little, since
// up*/down* forbids about half the turns and only those in cycles are ever prohibited.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "platform/sm/dfs.h"
#include "platform/sm/routing.h"

namespace ibvp::sm {

struct SmartOptions {
  // The root of the reference DFS orientation (DfsOptions: by name, else by node index,
  // else the most central switch). Errors are reported under "routing.smart.root".
  std::string root;
  uint32_t root_node = topo::Topology::npos;
};

// What the last compute() cost: the method's price, seed 001's reason to leave it out at
// 64 switches.
struct SmartCost {
  uint32_t trees = 0;              // DLIDs routed: one tree each
  uint32_t channels = 0;           // directed switch-to-switch channels: the graph's vertices
  uint32_t forbidden_turns = 0;    // turns the reference up*/down* orientation forbids
  uint32_t rounds = 0;             // cycles broken, one prohibited turn each
  uint64_t candidates = 0;         // turns tried (each a trial re-routing)
  uint64_t tree_builds = 0;        // trees built, trials included
  uint32_t fallback_trees = 0;     // trees replaced by their DFS up*/down* tree
  uint64_t max_channel_load = 0;   // most source endpoints routed over one channel at the end
  double seconds = 0;              // wall clock of compute()
};

class SmartEngine : public RoutingEngine {
 public:
  explicit SmartEngine(SmartOptions opt = {}) : opt_(std::move(opt)) {}
  const char* name() const override { return "smart"; }
  // Every LID (the 2^LMC LIDs of each endpoint, each switch's LID at its port 0) is routed
  // as above; LIDs of another connected set of switches get Lft::kNoRoute. Deterministic.
  // Needs an indexed topology; throws ConfigError for a bad root.
  RoutingTables compute(const topo::Topology& topology) override;
  const SmartCost& cost() const { return cost_; }
  // The turns prohibited by the last compute(), as (switch node, in port, out port).
  struct Turn {
    uint32_t sw;
    uint16_t in_port;
    uint16_t out_port;
  };
  const std::vector<Turn>& prohibited() const { return prohibited_; }

 private:
  SmartOptions opt_;
  SmartCost cost_;
  std::vector<Turn> prohibited_;
};

std::unique_ptr<RoutingEngine> make_smart_engine(SmartOptions opt = {});

}  // namespace ibvp::sm
