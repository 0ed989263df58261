// RC reliability: the responder's ACKs and NAKs (AETH syndromes, IBA 9.7.5.2 and Tables
// 43-45) and the requester's side of them: ACK coalescing (a request is acknowledged by any
// later ACK, IBA 9.7.5.1.2), PSN sequence NAKs and local ACK timeouts answered by go-back-N
// retransmission (IBA 9.7.5.2.1, 9.7.6.1.3) within retry_cnt, fatal NAKs (IBA 9.7.5.2.2),
// RNR NAKs: sent by a responder without a receive WQE, waited out and retried within
// rnr_retry by the requester (IBA 9.7.5.2.8).
#include "firmware/default/firmware.h"

#include <cstddef>

#include "firmware/default/constants.h"

namespace ibvp::fw {

ibvp_tx_desc Firmware::rc_response(uint32_t qpn, const Qp& qp, uint8_t op, uint32_t psn) const {
  ibvp_tx_desc d{};
  d.qp_type = IBVP_QPT_RC;
  d.op = op;
  d.sl = qp.sl;
  d.vl = vl_of(qp.sl);
  d.dlid = qp.dlid;
  d.p_key = 0xFFFF;
  d.src_qp = qpn;
  d.dest_qp = qp.dest_qpn;
  d.psn = psn;
  return d;
}

void Firmware::send_ack(uint32_t qpn, Qp& qp, uint32_t psn, uint8_t syndrome) {
  ibvp_tx_desc d = rc_response(qpn, qp, IBVP_TX_ACK, psn);
  d.aeth_syndrome = syndrome;
  d.msn = qp.msn;
  d.mtu_bytes = qp.mtu_bytes;
  if (qp.becn_pending) d.cc_flags = IBVP_TXF_BECN;
  if (hal_->tx_post(c_, &d) != 0) return;
  if ((syndrome >> 5) == 0) hal_->counter_add(c_, IBVP_CNT_ACKS_SENT, 1);
  if (qp.becn_pending) {
    qp.becn_pending = false;
    hal_->counter_add(c_, IBVP_CNT_BECN_SENT, 1);
  }
}

void Firmware::receive_ack(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx) {
  const uint8_t kind = rx.aeth_syndrome >> 5;  // IBA Table 43: 000 ACK, 001 RNR NAK, 011 NAK
  // Congestion feedback: an ACK or NAK with BECN is a mark, an ACK without one is not.
  if (rx.ecn & IBVP_RX_BECN) {
    hal_->counter_add(c_, IBVP_CNT_BECN_RECEIVED, 1);
    cc_feedback(qpn, rx.slid, true, rx.psn);
  } else if (kind == 0) {
    cc_feedback(qpn, rx.slid, false, rx.psn);
  }
  if (sched_.cc.window > 0) {
    // An ACK covers its PSN, a NAK the PSNs before it (9.7.5.1.2).
    const uint32_t covered = kind == 0 ? psn_add(rx.psn, 1) : rx.psn;
    if (psn_before(qp.acked_psn, covered)) qp.acked_psn = covered;
  }
  if (kind == 0) {
    complete_acked(qpn, qp, rx.psn, true);
    cc_release_held(qpn, qp, false);
    return;
  }
  hal_->counter_add(c_, IBVP_CNT_NAKS_RECEIVED, 1);
  // Requests before the NAK's PSN were received (an implicit ACK, 9.7.5.1.2).
  complete_acked(qpn, qp, rx.psn, false);
  if (qp.state != IBVP_QPS_RTS || qp.sq.empty() || !rc_outstanding(qp)) return;
  if (kind == 3 && (rx.aeth_syndrome & 0x1F) == 0) {
    // PSN sequence error (9.7.5.2.1): go back to the PSN the responder expects.
    retry(qpn, qp, rx.psn);
    return;
  }
  if (kind == 1) {
    receive_rnr_nak(qpn, qp, rx.psn, rx.aeth_syndrome & 0x1F);
    return;
  }
  // Other NAKs are fatal (9.7.5.2.2): the request fails, the QP errs.
  uint8_t status = IBVP_WC_REM_OP_ERR;
  if (kind == 3 && (rx.aeth_syndrome & 0x1F) == 1) status = IBVP_WC_REM_INV_REQ_ERR;
  else if (kind == 3 && (rx.aeth_syndrome & 0x1F) == 2) status = IBVP_WC_REM_ACCESS_ERR;
  const SendWork w = qp.sq.front();
  qp.sq.pop_front();
  if (qp.send_idx > 0) qp.send_idx--;
  else qp.next_packet = 0;
  complete_send(qpn, qp, w, status, true);
  enter_error(qpn, qp);
}

void Firmware::complete_acked(uint32_t qpn, Qp& qp, uint32_t psn, bool inclusive) {
  // Requests whose last PSN is before `psn` (or at it, for an ACK) were received; an ACK
  // covers every earlier request (coalescing, IBA 9.7.5.1.2). A READ completes only with
  // all its data: an ACK past an unfinished READ means its responses were lost, and it is
  // asked for again.
  bool progress = false;
  while (qp.send_idx > 0 && !qp.sq.empty()) {
    const SendWork& w = qp.sq.front();
    const uint32_t last = psn_add(w.first_psn, w.psns - 1);
    const bool covered = inclusive ? !psn_before(psn, last) : psn_before(last, psn);
    if (!covered) break;
    // An atomic, too, completes only with its response (ATOMIC ACKNOWLEDGE).
    if (is_rd_atomic(w.wqe.opcode)) {
      if (rewind(qpn, qp, psn_add(w.first_psn, w.read_done))) schedule();
      break;
    }
    const SendWork done = w;
    qp.sq.pop_front();
    qp.send_idx--;
    complete_send(qpn, qp, done, IBVP_WC_SUCCESS, false);
    progress = true;
  }
  if (progress) {
    qp.retries_left = qp.retry_cnt;
    qp.rnr_retries_left = qp.rnr_retry;
    update_timer(qpn, qp);
  }
}

void Firmware::arm_timer(uint32_t qpn, Qp& qp) {
  // IBA 9.7.6.1.3 / libibverbs ibv_qp_attr.timeout: 4.096 us * 2^timeout; 0 is infinite.
  if (qp.timer_armed || qp.timeout == 0) return;
  hal_->timer_set(c_, qpn, uint64_t{4'096'000} << qp.timeout);
  qp.timer_armed = true;
}

void Firmware::update_timer(uint32_t qpn, Qp& qp) {
  // Progress restarts the timer; nothing outstanding stops it.
  if (qp.timer_armed) {
    hal_->timer_cancel(c_, qpn);
    qp.timer_armed = false;
  }
  if (rc_outstanding(qp)) arm_timer(qpn, qp);
}

bool Firmware::rewind(uint32_t qpn, Qp& qp, uint32_t psn, bool count_retransmission) {
  // Go-back-N: the WQE holding `psn` is sent again from that packet; the WQEs after it
  // keep their PSNs and follow (IBA 9.7.5.2.1, 9.7.6.1.3).
  const uint32_t limit = qp.send_idx < qp.sq.size() ? qp.send_idx + 1 : qp.send_idx;
  for (uint32_t i = 0; i < limit; ++i) {
    const SendWork& w = qp.sq[i];
    if (!w.started) break;
    const uint32_t off = (psn - w.first_psn) & 0xFFFFFF;
    if (off >= w.psns) continue;
    qp.send_idx = i;
    qp.next_packet = w.wqe.opcode == IBVP_WR_RDMA_READ ? 0 : off;
    qp.active = false;  // re-entered below with its position in active_
    for (size_t k = 0; k < active_.size(); ++k)
      if (active_[k] == qpn) active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(k));
    set_active(qpn, qp);
    if (count_retransmission) hal_->counter_add(c_, IBVP_CNT_RETRANSMISSIONS, 1);
    return true;
  }
  return false;
}

