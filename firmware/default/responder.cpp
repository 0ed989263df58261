// The receive path (IBVP_EV_RX_PACKET) and the responder: a packet is checked (CRCs,
// destination QP, transport against the QP's type, state, IBA 10.3.1), responses go to the
// requester's side, requests are executed here: UD SENDs (Q_Key, IBA 10.2.4) and multicast
// (IBA 10.5); RC and UC SEND and RDMA WRITE with the responder's PSN check (IBA 9.7.5.1,
// UC 9.8.3), receive WQE matching and scatter, access checks (IBA 9.7), RDMA READ
// execution (responses carry the request's PSNs, IBA 9.7.5.1.3); responder errors NAK and
// move the QP to the error state (IBA 9.7.5.2.2, 9.9.3).
#include "firmware/default/firmware.h"

#include <algorithm>

#include "firmware/default/constants.h"

namespace ibvp::fw {

bool Firmware::scatter(const ibvp_sge* sge, uint32_t n, uint64_t msg_offset, uint32_t payload_offset, uint32_t len,
                       const uint32_t* pdn) {
  if (n <= 1) {  // one buffer: one check, one DMA write (as before v8)
    if (pdn && !mr_covers(sge[0].lkey, *pdn, sge[0].addr + msg_offset, len, IBVP_ACCESS_LOCAL_WRITE)) return false;
    return len == 0 || hal_->rx_scatter(c_, payload_offset, sge[0].addr + msg_offset, len) == 0;
  }
  uint64_t start = 0;  // message offset of SGE k
  for (uint32_t k = 0; k < n && len > 0; start += sge[k].length, ++k) {
    if (msg_offset >= start + sge[k].length) continue;
    const uint64_t in_sge = msg_offset - start;
    const uint32_t piece = static_cast<uint32_t>(std::min<uint64_t>(len, sge[k].length - in_sge));
    if (pdn && !mr_covers(sge[k].lkey, *pdn, sge[k].addr + in_sge, piece, IBVP_ACCESS_LOCAL_WRITE)) return false;
    if (hal_->rx_scatter(c_, payload_offset, sge[k].addr + in_sge, piece) != 0) return false;
    msg_offset += piece;
    payload_offset += piece;
    len -= piece;
  }
  return len == 0;
}

void Firmware::on_rx(const ibvp_rx_packet& rx) {
  hal_->counter_add(c_, IBVP_CNT_RX_PACKETS, 1);
  if (costs_.rx_cycles) hal_->consume_cycles(c_, costs_.rx_cycles);
  if (rx.icrc_ok && rx.vcrc_ok && rx.dlid >= IBVP_MLID_FIRST && rx.dlid <= IBVP_MLID_LAST)
    return receive_multicast(rx);
  if (!rx.icrc_ok || !rx.vcrc_ok || rx.dest_qp >= qps_.size() || !qps_[rx.dest_qp].valid) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    return;
  }
  Qp& qp = qps_[rx.dest_qp];
  if (rx.ecn & IBVP_RX_FECN) hal_->counter_add(c_, IBVP_CNT_FECN_RECEIVED, 1);
  if (rx.opcode == kCnpOpcode) {  // IBA annex A10: a destination returns a mark of ours
    hal_->counter_add(c_, IBVP_CNT_BECN_RECEIVED, 1);
    cc_feedback(rx.dest_qp, rx.slid, true, rx.psn);
    return;
  }
  const uint8_t transport = rx.opcode >> 5;  // IBA Table 38: 000 RC, 001 UC, 011 UD
  const bool type_ok = (transport == 0 && qp.type == IBVP_QPT_RC) || (transport == 1 && qp.type == IBVP_QPT_UC) ||
                       (transport == 3 && qp.type == IBVP_QPT_UD);
  if (!type_ok) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    return;
  }
  // RC responses (ACK, READ RESPONSE): the requester side, valid in RTS.
  // ATOMIC ACKNOWLEDGE (0x12) too.
  if (rx.opcode == 0x11 || rx.opcode == 0x12 || (rx.opcode >= 0x0D && rx.opcode <= 0x10)) {
    if (qp.state != IBVP_QPS_RTS) {
      hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      return;
    }
    if (rx.opcode == 0x11) receive_ack(rx.dest_qp, qp, rx);
    else if (rx.opcode == 0x12) receive_atomic_ack(rx.dest_qp, qp, rx);
    else receive_read_response(rx.dest_qp, qp, rx);
    if (sched_.cc.window > 0) {
      schedule();  // the QP's window may have opened
    } else if (qp.rd_atomic_wait) {
      // A READ or atomic answered: the next one may go (max_rd_atomic).
      set_active(rx.dest_qp, qp);
      if (qp.active) schedule();
    }
    return;
  }
  // IBA 10.3.1: a QP receives from RTR on.
  if (qp.state != IBVP_QPS_RTR && qp.state != IBVP_QPS_RTS) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    return;
  }
  if (qp.type == IBVP_QPT_UD) receive_ud(rx.dest_qp, qp, rx);
  else receive_rc_uc(rx.dest_qp, qp, rx);
}

