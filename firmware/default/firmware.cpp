#include "firmware/default/firmware.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

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
constexpr uint8_t kNakRemoteAccess = 0x62;
constexpr uint8_t kNakRemoteOperational = 0x63;
constexpr uint32_t kFetchBatch = 16;     // WQEs per DMA read of a ring
constexpr uint32_t kHeaderRoom = 64;     // wire bytes of a packet besides its payload, at most
constexpr uint32_t kDefaultVcRateMbps = 1000;  // VirtualClock rate of a QP that reserved none
// Cookies of tx descriptors: the QPN, whether this is a message's last packet, and the WQE
// counter of its WQE (UD/UC completions are matched by it).
constexpr uint64_t kCookieLast = uint64_t{1} << 63;
constexpr uint8_t kCnpOpcode = 0x81;    // IBA annex A10 congestion notification packet
constexpr uint32_t kMaxCcPrefetch = 64;    // cc_prefetch: packets held ahead of the window
constexpr uint32_t kMaxCcWindow = 1024;  // cc_window: packets unacknowledged per RC QP
// Timer ids: the RC local ACK timer of a QP has its QPN (24 bits); the CCTI_Timer is above.
constexpr uint32_t kCctTimerId = 0x8000'0000;
uint64_t make_cookie(uint32_t qpn, uint32_t wqe_counter, bool last) {
  return qpn | (uint64_t{wqe_counter & 0x3FFFFFFF} << 32) | (last ? kCookieLast : 0);
}

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

Firmware::Firmware(const ibvp_hal* hal, DoorbellPolicy policy, const StepCosts& costs, const SchedOptions& sched)
    : hal_(hal), c_(hal->ctx), policy_(policy), costs_(costs), sched_(sched), vc_(sched.vc_bits) {
  classes_ = hal_->reg_read(c_, IBVP_REG_DB_CLASSES);
  data_vls_ = hal_->reg_read(c_, IBVP_REG_DATA_VLS);
  if (data_vls_ == 0 || data_vls_ > 15) data_vls_ = 1;
  for (uint32_t sl = 0; sl < 16; ++sl) sl2vl_[sl] = static_cast<uint8_t>(hal_->reg_read(c_, IBVP_REG_SL2VL_BASE + 4 * sl));
  qps_.resize(hal_->reg_read(c_, IBVP_REG_MAX_QPS));
  vc_.resize(qps_.size());
  active_.reserve(qps_.size());
  cqs_.resize(kMaxCqs);
  mrs_.resize(kMaxMrs);
  if (sched_.cc.response == "cct") cct_ = std::make_unique<cc::Cct>(sched_.cc.cct);
  else if (sched_.cc.response != "none") cc_ = cc::make_response(sched_.cc.response, cc::RateLimits{});
  sma_ = std::make_unique<Sma>(hal_, sl2vl_);
  pma_ = std::make_unique<Pma>(hal_);
  if (!sched_.dlid_ipd.empty()) {
    dlid_ipd_.assign(65536, 0);
    for (const auto& [dlid, ipd] : sched_.dlid_ipd) dlid_ipd_[dlid] = static_cast<uint8_t>(ipd);
  }
}

