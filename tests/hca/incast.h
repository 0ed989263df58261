#pragma once
// Incast on the HCA models: h1 and h2 send 4 KiB messages (RC WRITEs or UD SENDs) from
// `qps` QPs each to h3 through a 3-port switch whose output to h3 is offered twice its
// rate; the switch marks by `ecn`, the senders' firmware answers by `firmware_args`.
#include <cstdint>
#include <string>
#include <vector>

#include "models/switch/ecn_marker.h"
#include "platform/driver/host_node.h"

namespace ibvp::tb {

struct Incast {
  uint64_t delivered_bytes = 0;   // at h3, in the measured window
  uint64_t window_ps = 0;
  uint64_t marked = 0;            // switch output port 3 fecn_marked
  uint64_t blocked_ps[2] = {};    // senders' ports credit-blocked (the switch input buffer full)
  uint64_t sent[2] = {};
  uint64_t becn_received[2] = {};
};

// seed 004's input_triggered marking, the default of run_incast.
sw::EcnConfig input_triggered_marking();

// max_packet_bytes 0 in `ecn`: the incast's packet on the wire.
Incast run_incast(const std::string& firmware_args, bool rc, int qps,
                  sw::EcnConfig ecn = input_triggered_marking());
// Throughput at h3 over the measured window, as a fraction of the link's data rate.
double utilization(const Incast& r);

// A saturating RC sender of `n` one-packet 4 KiB WRITEs from h1 to h2 (through a switch),
// h1's firmware started with `firmware_args`; h2 marks the data packet of PSN 0x100 +
// mark_index, so one ACK with BECN comes back. Returns h1's data packets out, in order,
// and when the ACK with BECN reached h1's firmware.
struct PacedRun {
  struct Packet {
    uint64_t start, end;
    uint32_t psn;
  };
  std::vector<Packet> data;
  uint64_t becn_ps = 0;
  uint64_t becn_acks = 0;  // h1's firmware counter IBVP_CNT_BECN_RECEIVED
};
PacedRun run_paced(const std::string& firmware_args, int n, uint32_t mark_index);

// As tests/hca/test_scheduling.cpp: the cable, not the core or PCIe, limits the sender.
void fast_sender(driver::HostNodeConfig& h);

}  // namespace ibvp::tb
