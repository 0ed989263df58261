#include "platform/apps/control_agents.h"

#include <algorithm>

namespace ibvp::apps {

ControlAgents::ControlAgents(sc_core::sc_module_name name, std::vector<Sender> senders)
    : sc_module(name), senders_(std::move(senders)) {
  // Runs once at time zero (no dont_initialize), then at each next packet.
  SC_METHOD(wake);
  sensitive << next_;
}

void ControlAgents::wake() {
  const uint64_t now = sc_core::sc_time_stamp().value();
  uint64_t next = ep::TrafficSource::kNever;
  for (const Sender& s : senders_) {
    while (s.source->next_ready_ps(now) <= now) {
      ep::PacketSpec spec;
      s.source->take(now, spec);
      s.hca->send_management(spec.dlid, spec.dst_node, s.source->payload_bytes, s.source->flow, spec.created_ps);
      ++sent_;
    }
    next = std::min(next, s.source->next_ready_ps(now));
  }
  if (next != ep::TrafficSource::kNever) next_.notify(sc_core::sc_time::from_value(next - now));
}

}  // namespace ibvp::apps
