#include "platform/sm/smart.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "platform/params/config_error.h"
#include "platform/sm/switch_graph.h"

namespace ibvp::sm {

namespace {

using topo::NodeKind;
using topo::Topology;

// Entries of a tree's next-hop vector besides an index into the switch's neighbour list.
constexpr uint16_t kNoHop = 0xFFFF;  // the destination is not reached from this switch
constexpr uint16_t kHere = 0xFFFE;  // the destination switch: the LID leaves by the exit port

// The switches, their directed channels to each other and the turns between channels, in
// dense numbers. Channel chan(s, k) leaves switch s over its k-th neighbour cable; turn
// turn(x, j, k) at switch x comes in over x's j-th cable and leaves over its k-th.
struct SwitchFabric {
  std::vector<uint32_t> node;        // [sw] -> node index
  std::vector<uint32_t> sw_of_node;  // [node] -> sw, or npos
  std::vector<std::vector<Neighbour>> adj;
  std::vector<uint32_t> chan_base;   // [sw] first channel number
  std::vector<uint32_t> back;        // [channel] index, in the far switch's list, of the same cable
  std::vector<uint32_t> turn_base;   // [sw] first turn number
  std::vector<uint32_t> turn_sw;     // [turn] the switch it is made at
  std::vector<uint32_t> hosts;       // [sw] endpoints cabled to it: the sources behind it
  std::vector<uint32_t> component;   // [sw] connected set of switches
  std::vector<uint32_t> component_size;
  uint32_t channels = 0;
  uint32_t turns = 0;

  uint32_t chan(uint32_t s, uint32_t k) const { return chan_base[s] + k; }
  uint32_t turn(uint32_t x, uint32_t j, uint32_t k) const {
    return turn_base[x] + j * static_cast<uint32_t>(adj[x].size()) + k;
  }
};

SwitchFabric switch_fabric(const Topology& t) {
  SwitchFabric f;
  f.node = t.switches();
  const uint32_t n = static_cast<uint32_t>(f.node.size());
  f.sw_of_node.assign(t.nodes.size(), Topology::npos);
  for (uint32_t i = 0; i < n; ++i) f.sw_of_node[f.node[i]] = i;
  f.adj.resize(n);
  f.hosts.assign(n, 0);
  for (uint32_t i = 0; i < n; ++i)
    for (uint16_t p = 1; p <= t.nodes[f.node[i]].num_ports; ++p) {
      if (t.link_at(f.node[i], p) < 0) continue;
      const topo::PortRef far = t.peer(f.node[i], p);
      if (far.node == f.node[i]) continue;  // a loopback cable leads nowhere new
      if (f.sw_of_node[far.node] != Topology::npos)
        f.adj[i].push_back({p, f.sw_of_node[far.node]});
      else
        ++f.hosts[i];
    }
  f.chan_base.resize(n);
  f.turn_base.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    f.chan_base[i] = f.channels;
    f.turn_base[i] = f.turns;
    f.channels += static_cast<uint32_t>(f.adj[i].size());
    f.turns += static_cast<uint32_t>(f.adj[i].size() * f.adj[i].size());
    f.turn_sw.resize(f.turns, i);
  }
  f.back.resize(f.channels);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t k = 0; k < f.adj[i].size(); ++k) {
      const uint32_t v = f.adj[i][k].sw;
      const uint16_t far_port = t.peer(f.node[i], f.adj[i][k].port).port;
      for (uint32_t b = 0; b < f.adj[v].size(); ++b)
        if (f.adj[v][b].port == far_port) f.back[f.chan(i, k)] = b;
    }
  f.component.assign(n, Topology::npos);
  for (uint32_t first = 0; first < n; ++first) {
    if (f.component[first] != Topology::npos) continue;
    const uint32_t id = static_cast<uint32_t>(f.component_size.size());
    std::vector<uint32_t> queue{first};
    f.component[first] = id;
    for (size_t q = 0; q < queue.size(); ++q)
      for (const Neighbour& nb : f.adj[queue[q]])
        if (f.component[nb.sw] == Topology::npos) {
          f.component[nb.sw] = id;
          queue.push_back(nb.sw);
        }
    f.component_size.push_back(static_cast<uint32_t>(queue.size()));
  }
  return f;
}

// The routes to one DLID: a tree toward its switch.
struct Tree {
  uint16_t lid = 0;
  uint32_t dst = 0;        // destination switch (dense)
  uint16_t exit_port = 0;  // port at dst the LID leaves by (0: the switch's own LID)
  bool counts = false;     // an endpoint LID: its routes count in the channel loads
  std::vector<uint16_t> next;  // [sw] neighbour index, kHere at dst, kNoHop where unreached
};

