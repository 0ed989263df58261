#pragma once
// The connection manager of seed 002 (Alfaro, Sanchez, Duato, Sec. 4.2): turns random CBR
// connection requests into admitted connections (workload::CbrConnection) and the
// high-priority VL arbitration tables that serve them. "Each request is considered by each
// node along its path and is accepted only if there are available resources": the path is
// the source CA port and every switch output port the LFTs lead the DLID through, and each
// of them has a VlarbAdmission (platform/sm/vlarb_admission.h). Requests stop after
// `refusals_in_a_row` consecutive refusals ("we have already made many attempts for each
// SL", Sec. 4.3). docs/qos.md explains the reservation, the deadline and the choices made.
#include <array>
#include <cstdint>
#include <vector>

#include "models/link/vl_arbiter.h"
#include "models/switch/switch.h"
#include "platform/scenario/scenario.h"
#include "platform/sm/routing.h"
#include "platform/sm/vlarb_admission.h"
#include "platform/topology/topology.h"
#include "platform/workload/cbr_connection.h"

namespace ibvp::sm {

// seed 002 Table 1, with the distances the OCR lost read as docs/qos.md explains:
// 2, 4, 8, 16, 32, 32, 64, 64, 64, 64 for SLs 0..9.
std::vector<CbrServiceLevel> seed002_service_levels();

// What the deadline of a connection adds up besides the table (docs/qos.md).
struct ConnectionTiming {
  uint64_t pipeline_delay_ps = 0;  // per switch on the path
  uint32_t max_packet_bytes = 0;   // the largest packet any port of the run may be sending
};

// Counters of the requests, for summary.json's admission block.
struct AdmissionCounts {
  uint64_t requested = 0, established = 0, refused = 0;
};

class ConnectionManager {
 public:
  // One output port with a cable: a CA port (host) or a switch port.
  struct Port {
    uint32_t node = 0;
    uint16_t port = 0;
    bool host = false;
    uint64_t link_bps = 0;          // data rate
    uint64_t propagation_ps = 0;    // of its cable
    VlarbAdmission admission;
    Port(uint32_t n, uint16_t p, bool h, uint64_t bps, uint64_t prop, double fraction)
        : node(n), port(p), host(h), link_bps(bps), propagation_ps(prop), admission(bps, fraction) {}
  };

  ConnectionManager(const topo::Topology& t, const RoutingTables& routing, const ConnectionsConfig& cfg,
                    const ConnectionTiming& timing, uint64_t seed);

  // Draws requests until the stop rule; returns the connections established. Call once.
  void establish();

  const workload::CbrConnections& connections() const { return conns_; }
  const std::vector<Port>& ports() const { return ports_; }
  std::vector<Port>& ports() { return ports_; }
  // The output ports connection `c` holds entries at (indices into ports()), source first.
  const uint32_t* path_begin(uint32_t c) const { return &paths_[path_start_[c]]; }
  const uint32_t* path_end(uint32_t c) const { return &paths_[path_start_[c]] + conns_[c].hops; }
  // Index into ports() of (node, port), or ~0 when it has no cable.
  uint32_t port_index(uint32_t node, uint16_t port) const;
  // Releases connection `c` at every port of its path (its end_ps has passed and its last
  // packet has left); returns how many ports held it.
  size_t release(uint32_t c);

  // Per SL (index = SL) and per verdict (index = Verdict).
  const std::array<AdmissionCounts, 16>& by_sl() const { return by_sl_; }
  const std::array<uint64_t, 6>& by_verdict() const { return by_verdict_; }
  AdmissionCounts totals() const;
  // Wall-clock time establish() took.
  double wall_seconds() const { return wall_seconds_; }
  const ConnectionsConfig& config() const { return cfg_; }
  // Wire bytes of one packet of `payload` bytes as the CBR sources send it (UD SEND only).
  static uint32_t wire_bytes(uint32_t payload);

 private:
  // Fills path_ with the port indices from src to dlid; false when the walk fails.
  bool walk(uint32_t src, uint16_t dlid);
  // D of connection c (docs/qos.md, Deadline); `wire`: its packets' wire bytes.
  uint64_t deadline_ps(uint32_t c, uint32_t wire) const;

  const topo::Topology& t_;
  const RoutingTables& routing_;
  ConnectionsConfig cfg_;
  ConnectionTiming timing_;
  uint64_t seed_;
  std::vector<Port> ports_;
  std::vector<uint32_t> port_base_;  // by node: index of its port 1 in a dense node x port grid
  std::vector<uint32_t> grid_;       // node x port -> ports_ index (~0: none)
  workload::CbrConnections conns_;
  std::vector<uint32_t> paths_;        // every connection's ports, concatenated
  std::vector<uint64_t> path_start_;   // by connection: its first entry in paths_
  std::vector<uint32_t> path_;         // scratch: the current request's port indices
  std::vector<VlarbAdmission*> path_ptrs_;  // scratch: the same as admission pointers
  std::array<AdmissionCounts, 16> by_sl_{};
  std::array<uint64_t, 6> by_verdict_{};
  double wall_seconds_ = 0;
};

}  // namespace ibvp::sm
