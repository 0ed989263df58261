#include "platform/sm/dfs.h"

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
uint32_t requested_root(const Topology& t, const SwitchGraph& g, const DfsOptions& opt) {
  const char* key = "routing.dfs.root";
  uint32_t node = Topology::npos;
  std::string what;
  if (!opt.root.empty()) {
    node = t.find(opt.root);
    what = "'" + opt.root + "'";
    if (node == Topology::npos)
      throw ConfigError(t.source, key, 0, "the DFS up*/down* root " + what + " is not a node of the fabric",
                        "name one of its switches, or leave the root out to take the most central switch");
  } else if (opt.root_node != Topology::npos) {
    node = opt.root_node;
    what = "node " + std::to_string(node);
    if (node >= t.nodes.size())
      throw ConfigError(t.source, key, 0,
                        "the DFS up*/down* root " + what + " is beyond the " + std::to_string(t.nodes.size()) +
                            " nodes of the fabric",
                        "give the index of one of its switches");
  } else {
    return Topology::npos;
  }
  if (g.sw_of_node[node] == Topology::npos)
    throw ConfigError(t.source, key, 0, "the DFS up*/down* root " + what + " is an endpoint, not a switch",
                      "give a switch as the root");
  return g.sw_of_node[node];
}

}  // namespace

DfsRanking dfs_rank_switches(const Topology& t, const DfsOptions& opt) {
  const SwitchGraph g = switch_graph(t);
  const uint32_t wanted = requested_root(t, g, opt);
  const size_t n = g.node.size();
  DfsRanking r;
  r.order.assign(t.nodes.size(), Topology::npos);
  r.depth.assign(t.nodes.size(), Topology::npos);
  r.parent.assign(t.nodes.size(), Topology::npos);
  // Each connected set of switches gets its own tree (a switch cabled to no other switch is
  // its own root), so a fabric split at the switch level still routes within its parts, as
  // updn and minhop do. Sets are taken in order of their lowest node index; preorder numbers
  // continue from one set to the next, so they stay unique.
  std::vector<bool> in_tree(n, false);
  std::vector<uint32_t> linked(n, 0);  // cables from each switch to switches already in the tree
  uint32_t next_number = 0;
  for (uint32_t first = 0; first < n; ++first) {
    if (in_tree[first]) continue;
    std::vector<uint32_t> members;
    bfs(g, first, &members);
    std::sort(members.begin(), members.end());
    uint32_t root = Topology::npos;
    if (wanted != Topology::npos && std::binary_search(members.begin(), members.end(), wanted)) {
      root = wanted;
    } else {
      // Least total distance to the other switches of the set, ties to the lowest index
      // (members are sorted and switch order is node order): one BFS per switch.
      uint64_t best = UINT64_MAX;
      for (uint32_t s : members) {
        const std::vector<uint32_t> d = bfs(g, s);
        uint64_t sum = 0;
        for (uint32_t m : members) sum += d[m];
        if (sum < best) best = sum, root = s;
      }
    }
    r.roots.push_back(g.node[root]);
    // Iterative DFS: the stack holds the path from the root to the switch being extended.
    auto enter = [&](uint32_t s, uint32_t parent, uint32_t depth) {
      in_tree[s] = true;
      r.order[g.node[s]] = next_number++;
      r.depth[g.node[s]] = depth;
      r.parent[g.node[s]] = parent == Topology::npos ? Topology::npos : g.node[parent];
      for (const Neighbour& nb : g.adj[s]) ++linked[nb.sw];
    };
    enter(root, Topology::npos, 0);
    std::vector<uint32_t> stack{root};
    while (!stack.empty()) {
      const uint32_t top = stack.back();
      uint32_t next = Topology::npos;
      for (const Neighbour& nb : g.adj[top]) {
        if (in_tree[nb.sw]) continue;
        if (next == Topology::npos || linked[nb.sw] > linked[next] ||
            (linked[nb.sw] == linked[next] && nb.sw < next))
          next = nb.sw;
      }
      if (next == Topology::npos) {
        stack.pop_back();
        continue;
      }
      enter(next, top, static_cast<uint32_t>(stack.size()));
      stack.push_back(next);
    }
  }
  return r;
}

RoutingTables DfsEngine::compute(const Topology& t) {
  ranking_ = dfs_rank_switches(t, opt_);
  const SwitchGraph g = switch_graph(t);
  const size_t n = g.node.size();

  RoutingTables rt;
  rt.engine = name();
  rt.lft.resize(t.nodes.size());
  const size_t lft_size = static_cast<size_t>(t.max_lid()) + 1;
  for (uint32_t s : g.node) rt.lft[s].port.assign(lft_size, Lft::kNoRoute);

  // pos[s]: DFS preorder number; a cable s -> c leads up exactly when pos[c] < pos[s].
  std::vector<uint32_t> pos(n);
  for (uint32_t i = 0; i < n; ++i) pos[i] = ranking_.order[g.node[i]];

  // Per destination switch D, the legal hop count of every switch S toward D and whether S's
  // route to D goes down only; the same search as updn.cpp (its comment has the argument).
  // Destination-based forwarding gives S one next hop toward D, whatever way a packet came
  // in; so if some switch routes down into S, S must go on down, or that packet would turn
  // down -> up (Sancho et al. ICPP 2001: the up*/down* paths a destination-based table can
  // hold). A level-by-level search from D over the reversed legal moves sets each switch
  // down-only (reached over a down cable from a down-only switch) or up-first (reached over
  // an up cable); reached both ways within one level, it is made down-only, which keeps its
  // hop count and lets more switches route into it. Every switch of D's set is reached:
  // every switch but the root has an up cable (to its DFS parent), so the argument of
  // updn.cpp holds with preorder numbers in place of (rank, GUID, index).
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
        // The search above guarantees a candidate (the switch's parent in it).
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

std::unique_ptr<RoutingEngine> make_dfs_engine(DfsOptions opt) { return std::make_unique<DfsEngine>(std::move(opt)); }

}  // namespace ibvp::sm
