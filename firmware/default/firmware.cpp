#include "firmware/default/firmware.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace ibvp::fw {

namespace {
constexpr uint32_t kMaxCqs = 1024;
constexpr uint32_t kMaxMrs = 4096;
constexpr uint32_t kFirstQpn = 2;       // QP0 and QP1 are the SMI and GSI (IBA 3.5.1)
constexpr uint32_t kMrKeyBase = 0x100;  // key = base + index: key 0 is never valid
constexpr uint32_t kPortMtu = 4096;     // UD messages and the port's active MTU
constexpr uint8_t kAckSyndrome = 0x1F;  // ACK, credit count "invalid" (no end-to-end credits)
constexpr uint8_t kRnrNakSyndrome = 0x20 | 0x0E;  // RNR NAK with timer code 14 (IBA Table 45)
constexpr uint8_t kNakPsnSeq = 0x60;    // NAK codes (IBA 9.7.5.2.2, Table 44)
constexpr uint8_t kNakInvalidRequest = 0x61;

bool power_of_two(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }
uint32_t psn_add(uint32_t psn, uint32_t n) { return (psn + n) & 0xFFFFFF; }
// 24-bit serial arithmetic: a is before b when b - a lies in the forward half.
bool psn_before(uint32_t a, uint32_t b) {
  const uint32_t d = (b - a) & 0xFFFFFF;
  return d != 0 && d < 0x800000;
}
uint32_t mtu_bytes(uint8_t code) { return code >= IBVP_MTU_256 && code <= IBVP_MTU_4096 ? 128u << code : 0; }

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

Firmware::Firmware(const ibvp_hal* hal, DoorbellPolicy policy, const StepCosts& costs)
    : hal_(hal), c_(hal->ctx), policy_(policy), costs_(costs) {
  classes_ = hal_->reg_read(c_, IBVP_REG_DB_CLASSES);
  for (uint32_t sl = 0; sl < 16; ++sl) sl2vl_[sl] = static_cast<uint8_t>(hal_->reg_read(c_, IBVP_REG_SL2VL_BASE + 4 * sl));
  qps_.resize(hal_->reg_read(c_, IBVP_REG_MAX_QPS));
  cqs_.resize(kMaxCqs);
  mrs_.resize(kMaxMrs);
}

bool Firmware::parse_args(const char* args, StepCosts& out, std::string& error) {
  std::string s = args ? args : "";
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    const std::string item = s.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      error = "'" + item + "' is not key=value";
      return false;
    }
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    char* rest = nullptr;
    const unsigned long long v = std::strtoull(value.c_str(), &rest, 10);
    if (value.empty() || *rest != '\0') {
      error = "'" + value + "' is not a number of cycles";
      return false;
    }
    if (key == "wqe_cycles") out.wqe_cycles = v;
    else if (key == "rx_cycles") out.rx_cycles = v;
    else if (key == "cmd_cycles") out.cmd_cycles = v;
    else {
      error = "unknown key '" + key + "' (wqe_cycles, rx_cycles, cmd_cycles)";
      return false;
    }
  }
  return true;
}

void Firmware::handle(const ibvp_fw_event& ev) {
  switch (ev.kind) {
    case IBVP_EV_DOORBELL: on_doorbells(); break;
    case IBVP_EV_COMMAND: on_command(); break;
    case IBVP_EV_RX_PACKET: on_rx(*ev.rx); break;
    case IBVP_EV_TX_DONE: on_tx_done(ev.cookie, ev.arg); break;
    default: break;  // timers: no retransmission yet (docs/hca.md, Not yet)
  }
}

// ---------------------------------------------------------------------------------------
// Doorbells
// ---------------------------------------------------------------------------------------

bool Firmware::servable(const ibvp_doorbell& db) {
  if (db.kind != IBVP_DB_SQ) return true;  // receive and CQ doorbells need no VL space
  if (db.qpn >= qps_.size()) return true;
  const Qp& qp = qps_[db.qpn];
  if (!qp.valid || qp.state != IBVP_QPS_RTS) return true;  // recorded, nothing sent
  // Seed 003 Sec. 3.3.1: the doorbell's VL buffer is full: pass it over for now. Room for
  // one MTU packet counts as not full.
  const uint32_t room = qp.type == IBVP_QPT_UD ? kPortMtu : qp.mtu_bytes;
  return hal_->tx_space(c_, vl_of(qp.sl)) >= room + 64;
}

