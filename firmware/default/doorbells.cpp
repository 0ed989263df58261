// Doorbells (IBVP_EV_DOORBELL): which waiting doorbell the core serves next (the
// DoorbellArbiter: seed 003 Sec. 3.3.1's priority classes, arrival order, or an image's
// own, policies.h), and what serving it does: a CQ arm, receive
// WQEs fetched into the QP's cache, send WQEs fetched by DMA in runs or taken from a
// BlueFlame doorbell (v6) into the QP's send queue. The QP scheduler sends them.
#include "firmware/default/firmware.h"

#include <cstring>

#include "firmware/default/constants.h"

namespace ibvp::fw {

namespace {

// The built-in arbiters (DoorbellPolicy).
class BuiltinDoorbells final : public DoorbellArbiter {
 public:
  BuiltinDoorbells(const PolicyContext& p, DoorbellPolicy policy)
      : hal_(p.hal), classes_(p.doorbell_classes), policy_(policy) {}

  bool pick(uint32_t& db_class, uint32_t& index) override {
    bool found = false;
    uint64_t oldest = ~uint64_t{0};
    for (uint32_t k = classes_; k-- > 0;) {
      if (hal_->doorbell_count(hal_->ctx, k) == 0) continue;
      if (policy_ == DoorbellPolicy::prioritized) {
        db_class = k;
        index = 0;
        return true;  // highest class first, FCFS within it
      }
      ibvp_doorbell db;
      if (hal_->doorbell_peek(hal_->ctx, k, 0, &db) != 0) continue;
      if (db.arrival_ps < oldest) {  // FCFS across classes: the oldest head
        oldest = db.arrival_ps;
        db_class = k;
        index = 0;
        found = true;
      }
    }
    return found;
  }

