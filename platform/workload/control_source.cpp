#include "platform/workload/control_source.h"

#include <cassert>

namespace ibvp::workload {

ControlSource::ControlSource(const ControlConfig& cfg, uint32_t flow_index, std::optional<Destination> fixed,
                             std::vector<Destination> others, sim::Rng rng)
    : period_ps_(cfg.period.value()),
      stop_ps_(cfg.stop.value()),
      next_ps_(cfg.start.value()),
      fixed_(fixed),
      others_(std::move(others)),
      rng_(rng) {
  assert(period_ps_ > 0);
  assert(fixed_ || !others_.empty());
  flow = flow_index;
  payload_bytes = cfg.payload_bytes;
  // IBA 7.6.9: VL15 goes before every data VL; subnet management packets are UD SENDs to
  // QP0 (IBA 13.5.1), not credited (7.9.4).
  vl15 = true;
  opcode = ib::Opcode::ud_send_only;
}

uint64_t ControlSource::next_ready_ps(uint64_t) { return next_ps_ < stop_ps_ ? next_ps_ : kNever; }

void ControlSource::take(uint64_t now_ps, ep::PacketSpec& out) {
  assert(next_ps_ <= now_ps);
  (void)now_ps;
  const Destination d = fixed_ ? *fixed_ : others_[rng_.below(others_.size())];
  out.dst_node = d.node;
  out.dlid = d.dlid;
  out.dest_qp = 0;  // the SMI's QP0 (IBA 3.5.1)
  out.created_ps = next_ps_;
  next_ps_ += period_ps_;
  ++taken_;
}

}  // namespace ibvp::workload
