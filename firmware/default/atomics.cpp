// RC atomics (IBA 9.4.5): FETCH ADD and COMPARE SWAP on 8 bytes of the responder's memory.
// The responder checks the request (QP and region allow remote atomics, the target is
// 8-byte aligned), reads the target, writes the new value and answers with an ATOMIC
// ACKNOWLEDGE that carries the original value (AtomicAckETH). Each request is executed
// exactly once: the responder keeps the results of its last max_dest_rd_atomic atomics
// (its "responder resources", IBA 9.7.5.1.3 / 10.2.4) and answers a duplicate (a retry
// after a lost acknowledgement) from them, without touching memory again. The requester
// writes the original value to the WQE's 8-byte SGE and completes with IBV_WC_FETCH_ADD or
// IBV_WC_COMP_SWAP.
//
// Atomicity: one firmware core executes every atomic that targets this host's memory, one
// event at a time, and its DMA read of the target is ordered after its own earlier posted
// writes (HostBus: a read does not pass a posted write), so atomics from any number of QPs
// and hosts are linearizable. Host CPU stores to the target are not (IBA 9.4.5 makes no
// promise about them either: IBV_ATOMIC_HCA).
#include "firmware/default/firmware.h"

#include "firmware/default/constants.h"

namespace ibvp::fw {

void Firmware::send_atomic_ack(uint32_t qpn, const Qp& qp, uint32_t psn, uint32_t msn, uint64_t orig) {
  ibvp_tx_desc d = rc_response(qpn, qp, IBVP_TX_ATOMIC_ACK, psn);
  d.aeth_syndrome = kAckSyndrome;
  d.msn = msn;
  d.mtu_bytes = qp.mtu_bytes;
  d.atomic_data = orig;
  if (hal_->tx_post(c_, &d) == 0) hal_->counter_add(c_, IBVP_CNT_ACKS_SENT, 1);
}

void Firmware::receive_atomic(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx, bool duplicate) {
  if (duplicate) {
    // IBA 9.7.5.1.3: a duplicate atomic is not executed again; its saved result is sent
    // again. One older than the responder resources cannot be answered: dropped, the
    // requester's retries then run out (it exceeded max_dest_rd_atomic).
    for (const Qp::AtomicResult& r : qp.atomic_results) {
      if (r.psn != rx.psn) continue;
      hal_->counter_add(c_, IBVP_CNT_ATOMIC_REPLAYS, 1);
      send_atomic_ack(qpn, qp, r.psn, r.msn, r.orig);
      return;
    }
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    return;
  }
  // Responder checks (IBA 9.4.5, 9.7.5.2.2): the QP and the R_Key's region must allow
  // remote atomics over the 8 bytes (a Remote Access NAK otherwise); a VA that is not
  // 8-byte aligned is an Invalid Request.
  if ((qp.access & IBVP_ACCESS_REMOTE_ATOMIC) == 0 ||
      !mr_covers(rx.reth_rkey, qp.pdn, rx.reth_va, 8, IBVP_ACCESS_REMOTE_ATOMIC)) {
    responder_error(qpn, qp, rx, kNakRemoteAccess, IBVP_WC_REM_ACCESS_ERR);
    return;
  }
  if ((rx.reth_va & 7) != 0) {
    responder_error(qpn, qp, rx, kNakInvalidRequest, IBVP_WC_REM_INV_REQ_ERR);
    return;
  }
  uint64_t orig = 0;  // host memory is little-endian (ibvp_hal.h), as the target's CPU reads it
  if (hal_->dma_read(c_, rx.reth_va, &orig, sizeof orig) != 0) {
    responder_error(qpn, qp, rx, kNakRemoteOperational, IBVP_WC_REM_OP_ERR);
    return;
  }
  const bool fetch_add = (rx.opcode & 0x1F) == 0x14;
  const uint64_t next = fetch_add ? orig + rx.atomic_swap_add : (orig == rx.atomic_compare ? rx.atomic_swap_add : orig);
  if (next != orig && hal_->dma_write(c_, rx.reth_va, &next, sizeof next) != 0) {
    responder_error(qpn, qp, rx, kNakRemoteOperational, IBVP_WC_REM_OP_ERR);
    return;
  }
  hal_->counter_add(c_, IBVP_CNT_ATOMICS, 1);
  qp.epsn = psn_add(qp.epsn, 1);
  qp.msn = psn_add(qp.msn, 1);
  qp.atomic_results.push_back({rx.psn, qp.msn, orig});
  while (qp.atomic_results.size() > qp.max_dest_rd_atomic) qp.atomic_results.pop_front();
  send_atomic_ack(qpn, qp, rx.psn, qp.msn, orig);
}

void Firmware::receive_atomic_ack(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx) {
  // An ATOMIC ACKNOWLEDGE acknowledges the requests before it too (IBA 9.7.5.1.2).
  complete_acked(qpn, qp, rx.psn, false);
  if (qp.send_idx == 0 || qp.sq.empty() || !is_atomic(qp.sq.front().wqe.opcode) ||
      qp.sq.front().first_psn != rx.psn) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);  // stale: a duplicate's second answer
    return;
  }
  const SendWork done = qp.sq.front();
  qp.sq.pop_front();
  qp.send_idx--;
  // The original value lands in the WQE's SGE (libibverbs: 8 bytes at sg_list[0].addr).
  const uint64_t orig = rx.atomic_orig;
  if (hal_->dma_write(c_, done.wqe.sge_addr, &orig, sizeof orig) != 0) {
    complete_send(qpn, qp, done, IBVP_WC_LOC_PROT_ERR, true);
    enter_error(qpn, qp);
    return;
  }
  qp.retries_left = qp.retry_cnt;
  qp.rnr_retries_left = qp.rnr_retry;
  complete_send(qpn, qp, done, IBVP_WC_SUCCESS, false);
  update_timer(qpn, qp);
}

}  // namespace ibvp::fw
