// The command interface (IBVP_EV_COMMAND): the driver's mailbox commands, CREATE_CQ,
// CREATE_QP, MODIFY_QP (the QP state machine of IBA 10.3 as libibverbs checks it:
// required and optional attributes per transition), REG_MR (memory regions and the key
// checks of IBA 10.6.3.1), ATTACH/DETACH_MCAST (IBA 10.5).
#include "firmware/default/firmware.h"

#include <algorithm>
#include <vector>

#include "firmware/default/constants.h"

namespace ibvp::fw {

namespace {
// libibverbs' transition table (kernel ib_modify_qp_is_ok): which attributes each
// transition requires and which it allows, per QP type.
struct Transition {
  uint32_t required;
  uint32_t optional;
};
bool transition(uint32_t type, uint32_t cur, uint32_t next, Transition& t) {
  const bool ud = type == IBVP_QPT_UD, rc = type == IBVP_QPT_RC;
  t = {IBVP_QP_STATE, IBVP_QP_CUR_STATE};
  if (next == IBVP_QPS_RESET || next == IBVP_QPS_ERR) return true;  // from any state
  if (cur == IBVP_QPS_RESET && next == IBVP_QPS_INIT) {
    t.required |= IBVP_QP_PKEY_INDEX | IBVP_QP_PORT | (ud ? IBVP_QP_QKEY : IBVP_QP_ACCESS_FLAGS);
    return true;
  }
  if (cur == IBVP_QPS_INIT && next == IBVP_QPS_INIT) {
    t.optional |= IBVP_QP_PKEY_INDEX | IBVP_QP_PORT | (ud ? IBVP_QP_QKEY : IBVP_QP_ACCESS_FLAGS);
    return true;
  }
  if (cur == IBVP_QPS_INIT && next == IBVP_QPS_RTR) {
    if (!ud) t.required |= IBVP_QP_AV | IBVP_QP_PATH_MTU | IBVP_QP_DEST_QPN | IBVP_QP_RQ_PSN;
    if (rc) t.required |= IBVP_QP_MAX_DEST_RD_ATOMIC | IBVP_QP_MIN_RNR_TIMER;
    t.optional |= IBVP_QP_PKEY_INDEX | (ud ? IBVP_QP_QKEY : IBVP_QP_ACCESS_FLAGS);
    return true;
  }
  if (cur == IBVP_QPS_RTR && next == IBVP_QPS_RTS) {
    t.required |= IBVP_QP_SQ_PSN;
    if (rc) t.required |= IBVP_QP_TIMEOUT | IBVP_QP_RETRY_CNT | IBVP_QP_RNR_RETRY | IBVP_QP_MAX_QP_RD_ATOMIC;
    t.optional |= ud ? IBVP_QP_QKEY : IBVP_QP_ACCESS_FLAGS;
    return true;
  }
  if (cur == IBVP_QPS_RTS && next == IBVP_QPS_RTS) {
    t.optional |= ud ? IBVP_QP_QKEY : IBVP_QP_ACCESS_FLAGS;
    return true;
  }
  return false;
}
}  // namespace

void Firmware::on_command() {
  const uint32_t op = hal_->reg_read(c_, IBVP_REG_CMD_OPCODE);
  const uint64_t mbox = hal_->reg_read(c_, IBVP_REG_CMD_MAILBOX_LO) |
                        uint64_t{hal_->reg_read(c_, IBVP_REG_CMD_MAILBOX_HI)} << 32;
  if (costs_.cmd_cycles) hal_->consume_cycles(c_, costs_.cmd_cycles);
  uint32_t out = 0, status;
  switch (op) {
    case IBVP_CMD_NOP: status = IBVP_CMD_STATUS_OK; break;
    case IBVP_CMD_CREATE_CQ: status = create_cq(mbox, out); break;
    case IBVP_CMD_CREATE_QP: status = create_qp(mbox, out); break;
    case IBVP_CMD_MODIFY_QP: status = modify_qp(mbox); break;
    case IBVP_CMD_REG_MR: status = reg_mr(mbox, out); break;
    case IBVP_CMD_ATTACH_MCAST: status = attach_mcast(mbox, true); break;
    case IBVP_CMD_DETACH_MCAST: status = attach_mcast(mbox, false); break;
    case IBVP_CMD_MODIFY_CQ: status = modify_cq(mbox); break;
    case IBVP_CMD_CREATE_SRQ: status = create_srq(mbox, out); break;
    case IBVP_CMD_QUERY:
      out = IBVP_HAL_VERSION;
      status = IBVP_CMD_STATUS_OK;
      break;
    default: status = IBVP_CMD_STATUS_BAD_OPCODE; break;
  }
  hal_->reg_write(c_, IBVP_REG_CMD_OUT, out);
  hal_->reg_write(c_, IBVP_REG_CMD_STATUS, status);
  hal_->reg_write(c_, IBVP_REG_CMD_GO, 0);
}

// ibv_attach_mcast / ibv_detach_mcast: only UD QPs join multicast groups (IBA 10.5; a
// connected QP has one peer). Attaching twice is refused, as detaching a QP that is not there.

uint32_t Firmware::attach_mcast(uint64_t mbox, bool attach) {
  ibvp_mbox_mcast m{};
  if (hal_->dma_read(c_, mbox, &m, sizeof m) != 0) return IBVP_CMD_STATUS_DMA_ERROR;
  if (m.qpn >= qps_.size() || !qps_[m.qpn].valid || qps_[m.qpn].type != IBVP_QPT_UD) return IBVP_CMD_STATUS_BAD_PARAM;
  if (m.mlid < IBVP_MLID_FIRST || m.mlid > IBVP_MLID_LAST) return IBVP_CMD_STATUS_BAD_PARAM;
  std::vector<uint32_t>& qpns = mcast_[m.mlid];
  const auto at = std::find(qpns.begin(), qpns.end(), m.qpn);
  if (attach == (at != qpns.end())) return IBVP_CMD_STATUS_BAD_PARAM;
  if (attach) qpns.push_back(m.qpn);
  else qpns.erase(at);
  return IBVP_CMD_STATUS_OK;
}

// ibv_modify_cq's moderation: applies from the CQ's next arming on.
uint32_t Firmware::modify_cq(uint64_t mbox) {
  ibvp_mbox_modify_cq m{};
  if (hal_->dma_read(c_, mbox, &m, sizeof m) != 0) return IBVP_CMD_STATUS_DMA_ERROR;
  if (m.cqn >= cqs_.size() || !cqs_[m.cqn].valid) return IBVP_CMD_STATUS_BAD_PARAM;
  cqs_[m.cqn].moderation_count = m.cq_count;
  cqs_[m.cqn].moderation_period_us = m.cq_period;
  return IBVP_CMD_STATUS_OK;
}

uint32_t Firmware::create_srq(uint64_t mbox, uint32_t& out) {
  ibvp_mbox_srq m{};
  if (hal_->dma_read(c_, mbox, &m, sizeof m) != 0) return IBVP_CMD_STATUS_DMA_ERROR;
  if (!power_of_two(m.entries) || m.ring_addr == 0 || m.db_record == 0) return IBVP_CMD_STATUS_BAD_PARAM;
  for (uint32_t n = 0; n < srqs_.size(); ++n) {
    if (srqs_[n].valid) continue;
    srqs_[n] = Srq{};
    srqs_[n].valid = true;
    srqs_[n].ring = m.ring_addr;
    srqs_[n].db_record = m.db_record;
    srqs_[n].entries = m.entries;
    srqs_[n].pdn = m.pdn;
    out = n;
    return IBVP_CMD_STATUS_OK;
  }
  return IBVP_CMD_STATUS_NO_RESOURCES;
}

uint32_t Firmware::create_cq(uint64_t mbox, uint32_t& out) {
  ibvp_mbox_cq m;
  if (hal_->dma_read(c_, mbox, &m, sizeof m) != 0) return IBVP_CMD_STATUS_DMA_ERROR;
  if (!power_of_two(m.entries) || m.ring_addr == 0) return IBVP_CMD_STATUS_BAD_PARAM;
  for (uint32_t n = 0; n < cqs_.size(); ++n) {
    if (cqs_[n].valid) continue;
    Cq& cq = cqs_[n];
    cq = Cq{};
    cq.valid = true;
    cq.ring = m.ring_addr;
    cq.entries = m.entries;
    cq.event_addr = m.event_addr;
    out = n;
    return IBVP_CMD_STATUS_OK;
  }
  return IBVP_CMD_STATUS_NO_RESOURCES;
}

uint32_t Firmware::create_qp(uint64_t mbox, uint32_t& out) {
  ibvp_mbox_qp m;
  if (hal_->dma_read(c_, mbox, &m, sizeof m) != 0) return IBVP_CMD_STATUS_DMA_ERROR;
  const bool type_ok = m.qp_type == IBVP_QPT_RC || m.qp_type == IBVP_QPT_UC || m.qp_type == IBVP_QPT_UD;
  const auto cq_ok = [&](uint32_t n) { return n < cqs_.size() && cqs_[n].valid; };
  // v7: rq_entries 0 names an SRQ of the QP's PD in rq_addr (IBA 10.2.9); UD, UC and RC
  // QPs may share one.
  const bool srq = m.rq_entries == 0;
  if (srq && (m.rq_addr >= srqs_.size() || !srqs_[m.rq_addr].valid || srqs_[m.rq_addr].pdn != m.pdn))
    return IBVP_CMD_STATUS_BAD_PARAM;
  if (!type_ok || !cq_ok(m.send_cqn) || !cq_ok(m.recv_cqn) || !power_of_two(m.sq_entries) ||
      (!srq && !power_of_two(m.rq_entries)) || m.db_class >= classes_)
    return IBVP_CMD_STATUS_BAD_PARAM;
  // v6: a send slot holds the WQE and max_inline bytes in 64-byte units (ibvp_send_stride).
  if (m.max_inline > IBVP_MAX_INLINE_DATA) return IBVP_CMD_STATUS_BAD_PARAM;
  // v8: SGE lists of up to IBVP_MAX_SGE (a send slot holds SGEs 2.. after the WQE, a receive
  // slot after its 32 bytes); a QP on an SRQ receives into one SGE (the SRQ's ring).
  const uint32_t send_sge = m.max_send_sge ? m.max_send_sge : 1, recv_sge = m.max_recv_sge ? m.max_recv_sge : 1;
  if (send_sge > IBVP_MAX_SGE || recv_sge > IBVP_MAX_SGE || (srq && recv_sge > 1)) return IBVP_CMD_STATUS_BAD_PARAM;
  for (uint32_t n = kFirstQpn; n < qps_.size(); ++n) {
    if (qps_[n].valid) continue;
    Qp& qp = qps_[n];
    qp = Qp{};
    qp.valid = true;
    qp.type = m.qp_type;
    qp.pdn = m.pdn;
    qp.send_cqn = m.send_cqn;
    qp.recv_cqn = m.recv_cqn;
    qp.sq_addr = m.sq_addr;
    qp.rq_addr = m.rq_addr;
    qp.sq_entries = m.sq_entries;
    qp.rq_entries = m.rq_entries;
    qp.sq_stride = ibvp_send_stride_sge(m.max_inline, send_sge);
    qp.rq_stride = ibvp_recv_stride(recv_sge);
    qp.max_send_sge = send_sge;
    qp.max_recv_sge = recv_sge;
    qp.max_inline = m.max_inline;
    qp.db_class = m.db_class;
    qp.ipd = m.ipd;
    qp.weight = m.weight == 0 ? 1 : m.weight;
    qp.rate_mbps = m.rate_mbps;
    qp.srqn = srq ? static_cast<uint32_t>(m.rq_addr) + 1 : 0;
    hal_->doorbell_set_class(c_, n, m.db_class);
    out = n;
    return IBVP_CMD_STATUS_OK;
  }
  return IBVP_CMD_STATUS_NO_RESOURCES;
}

uint32_t Firmware::modify_qp(uint64_t mbox) {
  ibvp_mbox_modify_qp m;
  if (hal_->dma_read(c_, mbox, &m, sizeof m) != 0) return IBVP_CMD_STATUS_DMA_ERROR;
  if (m.qpn >= qps_.size() || !qps_[m.qpn].valid) return IBVP_CMD_STATUS_BAD_PARAM;
  Qp& qp = qps_[m.qpn];
  const uint32_t next = (m.attr_mask & IBVP_QP_STATE) ? m.qp_state : qp.state;
  Transition t;
  if (!transition(qp.type, qp.state, next, t)) return IBVP_CMD_STATUS_BAD_STATE;
  if ((m.attr_mask & t.required) != t.required || (m.attr_mask & ~(t.required | t.optional)) != 0)
    return IBVP_CMD_STATUS_BAD_STATE;
  if ((m.attr_mask & IBVP_QP_PATH_MTU) && mtu_bytes(m.path_mtu) == 0) return IBVP_CMD_STATUS_BAD_PARAM;
  if (next == IBVP_QPS_RESET) {
    // Back to the state of a new QP: rings rewind (the driver rewinds its indices too).
    const Qp fresh = qp;
    qp = Qp{};
    qp.valid = true;
    qp.type = fresh.type;
    qp.pdn = fresh.pdn;
    qp.send_cqn = fresh.send_cqn;
    qp.recv_cqn = fresh.recv_cqn;
    qp.sq_addr = fresh.sq_addr;
    qp.rq_addr = fresh.rq_addr;
    qp.sq_entries = fresh.sq_entries;
    qp.rq_entries = fresh.rq_entries;
    qp.sq_stride = fresh.sq_stride;
    qp.rq_stride = fresh.rq_stride;
    qp.max_send_sge = fresh.max_send_sge;
    qp.max_recv_sge = fresh.max_recv_sge;
    qp.max_inline = fresh.max_inline;
    qp.db_class = fresh.db_class;
    qp.ipd = fresh.ipd;
    qp.weight = fresh.weight;
    qp.rate_mbps = fresh.rate_mbps;
    qp.srqn = fresh.srqn;
    if (fresh.timer_armed) hal_->timer_cancel(c_, m.qpn);
    if (fresh.rnr_wait) hal_->timer_cancel(c_, kRnrTimerFlag | m.qpn);
    for (size_t i = 0; i < active_.size(); ++i)
      if (active_[i] == m.qpn) active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(i));
    return IBVP_CMD_STATUS_OK;
  }
  if (m.attr_mask & IBVP_QP_QKEY) qp.qkey = m.qkey;
  if (m.attr_mask & IBVP_QP_ACCESS_FLAGS) qp.access = m.access;
  if (m.attr_mask & IBVP_QP_AV) {
    qp.dlid = m.dlid;
    qp.sl = m.sl;
  }
  if (m.attr_mask & IBVP_QP_PATH_MTU) qp.mtu_bytes = mtu_bytes(m.path_mtu);
  if (m.attr_mask & IBVP_QP_DEST_QPN) qp.dest_qpn = m.dest_qpn & 0xFFFFFF;
  if (m.attr_mask & IBVP_QP_RQ_PSN) qp.epsn = m.rq_psn & 0xFFFFFF;
  if (m.attr_mask & IBVP_QP_SQ_PSN) qp.sq_psn = qp.acked_psn = m.sq_psn & 0xFFFFFF;
  if (m.attr_mask & IBVP_QP_TIMEOUT) qp.timeout = m.timeout & 0x1F;
  if (m.attr_mask & IBVP_QP_RETRY_CNT) qp.retry_cnt = qp.retries_left = m.retry_cnt & 7;
  if (m.attr_mask & IBVP_QP_RNR_RETRY) qp.rnr_retry = qp.rnr_retries_left = m.rnr_retry & 7;
  if (m.attr_mask & IBVP_QP_MIN_RNR_TIMER) qp.min_rnr_timer = m.min_rnr_timer & 0x1F;
  // v8: 0 would allow no READ or atomic at all; libibverbs' default is 1.
  if (m.attr_mask & IBVP_QP_MAX_QP_RD_ATOMIC) qp.max_rd_atomic = m.max_rd_atomic ? m.max_rd_atomic : 1;
  if (m.attr_mask & IBVP_QP_MAX_DEST_RD_ATOMIC) qp.max_dest_rd_atomic = m.max_dest_rd_atomic ? m.max_dest_rd_atomic : 1;
  qp.state = next;
  if (next == IBVP_QPS_ERR) enter_error(m.qpn, qp);
  // WQEs posted before RTS go out now.
  if (next == IBVP_QPS_RTS && qp.sq_ci != qp.sq_pi) {
    fetch_send_wqes(m.qpn, qp);
    schedule();
  }
  return IBVP_CMD_STATUS_OK;
}

