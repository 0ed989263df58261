#pragma once
// What a routing does to a fabric, in the numbers seed 001 Fig. 1(c) compares: path lengths
// between endpoints and the edge forwarding index (routes crossing each inter-switch
// channel), plus the graph figures `ibvp topo` reports.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "platform/sm/routing.h"

namespace ibvp::sm {

struct TopologyStats {
  uint32_t switches = 0;
  uint32_t hosts = 0;
  uint32_t links = 0;             // cables, all kinds
  uint32_t switch_links = 0;      // cables between two switches (loopbacks excluded)
  uint32_t diameter = 0;          // most switches on a shortest path between two endpoints
  int64_t independent_cycles = 0; // |E| - |V| + 1 of the switch graph
};

struct RouteStats {
  std::string engine;
  uint64_t routes = 0;                     // (source endpoint, destination endpoint) pairs
  uint64_t unrouted = 0;                   // pairs whose walk hit a missing entry or a loop
  std::map<uint32_t, uint64_t> hops;       // switches traversed -> number of routes
  uint64_t efi_max = 0;                    // edge forwarding index: most routes on one channel
  double efi_mean = 0;                     // over inter-switch channels (both directions)
};

TopologyStats topology_stats(const topo::Topology& t);

// The first (source endpoint, destination LID) in node and LID order whose walk through the
// tables does not arrive, over every LID of every other endpoint; nothing when all arrive.
struct UnroutedPair {
  uint32_t src;
  uint16_t dlid;
};
std::optional<UnroutedPair> first_unrouted(const topo::Topology& t, const RoutingTables& rt);
RouteStats route_stats(const topo::Topology& t, const RoutingTables& rt);

}  // namespace ibvp::sm