bool Firmware::pick_doorbell(uint32_t& db_class, uint32_t& index) {
  bool found = false;
  uint64_t oldest = ~uint64_t{0};
  for (uint32_t k = classes_; k-- > 0;) {
    const uint32_t n = hal_->doorbell_count(c_, k);
    for (uint32_t i = 0; i < n; ++i) {
      ibvp_doorbell db;
      if (hal_->doorbell_peek(c_, k, i, &db) != 0) break;
      if (!servable(db)) {
        hal_->counter_add(c_, IBVP_CNT_DOORBELLS_SKIPPED, 1);
        continue;
      }
      if (policy_ == DoorbellPolicy::prioritized) {
        db_class = k;
        index = i;
        return true;  // highest class first, FCFS within it
      }
      if (db.arrival_ps < oldest) {
        oldest = db.arrival_ps;
        db_class = k;
        index = i;
        found = true;
      }
      break;  // FCFS: the first servable one of each class is the oldest of it
    }
  }
  return found;
}

void Firmware::on_doorbells() {
  uint32_t k, i;
  while (pick_doorbell(k, i)) {
    ibvp_doorbell db;
    hal_->doorbell_peek(c_, k, i, &db);
    hal_->doorbell_take(c_, k, i);
    hal_->counter_add(c_, IBVP_CNT_DOORBELLS, 1);
    serve(db);
  }
}

void Firmware::serve(const ibvp_doorbell& db) {
  if (db.kind == IBVP_DB_CQ_ARM) {
    if (db.qpn < cqs_.size() && cqs_[db.qpn].valid) cqs_[db.qpn].armed = db.value;
    return;
  }
  if (db.qpn >= qps_.size() || !qps_[db.qpn].valid) return;
  Qp& qp = qps_[db.qpn];
  if (db.kind == IBVP_DB_RQ) {
    qp.rq_pi = db.value;
    fetch_recv_wqes(qp);
    return;
  }
  qp.sq_pi = db.value;
  run_send_queue(db.qpn);
}

void Firmware::fetch_recv_wqes(Qp& qp) {
  // Receive WQEs are fetched when posted, so a packet finds its buffer on chip and the
  // receive path has no WQE read (as in HCAs that prefetch receive descriptors).
  while (qp.rq_fetched != qp.rq_pi) {
    const uint32_t idx = qp.rq_fetched & (qp.rq_entries - 1);
    uint32_t n = qp.rq_pi - qp.rq_fetched;
    if (n > qp.rq_entries - idx) n = qp.rq_entries - idx;  // contiguous run up to the ring's end
    if (n > 16) n = 16;
    ibvp_recv_wqe buf[16];
    if (hal_->dma_read(c_, qp.rq_addr + uint64_t{idx} * IBVP_RECV_WQE_BYTES, buf, n * IBVP_RECV_WQE_BYTES) != 0) {
      hal_->log(c_, IBVP_LOG_ERROR, "receive WQE fetch failed");
      return;
    }
    for (uint32_t i = 0; i < n; ++i) qp.recv_cache.push_back(buf[i]);
    qp.rq_fetched += n;
  }
}

void Firmware::run_send_queue(uint32_t qpn) {
  Qp& qp = qps_[qpn];
  if (qp.state != IBVP_QPS_RTS && qp.state != IBVP_QPS_ERR) return;  // kept until RTS
  while (qp.sq_ci != qp.sq_pi) {
    const uint32_t idx = qp.sq_ci & (qp.sq_entries - 1);
    ibvp_send_wqe wqe;
    if (hal_->dma_read(c_, qp.sq_addr + uint64_t{idx} * IBVP_SEND_WQE_BYTES, &wqe, sizeof wqe) != 0) {
      hal_->log(c_, IBVP_LOG_ERROR, "send WQE fetch failed");
      return;
    }
    qp.sq_ci++;
    hal_->counter_add(c_, IBVP_CNT_WQES, 1);
    if (costs_.wqe_cycles) hal_->consume_cycles(c_, costs_.wqe_cycles);
    execute_send(qpn, qp, wqe);
  }
}

