// Rate-based scheduling of an output's requests: seed 003 Sec. 3.1's VirtualClock and Fair
// Queueing (models/sched) in the IBA switch. switch.cpp asks rate_candidate() which request
// of a VL goes; this file keeps each output's per-connection state.
#include <cassert>
#include <cmath>

#include "models/switch/switch.h"

namespace ibvp::sw {

const char* scheduling_name(Scheduling s) {
  switch (s) {
    case Scheduling::fifo: return "fifo";
    case Scheduling::virtual_clock: return "virtual_clock";
    case Scheduling::fair_queueing: return "fair_queueing";
  }
  return "unknown";
}

const char* scheduling_scope_name(SchedulingScope s) {
  switch (s) {
    case SchedulingScope::per_vl: return "per_vl";
    case SchedulingScope::across_vls: return "across_vls";
  }
  return "unknown";
}

uint32_t Switch::rate_slot(const ib::Packet& p) {
  // A CBR connection (seed 002) or a scenario flow is one connection of the scheduler; the
  // packets no flow made (ACKs, perftest, management) share slot 0.
  if (p.connection != ~uint32_t{0}) return 2 * p.connection + 2;
  if (p.flow != ib::kNoFlow) return 2 * p.flow + 1;
  return 0;
}

void Switch::rate_enqueue(Port& out, Request& r) {
  RateState& st = *out.sched;
  const ib::Packet& p = *r.packet;
  r.slot = rate_slot(p);
  if (r.slot >= st.queued.size()) {
    // Grows once per connection first seen here, never per packet.
    st.queued.resize(r.slot + 1, 0);
    if (seen_.size() < st.queued.size()) seen_.resize(st.queued.size(), 0);
  }
  // Seed 003 Sec. 4.2: a message carries its connection's rate (Vtick) in its header.
  const uint64_t rate = p.reserved_bps ? p.reserved_bps : unreserved_bps_;
  const uint64_t now = agenda_.now_ps();
  if (cfg_.scheduling == Scheduling::virtual_clock) {
    r.vtick_ns = sched::vtick_ns(p.size, rate);
    // A connection with nothing waiting here becomes active: its clock catches up with
    // real time (Zhang), so idling earns no credit.
    if (st.queued[r.slot] == 0) st.vc.activate(r.slot, now / 1000);
  } else {
    r.finish = st.fq->arrive(r.slot, now, 8.0 * p.size, static_cast<double>(rate));
  }
  st.queued[r.slot]++;
}

void Switch::rate_dequeue(Port& out, const Request& r, bool sent) {
  RateState& st = *out.sched;
  assert(r.slot < st.queued.size() && st.queued[r.slot] > 0);
  st.queued[r.slot]--;
  if (sent && cfg_.scheduling == Scheduling::virtual_clock) st.vc.charge(r.slot, r.vtick_ns);
}

bool Switch::rate_before(const Port& out, const Request& a, const Request& b) const {
  if (cfg_.scheduling == Scheduling::virtual_clock)
    return out.sched->vc.stamp(a.slot, a.vtick_ns) < out.sched->vc.stamp(b.slot, b.vtick_ns);
  return a.finish < b.finish;
}

int Switch::rate_choose_vl(const Port& out, uint16_t ready, const std::array<int, ib::kMaxVls>& pick) const {
  if (ready & (1u << ib::kVl15)) return ib::kVl15;  // IBA 7.6.9: VL15 before every data VL
  int best = -1;
  for (uint32_t r = ready; r; r &= r - 1) {
    const int vl = __builtin_ctz(r);
    const Request& c = out.vls[vl].requests[static_cast<size_t>(pick[vl])];
    // Ties go to the lower VL (the loop runs upwards and only a smaller stamp replaces).
    if (best < 0 || rate_before(out, c, out.vls[best].requests[static_cast<size_t>(pick[best])])) best = vl;
  }
  return best;
}

}  // namespace ibvp::sw
