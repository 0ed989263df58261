#include "models/flit/flit_config.h"

#include <cmath>

namespace ibvp::flit {

const char* variant_name(Variant v) {
  switch (v) {
    case Variant::traditional: return "traditional";
    case Variant::non_preemptive: return "non_preemptive";
    case Variant::preemptive: return "preemptive";
  }
  return "?";
}

const char* unreserved_name(Unreserved u) {
  switch (u) {
    case Unreserved::last: return "last";
    case Unreserved::rate: return "rate";
    case Unreserved::offered: return "offered";
  }
  return "?";
}

const char* nic_multiplexing_name(NicMultiplexing m) { return m == NicMultiplexing::message ? "message" : "flit"; }

const char* nic_scheduler_name(NicScheduler s) {
  switch (s) {
    case NicScheduler::virtual_clock: return "virtual_clock";
    case NicScheduler::priority: return "priority";
    case NicScheduler::fcfs: return "fcfs";
  }
  return "?";
}

const char* stream_vtick_name(StreamVtick v) { return v == StreamVtick::frame ? "frame" : "mean"; }

uint64_t FlitConfig::flit_cycle_ps() const {
  return static_cast<uint64_t>(std::ceil(static_cast<double>(width_bits) * 1e12 / link_bps));
}

uint16_t FlitConfig::class_first_vc(uint8_t c) const {
  uint16_t first = 0;
  if (shared_vcs) return 0;
  for (uint8_t k = 0; k < c && k < class_vcs.size(); ++k) first = static_cast<uint16_t>(first + class_vcs[k]);
  return first;
}

std::string FlitConfig::problem() const {
  if (width_bits == 0) return "width_bits must be at least 1";
  if (!(link_bps > 0) || !std::isfinite(link_bps)) return "link rate must be a positive number of b/s";
  // A cycle shorter than 100 ps (a 128-bit flit above 1.28 Tb/s) would make the routers step
  // millions of cycles per simulated microsecond.
  if (flit_cycle_ps() < 100) return "a flit takes " + std::to_string(flit_cycle_ps()) + " ps on a link, under 100 ps";
  if (vcs_per_channel == 0) return "vcs_per_channel must be at least 1";
  if (vc_buffer_flits == 0) return "vc_buffer_flits must be at least 1";
  if (block_flits == 0) return "block_flits must be at least 1";
  if (link_delay_cycles == 0) return "link_delay_cycles must be at least 1";
  if (nic_dma_cycles > 0 && nic_multiplexing != NicMultiplexing::message)
    return "nic_dma_cycles is the overhead of message-level multiplexing; it needs nic_multiplexing: message";
  if (nic_vtick == StreamVtick::frame && nic_scheduler != NicScheduler::virtual_clock)
    return "nic_vtick frame sets the QoS NIC's Vtick; it needs nic_scheduler: virtual_clock";
  if (vc_bits != 0 && vc_bits < 16)
    return "vc_bits " + std::to_string(vc_bits) + " cannot hold a flit's Vtick in ns; give 0 (unbounded) or 16..63 "
           "(seed 003 Sec. 3.1 used 16-bit counters)";
  if (vc_bits != 0 && variant == Variant::traditional && nic_scheduler != NicScheduler::virtual_clock)
    return "vc_bits sizes VirtualClock's counters, and neither the traditional router nor this NIC has one (use "
           "variant non_preemptive or preemptive, or nic_scheduler virtual_clock)";
  if (router_vtick == StreamVtick::frame && variant == Variant::traditional)
    return "router_vtick frame sets the routers' VirtualClock Vtick; the traditional router is FCFS (use "
           "variant non_preemptive or preemptive)";
  for (uint8_t c : vl_classes)
    if (c >= classes()) return "vl_classes names class " + std::to_string(c) + " but there are " + std::to_string(classes());
  if (shared_vcs) {
    if (variant == Variant::non_preemptive) return "shared_vcs needs variant traditional or preemptive (NP splits the VCs)";
    return {};
  }
  if (class_vcs.empty() || class_vcs.size() > kMaxClasses)
    return "class_vcs must name 1 to " + std::to_string(kMaxClasses) + " classes";
  uint32_t sum = 0;
  for (uint16_t n : class_vcs) {
    if (n == 0) return "every class needs at least one VC in class_vcs";
    sum += n;
  }
  if (sum > vcs_per_channel)
    return "class_vcs gives " + std::to_string(sum) + " VCs but a channel has " + std::to_string(vcs_per_channel);
  return {};
}

}  // namespace ibvp::flit
