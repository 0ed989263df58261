// The switch's packet lifetimes (lifetime.h; IBA 18.2.5.4, seed 000 Sec. 3.5): a part of
// Switch kept apart from the packet path in switch.cpp. Nothing here runs unless a lifetime
// is finite, and nothing schedules a timer per packet: arbitrate() calls expire(), which
// drops what has expired and asks for one retry when the next request would expire, so a
// head that waits with no other event coming still goes on time.
#include <algorithm>
#include <cassert>

#include "models/switch/switch.h"

namespace ibvp::sw {

const char* drop_policy_name(DropPolicy p) {
  switch (p) {
    case DropPolicy::all: return "all";
    case DropPolicy::selective: return "selective";
  }
  return "unknown";
}

void Switch::set_hoq_life(uint16_t port, uint8_t vl, uint8_t code) {
  assert(vl < ib::kMaxVls);
  ports_.at(port).vls[vl].hoq_life_ps = lifetime_ps(code);
  lifetimes_ |= code < kLifetimeInfinite;
}

void Switch::set_switch_life(uint8_t code) {
  switch_life_ps_ = lifetime_ps(code);
  lifetimes_ |= code < kLifetimeInfinite;
}

void Switch::expire(uint16_t out_port) {
  Port& out = ports_[out_port];
  const uint64_t now = agenda_.now_ps();
  uint64_t next = kNoLifetime;
  for (uint32_t pending = out.requested_vls; pending; pending &= pending - 1) {
    const uint8_t vl = static_cast<uint8_t>(__builtin_ctz(pending));
    RequestQueue& q = out.vls[vl].requests;
    if (switch_life_ps_ != kNoLifetime) {
      // Unicast requests join a VL's queue in arrival order, but synchronous and central-buffer
      // copies go ahead of them (replication.cpp), so the whole queue is looked at.
      for (size_t i = 0; i < q.size();) {
        if (!eligible(q[i])) {
          ++i;  // selective: kept however long it stays
        } else if (now - q[i].arrived_ps >= switch_life_ps_) {
          discard(out_port, vl, i, ib::DropReason::switch_lifetime);
        } else {
          next = std::min(next, q[i].arrived_ps + switch_life_ps_);
          ++i;
        }
      }
    }
    const uint64_t hoq = out.vls[vl].hoq_life_ps;
    if (hoq != kNoLifetime && !q.empty() && eligible(q.front())) {
      // seed 000 Sec. 3.5: "When the sum of the value stored in HQLifetime and HLL becomes
      // less than the current clock value, the packet is removed from the queue." The next
      // request is the head from the drop on, so at most one goes per VL and instant.
      if (now - out.vls[vl].head_since_ps >= hoq) discard(out_port, vl, 0, ib::DropReason::hoq_lifetime);
      if (!q.empty() && eligible(q.front())) next = std::min(next, out.vls[vl].head_since_ps + hoq);
    }
  }
  if (next != kNoLifetime) schedule_retry(out_port, next);
}

void Switch::discard(uint16_t out_port, uint8_t vl, size_t index, ib::DropReason why) {
  Port& out = ports_[out_port];
  RequestQueue& q = out.vls[vl].requests;
  const Request r = q[index];
  if (rate_) rate_dequeue(out, r, false);
  q.erase(q.begin() + static_cast<std::ptrdiff_t>(index));
  requests_from_[r.in_port * ports_.size() + out_port]--;
  ports_[r.in_port].queued--;
  if (q.empty()) out.requested_vls = static_cast<uint16_t>(out.requested_vls & ~(1u << vl));
  assert(out.vls[vl].waiting_blocks >= r.blocks);
  out.vls[vl].waiting_blocks -= r.blocks;
  const uint64_t now = agenda_.now_ps();
  if (index == 0) out.vls[vl].head_since_ps = now;
  // A drop moves the VL on as a transmission would: the deadlock watch counts it as progress.
  out.vls[vl].progress_ps = now;
  out.counters.xmit_discards++;  // IBA PortXmitDiscards counts them at the output
  if (ecn_.watches_input_buffers()) ecn_.discarded(out_port);
  // A multicast copy shares its input space with its siblings (replication.cpp).
  if (r.mc != McKind::unicast) return drop_copy(out_port, r, why);
  // drop() frees the space in the input buffer the packet came in on (once its tail is in)
  // and returns the credit upstream.
  r.packet->lrh.vl = r.in_vl;
  drop(r.in_port, r.packet, why);
}

bool Switch::vl_drains_by_lifetime(uint16_t port, uint8_t vl) const {
  const Port& out = ports_.at(port);
  const RequestQueue& q = out.vls[vl].requests;
  if (q.empty()) return false;
  if (out.vls[vl].hoq_life_ps != kNoLifetime && eligible(q.front())) return true;
  if (switch_life_ps_ != kNoLifetime)
    for (const Request& r : q)
      if (eligible(r)) return true;
  return false;
}

}  // namespace ibvp::sw
