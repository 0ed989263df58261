// The requester (IBA 9.7.5.1 and Table 38): a send WQE is checked (opcode per transport,
// memory key, length), given its PSNs and posted to the tx engine one packet at a time
// (SEND, SEND with immediate, RDMA WRITE (with immediate), RDMA READ request, atomic request;
// inline data from the WQE). UD and UC WQEs complete when their last packet has left (TX_DONE); RC WQEs
// wait for an ACK (reliability.cpp) or, for a READ, for its response packets, scattered
// here in PSN order (IBA 9.7.5.1.3).
#include "firmware/default/firmware.h"

#include "firmware/default/constants.h"

namespace ibvp::fw {

bool Firmware::start_wqe(uint32_t qpn, Qp& qp, SendWork& w) {
  const ibvp_send_wqe& wqe = w.wqe;
  const bool ud = qp.type == IBVP_QPT_UD, rc = qp.type == IBVP_QPT_RC;
  const bool send_op = wqe.opcode == IBVP_WR_SEND || wqe.opcode == IBVP_WR_SEND_WITH_IMM;
  const bool write_op = wqe.opcode == IBVP_WR_RDMA_WRITE || wqe.opcode == IBVP_WR_RDMA_WRITE_WITH_IMM;
  const bool read_op = wqe.opcode == IBVP_WR_RDMA_READ;
  const bool atomic_op = is_atomic(wqe.opcode);
  uint8_t status = IBVP_WC_SUCCESS;
  const bool inl = (wqe.flags & IBVP_SEND_INLINE) != 0;
  // IBA Table 38: UD has SEND only, UC SEND and RDMA WRITE, RC all three. Inline data
  // (libibverbs IBV_SEND_INLINE) carries a SEND's or WRITE's payload in the WQE, up to the
  // QP's max_inline_data, with no memory key to check.
  // Atomics (IBA 9.4.5) are RC only, never inline, and return 8 bytes into their SGE.
  if (!(send_op || (write_op && !ud) || ((read_op || atomic_op) && rc)) ||
      (inl && (read_op || atomic_op || wqe.sge_length > qp.max_inline)))
    status = IBVP_WC_LOC_QP_OP_ERR;
  else if (atomic_op && wqe.sge_length < 8)
    status = IBVP_WC_LOC_LEN_ERR;
  else if (w.bad_sge_list || (atomic_op && w.num_sge > 1))
    status = IBVP_WC_LOC_QP_OP_ERR;  // more SGEs than the QP was created for
  else if (!inl && w.num_sge == 1 && wqe.sge_length > 0 &&
           !mr_covers(wqe.sge_lkey, qp.pdn, wqe.sge_addr, atomic_op ? 8 : wqe.sge_length,
                      read_op || atomic_op ? IBVP_ACCESS_LOCAL_WRITE : 0))
    status = IBVP_WC_LOC_PROT_ERR;
  else if (!inl && w.num_sge > 1) {
    // v8: every SGE of the list inside its region (a READ's, which receive, writable).
    for (uint32_t i = 0; i < w.num_sge; ++i)
      if (w.sge[i].length > 0 && !mr_covers(w.sge[i].lkey, qp.pdn, w.sge[i].addr, w.sge[i].length,
                                            read_op ? IBVP_ACCESS_LOCAL_WRITE : 0))
        status = IBVP_WC_LOC_PROT_ERR;
  }
  else if (ud && wqe.sge_length > kPortMtu)
    status = IBVP_WC_LOC_LEN_ERR;
  if (status != IBVP_WC_SUCCESS) {
    complete_send(qpn, qp, w, status, true);
    qp.sq.erase(qp.sq.begin() + qp.send_idx);
    enter_error(qpn, qp);
    return false;
  }
  const uint32_t mtu = ud ? kPortMtu : qp.mtu_bytes;
  const uint32_t packets = wqe.sge_length == 0 || atomic_op ? 1 : (wqe.sge_length + mtu - 1) / mtu;
  // cc_persist=0: a flow that went idle (its QP had nothing queued or in flight) starts
  // again at R_max.
  if (cc_response_ && !sched_.cc.persist && w.new_flow) cc_response_->on_flow_start(qpn, ud ? wqe.dlid : qp.dlid);
  w.first_psn = qp.sq_psn;
  w.psns = packets;                   // READ: the responder answers with this many packets
  w.packets = read_op ? 1 : packets;  // the request itself
  w.started = true;
  qp.sq_psn = psn_add(qp.sq_psn, packets);
  hal_->counter_add(c_, IBVP_CNT_TX_MESSAGES, 1);
  return true;
}

void Firmware::post_next_packet(uint32_t qpn, Qp& qp) {
  SendWork& w = qp.sq[qp.send_idx];
  if (!w.started && !start_wqe(qpn, qp, w)) return;
  const ibvp_send_wqe& wqe = w.wqe;
  const bool ud = qp.type == IBVP_QPT_UD;
  const uint32_t mtu = ud ? kPortMtu : qp.mtu_bytes;
  ibvp_tx_desc d{};
  d.qp_type = static_cast<uint8_t>(qp.type);
  switch (wqe.opcode) {
    case IBVP_WR_SEND_WITH_IMM: d.op = IBVP_TX_SEND_IMM; break;
    case IBVP_WR_RDMA_WRITE: d.op = IBVP_TX_RDMA_WRITE; break;
    case IBVP_WR_RDMA_WRITE_WITH_IMM: d.op = IBVP_TX_RDMA_WRITE_IMM; break;
    case IBVP_WR_RDMA_READ: d.op = IBVP_TX_RDMA_READ_REQ; break;
    case IBVP_WR_ATOMIC_CMP_AND_SWP: d.op = IBVP_TX_ATOMIC_CMP_SWAP; break;
    case IBVP_WR_ATOMIC_FETCH_AND_ADD: d.op = IBVP_TX_ATOMIC_FETCH_ADD; break;
    default: d.op = IBVP_TX_SEND; break;
  }
  d.sl = ud ? static_cast<uint8_t>(wqe.sl & 15) : qp.sl;
  d.vl = vl_of(d.sl);
  d.dlid = ud ? wqe.dlid : qp.dlid;
  d.p_key = 0xFFFF;
  d.src_qp = qpn;
  d.dest_qp = ud ? wqe.remote_qpn : qp.dest_qpn;
  // libibverbs: a remote Q_Key with the high bit set means "use the QP's own Q_Key".
  d.q_key = ud ? ((wqe.remote_qkey & 0x80000000u) ? qp.qkey : wqe.remote_qkey) : 0;
  d.imm_data = wqe.imm_data;
  d.solicited = (wqe.flags & IBVP_SEND_SOLICITED) != 0;
  d.mtu_bytes = mtu;
  d.ipd = qp.ipd;
  if (!dlid_ipd_.empty()) d.dlid_ipd = dlid_ipd_[d.dlid];
  if (sched_.cc.window > 0 && qp.type == IBVP_QPT_RC) {
    d.cc_flags = IBVP_TXF_ACKREQ;  // the window moves per packet
    // Beyond the window (cc_prefetch): fetched now, held until an ACK makes room.
    if (cc_outstanding(qp) >= sched_.cc.window) {
      d.cc_flags |= IBVP_TXF_HOLD;
      qp.cc_held++;
    }
  }
  if (cc_response_) d.cc_ipd_q8 = cc_gap_q8(qpn, d.dlid);
  // UD and UC have no ACKs: each packet sent stands for an unmarked ACK (f_inc), a CNP for a
  // marked one (f_dec).
  if (cc_response_ && qp.type != IBVP_QPT_RC) cc_feedback(qpn, d.dlid, false, 0);
  d.rkey = wqe.rkey;
  bool last;
  if (d.op == IBVP_TX_RDMA_READ_REQ) {
    // The request asks for what has not arrived yet: after a retry, the rest of the data
    // from the first missing response packet on (IBA 9.7.5.1.1).
    const uint64_t skip = uint64_t{w.read_done} * mtu;
    d.psn = psn_add(w.first_psn, w.read_done);
    d.remote_addr = wqe.remote_addr + skip;
    d.dma_len = static_cast<uint32_t>(wqe.sge_length - skip);
    last = true;
  } else if (is_atomic(wqe.opcode)) {
    // AtomicETH (IBA 9.3.4): CmpSwap sends Swap and Compare, FetchAdd the addend.
    d.psn = w.first_psn;
    d.remote_addr = wqe.remote_addr;
    d.atomic_data = wqe.opcode == IBVP_WR_ATOMIC_CMP_AND_SWP ? wqe.swap : wqe.compare_add;
    d.atomic_compare = wqe.opcode == IBVP_WR_ATOMIC_CMP_AND_SWP ? wqe.compare_add : 0;
    last = true;
  } else {
    d.psn = w.first_psn;
    d.remote_addr = wqe.remote_addr;
    d.payload_addr = wqe.sge_addr;
    d.payload_len = wqe.sge_length;
    d.first_packet = qp.next_packet;
    d.num_packets = 1;  // one packet per scheduling decision
    last = qp.next_packet + 1 == w.packets;
  }
  // Every data packet reports its departure: the scheduler runs again when tx buffer room
  // frees, and UD/UC messages complete when their last packet has left.
  d.notify_done = 1;
  d.cookie = make_cookie(qpn, w.wqe_counter, last);
  const bool inl = (wqe.flags & IBVP_SEND_INLINE) != 0 && !is_rd_atomic(wqe.opcode);
  // v8: a payload of several SGEs is gathered by the tx engine, one DMA read per piece.
  const bool gather = !inl && w.num_sge > 1 && d.op != IBVP_TX_RDMA_READ_REQ;
  const int posted = inl      ? hal_->tx_post_inline(c_, &d, w.inline_data.data())
                     : gather ? hal_->tx_post_gather(c_, &d, w.sge.data(), w.num_sge)
                              : hal_->tx_post(c_, &d);
  if (posted != 0) {
    complete_send(qpn, qp, w, IBVP_WC_LOC_QP_OP_ERR, true);
    qp.sq.erase(qp.sq.begin() + qp.send_idx);
    enter_error(qpn, qp);
    return;
  }
  if (!last) {
    qp.next_packet++;
    return;
  }
  qp.next_packet = 0;
  if (qp.type == IBVP_QPT_RC) {
    qp.send_idx++;  // waits in sq for its ACK or READ response
    arm_timer(qpn, qp);
  } else {
    qp.tx_wait.push_back(w);
    qp.sq.erase(qp.sq.begin() + qp.send_idx);
  }
  set_active(qpn, qp);
}

void Firmware::on_tx_done(uint64_t cookie, uint32_t failed) {
  const uint32_t qpn = static_cast<uint32_t>(cookie & 0xFFFFFFFF);
  if ((cookie & kCookieLast) != 0 && qpn < qps_.size() && qps_[qpn].valid) {
    Qp& qp = qps_[qpn];
    const uint32_t counter = static_cast<uint32_t>((cookie >> 32) & 0x3FFFFFFF);
    for (size_t i = 0; i < qp.tx_wait.size(); ++i) {
      if ((qp.tx_wait[i].wqe_counter & 0x3FFFFFFF) != counter) continue;
      const SendWork w = qp.tx_wait[i];
      qp.tx_wait.erase(qp.tx_wait.begin() + static_cast<std::ptrdiff_t>(i));
      complete_send(qpn, qp, w, failed ? IBVP_WC_LOC_PROT_ERR : IBVP_WC_SUCCESS, failed != 0);
      break;
    }
  }
  schedule();  // its bytes left the tx buffer
}

void Firmware::receive_read_response(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx) {
  // A READ response acknowledges the requests before its READ (an implicit ACK).
  complete_acked(qpn, qp, rx.psn, false);
  if (qp.send_idx == 0 || qp.sq.empty() || qp.sq.front().wqe.opcode != IBVP_WR_RDMA_READ) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);  // stale: nothing outstanding wants it
    return;
  }
  SendWork& w = qp.sq.front();
  // In order only: a response after a gap is dropped and the timer asks again from the
  // first missing packet (IBA 9.7.5.1.3 lets the requester retry; no NAK exists for it).
  if (rx.psn != psn_add(w.first_psn, w.read_done)) {
    hal_->counter_add(c_, IBVP_CNT_RX_PSN_ERRORS, 1);
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    return;
  }
  const uint64_t offset = uint64_t{w.read_done} * qp.mtu_bytes;
  const bool last_packet = w.read_done + 1 == w.psns;
  const uint64_t expect = last_packet ? w.wqe.sge_length - offset : qp.mtu_bytes;
  if (rx.payload_len != expect && !(w.wqe.sge_length == 0 && rx.payload_len == 0)) {
    // IBA 9.7.5.1.3: a response of the wrong length is a bad response.
    const SendWork bad = w;
    qp.sq.pop_front();
    qp.send_idx--;
    complete_send(qpn, qp, bad, IBVP_WC_BAD_RESP_ERR, true);
    enter_error(qpn, qp);
    return;
  }
  // Into the READ's SGEs in order (v8), the message's bytes [offset, offset + payload_len).
  if (rx.payload_len > 0 && !scatter(w.sge.data(), w.num_sge, offset, 0, rx.payload_len, nullptr)) {
    const SendWork bad = w;
    qp.sq.pop_front();
    qp.send_idx--;
    complete_send(qpn, qp, bad, IBVP_WC_LOC_PROT_ERR, true);
    enter_error(qpn, qp);
    return;
  }
  w.read_done++;
  qp.retries_left = qp.retry_cnt;
  qp.rnr_retries_left = qp.rnr_retry;
  if (last_packet) {
    const SendWork done = w;
    qp.sq.pop_front();
    qp.send_idx--;
    complete_send(qpn, qp, done, IBVP_WC_SUCCESS, false);
  }
  update_timer(qpn, qp);
}

}  // namespace ibvp::fw
