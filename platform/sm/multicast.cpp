#include "platform/sm/multicast.h"

#include <algorithm>
#include <string>
#include <tuple>

#include "platform/params/config_error.h"
#include "platform/sm/switch_graph.h"

namespace ibvp::sm {

namespace {

using topo::NodeKind;
using topo::PortRef;
using topo::Topology;

struct Cable {
  uint16_t port;       // port of this switch
  uint32_t sw;         // index into the switch list
  uint16_t far_port;   // port of the neighbour
};

// The switch graph and where the endpoints hang, in switch-list indices.
struct CableGraph {
  std::vector<uint32_t> switches;                 // [switch index] -> node
  std::vector<uint32_t> sw_of_node;               // [node] -> switch index or kNone
  std::vector<std::vector<Cable>> adj;            // in port order
  std::vector<uint32_t> attach_sw;                // [node] endpoint's switch index or kNone
  std::vector<uint16_t> attach_port;              // [node] port of that switch
  std::vector<std::vector<uint32_t>> dist_cache;  // [switch index] hops from it, when computed

  explicit CableGraph(const Topology& t) : switches(t.switches()) {
    sw_of_node.assign(t.nodes.size(), kNone);
    for (uint32_t i = 0; i < switches.size(); ++i) sw_of_node[switches[i]] = i;
    adj.resize(switches.size());
    dist_cache.resize(switches.size());
    // Loopback cables lead nowhere new and are left out, as in minhop.
    for (uint32_t i = 0; i < switches.size(); ++i)
      for (uint16_t p = 1; p <= t.nodes[switches[i]].num_ports; ++p) {
        if (t.link_at(switches[i], p) < 0) continue;
        const PortRef far = t.peer(switches[i], p);
        if (far.node != switches[i] && sw_of_node[far.node] != kNone) adj[i].push_back({p, sw_of_node[far.node], far.port});
      }
    attach_sw.assign(t.nodes.size(), kNone);
    attach_port.assign(t.nodes.size(), 0);
    for (uint32_t e : t.endpoints()) {
      if (t.link_at(e, 1) < 0) continue;
      const PortRef far = t.peer(e, 1);
      if (sw_of_node[far.node] == kNone) continue;  // cabled straight to another endpoint
      attach_sw[e] = sw_of_node[far.node];
      attach_port[e] = far.port;
    }
  }

