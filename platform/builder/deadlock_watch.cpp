#include "platform/builder/deadlock_watch.h"

#include <algorithm>
#include <cstdio>
#include <map>
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
    if (!s) continue;  // a flit router (flit_check)
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
// the input buffer (S', i', v) at the far end of its cable. That buffer frees a packet's space
// only when the packet has left S' through the output VL (S', o', v') it requests; a multicast
// packet (seed 000 Sec. 3.6.1) frees it when every copy has left, so it stays for good if any
// one of its copies does. So (S, o, v) is stuck for good by credits when
//   - it lacks credits for its head, counting those on their way (and, with bypass, for
//     every request behind the head);
//   - (S', i', v) releases nothing already under way, and every block it holds belongs to a
//     request (none still in the pipeline or on the cable; a multicast packet's blocks once);
//   - every packet it holds has a request (a copy) waiting at an output VL stuck for good.
// Synchronous multicast adds a second way: an output reserved for a multicast sends nothing
// else until all of that multicast's copies start together, so it is stuck for good by the
// multicast when one of the multicast's other outputs is stuck for good by credits, or is
// reserved for an earlier multicast that is (the switch's one multicast order runs one way,
// so these waits never close a cycle by themselves).
// Both are a fixed point: start from the candidates and drop what no longer holds until
// nothing changes. What is left can never send again, whatever the rest of the fabric does:
// its credits can come only from buffers whose packets wait at outputs that are left too.
// Each output left has a successor left, and the cycles among them pass through credit
// waits. This is a property of the state, not of the timeout: a short timeout makes the
// watch look more often, never report a fabric that is only slow.
std::optional<std::string> DeadlockWatch::check(uint64_t now_ps) {
  if (now_ps < next_check_ps_) return std::nullopt;
  next_check_ps_ = now_ps + timeout_ps_;
  if (fabric_.flit_fabric()) return flit_check(now_ps);
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

  const size_t n = cand.size();
  // By credits: the packets of the far buffer, each as the candidates its requests wait at
  // (a unicast packet one, a multicast packet one per copy); the far buffer must lose one
  // copy of each packet to move.
  std::vector<std::vector<std::vector<size_t>>> packets(n);
  std::vector<bool> by_credits(n, false);
  std::vector<uint32_t> far_mlid(n, 0);  // a multicast packet in the far buffer (for the report)
  // By a synchronous multicast: the output is reserved for `hold`, whose other copies wait
  // at `siblings`.
  std::vector<bool> by_hold(n, false);
  std::vector<uint32_t> hold(n, sw::kNoHold);
  std::vector<uint16_t> hold_mlid(n, 0);
  std::vector<std::vector<size_t>> siblings(n);
  for (size_t i = 0; i < n; ++i) {
    const Channel& c = cand[i];
    const sw::Switch* s = fabric_.switch_at(c.node);
    if (s->mc_reserved(c.port) && !s->port_drains_by_lifetime(c.port)) {
      hold[i] = s->sync_first(c.port);
      if (hold[i] != sw::kNoHold) {
        s->for_each_copy(hold[i], [&](uint16_t o, uint8_t v, uint16_t dlid) {
          hold_mlid[i] = dlid;
          if (o == c.port) return;
          const long j = index_of(c.node, o, v);
          if (j >= 0) siblings[i].push_back(static_cast<size_t>(j));
        });
        by_hold[i] = !siblings[i].empty();
      }
    }
    if (!s->vl_waits_for_credits(c.port, c.vl)) continue;
    const topo::PortRef peer = t.peer(c.node, c.port);
    if (t.nodes[peer.node].kind != topo::NodeKind::switch_node) continue;  // a CA sinks what it gets
    const sw::Switch* far = fabric_.switch_at(peer.node);
    bool releasing = false;
    const uint32_t held = far->input_held_blocks(peer.port, c.vl, now_ps, releasing);
    if (releasing) continue;
    uint64_t requested = 0;
    bool elsewhere = false;
    std::map<uint32_t, size_t> packet_of_hold;  // a multicast packet's index in packets[i]
    far->for_each_request_from(peer.port, c.vl, [&](uint16_t o, uint8_t v, uint32_t blocks, uint32_t h) {
      size_t k;
      if (h == sw::kNoHold) {
        k = packets[i].size();
        packets[i].emplace_back();
        requested += blocks;
      } else {
        const auto [it, first] = packet_of_hold.try_emplace(h, packets[i].size());
        if (first) {
          packets[i].emplace_back();
          requested += blocks;
          far->for_each_copy(h, [&](uint16_t, uint8_t, uint16_t dlid) { far_mlid[i] = dlid; });
        }
        k = it->second;
      }
      const long j = index_of(peer.node, o, v);
      if (j >= 0) packets[i][k].push_back(static_cast<size_t>(j));
    });
    for (const std::vector<size_t>& p : packets[i]) elsewhere |= p.empty();
    by_credits[i] = !elsewhere && requested == held && !packets[i].empty();
  }
  // The fixed point. Every round can only drop reasons, so it ends within 2n rounds; it runs
  // only when outputs have made no progress for a whole timeout.
  auto left = [&](size_t j) { return by_credits[j] || by_hold[j]; };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n; ++i) {
      if (by_credits[i]) {
        for (const std::vector<size_t>& p : packets[i])
          if (std::none_of(p.begin(), p.end(), left)) {
            by_credits[i] = false;
            changed = true;
            break;
          }
      }
      if (by_hold[i] &&
          std::none_of(siblings[i].begin(), siblings[i].end(),
                       [&](size_t j) { return by_credits[j] || (by_hold[j] && hold[j] != hold[i]); })) {
        by_hold[i] = false;
        changed = true;
      }
    }
  }
  // A successor of each output left: the copy that keeps a far packet, or the branch a
  // reserved output waits for.
  std::vector<long> next(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (by_credits[i]) {
      for (size_t j : packets[i].front())
        if (left(j)) {
          next[i] = static_cast<long>(j);
          break;
        }
    } else if (by_hold[i]) {
      for (size_t j : siblings[i])
        if (by_credits[j] || (by_hold[j] && hold[j] != hold[i])) {
          next[i] = static_cast<long>(j);
          break;
        }
    }
  }
  size_t first = n;
  for (size_t i = 0; i < n && first == n; ++i)
    if (left(i)) first = i;
  if (first == n) return std::nullopt;

  // Walk successors from the first output left until one repeats: that closes the cycle.
  std::vector<long> position(n, -1);
  std::vector<size_t> walk;
  size_t at = first;
  while (position[at] < 0) {
    position[at] = static_cast<long>(walk.size());
    walk.push_back(at);
    at = static_cast<size_t>(next[at]);
  }
  std::string cycle;
  for (size_t k = static_cast<size_t>(position[at]); k < walk.size(); ++k) {
    const size_t i = walk[k];
    cycle += name(cand[i]) + (by_credits[i] ? " -> " : " =(" + group_name(hold_mlid[i]) + " waits for its copy at)=> ");
  }
  cycle += name(cand[at]);
  const size_t cycle_len = walk.size() - static_cast<size_t>(position[at]);

  uint64_t packets_caught = 0, latest_since = 0;
  size_t outputs = 0;
  std::string multicast;
  for (size_t i = 0; i < n; ++i)
    if (left(i)) {
      packets_caught += cand[i].packets;
      latest_since = std::max(latest_since, cand[i].since_ps);
      ++outputs;
      if (by_hold[i])
        multicast += "; " + name(cand[i]) + " is reserved for a synchronous copy of " + group_name(hold_mlid[i]);
      else if (far_mlid[i])
        multicast += "; " + name(cand[i]) + " waits for a buffer that holds a packet of " + group_name(far_mlid[i]);
    }
  return "deadlock detected at " + readable(now_ps) + ": " + std::to_string(outputs) +
         " switch output VL(s) can never send again, holding " + std::to_string(packets_caught) +
         " packets, none sent for at least " + readable(now_ps - latest_since) + "; the " +
         std::to_string(cycle_len) + " ports waiting for each other's credits: " + cycle +
         (multicast.empty() ? "" : "; multicast involved: " + multicast.substr(2));
}

