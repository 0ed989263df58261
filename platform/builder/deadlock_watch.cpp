#include "platform/builder/deadlock_watch.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "platform/builder/fabric.h"

namespace ibvp {

namespace {

std::string readable(uint64_t ps) {
  char buf[64];
  if (ps >= 1'000'000'000)
    std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ps) * 1e-9);
  else
    std::snprintf(buf, sizeof buf, "%.3f us", static_cast<double>(ps) * 1e-6);
  return buf;
}

uint64_t key_of(uint32_t node, uint16_t port, uint8_t vl) {
  return (uint64_t{node} << 24) | (uint64_t{port} << 8) | vl;
}

}  // namespace

DeadlockWatch::DeadlockWatch(const Fabric& fabric, uint64_t timeout_ps)
    : fabric_(fabric), timeout_ps_(std::max<uint64_t>(timeout_ps, 1)), next_check_ps_(timeout_ps_) {}

std::string DeadlockWatch::name(const Channel& c) const {
  return fabric_.scenario().topology.nodes[c.node].name + "/" + std::to_string(c.port) + " VL" + std::to_string(c.vl);
}

// O(switch ports x VLs with requests): what a check costs when nothing is stuck.
std::vector<DeadlockWatch::Channel> DeadlockWatch::candidates(uint64_t now_ps) const {
  const topo::Topology& t = fabric_.scenario().topology;
  std::vector<Channel> out;
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    if (t.nodes[n].kind != topo::NodeKind::switch_node) continue;
    const sw::Switch* s = fabric_.switch_at(n);
    for (uint16_t p = 1; p <= t.nodes[n].num_ports; ++p) {
      if (!s->attached(p)) continue;
      for (uint32_t pending = s->requested_vls(p); pending; pending &= pending - 1) {
        const uint8_t vl = static_cast<uint8_t>(__builtin_ctz(pending));
        const uint64_t since = s->vl_progress_ps(p, vl);
        if (now_ps - since >= timeout_ps_) out.push_back({n, p, vl, s->requests_waiting(p, vl), since});
      }
    }
  }
  return out;
}

