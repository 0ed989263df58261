#include "platform/metrics/traffic_metrics.h"

#include <stdexcept>

namespace ibvp::metrics {

TrafficSummary summarize_traffic(const std::vector<PortTraffic>& at_warmup, const std::vector<PortTraffic>& at_end,
                                 uint64_t span_ps) {
  if (at_warmup.size() != at_end.size())
    throw std::invalid_argument("traffic: the two readings hold different ports");
  TrafficSummary s;
  s.span_s = static_cast<double>(span_ps) * 1e-12;
  if (span_ps == 0) return s;
  double inj_cycles = 0, del_cycles = 0, host_busy = 0, switch_busy = 0;
  for (size_t i = 0; i < at_end.size(); ++i) {
    const PortTraffic& a = at_warmup[i];
    const PortTraffic& b = at_end[i];
    const double busy = static_cast<double>(b.busy_ps - a.busy_ps) / static_cast<double>(span_ps);
    if (!b.host) {
      s.switch_ports++;
      switch_busy += busy;
      continue;
    }
    s.hosts++;
    host_busy += busy;
    const uint64_t tx = b.bytes_tx - a.bytes_tx, rx = b.bytes_rx - a.bytes_rx;
    s.injected_bytes += tx;
    s.delivered_bytes += rx;
    // Cycles of this host's link over the span: one per byte time at its data rate.
    const double cycles = b.rate_Bps * s.span_s;
    if (cycles > 0) {
      inj_cycles += static_cast<double>(tx) / cycles;
      del_cycles += static_cast<double>(rx) / cycles;
    }
  }
  if (s.hosts > 0) {
    s.injected_bytes_per_cycle_per_node = inj_cycles / s.hosts;
    s.delivered_bytes_per_cycle_per_node = del_cycles / s.hosts;
    s.host_utilization = host_busy / s.hosts;
  }
  if (s.switch_ports > 0) s.switch_port_utilization = switch_busy / s.switch_ports;
  return s;
}

}  // namespace ibvp::metrics
