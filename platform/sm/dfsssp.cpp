#include "platform/sm/dfsssp.h"

#include <algorithm>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "platform/params/config_error.h"
#include "platform/sm/switch_graph.h"

namespace ibvp::sm {

namespace {

using topo::NodeKind;
using topo::PortRef;
using topo::Topology;

// The paths of the layering: one per (source switch, DLID) with at least one channel between
// switches; their channels and the dependencies (consecutive channel pairs) they induce.
struct Paths {
  std::vector<uint32_t> source;   // [path] source switch
  std::vector<uint16_t> dlid;     // [path]
  std::vector<uint32_t> begin;    // [path] -> first dependency in `deps`; [paths] = end
  std::vector<uint32_t> deps;     // dependency indices, path after path
  std::vector<uint8_t> layer;     // [path]
  // Dependencies: channel a -> channel b, and the paths inducing each.
  std::vector<uint32_t> dep_from, dep_to;
  std::vector<std::vector<uint32_t>> dep_paths;
  std::vector<std::vector<uint32_t>> succ;  // [arc] -> dependencies leaving it
};

// Domke et al. Sec. IV: breaks every cycle of layer l's dependency graph by moving the paths
// of the cycle's weakest dependency to layer l + 1. Returns the dependencies removed.
uint32_t make_layer_acyclic(Paths& p, uint8_t l) {
  const size_t arcs = p.succ.size();
  // Paths of layer l inducing each dependency.
  std::vector<uint32_t> count(p.dep_from.size(), 0);
  for (size_t q = 0; q + 1 < p.begin.size(); ++q)
    if (p.layer[q] == l)
      for (uint32_t i = p.begin[q]; i < p.begin[q + 1]; ++i) ++count[p.deps[i]];

  enum : uint8_t { kWhite, kGray, kBlack };
  std::vector<uint8_t> colour(arcs, kWhite);
  std::vector<uint32_t> stack_pos(arcs, kNone);
  struct Frame {
    uint32_t arc;
    uint32_t next;     // index into succ[arc]
    uint32_t via_dep;  // dependency that led here (kNone for the start)
  };
  std::vector<Frame> stack;
  uint32_t removed = 0;
  // Depth-first search. Removing dependencies cannot create a cycle, so a channel found
  // without one (black) stays so; after a cycle is broken the gray channels are searched again.
  for (uint32_t start = 0; start < arcs; ++start) {
    if (colour[start] != kWhite) continue;
    stack.push_back({start, 0, kNone});
    colour[start] = kGray;
    stack_pos[start] = 0;
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next == p.succ[f.arc].size()) {
        colour[f.arc] = kBlack;
        stack_pos[f.arc] = kNone;
        stack.pop_back();
        continue;
      }
      const uint32_t d = p.succ[f.arc][f.next++];
      if (count[d] == 0) continue;
      const uint32_t w = p.dep_to[d];
      if (colour[w] == kWhite) {
        colour[w] = kGray;
        stack_pos[w] = static_cast<uint32_t>(stack.size());
        stack.push_back({w, 0, d});
        continue;
      }
      if (colour[w] == kBlack) continue;
      // A cycle: the dependencies from w's frame up the stack, then d. Its weakest
      // dependency (fewest paths of this layer; the first such on ties) goes.
      uint32_t weakest = d;
      for (size_t i = stack_pos[w] + 1; i < stack.size(); ++i)
        if (count[stack[i].via_dep] < count[weakest]) weakest = stack[i].via_dep;
      for (uint32_t q : p.dep_paths[weakest]) {
        if (p.layer[q] != l) continue;
        p.layer[q] = static_cast<uint8_t>(l + 1);
        for (uint32_t i = p.begin[q]; i < p.begin[q + 1]; ++i) --count[p.deps[i]];
      }
      ++removed;
      // Search the unfinished part again from the start channel.
      for (const Frame& fr : stack) {
        colour[fr.arc] = kWhite;
        stack_pos[fr.arc] = kNone;
      }
      stack.clear();
      stack.push_back({start, 0, kNone});
      colour[start] = kGray;
      stack_pos[start] = 0;
    }
  }
  return removed;
}

}  // namespace