using Loads = std::vector<uint64_t>;  // [channel] source endpoints routed over it

// Adds (sign +1) or removes (-1) the tree's routes from the channel loads: each switch's
// hosts load every channel on its way to the destination.
void add_load(const SwitchFabric& f, const Tree& tr, Loads& load, int sign) {
  if (!tr.counts) return;
  for (uint32_t s = 0; s < f.adj.size(); ++s) {
    if (f.hosts[s] == 0 || tr.next[s] >= kHere) continue;
    for (uint32_t at = s; tr.next[at] < kHere; at = f.adj[at][tr.next[at]].sw) {
      uint64_t& l = load[f.chan(at, tr.next[at])];
      l = sign > 0 ? l + f.hosts[s] : l - f.hosts[s];
    }
  }
}

// Adds or removes the tree's turns (channel dependencies) to the count of trees using each.
void add_turns(const SwitchFabric& f, const Tree& tr, std::vector<uint32_t>& use, int sign) {
  for (uint32_t y = 0; y < f.adj.size(); ++y) {
    if (tr.next[y] >= kHere) continue;
    const uint32_t x = f.adj[y][tr.next[y]].sw;
    if (tr.next[x] >= kHere) continue;
    uint32_t& u = use[f.turn(x, f.back[f.chan(y, tr.next[y])], tr.next[x])];
    u = sign > 0 ? u + 1 : u - 1;
  }
}

bool uses_turn(const SwitchFabric& f, const Tree& tr, uint32_t x, uint32_t j, uint32_t k) {
  if (tr.next[x] != k) return false;
  const uint32_t y = f.adj[x][j].sw;
  return tr.next[y] == f.back[f.chan(x, j)];
}

// The shortest tree toward tr.dst whose turns avoid `prohibited`, built level by level from
// the destination: a switch at level h+1 joins over a cable to a switch X of level h unless
// the turn it makes at X (in from it, out over X's next hop, fixed a level earlier) is
// prohibited; among its choices it takes the least loaded channel, ties to the lower port.
// False when some switch of the destination's connected set cannot join.
bool build_tree(const SwitchFabric& f, Tree& tr, const std::vector<uint8_t>& prohibited, const Loads& load) {
  const uint32_t n = static_cast<uint32_t>(f.adj.size());
  tr.next.assign(n, kNoHop);
  tr.next[tr.dst] = kHere;
  std::vector<uint32_t> level{tr.dst}, next_level;
  std::vector<uint32_t> joined_in(n, UINT32_MAX);  // round a switch joined in
  uint32_t reached = 1;
  for (uint32_t round = 0; !level.empty(); ++round) {
    next_level.clear();
    for (const uint32_t x : level)
      for (uint32_t j = 0; j < f.adj[x].size(); ++j) {
        const uint32_t y = f.adj[x][j].sw;
        if (tr.next[y] != kNoHop && joined_in[y] != round) continue;
        if (x != tr.dst && prohibited[f.turn(x, j, tr.next[x])]) continue;
        const uint16_t ky = static_cast<uint16_t>(f.back[f.chan(x, j)]);
        if (tr.next[y] == kNoHop) {
          tr.next[y] = ky;
          joined_in[y] = round;
          next_level.push_back(y);
          ++reached;
          continue;
        }
        const uint16_t cur = tr.next[y];
        if (std::make_pair(load[f.chan(y, ky)], f.adj[y][ky].port) <
            std::make_pair(load[f.chan(y, cur)], f.adj[y][cur].port))
          tr.next[y] = ky;
      }
    level.swap(next_level);
  }
  return reached == f.component_size[f.component[tr.dst]];
}

// The tree the reference DFS up*/down* tables give the DLID: it makes no down -> up turn,
// so it avoids every turn smart routing may prohibit.
void reference_tree(const SwitchFabric& f, const RoutingTables& ref, Tree& tr) {
  tr.next.assign(f.adj.size(), kNoHop);
  for (uint32_t s = 0; s < f.adj.size(); ++s) {
    const uint8_t port = ref.lft[f.node[s]].lookup(tr.lid);
    if (s == tr.dst) tr.next[s] = kHere;
    if (port == Lft::kNoRoute || s == tr.dst) continue;
    for (uint32_t k = 0; k < f.adj[s].size(); ++k)
      if (f.adj[s][k].port == port) tr.next[s] = static_cast<uint16_t>(k);
  }
}

