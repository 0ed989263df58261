#pragma once
// Routing engines fill destination-based linear forwarding tables (LFTs), one per switch,
// as an IBA subnet manager does. An engine sees only the topology.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/switch/lft.h"
#include "platform/topology/topology.h"

namespace ibvp::sm {

// The switch model's table type: what an engine computes is what a switch is loaded with.
using Lft = sw::Lft;

struct RoutingTables {
  std::string engine;
  std::vector<Lft> lft;  // indexed by topology node; empty for endpoints
};

class RoutingEngine {
 public:
  virtual ~RoutingEngine() = default;
  virtual const char* name() const = 0;
  virtual RoutingTables compute(const topo::Topology& topology) = 0;
};

// Engines by name ("minhop"); throws ConfigError listing the known names otherwise.
std::unique_ptr<RoutingEngine> make_routing_engine(const std::string& name);
std::vector<std::string> routing_engine_names();

// Follows the LFTs from endpoint `src` to DLID; returns the switches visited, or an empty
// vector if the walk hits a missing entry or a loop (used by tests and `ibvp topo`).
std::vector<uint32_t> trace_route(const topo::Topology& t, const RoutingTables& rt, uint32_t src,
                                  uint16_t dlid);

}  // namespace ibvp::sm
