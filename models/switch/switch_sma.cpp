// The switch's management port 0 on the packet path: which packets reach the SMI, what the
// SMI does with a directed-route SMP (IBA 14.2.2), and how the SMA's responses leave. The
// answers themselves are sma.cpp's.
#include <algorithm>
#include <cassert>

#include "models/switch/switch.h"

namespace ibvp::sw {

namespace mad = ib::mad;

// An SMP is a 256-byte MAD on VL15 to QP0 (IBA 13.5.1, 14.2.1) with a subnet management class.
bool Switch::is_smp(const ib::Packet& p) {
  return p.lrh.vl == ib::kVl15 && p.bth.opcode == ib::Opcode::ud_send_only && p.bth.dest_qp == 0 &&
         p.payload.size() == ib::kMadBytes &&
         (p.payload[1] == mad::kClassSubnLid || p.payload[1] == mad::kClassSubnDirected);
}

// The SMP's tail is in: the management processor takes it out of the input buffer (whose
// VL15 space frees now) into its queue, and serves the queue one SMP per sma_delay.
void Switch::sma_in(uint16_t in_port, ib::Packet* p) {
  free_input(in_port, p->lrh.vl, ib::blocks_for(p->size));
  if (sma_queue_.size() >= cfg_.sma_queue_depth) {
    ports_[in_port].counters.vl15_dropped++;
    p->drop = ib::DropReason::vl15_overflow;
    dropped_++;
    probe_.drop(*p, node_, agenda_.now_ps());
    packets_.release(p);
    return;
  }
  sma_queue_.emplace_back(in_port, p);
  if (sma_queue_.size() == 1) agenda_.push_at(agenda_.now_ps() + cfg_.sma_delay.value(), kSmi, 0, 0);
}

void Switch::sma_next() {
  const auto [in_port, p] = sma_queue_.front();
  sma_queue_.pop_front();
  if (!sma_queue_.empty()) agenda_.push_at(agenda_.now_ps() + cfg_.sma_delay.value(), kSmi, 0, 0);
  smi(in_port, p);
}

// An SMP the management processor holds (no longer in an input buffer) ends here.
void Switch::consume(ib::Packet* p) {
  probe_.deliver(*p, node_, agenda_.now_ps());
  packets_.release(p);
}

void Switch::discard_smp(ib::Packet* p) {
  p->drop = ib::DropReason::smp_discard;
  dropped_++;
  probe_.drop(*p, node_, agenda_.now_ps());
  packets_.release(p);
}

// The SMP at the head of the management processor's queue has had its sma_delay; `in_port`
// is the port it came in by (directed-route rules read it).
void Switch::smi(uint16_t in_port, ib::Packet* p) {
  mad::Bytes bytes;
  std::copy(p->payload.begin(), p->payload.end(), bytes.begin());
  mad::Smp s = mad::decode_smp(bytes);
  const uint16_t arrived_slid = p->lrh.slid;
  // IBA 14.2.2.2 C14-9:4: an outgoing SMP whose HopPointer is already HopCount + 1 came by a
  // last LID-routed part, from the switch that ended the directed-route part.
  const bool after_lid_part = s.directed() && !s.returning() && s.hop_pointer() == s.hop_count() + 1;
  if (s.directed()) {
    const mad::DrHop hop = mad::dr_receive(s, true, static_cast<uint8_t>(in_port), static_cast<uint8_t>(cfg_.num_ports));
    if (hop.route == mad::DrRoute::discard) return discard_smp(p);
    // The last LID-routed part (IBA 14.2.2.2): from this switch to DrDLID (outgoing) or
    // DrSLID (returning) through the LFT; a LID of this switch's own ends the SMP here.
    const uint8_t out_port = hop.route == mad::DrRoute::lid ? lft_.lookup(hop.lid) : hop.port;
    const bool here = hop.route == mad::DrRoute::local || (hop.route == mad::DrRoute::lid && out_port == 0);
    if (!here) {
      // Forwarded: the same packet goes on with its hop pointer (and ReturnPath) updated. The
      // directed-route part names no LIDs (IBA 14.2.2.1).
      mad::encode(s, bytes);
      std::copy(bytes.begin(), bytes.end(), p->payload.begin());
      p->lrh.dlid = hop.route == mad::DrRoute::lid ? hop.lid : ib::kPermissiveLid;
      p->lrh.slid = hop.route == mad::DrRoute::lid ? sma_.lid() : ib::kPermissiveLid;
      if (out_port == Lft::kNoRoute || !attached(out_port)) return discard_smp(p);
      // It leaves from management port 0, where the processor put it (as a response does).
      Port& mgmt = ports_[0];
      mgmt.buffers.absorb(agenda_.now_ps());
      if (!mgmt.buffers.fits(ib::kVl15, ib::blocks_for(p->size))) {
        p->drop = ib::DropReason::vl15_overflow;
        dropped_++;
        probe_.drop(*p, node_, agenda_.now_ps());
        packets_.release(p);
        return;
      }
      p->hop_tail_ps = agenda_.now_ps();
      admit(0, p);
      return request_output(0, p, out_port);
    }
    if (s.returning()) return discard_smp(p);  // no SM behind port 0
  }
  // The SM's TrapRepress (IBA 13.4.9, 14.2.5.1): the trap it names is not sent again.
  if (s.hdr.method == mad::kMethodTrapRepress) {
    trap_repressed(s.hdr.transaction_id);
    return consume(p);
  }
  const std::optional<mad::Smp> resp = sma_.answer(s, in_port);
  consume(p);
  if (!resp) return;
  mad::Smp r = *resp;
  // LID-routed, or after a last LID-routed part: back by LID to the request's SLID (for the
  // latter the switch that started that part, which takes it on along ReturnPath, IBA
  // 14.2.2.4).
  if (!r.directed() || after_lid_part) return send_response(r, arrived_slid, lft_.lookup(arrived_slid));
  const mad::DrHop hop = mad::dr_originate(r);
  if (hop.route != mad::DrRoute::port) return;  // HopCount 0: the SM would be this switch
  send_response(r, ib::kPermissiveLid, hop.port);
}

// The response leaves management port 0 as a new packet: VL15, QP0 to QP0 (IBA 13.5.3), at
// once (the SMA's time was sma_delay).
void Switch::send_response(const mad::Smp& resp, uint16_t dlid, uint8_t out_port) {
  ib::Packet* p = packets_.acquire();
  p->lrh.vl = ib::kVl15;
  p->lrh.sl = 0;
  p->lrh.lnh = ib::Lnh::iba_local;
  p->lrh.dlid = dlid;
  // The directed-route part names no LIDs (IBA 14.2.2.1: both permissive).
  p->lrh.slid = dlid == ib::kPermissiveLid ? ib::kPermissiveLid : sma_.lid();
  p->bth.opcode = ib::Opcode::ud_send_only;
  p->bth.p_key = 0xFFFF;
  p->bth.dest_qp = 0;
  p->deth.q_key = 0;
  p->deth.src_qp = 0;
  mad::Bytes bytes;
  mad::encode(resp, bytes);
  p->payload.assign(bytes.begin(), bytes.end());
  p->payload_bytes = ib::kMadBytes;
  p->finalize_lengths();
  p->flow = ib::kNoFlow;
  p->src_node = p->dst_node = node_;
  p->created = p->injected = sc_core::sc_time::from_value(agenda_.now_ps());
  p->hop_tail_ps = agenda_.now_ps();
  // A packet the switch made enters the fabric here: observers count it like a CA's.
  probe_.inject(*p, agenda_.now_ps());
  Port& mgmt = ports_[0];
  mgmt.buffers.absorb(agenda_.now_ps());
  const bool routable = out_port != Lft::kNoRoute && out_port != 0 && attached(out_port);
  if (!routable || !mgmt.buffers.fits(ib::kVl15, ib::blocks_for(p->size))) {
    p->drop = routable ? ib::DropReason::vl15_overflow : ib::DropReason::no_route;
    dropped_++;
    probe_.drop(*p, node_, agenda_.now_ps());
    packets_.release(p);
    return;
  }
  admit(0, p);
  request_output(0, p, out_port);
}

// ---- link events and Trap 128 -----------------------------------------------------------

void Switch::set_link(uint16_t port, bool up, uint8_t state_when_up) {
  assert(attached(port));
  Port& p = ports_[port];
  if (p.link_down == !up) return;
  p.link_down = !up;
  if (up) {
    // Link training done (its time not modelled): Init, where an SM arms it (IBA 7.2).
    p.port_state = state_when_up;
  } else {
    p.port_state = mad::kPortDown;
    // IBA 7.2: a port that leaves Active discards the packets queued for it; each frees its
    // input space and returns its credit upstream as a lifetime drop does (discard()).
    for (uint8_t vl = 0; vl < ib::kMaxVls; ++vl)
      while (!p.vls[vl].requests.empty()) discard(port, vl, 0, ib::DropReason::link_down);
    p.mc.reserved = false;
  }
  sma_.note_port_state_change();
  raise_trap(port);
}

// IBA 14.3.7: a switch whose port changes state sends Trap 128 to the master SM (LID-routed,
// VL15, QP0). One trap is outstanding at a time: a later change replaces it with a new
// TID. It leaves after the management processor's sma_delay.
void Switch::raise_trap(uint16_t port) {
  if (sma_.master_sm_lid() == 0) return;  // no SM has told this switch where it is
  TrapRecord r;
  r.tid = (uint64_t{node_} << 32) | (traps_.size() + 1);
  r.port = port;
  traps_.push_back(r);
  trap_generation_ = traps_.size();
  agenda_.push_at(agenda_.now_ps() + cfg_.sma_delay.value(), kTrap, 0, trap_generation_);
}

void Switch::send_trap(uint64_t generation) {
  if (generation != trap_generation_) return;  // repressed, or replaced by a newer trap
  TrapRecord& r = traps_.at(generation - 1);
  const uint64_t now = agenda_.now_ps();
  if (r.sends++ == 0) r.first_sent_ps = now;
  const uint16_t sm_lid = sma_.master_sm_lid();
  send_response(mad::make_link_state_change_trap(sma_.lid(), r.tid), sm_lid, lft_.lookup(sm_lid));
  // IBA 13.4.9: resent until repressed. The interval is SubnetTimeout's (4.096 us x 2^t,
  // IBA 14.2.5.6), the time the SM says a MAD may take to cross the subnet.
  const uint64_t interval_ps = uint64_t{4'096'000} << std::min<uint8_t>(sma_.subnet_timeout(), 31);
  agenda_.push_at(now + interval_ps, kTrap, 0, generation);
}

void Switch::trap_repressed(uint64_t tid) {
  if (trap_generation_ == 0 || traps_[trap_generation_ - 1].tid != tid) return;  // not outstanding
  traps_[trap_generation_ - 1].repressed_ps = agenda_.now_ps();
  trap_generation_ = 0;
}

}  // namespace ibvp::sw
