#include "platform/sm/switch_graph.h"

#include "platform/params/config_error.h"

namespace ibvp::sm {

using topo::Topology;

SwitchGraph switch_graph(const Topology& t) {
  SwitchGraph g;
  g.node = t.switches();
  g.sw_of_node.assign(t.nodes.size(), Topology::npos);
  for (uint32_t i = 0; i < g.node.size(); ++i) g.sw_of_node[g.node[i]] = i;
  g.adj.resize(g.node.size());
  for (uint32_t i = 0; i < g.node.size(); ++i)
    for (uint16_t p = 1; p <= t.nodes[g.node[i]].num_ports; ++p) {
      if (t.link_at(g.node[i], p) < 0) continue;
      const topo::PortRef far = t.peer(g.node[i], p);
      // A loopback cable leads nowhere new; it is neither up nor down and is left out.
      if (far.node != g.node[i] && g.sw_of_node[far.node] != Topology::npos)
        g.adj[i].push_back({p, g.sw_of_node[far.node]});
    }
  return g;
}

std::vector<uint32_t> bfs(const SwitchGraph& g, uint32_t from, std::vector<uint32_t>* order) {
  std::vector<uint32_t> d(g.node.size(), Topology::npos);
  std::vector<uint32_t> queue{from};
  d[from] = 0;
  for (size_t q = 0; q < queue.size(); ++q)
    for (const Neighbour& nb : g.adj[queue[q]])
      if (d[nb.sw] == Topology::npos) {
        d[nb.sw] = d[queue[q]] + 1;
        queue.push_back(nb.sw);
      }
  if (order) *order = std::move(queue);
  return d;
}

uint32_t requested_root(const Topology& t, const std::vector<uint32_t>& sw_of_node, const std::string& root_name,
                        uint32_t root_node, const char* key, const std::string& label) {
  uint32_t node = Topology::npos;
  std::string what;
  if (!root_name.empty()) {
    node = t.find(root_name);
    what = "'" + root_name + "'";
    if (node == Topology::npos)
      throw ConfigError(t.source, key, 0, "the " + label + " root " + what + " is not a node of the fabric",
                        "name one of its switches, or leave the root out to take the most central switch");
  } else if (root_node != Topology::npos) {
    node = root_node;
    what = "node " + std::to_string(node);
    if (node >= t.nodes.size())
      throw ConfigError(t.source, key, 0,
                        "the " + label + " root " + what + " is beyond the " + std::to_string(t.nodes.size()) +
                            " nodes of the fabric",
                        "give the index of one of its switches");
  } else {
    return Topology::npos;
  }
  if (sw_of_node[node] == Topology::npos)
    throw ConfigError(t.source, key, 0, "the " + label + " root " + what + " is an endpoint, not a switch",
                      "give a switch as the root");
  return sw_of_node[node];
}

ArcGraph arc_graph(const Topology& t) {
  ArcGraph g;
  g.node = t.switches();
  g.sw_of_node.assign(t.nodes.size(), Topology::npos);
  for (uint32_t i = 0; i < g.node.size(); ++i) g.sw_of_node[g.node[i]] = i;
  g.out.resize(g.node.size());
  g.arc_at.resize(g.node.size());
  for (uint32_t i = 0; i < g.node.size(); ++i) {
    const uint16_t ports = t.nodes[g.node[i]].num_ports;
    g.arc_at[i].assign(static_cast<size_t>(ports) + 1, Topology::npos);
    for (uint16_t p = 1; p <= ports; ++p) {
      if (t.link_at(g.node[i], p) < 0) continue;
      const topo::PortRef far = t.peer(g.node[i], p);
      if (far.node == g.node[i] || g.sw_of_node[far.node] == Topology::npos) continue;
      const uint32_t a = static_cast<uint32_t>(g.from.size());
      g.from.push_back(i);
      g.to.push_back(g.sw_of_node[far.node]);
      g.port.push_back(p);
      g.out[i].push_back(a);
      g.arc_at[i][p] = a;
    }
  }
  g.rev.resize(g.from.size());
  for (uint32_t a = 0; a < g.from.size(); ++a) g.rev[a] = g.arc_at[g.to[a]][t.peer(g.node[g.from[a]], g.port[a]).port];
  return g;
}

}  // namespace ibvp::sm
