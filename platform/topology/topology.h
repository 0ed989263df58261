#pragma once
// The fabric as a graph: switches and channel adapters (endpoints), their ports, LIDs and
// the cables between ports. Loaded from the project's YAML, from ibnetdiscover dumps, or
// made by a generator; validated once, before anything is elaborated.
#include <cstdint>
#include <string>
#include <vector>

#include "models/link/link_rate.h"

namespace ibvp::topo {

enum class NodeKind : uint8_t { switch_node, endpoint };

struct Node {
  std::string name;
  NodeKind kind = NodeKind::endpoint;
  uint16_t num_ports = 1;  // ports are numbered 1..num_ports (switch port 0 is management)
  // Switch: LID of management port 0. Endpoint: base LID of its port 1; the port answers to
  // lid .. lid + 2^lmc - 1 (IBA 7.11.1, path bits).
  uint16_t lid = 0;
  uint8_t lmc = 0;
  uint64_t guid = 0;
};

struct PortRef {
  uint32_t node = 0;
  uint16_t port = 0;
  bool operator==(const PortRef& o) const { return node == o.node && port == o.port; }
};

struct Link {
  PortRef a;
  PortRef b;
  link::LinkConfig cfg;
};

class Topology {
 public:
  std::vector<Node> nodes;
  std::vector<Link> links;
  std::string source = "<memory>";  // file it came from, for error messages

  // Builds the port -> link index and lookup maps; call after editing nodes/links.
  void index();
  // Checks the rules every loader relies on, throwing ConfigError naming `source`, the item
  // and the fix: a port used twice, a port beyond num_ports, a link to an unknown node, two
  // nodes with one name, a LID (range) used twice, a LID of 0 or in the multicast range,
  // an endpoint without a LID, a fabric that is not connected.
  void validate() const;

  uint32_t find(const std::string& name) const;  // node index, or npos
  static constexpr uint32_t npos = 0xFFFFFFFFu;

  // Link attached to a node's port, or -1 if the port is unconnected.
  int link_at(uint32_t node, uint16_t port) const;
  // The port at the other end of the cable at (node, port); only for connected ports.
  PortRef peer(uint32_t node, uint16_t port) const;

  std::vector<uint32_t> switches() const;
  std::vector<uint32_t> endpoints() const;
  // Node owning a unicast LID (including LMC path-bit aliases), or npos.
  uint32_t node_of_lid(uint16_t lid) const;
  uint16_t max_lid() const;

  // Unicast LIDs are 1..0xBFFF; 0xC000..0xFFFE are multicast, 0xFFFF is the permissive LID
  // (IBA 4.1.3).
  static constexpr uint16_t kMaxUnicastLid = 0xBFFF;
  // A switch has at most 254 ports: an LFT entry is one byte and 255 means "no route".
  static constexpr uint16_t kMaxPorts = 254;
  static constexpr uint8_t kMaxLmc = 7;

 private:
  std::vector<std::vector<int>> port_link_;  // [node][port] -> link index or -1
  std::vector<uint32_t> lid_owner_;          // [lid] -> node or npos
};

// Gives every node whose lid is 0 the lowest free LID range aligned to 2^lmc (path bits are
// the low LMC bits of a DLID, IBA 7.11.1), in node order, leaving given LIDs where they are.
// Throws ConfigError when the unicast space is exhausted.
void assign_lids(Topology& t);

}  // namespace ibvp::topo
