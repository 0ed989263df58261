#pragma once
// Seed 002 Table 2's traffic metrics of a run (Sec. 4.3): injected and delivered traffic in
// bytes per cycle per node, and the average utilization of host interfaces and of switch
// ports, measured between the warm-up and the end of the run. They come from the port
// counters every model keeps (link::PortCounters: bytes sent and received, busy time),
// read once at the warm-up and once at the end: nothing is added to the per-packet path.
//
// A cycle is one byte time of the host's link at its data rate (after line encoding), so
// injected bytes per cycle per node equals the hosts' mean transmit utilization, as in the
// paper's Table 2 (0.7258 bytes/cycle, 72.58 %). The paper's 2.5 Gb/s links count one byte
// per cycle of the signalling rate without 8b/10b (312.5 MB/s); ibvp's SDR 1x link moves
// 250 MB/s of data, so the same fraction of the link is the same number here, not the same
// bytes per second. docs/realtime_metrics.md.
#include <cstdint>
#include <vector>

namespace ibvp::metrics {

// One cabled port's counters at one moment.
struct PortTraffic {
  bool host = false;     // an endpoint's (CA's) port; otherwise a switch port
  double rate_Bps = 0;   // its link's data rate, bytes per second
  uint64_t bytes_tx = 0;
  uint64_t bytes_rx = 0;
  uint64_t busy_ps = 0;  // time its transmitter was sending
};

struct TrafficSummary {
  double span_s = 0;       // warm-up to end
  uint32_t hosts = 0;      // host interfaces averaged over
  uint32_t switch_ports = 0;
  uint64_t injected_bytes = 0;   // sent by host interfaces (wire bytes)
  uint64_t delivered_bytes = 0;  // received by host interfaces
  double injected_bytes_per_cycle_per_node = 0;
  double delivered_bytes_per_cycle_per_node = 0;
  double host_utilization = 0;         // mean busy fraction of host interfaces, 0..1
  double switch_port_utilization = 0;  // mean busy fraction of switch output ports with a cable
};

// From the same ports (same order) read at the warm-up and at the end, span_ps apart. A
// transmission counts where it starts (the counters add a packet's bytes and busy time when
// it starts), so each end of the span may hold one packet per port more or less.
TrafficSummary summarize_traffic(const std::vector<PortTraffic>& at_warmup, const std::vector<PortTraffic>& at_end,
                                 uint64_t span_ps);

}  // namespace ibvp::metrics
