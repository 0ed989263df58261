// QP scheduling: which QP's next packet the tx engine gets while VL tx buffers have room
// ("sched=..."): FCFS by WQE fetch order, strict priority by SL (seed 000 Sec. 2.3), round
// robin, weighted round robin, VirtualClock (seed 003 Sec. 3.1). One packet per decision, so
// a long message does not hold the port; a QP outside its congestion window waits.
#include "firmware/default/firmware.h"

#include <cstddef>

#include "firmware/default/constants.h"

namespace ibvp::fw {

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
    // VirtualClock (Zhang): an idle connection's clock catches up with real time, so idling
    // earns no credit. The finite-counter variant of seed 003 has no real-time term.
    if (sched_.policy == QpSchedPolicy::virtual_clock) vc_.activate(qpn, hal_->now_ps(c_) / 1000);
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

}  // namespace ibvp::fw
