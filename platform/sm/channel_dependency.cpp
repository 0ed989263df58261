#include "platform/sm/channel_dependency.h"

#include <algorithm>
#include <array>
#include <utility>

namespace ibvp::sm {

namespace {

using topo::NodeKind;
using topo::Topology;

// IBA has VL0..VL15 (VL15 for subnet management); a channel is (cable, direction, VL).
constexpr uint32_t kVls = 16;

enum : uint8_t { kBusy, kOk, kBroken };

}  // namespace

std::string channel_name(const Topology& t, const Channel& c) {
  std::string s = t.nodes[c.from.node].name + "/" + std::to_string(c.from.port) + "->" + t.nodes[c.to.node].name +
                  "/" + std::to_string(c.to.port);
  if (c.vl != 0) s += " vl" + std::to_string(c.vl);
  return s;
}

CdgReport analyze_deadlock(const Topology& t, const RoutingTables& rt, const CdgOptions& opt) {
  CdgReport report;

  // Channels get dense vertex numbers when a route first uses them.
  std::vector<int32_t> vertex_of(t.links.size() * 2 * kVls, -1);
  std::vector<Channel> channels;
  std::vector<std::vector<uint32_t>> succ;  // [vertex] -> vertices depending on it
  auto vertex = [&](uint32_t node, uint16_t port, uint8_t vl) -> int32_t {
    const int l = t.link_at(node, port);
    const topo::Link& link = t.links[static_cast<size_t>(l)];
    const uint32_t dir = (link.a.node == node && link.a.port == port) ? 0 : 1;
    const size_t key = (static_cast<size_t>(l) * 2 + dir) * kVls + (vl % kVls);
    if (vertex_of[key] < 0) {
      vertex_of[key] = static_cast<int32_t>(channels.size());
      channels.push_back({{node, port}, t.peer(node, port), static_cast<uint8_t>(vl % kVls)});
      succ.emplace_back();
    }
    return vertex_of[key];
  };
  // A channel's successors leave the switch it enters, so there are at most that switch's
  // port count of them (times the VLs in use): a linear search dedups faster than a hash set
  // for the sources x LIDs insertions.
  auto add_edge = [&](int32_t a, int32_t b) {
    std::vector<uint32_t>& s = succ[static_cast<size_t>(a)];
    if (std::find(s.begin(), s.end(), static_cast<uint32_t>(b)) == s.end()) {
      s.push_back(static_cast<uint32_t>(b));
      ++report.dependencies;
    }
  };

  std::vector<uint32_t> sources = t.endpoints();
  if (opt.switch_sources) {
    const std::vector<uint32_t> sw = t.switches();
    sources.insert(sources.end(), sw.begin(), sw.end());
  }

  // Destination-based forwarding: all routes to one DLID on one VL share the walk from a
  // switch on, so a switch's outcome and outgoing channel are kept per (DLID, VL) group,
  // told apart by a stamp, and a later walk stops where it meets an earlier one.
  std::vector<uint32_t> stamp(t.nodes.size(), 0);
  std::vector<uint8_t> status(t.nodes.size(), kBusy);
  std::vector<int32_t> out(t.nodes.size(), -1);
  uint32_t current = 0;
  std::vector<uint32_t> stack;

  // Follows the LFTs from switch `at`, entered over channel `prev` (-1 if the packet starts
  // there); true when the packet reaches `dst`.
  auto walk = [&](int32_t prev, uint32_t at, uint16_t dlid, uint32_t dst, uint8_t vl) {
    stack.clear();
    bool ok = false;
    for (;;) {
      if (t.nodes[at].kind == NodeKind::endpoint) {
        ok = at == dst;
        break;
      }
      if (stamp[at] == current) {
        // Met an earlier walk (its rest is in the graph) or this one: a forwarding loop,
        // whose closing dependency is added here too.
        if (prev >= 0 && out[at] >= 0) add_edge(prev, out[at]);
        ok = status[at] == kOk;
        break;
      }
      stamp[at] = current;
      status[at] = kBusy;
      out[at] = -1;
      stack.push_back(at);
      const uint8_t port = at < rt.lft.size() ? rt.lft[at].lookup(dlid) : Lft::kNoRoute;
      if (port == Lft::kNoRoute) break;
      if (port == 0) {
        ok = at == dst;
        break;
      }
      if (t.link_at(at, port) < 0) break;
      const int32_t ch = vertex(at, port, vl);
      out[at] = ch;
      if (prev >= 0) add_edge(prev, ch);
      prev = ch;
      at = t.peer(at, port).node;
    }
    for (uint32_t s : stack) status[s] = ok ? kOk : kBroken;
    return ok;
  };

  // Per endpoint source: the node its port 1 is cabled to (npos: none) and its injection
  // channel on each VL, looked up once rather than once per LID.
  std::vector<uint32_t> first_hop(t.nodes.size(), Topology::npos);
  std::vector<int32_t> inject(t.nodes.size() * kVls, -1);
  for (uint32_t src : sources)
    if (t.nodes[src].kind == NodeKind::endpoint && t.link_at(src, 1) >= 0) first_hop[src] = t.peer(src, 1).node;

  // seed 000 Sec. 3.4: with alternatives (routing multipath_adaptive) a switch may send a
  // packet for the DLID out of any of them, so every channel into a switch that a route to the
  // DLID can use depends on every alternative out of it. A search over those channels from
  // the sources' injection channels adds them (the LFT walks above cover the first ones).
  std::vector<uint32_t> channel_stamp;
  std::vector<int32_t> frontier;
  uint32_t alt_round = 0;
  auto add_alternatives = [&](const std::vector<uint32_t>& srcs, uint16_t dlid, uint8_t vl) {
    ++alt_round;
    frontier.clear();
    auto reach = [&](int32_t c) {
      if (channel_stamp.size() <= static_cast<size_t>(c)) channel_stamp.resize(static_cast<size_t>(c) + 1, 0);
      if (channel_stamp[static_cast<size_t>(c)] == alt_round) return;
      channel_stamp[static_cast<size_t>(c)] = alt_round;
      frontier.push_back(c);
    };
    for (uint32_t src : srcs)
      if (t.nodes[src].kind == NodeKind::endpoint && first_hop[src] != Topology::npos) reach(vertex(src, 1, vl));
    while (!frontier.empty()) {
      const int32_t c = frontier.back();
      frontier.pop_back();
      const uint32_t at = channels[static_cast<size_t>(c)].to.node;
      if (t.nodes[at].kind != NodeKind::switch_node || at >= rt.alternatives.size() ||
          dlid >= rt.alternatives[at].entry.size())
        continue;
      const sw::AltTable::Entry e = rt.alternatives[at].entry[dlid];
      for (uint8_t i = 0; i < e.count; ++i) {
        if (e.port[i] == 0 || t.link_at(at, e.port[i]) < 0) continue;
        const int32_t next = vertex(at, e.port[i], vl);
        add_edge(c, next);
        reach(next);
      }
    }
  };

  std::array<std::vector<uint32_t>, kVls> by_vl;
  const uint32_t max_lid = t.max_lid();
  for (uint32_t lid = 1; lid <= max_lid; ++lid) {
    const uint16_t dlid = static_cast<uint16_t>(lid);
    const uint32_t dst = t.node_of_lid(dlid);
    if (dst == Topology::npos) continue;
    for (auto& v : by_vl) v.clear();
    for (uint32_t src : sources)
      if (src != dst) by_vl[opt.vl ? opt.vl(src, dlid) % kVls : 0].push_back(src);
    for (uint8_t vl = 0; vl < kVls; ++vl) {
      if (by_vl[vl].empty()) continue;
      ++current;
      for (uint32_t src : by_vl[vl]) {
        bool ok = false;
        if (t.nodes[src].kind == NodeKind::switch_node) {
          ok = walk(-1, src, dlid, dst, vl);
        } else {
          const uint32_t first = first_hop[src];
          if (first == Topology::npos) continue;  // cannot send at all: no route to follow
          int32_t& in = inject[static_cast<size_t>(src) * kVls + vl];
          if (in < 0) in = vertex(src, 1, vl);
          if (t.nodes[first].kind == NodeKind::endpoint) {
            ok = first == dst;  // cabled straight to another endpoint
          } else if (stamp[first] == current) {
            // The common case, inlined: another source on this switch has walked on already.
            if (out[first] >= 0) add_edge(in, out[first]);
            ok = status[first] == kOk;
          } else {
            ok = walk(in, first, dlid, dst, vl);
          }
        }
        ++report.routes;
        if (!ok) ++report.broken_routes;
      }
      if (!rt.alternatives.empty()) add_alternatives(by_vl[vl], dlid, vl);
    }
  }

  // Sorted successor lists: the cycle reported does not depend on the order of the walks.
  const size_t nv = channels.size();
  for (auto& s : succ) std::sort(s.begin(), s.end());
  report.channels = nv;

  // Depth-first search without recursion (the graph can be deep): a successor still on the
  // stack closes a cycle.
  enum : uint8_t { white, grey, black };
  std::vector<uint8_t> colour(nv, white);
  std::vector<std::pair<uint32_t, size_t>> dfs;  // (vertex, next successor to try)
  for (uint32_t root = 0; root < nv && report.acyclic; ++root) {
    if (colour[root] != white) continue;
    colour[root] = grey;
    dfs.push_back({root, 0});
    while (!dfs.empty() && report.acyclic) {
      auto& [v, i] = dfs.back();
      if (i == succ[v].size()) {
        colour[v] = black;
        dfs.pop_back();
        continue;
      }
      const uint32_t w = succ[v][i++];
      if (colour[w] == white) {
        colour[w] = grey;
        dfs.push_back({w, 0});
      } else if (colour[w] == grey) {
        report.acyclic = false;
        size_t from = dfs.size();
        while (dfs[from - 1].first != w) --from;
        for (size_t k = from - 1; k < dfs.size(); ++k) {
          report.cycle_channels.push_back(channels[dfs[k].first]);
          report.cycle.push_back(channel_name(t, channels[dfs[k].first]));
        }
      }
    }
    dfs.clear();
  }
  return report;
}

}  // namespace ibvp::sm
