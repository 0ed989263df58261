// QP scheduling: which QP's next packet the tx engine gets while VL tx buffers have room.
// The transport finds the eligible QPs (a packet to send, room in its VL's tx buffer, an
// open congestion window); a QpScheduler (policies.h) picks one. The built-in schedulers
// ("sched=..."): FCFS by WQE fetch order, strict priority by SL (seed 000 Sec. 2.3), round
// robin, weighted round robin, VirtualClock (seed 003 Sec. 3.1). One packet per decision,
// so a long message does not hold the port, unless "mux=message" asks for whole messages.
#include "firmware/default/firmware.h"

#include <cstddef>

#include "firmware/default/constants.h"

namespace ibvp::fw {

namespace {

class BuiltinQpScheduler final : public QpScheduler {
 public:
  explicit BuiltinQpScheduler(const PolicyContext& p)
      : hal_(p.hal), policy_(p.options->policy), vc_(p.options->vc_bits) {
    vc_.resize(p.max_qps);
  }

  void on_work(uint32_t qpn) override {
    // VirtualClock (Zhang): an idle connection's clock catches up with real time, so idling
    // earns no credit. The finite-counter variant of seed 003 has no real-time term.
    if (policy_ == QpSchedPolicy::virtual_clock) vc_.activate(qpn, hal_->now_ps(hal_->ctx) / 1000);
  }

  int pick(const QpCandidate* c, uint32_t n) override {
    int best = -1;
    switch (policy_) {
      case QpSchedPolicy::fcfs:
      case QpSchedPolicy::strict_priority: {
        // FCFS: the oldest WQE; strict priority: the highest SL, the oldest WQE within it.
        uint64_t best_seq = 0;
        int best_sl = -1;
        for (uint32_t i = 0; i < n; ++i) {
          const int sl = policy_ == QpSchedPolicy::strict_priority ? c[i].sl : 0;
          if (best < 0 || sl > best_sl || (sl == best_sl && c[i].seq < best_seq)) {
            best = static_cast<int>(i);
            best_seq = c[i].seq;
            best_sl = sl;
          }
        }
        return best;
      }
      case QpSchedPolicy::weighted_rr:
        // The QP whose turn it is keeps it for `weight` packets while it can send.
        for (uint32_t i = 0; i < n; ++i)
          if (c[i].qpn == wrr_current_ && wrr_sent_ < c[i].weight) return static_cast<int>(i);
        [[fallthrough]];
      case QpSchedPolicy::round_robin: {
        // The next eligible QPN after the one served last, wrapping around.
        const uint32_t last = policy_ == QpSchedPolicy::weighted_rr ? wrr_current_ : rr_last_;
        for (uint32_t i = 0; i < n; ++i)
          if (last == ~0u || c[i].qpn > last) return static_cast<int>(i);
        return n > 0 ? 0 : -1;
      }
      case QpSchedPolicy::virtual_clock: {
        // The packet with the smallest virtual-clock stamp auxVC + Vtick goes first.
        uint64_t best_stamp = 0;
        for (uint32_t i = 0; i < n; ++i) {
          const uint64_t stamp = vc_.stamp(c[i].qpn, vtick_ns(c[i].rate_mbps, c[i].bytes));
          if (best < 0 || stamp < best_stamp) {
            best = static_cast<int>(i);
            best_stamp = stamp;
          }
        }
        if (best >= 0) picked_rate_mbps_ = c[best].rate_mbps;
        return best;
      }
    }
    return best;
  }

  void on_sent(uint32_t qpn, uint32_t bytes) override {
    rr_last_ = qpn;
    if (qpn != wrr_current_) {
      wrr_current_ = qpn;
      wrr_sent_ = 0;
    }
    ++wrr_sent_;
    // Finite counters follow seed 003 Sec. 3.1's overflow rule (models/sched/virtual_clock.h).
    if (policy_ == QpSchedPolicy::virtual_clock) vc_.charge(qpn, vtick_ns(picked_rate_mbps_, bytes));
  }

 private:
  static uint64_t vtick_ns(uint32_t rate_mbps, uint32_t bytes) {
    // Seed 003 Sec. 3.1: Vtick is the time one unit of data takes at the connection's
    // reserved rate; here per packet, bytes * 8 / rate, in ns.
    const uint64_t rate = rate_mbps ? rate_mbps : kDefaultVcRateMbps;
    return sched::vtick_ns(bytes, rate * 1'000'000);
  }