// IBA 10.5: a packet to an MLID carries DestQP 0xFFFFFF and is delivered to every QP of this
// CA attached to the group, each taking one receive WQE; it is a UD SEND or nothing.
void Firmware::receive_multicast(const ibvp_rx_packet& rx) {
  const auto group = mcast_.find(rx.dlid);
  if (rx.dest_qp != IBVP_MULTICAST_QPN || (rx.opcode >> 5) != 3 || group == mcast_.end() || group->second.empty()) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    return;
  }
  // receive_ud may move a QP to the error state, never detach it: the list stays as it is.
  for (const uint32_t qpn : group->second) {
    Qp& qp = qps_[qpn];
    if (!qp.valid || (qp.state != IBVP_QPS_RTR && qp.state != IBVP_QPS_RTS)) {
      hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      continue;
    }
    receive_ud(qpn, qp, rx);
  }
}

void Firmware::receive_ud(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx) {
  // IBA 10.2.4: a datagram whose Q_Key differs from the QP's is dropped silently.
  if (rx.q_key != qp.qkey) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    return;
  }
  if (rx.ecn & IBVP_RX_FECN) send_cnp(qpn, qp, rx, rx.src_qp);
  if (!recv_wqe_available(qp)) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    return;
  }
  const RecvWork w = take_recv_wqe(qp);
  ibvp_cqe cqe{};
  cqe.wr_id = w.wr_id;
  cqe.qp_num = qpn;
  cqe.src_qp = rx.src_qp;
  cqe.slid = rx.slid;
  cqe.sl = rx.sl;
  cqe.opcode = IBVP_WC_RECV;
  cqe.byte_len = rx.payload_len + IBVP_UD_GRH_BYTES;
  if (rx.has_immdt) {
    cqe.imm_data = rx.immdt;
    cqe.wc_flags |= IBVP_WC_WITH_IMM;
  }
  if (cqe.byte_len > w.length) cqe.status = IBVP_WC_LOC_LEN_ERR;
  else if (w.num_sge > 1) {  // v8: the payload after the GRH room, over the SGEs
    if (!scatter(w.sge.data(), w.num_sge, IBVP_UD_GRH_BYTES, 0, rx.payload_len, &qp.pdn))
      cqe.status = IBVP_WC_LOC_PROT_ERR;
  } else if (!mr_covers(w.lkey, qp.pdn, w.addr, cqe.byte_len, IBVP_ACCESS_LOCAL_WRITE)) cqe.status = IBVP_WC_LOC_PROT_ERR;
  else if (hal_->rx_scatter(c_, 0, w.addr + IBVP_UD_GRH_BYTES, rx.payload_len) != 0) cqe.status = IBVP_WC_LOC_PROT_ERR;
  // No GRH on local packets: the first 40 bytes are left as they were (libibverbs semantics).
  complete(qp.recv_cqn, cqe, rx.se != 0);
  if (cqe.status != IBVP_WC_SUCCESS) enter_error(qpn, qp);
}

void Firmware::responder_error(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx, uint8_t nak, uint8_t status) {
  // IBA 9.7.5.2.2 / 9.9.3 (RC): a request the responder cannot execute is NAKed and the
  // responder QP enters the error state; a receive WQE in use completes with `status`.
  // UC (9.8.3): the message is dropped silently.
  const bool rc = qp.type == IBVP_QPT_RC;
  if (qp.in_message && !qp.in_write) {
    ibvp_cqe cqe{};
    cqe.wr_id = qp.current.wr_id;
    cqe.qp_num = qpn;
    cqe.slid = rx.slid;
    cqe.sl = rx.sl;
    cqe.opcode = IBVP_WC_RECV;
    cqe.status = status;
    complete(qp.recv_cqn, cqe, true);
  }
  qp.in_message = false;
  qp.in_write = false;
  hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
  if (!rc) return;
  send_ack(qpn, qp, rx.psn, nak);
  hal_->counter_add(c_, IBVP_CNT_NAKS_SENT, 1);
  enter_error(qpn, qp);
}