void Firmware::execute_send(uint32_t qpn, Qp& qp, const ibvp_send_wqe& wqe) {
  SendRecord r;
  r.wr_id = wqe.wr_id;
  r.byte_len = wqe.sge_length;
  r.signaled = (wqe.flags & IBVP_SEND_SIGNALED) != 0;
  r.wqe_counter = qp.sq_ci;
  if (qp.state == IBVP_QPS_ERR) {  // IBA 10.3.1: WQEs of a QP in error are flushed
    complete_send(qpn, qp, r, IBVP_WC_WR_FLUSH_ERR, true);
    return;
  }
  const bool send_op = wqe.opcode == IBVP_WR_SEND || wqe.opcode == IBVP_WR_SEND_WITH_IMM;
  if (!send_op || (wqe.flags & IBVP_SEND_INLINE) != 0) {
    // RDMA and inline data are not implemented yet (docs/hca.md, Not yet).
    complete_send(qpn, qp, r, IBVP_WC_LOC_QP_OP_ERR, true);
    enter_error(qpn, qp);
    return;
  }
  if (wqe.sge_length > 0 &&
      !mr_covers(wqe.sge_lkey, qp.pdn, wqe.sge_addr, wqe.sge_length, 0)) {
    complete_send(qpn, qp, r, IBVP_WC_LOC_PROT_ERR, true);
    enter_error(qpn, qp);
    return;
  }
  const bool ud = qp.type == IBVP_QPT_UD;
  const uint32_t mtu = ud ? kPortMtu : qp.mtu_bytes;
  if (ud && wqe.sge_length > mtu) {
    complete_send(qpn, qp, r, IBVP_WC_LOC_LEN_ERR, true);
    enter_error(qpn, qp);
    return;
  }
  ibvp_tx_desc d{};
  d.qp_type = static_cast<uint8_t>(qp.type);
  d.op = wqe.opcode == IBVP_WR_SEND_WITH_IMM ? IBVP_TX_SEND_IMM : IBVP_TX_SEND;
  d.sl = ud ? wqe.sl : qp.sl;
  d.vl = vl_of(d.sl);
  d.dlid = ud ? wqe.dlid : qp.dlid;
  d.p_key = 0xFFFF;
  d.src_qp = qpn;
  d.dest_qp = ud ? wqe.remote_qpn : qp.dest_qpn;
  // libibverbs: a remote Q_Key with the high bit set means "use the QP's own Q_Key".
  d.q_key = ud ? ((wqe.remote_qkey & 0x80000000u) ? qp.qkey : wqe.remote_qkey) : 0;
  d.psn = qp.sq_psn;
  d.imm_data = wqe.imm_data;
  d.solicited = (wqe.flags & IBVP_SEND_SOLICITED) != 0;
  d.mtu_bytes = mtu;
  d.ipd = qp.ipd;
  d.payload_addr = wqe.sge_addr;
  d.payload_len = wqe.sge_length;
  const uint32_t packets = wqe.sge_length == 0 ? 1 : (wqe.sge_length + mtu - 1) / mtu;
  r.first_psn = qp.sq_psn;
  r.last_psn = psn_add(qp.sq_psn, packets - 1);
  // RC completes when the ACK comes back; UD and UC when the last packet has left.
  d.notify_done = qp.type != IBVP_QPT_RC;
  d.cookie = qpn;
  if (hal_->tx_post(c_, &d) != 0) {
    complete_send(qpn, qp, r, IBVP_WC_LOC_QP_OP_ERR, true);
    enter_error(qpn, qp);
    return;
  }
  qp.sq_psn = psn_add(qp.sq_psn, packets);
  hal_->counter_add(c_, IBVP_CNT_TX_MESSAGES, 1);
  if (qp.type == IBVP_QPT_RC) qp.unacked.push_back(r);
  else qp.tx_wait.push_back(r);
}

void Firmware::on_tx_done(uint64_t cookie, uint32_t failed) {
  const uint32_t qpn = static_cast<uint32_t>(cookie);
  if (qpn >= qps_.size() || !qps_[qpn].valid) return;
  Qp& qp = qps_[qpn];
  if (qp.tx_wait.empty()) return;
  const SendRecord r = qp.tx_wait.front();
  qp.tx_wait.pop_front();
  complete_send(qpn, qp, r, failed ? IBVP_WC_LOC_PROT_ERR : IBVP_WC_SUCCESS, failed != 0);
}

