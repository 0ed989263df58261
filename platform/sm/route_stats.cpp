#include "platform/sm/route_stats.h"

#include <algorithm>
#include <deque>
#include <set>

namespace ibvp::sm {

TopologyStats topology_stats(const topo::Topology& t) {
  TopologyStats s;
  s.links = static_cast<uint32_t>(t.links.size());
  const std::vector<uint32_t> sw = t.switches();
  s.switches = static_cast<uint32_t>(sw.size());
  s.hosts = static_cast<uint32_t>(t.endpoints().size());
  std::vector<std::vector<uint32_t>> adj(t.nodes.size());
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  for (const topo::Link& l : t.links) {
    const bool both = t.nodes[l.a.node].kind == topo::NodeKind::switch_node &&
                      t.nodes[l.b.node].kind == topo::NodeKind::switch_node;
    if (!both || l.a.node == l.b.node) continue;
    s.switch_links++;
    adj[l.a.node].push_back(l.b.node);
    adj[l.b.node].push_back(l.a.node);
  }
  s.independent_cycles = s.switches ? int64_t{s.switch_links} - int64_t{s.switches} + 1 : 0;
  // Diameter in switches between endpoints: BFS from every switch that has an endpoint.
  std::vector<bool> has_host(t.nodes.size(), false);
  for (uint32_t e : t.endpoints()) has_host[t.peer(e, 1).node] = true;
  for (uint32_t a : sw) {
    if (!has_host[a]) continue;
    std::vector<int> dist(t.nodes.size(), -1);
    std::deque<uint32_t> q{a};
    dist[a] = 0;
    while (!q.empty()) {
      const uint32_t u = q.front();
      q.pop_front();
      for (uint32_t v : adj[u])
        if (dist[v] < 0) {
          dist[v] = dist[u] + 1;
          q.push_back(v);
        }
    }
    for (uint32_t b : sw)
      if (has_host[b] && dist[b] >= 0) s.diameter = std::max<uint32_t>(s.diameter, static_cast<uint32_t>(dist[b] + 1));
  }
  return s;
}

RouteStats route_stats(const topo::Topology& t, const RoutingTables& rt) {
  RouteStats r;
  r.engine = rt.engine;
  std::map<std::pair<uint32_t, uint16_t>, uint64_t> channel;  // (switch, out port) -> routes
  for (const topo::Link& l : t.links) {
    const bool both = t.nodes[l.a.node].kind == topo::NodeKind::switch_node &&
                      t.nodes[l.b.node].kind == topo::NodeKind::switch_node;
    if (!both || l.a.node == l.b.node) continue;
    channel[{l.a.node, l.a.port}] = 0;
    channel[{l.b.node, l.b.port}] = 0;
  }
  const std::vector<uint32_t> eps = t.endpoints();
  for (uint32_t src : eps) {
    for (uint32_t dst : eps) {
      if (src == dst) continue;
      r.routes++;
      const uint16_t dlid = t.nodes[dst].lid;
      const std::vector<uint32_t> path = trace_route(t, rt, src, dlid);
      if (path.empty()) {
        r.unrouted++;
        continue;
      }
      r.hops[static_cast<uint32_t>(path.size())]++;
      for (uint32_t s : path) {
        const uint8_t port = rt.lft[s].lookup(dlid);
        auto it = channel.find({s, port});
        if (it != channel.end()) it->second++;
      }
    }
  }
  uint64_t sum = 0;
  for (const auto& [key, n] : channel) {
    r.efi_max = std::max(r.efi_max, n);
    sum += n;
  }
  r.efi_mean = channel.empty() ? 0.0 : static_cast<double>(sum) / static_cast<double>(channel.size());
  return r;
}

namespace {

// Whether every switch's walk through the tables reaches destination LID `dlid`, owned by node
// `dst`. Each switch's outcome is remembered, so one LID costs one pass over the switches
// instead of one walk per source (the pair-by-pair walk took seconds before a 4,096-host fat
// tree could start).
bool every_switch_reaches(const topo::Topology& t, const RoutingTables& rt, uint16_t dlid, uint32_t dst,
                          std::vector<uint8_t>& state, std::vector<uint32_t>& walk) {
  enum : uint8_t { unknown, walking, reaches, fails };
  std::fill(state.begin(), state.end(), unknown);
  for (uint32_t s = 0; s < t.nodes.size(); ++s) {
    if (t.nodes[s].kind != topo::NodeKind::switch_node || state[s] != unknown) continue;
    walk.clear();
    uint32_t at = s;
    uint8_t outcome = fails;
    for (;;) {
      if (state[at] == walking) break;  // a loop
      if (state[at] != unknown) {
        outcome = state[at];
        break;
      }
      state[at] = walking;
      walk.push_back(at);
      if (at >= rt.lft.size()) break;
      const uint8_t port = rt.lft[at].lookup(dlid);
      if (port == Lft::kNoRoute) break;
      if (port == 0) {
        outcome = at == dst ? reaches : fails;
        break;
      }
      if (t.link_at(at, port) < 0) break;
      const uint32_t next = t.peer(at, port).node;
      if (t.nodes[next].kind != topo::NodeKind::switch_node) {
        outcome = next == dst ? reaches : fails;
        break;
      }
      at = next;
    }
    for (uint32_t w : walk) state[w] = outcome;
    if (outcome == fails) return false;
  }
  return true;
}

}  // namespace

std::optional<UnroutedPair> first_unrouted(const topo::Topology& t, const RoutingTables& rt) {
  const std::vector<uint32_t> eps = t.endpoints();
  // Fast path: every endpoint is cabled to a switch and every switch reaches every endpoint
  // LID. Only when that fails are the pairs walked in order, to name the first hole.
  bool all_on_switches = true;
  for (uint32_t e : eps)
    all_on_switches = all_on_switches && t.link_at(e, 1) >= 0 &&
                      t.nodes[t.peer(e, 1).node].kind == topo::NodeKind::switch_node;
  if (all_on_switches) {
    std::vector<uint8_t> state(t.nodes.size());
    std::vector<uint32_t> walk;
    bool holes = false;
    for (uint32_t dst : eps) {
      for (uint32_t bit = 0; !holes && bit < (1u << t.nodes[dst].lmc); ++bit)
        holes = !every_switch_reaches(t, rt, static_cast<uint16_t>(t.nodes[dst].lid + bit), dst, state, walk);
      if (holes) break;
    }
    if (!holes) return std::nullopt;
  }
  for (uint32_t src : eps) {
    // Two hosts cabled back to back reach each other without a switch (and a table).
    const uint32_t neighbour = t.link_at(src, 1) >= 0 ? t.peer(src, 1).node : topo::Topology::npos;
    for (uint32_t dst : eps) {
      if (dst == src || dst == neighbour) continue;
      for (uint32_t bit = 0; bit < (1u << t.nodes[dst].lmc); ++bit) {
        const uint16_t dlid = static_cast<uint16_t>(t.nodes[dst].lid + bit);
        if (trace_route(t, rt, src, dlid).empty()) return UnroutedPair{src, dlid};
      }
    }
  }
  return std::nullopt;
}

}  // namespace ibvp::sm
