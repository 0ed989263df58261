#include "platform/sm/dfs.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "platform/params/config_error.h"
#include "platform/sm/switch_graph.h"
#include "platform/sm/updown_tables.h"

namespace ibvp::sm {

using topo::Topology;

DfsRanking dfs_rank_switches(const Topology& t, const DfsOptions& opt) {
  const SwitchGraph g = switch_graph(t);
  const uint32_t wanted = requested_root(t, g.sw_of_node, opt.root, opt.root_node, "routing.dfs.root", "DFS up*/down*");
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

  // pos[s]: DFS preorder number; a cable s -> c leads up exactly when pos[c] < pos[s].
  std::vector<uint32_t> pos(n);
  for (uint32_t i = 0; i < n; ++i) pos[i] = ranking_.order[g.node[i]];

  return updown_tables(t, g, pos, name());
}

std::unique_ptr<RoutingEngine> make_dfs_engine(DfsOptions opt) { return std::make_unique<DfsEngine>(std::move(opt)); }

}  // namespace ibvp::sm