void Firmware::retry(uint32_t qpn, Qp& qp, uint32_t psn) {
  // Held packets are stale after a go-back: let them go (the responder drops duplicates)
  // so that they do not block their VL's tx queue.
  cc_release_held(qpn, qp, true);
  if (qp.sq.empty()) return;
  if (qp.retries_left == 0) {
    // IBA 9.7.6.1.3: retries exhausted: the request fails and the QP enters the error
    // state (libibverbs IBV_WC_RETRY_EXC_ERR); the rest flush.
    const SendWork w = qp.sq.front();
    qp.sq.pop_front();
    if (qp.send_idx > 0) qp.send_idx--;
    else qp.next_packet = 0;
    complete_send(qpn, qp, w, IBVP_WC_RETRY_EXC_ERR, true);
    enter_error(qpn, qp);
    return;
  }
  qp.retries_left--;
  if (rewind(qpn, qp, psn)) schedule();
  update_timer(qpn, qp);
}

void Firmware::on_timer(uint32_t qpn) {
  if (qpn >= qps_.size() || !qps_[qpn].valid) return;
  Qp& qp = qps_[qpn];
  qp.timer_armed = false;
  if (qp.rnr_wait) return;  // the RNR timer runs instead; it arms this one again
  if (qp.type != IBVP_QPT_RC || qp.state != IBVP_QPS_RTS || !rc_outstanding(qp) || qp.sq.empty()) return;
  hal_->counter_add(c_, IBVP_CNT_ACK_TIMEOUTS, 1);
  // Local ACK timeout: everything from the oldest unacknowledged PSN goes again.
  const SendWork& w = qp.sq.front();
  retry(qpn, qp, psn_add(w.first_psn, w.wqe.opcode == IBVP_WR_RDMA_READ ? w.read_done : 0));
}

