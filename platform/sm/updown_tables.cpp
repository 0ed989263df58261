#include "platform/sm/updown_tables.h"

#include <map>
#include <tuple>

namespace ibvp::sm {

using topo::NodeKind;
using topo::Topology;

namespace {
constexpr uint16_t kUnreachable = 0xFFFF;
}  // namespace

RoutingTables updown_tables(const Topology& t, const SwitchGraph& g, const std::vector<uint32_t>& pos,
                            const char* engine) {
  const size_t n = g.node.size();
  RoutingTables rt;
  rt.engine = engine;
  rt.lft.resize(t.nodes.size());
  const size_t lft_size = static_cast<size_t>(t.max_lid()) + 1;
  for (uint32_t s : g.node) rt.lft[s].port.assign(lft_size, Lft::kNoRoute);

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

}  // namespace ibvp::sm
