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
  uint64_t guid = 0;  // NodeGUID; 0: none given (node_guid() gives the one an SM would see)
  // Endpoint: the GUID of its CA port (IBA 4.1.1: every CA port has its own PortGUID); 0:
  // derived from the node GUID (port_guid()).
  uint64_t port_guid = 0;
  // NodeDescription (IBA 14.2.5.2) as a dump gives it; empty: the name stands for it.
  std::string description;
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

// The GUIDs and description a subnet manager would read from node `n` (NodeInfo, PortInfo,
// NodeDescription), for dumps and for matching OpenSM's files to the topology:
// - node_guid: the node's GUID; a node without one (generators leave it 0) gets a synthetic
//   GUID, kSyntheticGuidBase + (index + 1) * 256: the EUI-64 "locally administered" bit is
//   set, so it cannot be a vendor's GUID, and the low byte is free for port numbers.
// - port_guid: a switch answers on port 0, whose PortGUID is the node GUID. An endpoint is
//   CA port 1: its own port_guid when a dump gave one, else node GUID + 1, as HCAs number
//   theirs (node GUID + port number: caguid=0x3048c707b60000, port 1 (3048c707b60001) in
//   real dumps).
// - description: the node's description, or its name when it has none.
constexpr uint64_t kSyntheticGuidBase = 0x0200000000000000ull;
uint64_t node_guid(const Topology& t, uint32_t n);
uint64_t port_guid(const Topology& t, uint32_t n);
const std::string& node_description(const Node& n);

// Gives every node whose lid is 0 the lowest free LID range aligned to 2^lmc (path bits are
// the low LMC bits of a DLID, IBA 7.11.1), in node order, leaving given LIDs where they are.
// Throws ConfigError when the unicast space is exhausted.
void assign_lids(Topology& t);

}  // namespace ibvp::topo
