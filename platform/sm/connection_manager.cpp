#include "platform/sm/connection_manager.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "models/ib/packet.h"
#include "models/link/link_rate.h"
#include "models/sim/rng.h"

namespace ibvp::sm {

namespace {
constexpr uint32_t kEmptyCell = ~uint32_t{0};

CbrServiceLevel level(uint8_t sl, uint32_t distance, double min_mbps, double max_mbps) {
  CbrServiceLevel s;
  s.sl = sl;
  s.max_distance = distance;
  s.min_bandwidth_bps = min_mbps * 1e6;
  s.max_bandwidth_bps = max_mbps * 1e6;
  return s;
}

// Picoseconds to send `bytes` at `bps`, rounded up.
uint64_t bytes_ps(uint64_t bytes, uint64_t bps) {
  const unsigned __int128 num = static_cast<unsigned __int128>(bytes) * 8 * 1'000'000'000'000ULL;
  return static_cast<uint64_t>((num + bps - 1) / bps);
}
}  // namespace

std::vector<CbrServiceLevel> seed002_service_levels() {
  // seed 002 Table 1. Distances 2..16 and the bandwidth ranges read as printed; the OCR's
  // "30, 52, ?, 64, ?, ?" are read as 32, 32, 64, 64, 64, 64: the paper uses only powers of
  // two up to 64 (Sec. 3), and "for the most requested distances several SLs have been
  // considered" (Sec. 4.2), split by bandwidth (docs/qos.md).
  return {level(0, 2, 0.064, 1.55),  level(1, 4, 0.064, 1.55),  level(2, 8, 0.064, 1.55),
          level(3, 16, 0.064, 1.55), level(4, 32, 0.064, 1.55), level(5, 32, 1.55, 64),
          level(6, 64, 0.008, 0.064), level(7, 64, 0.064, 1.55), level(8, 64, 1.55, 64),
          level(9, 64, 64, 255)};
}

uint32_t ConnectionManager::wire_bytes(uint32_t payload) {
  ib::Packet shape;
  shape.bth.opcode = ib::Opcode::ud_send_only;  // what the CBR sources send (ep::TrafficSource default)
  shape.payload_bytes = payload;
  return shape.wire_bytes();
}

ConnectionManager::ConnectionManager(const topo::Topology& t, const RoutingTables& routing,
                                     const ConnectionsConfig& cfg, const ConnectionTiming& timing, uint64_t seed)
    : t_(t), routing_(routing), cfg_(cfg), timing_(timing), seed_(seed) {
  port_base_.assign(t.nodes.size(), 0);
  uint32_t cells = 0;
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    port_base_[n] = cells;
    cells += t.nodes[n].num_ports;
  }
  grid_.assign(cells, kEmptyCell);
  for (uint32_t n = 0; n < t.nodes.size(); ++n)
    for (uint16_t p = 1; p <= t.nodes[n].num_ports; ++p) {
      const int l = t.link_at(n, p);
      if (l < 0) continue;
      const link::LinkRate rate(t.links[static_cast<size_t>(l)].cfg);
      grid_[port_base_[n] + p - 1] = static_cast<uint32_t>(ports_.size());
      ports_.emplace_back(n, p, t.nodes[n].kind == topo::NodeKind::endpoint,
                          static_cast<uint64_t>(std::llround(rate.data_bits_per_s())), rate.propagation().value(),
                          cfg.reservable_fraction);
    }
  path_.reserve(t.nodes.size());
  path_ptrs_.reserve(t.nodes.size());
}

uint32_t ConnectionManager::port_index(uint32_t node, uint16_t port) const {
  if (node >= port_base_.size() || port < 1 || port > t_.nodes[node].num_ports) return kEmptyCell;
  return grid_[port_base_[node] + port - 1];
}

bool ConnectionManager::walk(uint32_t src, uint16_t dlid) {
  path_.clear();
  uint32_t node = src;
  uint16_t out = 1;  // a CA's port
  // A route visits each switch once; more steps than nodes is a loop.
  for (size_t step = 0; step <= t_.nodes.size(); ++step) {
    const uint32_t at = port_index(node, out);
    if (at == kEmptyCell) return false;
    path_.push_back(at);
    const topo::PortRef next = t_.peer(node, out);
    if (t_.nodes[next.node].kind == topo::NodeKind::endpoint) return t_.node_of_lid(dlid) == next.node;
    node = next.node;
    out = routing_.lft.at(node).lookup(dlid);
    if (out == sw::Lft::kNoRoute) return false;
  }
  return false;
}