bool Firmware::parse_args(const char* args, StepCosts& out, SchedOptions& sched, std::string& error) {
  std::string s = args ? args : "";
  size_t pos = 0;
  std::vector<std::string> cct_keys;  // given: checked against cc= once all keys are read
  const auto number = [&](const std::string& v, unsigned long long& n) {
    char* rest = nullptr;
    n = std::strtoull(v.c_str(), &rest, 10);
    return !v.empty() && *rest == '\0';
  };
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
    unsigned long long v = 0;
    if (key == "sched") {
      if (value == "fcfs") sched.policy = QpSchedPolicy::fcfs;
      else if (value == "sp") sched.policy = QpSchedPolicy::strict_priority;
      else if (value == "rr") sched.policy = QpSchedPolicy::round_robin;
      else if (value == "wrr") sched.policy = QpSchedPolicy::weighted_rr;
      else if (value == "vc") sched.policy = QpSchedPolicy::virtual_clock;
      else {
        error = "unknown scheduling policy '" + value + "' (fcfs, sp, rr, wrr, vc)";
        return false;
      }
      continue;
    }
    if (key == "cc") {
      if (value != "none" && value != "cct" && !cc::make_response(value, cc::RateLimits{})) {
        error = "unknown congestion control '" + value + "' (none, fimd, lipd, aimd, cct)";
        return false;
      }
      sched.cc.response = value;
      continue;
    }
    if (key == "cc_rate") {
      if (value != "discrete" && value != "continuous") {
        error = "unknown cc_rate '" + value + "' (discrete, continuous)";
        return false;
      }
      sched.cc.discrete = value == "discrete";
      continue;
    }
    if (key == "cc_persist") {
      if (value != "0" && value != "1") {
        error = "cc_persist must be 0 or 1, not '" + value + "'";
        return false;
      }
      sched.cc.persist = value == "1";
      continue;
    }
    if (key == "cc_window") {
      unsigned long long w = 0;
      if (!number(value, w) || w > kMaxCcWindow) {
        error = "cc_window '" + value + "' is out of range (0 = none, 1.." + std::to_string(kMaxCcWindow) + " packets)";
        return false;
      }
      sched.cc.window = static_cast<uint32_t>(w);
      continue;
    }
    if (key == "cc_prefetch") {
      unsigned long long n = 0;
      if (!number(value, n) || n > kMaxCcPrefetch) {
        error = "cc_prefetch '" + value + "' is out of range (0 = fetch when the window opens, 1.." +
                std::to_string(kMaxCcPrefetch) + " packets fetched ahead)";
        return false;
      }
      sched.cc.prefetch = static_cast<uint32_t>(n);
      continue;
    }
    if (key.rfind("cct_", 0) == 0) {
      // The annex's field widths: CCTI_Increase 8 bits, CCTI_Timer 16 bits; the CCTIs index
      // the table.
      const uint32_t last = sched.cc.cct.entries - 1;
      struct Range {
        const char* key;
        uint32_t* field;
        uint32_t lo, hi;
        const char* what;
      };
      const Range ranges[] = {{"cct_increase", &sched.cc.cct.increase, 1, 255, "CCTI steps per BECN"},
                              {"cct_limit", &sched.cc.cct.limit, 0, last, "the largest CCTI"},
                              {"cct_min", &sched.cc.cct.min, 0, last, "the smallest CCTI"},
                              {"cct_timer", &sched.cc.cct.timer, 1, 65535, "units of 1.024 us"},
                              {"cct_max_ipd", &sched.cc.cct.max_ipd, 1, 255, "the last entry's IPD, packet times"}};
      const Range* r = nullptr;
      for (const Range& c : ranges)
        if (key == c.key) r = &c;
      if (r == nullptr) {
        error = "unknown key '" + key + "' (cct_increase, cct_limit, cct_min, cct_timer, cct_max_ipd)";
        return false;
      }
      unsigned long long n = 0;
      if (!number(value, n) || n < r->lo || n > r->hi) {
        error = key + " '" + value + "' is out of range (" + std::to_string(r->lo) + ".." + std::to_string(r->hi) +
                ", " + r->what + ")";
        return false;
      }
      *r->field = static_cast<uint32_t>(n);
      cct_keys.push_back(key);
      continue;
    }
    if (key == "dlid_ipd") {
      const size_t colon = value.find(':');
      unsigned long long lid = 0, ipd = 0;
      if (colon == std::string::npos || !number(value.substr(0, colon), lid) || !number(value.substr(colon + 1), ipd) ||
          lid == 0 || lid > 0xBFFF || ipd > 255) {
        error = "'" + value + "' is not LID:IPD (unicast LID 1..0xBFFF, IPD 0..255)";
        return false;
      }
      sched.dlid_ipd.emplace_back(static_cast<uint16_t>(lid), static_cast<uint32_t>(ipd));
      continue;
    }
    if (!number(value, v)) {
      error = "'" + value + "' is not a number";
      return false;
    }
    if (key == "wqe_cycles") out.wqe_cycles = v;
    else if (key == "rx_cycles") out.rx_cycles = v;
    else if (key == "cmd_cycles") out.cmd_cycles = v;
    else if (key == "mad_cycles") out.mad_cycles = v;
    else if (key == "vc_bits" && v <= 63) sched.vc_bits = static_cast<uint32_t>(v);
    else {
      error = "unknown key '" + key +
              "' (wqe_cycles, rx_cycles, cmd_cycles, mad_cycles, sched, vc_bits, dlid_ipd, cc, cc_rate, cc_window, cc_prefetch, cc_persist, "
              "cct_increase, cct_limit, cct_min, cct_timer, cct_max_ipd)";
      return false;
    }
  }
  if (!cct_keys.empty() && sched.cc.response != "cct") {
    error = cct_keys.front() + " is only used with cc=cct";
    return false;
  }
  if (sched.cc.cct.min > sched.cc.cct.limit) {
    error = "cct_min " + std::to_string(sched.cc.cct.min) + " is above cct_limit " +
            std::to_string(sched.cc.cct.limit) + " (give cct_min <= cct_limit)";
    return false;
  }
  return true;
}

void Firmware::handle(const ibvp_fw_event& ev) {
  switch (ev.kind) {
    case IBVP_EV_DOORBELL: on_doorbells(); break;
    case IBVP_EV_COMMAND: on_command(); break;
    case IBVP_EV_RX_PACKET: on_rx(*ev.rx); break;
    case IBVP_EV_TX_DONE: on_tx_done(ev.cookie, ev.arg); break;
    case IBVP_EV_TIMER:
      if (ev.arg == kCctTimerId) on_cct_timer();
      else on_timer(ev.arg);
      break;
    case IBVP_EV_MAD: on_mad(ev); break;
    default: break;
  }
}

// ---------------------------------------------------------------------------------------
// Doorbells
// ---------------------------------------------------------------------------------------