 private:
  const ibvp_hal* hal_;
  uint32_t classes_;
  DoorbellPolicy policy_;
};

}  // namespace

std::unique_ptr<DoorbellArbiter> make_doorbell_arbiter(const PolicyContext& p, DoorbellPolicy policy) {
  return std::make_unique<BuiltinDoorbells>(p, policy);
}

bool Firmware::pick_doorbell(uint32_t& db_class, uint32_t& index) { return doorbells_->pick(db_class, index); }

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
    if (db.qpn < cqs_.size() && cqs_[db.qpn].valid) {
      Cq& cq = cqs_[db.qpn];
      if (cq.armed == 0) cq.since_armed = 0;  // moderation counts from the arming
      cq.armed = db.value;
    }
    return;
  }
  if (db.qpn >= qps_.size() || !qps_[db.qpn].valid) return;
  Qp& qp = qps_[db.qpn];
  if (db.kind == IBVP_DB_RQ) {
    if (qp.srqn != 0) return;  // it has no receive queue of its own
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
    // A slot is rq_stride bytes: the WQE, then its SGEs beyond the first (v8); 512 B per read.
    const uint32_t batch = kFetchBatch * IBVP_RECV_WQE_BYTES / qp.rq_stride;
    if (n > batch) n = batch;
    uint8_t buf[kFetchBatch * IBVP_RECV_WQE_BYTES];
    if (hal_->dma_read(c_, qp.rq_addr + uint64_t{idx} * qp.rq_stride, buf, n * qp.rq_stride) != 0) {
      hal_->log(c_, IBVP_LOG_ERROR, "receive WQE fetch failed");
      return;
    }
    for (uint32_t i = 0; i < n; ++i) {
      RecvWork w = recv_work(buf + size_t{i} * qp.rq_stride, qp.rq_stride);
      if (w.num_sge > qp.max_recv_sge) w.length = 0;  // more SGEs than the QP takes: nothing fits
      qp.recv_cache.push_back(w);
    }
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
  const bool inl = (w.wqe.flags & IBVP_SEND_INLINE) != 0;
  if (inl && w.wqe.sge_length <= qp.max_inline && w.wqe.sge_length <= bytes - IBVP_SEND_WQE_BYTES)
    std::memcpy(w.inline_data.data(), slot + IBVP_SEND_WQE_BYTES, w.wqe.sge_length);
  // v8: the gather list, SGEs 2.. after the WQE in its slot; the message is their total.
  w.sge[0] = {w.wqe.sge_addr, w.wqe.sge_length, w.wqe.sge_lkey};
  if (!inl && w.wqe.num_sge > 1) {
    const uint32_t n = w.wqe.num_sge;
    if (n > qp.max_send_sge || n > IBVP_MAX_SGE || bytes < IBVP_SEND_WQE_BYTES + (n - 1) * IBVP_SGE_BYTES) {
      w.bad_sge_list = true;
    } else {
      std::memcpy(&w.sge[1], slot + IBVP_SEND_WQE_BYTES, (n - 1) * IBVP_SGE_BYTES);
      uint64_t total = 0;
      for (uint32_t i = 0; i < n; ++i) total += w.sge[i].length;
      w.num_sge = n;
      w.bad_sge_list = total > 0x80000000u;  // IBA 9.4: a message is at most 2^31 bytes
      w.wqe.sge_length = static_cast<uint32_t>(total);
    }
  }
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

bool Firmware::recv_wqe_available(Qp& qp) {
  if (qp.srqn == 0) return !qp.recv_cache.empty();
  Srq& srq = srqs_[qp.srqn - 1];
  if (!srq.cache.empty()) return true;
  // The SRQ has no doorbell: its producer index is read from the doorbell record, and new
  // WQEs in one run up to the ring's end (at most kFetchBatch), when a message needs one.
  uint32_t pi = 0;
  if (hal_->dma_read(c_, srq.db_record, &pi, sizeof pi) != 0 || pi == srq.fetched) return false;
  const uint32_t idx = srq.fetched & (srq.entries - 1);
  uint32_t n = pi - srq.fetched;
  if (n > srq.entries - idx) n = srq.entries - idx;
  if (n > kFetchBatch) n = kFetchBatch;
  uint8_t buf[kFetchBatch * IBVP_RECV_WQE_BYTES];
  if (hal_->dma_read(c_, srq.ring + uint64_t{idx} * IBVP_RECV_WQE_BYTES, buf, n * IBVP_RECV_WQE_BYTES) != 0) {
    hal_->log(c_, IBVP_LOG_ERROR, "SRQ WQE fetch failed");
    return false;
  }
  // An SRQ's WQEs have one SGE (its ring's slots are 32 bytes).
  for (uint32_t i = 0; i < n; ++i) srq.cache.push_back(recv_work(buf + size_t{i} * IBVP_RECV_WQE_BYTES, IBVP_RECV_WQE_BYTES));
  srq.fetched += n;
  return true;
}

Firmware::RecvWork Firmware::take_recv_wqe(Qp& qp) {
  std::deque<RecvWork>& q = qp.srqn == 0 ? qp.recv_cache : srqs_[qp.srqn - 1].cache;
  const RecvWork w = q.front();
  q.pop_front();
  return w;
}

void Firmware::return_recv_wqe(Qp& qp, const RecvWork& w) {
  (qp.srqn == 0 ? qp.recv_cache : srqs_[qp.srqn - 1].cache).push_front(w);
}

Firmware::RecvWork Firmware::recv_work(const uint8_t* slot, uint32_t bytes) {
  RecvWork w;
  std::memcpy(static_cast<ibvp_recv_wqe*>(&w), slot, sizeof(ibvp_recv_wqe));
  w.sge[0] = {w.addr, w.length, w.lkey};
  const uint32_t n = w.num_sge;
  if (n <= 1) {
    w.num_sge = 1;
    return w;
  }
  if (n > IBVP_MAX_SGE || bytes < IBVP_RECV_WQE_BYTES + (n - 1) * IBVP_SGE_BYTES) {
    w.length = 0;  // a list the slot cannot hold: nothing fits, a message gets LOC_LEN_ERR
    return w;
  }
  std::memcpy(&w.sge[1], slot + IBVP_RECV_WQE_BYTES, (n - 1) * IBVP_SGE_BYTES);
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; ++i) total += w.sge[i].length;
  w.length = total > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<uint32_t>(total);
  return w;
}

}  // namespace ibvp::fw