std::string DeadlockWatch::group_name(uint32_t mlid) const {
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%04X", mlid);
  for (const MulticastGroupConfig& g : fabric_.scenario().multicast)
    if (g.mlid == mlid) return "multicast group '" + g.name + "' (MLID " + hex + ")";
  return std::string("MLID ") + hex;
}

// Flit routers (switch.model flit_wormhole): the whole flit fabric holds flits and has moved
// none for the timeout. Wormhole routing holds a path from header to tail, so this is what a
// cycle of held VCs comes to once everything behind it has stopped; a deadlock among some
// VCs while other flits still move is not found (docs/seed003.md).
std::optional<std::string> DeadlockWatch::flit_check(uint64_t now_ps) const {
  const flit::FlitFabric& f = *fabric_.flit_fabric();
  if (!f.holds_flits() || now_ps - f.last_progress_ps() < timeout_ps_) return std::nullopt;
  std::vector<std::string> names;
  for (const topo::Node& n : fabric_.scenario().topology.nodes) names.push_back(n.name);
  std::string report = "deadlock at " + sc_core::sc_time::from_value(now_ps).to_string() +
                       ": the flit routers have moved no flit for " +
                       sc_core::sc_time::from_value(now_ps - f.last_progress_ps()).to_string() + " while holding " +
                       std::to_string(f.packets_held()) + " packets; flits wait at";
  for (const std::string& w : f.occupied_vcs(names, 8)) report += " " + w + ";";
  return report;
}

std::optional<StuckReport> DeadlockWatch::stuck(uint64_t now_ps) const {
  if (const flit::FlitFabric* f = fabric_.flit_fabric()) {
    if (!f->holds_flits() || now_ps - f->last_progress_ps() < timeout_ps_) return std::nullopt;
    StuckReport r;
    r.packets = f->packets_held();
    r.longest_ps = now_ps - f->last_progress_ps();
    return r;
  }
  std::vector<std::string> names;
  for (const auto& n : fabric_.scenario().topology.nodes) names.push_back(n.name);
  return stuck_report(names, stuck_channels(now_ps));
}

std::vector<DeadlockWatch::StuckChannel> DeadlockWatch::stuck_channels(uint64_t now_ps) const {
  std::vector<StuckChannel> out;
  for (const Channel& c : candidates(now_ps)) out.push_back({c.node, c.port, c.vl, c.packets, now_ps - c.since_ps});
  return out;
}

std::optional<StuckReport> DeadlockWatch::stuck_report(const std::vector<std::string>& node_names,
                                                       const std::vector<StuckChannel>& cand) {
  if (cand.empty()) return std::nullopt;
  StuckReport r;
  std::set<std::pair<uint32_t, uint16_t>> ports;
  std::vector<StuckOutput> all;
  for (const StuckChannel& c : cand) {
    r.packets += c.packets;
    r.longest_ps = std::max(r.longest_ps, c.waiting_ps);
    ports.insert({c.node, c.port});
    all.push_back({node_names[c.node] + "/" + std::to_string(c.port), c.vl, c.packets, c.waiting_ps});
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