  // Switch hops from `from` to every switch (kNone across islands).
  const std::vector<uint32_t>& dist(uint32_t from) {
    std::vector<uint32_t>& d = dist_cache[from];
    if (!d.empty()) return d;
    d.assign(switches.size(), kNone);
    d[from] = 0;
    std::vector<uint32_t> queue{from};
    for (size_t q = 0; q < queue.size(); ++q)
      for (const Cable& nb : adj[queue[q]])
        if (d[nb.sw] == kNone) {
          d[nb.sw] = d[queue[q]] + 1;
          queue.push_back(nb.sw);
        }
    return d;
  }
};

// A tree of switches: each switch but the root knows its parent and the port towards it (up),
// and the ports to its children (down).
struct TreeShape {
  std::vector<uint32_t> order;  // switch indices on the tree by distance from the root
  std::vector<bool> on;
  std::vector<uint32_t> parent;
  std::vector<uint16_t> up_port;
  std::vector<std::vector<std::pair<uint16_t, uint32_t>>> down;  // (port, child)
  uint32_t links = 0;
};

// Shortest-path tree from `root` reaching every switch in `terminals` (seed 000 Sec. 3.6:
// source-based distribution tree, pruned to the switches with members). Terminals are grafted
// nearest first; each climbs towards the root over neighbours one hop closer, preferring one
// already on the tree so that branches merge early (fewer cables, fewer copies), then the
// lowest port. Every switch keeps exactly one up port, so the tree has no cycle.
TreeShape grow_tree(CableGraph& g, uint32_t root, std::vector<uint32_t> terminals) {
  const size_t n = g.switches.size();
  TreeShape tree;
  tree.on.assign(n, false);
  tree.parent.assign(n, kNone);
  tree.up_port.assign(n, 0);
  tree.down.resize(n);
  tree.on[root] = true;
  tree.order.push_back(root);
  const std::vector<uint32_t>& d = g.dist(root);
  std::sort(terminals.begin(), terminals.end(), [&d](uint32_t a, uint32_t b) { return std::tie(d[a], a) < std::tie(d[b], b); });
  terminals.erase(std::unique(terminals.begin(), terminals.end()), terminals.end());
  for (uint32_t x : terminals) {
    if (d[x] == kNone) continue;
    while (!tree.on[x]) {
      const Cable* pick = nullptr;
      for (const Cable& nb : g.adj[x]) {
        if (d[nb.sw] + 1 != d[x]) continue;
        if (pick == nullptr || (tree.on[nb.sw] && !tree.on[pick->sw])) pick = &nb;
      }
      // d[x] > 0 and finite, so a neighbour one hop closer exists.
      tree.on[x] = true;
      tree.order.push_back(x);
      tree.parent[x] = pick->sw;
      tree.up_port[x] = pick->port;
      tree.down[pick->sw].push_back({pick->far_port, x});
      ++tree.links;
      x = pick->sw;
    }
  }
  // Every tree cable joins distances d and d + 1: ordered by distance, parents come first.
  std::sort(tree.order.begin(), tree.order.end(), [&d](uint32_t a, uint32_t b) { return std::tie(d[a], a) < std::tie(d[b], b); });
  return tree;
}

// OpenSM's mcast_mgr_find_optimal_switch: the switch with the fewest hops to the farthest
// switch of the group; here the sum of hops breaks ties, then the lowest node index.
uint32_t central_switch(CableGraph& g, const std::vector<uint32_t>& terminals) {
  uint32_t best = kNone;
  std::tuple<uint64_t, uint64_t> best_score{UINT64_MAX, UINT64_MAX};
  for (uint32_t s = 0; s < g.switches.size(); ++s) {
    const std::vector<uint32_t>& d = g.dist(s);
    uint64_t max_hops = 0, sum_hops = 0;
    for (uint32_t x : terminals) {
      const uint64_t h = d[x] == kNone ? UINT32_MAX : d[x];
      max_hops = std::max(max_hops, h);
      sum_hops += h;
    }
    const std::tuple<uint64_t, uint64_t> score{max_hops, sum_hops};
    if (score < best_score) {
      best_score = score;
      best = s;
    }
  }
  return best;
}

std::string hex(uint32_t v) {
  static const char* digits = "0123456789ABCDEF";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 0xF]);
    v >>= 4;
  } while (v != 0);
  return "0x" + s;
}

// Endpoint lists of one group: every entry an endpoint of the topology, none twice.
void check_endpoints(const Topology& t, const std::vector<uint32_t>& nodes, const std::string& key,
                     const char* role) {
  std::vector<uint32_t> seen;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string item = key + "[" + std::to_string(i) + "]";
    const uint32_t n = nodes[i];
    if (n >= t.nodes.size())
      throw ConfigError("", item, 0, std::string("unknown ") + role + ": node " + std::to_string(n) + " (the fabric has " +
                                               std::to_string(t.nodes.size()) + " nodes)",
                        "use the index of an endpoint of the topology");
    if (t.nodes[n].kind != NodeKind::endpoint)
      throw ConfigError("", item, 0, std::string(role) + " " + t.nodes[n].name + " is a switch",
                        "list endpoints (channel adapters) only");
    if (std::find(seen.begin(), seen.end(), n) != seen.end())
      throw ConfigError("", item, 0, std::string(role) + " " + t.nodes[n].name + " is listed twice",
                        "list each endpoint once");
    seen.push_back(n);
  }
}

}  // namespace

uint16_t MulticastTables::mlid_for(uint32_t group, uint32_t sender) const {
  for (const MulticastTree& tree : trees)
    if (tree.group == group && std::find(tree.senders.begin(), tree.senders.end(), sender) != tree.senders.end())
      return tree.mlid;
  return 0;
}

