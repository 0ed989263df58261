#include "platform/sm/multipath.h"

#include <algorithm>
#include <map>
#include <queue>
#include <tuple>

#include "platform/params/config_error.h"
#include "platform/sm/switch_graph.h"

namespace ibvp::sm {

namespace {

using topo::NodeKind;
using topo::PortRef;
using topo::Topology;

// Switch hops from `from` (kNone where unreachable), and the switches reached in BFS order.
std::vector<uint32_t> bfs(const ArcGraph& g, uint32_t from, std::vector<uint32_t>* order = nullptr) {
  std::vector<uint32_t> d(g.node.size(), kNone);
  std::vector<uint32_t> queue{from};
  d[from] = 0;
  for (size_t q = 0; q < queue.size(); ++q)
    for (uint32_t a : g.out[queue[q]])
      if (d[g.to[a]] == kNone) {
        d[g.to[a]] = d[queue[q]] + 1;
        queue.push_back(g.to[a]);
      }
  if (order) *order = std::move(queue);
  return d;
}

// The cycle basis in arcs, with the breadth-first trees it comes from.
struct ArcBasis {
  CycleBasis basis;
  std::vector<std::vector<uint32_t>> cycles;  // [cycle] -> arcs, in the cycle's orientation
};

ArcBasis arc_basis(const Topology& t, const ArcGraph& g, const MultipathOptions& opt) {
  const uint32_t wanted = requested_root(t, g.sw_of_node, opt.root, opt.root_node, "routing.multipath.root", "multipath");
  const size_t n = g.node.size();
  ArcBasis r;
  r.basis.switches = n;
  r.basis.cables = g.from.size() / 2;
  // seed 000 Algorithm 1: a breadth-first tree per connected set of switches; every cable off
  // the tree is a back edge and closes one cycle, so C = |E| - |V| + components.
  std::vector<uint32_t> parent_arc(n, kNone), depth(n, kNone);
  std::vector<bool> done(n, false);
  for (uint32_t first = 0; first < n; ++first) {
    if (done[first]) continue;
    std::vector<uint32_t> members;
    bfs(g, first, &members);
    std::sort(members.begin(), members.end());
    uint32_t root = kNone;
    if (wanted != kNone && std::binary_search(members.begin(), members.end(), wanted)) {
      root = wanted;
    } else {
      uint32_t best = kNone;
      for (uint32_t s : members) {
        const std::vector<uint32_t> d = bfs(g, s);
        uint32_t ecc = 0;
        for (uint32_t m : members) ecc = std::max(ecc, d[m]);
        if (ecc < best) best = ecc, root = s;
      }
    }
    std::vector<uint32_t> queue{root};
    depth[root] = 0;
    for (size_t q = 0; q < queue.size(); ++q)
      for (uint32_t a : g.out[queue[q]])
        if (depth[g.to[a]] == kNone) {
          depth[g.to[a]] = depth[queue[q]] + 1;
          parent_arc[g.to[a]] = a;
          queue.push_back(g.to[a]);
        }
    for (uint32_t m : members) done[m] = true;
    r.basis.roots.push_back(g.node[root]);
    ++r.basis.components;
  }

  // Back edges in order of (v, w, port at v), v the lower node index (switches are dense in
  // node order, so dense order is node order).
  std::vector<uint32_t> back;
  for (uint32_t a = 0; a < g.from.size(); ++a) {
    const bool tree = parent_arc[g.to[a]] == a || parent_arc[g.from[a]] == g.rev[a];
    if (!tree && g.from[a] < g.to[a]) back.push_back(a);
  }
  std::sort(back.begin(), back.end(), [&](uint32_t x, uint32_t y) {
    return std::make_tuple(g.from[x], g.to[x], g.port[x]) < std::make_tuple(g.from[y], g.to[y], g.port[y]);
  });
  // seed 000 Algorithm 2 and Fig. 4c: the cycle of back edge (v, w) is v -> w, then the tree
  // path from w up to the lowest common ancestor and down to v; with a breadth-first tree it
  // is the shortest cycle the tree closes through that edge.
  for (uint32_t a : back) {
    uint32_t x = g.to[a], y = g.from[a];
    std::vector<uint32_t> up, down;  // w -> ancestor, and (reversed) ancestor -> v
    while (x != y) {
      if (depth[x] >= depth[y]) {
        up.push_back(g.rev[parent_arc[x]]);
        x = g.from[parent_arc[x]];
      } else {
        down.push_back(parent_arc[y]);
        y = g.from[parent_arc[y]];
      }
    }
    std::vector<uint32_t> cycle{a};
    cycle.insert(cycle.end(), up.begin(), up.end());
    cycle.insert(cycle.end(), down.rbegin(), down.rend());
    std::vector<PortRef> ports;
    for (uint32_t c : cycle) ports.push_back({g.node[g.from[c]], g.port[c]});
    r.basis.cycles.push_back(std::move(ports));
    r.cycles.push_back(std::move(cycle));
  }
  return r;
}

// Per arc, the cycles it lies on, as (cycle, along the cycle's orientation) (Definition 1).
std::vector<std::vector<std::pair<uint32_t, bool>>> arc_cycle_lists(const ArcGraph& g, const ArcBasis& b) {
  std::vector<std::vector<std::pair<uint32_t, bool>>> lists(g.from.size());
  for (uint32_t i = 0; i < b.cycles.size(); ++i)
    for (uint32_t a : b.cycles[i]) {
      lists[a].push_back({i, true});
      lists[g.rev[a]].push_back({i, false});
    }
  return lists;
}

// Where a LID leaves the switch fabric: the switch it is reached through and the port there
// (0 for a switch's own LID: its management port); sw = kNone when it cannot be reached.
struct Exit {
  uint32_t sw = kNone;
  uint16_t port = 0;
};

Exit exit_of(const Topology& t, const ArcGraph& g, uint32_t owner) {
  if (t.nodes[owner].kind != NodeKind::endpoint) return {g.sw_of_node[owner], 0};
  if (t.link_at(owner, 1) < 0) return {};
  const PortRef att = t.peer(owner, 1);
  return {g.sw_of_node[att.node], att.port};  // kNone when cabled straight to another endpoint
}

// Lexicographic path cost: (penalty, hops).
using Cost = std::pair<uint32_t, uint32_t>;
constexpr Cost kUnreached{UINT32_MAX, UINT32_MAX};

// Least (penalty, hops) from every switch to `dst`, where taking arc a costs (penalty(a), 1):
// Dijkstra over the reversed arcs. Every hop adds one, so a route following decreasing costs
// never loops.
template <typename Penalty>
std::vector<Cost> costs_to(const ArcGraph& g, uint32_t dst, Penalty penalty) {
  std::vector<Cost> c(g.node.size(), kUnreached);
  using Item = std::tuple<uint32_t, uint32_t, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  c[dst] = {0, 0};
  heap.push({0, 0, dst});
  while (!heap.empty()) {
    const auto [p, h, x] = heap.top();
    heap.pop();
    if (Cost{p, h} != c[x]) continue;
    for (uint32_t r : g.out[x]) {
      const uint32_t a = g.rev[r];  // from g.to[r] into x
      const Cost via{p + penalty(a), h + 1};
      if (via < c[g.from[a]]) {
        c[g.from[a]] = via;
        heap.push({via.first, via.second, g.from[a]});
      }
    }
  }
  return c;
}

// Per-port balancing shared by both modes, as minhop: among equally good arcs, those the
// destination's other LIDs use least (by neighbour, then port), then the port carrying the
// fewest endpoint LIDs, then the lowest port.
struct Balancer {
  std::vector<std::vector<uint32_t>> load;  // [sw][port] endpoint LIDs routed through it
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> dest_port_use, dest_neighbour_use;