uint32_t Firmware::reg_mr(uint64_t mbox, uint32_t& out) {
  ibvp_mbox_mr m;
  if (hal_->dma_read(c_, mbox, &m, sizeof m) != 0) return IBVP_CMD_STATUS_DMA_ERROR;
  if (m.length == 0 || m.addr + m.length < m.addr) return IBVP_CMD_STATUS_BAD_PARAM;
  for (uint32_t n = 0; n < mrs_.size(); ++n) {
    if (mrs_[n].valid) continue;
    mrs_[n] = Mr{true, m.addr, m.length, m.pdn, m.access};
    out = kMrKeyBase + n;
    return IBVP_CMD_STATUS_OK;
  }
  return IBVP_CMD_STATUS_NO_RESOURCES;
}

const Firmware::Mr* Firmware::find_mr(uint32_t key) const {
  if (key < kMrKeyBase || key - kMrKeyBase >= mrs_.size()) return nullptr;
  const Mr& mr = mrs_[key - kMrKeyBase];
  return mr.valid ? &mr : nullptr;
}

bool Firmware::mr_covers(uint32_t key, uint32_t pdn, uint64_t addr, uint64_t length, uint32_t access) const {
  const Mr* mr = find_mr(key);
  if (mr == nullptr || mr->pdn != pdn || (mr->access & access) != access) return false;
  // IBA 10.6.3.1: the whole range lies within the region.
  return addr >= mr->addr && length <= mr->length && addr - mr->addr <= mr->length - length;
}

}  // namespace ibvp::fw