// One cycle of the channel dependency graph of the used turns, as its turns; empty when the
// graph is acyclic. Iterative depth-first search over channels, in channel order.
std::vector<uint32_t> find_cycle(const SwitchFabric& f, const std::vector<uint32_t>& use) {
  enum : uint8_t { kWhite, kGrey, kBlack };
  std::vector<uint8_t> colour(f.channels, kWhite);
  std::vector<uint32_t> sw_of_chan(f.channels);
  for (uint32_t s = 0; s < f.adj.size(); ++s)
    for (uint32_t k = 0; k < f.adj[s].size(); ++k) sw_of_chan[f.chan(s, k)] = s;
  struct Frame {
    uint32_t chan;
    uint32_t next_k;  // next out-cable to try at the channel's far switch
  };
  std::vector<Frame> stack;
  // The turn at the far switch of channel c into its k-th cable.
  auto turn_after = [&](uint32_t c, uint32_t k) {
    const uint32_t s = sw_of_chan[c];
    const uint32_t x = f.adj[s][c - f.chan_base[s]].sw;
    return std::make_pair(x, f.turn(x, f.back[c], k));
  };
  for (uint32_t start = 0; start < f.channels; ++start) {
    if (colour[start] != kWhite) continue;
    stack.push_back({start, 0});
    colour[start] = kGrey;
    while (!stack.empty()) {
      Frame& top = stack.back();
      const uint32_t s = sw_of_chan[top.chan];
      const uint32_t x = f.adj[s][top.chan - f.chan_base[s]].sw;
      if (top.next_k == f.adj[x].size()) {
        colour[top.chan] = kBlack;
        stack.pop_back();
        continue;
      }
      const uint32_t k = top.next_k++;
      if (use[turn_after(top.chan, k).second] == 0) continue;
      const uint32_t c = f.chan(x, k);
      if (colour[c] == kBlack) continue;
      if (colour[c] == kWhite) {
        colour[c] = kGrey;
        stack.push_back({c, 0});
        continue;
      }
      // c is on the stack: the channels from c to the top, and back to c, are a cycle.
      std::vector<uint32_t> cycle;
      size_t i = stack.size();
      while (stack[i - 1].chan != c) --i;
      for (size_t p = i - 1; p < stack.size(); ++p) {
        const uint32_t following = p + 1 < stack.size() ? stack[p + 1].chan : c;
        const uint32_t fs = sw_of_chan[following];
        cycle.push_back(turn_after(stack[p].chan, following - f.chan_base[fs]).second);
      }
      return cycle;
    }
  }
  return {};
}

// Lower is better: the most loaded channel, then the spread of the loads.
std::pair<uint64_t, uint64_t> balance_score(const Loads& load) {
  uint64_t most = 0, squares = 0;
  for (const uint64_t l : load) {
    most = std::max(most, l);
    squares += l * l;
  }
  return {most, squares};
}

}  // namespace