  uint32_t use(const std::map<std::pair<uint32_t, uint32_t>, uint32_t>& m, uint32_t s, uint32_t k) const {
    const auto it = m.find({s, k});
    return it == m.end() ? 0u : it->second;
  }
  // The best of `candidates` (arcs leaving switch s), or kNone when there is none.
  uint32_t pick(const ArcGraph& g, uint32_t s, const std::vector<uint32_t>& candidates) const {
    std::tuple<uint32_t, uint32_t, uint32_t, uint16_t> best{UINT32_MAX, 0, 0, 0};
    uint32_t best_arc = kNone;
    for (uint32_t a : candidates) {
      const std::tuple<uint32_t, uint32_t, uint32_t, uint16_t> score{
          use(dest_neighbour_use, s, g.to[a]), use(dest_port_use, s, g.port[a]), load[s][g.port[a]], g.port[a]};
      if (score < best) best = score, best_arc = a;
    }
    return best_arc;
  }
  void take(const ArcGraph& g, uint32_t a, bool spread, bool endpoint) {
    if (spread) {
      ++dest_neighbour_use[{g.from[a], g.to[a]}];
      ++dest_port_use[{g.from[a], g.port[a]}];
    }
    if (endpoint) ++load[g.from[a]][g.port[a]];
  }
};

// Writes one LID's routes: tree[s] is the arc switch s forwards on (kNone: no route).
void write_lid(const ArcGraph& g, RoutingTables& rt, uint16_t lid, const Exit& exit,
               const std::vector<uint32_t>& tree) {
  for (uint32_t s = 0; s < g.node.size(); ++s) {
    if (s == exit.sw) {
      rt.lft[g.node[s]].port[lid] = static_cast<uint8_t>(exit.port);
    } else if (tree[s] != kNone) {
      rt.lft[g.node[s]].port[lid] = static_cast<uint8_t>(g.port[tree[s]]);
    }
  }
}

// --- cycles mode --------------------------------------------------------------------------

void route_cycles(const Topology& t, const ArcGraph& g, const ArcBasis& basis, size_t lft_size,
                  RoutingTables& rt) {
  const size_t n = g.node.size();
  const uint32_t c = static_cast<uint32_t>(basis.cycles.size());
  if (c > Topology::kMaxLmc)
    throw ConfigError(t.source, "routing.multipath.mode", 0,
                      "the switch graph has " + std::to_string(c) +
                          " independent cycles (cables - switches + connected sets = " +
                          std::to_string(basis.basis.cables) + " - " + std::to_string(n) + " + " +
                          std::to_string(basis.basis.components) +
                          "); the cycles mode needs one path bit per cycle (seed 000 Sec. 3.2), so LMC " +
                          std::to_string(c) + ", but IBA allows at most LMC 7",
                      "use routing: multipath_adaptive (2 or 4 alternative outputs per destination at each "
                      "switch, any number of cycles; docs/routing.md), or mode: disjoint (routing: "
                      "multipath_disjoint), which routes the 2^LMC LIDs the endpoints have on link-disjoint paths");
  for (uint32_t e : t.endpoints())
    if (t.nodes[e].lmc < c)
      throw ConfigError(t.source, "routing.multipath.mode", 0,
                        "endpoint '" + t.nodes[e].name + "' has LMC " + std::to_string(t.nodes[e].lmc) +
                            ", but the cycles mode needs LMC " + std::to_string(c) + ": one path bit per independent "
                            "cycle of the switch graph (seed 000 Sec. 3.2)",
                        "give every endpoint lmc: " + std::to_string(c) + " (2^" + std::to_string(c) +
                            " LIDs each), or use mode: disjoint");

  const auto lists = arc_cycle_lists(g, basis);
  // Hops of arc a that disagree with path bits b: cycle i is bit c-1-i (C_1 most significant,
  // as seed 000 writes "1X" for C_1 = 1), 1 = along the cycle.
  auto disagreements = [&](uint32_t a, uint32_t bits) {
    uint32_t k = 0;
    for (const auto& [i, along] : lists[a]) k += (((bits >> (c - 1 - i)) & 1u) != 0) != along;
    return k;
  };
  const uint32_t patterns = 1u << c;
  std::vector<std::vector<std::vector<Cost>>> cost(n);  // [dst sw][bits][sw], filled on first use

  Balancer bal;
  bal.load.resize(n);
  for (uint32_t i = 0; i < n; ++i) bal.load[i].assign(static_cast<size_t>(t.nodes[g.node[i]].num_ports) + 1, 0);
  uint32_t current_dest = kNone;
  std::vector<uint32_t> tree(n), candidates;
  for (uint32_t lid = 1; lid < lft_size; ++lid) {
    const uint32_t owner = t.node_of_lid(static_cast<uint16_t>(lid));
    if (owner == kNone) continue;
    if (owner != current_dest) {
      current_dest = owner;
      bal.dest_port_use.clear();
      bal.dest_neighbour_use.clear();
    }
    const Exit exit = exit_of(t, g, owner);
    if (exit.sw == kNone) continue;
    const bool to_endpoint = t.nodes[owner].kind == NodeKind::endpoint;
    // The path bits are the low C bits of the DLID offset; a switch's LID takes path bits 0.
    const uint32_t bits = to_endpoint ? (lid - t.nodes[owner].lid) & (patterns - 1) : 0;
    if (cost[exit.sw].empty()) {
      cost[exit.sw].resize(patterns);
      for (uint32_t b = 0; b < patterns; ++b)
        cost[exit.sw][b] = costs_to(g, exit.sw, [&](uint32_t a) { return disagreements(a, b); });
    }
    const std::vector<Cost>& cs = cost[exit.sw][bits];
    for (uint32_t s = 0; s < n; ++s) {
      tree[s] = kNone;
      if (s == exit.sw || cs[s] == kUnreached) continue;
      candidates.clear();
      for (uint32_t a : g.out[s]) {
        const Cost& next = cs[g.to[a]];
        if (next != kUnreached && Cost{next.first + disagreements(a, bits), next.second + 1} == cs[s])
          candidates.push_back(a);
      }
      tree[s] = bal.pick(g, s, candidates);
      if (tree[s] != kNone) bal.take(g, tree[s], t.nodes[owner].lmc > 0, to_endpoint);
    }
    write_lid(g, rt, static_cast<uint16_t>(lid), exit, tree);
  }
}

// --- disjoint mode ------------------------------------------------------------------------

// Routes the 2^LMC LIDs of one destination: trees[k][s] is the arc switch s takes for LID k.
class DisjointTrees {
 public:
  DisjointTrees(const ArcGraph& g, const std::vector<uint32_t>& weight, uint32_t dst)
      : g_(g), weight_(weight), dst_(dst), uses_(g.from.size(), 0) {}

