// Example image: the default transport with three policies of its own (policies.h,
// docs/firmware.md "Plug-in policies"), none of them in the transport's code:
//   - QP scheduling: strict priority by SL, round robin among the QPs of one SL (the
//     built-in sched=sp is FCFS inside an SL). Seed 000 Sec. 2.3's SL priority, with the
//     QPs of a class sharing it packet by packet as an HCA's per-SL arbiter would.
//   - Congestion response: each mark returned (BECN on an ACK, a CNP) halves the flow's
//     rate, at most once per round trip (as the default's); each unmarked ACK gives back
//     1/64 of the port's rate. The port paces the flow by the gap of that rate.
//   - Cycle costs: 20 core cycles per TX_DONE event on top of the table firmware_args set.
// Tests: HcaPolicies.* (tests/hca/test_policies.cpp).
#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_map>

#include "firmware/default/firmware.h"

#define IBVP_FW_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using namespace ibvp::fw;

// Strict priority by SL; within the highest SL that can send, round robin: the next QPN
// after the one that SL served last, wrapping around.
class SlScheduler final : public QpScheduler {
 public:
  int pick(const QpCandidate* c, uint32_t n) override {
    int top = -1;
    for (uint32_t i = 0; i < n; ++i) top = std::max(top, static_cast<int>(c[i].sl));
    int first = -1;
    for (uint32_t i = 0; i < n; ++i) {
      if (c[i].sl != top) continue;
      if (first < 0) first = static_cast<int>(i);
      if (served_[top] == kNone || c[i].qpn > served_[top]) {
        picked_sl_ = top;
        return static_cast<int>(i);
      }
    }
    picked_sl_ = top;
    return first;
  }
  void on_sent(uint32_t qpn, uint32_t) override {
    if (picked_sl_ >= 0) served_[picked_sl_] = qpn;
  }

 private:
  static constexpr uint32_t kNone = ~0u;
  uint32_t served_[16] = {kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone,
                          kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone};
  int picked_sl_ = -1;
};

class HalvingResponse final : public CongestionResponse {
 public:
  void on_mark(uint32_t qpn, uint16_t dlid, uint32_t psn, uint32_t next_psn) override {
    Flow& f = flows_[key(qpn, dlid)];
    // A mark of a packet sent before the last halving reports congestion already answered.
    const uint32_t d = (f.recover_psn - psn) & 0xFFFFFF;
    if (f.halved && d != 0 && d < 0x800000) return;
    f.rate = std::max(f.rate / 2, 1.0 / 256);
    f.recover_psn = next_psn;
    f.halved = true;
  }
  void on_unmarked(uint32_t qpn, uint16_t dlid) override {
    const auto it = flows_.find(key(qpn, dlid));
    if (it == flows_.end()) return;
    it->second.rate += 1.0 / 64;
    if (it->second.rate >= 1.0) flows_.erase(it);
  }
  uint32_t gap_q8(uint32_t qpn, uint16_t dlid) override {
    const auto it = flows_.find(key(qpn, dlid));
    if (it == flows_.end()) return 0;
    // Rate r of the port's: a gap of 1/r - 1 packet times after each packet, in 1/256 steps.
    const double gap = std::clamp(1.0 / it->second.rate - 1.0, 0.0, 255.0);
    return static_cast<uint32_t>(std::lround(gap * 256.0));
  }
  void on_flow_start(uint32_t qpn, uint16_t dlid) override { flows_.erase(key(qpn, dlid)); }

 private:
  struct Flow {
    double rate = 1.0;
    uint32_t recover_psn = 0;
    bool halved = false;
  };
  static uint64_t key(uint32_t qpn, uint16_t dlid) { return uint64_t{qpn} << 16 | dlid; }
  std::unordered_map<uint64_t, Flow> flows_;
};

std::unique_ptr<QpScheduler> make_scheduler(const PolicyContext&) { return std::make_unique<SlScheduler>(); }
std::unique_ptr<CongestionResponse> make_response(const PolicyContext&) { return std::make_unique<HalvingResponse>(); }
void costs(StepCosts& c) { c.event_cycles[IBVP_EV_TX_DONE] += 20; }

}  // namespace

IBVP_FW_EXPORT uint32_t ibvp_fw_hal_version(void) { return IBVP_HAL_VERSION; }
IBVP_FW_EXPORT void* ibvp_fw_init(const ibvp_hal* hal, const char* args) {
  Policies p;
  p.qp_scheduler = make_scheduler;
  p.congestion = make_response;
  p.cycle_costs = costs;
  return init_firmware(hal, args, p);
}
IBVP_FW_EXPORT void ibvp_fw_handle(void* fw, const ibvp_fw_event* ev) { handle_firmware(fw, ev); }
IBVP_FW_EXPORT void ibvp_fw_fini(void* fw) { fini_firmware(fw); }
