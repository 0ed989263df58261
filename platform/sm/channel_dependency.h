#pragma once
// Deadlock analysis of forwarding tables by their channel dependency graph (Dally and Seitz,
// "Deadlock-free message routing in multiprocessor interconnection networks", IEEE Trans.
// Computers C-36(5), 1987): the vertices are the channels (one direction of a cable on one
// VL), and a route that holds channel a while it requests channel b adds the dependency
// a -> b. A deterministic routing with credit-based (lossless) flow control is free of
// deadlock iff this graph has no cycle; IBA switches forward on the LFT alone, so walking
// the LFTs from every source to every LID gives the complete graph.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "platform/sm/routing.h"

namespace ibvp::sm {

// One direction of a cable on one VL: the packet leaves `from` and enters `to`.
struct Channel {
  topo::PortRef from;
  topo::PortRef to;
  uint8_t vl = 0;
};

struct CdgReport {
  bool acyclic = true;
  // One cycle when there is one, channel after channel (the last depends on the first), as
  // "swA/3->swB/1" (sending node/port -> receiving node/port, " vl<N>" added for VL N > 0).
  std::vector<std::string> cycle;
  std::vector<Channel> cycle_channels;  // the same cycle
  size_t channels = 0;       // channels some route uses: the vertices
  size_t dependencies = 0;   // distinct (channel, next channel) pairs: the edges
  size_t routes = 0;         // (source, destination LID) walks followed
  size_t broken_routes = 0;  // walks that hit a missing entry, an unconnected port, a loop or the wrong node
};

// The VL a packet from node `src` to `dlid` travels on; one VL for the whole route here
// (an SL2VL table that changes the VL per hop would need the hop as well).
using VlOfRoute = std::function<uint8_t(uint32_t src, uint16_t dlid)>;

struct CdgOptions {
  VlOfRoute vl;                // empty: every route on VL 0
  bool switch_sources = false;  // also walk from every switch's port 0 (its own LID-routed packets)
};

// Walks every (source endpoint, destination LID) route of `rt` (all LIDs of every node: the
// 2^LMC LIDs of endpoints and the switches' LIDs; not an endpoint's own LIDs), adds a
// dependency between each two consecutive channels, host cables included, and looks for a
// cycle. A route that ends in a loop of the LFTs adds the loop's dependencies (a cycle) and
// counts as broken. Linear in sources x LIDs: walks stop where an earlier walk to the same
// LID on the same VL went on. With alternatives (RoutingTables::alternatives, routing
// multipath_adaptive) every alternative a switch may choose adds its dependencies too: the
// graph of all the paths adaptive selection can take. Needs an indexed topology.
CdgReport analyze_deadlock(const topo::Topology& t, const RoutingTables& rt, const CdgOptions& opt = {});

// "swA/3->swB/1" (and " vl<N>" for VL N > 0).
std::string channel_name(const topo::Topology& t, const Channel& c);

}  // namespace ibvp::sm