void Firmware::receive_read_request(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx, bool duplicate) {
  // Responder access checks (IBA ch. 9.7, RDMA READ): the R_Key must name a region of
  // this QP's PD that allows remote read and holds [VA, VA + DMALen), and the QP must
  // allow remote reads.
  const uint32_t len = rx.reth_dma_len;
  if ((qp.access & IBVP_ACCESS_REMOTE_READ) == 0 ||
      (len > 0 && !mr_covers(rx.reth_rkey, qp.pdn, rx.reth_va, len, IBVP_ACCESS_REMOTE_READ))) {
    if (!duplicate) responder_error(qpn, qp, rx, kNakRemoteAccess, IBVP_WC_REM_ACCESS_ERR);
    return;
  }
  const uint32_t packets = len == 0 ? 1 : (len + qp.mtu_bytes - 1) / qp.mtu_bytes;
  // Responses carry the PSNs the request reserved (IBA 9.7.5.1.3).
  ibvp_tx_desc d = rc_response(qpn, qp, IBVP_TX_READ_RESP, rx.psn);
  d.aeth_syndrome = kAckSyndrome;
  if (!duplicate) qp.msn = psn_add(qp.msn, 1);
  d.msn = qp.msn;
  d.mtu_bytes = qp.mtu_bytes;
  d.ipd = qp.ipd;
  if (!dlid_ipd_.empty()) d.dlid_ipd = dlid_ipd_[d.dlid];
  d.payload_addr = rx.reth_va;  // host physical: the model has no address translation
  d.payload_len = len;
  if (hal_->tx_post(c_, &d) != 0) {
    if (!duplicate) responder_error(qpn, qp, rx, kNakRemoteOperational, IBVP_WC_REM_OP_ERR);
    return;
  }
  if (!duplicate) qp.epsn = psn_add(qp.epsn, packets);
}

