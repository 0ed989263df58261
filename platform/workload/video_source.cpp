#include "platform/workload/video_source.h"

#include <cassert>

namespace ibvp::workload {

VideoFrameSizes::VideoFrameSizes(const FlowConfig& cfg, uint64_t seed)
    : trace_(cfg.video_frame_bytes), trace_types_(cfg.video_frame_types) {
  if (trace_.empty()) generator_.emplace(cfg.video_bit_rate, seed, "video/" + cfg.name, cfg.video_gop);
}

uint32_t VideoFrameSizes::next() {
  const uint64_t k = frame_++;
  if (trace_.empty()) {
    const VideoFrame f = generator_->next();
    type_ = static_cast<char>(f.type);
    return f.size_bytes;
  }
  const size_t i = static_cast<size_t>(k % trace_.size());
  type_ = i < trace_types_.size() ? trace_types_[i] : 0;
  return trace_[i];
}

VideoSource::VideoSource(const FlowConfig& cfg, uint32_t flow_index, Destination dst, uint64_t seed)
    : dst_(dst),
      start_ps_(cfg.start.value()),
      stop_ps_(cfg.stop.value()),
      period_ps_(cfg.frame_period.value()),
      sizes_(cfg, seed) {
  flow = flow_index;
  sl = cfg.sl;
  payload_bytes = cfg.payload_bytes;
  ipd = cfg.ipd;
  vl15 = cfg.vl15;
  reserved_bps = reserved_rate_bps(cfg);
  assert(period_ps_ > 0 && payload_bytes > 0);
  load_frame();
}

void VideoSource::load_frame() {
  split_ = split_frame(sizes_.next(), payload_bytes);
  type_ = sizes_.type();
  sent_ = 0;
}

uint64_t VideoSource::next_ready_ps(uint64_t now_ps) {
  (void)now_ps;
  for (;;) {
    // The frame's index times the period: no rounding drift however long the run.
    const uint64_t created = start_ps_ + uint64_t{frame_} * period_ps_;
    // A frame's index must stay below ib::kNoFrame (~136 years of 30 frames/s).
    if (created >= stop_ps_ || frame_ == ~uint32_t{0}) return kNever;
    if (sent_ > 0 || active_at(created)) return created;
    // Off after the last phase (the end of the run): never again. Before it, the frames
    // skipped are at most the run's duration / frame_period.
    if (!phase_end_ps_.empty() && created >= phase_end_ps_.back()) return kNever;
    ++frame_;  // created while the mix has the stream off: skipped
    load_frame();
  }
}

bool VideoSource::active_at(uint64_t t_ps) const {
  if (active_.empty()) return true;
  for (size_t p = 0; p < phase_end_ps_.size(); ++p)
    if (t_ps < phase_end_ps_[p]) return active_[p];
  return active_.back();
}

uint32_t VideoSource::next_payload_bytes() const {
  return sent_ + 1 < split_.packets ? split_.full_packet_bytes : split_.last_packet_bytes;
}

uint8_t VideoSource::next_sl() {
  return dst_.dlid < path_sl_.size() ? path_sl_[dst_.dlid] : sl;
}

void VideoSource::take(uint64_t now_ps, ep::PacketSpec& out) {
  out.dst_node = dst_.node;
  out.dlid = dst_.dlid;
  out.dest_qp = 0x100 + flow;  // one data QP per flow, as FlowSource
  out.created_ps = start_ps_ + uint64_t{frame_} * period_ps_;
  assert(out.created_ps <= now_ps);
  (void)now_ps;
  out.frame = frame_;
  out.frame_packets = split_.packets;
  out.frame_piece = sent_;
  out.frame_type = type_;
  if (++sent_ == split_.packets) {
    ++frame_;
    load_frame();
  }
}

}  // namespace ibvp::workload
