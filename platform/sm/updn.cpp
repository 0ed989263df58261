#include "platform/sm/updn.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "platform/params/config_error.h"

namespace ibvp::sm {

namespace {

using topo::NodeKind;
using topo::Topology;

constexpr uint16_t kUnreachable = 0xFFFF;

struct Neighbour {
  uint16_t port;
  uint32_t sw;  // index into SwitchGraph::node
};

// The switches with their cables to other switches, in dense indices (node order).
struct SwitchGraph {
  std::vector<uint32_t> node;        // [sw] -> node index
  std::vector<uint32_t> sw_of_node;  // [node] -> sw, or npos
  std::vector<std::vector<Neighbour>> adj;
};

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

// Switch hops from `from` to every switch (Topology::npos where unreachable), and the set
// reached in BFS order.
std::vector<uint32_t> bfs(const SwitchGraph& g, uint32_t from, std::vector<uint32_t>* order = nullptr) {
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

// The switch (dense index) the options name, or npos when they name none.
uint32_t requested_root(const Topology& t, const SwitchGraph& g, const UpDownOptions& opt) {
  const char* key = "routing.updn.root";
  uint32_t node = Topology::npos;
  std::string what;
  if (!opt.root.empty()) {
    node = t.find(opt.root);
    what = "'" + opt.root + "'";
    if (node == Topology::npos)
      throw ConfigError(t.source, key, 0, "the up*/down* root " + what + " is not a node of the fabric",
                        "name one of its switches, or leave the root out to take the most central switch");
  } else if (opt.root_node != Topology::npos) {
    node = opt.root_node;
    what = "node " + std::to_string(node);
    if (node >= t.nodes.size())
      throw ConfigError(t.source, key, 0,
                        "the up*/down* root " + what + " is beyond the " + std::to_string(t.nodes.size()) +
                            " nodes of the fabric",
                        "give the index of one of its switches");
  } else {
    return Topology::npos;
  }
  if (g.sw_of_node[node] == Topology::npos)
    throw ConfigError(t.source, key, 0, "the up*/down* root " + what + " is an endpoint, not a switch",
                      "give a switch as the root");
  return g.sw_of_node[node];
}

}  // namespace

bool UpDownRanking::is_up(const Topology& t, uint32_t from, uint32_t to) const {
  return std::make_tuple(rank[to], t.nodes[to].guid, to) < std::make_tuple(rank[from], t.nodes[from].guid, from);
}

UpDownRanking rank_switches(const Topology& t, const UpDownOptions& opt) {
  const SwitchGraph g = switch_graph(t);
  const uint32_t wanted = requested_root(t, g, opt);
  UpDownRanking r;
  r.rank.assign(t.nodes.size(), Topology::npos);
  // Each connected set of switches is ranked from its own root (a switch cabled to no other
  // switch is its own root), so a fabric split at the switch level still routes within its
  // parts, as minhop does. Sets are taken in order of their lowest node index.
  std::vector<bool> done(g.node.size(), false);
  for (uint32_t first = 0; first < g.node.size(); ++first) {
    if (done[first]) continue;
    std::vector<uint32_t> members;
    bfs(g, first, &members);
    std::sort(members.begin(), members.end());
    uint32_t root = Topology::npos;
    if (wanted != Topology::npos && std::binary_search(members.begin(), members.end(), wanted)) {
      root = wanted;
    } else {
      // Smallest eccentricity, ties to the lowest index (members are sorted and the switch
      // order is node order): one BFS per switch, O(S * (S + cables)).
      uint32_t best = Topology::npos;
      for (uint32_t s : members) {
        const std::vector<uint32_t> d = bfs(g, s);
        uint32_t ecc = 0;
        for (uint32_t m : members) ecc = std::max(ecc, d[m]);
        if (ecc < best) best = ecc, root = s;
      }
    }
    const std::vector<uint32_t> d = bfs(g, root);
    for (uint32_t m : members) {
      done[m] = true;
      r.rank[g.node[m]] = d[m];
    }
    r.roots.push_back(g.node[root]);
  }
  return r;
}

RoutingTables UpDownEngine::compute(const Topology& t) {
  ranking_ = rank_switches(t, opt_);
  const SwitchGraph g = switch_graph(t);
  const size_t n = g.node.size();

  RoutingTables rt;
  rt.engine = name();
  rt.lft.resize(t.nodes.size());
  const size_t lft_size = static_cast<size_t>(t.max_lid()) + 1;
  for (uint32_t s : g.node) rt.lft[s].port.assign(lft_size, Lft::kNoRoute);

  // pos[s]: place of switch s in the (rank, GUID, index) order; a cable s -> c leads up
  // exactly when pos[c] < pos[s] (UpDownRanking::is_up, precomputed).
  std::vector<uint32_t> pos(n);
  {
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return ranking_.is_up(t, g.node[b], g.node[a]);  // a before b: b -> a leads up
    });
    for (uint32_t i = 0; i < n; ++i) pos[order[i]] = i;
  }

