#include "platform/sm/discovered_subnet.h"

#include <set>
#include <sstream>

#include "platform/params/config_error.h"

namespace ibvp::sm {

namespace mad = ib::mad;

uint32_t DiscoveredSubnet::find(uint64_t node_guid) const {
  const auto it = by_guid_.find(node_guid);
  return it == by_guid_.end() ? npos : it->second;
}

uint32_t DiscoveredSubnet::add(const mad::NodeInfo& info, std::vector<uint8_t> path) {
  DiscoveredNode n;
  n.node_guid = info.node_guid;
  n.port_guid = info.port_guid;
  n.node_type = info.node_type;
  n.num_ports = info.num_ports;
  n.path = std::move(path);
  const uint32_t index = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(std::move(n));
  by_guid_[info.node_guid] = index;
  return index;
}

void DiscoveredSubnet::connect(uint32_t a, uint8_t port_a, uint32_t b, uint8_t port_b) {
  // A cable is reported from each end it is reached by; either end marks it known.
  if (cabled_.count({a, port_a}) || cabled_.count({b, port_b})) return;
  cabled_.insert({a, port_a});
  cabled_.insert({b, port_b});
  links_.push_back({a, b, port_a, port_b});
}

bool link_config_from_port_info(const mad::PortInfo& pi, link::LinkConfig& out) {
  switch (pi.link_width_active) {
    case 1: out.width = link::Width::x1; break;
    case 2: out.width = link::Width::x4; break;
    case 4: out.width = link::Width::x8; break;
    case 8: out.width = link::Width::x12; break;
    case 16: out.width = link::Width::x2; break;
    default: return false;
  }
  // LinkSpeedExtActive, when not 0, names the speed (FDR and later, IBA 1.3 14.2.5.6).
  switch (pi.link_speed_ext_active) {
    case 0: break;
    case 1: out.speed = link::Speed::fdr; return true;
    case 2: out.speed = link::Speed::edr; return true;
    case 4: out.speed = link::Speed::hdr; return true;
    case 8: out.speed = link::Speed::ndr; return true;
    default: return false;
  }
  switch (pi.link_speed_active) {
    case 1: out.speed = link::Speed::sdr; return true;
    case 2: out.speed = link::Speed::ddr; return true;
    case 4: out.speed = link::Speed::qdr; return true;
    default: return false;
  }
}

topo::Topology DiscoveredSubnet::to_topology(const std::map<uint64_t, uint16_t>& lid_of,
                                             const std::map<uint64_t, uint8_t>& lmc_of,
                                             const std::string& source) const {
  topo::Topology t;
  t.source = source;
  std::map<std::string, int> uses;
  for (const DiscoveredNode& d : nodes_) ++uses[d.description];
  std::set<uint16_t> taken;
  for (const DiscoveredNode& d : nodes_) {
    topo::Node n;
    n.kind = d.is_switch() ? topo::NodeKind::switch_node : topo::NodeKind::endpoint;
    n.num_ports = d.num_ports;
    n.guid = d.node_guid;
    n.port_guid = d.is_switch() ? 0 : d.port_guid;
    n.description = d.description;
    if (d.description.empty() || uses[d.description] > 1) {
      std::ostringstream name;
      name << (d.description.empty() ? (d.is_switch() ? "switch" : "ca") : d.description) << "-0x" << std::hex
           << d.node_guid;
      n.name = name.str();
    } else {
      n.name = d.description;
    }
    const auto lid = lid_of.find(d.port_guid);
    if (lid != lid_of.end()) {
      if (!taken.insert(lid->second).second) {
        std::ostringstream msg;
        msg << "the guid2lid map gives LID " << lid->second << " to two ports (one is 0x" << std::hex << d.port_guid
            << ")";
        throw ConfigError(source, "subnet_manager", 0, msg.str(), "give every port GUID its own LID");
      }
      n.lid = lid->second;
      const auto lmc = lmc_of.find(d.port_guid);
      if (lmc != lmc_of.end()) n.lmc = lmc->second;
    }
    t.nodes.push_back(std::move(n));
  }
  for (const DiscoveredLink& l : links_) {
    topo::Link link;
    link.a = {l.a, l.port_a};
    link.b = {l.b, l.port_b};
    const auto pi = nodes_[l.a].ports.find(l.port_a);
    if (pi != nodes_[l.a].ports.end()) link_config_from_port_info(pi->second, link.cfg);
    t.links.push_back(link);
  }
  topo::assign_lids(t);
  t.index();
  t.validate();
  return t;
}

}  // namespace ibvp::sm
