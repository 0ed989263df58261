#include "platform/sm/updn.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "platform/params/config_error.h"
#include "platform/sm/switch_graph.h"
#include "platform/sm/updown_tables.h"

namespace ibvp::sm {

using topo::Topology;

bool UpDownRanking::is_up(const Topology& t, uint32_t from, uint32_t to) const {
  return std::make_tuple(rank[to], t.nodes[to].guid, to) < std::make_tuple(rank[from], t.nodes[from].guid, from);
}

UpDownRanking rank_switches(const Topology& t, const UpDownOptions& opt) {
  const SwitchGraph g = switch_graph(t);
  const uint32_t wanted = requested_root(t, g.sw_of_node, opt.root, opt.root_node, "routing.updn.root", "up*/down*");
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

  return updown_tables(t, g, pos, name());
}

std::unique_ptr<RoutingEngine> make_updn_engine(UpDownOptions opt) {
  return std::make_unique<UpDownEngine>(std::move(opt));
}

}  // namespace ibvp::sm
