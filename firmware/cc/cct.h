// The CA side of the InfiniBand Congestion Control Annex (IBA Vol 1, Annex A10): a
// Congestion Control Table (CCT) of inter-packet delays, and per flow an index into it
// (CCTI). Each BECN (an ACK with BECN, a CNP) raises the flow's CCTI by CCTI_Increase, up
// to CCTI_Limit; each expiry of the CCTI_Timer lowers it by one, down to CCTI_Min. The flow
// is paced by the table's entry at its CCTI. Firmware code: no SystemC, no model headers.
//
// The annex's CCT entry is a shift and a multiplier in implementation-defined units; here
// an entry is the IPD itself, in whole packet times of gap after each packet (the unit of
// IBA's static rate control, 9.11.2). The table has 128 entries rising linearly from 0 to
// max_ipd, by default 255, the largest IPD of that 8-bit field: entry i is
// round(i * max_ipd / 127).
//
// The annex keeps one CCTI_Timer per SL of the port and restarts it as it expires; with
// one setting for all SLs those timers expire together, so the firmware runs one port timer
// and lowers every flow's CCTI at each expiry. It runs only while a flow is above CCTI_Min
// and starts with the BECN that lifts the first one (the annex's timers run freely: this
// only fixes their phase), so one BECN on a quiet port is undone increase x timer later.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ibvp::fw::cc {

struct CctOptions {
  uint32_t entries = 128;    // CCT entries: CCTI 0 .. entries-1
  uint32_t max_ipd = 255;    // the last entry's IPD, packet times
  uint32_t increase = 1;     // CCTI_Increase per BECN
  uint32_t limit = 127;      // CCTI_Limit: the largest CCTI (< entries)
  uint32_t min = 0;          // CCTI_Min: where flows start and the timer stops
  uint32_t timer = 16;       // CCTI_Timer in the annex's units of 1.024 us (16: 16.384 us)

  static constexpr uint64_t kTimerUnitPs = 1'024'000;  // the annex's CCTI_Timer unit, 1.024 us
  uint64_t timer_ps() const { return uint64_t{timer} * kTimerUnitPs; }
};

class Cct {
 public:
  explicit Cct(const CctOptions& o) : o_(o), ipd_(o.entries) {
    const uint32_t last = std::max<uint32_t>(o.entries, 2) - 1;
    for (uint32_t i = 0; i < o.entries; ++i) ipd_[i] = (uint64_t{i} * o.max_ipd * 2 + last) / (2 * last);
  }

  const CctOptions& options() const { return o_; }
  // The IPD of CCTI `ccti`, packet times.
  uint32_t ipd(uint32_t ccti) const { return ipd_[std::min<uint32_t>(ccti, o_.limit)]; }
  // The CCTI after a BECN.
  uint32_t after_becn(uint32_t ccti) const { return std::min(ccti + o_.increase, o_.limit); }
  // The CCTI after the CCTI_Timer expired.
  uint32_t after_timer(uint32_t ccti) const { return ccti > o_.min ? ccti - 1 : o_.min; }
  // A flow at CCTI_Min needs no state and no timer.
  bool at_rest(uint32_t ccti) const { return ccti <= o_.min; }

 private:
  CctOptions o_;
  std::vector<uint32_t> ipd_;  // [CCTI] IPD, packet times
};

}  // namespace ibvp::fw::cc