RoutingTables SmartEngine::compute(const Topology& t) {
  const auto started = std::chrono::steady_clock::now();
  cost_ = {};
  prohibited_.clear();

  // The reference orientation and its tables: the fallback trees and the candidate turns.
  DfsEngine dfs(DfsOptions{opt_.root, opt_.root_node});
  RoutingTables ref;
  try {
    ref = dfs.compute(t);
  } catch (const ConfigError& e) {
    throw ConfigError(e.file(), "routing.smart.root", e.line(), "smart routing: " + e.problem(), e.fix());
  }
  const DfsRanking& ranking = dfs.ranking();
  const SwitchFabric f = switch_fabric(t);
  const uint32_t n = static_cast<uint32_t>(f.node.size());

  // forbidden[turn]: in over a down cable, out over an up cable (preorder: up leads to the
  // lower number), which the reference up*/down* orientation does not allow.
  std::vector<uint8_t> forbidden(f.turns, 0), prohibited(f.turns, 0);
  for (uint32_t x = 0; x < n; ++x)
    for (uint32_t j = 0; j < f.adj[x].size(); ++j)
      for (uint32_t k = 0; k < f.adj[x].size(); ++k) {
        const bool came_down = ranking.is_up(f.node[x], f.node[f.adj[x][j].sw]);
        const bool leaves_up = ranking.is_up(f.node[x], f.node[f.adj[x][k].sw]);
        forbidden[f.turn(x, j, k)] = came_down && leaves_up;
        cost_.forbidden_turns += came_down && leaves_up;
      }

  // One tree per DLID, in LID order.
  std::vector<Tree> trees;
  const size_t lft_size = static_cast<size_t>(t.max_lid()) + 1;
  for (uint32_t lid = 1; lid < lft_size; ++lid) {
    const uint32_t owner = t.node_of_lid(static_cast<uint16_t>(lid));
    if (owner == Topology::npos) continue;
    Tree tr;
    tr.lid = static_cast<uint16_t>(lid);
    if (t.nodes[owner].kind == NodeKind::endpoint) {
      if (t.link_at(owner, 1) < 0) continue;
      const topo::PortRef att = t.peer(owner, 1);
      if (f.sw_of_node[att.node] == Topology::npos) continue;  // cabled straight to another endpoint
      tr.dst = f.sw_of_node[att.node];
      tr.exit_port = att.port;
      tr.counts = true;
    } else {
      tr.dst = f.sw_of_node[owner];
    }
    trees.push_back(std::move(tr));
  }
  cost_.trees = static_cast<uint32_t>(trees.size());
  cost_.channels = f.channels;

  // 1. Balanced shortest-path trees (nothing prohibited yet: every switch of the set joins).
  Loads load(f.channels, 0);
  std::vector<uint32_t> use(f.turns, 0);
  for (Tree& tr : trees) {
    build_tree(f, tr, prohibited, load);
    ++cost_.tree_builds;
    add_load(f, tr, load, +1);
    add_turns(f, tr, use, +1);
  }

  // 2. Break the cycles of the dependency graph one prohibited turn at a time.
  for (std::vector<uint32_t> cycle = find_cycle(f, use); !cycle.empty(); cycle = find_cycle(f, use)) {
    std::sort(cycle.begin(), cycle.end());
    cycle.erase(std::unique(cycle.begin(), cycle.end()), cycle.end());
    struct Trial {
      uint32_t turn = 0;
      std::pair<uint64_t, uint64_t> score{UINT64_MAX, UINT64_MAX};
      Loads load;
      std::vector<std::pair<uint32_t, Tree>> rebuilt;  // (tree index, new tree)
      uint32_t fallbacks = 0;
    } best;
    for (const uint32_t turn : cycle) {
      if (!forbidden[turn]) continue;
      const uint32_t x = f.turn_sw[turn];
      const uint32_t deg = static_cast<uint32_t>(f.adj[x].size());
      const uint32_t j = (turn - f.turn_base[x]) / deg, k = (turn - f.turn_base[x]) % deg;
      ++cost_.candidates;
      Trial trial;
      trial.turn = turn;
      trial.load = load;
      prohibited[turn] = 1;
      for (uint32_t i = 0; i < trees.size(); ++i) {
        if (!uses_turn(f, trees[i], x, j, k)) continue;
        add_load(f, trees[i], trial.load, -1);
        Tree tr = trees[i];
        ++cost_.tree_builds;
        if (!build_tree(f, tr, prohibited, trial.load)) {
          reference_tree(f, ref, tr);
          ++trial.fallbacks;
        }
        add_load(f, tr, trial.load, +1);
        trial.rebuilt.emplace_back(i, std::move(tr));
      }
      prohibited[turn] = 0;
      trial.score = balance_score(trial.load);
      if (trial.score < best.score) best = std::move(trial);
    }
    // Every cycle has a forbidden turn (smart.h), and a used one is never yet prohibited.
    if (best.score.first == UINT64_MAX) break;
    prohibited[best.turn] = 1;
    ++cost_.rounds;
    cost_.fallback_trees += best.fallbacks;
    load = std::move(best.load);
    for (auto& [i, tr] : best.rebuilt) {
      add_turns(f, trees[i], use, -1);
      trees[i] = std::move(tr);
      add_turns(f, trees[i], use, +1);
    }
    const uint32_t x = f.turn_sw[best.turn];
    const uint32_t deg = static_cast<uint32_t>(f.adj[x].size());
    prohibited_.push_back({f.node[x], f.adj[x][(best.turn - f.turn_base[x]) / deg].port,
                           f.adj[x][(best.turn - f.turn_base[x]) % deg].port});
  }

  RoutingTables rt;
  rt.engine = name();
  rt.lft.resize(t.nodes.size());
  for (uint32_t s : f.node) rt.lft[s].port.assign(lft_size, Lft::kNoRoute);
  for (const Tree& tr : trees)
    for (uint32_t s = 0; s < n; ++s) {
      if (tr.next[s] == kNoHop) continue;
      const uint16_t port = tr.next[s] == kHere ? tr.exit_port : f.adj[s][tr.next[s]].port;
      rt.lft[f.node[s]].port[tr.lid] = static_cast<uint8_t>(port);
    }
  cost_.max_channel_load = balance_score(load).first;
  cost_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return rt;
}

std::unique_ptr<RoutingEngine> make_smart_engine(SmartOptions opt) {
  return std::make_unique<SmartEngine>(std::move(opt));
}

}  // namespace ibvp::sm