// ---------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------

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
  if (!type_ok || !cq_ok(m.send_cqn) || !cq_ok(m.recv_cqn) || !power_of_two(m.sq_entries) ||
      !power_of_two(m.rq_entries) || m.db_class >= classes_)
    return IBVP_CMD_STATUS_BAD_PARAM;
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
    qp.db_class = m.db_class;
    qp.ipd = m.ipd;
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
    qp.db_class = fresh.db_class;
    qp.ipd = fresh.ipd;
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
  if (m.attr_mask & IBVP_QP_SQ_PSN) qp.sq_psn = m.sq_psn & 0xFFFFFF;
  qp.state = next;
  if (next == IBVP_QPS_ERR) enter_error(m.qpn, qp);
  // WQEs posted before RTS go out now.
  if (next == IBVP_QPS_RTS && qp.sq_ci != qp.sq_pi) run_send_queue(m.qpn);
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

// ---------------------------------------------------------------------------------------
// Receive
// ---------------------------------------------------------------------------------------

void Firmware::on_rx(const ibvp_rx_packet& rx) {
  hal_->counter_add(c_, IBVP_CNT_RX_PACKETS, 1);
  if (costs_.rx_cycles) hal_->consume_cycles(c_, costs_.rx_cycles);
  if (!rx.icrc_ok || !rx.vcrc_ok || rx.dest_qp >= qps_.size() || !qps_[rx.dest_qp].valid) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    return;
  }
  Qp& qp = qps_[rx.dest_qp];
  const uint8_t transport = rx.opcode >> 5;  // IBA Table 38: 000 RC, 001 UC, 011 UD
  const bool type_ok = (transport == 0 && qp.type == IBVP_QPT_RC) || (transport == 1 && qp.type == IBVP_QPT_UC) ||
                       (transport == 3 && qp.type == IBVP_QPT_UD);
  if (!type_ok) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    return;
  }
  if (rx.opcode == 0x11) {  // RC Acknowledge: the requester side, valid in RTS
    receive_ack(rx.dest_qp, qp, rx);
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

void Firmware::receive_ud(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx) {
  // IBA 10.2.4: a datagram whose Q_Key differs from the QP's is dropped silently.
  if (rx.q_key != qp.qkey || qp.recv_cache.empty()) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    return;
  }
  const ibvp_recv_wqe w = qp.recv_cache.front();
  qp.recv_cache.pop_front();
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
  else if (!mr_covers(w.lkey, qp.pdn, w.addr, cqe.byte_len, IBVP_ACCESS_LOCAL_WRITE)) cqe.status = IBVP_WC_LOC_PROT_ERR;
  else if (hal_->rx_scatter(c_, 0, w.addr + IBVP_UD_GRH_BYTES, rx.payload_len) != 0) cqe.status = IBVP_WC_LOC_PROT_ERR;
  // No GRH on local packets: the first 40 bytes are left as they were (libibverbs semantics).
  complete(qp.recv_cqn, cqe, rx.se != 0);
  if (cqe.status != IBVP_WC_SUCCESS) enter_error(qpn, qp);
}

