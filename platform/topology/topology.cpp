#include "platform/topology/topology.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "platform/params/config_error.h"

namespace ibvp::topo {

namespace {

const char* kind_name(NodeKind k) { return k == NodeKind::switch_node ? "switch" : "endpoint"; }

// Items are named as a reader finds them: a node by its name (indices shift when a file is
// edited), a link by its position in the links list.
std::string node_key(const Topology& t, uint32_t n) {
  const std::string& name = t.nodes[n].name;
  return name.empty() ? "nodes[" + std::to_string(n) + "]" : "nodes." + name;
}
std::string link_key(size_t i) { return "links[" + std::to_string(i) + "]"; }
std::string end_key(size_t i, int end) { return link_key(i) + (end == 0 ? ".a" : ".b"); }

// Number of LIDs a node answers to.
uint32_t lid_count(const Node& n) { return 1u << (n.lmc <= Topology::kMaxLmc ? n.lmc : 0); }

bool lid_range_valid(const Node& n) {
  return n.lid != 0 && n.lmc <= Topology::kMaxLmc &&
         static_cast<uint32_t>(n.lid) + lid_count(n) - 1 <= Topology::kMaxUnicastLid &&
         n.lid % lid_count(n) == 0;
}

}  // namespace

void Topology::index() {
  // Tolerates invalid input (validate() reports it): out-of-range references are skipped and
  // the first link to claim a port keeps it.
  port_link_.assign(nodes.size(), {});
  for (size_t n = 0; n < nodes.size(); ++n) port_link_[n].assign(static_cast<size_t>(nodes[n].num_ports) + 1, -1);
  for (size_t i = 0; i < links.size(); ++i) {
    for (const PortRef& end : {links[i].a, links[i].b}) {
      if (end.node >= nodes.size() || end.port >= port_link_[end.node].size()) continue;
      int& slot = port_link_[end.node][end.port];
      if (slot < 0) slot = static_cast<int>(i);
    }
  }
  lid_owner_.assign(static_cast<size_t>(max_lid()) + 1, npos);
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    if (!lid_range_valid(nodes[n])) continue;
    for (uint32_t l = nodes[n].lid; l < nodes[n].lid + lid_count(nodes[n]); ++l)
      if (lid_owner_[l] == npos) lid_owner_[l] = n;
  }
}

