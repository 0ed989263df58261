#pragma once
// What an in-band subnet manager learns by directed-route SMPs, and the topology it makes
// of it: nodes by GUID, the directed route that reaches each, the cables between their
// ports. The SM (inband_sm.h) fills it from NodeInfo, NodeDescription and PortInfo
// responses; routing engines then run on to_topology()'s graph exactly as they run on a
// loaded one.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "models/ib/mad.h"
#include "platform/topology/topology.h"

namespace ibvp::sm {

struct DiscoveredNode {
  uint64_t node_guid = 0;
  uint64_t port_guid = 0;  // a switch's port 0, a CA's port the SM reached it through
  uint8_t node_type = 0;   // ib::mad::NodeType
  uint8_t num_ports = 0;
  std::string description;
  // Output port at each hop from the SM's CA (path[0] is the SM's own port); empty for
  // the SM's own CA (hop count 0).
  std::vector<uint8_t> path;
  // PortInfo as read, by port number (0..num_ports; a CA fills only the port reached).
  std::map<uint8_t, ib::mad::PortInfo> ports;
  bool is_switch() const { return node_type == ib::mad::kNodeSwitch; }
};

// A cable between (node a, port a) and (node b, port b), nodes by index in nodes().
struct DiscoveredLink {
  uint32_t a = 0, b = 0;
  uint8_t port_a = 0, port_b = 0;
};

class DiscoveredSubnet {
 public:
  // The node with this NodeGUID, or npos.
  uint32_t find(uint64_t node_guid) const;
  static constexpr uint32_t npos = 0xFFFFFFFFu;
  // Adds a node first seen at `path`; returns its index.
  uint32_t add(const ib::mad::NodeInfo& info, std::vector<uint8_t> path);
  // Records a cable once, whichever end reported it.
  void connect(uint32_t a, uint8_t port_a, uint32_t b, uint8_t port_b);

  std::vector<DiscoveredNode>& nodes() { return nodes_; }
  const std::vector<DiscoveredNode>& nodes() const { return nodes_; }
  const std::vector<DiscoveredLink>& links() const { return links_; }

  // The graph routing engines read: one node per discovered node, in discovery order, named
  // by NodeDescription (made unique with the GUID when two share one), with the GUIDs read
  // and the cables at the width and speed PortInfo reports active. LIDs: those `lid_of`
  // (port GUID -> base LID, the SM's guid2lid) gives, then topo::assign_lids for the rest;
  // LMC from `lmc_of` (0 where absent). Throws ConfigError (source `source`) when the
  // guid2lid map gives one LID to two ports.
  topo::Topology to_topology(const std::map<uint64_t, uint16_t>& lid_of, const std::map<uint64_t, uint8_t>& lmc_of,
                             const std::string& source) const;

 private:
  std::vector<DiscoveredNode> nodes_;
  std::vector<DiscoveredLink> links_;
  std::map<uint64_t, uint32_t> by_guid_;
  std::set<std::pair<uint32_t, uint8_t>> cabled_;  // (node, port) ends already in links_
};

// PortInfo's LinkWidthActive / LinkSpeedActive (and LinkSpeedExtActive) as the link model's
// width and speed (IBA 14.2.5.6, Table 155). False when the codes name none of them.
bool link_config_from_port_info(const ib::mad::PortInfo& pi, link::LinkConfig& out);

}  // namespace ibvp::sm