  // Per destination switch D, the legal hop count of every switch S toward D and whether
  // S's route to D goes down only. Destination-based forwarding gives S one next hop toward
  // D, whatever way a packet came in; so if some switch routes down into S, S itself must go
  // on down, or that packet would turn down -> up. Each switch therefore gets one state:
  //   down-only: next hop a down cable to a down-only switch one hop closer;
  //   up-first:  next hop an up cable to any switch one hop closer.
  // A breadth-first search from D over the reversed legal moves sets them (OpenSM's
  // __updn_bfs_by_node does the same search, keeping one direction per switch): switch Y at
  // level h+1 reached from C at level h through the cable Y -> C is down-only if that cable
  // leads down and C is down-only (a down move into an up-first switch is skipped), up-first
  // if it leads up. The levels are processed whole, and a switch reached both ways within its
  // level is made down-only: its own hop count is the same and more switches may then route
  // into it. Only the moves the state allows are next-hop candidates below (for a down-only
  // switch: no up cable, even one as short), which makes every route legal by construction.
  // Every switch of D's set is reached: a switch that is not the root has an up cable (to its
  // BFS parent from the root), so the unreached switch of least (rank, GUID, index) could
  // only be the root; but each route from a rank-1 switch turns down at a down-only rank-1
  // switch (or is D itself) because its up moves cannot reach the unreached root, and the
  // root's cable to that switch leads down, so the root would have been reached after all.
  // The hop counts are the shortest under these states; a switch may get a longer route than
  // its shortest legal path when a switch it would go down into had to stay up-first (this
  // is the price of one table entry per destination; on a tree every route is shortest).
  // Entries are hops * 2 + down-only, kUnreachable when D cannot be reached.
  std::vector<std::vector<uint16_t>> legal(n);
  auto legal_to = [&](uint32_t dst) -> const std::vector<uint16_t>& {
    std::vector<uint16_t>& e = legal[dst];
    if (!e.empty()) return e;
    e.assign(n, kUnreachable);
    e[dst] = 1;  // 0 hops, down-only: the empty rest of a route goes down only
    std::vector<uint32_t> level{dst}, next;
    for (uint32_t h = 0; !level.empty(); ++h) {
      next.clear();
      const uint16_t reached_down = static_cast<uint16_t>((h + 1) * 2 + 1);
      for (uint32_t c : level) {
        const bool c_down_only = (e[c] & 1) != 0;
        for (const Neighbour& nb : g.adj[c]) {
          const uint32_t y = nb.sw;
          const bool y_goes_down = pos[c] > pos[y];
          if (y_goes_down && !c_down_only) continue;  // down then up: illegal
          if (e[y] == kUnreachable) {
            e[y] = static_cast<uint16_t>((h + 1) * 2 + (y_goes_down ? 1 : 0));
            next.push_back(y);
          } else if (y_goes_down && e[y] == reached_down - 1) {
            e[y] = reached_down;
          }
        }
      }
      level.swap(next);
    }
    return e;
  };