void Topology::validate() const {
  auto fail = [this](const std::string& key, const std::string& problem, const std::string& fix) {
    throw ConfigError(source, key, 0, problem, fix);
  };
  if (nodes.empty()) fail("nodes", "the topology has no nodes", "declare switches: and hosts:");

  // Names: links and flows refer to nodes by name.
  std::map<std::string, uint32_t> by_name;
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    if (node.name.empty()) fail(node_key(*this, n), "node " + std::to_string(n) + " has no name", "give every node a name");
    auto [it, fresh] = by_name.emplace(node.name, n);
    if (!fresh)
      fail(node_key(*this, n), "two nodes are named " + node.name + " (nodes " + std::to_string(it->second) + " and " +
                                   std::to_string(n) + ")",
           "rename one of them; names identify nodes in links, flows and reports");
  }

  // Ports and LIDs of each node on its own.
  std::map<uint64_t, uint32_t> by_guid;
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    const std::string key = node_key(*this, n);
    const std::string what = std::string(kind_name(node.kind)) + " " + node.name;
    if (node.num_ports < 1 || node.num_ports > kMaxPorts)
      fail(key + ".ports", what + " has " + std::to_string(node.num_ports) + " ports",
           "use 1.." + std::to_string(kMaxPorts) + " ports (an LFT entry is one byte, 255 means no route)");
    if (node.lmc > kMaxLmc)
      fail(key + ".lmc", what + " has LMC " + std::to_string(node.lmc) + "; LMC is a 3-bit field",
           "use lmc 0..7");
    if (node.lid == 0)
      fail(key + ".lid", what + " has no LID (LID 0 is reserved)",
           "give it a LID 1..49151, or leave lid out of the file so one is assigned");
    if (node.lid > kMaxUnicastLid)
      fail(key + ".lid", what + " has LID " + std::to_string(node.lid) + ", in the multicast range 0xC000..0xFFFF",
           "use a unicast LID 1..49151");
    const uint32_t count = lid_count(node);
    if (node.lid % count != 0)
      fail(key + ".lid",
           what + " has LID " + std::to_string(node.lid) + ", not a multiple of 2^lmc = " + std::to_string(count) +
               " (the low LMC bits of a DLID are path bits)",
           "use a LID that is a multiple of " + std::to_string(count) + ", or leave lid out so one is assigned");
    if (node.lid + count - 1 > kMaxUnicastLid)
      fail(key + ".lmc",
           what + " answers to LIDs " + std::to_string(node.lid) + ".." + std::to_string(node.lid + count - 1) +
               ", beyond the last unicast LID 49151",
           "lower lid or lmc");
    if (node.guid != 0) {
      auto [it, fresh] = by_guid.emplace(node.guid, n);
      if (!fresh)
        fail(key + ".guid", what + " has the GUID of " + nodes[it->second].name, "give every node its own GUID, or 0");
    }
  }

  // LID ranges must not overlap: a DLID selects exactly one port.
  std::vector<uint32_t> owner(static_cast<size_t>(kMaxUnicastLid) + 1, npos);
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    for (uint32_t l = node.lid; l < node.lid + lid_count(node); ++l) {
      if (owner[l] != npos) {
        const Node& other = nodes[owner[l]];
        fail(node_key(*this, n) + ".lid",
             std::string(kind_name(node.kind)) + " " + node.name + " uses LID " + std::to_string(l) + ", already used by " +
                 kind_name(other.kind) + " " + other.name +
                 (other.lmc > 0 ? " (LIDs " + std::to_string(other.lid) + ".." +
                                      std::to_string(other.lid + lid_count(other) - 1) + " with lmc " +
                                      std::to_string(other.lmc) + ")"
                                : ""),
             "give each node its own LID range, or leave lid out so one is assigned");
      }
      owner[l] = n;
    }
  }

  // Cables.
  std::vector<std::vector<int>> used(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) used[n].assign(static_cast<size_t>(nodes[n].num_ports) + 1, -1);
  for (size_t i = 0; i < links.size(); ++i) {
    const Link& link = links[i];
    const PortRef ends[2] = {link.a, link.b};
    for (int e = 0; e < 2; ++e) {
      const PortRef& end = ends[e];
      const std::string key = end_key(i, e);
      if (end.node >= nodes.size())
        fail(key, "link to unknown node " + std::to_string(end.node) + " (there are " + std::to_string(nodes.size()) +
                      " nodes)",
             "connect nodes that exist");
      const Node& node = nodes[end.node];
      const std::string what = std::string(kind_name(node.kind)) + " " + node.name;
      const std::string range = "1.." + std::to_string(node.num_ports);
      if (end.port == 0)
        fail(key, "port 0 of " + what + " takes no cable (switch port 0 is the internal management port)",
             "use a port " + range);
      if (end.port > node.num_ports)
        fail(key,
             "port " + std::to_string(end.port) + " of " + what + " is beyond its " + std::to_string(node.num_ports) +
                 " port" + (node.num_ports == 1 ? "" : "s"),
             node.kind == NodeKind::switch_node ? "raise ports: or use a port " + range : "use port 1");
      if (node.kind == NodeKind::endpoint && end.port != 1)
        fail(key,
             "cable on port " + std::to_string(end.port) + " of " + what +
                 "; an endpoint is modelled by one port, port 1, which owns its LID",
             "cable port 1 of the endpoint (model a second HCA port as its own endpoint)");
      int& slot = used[end.node][end.port];
      if (slot >= 0)
        fail(key,
             "port " + node.name + "/" + std::to_string(end.port) + " is used twice: by " +
                 (static_cast<size_t>(slot / 2) == i ? "both ends of this link"
                                                     : end_key(static_cast<size_t>(slot / 2), slot % 2) + " and here"),
             "cable each port once; use a free port");
      slot = static_cast<int>(2 * i + static_cast<size_t>(e));
    }
    if (!std::isfinite(link.cfg.length_m) || link.cfg.length_m < 0)
      fail(link_key(i) + ".length_m", "cable length " + std::to_string(link.cfg.length_m) + " m", "use a length >= 0");
    if (!std::isfinite(link.cfg.propagation_ns_per_m) || link.cfg.propagation_ns_per_m < 0)
      fail(link_key(i) + ".propagation_ns_per_m", "propagation " + std::to_string(link.cfg.propagation_ns_per_m) + " ns/m",
           "use a value >= 0 (about 5 ns/m for copper and fibre)");
  }
  if (nodes.size() > 1) {
    for (uint32_t n = 0; n < nodes.size(); ++n)
      if (nodes[n].kind == NodeKind::endpoint && used[n][1] < 0)
        fail(node_key(*this, n), "endpoint " + nodes[n].name + " has no cable on port 1",
             "add a link to " + nodes[n].name + "/1, or remove the endpoint");
  }

  // Connectivity: every node must be reachable from every other, or some flows and the SM's
  // sweep could not reach their targets. Breadth-first from node 0 over all cables.
  std::vector<std::vector<uint32_t>> adj(nodes.size());
  for (const Link& l : links) {
    adj[l.a.node].push_back(l.b.node);
    adj[l.b.node].push_back(l.a.node);
  }
  std::vector<bool> seen(nodes.size(), false);
  std::vector<uint32_t> queue{0};
  seen[0] = true;
  for (size_t q = 0; q < queue.size(); ++q)
    for (uint32_t m : adj[queue[q]])
      if (!seen[m]) {
        seen[m] = true;
        queue.push_back(m);
      }
  if (queue.size() != nodes.size()) {
    uint32_t first = npos;
    std::string some;
    size_t listed = 0;
    for (uint32_t n = 0; n < nodes.size(); ++n) {
      if (seen[n]) continue;
      if (first == npos) first = n;
      if (listed < 5) some += (listed++ ? ", " : "") + nodes[n].name;
    }
    const size_t missing = nodes.size() - queue.size();
    fail(node_key(*this, first),
         "the fabric is not connected: " + std::to_string(missing) + " node" + (missing == 1 ? "" : "s") + " (" + some +
             (missing > listed ? ", ..." : "") + ") cannot be reached from " + nodes[0].name,
         "add links joining them to the rest of the fabric, or remove them");
  }
}

