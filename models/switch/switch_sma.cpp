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

void Switch::consume(uint16_t in_port, ib::Packet* p) {
  probe_.deliver(*p, node_, agenda_.now_ps());
  free_input(in_port, p->lrh.vl, ib::blocks_for(p->size));
  packets_.release(p);
}

// The SMP's tail is in and the SMI/SMA has taken its time (sma_delay).
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
    if (hop.route == mad::DrRoute::discard) return drop(in_port, p, ib::DropReason::smp_discard);
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
      if (out_port == Lft::kNoRoute || !attached(out_port)) return drop(in_port, p, ib::DropReason::smp_discard);
      return request_output(in_port, p, out_port);
    }
    if (s.returning()) return drop(in_port, p, ib::DropReason::smp_discard);  // no SM behind port 0
  }
  const std::optional<mad::Smp> resp = sma_.answer(s, in_port);
  consume(in_port, p);
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

}  // namespace ibvp::sw