RoutingTables DfssspEngine::compute(const Topology& t) {
  report_ = {};
  if (opt_.max_vls < 1 || opt_.max_vls > 15)
    throw ConfigError(t.source, "routing.dfsssp.max_vls", 0,
                      "dfsssp may use " + std::to_string(opt_.max_vls) + " VLs", "give 1..15 (IBA data VLs VL0..VL14)");
  const ArcGraph g = arc_graph(t);
  const size_t n = g.node.size();
  const size_t arcs = g.from.size();

  RoutingTables rt;
  rt.engine = name();
  rt.lft.resize(t.nodes.size());
  const size_t lft_size = static_cast<size_t>(t.max_lid()) + 1;
  for (uint32_t s : g.node) rt.lft[s].port.assign(lft_size, Lft::kNoRoute);

  // Sources behind each switch: its own LIDs and its endpoints (with their LIDs).
  std::vector<uint64_t> lids_behind(n, 0);
  std::vector<std::vector<uint32_t>> endpoints_on(n);
  std::vector<uint32_t> exit_sw(t.nodes.size(), kNone);  // [node] switch its LIDs are reached at
  std::vector<uint16_t> exit_port(t.nodes.size(), 0);
  for (uint32_t v = 0; v < t.nodes.size(); ++v) {
    const uint64_t lids = uint64_t{1} << std::min<uint8_t>(t.nodes[v].lmc, Topology::kMaxLmc);
    if (t.nodes[v].kind == NodeKind::switch_node) {
      exit_sw[v] = g.sw_of_node[v];
      lids_behind[g.sw_of_node[v]] += lids;
    } else if (t.link_at(v, 1) >= 0) {
      const PortRef att = t.peer(v, 1);
      if (g.sw_of_node[att.node] == kNone) continue;  // cabled straight to another endpoint
      exit_sw[v] = g.sw_of_node[att.node];
      exit_port[v] = att.port;
      lids_behind[exit_sw[v]] += lids;
      endpoints_on[exit_sw[v]].push_back(v);
    }
  }

  // 1. SSSP, destination LID by destination LID.
  std::vector<uint64_t> weight(arcs, 0);
  std::vector<uint32_t> hops(n), next(n), order;
  std::vector<uint64_t> wsum(n), flow(n);
  using Item = std::tuple<uint32_t, uint64_t, uint32_t>;
  for (uint32_t lid = 1; lid < lft_size; ++lid) {
    const uint32_t owner = t.node_of_lid(static_cast<uint16_t>(lid));
    if (owner == kNone || exit_sw[owner] == kNone) continue;
    const uint32_t dst = exit_sw[owner];
    std::fill(hops.begin(), hops.end(), kNone);
    std::fill(wsum.begin(), wsum.end(), UINT64_MAX);
    std::fill(next.begin(), next.end(), kNone);
    order.clear();
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
    hops[dst] = 0;
    wsum[dst] = 0;
    heap.push({0, 0, dst});
    while (!heap.empty()) {
      const auto [h, w, x] = heap.top();
      heap.pop();
      if (h != hops[x] || w != wsum[x]) continue;
      order.push_back(x);  // settled, nearest first
      for (uint32_t r : g.out[x]) {
        const uint32_t a = g.rev[r];  // the channel from g.to[r] into x
        const uint32_t y = g.from[a];
        if (std::make_pair(h + 1, w + weight[a]) < std::make_pair(hops[y], wsum[y])) {
          hops[y] = h + 1;
          wsum[y] = w + weight[a];
          heap.push({hops[y], wsum[y], y});
        }
      }
    }
    // Each switch's next hop: the (hops, weight)-least channel, the lowest port on ties; a
    // route follows strictly decreasing hops, so it cannot loop.
    for (uint32_t s = 0; s < n; ++s) {
      if (s == dst || hops[s] == kNone) continue;
      for (uint32_t a : g.out[s]) {
        const uint32_t y = g.to[a];
        if (hops[y] != kNone && hops[y] + 1 == hops[s] && wsum[y] + weight[a] == wsum[s]) {
          next[s] = a;
          break;
        }
      }
      rt.lft[g.node[s]].port[lid] = static_cast<uint8_t>(g.port[next[s]]);
    }
    rt.lft[g.node[dst]].port[lid] = static_cast<uint8_t>(exit_port[owner]);
    // Every channel gains the LIDs sourced behind it (OpenSM update_weights): farthest switch
    // first, each passes on what reaches it.
    std::fill(flow.begin(), flow.end(), 0);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const uint32_t s = *it;
      if (s == dst) continue;
      flow[s] += lids_behind[s];
      weight[next[s]] += flow[s];
      flow[g.to[next[s]]] += flow[s];
    }
  }

  // 2. Layers: the paths with a switch-to-switch channel and their dependencies.
  Paths p;
  p.succ.resize(arcs);
  p.begin.push_back(0);
  std::unordered_map<uint64_t, uint32_t> dep_index;
  for (uint32_t lid = 1; lid < lft_size; ++lid) {
    const uint32_t owner = t.node_of_lid(static_cast<uint16_t>(lid));
    if (owner == kNone || exit_sw[owner] == kNone) continue;
    for (uint32_t s = 0; s < n; ++s) {
      if (s == exit_sw[owner]) continue;
      const uint8_t port0 = rt.lft[g.node[s]].port[lid];
      if (port0 == Lft::kNoRoute) continue;
      uint32_t a = g.arc_at[s][port0];
      const uint32_t q = static_cast<uint32_t>(p.source.size());
      while (g.to[a] != exit_sw[owner]) {
        const uint32_t b = g.arc_at[g.to[a]][rt.lft[g.node[g.to[a]]].port[lid]];
        const uint64_t key = uint64_t{a} * arcs + b;
        auto [it, fresh] = dep_index.try_emplace(key, static_cast<uint32_t>(p.dep_from.size()));
        if (fresh) {
          p.dep_from.push_back(a);
          p.dep_to.push_back(b);
          p.dep_paths.emplace_back();
          p.succ[a].push_back(it->second);
        }
        p.dep_paths[it->second].push_back(q);
        p.deps.push_back(it->second);
        a = b;
      }
      p.source.push_back(s);
      p.dlid.push_back(static_cast<uint16_t>(lid));
      p.layer.push_back(0);
      p.begin.push_back(static_cast<uint32_t>(p.deps.size()));
    }
  }
  // Layer l + 1 only receives paths while layer l is worked on; a layer of one path is
  // acyclic (a shortest path uses a channel once), so this ends.
  uint8_t top = 0;
  for (uint32_t l = 0; l <= top; ++l) {
    report_.dependencies_removed += make_layer_acyclic(p, static_cast<uint8_t>(l));
    for (uint8_t x : p.layer) top = std::max(top, x);
    if (top == 255) break;  // a layer index must fit the SL byte; far beyond any VL count
  }
  report_.layers = static_cast<uint32_t>(top) + 1;

  // SLs: every source node behind a path's switch takes its layer; the rest stay on 0.
  rt.path_sl.assign(t.nodes.size(), std::vector<uint8_t>(lft_size, 0));
  for (size_t q = 0; q < p.source.size(); ++q) {
    rt.path_sl[g.node[p.source[q]]][p.dlid[q]] = p.layer[q];
    for (uint32_t e : endpoints_on[p.source[q]]) rt.path_sl[e][p.dlid[q]] = p.layer[q];
  }
  report_.paths_per_layer.assign(report_.layers, 0);
  for (uint32_t lid = 1; lid < lft_size; ++lid) {
    const uint32_t owner = t.node_of_lid(static_cast<uint16_t>(lid));
    if (owner == kNone || exit_sw[owner] == kNone) continue;
    for (uint32_t src = 0; src < t.nodes.size(); ++src) {
      const uint32_t s = exit_sw[src];
      if (src == owner || s == kNone) continue;
      if (s == exit_sw[owner] || rt.lft[g.node[s]].port[lid] != Lft::kNoRoute)
        ++report_.paths_per_layer[rt.path_sl[src][lid]];
    }
  }

  if (report_.layers > opt_.max_vls)
    throw ConfigError(t.source, "routing.dfsssp.max_vls", 0,
                      "dfsssp needs " + std::to_string(report_.layers) +
                          " VLs to make the shortest paths of this fabric deadlock-free (one per layer, Domke et al. "
                          "2011 Sec. IV), but may use " + std::to_string(opt_.max_vls),
                      "raise max_vls to " + std::to_string(report_.layers) +
                          " (at most 15, and the ports must support that many data VLs), or use updn");
  return rt;
}

std::unique_ptr<RoutingEngine> make_dfsssp_engine(DfssspOptions opt) { return std::make_unique<DfssspEngine>(opt); }

}  // namespace ibvp::sm
