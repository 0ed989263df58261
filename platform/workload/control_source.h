#pragma once
// Control (management) traffic of the scenario's `control:` section (issue 11; seed 000
// Sec. 4, seed 003 Sec. 4.2): one packet every period from start, on VL15, to a fixed
// destination or to a uniformly random other endpoint per packet. The period is a whole
// number of picoseconds, so packet k is created exactly at start + k * period. Fabric-only
// endpoints pull from it as from any source (ep::TrafficSource); on HCA hosts
// apps::ControlAgents hands its packets to each HCA's VL15 queue (docs/control.md).
#include <cstdint>
#include <optional>
#include <vector>

#include "models/endpoint/traffic_source.h"
#include "models/sim/rng.h"
#include "platform/scenario/scenario.h"
#include "platform/workload/flow_source.h"

namespace ibvp::workload {

class ControlSource : public ep::TrafficSource {
 public:
  // `others`: the uniform candidates (used when `fixed` is empty), never the sender itself.
  ControlSource(const ControlConfig& cfg, uint32_t flow_index, std::optional<Destination> fixed,
                std::vector<Destination> others, sim::Rng rng);

  uint64_t next_ready_ps(uint64_t now_ps) override;
  void take(uint64_t now_ps, ep::PacketSpec& out) override;

  uint64_t generated() const { return taken_; }

 private:
  uint64_t period_ps_;
  uint64_t stop_ps_;
  uint64_t next_ps_;  // creation time of the next packet
  std::optional<Destination> fixed_;
  std::vector<Destination> others_;
  sim::Rng rng_;
  uint64_t taken_ = 0;
};

}  // namespace ibvp::workload