void Firmware::receive_rc_uc(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx) {
  const bool rc = qp.type == IBVP_QPT_RC;
  const uint8_t op = rx.opcode & 0x1F;
  if (op > 0x05) {  // RDMA and atomics are not implemented yet
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    if (rc) send_ack(qpn, qp, rx.psn, kNakInvalidRequest);
    return;
  }
  const bool first = op == 0x00 || op == 0x04 || op == 0x05;
  const bool last = op == 0x02 || op == 0x03 || op == 0x04 || op == 0x05;
  // PSN check (IBA 9.7.5.1 responder): in order only.
  if (rx.psn != qp.epsn) {
    hal_->counter_add(c_, IBVP_CNT_RX_PSN_ERRORS, 1);
    if (rc && psn_before(rx.psn, qp.epsn)) {
      // A duplicate: the requester missed our ACK; acknowledge again (9.7.5.1.1).
      if (rx.ack_req) send_ack(qpn, qp, psn_add(qp.epsn, 0xFFFFFF), kAckSyndrome);
    } else if (rc) {
      // Out of sequence: one NAK until the expected PSN arrives (9.7.5.2.1).
      if (!qp.nak_sent) {
        send_ack(qpn, qp, qp.epsn, kNakPsnSeq);
        qp.nak_sent = true;
        hal_->counter_add(c_, IBVP_CNT_NAKS_SENT, 1);
      }
    } else {
      // UC: the message in progress is lost; resynchronise on this PSN (9.8.3).
      qp.in_message = false;
      qp.epsn = psn_add(rx.psn, 1);
    }
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    return;
  }
  qp.nak_sent = false;
  if (first) {
    if (qp.in_message && !rc) qp.in_message = false;  // UC: the unfinished message is dropped
    if (qp.recv_cache.empty()) {
      hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      // RC: receiver not ready (9.7.5.2.8); the requester's RNR retry is not implemented.
      if (rc) send_ack(qpn, qp, rx.psn, kRnrNakSyndrome);
      return;
    }
    qp.current = qp.recv_cache.front();
    qp.recv_cache.pop_front();
    qp.in_message = true;
    qp.message_failed = false;
    qp.current_offset = 0;
  } else if (!qp.in_message) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    if (!rc) qp.epsn = psn_add(qp.epsn, 1);  // UC: wait for the next first/only
    if (rc) send_ack(qpn, qp, rx.psn, kNakInvalidRequest);
    return;
  }
  qp.epsn = psn_add(qp.epsn, 1);
  uint8_t status = IBVP_WC_SUCCESS;
  if (!qp.message_failed) {
    const uint64_t end = uint64_t{qp.current_offset} + rx.payload_len;
    if (end > qp.current.length) status = IBVP_WC_LOC_LEN_ERR;
    else if (!mr_covers(qp.current.lkey, qp.pdn, qp.current.addr + qp.current_offset, rx.payload_len,
                        IBVP_ACCESS_LOCAL_WRITE))
      status = IBVP_WC_LOC_PROT_ERR;
    else if (rx.payload_len > 0 &&
             hal_->rx_scatter(c_, 0, qp.current.addr + qp.current_offset, rx.payload_len) != 0)
      status = IBVP_WC_LOC_PROT_ERR;
    qp.current_offset += rx.payload_len;
    if (status != IBVP_WC_SUCCESS) qp.message_failed = true;
  }
  if (qp.message_failed && status != IBVP_WC_SUCCESS) {
    // IBA 9.7.5.2.2 (RC): a receive length or protection error is an Invalid Request NAK;
    // the receive WQE completes in error.
    ibvp_cqe cqe{};
    cqe.wr_id = qp.current.wr_id;
    cqe.qp_num = qpn;
    cqe.slid = rx.slid;
    cqe.sl = rx.sl;
    cqe.opcode = IBVP_WC_RECV;
    cqe.status = status;
    complete(qp.recv_cqn, cqe, true);
    qp.in_message = false;
    if (rc) {
      send_ack(qpn, qp, rx.psn, kNakInvalidRequest);
      hal_->counter_add(c_, IBVP_CNT_NAKS_SENT, 1);
    }
    enter_error(qpn, qp);
    return;
  }
  if (last && !qp.message_failed) {
    ibvp_cqe cqe{};
    cqe.wr_id = qp.current.wr_id;
    cqe.byte_len = qp.current_offset;
    cqe.qp_num = qpn;
    cqe.src_qp = qp.dest_qpn;
    cqe.slid = rx.slid;
    cqe.sl = rx.sl;
    cqe.opcode = IBVP_WC_RECV;
    if (rx.has_immdt) {
      cqe.imm_data = rx.immdt;
      cqe.wc_flags |= IBVP_WC_WITH_IMM;
    }
    complete(qp.recv_cqn, cqe, rx.se != 0);
    qp.in_message = false;
    if (rc) qp.msn = psn_add(qp.msn, 1);
  }
  if (rc && rx.ack_req) send_ack(qpn, qp, rx.psn, kAckSyndrome);
}

void Firmware::send_ack(uint32_t qpn, const Qp& qp, uint32_t psn, uint8_t syndrome) {
  ibvp_tx_desc d{};
  d.qp_type = IBVP_QPT_RC;
  d.op = IBVP_TX_ACK;
  d.sl = qp.sl;
  d.vl = vl_of(qp.sl);
  d.dlid = qp.dlid;
  d.p_key = 0xFFFF;
  d.src_qp = qpn;
  d.dest_qp = qp.dest_qpn;
  d.psn = psn;
  d.aeth_syndrome = syndrome;
  d.msn = qp.msn;
  d.mtu_bytes = qp.mtu_bytes;
  if (hal_->tx_post(c_, &d) == 0 && (syndrome >> 5) == 0) hal_->counter_add(c_, IBVP_CNT_ACKS_SENT, 1);
}