void Firmware::send_rnr_nak(uint32_t qpn, Qp& qp, uint32_t psn) {
  // IBA 9.7.5.2.8: receiver not ready. The NAK carries the refused PSN and this QP's
  // min_rnr_timer as its timer code (Table 45); ePSN stays, so the retry is that PSN again,
  // and packets behind it are dropped without a sequence NAK until it comes (responder.cpp).
  send_ack(qpn, qp, psn, static_cast<uint8_t>(kRnrNak | (qp.min_rnr_timer & 0x1F)));
  qp.rnr_nak_sent = true;
  hal_->counter_add(c_, IBVP_CNT_RNR_NAKS_SENT, 1);
}

void Firmware::receive_rnr_nak(uint32_t qpn, Qp& qp, uint32_t psn, uint8_t timer_code) {
  // IBA 9.7.5.2.8: the responder had no receive WQE for the request at `psn` (the requests
  // before it were acknowledged by the NAK, receive_ack). The requester waits the NAK's RNR
  // timer, then sends again from that PSN. rnr_retry 7 retries forever; otherwise the
  // retries are counted down, reset by progress (complete_acked), and the request fails
  // with RNR_RETRY_EXC_ERR once they are spent, the QP entering the error state.
  cc_release_held(qpn, qp, true);  // stale after the go-back, as in retry()
  if (qp.rnr_wait) return;         // already waiting: a NAK of a packet sent before the first
  if (qp.rnr_retry != 7 && qp.rnr_retries_left == 0) {
    const SendWork w = qp.sq.front();
    qp.sq.pop_front();
    if (qp.send_idx > 0) qp.send_idx--;
    else qp.next_packet = 0;
    complete_send(qpn, qp, w, IBVP_WC_RNR_RETRY_EXC_ERR, true);
    enter_error(qpn, qp);
    return;
  }
  qp.rnr_wait = true;  // before the rewind: the QP leaves the scheduler until the timer fires
  if (!rewind(qpn, qp, psn, false)) {
    qp.rnr_wait = false;  // no request holds that PSN: a stale NAK
    return;
  }
  if (qp.rnr_retry != 7) qp.rnr_retries_left--;
  // The RNR timer replaces the local ACK timer while the QP waits.
  if (qp.timer_armed) {
    hal_->timer_cancel(c_, qpn);
    qp.timer_armed = false;
  }
  hal_->timer_set(c_, kRnrTimerFlag | qpn, rnr_timer_ps(timer_code));
}

void Firmware::on_rnr_timer(uint32_t qpn) {
  if (qpn >= qps_.size() || !qps_[qpn].valid) return;
  Qp& qp = qps_[qpn];
  if (!qp.rnr_wait) return;
  qp.rnr_wait = false;
  hal_->counter_add(c_, IBVP_CNT_RNR_RETRIES, 1);
  set_active(qpn, qp);
  schedule();
  if (rc_outstanding(qp)) arm_timer(qpn, qp);
}

}  // namespace ibvp::fw