uint64_t ConnectionManager::deadline_ps(uint32_t c, uint32_t wire) const {
  // docs/qos.md, "Deadline": at every port, between two of the connection's entries the
  // other d - 1 entries send at most 255 x 64 bytes each (the whole weight of an entry; d x
  // 255 x 64 bounds it with room for a packet's rounding), and a packet already on the link
  // goes on (IBA links are not preemptive); then the cable, the next switch's pipeline, and
  // the packet's own serialization once (virtual cut-through).
  const workload::CbrConnection& k = conns_[c];
  uint64_t d = 0, slowest = ~uint64_t{0};
  for (const uint32_t* p = path_begin(c); p != path_end(c); ++p) {
    const Port& port = ports_[*p];
    const uint64_t table_bytes = uint64_t{port.admission.distance_of(c)} * kMaxEntryWeight * 64;
    d += bytes_ps(table_bytes + timing_.max_packet_bytes, port.link_bps) + port.propagation_ps;
    slowest = std::min(slowest, port.link_bps);
  }
  d += uint64_t{k.hops > 0 ? k.hops - 1u : 0u} * timing_.pipeline_delay_ps;
  d += bytes_ps(wire, slowest);
  return d;
}

void ConnectionManager::establish() {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<uint32_t> endpoints = t_.endpoints();
  if (endpoints.size() < 2 || cfg_.service_levels.empty()) return;
  sim::Rng rng(seed_, "connections");
  const uint32_t wire = wire_bytes(cfg_.payload_bytes);
  const uint64_t payload_bits = uint64_t{cfg_.payload_bytes} * 8;
  uint64_t refusals = 0;
  QosRequest req;
  while (refusals < cfg_.refusals_in_a_row && (cfg_.max_connections == 0 || conns_.size() < cfg_.max_connections)) {
    // seed 002 Sec. 4.2: source, destination, SL and bandwidth at random; a connection's
    // mean bandwidth is "randomly generated among the bandwidth range of each SL".
    const uint32_t src = endpoints[rng.below(endpoints.size())];
    uint32_t dst = endpoints[rng.below(endpoints.size() - 1)];
    if (dst == src) dst = endpoints.back();
    const CbrServiceLevel& lv = cfg_.service_levels[rng.below(cfg_.service_levels.size())];
    const double bw = lv.min_bandwidth_bps + rng.uniform() * (lv.max_bandwidth_bps - lv.min_bandwidth_bps);
    const uint64_t bandwidth = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(bw)));
    // Headers count: a connection reserves its bandwidth in wire bytes (seed 002 Sec. 4.3:
    // larger packets carry less header per byte, so more connections fit).
    const uint64_t reserved = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(bandwidth) * wire + cfg_.payload_bytes - 1) / cfg_.payload_bytes);
    AdmissionCounts& per_sl = by_sl_[lv.sl & 0xF];
    per_sl.requested++;
    const uint16_t dlid = t_.nodes[dst].lid;
    if (!walk(src, dlid)) {
      // The builder refuses tables with holes before this runs; kept as a refusal anyway.
      per_sl.refused++;
      by_verdict_[static_cast<size_t>(Verdict::bad_request)]++;
      ++refusals;
      continue;
    }
    path_ptrs_.clear();
    for (uint32_t p : path_) path_ptrs_.push_back(&ports_[p].admission);
    req.sl = lv.sl;
    req.max_distance = lv.max_distance;
    req.mean_bandwidth_bps = reserved;
    const uint32_t id = static_cast<uint32_t>(conns_.size());
    const PathVerdict v = admit_path(path_ptrs_, id, req);
    by_verdict_[static_cast<size_t>(v.verdict)]++;
    if (v.verdict != Verdict::admitted) {
      per_sl.refused++;
      ++refusals;
      continue;
    }
    refusals = 0;
    per_sl.established++;
    workload::CbrConnection k;
    k.src_node = src;
    k.dst_node = dst;
    k.dlid = dlid;
    k.sl = lv.sl;
    k.hops = static_cast<uint8_t>(path_.size());
    k.payload_bytes = cfg_.payload_bytes;
    k.bandwidth_bps = bandwidth;
    k.reserved_bps = reserved;
    k.interval_ps = static_cast<uint64_t>(
        static_cast<unsigned __int128>(payload_bits) * 1'000'000'000'000ULL / bandwidth);
    // A random phase so that connections do not all start in lockstep.
    k.start_ps = rng.below(std::max<uint64_t>(1, k.interval_ps));
    if (cfg_.hold_time.value() > 0)
      k.end_ps = static_cast<uint64_t>(rng.exponential(static_cast<double>(cfg_.hold_time.value())));
    path_start_.push_back(paths_.size());
    paths_.insert(paths_.end(), path_.begin(), path_.end());
    conns_.push_back(k);
    uint32_t granted = 0;
    for (uint32_t p : path_) granted = std::max(granted, ports_[p].admission.distance_of(id));
    conns_.back().distance = granted;
    conns_.back().deadline_ps = deadline_ps(id, wire);
  }
  wall_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

size_t ConnectionManager::release(uint32_t c) {
  path_ptrs_.clear();
  for (const uint32_t* p = path_begin(c); p != path_end(c); ++p) path_ptrs_.push_back(&ports_[*p].admission);
  return release_path(path_ptrs_, c);
}

AdmissionCounts ConnectionManager::totals() const {
  AdmissionCounts a;
  for (const AdmissionCounts& s : by_sl_) {
    a.requested += s.requested;
    a.established += s.established;
    a.refused += s.refused;
  }
  return a;
}

}  // namespace ibvp::sm