  // Adds tree k = trees.size(): the first a shortest-path tree, the later ones avoiding the
  // channels of the earlier trees, then improved by local moves (header comment).
  void add(Balancer& bal) {
    const size_t n = g_.node.size();
    const size_t k = trees_.size();
    std::vector<uint32_t> reuse(g_.from.size(), 0);
    for (const std::vector<uint32_t>& tr : trees_)
      for (uint32_t s = 0; s < n; ++s)
        if (tr[s] != kNone) ++reuse[tr[s]];
    const std::vector<Cost> cs = costs_to(g_, dst_, [&](uint32_t a) { return reuse[a]; });
    std::vector<uint32_t> tree(n, kNone), candidates;
    for (uint32_t s = 0; s < n; ++s) {
      if (s == dst_ || cs[s] == kUnreached) continue;
      candidates.clear();
      for (uint32_t a : g_.out[s]) {
        const Cost& next = cs[g_.to[a]];
        if (next != kUnreached && Cost{next.first + reuse[a], next.second + 1} == cs[s]) candidates.push_back(a);
      }
      tree[s] = bal.pick(g_, s, candidates);
    }
    trees_.push_back(std::move(tree));
    if (k > 0) improve(k);
  }

  const std::vector<uint32_t>& tree(size_t k) const { return trees_[k]; }