bool Firmware::pick_doorbell(uint32_t& db_class, uint32_t& index) {
  bool found = false;
  uint64_t oldest = ~uint64_t{0};
  for (uint32_t k = classes_; k-- > 0;) {
    if (hal_->doorbell_count(c_, k) == 0) continue;
    if (policy_ == DoorbellPolicy::prioritized) {
      db_class = k;
      index = 0;
      return true;  // highest class first, FCFS within it
    }
    ibvp_doorbell db;
    if (hal_->doorbell_peek(c_, k, 0, &db) != 0) continue;
    if (db.arrival_ps < oldest) {  // FCFS across classes: the oldest head
      oldest = db.arrival_ps;
      db_class = k;
      index = 0;
      found = true;
    }
  }
  return found;
}

void Firmware::on_doorbells() {
  uint32_t k, i;
  while (pick_doorbell(k, i)) {
    ibvp_doorbell db;
    hal_->doorbell_peek(c_, k, i, &db);
    // A BlueFlame doorbell's WQE is copied before the doorbell is taken (v6).
    bf_bytes_ = 0;
    if (db.kind == IBVP_DB_SQ && db.wqe_bytes != 0) {
      const uint32_t n = db.wqe_bytes < bf_wqe_.size() ? db.wqe_bytes : static_cast<uint32_t>(bf_wqe_.size());
      if (hal_->doorbell_wqe(c_, k, i, bf_wqe_.data(), n) == 0) bf_bytes_ = n;
    }
    hal_->doorbell_take(c_, k, i);
    hal_->counter_add(c_, IBVP_CNT_DOORBELLS, 1);
    serve(db);
    // The work of this doorbell may go out before the next doorbell is looked at.
    schedule();
  }
  schedule();  // also a wake-up after a VL drained (the hardware raises DOORBELL then)
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
  // BlueFlame (v6): the doorbell carries the WQE that takes the producer index to its value;
  // when that is the only WQE not yet fetched, no DMA read of the ring is needed.
  if (bf_bytes_ >= IBVP_SEND_WQE_BYTES && qp.sq_ci == qp.sq_pi && db.value == qp.sq_ci + 1 &&
      (qp.state == IBVP_QPS_RTS || qp.state == IBVP_QPS_ERR)) {
    qp.sq_pi = db.value;
    accept_send_wqe(db.qpn, qp, bf_wqe_.data(), bf_bytes_);
    set_active(db.qpn, qp);
    return;
  }
  qp.sq_pi = db.value;
  fetch_send_wqes(db.qpn, qp);
}

void Firmware::fetch_recv_wqes(Qp& qp) {
  // Receive WQEs are fetched when posted, so a packet finds its buffer on chip and the
  // receive path has no WQE read (as in HCAs that prefetch receive descriptors).
  while (qp.rq_fetched != qp.rq_pi) {
    const uint32_t idx = qp.rq_fetched & (qp.rq_entries - 1);
    uint32_t n = qp.rq_pi - qp.rq_fetched;
    if (n > qp.rq_entries - idx) n = qp.rq_entries - idx;  // contiguous run up to the ring's end
    if (n > kFetchBatch) n = kFetchBatch;
    ibvp_recv_wqe buf[kFetchBatch];
    if (hal_->dma_read(c_, qp.rq_addr + uint64_t{idx} * IBVP_RECV_WQE_BYTES, buf, n * IBVP_RECV_WQE_BYTES) != 0) {
      hal_->log(c_, IBVP_LOG_ERROR, "receive WQE fetch failed");
      return;
    }
    for (uint32_t i = 0; i < n; ++i) qp.recv_cache.push_back(buf[i]);
    qp.rq_fetched += n;
  }
}

void Firmware::fetch_send_wqes(uint32_t qpn, Qp& qp) {
  if (qp.state != IBVP_QPS_RTS && qp.state != IBVP_QPS_ERR) return;  // kept until RTS
  // Send WQEs are fetched in runs (one DMA read per contiguous run of up to 16) into the
  // QP's send queue; the scheduler then hands their packets to the tx engine.
  // A slot is sq_stride bytes: the WQE, then room for its inline data (v6).
  while (qp.sq_ci != qp.sq_pi) {
    const uint32_t idx = qp.sq_ci & (qp.sq_entries - 1);
    uint32_t n = qp.sq_pi - qp.sq_ci;
    if (n > qp.sq_entries - idx) n = qp.sq_entries - idx;
    if (n > kFetchBatch) n = kFetchBatch;
    const uint32_t batch = kFetchBatch * IBVP_SEND_WQE_BYTES / qp.sq_stride;  // 1 KiB per read
    if (n > batch) n = batch;
    uint8_t buf[kFetchBatch * IBVP_SEND_WQE_BYTES];
    if (hal_->dma_read(c_, qp.sq_addr + uint64_t{idx} * qp.sq_stride, buf, n * qp.sq_stride) != 0) {
      hal_->log(c_, IBVP_LOG_ERROR, "send WQE fetch failed");
      return;
    }
    for (uint32_t i = 0; i < n; ++i) accept_send_wqe(qpn, qp, buf + size_t{i} * qp.sq_stride, qp.sq_stride);
  }
  set_active(qpn, qp);
}