MulticastTables compute_multicast_tables(const Topology& t, const std::vector<MulticastGroup>& groups,
                                         MulticastMode mode) {
  // Validation first: nothing is computed for a bad list.
  std::vector<uint32_t> mlid_owner(Mft::kMlidTop - Mft::kMlidBase + 1, kNone);
  for (uint32_t gi = 0; gi < groups.size(); ++gi) {
    const MulticastGroup& grp = groups[gi];
    const std::string key = "multicast[" + std::to_string(gi) + "]";
    if (grp.members.empty())
      throw ConfigError("", key + ".members", 0, "group " + hex(grp.mlid) + " has no members",
                        "list at least one member endpoint, or leave the group out");
    check_endpoints(t, grp.members, key + ".members", "member");
    check_endpoints(t, grp.senders, key + ".senders", "sender");
    const uint32_t count =
        mode == MulticastMode::source_trees ? static_cast<uint32_t>(grp.senders.empty() ? grp.members.size() : grp.senders.size()) : 1;
    const uint32_t last = static_cast<uint32_t>(grp.mlid) + count - 1;
    if (!Mft::is_mlid(grp.mlid) || last > Mft::kMlidTop)
      throw ConfigError("", key + ".mlid", 0,
                        "MLID " + hex(grp.mlid) + (count > 1 ? " .. " + hex(last) + " (one per sender)" : std::string()) +
                            " is outside the multicast range 0xC000..0xFFFE",
                        count > Mft::kMlidTop - Mft::kMlidBase + 1u
                            ? "use at most 16383 senders per group with source trees, or the shared tree"
                            : "use an MLID from 0xC000 to " + hex(Mft::kMlidTop + 1u - count) + " (IBA 4.1.3)");
    for (uint32_t m = grp.mlid; m <= last; ++m) {
      uint32_t& owner = mlid_owner[m - Mft::kMlidBase];
      if (owner != kNone)
        throw ConfigError("", key + ".mlid", 0,
                          "MLID " + hex(m) + " is used by group " + std::to_string(owner) + " and group " + std::to_string(gi) +
                              (mode == MulticastMode::source_trees ? " (source trees take one MLID per sender)" : ""),
                          "give each group its own MLID" +
                              std::string(mode == MulticastMode::source_trees ? " range, mlid .. mlid + senders - 1" : ""));
      owner = gi;
    }
  }

  CableGraph g(t);
  MulticastTables out;
  out.mode = mode;
  out.mft.resize(t.nodes.size());

  // `source`: the sender of a source tree (its own port stays out of the entries), or kNone.
  auto add_tree = [&](uint32_t gi, uint16_t mlid, std::vector<uint32_t> senders, uint32_t source, uint32_t root,
                      const TreeShape& shape, bool up_ports_too) {
    MulticastTree tree;
    tree.mlid = mlid;
    tree.group = gi;
    tree.senders = std::move(senders);
    tree.root = root == kNone ? kNone : g.switches[root];
    tree.switch_links = shape.links;
    // Receivers below each tree switch (its own and its subtree's). A branch whose far side
    // holds no receiver gets no copies: a shared tree keeps switches of senders outside the
    // group on the tree so that their packets get in, but nothing needs to flow to them.
    std::vector<uint32_t> below(g.switches.size(), 0);
    uint32_t receivers = 0;
    for (uint32_t m : groups[gi].members)
      if (m != source && g.attach_sw[m] != kNone && shape.on[g.attach_sw[m]]) {
        ++below[g.attach_sw[m]];
        ++receivers;
        out.mft[g.switches[g.attach_sw[m]]].entry(mlid).set(g.attach_port[m]);
      }
    for (auto it = shape.order.rbegin(); it != shape.order.rend(); ++it)  // children first
      if (shape.parent[*it] != kNone) below[shape.parent[*it]] += below[*it];
    for (uint32_t s : shape.order) {
      tree.switches.push_back(g.switches[s]);
      Mft::PortMask& mask = out.mft[g.switches[s]].entry(mlid);
      for (const auto& [port, child] : shape.down[s])
        if (below[child] > 0) mask.set(port);
      // A shared tree is used in every direction: the port towards the root is a branch like
      // any other. A source tree only flows away from its root, and its up port is the input
      // port of every copy: leaving it out keeps the entry loop-free by itself.
      if (up_ports_too && s != root && receivers > below[s]) mask.set(shape.up_port[s]);
    }
    out.trees.push_back(std::move(tree));
  };

  const TreeShape empty_shape = [&] {
    TreeShape s;
    s.on.assign(g.switches.size(), false);
    return s;
  }();
  for (uint32_t gi = 0; gi < groups.size(); ++gi) {
    const MulticastGroup& grp = groups[gi];
    const std::vector<uint32_t>& senders = grp.senders.empty() ? grp.members : grp.senders;
    std::vector<uint32_t> member_switches;
    for (uint32_t m : grp.members)
      if (g.attach_sw[m] != kNone) member_switches.push_back(g.attach_sw[m]);
    if (mode == MulticastMode::source_trees) {
      for (size_t k = 0; k < senders.size(); ++k) {
        const uint16_t mlid = static_cast<uint16_t>(grp.mlid + k);
        const uint32_t root = g.attach_sw[senders[k]];
        if (root == kNone) {
          add_tree(gi, mlid, {senders[k]}, senders[k], kNone, empty_shape, false);
          continue;
        }
        add_tree(gi, mlid, {senders[k]}, senders[k], root, grow_tree(g, root, member_switches), false);
      }
    } else {
      std::vector<uint32_t> terminals = member_switches;
      // Senders outside the group still need their switch on the tree to inject into it.
      for (uint32_t s : senders)
        if (g.attach_sw[s] != kNone) terminals.push_back(g.attach_sw[s]);
      const uint32_t root = terminals.empty() ? kNone : central_switch(g, terminals);
      add_tree(gi, grp.mlid, senders, kNone, root, root == kNone ? empty_shape : grow_tree(g, root, terminals), true);
    }
  }

  // One MulticastFDBTop for every switch, as an SM programs them: all tables the same size.
  size_t entries = 0;
  for (const Mft& m : out.mft) entries = std::max(entries, m.port_mask.size());
  for (uint32_t s : g.switches) out.mft[s].port_mask.resize(entries);
  return out;
}

