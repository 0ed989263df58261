#pragma once
// Seed 004 Sec. 6.3.2's dynamic flows: ON and OFF periods, exponentially distributed with one
// mean, alternating from an ON period that begins at the flow's start. Fabric-only sources
// (flow_source.h) and the flows of HCA hosts (platform/apps/flow_streams.h) draw the same
// periods from the same stream, so a scenario's flows turn on and off at the same times
// whichever endpoint model runs it.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "models/sim/rng.h"

namespace ibvp::workload {

class OnOffPeriods {
 public:
  // `flow_rng` is the flow's own stream; the periods take a stream derived from it, so they
  // neither change nor are changed by the flow's other draws.
  OnOffPeriods(uint64_t start_ps, double mean_ps, const sim::Rng& flow_rng)
      : mean_ps_(mean_ps), rng_(flow_rng.derive("on_off")), period_end_ps_(start_ps) {}

  // Whether `now_ps` lies in an ON period (advancing past the periods that ended by then).
  bool on_at(uint64_t now_ps) {
    while (period_end_ps_ <= now_ps) {
      on_ = !on_;
      const double length = std::max(1.0, std::round(rng_.exponential(mean_ps_)));
      period_end_ps_ += static_cast<uint64_t>(length);
    }
    return on_;
  }
  // End of the current period (valid after on_at).
  uint64_t period_end_ps() const { return period_end_ps_; }

 private:
  double mean_ps_;
  sim::Rng rng_;
  bool on_ = false;  // a notional OFF period ends at start
  uint64_t period_end_ps_;
};

}  // namespace ibvp::workload
