#pragma once
// Min-hop routing with per-port load balancing, after OpenSM's default engine "minhop": every
// destination LID is routed on a shortest path (in switch hops), and among the ports of a
// switch that lie on one, the port that carries the fewest routes so far is taken. OpenSM
// counts destination LIDs per port instead, which leaves a fat tree's upper links idle
// (docs/topology.md, issue 17).
#include "platform/sm/routing.h"

namespace ibvp::sm {

class MinHopRouting : public RoutingEngine {
 public:
  const char* name() const override { return "minhop"; }
  // Destinations are taken in LID order; for each, switches are routed farthest first and
  // each counts the (source endpoint, destination LID) routes through each of its ports;
  // ties go to fewer destination LIDs, then the lowest port, so the result is deterministic.
  // The 2^LMC LIDs of one endpoint go over different ports (and different neighbour
  // switches) where several shortest paths leave a switch. A switch's own LIDs go to port 0;
  // LIDs that cannot be reached get Lft::kNoRoute. Needs an indexed topology.
  RoutingTables compute(const topo::Topology& topology) override;
};

}  // namespace ibvp::sm