MulticastWalk walk_multicast(const Topology& t, const std::vector<Mft>& mft, uint32_t sender, uint16_t mlid) {
  MulticastWalk w;
  w.copies.assign(t.nodes.size(), 0);
  w.switch_hops.assign(t.nodes.size(), 0);
  w.link_copies.assign(t.links.size(), {0, 0});
  if (sender >= t.nodes.size() || t.nodes[sender].kind != NodeKind::endpoint || t.link_at(sender, 1) < 0) return w;

  struct Arrival {
    uint32_t sw;
    uint16_t in_port;
    uint32_t hops;  // switches passed, this one included
    size_t via;     // the send that brought it (index into sends)
  };
  struct Send {
    uint32_t node;
    uint16_t port;
    size_t parent;  // the send that brought the copy to `node`; kNone from the sender
  };
  constexpr size_t kNone = ~size_t{0};
  std::vector<Arrival> queue;
  std::vector<Send> sends;
  const size_t limit = 2 * t.links.size();
  size_t sent = 0;
  // An endpoint (or a switch's port 0) got the copy that `via` sent: every switch port on its
  // way served one more receiver.
  auto deliver = [&](uint32_t node, uint32_t hops, size_t via) {
    if (w.copies[node]++ == 0) w.switch_hops[node] = hops;
    for (size_t k = via; k != kNone; k = sends[k].parent)
      if (t.nodes[sends[k].node].kind == NodeKind::switch_node) ++w.receivers_behind[{sends[k].node, sends[k].port}];
  };
  // One copy out of (node, port); `hops`: switches the copy has passed so far.
  auto send = [&](uint32_t node, uint16_t port, uint32_t hops, size_t parent) {
    if (sent == limit) {
      w.cut_off = true;
      return;
    }
    ++sent;
    sends.push_back({node, port, parent});
    const size_t via = sends.size() - 1;
    const int l = t.link_at(node, port);
    const topo::Link& link = t.links[static_cast<size_t>(l)];
    ++w.link_copies[static_cast<size_t>(l)][link.a == PortRef{node, port} ? 0 : 1];
    const PortRef far = t.peer(node, port);
    if (t.nodes[far.node].kind == NodeKind::switch_node)
      queue.push_back({far.node, far.port, hops + 1, via});
    else
      deliver(far.node, hops, via);
  };

  send(sender, 1, 0, kNone);
  for (size_t q = 0; q < queue.size() && !w.cut_off; ++q) {
    const Arrival a = queue[q];
    if (w.switch_hops[a.sw] == 0) w.switch_hops[a.sw] = a.hops;
    if (a.sw >= mft.size()) continue;
    const Mft::PortMask mask = mft[a.sw].lookup(mlid);
    const uint16_t top = std::min<uint16_t>(t.nodes[a.sw].num_ports, Mft::kPortMaskBits - 1);
    for (uint16_t p = 0; p <= top && !w.cut_off; ++p) {
      // IBA 18.2.4.3.2: never back out of the arrival port.
      if (!mask.test(p) || p == a.in_port) continue;
      if (p == 0) {
        deliver(a.sw, a.hops, a.via);  // the switch's own management port is a member
        continue;
      }
      if (t.link_at(a.sw, p) < 0) continue;  // no cable: the copy is dropped
      send(a.sw, p, a.hops, a.via);
    }
  }
  for (uint32_t e : t.endpoints())
    if (w.copies[e] > 0) w.reached.push_back(e);
  return w;
}

}  // namespace ibvp::sm
