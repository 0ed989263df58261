#pragma once
// The switches of a fabric and the cables between two of them, in dense indices: what the
// up*/down* engines (updn, dfs) walk. Endpoint cables and loopback cables are left out.
#include <cstdint>
#include <string>
#include <vector>

#include "platform/topology/topology.h"

namespace ibvp::sm {

// No switch (or no hop count): what the engines' dense tables hold where nothing is.
constexpr uint32_t kNone = topo::Topology::npos;

struct Neighbour {
  uint16_t port;  // the port of this switch the cable leaves from
  uint32_t sw;    // dense index of the switch at the far end
};

struct SwitchGraph {
  std::vector<uint32_t> node;        // [sw] -> node index (node order)
  std::vector<uint32_t> sw_of_node;  // [node] -> sw, or Topology::npos for endpoints
  std::vector<std::vector<Neighbour>> adj;
};

SwitchGraph switch_graph(const topo::Topology& t);

// Switch hops from `from` to every switch (Topology::npos where unreachable), and, with
// `order`, the switches reached in BFS order.
std::vector<uint32_t> bfs(const SwitchGraph& g, uint32_t from, std::vector<uint32_t>* order = nullptr);

// The switch (dense index) an engine's root option names, by name or else by node index;
// Topology::npos when neither is given. ConfigError under `key` (e.g. "routing.updn.root")
// for a name or index that is not a switch; `label` names the root in the message.
uint32_t requested_root(const topo::Topology& t, const std::vector<uint32_t>& sw_of_node, const std::string& root_name,
                        uint32_t root_node, const char* key, const std::string& label);

// The same switches with each cable as two arcs (directed hops), each the other's reverse,
// in port order per switch: what engines that reason about channels walk (multipath's cycle
// basis, dfsssp's channel dependencies).
struct ArcGraph {
  std::vector<uint32_t> node;                 // [sw] -> node index
  std::vector<uint32_t> sw_of_node;           // [node] -> sw, or Topology::npos
  std::vector<std::vector<uint32_t>> out;     // [sw] -> arcs leaving it
  std::vector<std::vector<uint32_t>> arc_at;  // [sw][port] -> arc, or Topology::npos
  std::vector<uint32_t> from, to, rev;        // [arc]
  std::vector<uint16_t> port;                 // [arc] port it leaves from
};

ArcGraph arc_graph(const topo::Topology& t);

}  // namespace ibvp::sm
