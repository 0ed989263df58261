// The default firmware's top level: the Firmware object's construction (what it reads of
// the port at start: doorbell classes, data VLs, SL2VL, QP count), the dispatch of each HAL
// event to the file that handles it, and the four entry points every image built on this
// transport exports (docs/firmware.md). The work itself is in the files beside this one,
// one concern each:
//   args.cpp          the firmware_args string
//   commands.cpp      the command interface: CQs, QPs and their state machine, MRs, multicast
//   doorbells.cpp     doorbells, send and receive WQE fetch (BlueFlame included); the
//                     built-in doorbell arbiters
//   qp_scheduler.cpp  which QPs may send; the built-in QP schedulers pick one
//   requester.cpp     send WQEs into packets, READ responses
//   responder.cpp     received requests: UD, UC, RC SEND / WRITE / READ, multicast
//   atomics.cpp       RC FETCH_ADD and CMP_SWAP: executed once, duplicates from saved results
//   reliability.cpp   RC ACK/NAK, the local ACK timer, go-back-N retransmission
//   congestion.cpp    congestion control at the source (the window; the built-in
//                     congestion responses) and CNPs at the destination
//   completions.cpp   CQEs, CQ events, the error state's flush
//   management.cpp    QP0 and QP1: the SMA and PMA (IBA 13.5)
// The policies are plug-ins (policies.h): an image may pass its own to init_firmware.
#include "firmware/default/firmware.h"

#include <iterator>
#include <new>
#include <string>

#include "firmware/default/constants.h"

namespace ibvp::fw {

Firmware::Firmware(const ibvp_hal* hal, DoorbellPolicy policy, const StepCosts& costs, const SchedOptions& sched,
                   const Policies& plugins)
    : hal_(hal), c_(hal->ctx), costs_(costs), sched_(sched) {
  classes_ = hal_->reg_read(c_, IBVP_REG_DB_CLASSES);
  data_vls_ = hal_->reg_read(c_, IBVP_REG_DATA_VLS);
  if (data_vls_ == 0 || data_vls_ > 15) data_vls_ = 1;
  for (uint32_t sl = 0; sl < 16; ++sl) sl2vl_[sl] = static_cast<uint8_t>(hal_->reg_read(c_, IBVP_REG_SL2VL_BASE + 4 * sl));
  qps_.resize(hal_->reg_read(c_, IBVP_REG_MAX_QPS));
  active_.reserve(qps_.size());
  candidates_.reserve(qps_.size());
  cqs_.resize(kMaxCqs);
  mrs_.resize(kMaxMrs);
  srqs_.resize(kMaxSrqs);
  PolicyContext p;
  p.hal = hal_;
  p.options = &sched_;
  p.doorbell_classes = classes_;
  p.data_vls = data_vls_;
  p.max_qps = static_cast<uint32_t>(qps_.size());
  p.cc_timer_id = kCctTimerId;
  // An image's factory that returns null keeps the transport's policy (for the congestion
  // response, the one cc= names, none for cc=none).
  if (plugins.doorbells) doorbells_ = plugins.doorbells(p);
  if (!doorbells_) doorbells_ = make_doorbell_arbiter(p, policy);
  if (plugins.qp_scheduler) scheduler_ = plugins.qp_scheduler(p);
  if (!scheduler_) scheduler_ = make_qp_scheduler(p);
  if (plugins.congestion) cc_response_ = plugins.congestion(p);
  if (!cc_response_) cc_response_ = make_congestion_response(p);
  if (plugins.cycle_costs) plugins.cycle_costs(costs_);
  sma_ = std::make_unique<Sma>(hal_, sl2vl_);
  pma_ = std::make_unique<Pma>(hal_);
  if (!sched_.dlid_ipd.empty()) {
    dlid_ipd_.assign(65536, 0);
    for (const auto& [dlid, ipd] : sched_.dlid_ipd) dlid_ipd_[dlid] = static_cast<uint8_t>(ipd);
  }
}

void Firmware::handle(const ibvp_fw_event& ev) {
  if (ev.kind < std::size(costs_.event_cycles) && costs_.event_cycles[ev.kind] != 0)
    hal_->consume_cycles(c_, costs_.event_cycles[ev.kind]);
  switch (ev.kind) {
    case IBVP_EV_DOORBELL: on_doorbells(); break;
    case IBVP_EV_COMMAND: on_command(); break;
    case IBVP_EV_RX_PACKET: on_rx(*ev.rx); break;
    case IBVP_EV_TX_DONE: on_tx_done(ev.cookie, ev.arg); break;
    case IBVP_EV_TIMER:
      if (ev.arg == kCctTimerId) {
        if (cc_response_) cc_response_->on_timer();
      }
      else if (ev.arg & kRnrTimerFlag) on_rnr_timer(ev.arg & ~kRnrTimerFlag);
      else if (ev.arg & kCqTimerFlag) on_cq_timer(ev.arg & ~kCqTimerFlag);
      else on_timer(ev.arg);
      break;
    case IBVP_EV_MAD: on_mad(ev); break;
    default: break;
  }
}

namespace {

void* start(const ibvp_hal* hal, const char* args, DoorbellPolicy policy, const Policies& plugins) {
  if (hal == nullptr || hal->version != IBVP_HAL_VERSION) return nullptr;
  StepCosts costs;
  SchedOptions sched;
  std::string error;
  if (!Firmware::parse_args(args, costs, sched, error)) {
    hal->log(hal->ctx, IBVP_LOG_ERROR, ("firmware arguments: " + error).c_str());
    return nullptr;
  }
  Firmware* fw = new (std::nothrow) Firmware(hal, policy, costs, sched, plugins);
  // One line per HCA in the run's firmware.log: which arguments this image runs with.
  if (fw != nullptr)
    hal->log(hal->ctx, IBVP_LOG_INFO,
             ("started with firmware_args '" + std::string(args ? args : "") + "'").c_str());
  return fw;
}

}  // namespace

void* init_firmware(const ibvp_hal* hal, const char* args, DoorbellPolicy policy) {
  return start(hal, args, policy, Policies{});
}

void* init_firmware(const ibvp_hal* hal, const char* args, const Policies& policies) {
  return start(hal, args, DoorbellPolicy::prioritized, policies);
}

void handle_firmware(void* fw, const ibvp_fw_event* ev) { static_cast<Firmware*>(fw)->handle(*ev); }

void fini_firmware(void* fw) { delete static_cast<Firmware*>(fw); }

}  // namespace ibvp::fw