// The wait-for graph (IBA credit flow control, 7.9): output VL (S, o, v) waits for credits of
// the input buffer (S', i', v) at the far end of its cable. That buffer frees space only when
// one of the packets it holds leaves S' through the output VL (S', o', v') it requests. So
// (S, o, v) is stuck for good when
//   - it lacks credits for its head, counting those on their way (and, with bypass, for
//     every request behind the head);
//   - (S', i', v) releases nothing already under way, and every block it holds belongs to a
//     request (none still in the pipeline or on the cable);
//   - every output VL those requests wait at is stuck for good in the same sense.
// The last condition is a fixed point: start from the candidates and drop those with a
// successor that is not (still) one, until nothing changes. What is left can never send
// again, whatever the rest of the fabric does: its credits can come only from buffers whose
// packets wait at outputs that are left too. Each output left has a successor left, so they
// contain a cycle. This is a property of the state, not of the timeout: a short timeout makes
// the watch look more often, never report a fabric that is only slow.
std::optional<std::string> DeadlockWatch::check(uint64_t now_ps) {
  if (now_ps < next_check_ps_) return std::nullopt;
  next_check_ps_ = now_ps + timeout_ps_;
  const std::vector<Channel> cand = candidates(now_ps);
  if (cand.empty()) return std::nullopt;
  const topo::Topology& t = fabric_.scenario().topology;
  // candidates() lists them in (node, port, VL) order: keys are sorted.
  std::vector<uint64_t> keys;
  keys.reserve(cand.size());
  for (const Channel& c : cand) keys.push_back(key_of(c.node, c.port, c.vl));
  auto index_of = [&](uint32_t node, uint16_t port, uint8_t vl) -> long {
    const uint64_t k = key_of(node, port, vl);
    const auto it = std::lower_bound(keys.begin(), keys.end(), k);
    return it != keys.end() && *it == k ? it - keys.begin() : -1;
  };

  std::vector<std::vector<size_t>> next(cand.size());
  std::vector<bool> left(cand.size(), false);
  for (size_t i = 0; i < cand.size(); ++i) {
    const Channel& c = cand[i];
    if (!fabric_.switch_at(c.node)->vl_waits_for_credits(c.port, c.vl)) continue;
    const topo::PortRef peer = t.peer(c.node, c.port);
    if (t.nodes[peer.node].kind != topo::NodeKind::switch_node) continue;  // a CA sinks what it gets
    const sw::Switch* far = fabric_.switch_at(peer.node);
    bool releasing = false;
    const uint32_t held = far->input_held_blocks(peer.port, c.vl, now_ps, releasing);
    if (releasing) continue;
    uint64_t requested = 0;
    bool elsewhere = false;
    far->for_each_request_from(peer.port, c.vl, [&](uint16_t o, uint8_t v, uint32_t blocks) {
      requested += blocks;
      const long j = index_of(peer.node, o, v);
      if (j < 0)
        elsewhere = true;
      else
        next[i].push_back(static_cast<size_t>(j));
    });
    left[i] = !elsewhere && requested == held && !next[i].empty();
  }
  // The fixed point in O(edges): an output that goes takes with it those waiting for it.
  std::vector<std::vector<size_t>> waiting_for(cand.size());
  std::vector<size_t> gone;
  for (size_t i = 0; i < cand.size(); ++i) {
    for (size_t j : next[i]) waiting_for[j].push_back(i);
    if (!left[i]) gone.push_back(i);
  }
  while (!gone.empty()) {
    const size_t j = gone.back();
    gone.pop_back();
    for (size_t i : waiting_for[j])
      if (left[i]) {
        left[i] = false;
        gone.push_back(i);
      }
  }
  const auto first = std::find(left.begin(), left.end(), true);
  if (first == left.end()) return std::nullopt;

  // Walk successors from the first output left until one repeats: that closes the cycle.
  std::vector<long> position(cand.size(), -1);
  std::vector<size_t> walk;
  size_t at = static_cast<size_t>(first - left.begin());
  while (position[at] < 0) {
    position[at] = static_cast<long>(walk.size());
    walk.push_back(at);
    at = next[at].front();
  }
  std::string cycle;
  for (size_t k = static_cast<size_t>(position[at]); k < walk.size(); ++k) cycle += name(cand[walk[k]]) + " -> ";
  cycle += name(cand[at]);
  const size_t cycle_len = walk.size() - static_cast<size_t>(position[at]);

  uint64_t packets = 0, latest_since = 0;
  size_t outputs = 0;
  for (size_t i = 0; i < cand.size(); ++i)
    if (left[i]) {
      packets += cand[i].packets;
      latest_since = std::max(latest_since, cand[i].since_ps);
      ++outputs;
    }
  return "deadlock detected at " + readable(now_ps) + ": " + std::to_string(outputs) +
         " switch output VL(s) can never send again, holding " + std::to_string(packets) +
         " packets, none sent for at least " + readable(now_ps - latest_since) + "; the " +
         std::to_string(cycle_len) + " ports waiting for each other's credits: " + cycle;
}

std::optional<StuckReport> DeadlockWatch::stuck(uint64_t now_ps) const {
  const std::vector<Channel> cand = candidates(now_ps);
  if (cand.empty()) return std::nullopt;
  StuckReport r;
  std::set<std::pair<uint32_t, uint16_t>> ports;
  std::vector<StuckOutput> all;
  for (const Channel& c : cand) {
    r.packets += c.packets;
    r.longest_ps = std::max(r.longest_ps, now_ps - c.since_ps);
    ports.insert({c.node, c.port});
    all.push_back({fabric_.scenario().topology.nodes[c.node].name + "/" + std::to_string(c.port), c.vl, c.packets,
                   now_ps - c.since_ps});
  }
  r.outputs = static_cast<uint32_t>(ports.size());
  // Longest waits first; ties in (node, port, VL) order, so the list is deterministic.
  std::stable_sort(all.begin(), all.end(),
                   [](const StuckOutput& a, const StuckOutput& b) { return a.waiting_ps > b.waiting_ps; });
  if (all.size() > StuckReport::kWorst) all.resize(StuckReport::kWorst);
  r.worst = std::move(all);
  return r;
}

}  // namespace ibvp