 private:
  // Children lists and hop counts of tree k.
  void shape(size_t k) {
    const size_t n = g_.node.size();
    const std::vector<uint32_t>& tr = trees_[k];
    children_.assign(n, {});
    hops_.assign(n, kNone);
    for (uint32_t s = 0; s < n; ++s)
      if (tr[s] != kNone) children_[g_.to[tr[s]]].push_back(s);
    order_ = {dst_};
    hops_[dst_] = 0;
    for (size_t q = 0; q < order_.size(); ++q)
      for (uint32_t ch : children_[order_[q]]) {
        hops_[ch] = hops_[order_[q]] + 1;
        order_.push_back(ch);
      }
  }

  // Local search on tree k: switch u moves to another next hop v (not below u, so no loop)
  // when that lowers, over the sources below u, the weighted (channels shared with the
  // source's routes to the earlier LIDs, hops) -- shared channels first. Only the sources
  // whose route passes u change, and only after u, so the sum is taken over those suffixes.
  void improve(size_t k) {
    const size_t n = g_.node.size();
    std::vector<uint32_t>& tr = trees_[k];
    const uint64_t big = n + 1;  // for one source, a shared channel outweighs any detour
    std::vector<uint32_t> below_stamp(n, 0), sub, candidates;
    std::vector<uint64_t> total;
    uint32_t below = 0;
    const size_t max_rounds = 2 * n + 2;
    for (size_t round = 0; round < max_rounds; ++round) {
      bool moved = false;
      shape(k);
      const std::vector<uint32_t> order(order_.rbegin(), order_.rend());  // farthest first
      for (uint32_t u : order) {
        if (u == dst_ || tr[u] == kNone) continue;
        // The switches whose route passes u (u included).
        ++below;
        sub = {u};
        below_stamp[u] = below;
        for (size_t q = 0; q < sub.size(); ++q)
          for (uint32_t ch : children_[sub[q]]) below_stamp[ch] = below, sub.push_back(ch);
        candidates.clear();
        for (uint32_t a : g_.out[u])
          if (below_stamp[g_.to[a]] != below && (g_.to[a] == dst_ || tr[g_.to[a]] != kNone)) candidates.push_back(a);
        if (candidates.size() < 2) continue;
        total.assign(candidates.size(), 0);
        for (uint32_t s : sub) {
          if (weight_[s] == 0) continue;
          // uses_[a]: how many of s's routes to the earlier LIDs take channel a.
          touched_.clear();
          for (size_t j = 0; j < k; ++j)
            for (uint32_t x = s; x != dst_ && trees_[j][x] != kNone; x = g_.to[trees_[j][x]]) {
              if (uses_[trees_[j][x]]++ == 0) touched_.push_back(trees_[j][x]);
            }
          for (size_t c = 0; c < candidates.size(); ++c) {
            const uint32_t a = candidates[c];
            uint64_t shared = uses_[a];
            for (uint32_t x = g_.to[a]; x != dst_; x = g_.to[tr[x]]) shared += uses_[tr[x]];
            total[c] += weight_[s] * (shared * big + 1 + hops_[g_.to[a]]);
          }
          for (uint32_t a : touched_) uses_[a] = 0;
        }
        size_t best = 0, current = 0;
        for (size_t c = 0; c < candidates.size(); ++c) {
          if (candidates[c] == tr[u]) current = c;
          if (total[c] < total[best]) best = c;
        }
        if (total[best] < total[current]) {
          tr[u] = candidates[best];
          moved = true;
          shape(k);
        }
      }
      if (!moved) break;
    }
  }

