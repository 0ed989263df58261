// Congestion control (seed 004 Sec. 4 and 6; IBA Vol 1 Annex A10): at the source, a rate
// per flow (sending QP, destination LID) lowered per mark returned and raised per unmarked
// ACK (firmware/cc/response.h), or the annex's CCTI and Congestion Control Table
// (firmware/cc/cct.h); an RC window of unacknowledged packets with packets held ahead of
// it. At the destination, a marked UD or UC packet is answered with a CNP (opcode 0x81).
#include "firmware/default/firmware.h"

#include <algorithm>
#include <cmath>

#include "firmware/default/constants.h"

namespace ibvp::fw {

void Firmware::cc_feedback(uint32_t qpn, uint16_t dlid, bool marked, uint32_t psn) {
  if (cct_) {
    // The annex answers every BECN; only the timer brings the rate back.
    if (marked) cct_becn(cc_key(qpn, dlid));
    return;
  }
  if (!cc_) return;
  const uint64_t key = cc_key(qpn, dlid);
  const auto it = cc_flows_.find(key);
  if (it == cc_flows_.end() && !marked) return;  // at R_max already
  CcFlow f = it == cc_flows_.end() ? CcFlow{} : it->second;
  if (marked) {
    // One decrease per round trip: a mark on a packet sent before the last decrease took
    // effect reports congestion the source has already answered (with the paper's window
    // of one packet no such mark can exist). The packets from the next PSN on carry the
    // new rate.
    if (it != cc_flows_.end() && psn_before(psn, f.recover_psn)) return;
    f.rate = cc_->decrease(f.rate);
    f.recover_psn = qps_[qpn].sq_psn;
  } else {
    f.rate = cc_->increase(f.rate);
  }
  if (f.rate >= 1.0) cc_flows_.erase(key);  // back at R_max: no state
  else cc_flows_[key] = f;
}

uint32_t Firmware::cc_outstanding(const Qp& qp) const {
  if (qp.type != IBVP_QPT_RC || !rc_outstanding(qp) || qp.sq.empty()) return 0;
  // Unacknowledged: from the oldest request still waiting (or the ACKed part of it) to the
  // next PSN to go out.
  uint32_t una = qp.sq.front().first_psn;
  if (psn_before(una, qp.acked_psn)) una = qp.acked_psn;
  uint32_t next = qp.sq_psn;
  if (qp.send_idx < qp.sq.size()) {
    const SendWork& w = qp.sq[qp.send_idx];
    if (w.started) next = psn_add(w.first_psn, qp.next_packet);
  }
  const uint32_t outstanding = (next - una) & 0xFFFFFF;
  return outstanding >= 0x800000 ? 0 : outstanding;  // "ahead" after a go-back: none
}

bool Firmware::cc_window_open(const Qp& qp) const {
  if (qp.type != IBVP_QPT_RC || qp.send_idx >= qp.sq.size()) return true;
  return cc_outstanding(qp) < sched_.cc.window + sched_.cc.prefetch;
}

void Firmware::cc_release_held(uint32_t qpn, Qp& qp, bool all) {
  if (qp.cc_held == 0) return;
  uint32_t n = qp.cc_held;
  if (!all) {
    // The packets on the wire (not held) and the window's room beside them.
    const uint32_t out = cc_outstanding(qp);
    const uint32_t sent = out > qp.cc_held ? out - qp.cc_held : 0;
    const uint32_t room = sched_.cc.window > sent ? sched_.cc.window - sent : 0;
    n = room < n ? room : n;
  }
  if (n == 0) return;
  hal_->tx_release(c_, qpn, n);
  qp.cc_held -= n;
}

uint32_t Firmware::cc_gap_q8(uint32_t qpn, uint16_t dlid) const {
  if (cct_) {
    const auto it = cct_flows_.find(cc_key(qpn, dlid));
    return cct_->ipd(it == cct_flows_.end() ? sched_.cc.cct.min : it->second) * 256;
  }
  const auto it = cc_flows_.find(cc_key(qpn, dlid));
  if (it == cc_flows_.end()) return 0;
  const cc::RateLimits l;
  if (sched_.cc.discrete) return cc::ipd_for(it->second.rate, l) * 256;
  // Continuous: the rate itself, a gap of R_max/r - 1 packet times in 1/256 steps.
  const double gap = std::clamp(l.r_max / it->second.rate - 1.0, 0.0, 255.0);
  return static_cast<uint32_t>(std::lround(gap * 256.0));
}

void Firmware::cct_becn(uint64_t key) {
  const auto it = cct_flows_.find(key);
  const uint32_t ccti = cct_->after_becn(it == cct_flows_.end() ? sched_.cc.cct.min : it->second);
  if (cct_->at_rest(ccti)) return;  // CCTI_Limit = CCTI_Min: nothing to pace
  cct_flows_[key] = ccti;
  if (!cct_timer_armed_) {
    hal_->timer_set(c_, kCctTimerId, sched_.cc.cct.timer_ps());
    cct_timer_armed_ = true;
  }
}

void Firmware::on_cct_timer() {
  cct_timer_armed_ = false;
  for (auto it = cct_flows_.begin(); it != cct_flows_.end();) {
    it->second = cct_->after_timer(it->second);
    if (cct_->at_rest(it->second)) it = cct_flows_.erase(it);
    else ++it;
  }
  // The timer runs while some flow is above CCTI_Min, so an idle port wakes nobody.
  if (!cct_flows_.empty()) {
    hal_->timer_set(c_, kCctTimerId, sched_.cc.cct.timer_ps());
    cct_timer_armed_ = true;
  }
}

// ---------------------------------------------------------------------------------------
// RC requester reliability (IBA 9.7.5.1, 9.7.6.1)

void Firmware::send_cnp(uint32_t qpn, const Qp& qp, const ibvp_rx_packet& rx, uint32_t to_qp) {
  ibvp_tx_desc d{};
  d.qp_type = static_cast<uint8_t>(qp.type);
  d.op = IBVP_TX_CNP;
  d.sl = rx.sl;
  d.vl = vl_of(rx.sl);
  d.dlid = rx.slid;
  d.p_key = 0xFFFF;
  d.src_qp = qpn;
  d.dest_qp = to_qp;
  d.psn = rx.psn;  // the marked packet's PSN: the source tells old marks from new ones
  d.mtu_bytes = kPortMtu;
  if (hal_->tx_post(c_, &d) == 0) hal_->counter_add(c_, IBVP_CNT_BECN_SENT, 1);
}

}  // namespace ibvp::fw
