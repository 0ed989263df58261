#pragma once
// Destination-based forwarding tables that obey the up*/down* rule (no route takes an up
// cable after a down cable) for a given order of the switches, so their channel dependency
// graph has no cycle. The up*/down* engines differ only in that order: `updn` ranks switches
// by BFS distance from a root (then GUID, index), `dfs` by DFS preorder (seed 001).
#include <cstdint>
#include <vector>

#include "platform/sm/routing.h"
#include "platform/sm/switch_graph.h"

namespace ibvp::sm {

// pos[sw]: the switch's place in the order; the cable s -> c leads up exactly when
// pos[c] < pos[s]. Every LID gets a legal up*/down* route from every switch of its
// connected set; among legal next hops an endpoint's other LIDs are spread first (other
// neighbour switch, then other port), then the port carrying the fewest endpoint LIDs so
// far, then the lowest port.
RoutingTables updown_tables(const topo::Topology& t, const SwitchGraph& g, const std::vector<uint32_t>& pos,
                            const char* engine);

}  // namespace ibvp::sm
