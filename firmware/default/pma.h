// The HCA's performance management agent (IBA 16.1): the firmware's answer to the PerfMgt
// class (0x04) on QP1. It serves Get of ClassPortInfo and Get and Set of PortCounters
// (IBA 16.1.3.5, with PortXmitWait of IBA 1.2.1) from the port's hardware counters
// (IBVP_REG_PC_*), which count from the start of the run and are never cleared: a Set with
// CounterSelect bits clears the selected counters by taking the hardware's values as their
// new zero. Other attributes get GetResp with status UnsupportedAttribute.
#pragma once

#include <cstdint>

#include "firmware/hal/ibvp_hal.h"
#include "models/ib/mad.h"

namespace ibvp::fw {

class Pma {
 public:
  explicit Pma(const ibvp_hal* hal) : hal_(hal), c_(hal->ctx) {}

  // A Get or Set of the PerfMgt class.
  static bool serves(const ib::mad::MadHeader& h);
  // The GetResp to `request`, data filled.
  ib::mad::PerfMad answer(const ib::mad::PerfMad& request);

  // PortXmitWait's tick (IBA 16.1.3.5 leaves its length to the implementation): 1 ns.
  static constexpr uint64_t kXmitWaitTickPs = 1000;

 private:
  // The counters as the PMA reports them, in their units (PortXmitData in 4-byte words,
  // PortXmitWait in ticks), before the baselines are taken off.
  struct Raw {
    uint64_t xmit_data = 0, rcv_data = 0, xmit_pkts = 0, rcv_pkts = 0, xmit_wait = 0;
    uint64_t rcv_errors = 0, xmit_discards = 0, vl15_dropped = 0;
  };
  Raw read_raw();
  uint64_t counter(uint32_t which);  // IBVP_PC_*, both halves
  ib::mad::PortCounters port_counters(const Raw& r) const;

  const ibvp_hal* hal_;
  void* c_;
  Raw base_;  // the values of the last clear
};

}  // namespace ibvp::fw