void Firmware::accept_send_wqe(uint32_t qpn, Qp& qp, const uint8_t* slot, uint32_t bytes) {
  SendWork w;
  std::memcpy(&w.wqe, slot, sizeof w.wqe);
  if ((w.wqe.flags & IBVP_SEND_INLINE) != 0 && w.wqe.sge_length <= qp.max_inline &&
      w.wqe.sge_length <= bytes - IBVP_SEND_WQE_BYTES)
    std::memcpy(w.inline_data.data(), slot + IBVP_SEND_WQE_BYTES, w.wqe.sge_length);
  w.wqe_counter = ++qp.sq_ci;
  w.seq = fetch_seq_++;
  hal_->counter_add(c_, IBVP_CNT_WQES, 1);
  if (costs_.wqe_cycles) hal_->consume_cycles(c_, costs_.wqe_cycles);
  if (qp.state == IBVP_QPS_ERR) {  // IBA 10.3.1: WQEs of a QP in error are flushed
    complete_send(qpn, qp, w, IBVP_WC_WR_FLUSH_ERR, true);
    return;
  }
  w.new_flow = qp.sq.empty() && qp.tx_wait.empty();
  qp.sq.push_back(w);
}

// ---------------------------------------------------------------------------------------
// QP scheduling: which QP's next packet the tx engine gets
// ---------------------------------------------------------------------------------------

