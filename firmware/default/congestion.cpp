// Congestion control (seed 004 Sec. 4 and 6; IBA Vol 1 Annex A10): at the source, a rate
// per flow (sending QP, destination LID) lowered per mark returned and raised per unmarked
// ACK (firmware/cc/response.h), or the annex's CCTI and Congestion Control Table
// (firmware/cc/cct.h); an RC window of unacknowledged packets with packets held ahead of
// it. At the destination, a marked UD or UC packet is answered with a CNP (opcode 0x81).
// The response to marks is a CongestionResponse (policies.h): the two built in here, or an
// image's.
#include "firmware/default/firmware.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>

#include "firmware/default/constants.h"

namespace ibvp::fw {

namespace {

uint64_t cc_key(uint32_t qpn, uint16_t dlid) { return uint64_t{qpn} << 16 | dlid; }

// Seed 004 Sec. 4 and 6 ("cc=fimd|lipd|aimd"): per flow a rate limit r / R_max, f_dec per
// mark returned, f_inc per unmarked ACK (firmware/cc/response.h).
class RateResponse final : public CongestionResponse {
 public:
  explicit RateResponse(const PolicyContext& p)
      : f_(cc::make_response(p.options->cc.response, cc::RateLimits{})), discrete_(p.options->cc.discrete) {}

  void on_mark(uint32_t qpn, uint16_t dlid, uint32_t psn, uint32_t next_psn) override {
    const uint64_t key = cc_key(qpn, dlid);
    const auto it = flows_.find(key);
    Flow f = it == flows_.end() ? Flow{} : it->second;
    // One decrease per round trip: a mark on a packet sent before the last decrease took
    // effect reports congestion the source has already answered (with the paper's window
    // of one packet no such mark can exist). The packets from the next PSN on carry the
    // new rate.
    if (it != flows_.end() && psn_before(psn, f.recover_psn)) return;
    f.rate = f_->decrease(f.rate);
    f.recover_psn = next_psn;
    store(key, f);
  }

  void on_unmarked(uint32_t qpn, uint16_t dlid) override {
    const uint64_t key = cc_key(qpn, dlid);
    const auto it = flows_.find(key);
    if (it == flows_.end()) return;  // at R_max already
    Flow f = it->second;
    f.rate = f_->increase(f.rate);
    store(key, f);
  }

  uint32_t gap_q8(uint32_t qpn, uint16_t dlid) override {
    const auto it = flows_.find(cc_key(qpn, dlid));
    if (it == flows_.end()) return 0;
    const cc::RateLimits l;
    if (discrete_) return cc::ipd_for(it->second.rate, l) * 256;
    // Continuous: the rate itself, a gap of R_max/r - 1 packet times in 1/256 steps.
    const double gap = std::clamp(l.r_max / it->second.rate - 1.0, 0.0, 255.0);
    return static_cast<uint32_t>(std::lround(gap * 256.0));
  }

  void on_flow_start(uint32_t qpn, uint16_t dlid) override { flows_.erase(cc_key(qpn, dlid)); }

 private:
  struct Flow {
    double rate = 1.0;         // rate limit / R_max
    uint32_t recover_psn = 0;  // marks of packets before this PSN were sent before the last decrease
  };
  void store(uint64_t key, const Flow& f) {
    if (f.rate >= 1.0) flows_.erase(key);  // back at R_max: no state
    else flows_[key] = f;
  }
  std::unique_ptr<cc::ResponseFunction> f_;
  bool discrete_;
  std::unordered_map<uint64_t, Flow> flows_;  // flows below R_max
};

// IBA Vol 1 Annex A10 ("cc=cct"): per flow a CCTI into the Congestion Control Table, raised
// per BECN or CNP, lowered by the CCTI_Timer; unmarked ACKs do nothing.
class CctResponse final : public CongestionResponse {
 public:
  explicit CctResponse(const PolicyContext& p)
      : hal_(p.hal), timer_id_(p.cc_timer_id), opt_(p.options->cc.cct), cct_(opt_) {}

  void on_mark(uint32_t qpn, uint16_t dlid, uint32_t, uint32_t) override {
    // The annex answers every BECN; only the timer brings the rate back.
    const uint64_t key = cc_key(qpn, dlid);
    const auto it = flows_.find(key);
    const uint32_t ccti = cct_.after_becn(it == flows_.end() ? opt_.min : it->second);
    if (cct_.at_rest(ccti)) return;  // CCTI_Limit = CCTI_Min: nothing to pace
    flows_[key] = ccti;
    if (!timer_armed_) {
      hal_->timer_set(hal_->ctx, timer_id_, opt_.timer_ps());
      timer_armed_ = true;
    }
  }

  uint32_t gap_q8(uint32_t qpn, uint16_t dlid) override {
    const auto it = flows_.find(cc_key(qpn, dlid));
    return cct_.ipd(it == flows_.end() ? opt_.min : it->second) * 256;
  }

  void on_flow_start(uint32_t qpn, uint16_t dlid) override { flows_.erase(cc_key(qpn, dlid)); }

  void on_timer() override {
    timer_armed_ = false;
    for (auto it = flows_.begin(); it != flows_.end();) {
      it->second = cct_.after_timer(it->second);
      if (cct_.at_rest(it->second)) it = flows_.erase(it);
      else ++it;
    }
    // The timer runs while some flow is above CCTI_Min, so an idle port wakes nobody.
    if (!flows_.empty()) {
      hal_->timer_set(hal_->ctx, timer_id_, opt_.timer_ps());
      timer_armed_ = true;
    }
  }

 private:
  const ibvp_hal* hal_;
  uint32_t timer_id_;
  cc::CctOptions opt_;
  cc::Cct cct_;
  std::unordered_map<uint64_t, uint32_t> flows_;  // CCTI of the flows above CCTI_Min
  bool timer_armed_ = false;
};

}  // namespace

std::unique_ptr<CongestionResponse> make_congestion_response(const PolicyContext& p) {
  const std::string& r = p.options->cc.response;
  if (r == "cct") return std::make_unique<CctResponse>(p);
  if (r != "none") return std::make_unique<RateResponse>(p);
  return nullptr;
}

void Firmware::cc_feedback(uint32_t qpn, uint16_t dlid, bool marked, uint32_t psn) {
  if (!cc_response_) return;
  if (marked) cc_response_->on_mark(qpn, dlid, psn, qps_[qpn].sq_psn);
  else cc_response_->on_unmarked(qpn, dlid);
}

uint32_t Firmware::cc_gap_q8(uint32_t qpn, uint16_t dlid) { return cc_response_->gap_q8(qpn, dlid); }

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

// ---------------------------------------------------------------------------------------
// RC requester reliability (IBA 9.7.5.1, 9.7.6.1)

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

}  // namespace ibvp::fw
