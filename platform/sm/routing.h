#pragma once
// Routing engines fill destination-based linear forwarding tables (LFTs), one per switch,
// as an IBA subnet manager does. An engine sees only the topology.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/switch/alt_table.h"
#include "models/switch/lft.h"
#include "platform/topology/topology.h"

namespace ibvp::sm {

// The switch model's table type: what an engine computes is what a switch is loaded with.
using Lft = sw::Lft;

struct RoutingTables {
  std::string engine;
  std::vector<Lft> lft;  // indexed by topology node; empty for endpoints
  // The service level of each route, for engines that keep routes apart by SL (dfsssp: one
  // deadlock-free layer per SL, each SL to be mapped to its own VL): [source node][DLID].
  // Empty when the engine leaves the SL free (every route may use any one SL).
  std::vector<std::vector<uint8_t>> path_sl;
  // Alternative output ports per DLID, for engines that give switches a choice
  // (multipath_adaptive; sw::AltTable): indexed by topology node. Empty: the LFT alone.
  std::vector<sw::AltTable> alternatives;
  // The SL path_sl gives the route from node `src` to `dlid`: 0 when path_sl is empty or
  // does not cover the pair.
  uint8_t sl(uint32_t src, uint16_t dlid) const {
    if (src >= path_sl.size() || dlid >= path_sl[src].size()) return 0;
    return path_sl[src][dlid];
  }
};

class RoutingEngine {
 public:
  virtual ~RoutingEngine() = default;
  virtual const char* name() const = 0;
  virtual RoutingTables compute(const topo::Topology& topology) = 0;
};

// What a scenario or `ibvp topo` may tell an engine beyond the topology (OpenSM's options of
// the same job in brackets).
struct RoutingOptions {
  // updn: the root switches (node indices), all of rank 0 (root_guid_file); empty: the
  // engine picks one per connected set of switches.
  std::vector<uint32_t> roots;
  // file: the opensm-lfts.dump whose tables are loaded (lfts_file).
  std::string lfts_file;
};

// Engines by name ("minhop"); throws ConfigError listing the known names otherwise, and for
// options the engine does not take (roots other than for updn, an lfts_file other than for
// file).
std::unique_ptr<RoutingEngine> make_routing_engine(const std::string& name, const RoutingOptions& opt = {});
std::vector<std::string> routing_engine_names();

// Follows the LFTs from endpoint `src` to DLID; returns the switches visited, or an empty
// vector if the walk hits a missing entry or a loop (used by tests and `ibvp topo`).
std::vector<uint32_t> trace_route(const topo::Topology& t, const RoutingTables& rt, uint32_t src,
                                  uint16_t dlid);

}  // namespace ibvp::sm
