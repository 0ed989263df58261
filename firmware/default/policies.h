// Plug-in policies of the default transport (issue 15 part 4): the decisions an image may
// make its own without copying the transport's code. Each concern is a small interface:
//
//   DoorbellArbiter     which waiting doorbell the core serves next
//   QpScheduler         which QP's next packet the tx engine gets; told when a QP gets
//                       send work (after a doorbell) and when a send WQE completes
//   CongestionResponse  what a congestion mark returned (BECN on an ACK or NAK, a CNP;
//                       IBA Vol 1 Annex A10) and an unmarked ACK do to a flow's rate, and
//                       the gap the port leaves after the flow's packets
//   StepCosts           the cycle-cost table: core cycles charged per step of firmware
//                       work and per event kind (firmware.h)
//
// The transport's own policies implement the same interfaces and are chosen by
// firmware_args (sched=, cc=, wqe_cycles=, ...); an image replaces any of them by passing a
// factory in `Policies` to init_firmware (docs/firmware.md, "Plug-in policies";
// firmware/examples/sl_priority.cpp). A factory is called once per HCA, so a policy's state
// is its HCA's: two HCAs that load one image share its code, never its state.
#pragma once

#include <cstdint>
#include <memory>

#include "firmware/hal/ibvp_hal.h"

namespace ibvp::fw {

struct SchedOptions;
struct StepCosts;

// What a policy gets when its HCA's firmware starts.
struct PolicyContext {
  const ibvp_hal* hal = nullptr;  // HAL services (each call is charged as the transport's are)
  const SchedOptions* options = nullptr;  // the parsed firmware_args (firmware.h)
  uint32_t doorbell_classes = 1;  // IBVP_REG_DB_CLASSES
  uint32_t data_vls = 1;          // IBVP_REG_DATA_VLS
  uint32_t max_qps = 0;           // IBVP_REG_MAX_QPS
  // A HAL timer id the congestion response may arm with hal->timer_set; its IBVP_EV_TIMER
  // comes back as CongestionResponse::on_timer.
  uint32_t cc_timer_id = 0;
};

class DoorbellArbiter {
 public:
  virtual ~DoorbellArbiter() = default;
  // The doorbell to serve next: its class and its index in that class's queue
  // (hal->doorbell_count, doorbell_peek); false when none waits.
  virtual bool pick(uint32_t& db_class, uint32_t& index) = 0;
};

// A QP with a packet to send whose VL's tx buffer has room for it (and, with cc_window,
// whose window is open): what a scheduler chooses among.
struct QpCandidate {
  uint32_t qpn = 0;
  uint32_t qp_type = 0;    // IBVP_QPT_*
  uint8_t sl = 0;          // of its next packet (UD: the AH of its head WQE)
  uint8_t vl = 0;
  uint32_t bytes = 0;      // tx buffer room its next packet takes (payload and headers)
  uint64_t seq = 0;        // fetch order of its head WQE across all QPs (FCFS)
  uint32_t weight = 1;     // QpInitAttr::weight
  uint32_t rate_mbps = 0;  // QpInitAttr::reserved_rate_mbps
};

class QpScheduler {
 public:
  virtual ~QpScheduler() = default;
  // Which candidate's next packet goes: an index into `c` (candidates in QPN order), or -1
  // to send nothing now (the next doorbell or TX_DONE asks again).
  virtual int pick(const QpCandidate* c, uint32_t n) = 0;
  // The picked QP's packet of `bytes` was handed to the tx engine.
  virtual void on_sent(uint32_t /*qpn*/, uint32_t /*bytes*/) {}
  // QP `qpn` had no packet to send and now has (its doorbell's WQEs were fetched, an ACK or
  // timer let it go on).
  virtual void on_work(uint32_t /*qpn*/) {}
  // A send WQE of QP `qpn` completed (successfully or not, signaled or not).
  virtual void on_completion(uint32_t /*qpn*/) {}
};

class CongestionResponse {
 public:
  virtual ~CongestionResponse() = default;
  // A mark came back for the flow (qpn, dlid): an ACK or NAK with BECN, or a CNP. `psn`
  // is the marked packet's, `next_psn` the PSN the QP sends next (marks of packets sent
  // before a decrease report congestion already answered).
  virtual void on_mark(uint32_t qpn, uint16_t dlid, uint32_t psn, uint32_t next_psn) = 0;
  // An ACK without BECN; UD and UC have no ACKs, so each packet they send counts as one.
  virtual void on_unmarked(uint32_t /*qpn*/, uint16_t /*dlid*/) {}
  // The gap the port leaves after the flow's next packet, in 1/256 packet times
  // (ibvp_tx_desc::cc_ipd_q8; 256 is IBA's IPD 1); 0: none.
  virtual uint32_t gap_q8(uint32_t qpn, uint16_t dlid) = 0;
  // The flow starts again after its QP went idle, with cc_persist=0: forget its rate.
  virtual void on_flow_start(uint32_t /*qpn*/, uint16_t /*dlid*/) {}
  // The timer armed with PolicyContext::cc_timer_id fired.
  virtual void on_timer() {}
};

// An image's policies; a null member, or a factory that returns null, keeps the transport's
// own (chosen by firmware_args).
struct Policies {
  std::unique_ptr<DoorbellArbiter> (*doorbells)(const PolicyContext&) = nullptr;
  std::unique_ptr<QpScheduler> (*qp_scheduler)(const PolicyContext&) = nullptr;
  std::unique_ptr<CongestionResponse> (*congestion)(const PolicyContext&) = nullptr;
  // Adjusts the cycle-cost table after firmware_args filled it (wqe_cycles=, ...).
  void (*cycle_costs)(StepCosts&) = nullptr;
};

}  // namespace ibvp::fw
