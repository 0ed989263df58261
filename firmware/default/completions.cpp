// Completions: CQEs written to the CQ's ring with the owner bit of its pass, CQ events for
// an armed CQ (ibv_req_notify_cq: next, or next solicited, completion; moderated per
// ibv_modify_cq's cq_count and cq_period), send completions
// (unsignaled ones only when they fail, IBA 10.8.6) and the error state, which flushes
// every queued request and posted receive (IBA 10.3.1).
#include "firmware/default/firmware.h"

#include "firmware/default/constants.h"

namespace ibvp::fw {

void Firmware::complete(uint32_t cqn, const ibvp_cqe& in, bool solicited) {
  if (cqn >= cqs_.size() || !cqs_[cqn].valid) return;
  Cq& cq = cqs_[cqn];
  ibvp_cqe cqe = in;
  // Owner bit: 1 on the first pass over the zeroed ring, flipping at each wrap, so the
  // driver tells a new entry from an old one without a producer index.
  cqe.owner = static_cast<uint8_t>(((cq.produced / cq.entries) & 1) ^ 1);
  const uint32_t idx = cq.produced & (cq.entries - 1);
  hal_->dma_write(c_, cq.ring + uint64_t{idx} * IBVP_CQE_BYTES, &cqe, sizeof cqe);
  cq.produced++;
  hal_->counter_add(c_, IBVP_CNT_CQES, 1);
  if (cqe.status != IBVP_WC_SUCCESS) hal_->counter_add(c_, IBVP_CNT_ERROR_CQES, 1);
  // ibv_req_notify_cq: one event for the next completion (or the next solicited one, or
  // any error), then the CQ must be armed again.
  const bool fire = cq.armed == 1 || (cq.armed == 2 && (solicited || cqe.status != IBVP_WC_SUCCESS));
  if (!fire || cq.event_addr == 0) return;
  if (cq.armed == 1 && (cq.moderation_count > 1 || cq.moderation_period_us > 0)) {
    // Moderation (ibv_modify_cq): one event per cq_count CQEs since the arming, or cq_period
    // after the first of them, so a busy consumer is woken less often.
    cq.since_armed++;
    if (cq.moderation_count == 0 || cq.since_armed < cq.moderation_count) {
      if (cq.moderation_period_us > 0 && !cq.period_timer) {
        hal_->timer_set(c_, kCqTimerFlag | cqn, uint64_t{cq.moderation_period_us} * 1'000'000);
        cq.period_timer = true;
      }
      return;
    }
  }
  raise_cq_event(cqn, cq);
}

void Firmware::raise_cq_event(uint32_t cqn, Cq& cq) {
  cq.armed = 0;
  cq.since_armed = 0;
  if (cq.period_timer) {
    hal_->timer_cancel(c_, kCqTimerFlag | cqn);
    cq.period_timer = false;
  }
  cq.events++;
  hal_->dma_write(c_, cq.event_addr, &cq.events, sizeof cq.events);
}

void Firmware::on_cq_timer(uint32_t cqn) {
  if (cqn >= cqs_.size() || !cqs_[cqn].valid) return;
  Cq& cq = cqs_[cqn];
  cq.period_timer = false;
  if (cq.armed == 1 && cq.since_armed > 0 && cq.event_addr != 0) raise_cq_event(cqn, cq);
}

void Firmware::complete_send(uint32_t qpn, const Qp& qp, const SendWork& w, uint8_t status, bool force) {
  scheduler_->on_completion(qpn);
  // Unsignaled WQEs complete silently unless they fail (IBA 10.8.6, sq_sig_all = 0).
  if ((w.wqe.flags & IBVP_SEND_SIGNALED) == 0 && !force && status == IBVP_WC_SUCCESS) return;
  ibvp_cqe cqe{};
  cqe.wr_id = w.wqe.wr_id;
  cqe.byte_len = w.wqe.sge_length;
  cqe.qp_num = qpn;
  cqe.src_qp = w.wqe_counter;  // send completions: the WQE counter (ibvp_hal.h)
  switch (w.wqe.opcode) {
    case IBVP_WR_RDMA_WRITE:
    case IBVP_WR_RDMA_WRITE_WITH_IMM: cqe.opcode = IBVP_WC_RDMA_WRITE; break;
    case IBVP_WR_RDMA_READ: cqe.opcode = IBVP_WC_RDMA_READ; break;
    case IBVP_WR_ATOMIC_CMP_AND_SWP: cqe.opcode = IBVP_WC_COMP_SWAP; break;
    case IBVP_WR_ATOMIC_FETCH_AND_ADD: cqe.opcode = IBVP_WC_FETCH_ADD; break;
    default: cqe.opcode = IBVP_WC_SEND; break;
  }
  cqe.status = status;
  complete(qp.send_cqn, cqe, false);
}

void Firmware::enter_error(uint32_t qpn, Qp& qp) {
  qp.state = IBVP_QPS_ERR;
  cc_release_held(qpn, qp, true);
  if (qp.timer_armed) {
    hal_->timer_cancel(c_, qpn);
    qp.timer_armed = false;
  }
  if (qp.rnr_wait) {
    hal_->timer_cancel(c_, kRnrTimerFlag | qpn);
    qp.rnr_wait = false;
  }
  // Outstanding and queued requests and posted receives are flushed (IBA 10.3.1 Error).
  while (!qp.sq.empty()) {
    complete_send(qpn, qp, qp.sq.front(), IBVP_WC_WR_FLUSH_ERR, true);
    qp.sq.pop_front();
  }
  qp.send_idx = qp.next_packet = 0;
  set_active(qpn, qp);
  while (!qp.recv_cache.empty()) {
    ibvp_cqe cqe{};
    cqe.wr_id = qp.recv_cache.front().wr_id;
    cqe.qp_num = qpn;
    cqe.opcode = IBVP_WC_RECV;
    cqe.status = IBVP_WC_WR_FLUSH_ERR;
    complete(qp.recv_cqn, cqe, false);
    qp.recv_cache.pop_front();
  }
}

}  // namespace ibvp::fw