void Firmware::receive_rc_uc(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx) {
  const bool rc = qp.type == IBVP_QPT_RC;
  // A marked packet: RC returns the mark in the next ACK (BECN), UC in a CNP at once.
  if (rx.ecn & IBVP_RX_FECN) {
    if (rc) qp.becn_pending = true;
    else send_cnp(qpn, qp, rx, qp.dest_qpn);
  }
  const uint8_t op = rx.opcode & 0x1F;
  const bool send = op <= 0x05, write = op >= 0x06 && op <= 0x0B, read = rc && op == 0x0C;
  const bool atomic = rc && (op == 0x13 || op == 0x14);  // CmpSwap, FetchAdd (atomics.cpp)
  // Anything else (a READ on UC, which has none) is an invalid request (IBA 9.7.5.2.5).
  if (!send && !write && !read && !atomic) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    if (rc) send_ack(qpn, qp, rx.psn, kNakInvalidRequest);
    return;
  }
  const uint8_t k = write ? op - 0x06 : op;  // position in the First..Only Imm sequence
  const bool first = k == 0x00 || k == 0x04 || k == 0x05;
  const bool last = k >= 0x02 && k <= 0x05;
  // PSN check (IBA 9.7.5.1 responder): in order only.
  if (rx.psn != qp.epsn) {
    hal_->counter_add(c_, IBVP_CNT_RX_PSN_ERRORS, 1);
    if (rc && psn_before(rx.psn, qp.epsn)) {
      // A duplicate (IBA 9.7.5.1.1): the requester missed our response. Nothing is
      // delivered again; a READ is executed again, anything else acknowledged again.
      hal_->counter_add(c_, IBVP_CNT_DUPLICATES, 1);
      if (read) receive_read_request(qpn, qp, rx, true);
      else if (atomic) receive_atomic(qpn, qp, rx, true);
      else if (rx.ack_req) send_ack(qpn, qp, psn_add(qp.epsn, 0xFFFFFF), kAckSyndrome);
      return;
    }
    if (rc) {
      // Out of sequence: one NAK until the expected PSN arrives (9.7.5.2.1). After an RNR
      // NAK none: the requester goes back to the refused PSN once its RNR timer expires,
      // and a sequence NAK would make it resend at once (9.7.5.2.8).
      if (!qp.nak_sent && !qp.rnr_nak_sent) {
        send_ack(qpn, qp, qp.epsn, kNakPsnSeq);
        qp.nak_sent = true;
        hal_->counter_add(c_, IBVP_CNT_NAKS_SENT, 1);
      }
      hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      return;
    }
    // UC (IBA 9.8.3): packets were lost: the message in progress is abandoned (its
    // receive WQE serves the next message, as rxe does) and the receiver resynchronises
    // on this PSN; a First or Only packet starts a new message.
    if (qp.in_message && !qp.in_write) return_recv_wqe(qp, qp.current);
    qp.in_message = false;
    qp.in_write = false;
    qp.epsn = rx.psn;
    if (!first) {
      qp.epsn = psn_add(rx.psn, 1);
      hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      return;
    }
  }
  qp.nak_sent = false;
  qp.rnr_nak_sent = false;
  if (read) {
    receive_read_request(qpn, qp, rx, false);
    return;
  }
  if (atomic) {
    receive_atomic(qpn, qp, rx, false);
    return;
  }
  if (first) {
    if (qp.in_message && !rc) {  // UC: the unfinished message is dropped, its WQE reused
      if (!qp.in_write) return_recv_wqe(qp, qp.current);
      qp.in_message = false;
    }
    if (write) {
      // Responder access checks (IBA ch. 9.7, RDMA WRITE): R_Key, bounds, QP permission.
      const uint32_t len = rx.reth_dma_len;
      if ((qp.access & IBVP_ACCESS_REMOTE_WRITE) == 0 ||
          (len > 0 && !mr_covers(rx.reth_rkey, qp.pdn, rx.reth_va, len, IBVP_ACCESS_REMOTE_WRITE))) {
        responder_error(qpn, qp, rx, kNakRemoteAccess, IBVP_WC_REM_ACCESS_ERR);
        if (!rc) qp.epsn = psn_add(qp.epsn, 1);
        return;
      }
      qp.write_va = rx.reth_va;
      qp.write_len = len;
      qp.in_write = true;
    } else {
      if (!recv_wqe_available(qp)) {
        hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
        // RC: receiver not ready (9.7.5.2.8): the requester waits and sends it again.
        if (rc) send_rnr_nak(qpn, qp, rx.psn);
        else qp.epsn = psn_add(qp.epsn, 1);
        return;
      }
      qp.current = take_recv_wqe(qp);
      qp.in_write = false;
    }
    qp.in_message = true;
    qp.message_failed = false;
    qp.current_offset = 0;
  } else if (!qp.in_message || qp.in_write != write) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    if (!rc) qp.epsn = psn_add(qp.epsn, 1);  // UC: wait for the next first/only
    if (rc) send_ack(qpn, qp, rx.psn, kNakInvalidRequest);
    return;
  }
  qp.epsn = psn_add(qp.epsn, 1);
  uint8_t status = IBVP_WC_SUCCESS;
  uint8_t nak = kNakInvalidRequest;
  const uint64_t end = uint64_t{qp.current_offset} + rx.payload_len;
  if (write) {
    // The payload goes to VA + offset; more bytes than DMALen is an invalid request.
    if (end > qp.write_len) status = IBVP_WC_REM_INV_REQ_ERR;
    else if (rx.payload_len > 0 &&
             hal_->rx_scatter(c_, 0, qp.write_va + qp.current_offset, rx.payload_len) != 0) {
      status = IBVP_WC_REM_ACCESS_ERR;
      nak = kNakRemoteAccess;
    }
  } else {
    // A SEND longer than the receive WQE's SGEs is a local length error (IBA 9.7.5.2.2;
    // ibv_wc IBV_WC_LOC_LEN_ERR); the payload is scattered over them in order.
    if (end > qp.current.length) status = IBVP_WC_LOC_LEN_ERR;
    else if (!scatter(qp.current.sge.data(), qp.current.num_sge, qp.current_offset, 0, rx.payload_len, &qp.pdn))
      status = IBVP_WC_LOC_PROT_ERR;
  }
  qp.current_offset = static_cast<uint32_t>(end);
  if (status != IBVP_WC_SUCCESS) {
    // IBA 9.7.5.2.2 (RC): a length or protection error is an Invalid Request NAK (a
    // write outside its region a Remote Access NAK); a receive WQE completes in error.
    responder_error(qpn, qp, rx, nak, status);
    return;
  }
  if (last) {
    // A SEND, or an RDMA WRITE with immediate (which consumes a receive WQE, IBA 9.4.3),
    // completes on the receive queue.
    const bool with_imm = rx.has_immdt != 0;
    if (write && with_imm) {
      if (!recv_wqe_available(qp)) {
        // Not accepted: the retry is the same packet, written again at the same offset.
        qp.epsn = psn_add(qp.epsn, 0xFFFFFF);
        qp.current_offset -= rx.payload_len;
        hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
        if (rc) send_rnr_nak(qpn, qp, rx.psn);
        return;
      }
      qp.current = take_recv_wqe(qp);
    }
    if (!write || with_imm) {
      ibvp_cqe cqe{};
      cqe.wr_id = qp.current.wr_id;
      cqe.byte_len = qp.current_offset;
      cqe.qp_num = qpn;
      cqe.src_qp = qp.dest_qpn;
      cqe.slid = rx.slid;
      cqe.sl = rx.sl;
      cqe.opcode = write ? IBVP_WC_RECV_RDMA_WITH_IMM : IBVP_WC_RECV;
      if (with_imm) {
        cqe.imm_data = rx.immdt;
        cqe.wc_flags |= IBVP_WC_WITH_IMM;
      }
      complete(qp.recv_cqn, cqe, rx.se != 0);
    }
    qp.in_message = false;
    qp.in_write = false;
    if (rc) qp.msn = psn_add(qp.msn, 1);
  }
  if (rc && rx.ack_req) send_ack(qpn, qp, rx.psn, kAckSyndrome);
}

}  // namespace ibvp::fw
