#include "platform/sm/minhop.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "platform/sm/switch_graph.h"

namespace ibvp::sm {

namespace {

using topo::NodeKind;
using topo::Topology;

constexpr uint16_t kUnreachableHops = 0xFFFF;

}  // namespace

RoutingTables MinHopRouting::compute(const Topology& t) {
  RoutingTables rt;
  rt.engine = name();
  rt.lft.resize(t.nodes.size());

  const std::vector<uint32_t> switches = t.switches();
  std::vector<uint32_t> sw_of_node(t.nodes.size(), Topology::npos);
  for (uint32_t i = 0; i < switches.size(); ++i) sw_of_node[switches[i]] = i;
  const size_t lft_size = static_cast<size_t>(t.max_lid()) + 1;
  for (uint32_t s : switches) rt.lft[s].port.assign(lft_size, Lft::kNoRoute);

  // Switch-to-switch cables; loopback cables lead nowhere new and are left out.
  std::vector<std::vector<Neighbour>> adj(switches.size());
  for (uint32_t i = 0; i < switches.size(); ++i)
    for (uint16_t p = 1; p <= t.nodes[switches[i]].num_ports; ++p) {
      if (t.link_at(switches[i], p) < 0) continue;
      const topo::PortRef far = t.peer(switches[i], p);
      if (far.node != switches[i] && sw_of_node[far.node] != Topology::npos) adj[i].push_back({p, sw_of_node[far.node]});
    }

  // Hop distances to each destination switch, by breadth-first search from it; filled when a
  // destination on that switch is first routed.
  std::vector<std::vector<uint16_t>> hops(switches.size());
  auto hops_to = [&](uint32_t dst) -> const std::vector<uint16_t>& {
    std::vector<uint16_t>& d = hops[dst];
    if (!d.empty()) return d;
    d.assign(switches.size(), kUnreachableHops);
    d[dst] = 0;
    std::vector<uint32_t> queue{dst};
    for (size_t q = 0; q < queue.size(); ++q)
      for (const Neighbour& nb : adj[queue[q]])
        if (d[nb.sw] == kUnreachableHops) {
          d[nb.sw] = static_cast<uint16_t>(d[queue[q]] + 1);
          queue.push_back(nb.sw);
        }
    return d;
  };

  // Endpoints cabled to each switch: the sources whose traffic starts there.
  std::vector<uint64_t> endpoints_at(switches.size(), 0);
  for (uint32_t e : t.endpoints())
    if (t.link_at(e, 1) >= 0 && sw_of_node[t.peer(e, 1).node] != Topology::npos) ++endpoints_at[sw_of_node[t.peer(e, 1).node]];

  // The balancing measure: (source endpoint, destination LID) routes crossing each port of
  // each switch so far, and, to break ties where no source crosses, the destination LIDs
  // routed through it. Counting routes, not destinations, is what keeps a fat tree's upper
  // links busy: on a 4-ary 3-tree with LIDs in host order, a leaf that spreads destinations
  // i, i+1, ... over its up-links sends to each level-2 switch only the destinations with
  // one residue mod 4, and a level-2 switch counting destinations would spread those over
  // ports it also took for the other residues' destinations it never sees, leaving 3 of its
  // 4 up-links idle (issue 17: the 64-host tree saturated at 0.27 of the link rate).
  std::vector<std::vector<uint64_t>> routes_through(switches.size());
  std::vector<std::vector<uint32_t>> lids_through(switches.size());
  for (uint32_t i = 0; i < switches.size(); ++i) {
    routes_through[i].assign(static_cast<size_t>(t.nodes[switches[i]].num_ports) + 1, 0);
    lids_through[i].assign(static_cast<size_t>(t.nodes[switches[i]].num_ports) + 1, 0);
  }
  // Per destination switch: the other switches, farthest first, so a switch is routed only
  // after every switch whose routes can reach it.
  std::vector<std::vector<uint32_t>> far_first(switches.size());
  auto order_from = [&](uint32_t dst, const std::vector<uint16_t>& d) -> const std::vector<uint32_t>& {
    std::vector<uint32_t>& o = far_first[dst];
    if (!o.empty()) return o;
    for (uint32_t s = 0; s < switches.size(); ++s)
      if (s != dst && d[s] != kUnreachableHops) o.push_back(s);
    std::stable_sort(o.begin(), o.end(), [&](uint32_t a, uint32_t b) { return d[a] > d[b]; });
    return o;
  };
  // For the LIDs of the destination being routed: how often each (switch, port) and each
  // (switch, neighbour) has been chosen, to spread its LMC paths.
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> dest_port_use, dest_neighbour_use;
  uint32_t current_dest = Topology::npos;
  std::vector<uint64_t> sources(switches.size());  // routes to this LID passing each switch

  for (uint32_t lid = 1; lid < lft_size; ++lid) {
    const uint32_t owner = t.node_of_lid(static_cast<uint16_t>(lid));
    if (owner == Topology::npos) continue;
    if (owner != current_dest) {
      current_dest = owner;
      dest_port_use.clear();
      dest_neighbour_use.clear();
    }
    const bool to_endpoint = t.nodes[owner].kind == NodeKind::endpoint;
    const bool spread = t.nodes[owner].lmc > 0;  // one LID: nothing to spread
    // The switch the LID is reached through, and the port there that leaves the switch
    // fabric (0 for the switch's own LID: its management port).
    uint32_t dst_sw = Topology::npos;
    uint16_t exit_port = 0;
    if (to_endpoint) {
      if (t.link_at(owner, 1) < 0) continue;
      const topo::PortRef att = t.peer(owner, 1);
      dst_sw = sw_of_node[att.node];
      exit_port = att.port;
      if (dst_sw == Topology::npos) continue;  // cabled straight to another endpoint
    } else {
      dst_sw = sw_of_node[owner];
    }
    const std::vector<uint16_t>& d = hops_to(dst_sw);
    rt.lft[switches[dst_sw]].port[lid] = static_cast<uint8_t>(exit_port);

    // Routes to an endpoint LID start at every other endpoint's switch; a switch's own LID
    // is not counted (management traffic is negligible).
    for (uint32_t s = 0; s < switches.size(); ++s) sources[s] = to_endpoint ? endpoints_at[s] : 0;
    if (to_endpoint) --sources[dst_sw];

    for (uint32_t s : order_from(dst_sw, d)) {
      // Among the ports one hop closer: fewest uses by this destination's other LIDs (first
      // by neighbour, then by port), then fewest routes, then fewest destination LIDs, then
      // the lowest port.
      std::tuple<uint32_t, uint32_t, uint64_t, uint32_t, uint16_t> best{UINT32_MAX, 0, 0, 0, 0};
      uint32_t best_neighbour = 0;
      for (const Neighbour& nb : adj[s]) {
        if (d[nb.sw] + 1 != d[s]) continue;
        auto use = [s](const std::map<std::pair<uint32_t, uint32_t>, uint32_t>& m, uint32_t k) {
          const auto it = m.find({s, k});
          return it == m.end() ? 0u : it->second;
        };
        const std::tuple<uint32_t, uint32_t, uint64_t, uint32_t, uint16_t> score{
            use(dest_neighbour_use, nb.sw), use(dest_port_use, nb.port), routes_through[s][nb.port],
            lids_through[s][nb.port], nb.port};
        if (score < best) {
          best = score;
          best_neighbour = nb.sw;
        }
      }
      const uint16_t out = std::get<4>(best);
      if (spread) {
        ++dest_neighbour_use[{s, best_neighbour}];
        ++dest_port_use[{s, out}];
      }
      rt.lft[switches[s]].port[lid] = static_cast<uint8_t>(out);
      if (to_endpoint) {
        routes_through[s][out] += sources[s];
        ++lids_through[s][out];
        sources[best_neighbour] += sources[s];
      }
    }
  }
  return rt;
}

}  // namespace ibvp::sm
