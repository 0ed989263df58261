#pragma once
// Results of a phased traffic mix (workload/mix.h; seed 003 Sec. 4.2 and 5): per phase and
// class, the real-time streams' deadline metrics (DMP, DMT, inter-frame mean and SD) and the
// best-effort flows' throughput and latency. A packet (and so a frame) belongs to the phase
// of its creation time. Each stream's frames are judged per phase: the first frame of a
// stream in a phase anchors that phase's deadlines on its creation (FrameStreamStats), so a
// stream the mix turns off and on again starts afresh instead of counting the pause as a miss.
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/sim/observer.h"
#include "platform/metrics/frame_metrics.h"
#include "platform/workload/mix.h"

namespace ibvp::metrics {

class MixMetrics : public sim::FabricObserver {
 public:
  // `plan`, `frame_period_ps` and `link_bytes_per_s` (of the source's link) by flow index
  // (Fabric::flows()); packets created before `warmup_ps` are left out, as in the Recorder.
  MixMetrics(std::vector<workload::MixPhase> phases, const std::vector<workload::FlowMix>& plan,
             const std::vector<uint64_t>& frame_period_ps, const std::vector<double>& link_bytes_per_s,
             double total_load, uint64_t warmup_ps);

  void on_deliver(const ib::Packet& p, uint32_t node, uint64_t t) override;
  void on_drop(const ib::Packet& p, uint32_t node, uint64_t t) override;

  struct Phase {
    workload::MixPhase span;
    // Offered by the plan: real time the active streams' mean rates, best effort the flows'
    // loads, in bytes per second summed over the sources.
    double rt_offered_bytes_per_s = 0, be_offered_bytes_per_s = 0;
    uint32_t rt_streams = 0;       // streams active in the phase
    FrameClassStats rt;            // filled by finish()
    uint64_t rt_payload_bytes = 0;  // delivered, of packets created in the phase
    uint64_t be_packets = 0, be_payload_bytes = 0;
    double be_latency_sum_ps = 0;
    // Seed 003 Fig. 5: latency split at the header's entry into the network (Packet::
    // entered_ps): queueing outside the routers (at the source and its NIC), then network
    // time to delivery. Best effort's, and the control section's (VL15) packets'.
    double be_queueing_sum_ps = 0;
    uint64_t control_packets = 0;
    double control_latency_sum_ps = 0, control_queueing_sum_ps = 0;
  };
  // Merges the streams' frame statistics into the phases; call once after the run.
  void finish();
  const std::vector<Phase>& phases() const { return phases_; }
  // summary.json's "mix": {"total_load", "phases": [...]}.
  nlohmann::ordered_json json() const;

 private:
  struct Stream {
    FrameReassembly frames;
    std::vector<std::optional<FrameStreamStats>> by_phase;
    uint64_t period_ps = 0;
  };
  std::vector<workload::MixPhase> spans_;
  std::vector<Phase> phases_;
  std::vector<workload::MixClass> cls_;  // by flow
  std::vector<int32_t> stream_of_;       // by flow: index in streams_ or -1
  std::vector<Stream> streams_;
  double total_load_;
  uint64_t warmup_ps_;
  bool finished_ = false;
};

}  // namespace ibvp::metrics