void Firmware::receive_ack(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx) {
  const uint8_t kind = rx.aeth_syndrome >> 5;  // IBA Table 43: 000 ACK, 001 RNR NAK, 011 NAK
  if (kind == 0) {
    // An ACK covers every request up to and including its PSN (coalesced ACKs, 9.7.5.1.2).
    while (!qp.unacked.empty() && !psn_before(rx.psn, qp.unacked.front().last_psn)) {
      const SendRecord r = qp.unacked.front();
      qp.unacked.pop_front();
      complete_send(qpn, qp, r, IBVP_WC_SUCCESS, false);
    }
    return;
  }
  hal_->counter_add(c_, IBVP_CNT_NAKS_RECEIVED, 1);
  // Requests before the NAK's PSN were received (an implicit ACK); the one it names failed.
  while (!qp.unacked.empty() && psn_before(qp.unacked.front().last_psn, rx.psn)) {
    const SendRecord r = qp.unacked.front();
    qp.unacked.pop_front();
    complete_send(qpn, qp, r, IBVP_WC_SUCCESS, false);
  }
  if (qp.unacked.empty()) return;
  // Retransmission (PSN sequence error, RNR retry) is not implemented yet: the request
  // completes as if its retries were exhausted, and the QP enters the error state.
  uint8_t status = IBVP_WC_RETRY_EXC_ERR;
  if (kind == 1) status = IBVP_WC_RNR_RETRY_EXC_ERR;
  else if (kind == 3 && (rx.aeth_syndrome & 0x1F) == 1) status = IBVP_WC_REM_INV_REQ_ERR;
  else if (kind == 3 && (rx.aeth_syndrome & 0x1F) == 2) status = IBVP_WC_REM_ACCESS_ERR;
  else if (kind == 3 && (rx.aeth_syndrome & 0x1F) == 3) status = IBVP_WC_REM_OP_ERR;
  const SendRecord r = qp.unacked.front();
  qp.unacked.pop_front();
  complete_send(qpn, qp, r, status, true);
  enter_error(qpn, qp);
}

// ---------------------------------------------------------------------------------------
// Completions
// ---------------------------------------------------------------------------------------

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
  if (fire && cq.event_addr != 0) {
    cq.armed = 0;
    cq.events++;
    hal_->dma_write(c_, cq.event_addr, &cq.events, sizeof cq.events);
  }
}

void Firmware::complete_send(uint32_t qpn, const Qp& qp, const SendRecord& r, uint8_t status, bool force) {
  // Unsignaled WQEs complete silently unless they fail (IBA 10.8.6, sq_sig_all = 0).
  if (!r.signaled && !force && status == IBVP_WC_SUCCESS) return;
  ibvp_cqe cqe{};
  cqe.wr_id = r.wr_id;
  cqe.byte_len = r.byte_len;
  cqe.qp_num = qpn;
  cqe.src_qp = r.wqe_counter;  // send completions: the WQE counter (ibvp_hal.h)
  cqe.opcode = IBVP_WC_SEND;
  cqe.status = status;
  complete(qp.send_cqn, cqe, false);
}

void Firmware::enter_error(uint32_t qpn, Qp& qp) {
  qp.state = IBVP_QPS_ERR;
  // Outstanding requests and posted receives are flushed (IBA 10.3.1 Error state).
  while (!qp.unacked.empty()) {
    complete_send(qpn, qp, qp.unacked.front(), IBVP_WC_WR_FLUSH_ERR, true);
    qp.unacked.pop_front();
  }
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

// ---------------------------------------------------------------------------------------
// Entry points shared by the images
// ---------------------------------------------------------------------------------------

void* init_firmware(const ibvp_hal* hal, const char* args, DoorbellPolicy policy) {
  if (hal == nullptr || hal->version != IBVP_HAL_VERSION) return nullptr;
  StepCosts costs;
  std::string error;
  if (!Firmware::parse_args(args, costs, error)) {
    hal->log(hal->ctx, IBVP_LOG_ERROR, ("firmware arguments: " + error).c_str());
    return nullptr;
  }
  return new (std::nothrow) Firmware(hal, policy, costs);
}

void handle_firmware(void* fw, const ibvp_fw_event* ev) { static_cast<Firmware*>(fw)->handle(*ev); }

void fini_firmware(void* fw) { delete static_cast<Firmware*>(fw); }

}  // namespace ibvp::fw