uint32_t Topology::find(const std::string& name) const {
  for (uint32_t n = 0; n < nodes.size(); ++n)
    if (nodes[n].name == name) return n;
  return npos;
}

int Topology::link_at(uint32_t node, uint16_t port) const {
  if (node >= port_link_.size() || port >= port_link_[node].size()) return -1;
  return port_link_[node][port];
}

PortRef Topology::peer(uint32_t node, uint16_t port) const {
  const int l = link_at(node, port);
  if (l < 0)
    throw std::logic_error("Topology::peer: no cable at node " + std::to_string(node) + " port " + std::to_string(port));
  const Link& link = links[static_cast<size_t>(l)];
  // A loopback cable joins two ports of one node; the port number tells the ends apart.
  return (link.a.node == node && link.a.port == port) ? link.b : link.a;
}

std::vector<uint32_t> Topology::switches() const {
  std::vector<uint32_t> out;
  for (uint32_t n = 0; n < nodes.size(); ++n)
    if (nodes[n].kind == NodeKind::switch_node) out.push_back(n);
  return out;
}

std::vector<uint32_t> Topology::endpoints() const {
  std::vector<uint32_t> out;
  for (uint32_t n = 0; n < nodes.size(); ++n)
    if (nodes[n].kind == NodeKind::endpoint) out.push_back(n);
  return out;
}

uint32_t Topology::node_of_lid(uint16_t lid) const { return lid < lid_owner_.size() ? lid_owner_[lid] : npos; }

uint16_t Topology::max_lid() const {
  uint32_t top = 0;
  for (const Node& n : nodes)
    if (lid_range_valid(n)) top = std::max<uint32_t>(top, n.lid + lid_count(n) - 1);
  return static_cast<uint16_t>(top);
}

uint64_t node_guid(const Topology& t, uint32_t n) {
  const Node& node = t.nodes.at(n);
  return node.guid != 0 ? node.guid : kSyntheticGuidBase + ((static_cast<uint64_t>(n) + 1) << 8);
}

uint64_t port_guid(const Topology& t, uint32_t n) {
  const Node& node = t.nodes.at(n);
  if (node.kind == NodeKind::switch_node) return node_guid(t, n);
  return node.port_guid != 0 ? node.port_guid : node_guid(t, n) + 1;
}

const std::string& node_description(const Node& n) { return n.description.empty() ? n.name : n.description; }

void assign_lids(Topology& t) {
  std::vector<bool> used(static_cast<size_t>(Topology::kMaxUnicastLid) + 1, false);
  used[0] = true;
  for (const Node& n : t.nodes)
    if (n.lid != 0 && n.lmc <= Topology::kMaxLmc)
      for (uint32_t l = n.lid; l < n.lid + lid_count(n) && l <= Topology::kMaxUnicastLid; ++l) used[l] = true;
  // One cursor per LMC: ranges below a cursor were found taken and stay taken, so each search
  // resumes where the last one of that size stopped (linear in the LID space overall).
  uint32_t cursor[Topology::kMaxLmc + 1] = {};
  for (uint32_t i = 0; i < t.nodes.size(); ++i) {
    Node& n = t.nodes[i];
    if (n.lid != 0 || n.lmc > Topology::kMaxLmc) continue;  // given, or invalid: validate() says so
    const uint32_t count = lid_count(n);
    uint32_t& base = cursor[n.lmc];
    for (;;) {
      if (base + count - 1 > Topology::kMaxUnicastLid)
        throw ConfigError(t.source, node_key(t, i) + ".lid",
                          0, "no free range of " + std::to_string(count) + " LIDs left for " + n.name,
                          "lower lmc, or give LIDs by hand to pack the unicast range 1..49151");
      bool free = true;
      for (uint32_t l = base; l < base + count; ++l) free = free && !used[l];
      if (free) break;
      base += count;
    }
    n.lid = static_cast<uint16_t>(base);
    for (uint32_t l = base; l < base + count; ++l) used[l] = true;
    base += count;
  }
}

}  // namespace ibvp::topo
