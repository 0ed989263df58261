#pragma once
// Deadlock-free single-source shortest-path routing (DFSSSP: Domke, Hoefler and Nagel,
// "Deadlock-free oblivious routing for arbitrary topologies", IPDPS 2011), as OpenSM's engine
// "dfsssp" (opensm/osm_ucast_dfsssp.c).
//
// 1. SSSP (Hoefler, Schneider and Lumsdaine, "Optimized routing for large-scale InfiniBand
//    networks", HOTI 2009; Domke et al. Sec. III): the destination LIDs are routed one after
//    the other, in LID order. For each, Dijkstra from its switch gives every switch a
//    shortest path in hops and, among those, the one of least total channel weight (ties to
//    the lowest port); then every switch-to-switch channel on a route gains the number of
//    LIDs sourced behind it (each switch counts its endpoints' 2^LMC LIDs and its own LID),
//    so later destinations avoid the channels loaded so far. OpenSM gets "hops first" by
//    starting every weight at P^2 (P the number of LIDs); here hops are compared first.
//    Each of an endpoint's 2^LMC LIDs is a destination of its own, so they spread as well.
// 2. Layers (Domke et al. Sec. IV): every (source, destination LID) path starts in layer 0.
//    While the channel dependency graph of layer l (Dally and Seitz; channel_dependency.h)
//    has a cycle, the dependency on that cycle induced by the fewest paths of layer l (OpenSM's
//    "weakest link") is removed by moving all those paths to layer l + 1; when layer l is
//    acyclic, layer l + 1 is treated the same way. Each layer is then free of cycles on its
//    own, and a path stays in one layer from source to destination, so with layer l on its
//    own VL the routing cannot deadlock. Paths from the endpoints of one switch and the switch
//    itself to one DLID share every switch-to-switch channel, so they move together.
//    The path to DLID d from source node s uses SL = its layer (RoutingTables::path_sl); the
//    SL2VL tables must map SL l to VL l. Unlike OpenSM, paths are not spread afterwards over
//    the VLs that no layer needs: the routing uses the fewest VLs.
#include <cstdint>
#include <memory>
#include <vector>

#include "platform/sm/routing.h"

namespace ibvp::sm {

struct DfssspOptions {
  // Data VLs the layers may use. 8 is the VL capability of common switch and HCA ports
  // (VLCap VL0-7); IBA allows at most 15 (VL0..VL14). Range 1..15.
  uint8_t max_vls = 8;
};

struct DfssspReport {
  uint32_t layers = 0;                    // VLs needed: 1 when the shortest paths are already acyclic
  std::vector<uint64_t> paths_per_layer;  // (source node, DLID) routes on each layer, switches as sources included
  uint32_t dependencies_removed = 0;      // cycles broken, one dependency (and its paths) each
};

class DfssspEngine : public RoutingEngine {
 public:
  explicit DfssspEngine(DfssspOptions opt = {}) : opt_(opt) {}
  const char* name() const override { return "dfsssp"; }
  // Routes every LID (the 2^LMC LIDs of endpoints, the switches' LIDs at port 0) on a shortest
  // path and fills path_sl for every source node (endpoints and switches) and DLID. Needs an
  // indexed topology. Throws ConfigError (key routing.dfsssp.max_vls) when max_vls is not
  // 1..15, or when the layers need more VLs than max_vls, naming the number needed.
  RoutingTables compute(const topo::Topology& topology) override;
  // What the last compute() found (also when it threw for too few VLs).
  const DfssspReport& report() const { return report_; }

 private:
  DfssspOptions opt_;
  DfssspReport report_;
};

std::unique_ptr<RoutingEngine> make_dfsssp_engine(DfssspOptions opt = {});

}  // namespace ibvp::sm