  // Endpoint LIDs routed through each port of each switch so far: the balancing measure.
  std::vector<std::vector<uint32_t>> load(n);
  for (uint32_t i = 0; i < n; ++i) load[i].assign(static_cast<size_t>(t.nodes[g.node[i]].num_ports) + 1, 0);
  // For the LIDs of the destination being routed: how often each (switch, port) and each
  // (switch, neighbour) has been chosen, to spread its LMC paths.
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> dest_port_use, dest_neighbour_use;
  uint32_t current_dest = Topology::npos;

  for (uint32_t lid = 1; lid < lft_size; ++lid) {
    const uint32_t owner = t.node_of_lid(static_cast<uint16_t>(lid));
    if (owner == Topology::npos) continue;
    if (owner != current_dest) {
      current_dest = owner;
      dest_port_use.clear();
      dest_neighbour_use.clear();
    }
    const bool to_endpoint = t.nodes[owner].kind == NodeKind::endpoint;
    const bool spread = t.nodes[owner].lmc > 0;
    // The switch the LID is reached through, and the port there that leaves the switch
    // fabric (0 for the switch's own LID: its management port).
    uint32_t dst_sw = Topology::npos;
    uint16_t exit_port = 0;
    if (to_endpoint) {
      if (t.link_at(owner, 1) < 0) continue;
      const topo::PortRef att = t.peer(owner, 1);
      dst_sw = g.sw_of_node[att.node];
      exit_port = att.port;
      if (dst_sw == Topology::npos) continue;  // cabled straight to another endpoint
    } else {
      dst_sw = g.sw_of_node[owner];
    }
    const std::vector<uint16_t>& e = legal_to(dst_sw);

    for (uint32_t s = 0; s < n; ++s) {
      uint16_t out = Lft::kNoRoute;
      if (s == dst_sw) {
        out = exit_port;
      } else if (e[s] != kUnreachable) {
        const bool down_only = (e[s] & 1) != 0;
        const uint16_t hops = static_cast<uint16_t>(e[s] >> 1);
        std::tuple<uint32_t, uint32_t, uint32_t, uint16_t> best{UINT32_MAX, 0, 0, 0};
        uint32_t best_neighbour = 0;
        for (const Neighbour& nb : g.adj[s]) {
          const uint16_t ec = e[nb.sw];
          if (ec == kUnreachable || (ec >> 1) + 1 != hops) continue;
          const bool goes_down = pos[nb.sw] > pos[s];
          if (down_only ? !(goes_down && (ec & 1)) : goes_down) continue;
          auto use = [s](const std::map<std::pair<uint32_t, uint32_t>, uint32_t>& m, uint32_t k) {
            const auto it = m.find({s, k});
            return it == m.end() ? 0u : it->second;
          };
          const std::tuple<uint32_t, uint32_t, uint32_t, uint16_t> score{
              use(dest_neighbour_use, nb.sw), use(dest_port_use, nb.port), load[s][nb.port], nb.port};
          if (score < best) {
            best = score;
            best_neighbour = nb.sw;
          }
        }
        // The search above guarantees a candidate (the switch's parent in it); without one the
        // entry stays unset rather than pointing at port 0.
        if (std::get<0>(best) == UINT32_MAX) continue;
        out = std::get<3>(best);
        if (spread) {
          ++dest_neighbour_use[{s, best_neighbour}];
          ++dest_port_use[{s, out}];
        }
      }
      if (out == Lft::kNoRoute) continue;
      rt.lft[g.node[s]].port[lid] = static_cast<uint8_t>(out);
      if (to_endpoint && out != 0) ++load[s][out];
    }
  }
  return rt;
}

std::unique_ptr<RoutingEngine> make_updn_engine(UpDownOptions opt) {
  return std::make_unique<UpDownEngine>(std::move(opt));
}

}  // namespace ibvp::sm