void Firmware::set_active(uint32_t qpn, Qp& qp) {
  const bool has_work = qp.state == IBVP_QPS_RTS && qp.send_idx < qp.sq.size();
  if (has_work == qp.active) return;
  qp.active = has_work;
  size_t i = 0;
  while (i < active_.size() && active_[i] < qpn) ++i;
  if (has_work) {
    active_.insert(active_.begin() + static_cast<std::ptrdiff_t>(i), qpn);
    // VirtualClock (Zhang): an idle connection's clock catches up with real time, so idling
    // earns no credit. The finite-counter variant of seed 003 has no real-time term.
    if (sched_.policy == QpSchedPolicy::virtual_clock) vc_.activate(qpn, hal_->now_ps(c_) / 1000);
  } else if (i < active_.size() && active_[i] == qpn) {
    active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

uint8_t Firmware::next_sl(const Qp& qp) const {
  return qp.type == IBVP_QPT_UD ? static_cast<uint8_t>(qp.sq[qp.send_idx].wqe.sl & 15) : qp.sl;
}

uint32_t Firmware::next_packet_bytes(const Qp& qp) const {
  const SendWork& w = qp.sq[qp.send_idx];
  if (w.wqe.opcode == IBVP_WR_RDMA_READ) return kHeaderRoom;  // the request: headers only
  const uint32_t mtu = qp.type == IBVP_QPT_UD ? kPortMtu : qp.mtu_bytes;
  const uint64_t start = uint64_t{qp.next_packet} * mtu;
  const uint32_t rest = start >= w.wqe.sge_length ? 0 : static_cast<uint32_t>(w.wqe.sge_length - start);
  return (rest < mtu ? rest : mtu) + kHeaderRoom;
}

uint64_t Firmware::vtick_ns(const Qp& qp, uint32_t bytes) const {
  // Seed 003 Sec. 3.1: Vtick is the time one unit of data takes at the connection's
  // reserved rate; here per packet, bytes * 8 / rate, in ns.
  const uint64_t rate_mbps = qp.rate_mbps ? qp.rate_mbps : kDefaultVcRateMbps;
  return sched::vtick_ns(bytes, rate_mbps * 1'000'000);
}

void Firmware::charge_virtual_clock(uint32_t qpn, uint32_t bytes) {
  // Finite counters follow seed 003 Sec. 3.1's overflow rule (models/sched/virtual_clock.h).
  vc_.charge(qpn, vtick_ns(qps_[qpn], bytes));
}

int Firmware::pick_qp(const uint32_t* space) {
  const auto eligible = [&](uint32_t n) {
    const Qp& qp = qps_[n];
    return space[vl_of(next_sl(qp))] >= next_packet_bytes(qp) && (sched_.cc.window == 0 || cc_window_open(qp));
  };
  int best = -1;
  switch (sched_.policy) {
    case QpSchedPolicy::fcfs:
    case QpSchedPolicy::strict_priority: {
      // FCFS: the oldest WQE; strict priority: the highest SL, the oldest WQE within it.
      uint64_t best_seq = 0;
      int best_sl = -1;
      for (uint32_t n : active_) {
        if (!eligible(n)) continue;
        const Qp& qp = qps_[n];
        const uint64_t seq = qp.sq[qp.send_idx].seq;
        const int sl = sched_.policy == QpSchedPolicy::strict_priority ? next_sl(qp) : 0;
        if (best < 0 || sl > best_sl || (sl == best_sl && seq < best_seq)) {
          best = static_cast<int>(n);
          best_seq = seq;
          best_sl = sl;
        }
      }
      return best;
    }
    case QpSchedPolicy::weighted_rr:
      // The QP whose turn it is keeps it for `weight` packets while it can send.
      if (wrr_current_ < qps_.size() && qps_[wrr_current_].active && wrr_sent_ < qps_[wrr_current_].weight &&
          eligible(wrr_current_))
        return static_cast<int>(wrr_current_);
      [[fallthrough]];
    case QpSchedPolicy::round_robin: {
      // The next eligible QPN after the one served last, wrapping around.
      const uint32_t last = sched_.policy == QpSchedPolicy::weighted_rr ? wrr_current_ : rr_last_;
      int first = -1;
      for (uint32_t n : active_) {
        if (!eligible(n)) continue;
        if (first < 0) first = static_cast<int>(n);
        if (last == ~0u || n > last) return static_cast<int>(n);
      }
      return first;
    }
    case QpSchedPolicy::virtual_clock: {
      // The packet with the smallest virtual-clock stamp auxVC + Vtick goes first.
      uint64_t best_stamp = 0;
      for (uint32_t n : active_) {
        if (!eligible(n)) continue;
        const Qp& qp = qps_[n];
        const uint64_t stamp = vc_.stamp(n, vtick_ns(qp, next_packet_bytes(qp)));
        if (best < 0 || stamp < best_stamp) {
          best = static_cast<int>(n);
          best_stamp = stamp;
        }
      }
      return best;
    }
  }
  return best;
}

void Firmware::schedule() {
  if (active_.empty()) return;
  // Room in each VL's tx buffer, read once and counted down locally as packets are posted.
  uint32_t space[16] = {};
  for (uint32_t vl = 0; vl < data_vls_; ++vl) space[vl] = hal_->tx_space(c_, vl);
  for (;;) {
    const int pick = pick_qp(space);
    if (pick < 0) {
      if (!active_.empty()) hal_->counter_add(c_, IBVP_CNT_DOORBELLS_SKIPPED, 1);
      return;  // TX_DONE of a packet in the buffer calls again
    }
    const uint32_t qpn = static_cast<uint32_t>(pick);
    Qp& qp = qps_[qpn];
    const uint32_t bytes = next_packet_bytes(qp);
    const uint8_t vl = vl_of(next_sl(qp));
    post_next_packet(qpn, qp);
    space[vl] = space[vl] > bytes ? space[vl] - bytes : 0;
    rr_last_ = qpn;
    if (qpn != wrr_current_) {
      wrr_current_ = qpn;
      wrr_sent_ = 0;
    }
    ++wrr_sent_;
    if (sched_.policy == QpSchedPolicy::virtual_clock) charge_virtual_clock(qpn, bytes);
  }
}

// ---------------------------------------------------------------------------------------
// Send
// ---------------------------------------------------------------------------------------

bool Firmware::start_wqe(uint32_t qpn, Qp& qp, SendWork& w) {
  const ibvp_send_wqe& wqe = w.wqe;
  const bool ud = qp.type == IBVP_QPT_UD, rc = qp.type == IBVP_QPT_RC;
  const bool send_op = wqe.opcode == IBVP_WR_SEND || wqe.opcode == IBVP_WR_SEND_WITH_IMM;
  const bool write_op = wqe.opcode == IBVP_WR_RDMA_WRITE || wqe.opcode == IBVP_WR_RDMA_WRITE_WITH_IMM;
  const bool read_op = wqe.opcode == IBVP_WR_RDMA_READ;
  uint8_t status = IBVP_WC_SUCCESS;
  const bool inl = (wqe.flags & IBVP_SEND_INLINE) != 0;
  // IBA Table 38: UD has SEND only, UC SEND and RDMA WRITE, RC all three. Inline data
  // (libibverbs IBV_SEND_INLINE) carries a SEND's or WRITE's payload in the WQE, up to the
  // QP's max_inline_data, with no memory key to check.
  if (!(send_op || (write_op && !ud) || (read_op && rc)) || (inl && (read_op || wqe.sge_length > qp.max_inline)))
    status = IBVP_WC_LOC_QP_OP_ERR;
  else if (!inl && wqe.sge_length > 0 &&
           !mr_covers(wqe.sge_lkey, qp.pdn, wqe.sge_addr, wqe.sge_length, read_op ? IBVP_ACCESS_LOCAL_WRITE : 0))
    status = IBVP_WC_LOC_PROT_ERR;
  else if (ud && wqe.sge_length > kPortMtu)
    status = IBVP_WC_LOC_LEN_ERR;
  if (status != IBVP_WC_SUCCESS) {
    complete_send(qpn, qp, w, status, true);
    qp.sq.erase(qp.sq.begin() + qp.send_idx);
    enter_error(qpn, qp);
    return false;
  }
  const uint32_t mtu = ud ? kPortMtu : qp.mtu_bytes;
  const uint32_t packets = wqe.sge_length == 0 ? 1 : (wqe.sge_length + mtu - 1) / mtu;
  // cc_persist=0: a flow that went idle (its QP had nothing queued or in flight) starts
  // again at R_max.
  if ((cc_ || cct_) && !sched_.cc.persist && w.new_flow) {
    cc_flows_.erase(cc_key(qpn, ud ? wqe.dlid : qp.dlid));
    cct_flows_.erase(cc_key(qpn, ud ? wqe.dlid : qp.dlid));
  }
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
  if (cc_ || cct_) d.cc_ipd_q8 = cc_gap_q8(qpn, d.dlid);
  // UD and UC have no ACKs: each packet sent stands for an unmarked ACK (f_inc), a CNP for a
  // marked one (f_dec).
  if (cc_ && qp.type != IBVP_QPT_RC) cc_feedback(qpn, d.dlid, false, 0);
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
  const bool inl = (wqe.flags & IBVP_SEND_INLINE) != 0 && d.op != IBVP_TX_RDMA_READ_REQ;
  if ((inl ? hal_->tx_post_inline(c_, &d, w.inline_data.data()) : hal_->tx_post(c_, &d)) != 0) {
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

// ---------------------------------------------------------------------------------------
// Congestion control at the source (seed 004 Sec. 6)
// ---------------------------------------------------------------------------------------

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
// ---------------------------------------------------------------------------------------

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

bool Firmware::rewind(uint32_t qpn, Qp& qp, uint32_t psn) {
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
    hal_->counter_add(c_, IBVP_CNT_RETRANSMISSIONS, 1);
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
  if (qp.type != IBVP_QPT_RC || qp.state != IBVP_QPS_RTS || !rc_outstanding(qp) || qp.sq.empty()) return;
  hal_->counter_add(c_, IBVP_CNT_ACK_TIMEOUTS, 1);
  // Local ACK timeout: everything from the oldest unacknowledged PSN goes again.
  const SendWork& w = qp.sq.front();
  retry(qpn, qp, psn_add(w.first_psn, w.wqe.opcode == IBVP_WR_RDMA_READ ? w.read_done : 0));
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
    if (w.wqe.opcode == IBVP_WR_RDMA_READ) {
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
    update_timer(qpn, qp);
  }
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
    case IBVP_CMD_ATTACH_MCAST: status = attach_mcast(mbox, true); break;
    case IBVP_CMD_DETACH_MCAST: status = attach_mcast(mbox, false); break;
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
  // v6: a send slot holds the WQE and max_inline bytes in 64-byte units (ibvp_send_stride).
  if (m.max_inline > IBVP_MAX_INLINE_DATA) return IBVP_CMD_STATUS_BAD_PARAM;
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
    qp.sq_stride = ibvp_send_stride(m.max_inline);
    qp.max_inline = m.max_inline;
    qp.db_class = m.db_class;
    qp.ipd = m.ipd;
    qp.weight = m.weight == 0 ? 1 : m.weight;
    qp.rate_mbps = m.rate_mbps;
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
    qp.max_inline = fresh.max_inline;
    qp.db_class = fresh.db_class;
    qp.ipd = fresh.ipd;
    qp.weight = fresh.weight;
    qp.rate_mbps = fresh.rate_mbps;
    if (fresh.timer_armed) hal_->timer_cancel(c_, m.qpn);
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

// ---------------------------------------------------------------------------------------
// Management datagrams: QP0 (SMI) and QP1 (GSI), IBA 13.5
// ---------------------------------------------------------------------------------------

void Firmware::on_mad(const ibvp_fw_event& ev) {
  namespace mad = ib::mad;
  const ibvp_rx_packet& rx = *ev.rx;
  const bool from_host = ev.arg == IBVP_MAD_FROM_HOST;
  ibvp_mad m{};
  m.dlid = rx.dlid;
  m.slid = rx.slid;
  m.sl = rx.sl;
  m.p_key = rx.p_key;
  m.dest_qp = rx.dest_qp;
  m.src_qp = rx.src_qp;
  m.q_key = rx.q_key;
  // IBA 13.5.3: QP1 takes datagrams with the GSI's Q_Key only.
  if (rx.payload_len != IBVP_MAD_BYTES || (rx.dest_qp == 1 && rx.q_key != IBVP_GSI_QKEY) ||
      hal_->rx_read(c_, 0, m.mad, IBVP_MAD_BYTES) != 0) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    return;
  }
  mad::Bytes in;
  std::memcpy(in.data(), m.mad, IBVP_MAD_BYTES);
  const mad::MadHeader h = mad::decode_header(in);
  const bool directed = rx.dest_qp == 0 && h.mgmt_class == mad::kClassSubnDirected;
  mad::Smp dr;
  if (directed) {
    // The SMI's directed-route rules (IBA 14.2.2). Our host's SM sends its requests through
    // here: HopPointer steps to 1 and the SMP leaves by the port, or, with HopCount 0, it is
    // for this node's SMA. From the wire, a CA is the end of every path: a request there is
    // this node's, a returning SMP goes to the host's SM.
    dr = mad::decode_smp(in);
    if (from_host && dr.returning()) {
      if (hal_->mad_send(c_, &m) != 0) hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      return;
    }
    // The host's software may have made the sending SMI's step itself, as Linux's kernel SMI
    // does (HopPointer 1): the firmware steps only one that has HopPointer 0.
    mad::DrHop hop;
    if (!from_host) hop = mad::dr_receive(dr, false, 1, 1);
    else if (dr.hop_pointer() == 0) hop = mad::dr_originate(dr);
    else if (dr.hop_pointer() == 1 && dr.hop_count() == 0) hop = mad::DrHop{mad::DrRoute::local, 0, 0};
    else if (dr.hop_pointer() == 1) hop = mad::DrHop{mad::DrRoute::port, dr.initial_path[1], 0};
    if (hop.route == mad::DrRoute::port && from_host && hop.port == 1) {
      mad::Bytes outgoing;
      mad::encode(dr, outgoing);
      std::memcpy(m.mad, outgoing.data(), IBVP_MAD_BYTES);
      if (hal_->mad_send(c_, &m) != 0) hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      return;
    }
    if (hop.route != mad::DrRoute::local) {
      hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      return;
    }
    mad::encode(dr, in);  // with the hop pointer and return path as the SMI left them
    std::memcpy(m.mad, in.data(), IBVP_MAD_BYTES);
  }
  const bool sma = rx.dest_qp == 0 && Sma::serves(h) && !(directed && dr.returning());
  const bool pma = rx.dest_qp == 1 && Pma::serves(h);
  if (!sma && !pma) {
    // Responses, traps, reports and the classes the firmware has no agent for belong to the
    // host's management software (an SM, a umad client).
    if (hal_->mad_to_host(c_, &m) == 0) {
      hal_->counter_add(c_, IBVP_CNT_MADS_TO_HOST, 1);
      return;
    }
    // Nobody listens: a request is answered "class not supported" (IBA 13.4.7, status 1;
    // 13.5.3.3: a GSI request for a class without an agent), anything else is dropped.
    const bool request = !h.response() && (h.method == mad::kMethodGet || h.method == mad::kMethodSet);
    if (!request || directed) {
      hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      return;
    }
    mad::Bytes out = in;
    out[3] = mad::kMethodGetResp;
    mad::put16(out.data() + 4, mad::kStatusBadVersion);
    reply_mad(rx, from_host, rx.slid, out);
    return;
  }
  if (costs_.mad_cycles) hal_->consume_cycles(c_, costs_.mad_cycles);
  mad::Bytes out{};
  if (pma) {
    mad::encode(pma_->answer(mad::decode_perf(in)), out);
    hal_->counter_add(c_, IBVP_CNT_GMPS, 1);
    reply_mad(rx, from_host, rx.slid, out);
    return;
  }
  mad::Smp resp = sma_->answer(directed ? dr : mad::decode_smp(in));
  uint16_t dlid = rx.slid;
  if (directed) {
    // The returning SMP goes back out of the port (IBA 14.2.2.3, C14-13): in directed-route
    // mode with the permissive DLID, or, when the request's path ended LID-routed, to the
    // switch that sent it there (its SLID). One from this host returns to it.
    if (mad::dr_originate(resp).route == mad::DrRoute::discard) {
      hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      return;
    }
    dlid = rx.dlid == IBVP_PERMISSIVE_LID ? IBVP_PERMISSIVE_LID : rx.slid;
  }
  mad::encode(resp, out);
  hal_->counter_add(c_, IBVP_CNT_SMPS, 1);
  reply_mad(rx, from_host, dlid, out);
}

void Firmware::reply_mad(const ibvp_rx_packet& rx, bool from_host, uint16_t dlid, const ib::mad::Bytes& resp) {
  ibvp_mad m{};
  m.dlid = dlid;
  m.sl = rx.sl;
  m.p_key = rx.p_key;
  // IBA 13.5.3: a response goes to the requester's QP; QP0 answers from QP0 with Q_Key 0,
  // QP1 from QP1 with the GSI's Q_Key.
  m.dest_qp = rx.dest_qp == 0 ? 0 : rx.src_qp;
  m.src_qp = rx.dest_qp;
  m.q_key = rx.dest_qp == 0 ? 0 : IBVP_GSI_QKEY;
  std::memcpy(m.mad, resp.data(), IBVP_MAD_BYTES);
  if (from_host) {
    m.slid = rx.dlid;
    m.dlid = rx.slid;
    if (hal_->mad_to_host(c_, &m) == 0) hal_->counter_add(c_, IBVP_CNT_MADS_TO_HOST, 1);
    return;
  }
  // A GMP's response needs a QP1 at the requester: mad_send sends dest_qp 0 or 1 only.
  if (m.dest_qp > 1) m.dest_qp = 1;
  if (hal_->mad_send(c_, &m) != 0) hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
}

// ---------------------------------------------------------------------------------------
// Receive
// ---------------------------------------------------------------------------------------

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
  if (rx.opcode == 0x11 || (rx.opcode >= 0x0D && rx.opcode <= 0x10)) {
    if (qp.state != IBVP_QPS_RTS) {
      hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      return;
    }
    if (rx.opcode == 0x11) receive_ack(rx.dest_qp, qp, rx);
    else receive_read_response(rx.dest_qp, qp, rx);
    if (sched_.cc.window > 0) schedule();  // the QP's window may have opened
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
  if (qp.recv_cache.empty()) {
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
  ibvp_tx_desc d{};
  d.qp_type = IBVP_QPT_RC;
  d.op = IBVP_TX_READ_RESP;
  d.sl = qp.sl;
  d.vl = vl_of(qp.sl);
  d.dlid = qp.dlid;
  d.p_key = 0xFFFF;
  d.src_qp = qpn;
  d.dest_qp = qp.dest_qpn;
  d.psn = rx.psn;  // responses carry the PSNs the request reserved (IBA 9.7.5.1.3)
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
  if (!send && !write && !read) {  // atomics are not implemented; UC has no READ
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
      else if (rx.ack_req) send_ack(qpn, qp, psn_add(qp.epsn, 0xFFFFFF), kAckSyndrome);
      return;
    }
    if (rc) {
      // Out of sequence: one NAK until the expected PSN arrives (9.7.5.2.1).
      if (!qp.nak_sent) {
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
    if (qp.in_message && !qp.in_write) qp.recv_cache.push_front(qp.current);
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
  if (read) {
    receive_read_request(qpn, qp, rx, false);
    return;
  }
  if (first) {
    if (qp.in_message && !rc) {  // UC: the unfinished message is dropped, its WQE reused
      if (!qp.in_write) qp.recv_cache.push_front(qp.current);
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
      if (qp.recv_cache.empty()) {
        hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
        // RC: receiver not ready (9.7.5.2.8); the requester's RNR retry is not implemented.
        if (rc) send_ack(qpn, qp, rx.psn, kRnrNakSyndrome);
        else qp.epsn = psn_add(qp.epsn, 1);
        return;
      }
      qp.current = qp.recv_cache.front();
      qp.recv_cache.pop_front();
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
    if (end > qp.current.length) status = IBVP_WC_LOC_LEN_ERR;
    else if (!mr_covers(qp.current.lkey, qp.pdn, qp.current.addr + qp.current_offset, rx.payload_len,
                        IBVP_ACCESS_LOCAL_WRITE))
      status = IBVP_WC_LOC_PROT_ERR;
    else if (rx.payload_len > 0 &&
             hal_->rx_scatter(c_, 0, qp.current.addr + qp.current_offset, rx.payload_len) != 0)
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
      if (qp.recv_cache.empty()) {
        qp.epsn = psn_add(qp.epsn, 0xFFFFFF);  // not accepted: the retry is the same packet
        hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
        if (rc) send_ack(qpn, qp, rx.psn, kRnrNakSyndrome);
        return;
      }
      qp.current = qp.recv_cache.front();
      qp.recv_cache.pop_front();
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

void Firmware::send_ack(uint32_t qpn, Qp& qp, uint32_t psn, uint8_t syndrome) {
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
  // RNR retry is not implemented: an RNR NAK fails the request as if its RNR retries
  // were exhausted. Other NAKs are fatal (9.7.5.2.2): the request fails, the QP errs.
  uint8_t status = IBVP_WC_REM_OP_ERR;
  if (kind == 1) status = IBVP_WC_RNR_RETRY_EXC_ERR;
  else if (kind == 3 && (rx.aeth_syndrome & 0x1F) == 1) status = IBVP_WC_REM_INV_REQ_ERR;
  else if (kind == 3 && (rx.aeth_syndrome & 0x1F) == 2) status = IBVP_WC_REM_ACCESS_ERR;
  const SendWork w = qp.sq.front();
  qp.sq.pop_front();
  if (qp.send_idx > 0) qp.send_idx--;
  else qp.next_packet = 0;
  complete_send(qpn, qp, w, status, true);
  enter_error(qpn, qp);
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
  if (rx.payload_len > 0 && hal_->rx_scatter(c_, 0, w.wqe.sge_addr + offset, rx.payload_len) != 0) {
    const SendWork bad = w;
    qp.sq.pop_front();
    qp.send_idx--;
    complete_send(qpn, qp, bad, IBVP_WC_LOC_PROT_ERR, true);
    enter_error(qpn, qp);
    return;
  }
  w.read_done++;
  qp.retries_left = qp.retry_cnt;
  if (last_packet) {
    const SendWork done = w;
    qp.sq.pop_front();
    qp.send_idx--;
    complete_send(qpn, qp, done, IBVP_WC_SUCCESS, false);
  }
  update_timer(qpn, qp);
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

void Firmware::complete_send(uint32_t qpn, const Qp& qp, const SendWork& w, uint8_t status, bool force) {
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

// ---------------------------------------------------------------------------------------
// Entry points shared by the images
// ---------------------------------------------------------------------------------------

void* init_firmware(const ibvp_hal* hal, const char* args, DoorbellPolicy policy) {
  if (hal == nullptr || hal->version != IBVP_HAL_VERSION) return nullptr;
  StepCosts costs;
  SchedOptions sched;
  std::string error;
  if (!Firmware::parse_args(args, costs, sched, error)) {
    hal->log(hal->ctx, IBVP_LOG_ERROR, ("firmware arguments: " + error).c_str());
    return nullptr;
  }
  Firmware* fw = new (std::nothrow) Firmware(hal, policy, costs, sched);
  // One line per HCA in the run's firmware.log: which arguments this image runs with.
  if (fw != nullptr)
    hal->log(hal->ctx, IBVP_LOG_INFO,
             ("started with firmware_args '" + std::string(args ? args : "") + "'").c_str());
  return fw;
}

void handle_firmware(void* fw, const ibvp_fw_event* ev) { static_cast<Firmware*>(fw)->handle(*ev); }

void fini_firmware(void* fw) { delete static_cast<Firmware*>(fw); }

}  // namespace ibvp::fw
