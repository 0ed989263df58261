#include "platform/parallel/partition.h"

#include <algorithm>
#include <cassert>
#include <deque>

#include "models/link/link_rate.h"

namespace ibvp::parallel {

namespace {

constexpr uint32_t kUnassigned = ~uint32_t{0};

uint32_t cabled_ports(const topo::Topology& t, uint32_t n) {
  uint32_t c = 0;
  for (uint16_t p = 1; p <= t.nodes[n].num_ports; ++p) c += t.link_at(n, p) >= 0;
  return c;
}

bool is_switch(const topo::Topology& t, uint32_t n) { return t.nodes[n].kind == topo::NodeKind::switch_node; }

}  // namespace

Partition partition_fabric(const topo::Topology& t, uint32_t ranks) {
  assert(ranks >= 1);
  Partition part;
  part.ranks = ranks;
  const uint32_t nodes = static_cast<uint32_t>(t.nodes.size());
  part.rank_of.assign(nodes, kUnassigned);
  part.ports.assign(ranks, 0);

  // A switch's weight: its cabled ports and those of the endpoints cabled to it.
  std::vector<uint64_t> weight(nodes, 0);
  std::vector<uint32_t> leaves;
  for (uint32_t n = 0; n < nodes; ++n) {
    if (!is_switch(t, n)) continue;
    weight[n] = cabled_ports(t, n);
    bool leaf = false;
    for (uint16_t p = 1; p <= t.nodes[n].num_ports; ++p) {
      if (t.link_at(n, p) < 0) continue;
      const topo::PortRef far = t.peer(n, p);
      if (is_switch(t, far.node)) continue;
      weight[n] += cabled_ports(t, far.node);
      leaf = true;
    }
    if (leaf) leaves.push_back(n);
  }
  uint64_t leaf_total = 0;
  for (uint32_t s : leaves) leaf_total += weight[s];
  // Contiguous blocks: a leaf goes to the rank its weight's midpoint falls in.
  uint64_t before = 0;
  for (uint32_t s : leaves) {
    const uint64_t mid2 = 2 * before + weight[s];  // twice the midpoint, to stay in integers
    const uint32_t r = static_cast<uint32_t>(std::min<uint64_t>(ranks - 1, mid2 * ranks / std::max<uint64_t>(1, 2 * leaf_total)));
    part.rank_of[s] = r;
    part.ports[r] += weight[s];
    before += weight[s];
  }

  // Other switches, breadth first from the leaves (then from node order for switches no leaf
  // reaches): each joins the rank most of its assigned neighbours are on.
  std::deque<uint32_t> queue(leaves.begin(), leaves.end());
  std::vector<bool> queued(nodes, false);
  for (uint32_t s : leaves) queued[s] = true;
  auto place = [&](uint32_t s) {
    std::vector<uint32_t> votes(ranks, 0);
    for (uint16_t p = 1; p <= t.nodes[s].num_ports; ++p) {
      if (t.link_at(s, p) < 0) continue;
      const uint32_t far = t.peer(s, p).node;
      if (is_switch(t, far) && part.rank_of[far] != kUnassigned) votes[part.rank_of[far]]++;
    }
    uint32_t best = 0;
    for (uint32_t r = 1; r < ranks; ++r)
      if (votes[r] > votes[best] || (votes[r] == votes[best] && part.ports[r] < part.ports[best])) best = r;
    part.rank_of[s] = best;
    part.ports[best] += weight[s];
  };
  auto drain = [&] {
    while (!queue.empty()) {
      const uint32_t s = queue.front();
      queue.pop_front();
      if (part.rank_of[s] == kUnassigned) place(s);
      for (uint16_t p = 1; p <= t.nodes[s].num_ports; ++p) {
        if (t.link_at(s, p) < 0) continue;
        const uint32_t far = t.peer(s, p).node;
        if (is_switch(t, far) && !queued[far]) {
          queued[far] = true;
          queue.push_back(far);
        }
      }
    }
  };
  drain();
  for (uint32_t s = 0; s < nodes; ++s)
    if (is_switch(t, s) && !queued[s]) {
      queued[s] = true;
      queue.push_back(s);
      drain();
    }

  // Endpoints with the switch they are cabled to (an endpoint cabled to an endpoint goes
  // with its peer if that is placed, else to rank 0).
  for (uint32_t n = 0; n < nodes; ++n) {
    if (is_switch(t, n)) continue;
    uint32_t r = 0;
    for (uint16_t p = 1; p <= t.nodes[n].num_ports; ++p) {
      if (t.link_at(n, p) < 0) continue;
      const uint32_t far = t.peer(n, p).node;
      if (part.rank_of[far] != kUnassigned) {
        r = part.rank_of[far];
        break;
      }
    }
    part.rank_of[n] = r;
    // Counted in its switch's weight already, unless it hangs off no switch.
    bool on_switch = false;
    for (uint16_t p = 1; p <= t.nodes[n].num_ports; ++p)
      if (t.link_at(n, p) >= 0 && is_switch(t, t.peer(n, p).node)) on_switch = true;
    if (!on_switch) part.ports[r] += cabled_ports(t, n);
  }

  for (uint32_t i = 0; i < t.links.size(); ++i) {
    const topo::Link& l = t.links[i];
    if (part.rank_of[l.a.node] == part.rank_of[l.b.node]) continue;
    part.cut_links.push_back(i);
    part.lookahead_ps = std::min<uint64_t>(part.lookahead_ps, link::LinkRate(l.cfg).propagation().value());
  }
  return part;
}

}  // namespace ibvp::parallel