  const ArcGraph& g_;
  const std::vector<uint32_t>& weight_;
  uint32_t dst_;
  std::vector<std::vector<uint32_t>> trees_;
  std::vector<std::vector<uint32_t>> children_;
  std::vector<uint32_t> hops_, order_;
  std::vector<uint32_t> uses_, touched_;
};

void route_disjoint(const Topology& t, const ArcGraph& g, RoutingTables& rt) {
  const size_t n = g.node.size();
  Balancer bal;
  bal.load.resize(n);
  for (uint32_t i = 0; i < n; ++i) bal.load[i].assign(static_cast<size_t>(t.nodes[g.node[i]].num_ports) + 1, 0);
  // Sources by switch: the endpoints cabled to it.
  std::vector<uint32_t> hosts(n, 0);
  for (uint32_t e : t.endpoints()) {
    const Exit x = exit_of(t, g, e);
    if (x.sw != kNone) ++hosts[x.sw];
  }
  for (uint32_t owner = 0; owner < t.nodes.size(); ++owner) {
    const topo::Node& node = t.nodes[owner];
    if (node.lid == 0) continue;
    const Exit exit = exit_of(t, g, owner);
    if (exit.sw == kNone) continue;
    const bool to_endpoint = node.kind == NodeKind::endpoint;
    const uint32_t lids = 1u << std::min<uint8_t>(node.lmc, Topology::kMaxLmc);
    // The destination's own switch-mates do not use the trees; nor does the destination.
    std::vector<uint32_t> weight = hosts;
    if (to_endpoint) --weight[exit.sw];
    bal.dest_port_use.clear();
    bal.dest_neighbour_use.clear();
    DisjointTrees trees(g, weight, exit.sw);
    for (uint32_t k = 0; k < lids; ++k) {
      // A switch's LIDs all take the shortest path.
      if (to_endpoint || k == 0) trees.add(bal);
      const std::vector<uint32_t>& tree = trees.tree(to_endpoint ? k : 0);
      for (uint32_t s = 0; s < n; ++s)
        if (tree[s] != kNone) bal.take(g, tree[s], lids > 1, to_endpoint);
      write_lid(g, rt, static_cast<uint16_t>(node.lid + k), exit, tree);
    }
  }
}

// --- adaptive mode ------------------------------------------------------------------------

// The first alternative of each (switch, destination) is a shortest-path hop, balanced as
// minhop balances; the others are the remaining hops that descend in (switch hops to the
// destination's switch, dense switch index), ordered by those hops, then port. Every hop of
// every alternative descends in that order, so a packet choosing anew at each switch can
// never loop and reaches its destination within as many hops as there are switches.
void route_adaptive(const Topology& t, const ArcGraph& g, size_t lft_size, RoutingTables& rt) {
  const size_t n = g.node.size();
  rt.alternatives.resize(t.nodes.size());
  for (uint32_t s : g.node) rt.alternatives[s].entry.assign(lft_size, {});
  Balancer bal;
  bal.load.resize(n);
  for (uint32_t i = 0; i < n; ++i) bal.load[i].assign(static_cast<size_t>(t.nodes[g.node[i]].num_ports) + 1, 0);
  std::vector<std::vector<uint32_t>> dist(n);  // [exit switch][switch], filled on first use
  std::vector<uint32_t> shortest, others;
  for (uint32_t owner = 0; owner < t.nodes.size(); ++owner) {
    const topo::Node& node = t.nodes[owner];
    if (node.lid == 0) continue;
    const Exit exit = exit_of(t, g, owner);
    if (exit.sw == kNone) continue;
    const bool to_endpoint = node.kind == NodeKind::endpoint;
    // Every LID of the destination gets the same entries: the choice is the switch's.
    const uint32_t lids = 1u << std::min<uint8_t>(node.lmc, Topology::kMaxLmc);
    if (dist[exit.sw].empty()) dist[exit.sw] = bfs(g, exit.sw);
    const std::vector<uint32_t>& d = dist[exit.sw];
    bal.dest_port_use.clear();
    bal.dest_neighbour_use.clear();
    for (uint32_t s = 0; s < n; ++s) {
      sw::AltTable::Entry e;
      if (s == exit.sw) {
        e.port[0] = static_cast<uint8_t>(exit.port);
        e.count = 1;
      } else if (d[s] != kNone) {
        shortest.clear();
        others.clear();
        for (uint32_t a : g.out[s])
          if (d[g.to[a]] + 1 == d[s]) shortest.push_back(a);
        const uint32_t first = bal.pick(g, s, shortest);
        bal.take(g, first, false, to_endpoint);
        for (uint32_t a : g.out[s])
          if (a != first && std::make_pair(d[g.to[a]], g.to[a]) < std::make_pair(d[s], s)) others.push_back(a);
        std::sort(others.begin(), others.end(), [&](uint32_t x, uint32_t y) {
          return std::make_pair(d[g.to[x]], g.port[x]) < std::make_pair(d[g.to[y]], g.port[y]);
        });
        // seed 000 Sec. 5.1: 2^k entries per destination (k = 0, 1, 2); a third hop is left out.
        const size_t have = std::min<size_t>(1 + others.size(), sw::AltTable::kMaxAlternatives);
        e.count = static_cast<uint8_t>(have >= 4 ? 4 : have >= 2 ? 2 : 1);
        e.port[0] = static_cast<uint8_t>(g.port[first]);
        for (uint8_t i = 1; i < e.count; ++i) e.port[i] = static_cast<uint8_t>(g.port[others[i - 1]]);
      } else {
        continue;
      }
      for (uint32_t k = 0; k < lids; ++k) {
        const uint32_t lid = node.lid + k;
        if (lid >= lft_size) break;
        rt.lft[g.node[s]].port[lid] = e.port[0];
        rt.alternatives[g.node[s]].entry[lid] = e;
      }
    }
  }
}

}  // namespace

MultipathMode parse_multipath_mode(const std::string& text) {
  if (text == "cycles") return MultipathMode::cycles;
  if (text == "disjoint") return MultipathMode::disjoint;
  if (text == "adaptive") return MultipathMode::adaptive;
  throw ConfigError("", "routing.multipath.mode", 0, "unknown multipath mode '" + text + "'",
                    "use cycles (seed 000 path bits, one per cycle of the fabric), disjoint (link-disjoint "
                    "paths for the LMC the endpoints have) or adaptive (2 or 4 alternative outputs per "
                    "destination at each switch)");
}

std::vector<std::pair<uint32_t, bool>> CycleBasis::cycle_list(const Topology& t, PortRef send) const {
  const PortRef recv = t.peer(send.node, send.port);
  std::vector<std::pair<uint32_t, bool>> out;
  for (uint32_t i = 0; i < cycles.size(); ++i)
    for (const PortRef& hop : cycles[i]) {
      if (hop == send) out.push_back({i, true});
      if (hop == recv) out.push_back({i, false});
    }
  return out;
}

std::string CycleBasis::path_bits(const Topology& t, const std::vector<PortRef>& hops) const {
  // Per cycle: the orientations the hops give it, from hops on it alone and from hops shared
  // with other cycles (Definition 2 treats the two differently).
  enum : uint8_t { kAlong = 1, kAgainst = 2 };
  std::vector<uint8_t> alone(cycles.size(), 0), shared(cycles.size(), 0);
  for (const PortRef& h : hops) {
    const auto list = cycle_list(t, h);
    for (const auto& [i, along] : list) (list.size() == 1 ? alone : shared)[i] |= along ? kAlong : kAgainst;
  }
  std::string bits;
  for (uint32_t i = 0; i < cycles.size(); ++i) {
    const uint8_t a = alone[i], s = shared[i];
    if (a == (kAlong | kAgainst)) return "";  // two single-cycle hops disagree: not defined
    const uint8_t o = a != 0 ? a : s;         // a single-cycle hop wins
    bits += o == kAlong ? '1' : o == kAgainst ? '0' : 'X';
  }
  return bits;
}

CycleBasis find_cycles(const Topology& t, const MultipathOptions& opt) {
  const ArcGraph g = arc_graph(t);
  return arc_basis(t, g, opt).basis;
}

RoutingTables MultipathEngine::compute(const Topology& t) {
  const ArcGraph g = arc_graph(t);
  RoutingTables rt;
  rt.engine = name();
  rt.lft.resize(t.nodes.size());
  const size_t lft_size = static_cast<size_t>(t.max_lid()) + 1;
  for (uint32_t s : g.node) rt.lft[s].port.assign(lft_size, Lft::kNoRoute);
  basis_ = {};
  if (opt_.mode == MultipathMode::cycles) {
    const ArcBasis basis = arc_basis(t, g, opt_);
    basis_ = basis.basis;
    route_cycles(t, g, basis, lft_size, rt);
  } else if (opt_.mode == MultipathMode::adaptive) {
    basis_ = arc_basis(t, g, opt_).basis;
    route_adaptive(t, g, lft_size, rt);
  } else {
    route_disjoint(t, g, rt);
  }
  return rt;
}

std::unique_ptr<RoutingEngine> make_multipath_engine(MultipathOptions opt) {
  return std::make_unique<MultipathEngine>(std::move(opt));
}

}  // namespace ibvp::sm