  const ibvp_hal* hal_;
  QpSchedPolicy policy_;
  uint32_t rr_last_ = 0;  // round robin: the QPN served last
  uint32_t wrr_current_ = ~0u, wrr_sent_ = 0;
  sched::VirtualClock vc_;  // sched=vc: auxVC per QPN, in ns
  uint32_t picked_rate_mbps_ = 0;
};

}  // namespace

std::unique_ptr<QpScheduler> make_qp_scheduler(const PolicyContext& p) {
  return std::make_unique<BuiltinQpScheduler>(p);
}

void Firmware::set_active(uint32_t qpn, Qp& qp) {
  // A QP waiting out an RNR NAK's timer sends nothing (IBA 9.7.5.2.8).
  // Nor one whose next READ or atomic would exceed max_rd_atomic (IBA 9.4.5, 10.2.4).
  qp.rd_atomic_wait = qp.send_idx < qp.sq.size() && rd_atomic_blocked(qp);
  const bool has_work = qp.state == IBVP_QPS_RTS && !qp.rnr_wait && qp.send_idx < qp.sq.size() && !qp.rd_atomic_wait;
  if (has_work == qp.active) return;
  qp.active = has_work;
  size_t i = 0;
  while (i < active_.size() && active_[i] < qpn) ++i;
  if (has_work) {
    active_.insert(active_.begin() + static_cast<std::ptrdiff_t>(i), qpn);
    scheduler_->on_work(qpn);
  } else if (i < active_.size() && active_[i] == qpn) {
    active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

bool Firmware::rd_atomic_blocked(const Qp& qp) const {
  if (qp.type != IBVP_QPT_RC || qp.next_packet != 0 || !is_rd_atomic(qp.sq[qp.send_idx].wqe.opcode)) return false;
  uint32_t out = 0;  // READs and atomics sent and not answered: all before send_idx
  for (uint32_t i = 0; i < qp.send_idx; ++i)
    if (is_rd_atomic(qp.sq[i].wqe.opcode) && ++out >= qp.max_rd_atomic) return true;
  return false;
}

uint8_t Firmware::next_sl(const Qp& qp) const {
  return qp.type == IBVP_QPT_UD ? static_cast<uint8_t>(qp.sq[qp.send_idx].wqe.sl & 15) : qp.sl;
}

uint32_t Firmware::next_packet_bytes(const Qp& qp) const {
  const SendWork& w = qp.sq[qp.send_idx];
  if (is_rd_atomic(w.wqe.opcode)) return kHeaderRoom;  // the request: headers only
  const uint32_t mtu = qp.type == IBVP_QPT_UD ? kPortMtu : qp.mtu_bytes;
  const uint64_t start = uint64_t{qp.next_packet} * mtu;
  const uint32_t rest = start >= w.wqe.sge_length ? 0 : static_cast<uint32_t>(w.wqe.sge_length - start);
  return (rest < mtu ? rest : mtu) + kHeaderRoom;
}

void Firmware::schedule() {
  if (active_.empty()) return;
  // Room in each VL's tx buffer, read once and counted down locally as packets are posted.
  uint32_t space[16] = {};
  for (uint32_t vl = 0; vl < data_vls_; ++vl) space[vl] = hal_->tx_space(c_, vl);
  for (;;) {
    // The eligible QPs: a packet whose VL has room, and an open window (cc_window).
    candidates_.clear();
    // mux=message: a message part sent goes on alone until its last packet, whatever the
    // scheduler would rank first now; while it cannot send (no room in its VL's buffer, a
    // shut window) nothing goes, as the paper's message-level NIC idles the wire while that
    // message lacks credits (seed 003 Sec. 5.3). A QP that stops (RNR wait, error, a
    // retransmission from the message's start) gives the port up.
    if (message_qp_ != kNoQp && !(qps_[message_qp_].active && qps_[message_qp_].next_packet != 0))
      message_qp_ = kNoQp;
    for (uint32_t n : active_) {
      if (message_qp_ != kNoQp && n != message_qp_) continue;
      const Qp& qp = qps_[n];
      QpCandidate c;
      c.qpn = n;
      c.qp_type = qp.type;
      c.sl = next_sl(qp);
      c.vl = vl_of(c.sl);
      c.bytes = next_packet_bytes(qp);
      if (space[c.vl] < c.bytes || (sched_.cc.window != 0 && !cc_window_open(qp))) continue;
      c.seq = qp.sq[qp.send_idx].seq;
      c.weight = qp.weight;
      c.rate_mbps = qp.rate_mbps;
      candidates_.push_back(c);
    }
    const uint32_t n = static_cast<uint32_t>(candidates_.size());
    const int pick = n == 0 ? -1 : scheduler_->pick(candidates_.data(), n);
    if (pick < 0 || static_cast<uint32_t>(pick) >= n) {
      if (!active_.empty()) hal_->counter_add(c_, IBVP_CNT_DOORBELLS_SKIPPED, 1);
      return;  // TX_DONE of a packet in the buffer calls again
    }
    const QpCandidate c = candidates_[static_cast<size_t>(pick)];
    post_next_packet(c.qpn, qps_[c.qpn]);
    if (sched_.mux == TxMultiplexing::message) message_qp_ = qps_[c.qpn].next_packet != 0 ? c.qpn : kNoQp;
    space[c.vl] = space[c.vl] > c.bytes ? space[c.vl] - c.bytes : 0;
    scheduler_->on_sent(c.qpn, c.bytes);
  }
}

}  // namespace ibvp::fw
