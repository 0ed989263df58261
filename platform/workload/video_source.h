#pragma once
// A video stream from a fabric-only endpoint (issue 11, seed 000 Sec. 4): frame k is
// created at start + k * frame_period, cut into packets of at most the flow's payload_bytes
// (split_frame), and all its packets are queued at that time; the endpoint's link then
// serializes them. Frame sizes come from a trace (which loops when it ends, so any run
// length works) or from the MPEG-2 generator. Each packet carries its frame's index and
// packet count (Packet::frame, frame_packets) so the receiver can reassemble frames.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/endpoint/traffic_source.h"
#include "platform/scenario/scenario.h"
#include "platform/workload/flow_source.h"
#include "platform/workload/video_frames.h"

namespace ibvp::workload {

// The frame sizes of one video flow, in order: its trace (looping when it ends) or the
// MPEG-2 generator on the stream "video/<flow name>" of the scenario's seed. Fabric-only
// sources (VideoSource) and HCA hosts' programs (apps::FlowStreams) draw from it, so a
// flow's frames are the same under either endpoint model.
class VideoFrameSizes {
 public:
  VideoFrameSizes(const FlowConfig& cfg, uint64_t seed);
  uint32_t next();  // the size of the next frame in bytes
  // The type of the frame next() returned last: 'I', 'P' or 'B'; 0 when a trace was given
  // as sizes only (tests). Selective dropping (docs/switch_lifetimes.md) reads it.
  char type() const { return type_; }

 private:
  std::vector<uint32_t> trace_;  // empty: the generator
  std::string trace_types_;      // parallel to trace_, or empty
  char type_ = 0;
  std::optional<Mpeg2FrameGenerator> generator_;
  uint64_t frame_ = 0;
};

class VideoSource : public ep::TrafficSource {
 public:
  // `seed`: the scenario's; the generator's stream is named after the flow ("video/<name>"),
  // so a flow's frames do not change when other flows are added or reordered.
  VideoSource(const FlowConfig& cfg, uint32_t flow_index, Destination dst, uint64_t seed);

  uint64_t next_ready_ps(uint64_t now_ps) override;
  void take(uint64_t now_ps, ep::PacketSpec& out) override;
  uint32_t next_payload_bytes() const override;
  uint8_t next_sl() override;
  // As FlowSource::set_path_sl: the SL the subnet manager gave the path to each DLID.
  void set_path_sl(std::vector<uint8_t> sl_by_dlid) { path_sl_ = std::move(sl_by_dlid); }
  // The mix's plan for this stream (workload/mix.h): phase p ends at phase_end_ps[p], and
  // frames created in a phase where active[p] is false are not sent (a live stream that is
  // off: its frame index and sizes go on with time).
  void set_active_phases(std::vector<uint64_t> phase_end_ps, std::vector<bool> active) {
    phase_end_ps_ = std::move(phase_end_ps);
    active_ = std::move(active);
  }

 private:
  void load_frame();  // size and split of frame_ from the trace or the generator

  Destination dst_;
  uint64_t start_ps_, stop_ps_, period_ps_;
  VideoFrameSizes sizes_;
  uint32_t frame_ = 0;   // index of the frame being sent
  FrameSplit split_{};   // its packets
  char type_ = 0;        // its type (VideoFrameSizes::type)
  uint32_t sent_ = 0;    // of them, handed out
  std::vector<uint8_t> path_sl_;
  std::vector<uint64_t> phase_end_ps_;
  std::vector<bool> active_;  // empty: always
  bool active_at(uint64_t t_ps) const;
};

}  // namespace ibvp::workload
