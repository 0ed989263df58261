#include "platform/workload/flow_source.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace ibvp::workload {

uint64_t reserved_rate_bps(const FlowConfig& cfg) {
  if (cfg.reserved_rate > 0) return static_cast<uint64_t>(std::llround(cfg.reserved_rate));
  if (cfg.generator != GeneratorKind::video) return 0;
  if (cfg.video_frame_bytes.empty()) return static_cast<uint64_t>(std::llround(cfg.video_bit_rate));
  double bytes = 0;
  for (uint32_t b : cfg.video_frame_bytes) bytes += b;
  const double period_s = static_cast<double>(cfg.frame_period.value()) * 1e-12;
  const double mean = bytes * 8.0 / (static_cast<double>(cfg.video_frame_bytes.size()) * period_s);
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(mean)));
}

FlowSource::FlowSource(const FlowConfig& cfg, uint32_t flow_index, uint64_t packet_time_ps, Destination fixed,
                       std::vector<Destination> others, std::vector<Destination> hotspots, sim::Rng rng,
                       std::vector<LoadPhase> phases)
    : generator_(cfg.generator),
      pattern_(cfg.pattern),
      start_ps_(cfg.start.value()),
      stop_ps_(cfg.stop.value()),
      mean_interval_ps_(static_cast<double>(packet_time_ps) / cfg.load),
      fixed_(fixed),
      others_(std::move(others)),
      hotspots_(std::move(hotspots)),
      hotspot_fraction_(cfg.hotspot_fraction),
      rng_(rng),
      phases_(std::move(phases)) {
  flow = flow_index;
  sl = cfg.sl;
  payload_bytes = cfg.payload_bytes;
  ipd = cfg.ipd;
  vl15 = cfg.vl15;
  reserved_bps = reserved_rate_bps(cfg);
  assert(cfg.load > 0.0);
  if (!phases_.empty()) {
    assert(generator_ != GeneratorKind::saturating);
    next_gen_ps_ = next_phased_time(phases_, static_cast<double>(start_ps_), true, generator_ == GeneratorKind::poisson, rng_);
    return;
  }
  // A Poisson process observed from `start` has its first arrival one interval later; a
  // constant-rate source sends its first packet at `start`.
  next_gen_ps_ = static_cast<double>(start_ps_) +
                 (generator_ == GeneratorKind::poisson ? rng_.exponential(mean_interval_ps_) : 0.0);
  if (cfg.on_off_mean.value() > 0) periods_.emplace(start_ps_, static_cast<double>(cfg.on_off_mean.value()), rng);
}

uint64_t FlowSource::next_ready_ps(uint64_t now_ps) {
  if (generator_ == GeneratorKind::saturating) {
    if (now_ps >= stop_ps_) return kNever;
    if (now_ps < start_ps_) return start_ps_;
    if (!periods_) return now_ps;
    const uint64_t ready = periods_->on_at(now_ps) ? now_ps : periods_->period_end_ps();  // OFF: when it ends
    return ready < stop_ps_ ? ready : kNever;
  }
  // At or past the stop (a phased source's last phase is over: infinity): never again.
  if (!(next_gen_ps_ < static_cast<double>(stop_ps_))) return kNever;
  const uint64_t g = static_cast<uint64_t>(std::ceil(next_gen_ps_));
  return g < stop_ps_ ? g : kNever;
}

uint8_t FlowSource::next_sl() {
  if (path_sl_.empty()) return sl;
  if (!next_drawn_) {
    next_ = pick_destination();
    next_drawn_ = true;
  }
  return next_.dlid < path_sl_.size() ? path_sl_[next_.dlid] : sl;
}

void FlowSource::take(uint64_t now_ps, ep::PacketSpec& out) {
  const Destination d = next_drawn_ ? next_ : pick_destination();
  next_drawn_ = false;
  out.dst_node = d.node;
  out.dlid = d.dlid;
  if (path_rng_) {
    out.source_path = true;
    out.path_bits = static_cast<uint32_t>(path_rng_->next() >> 32);
  }
  // One data QP per flow at both ends; QPs 0 and 1 are reserved for management.
  out.dest_qp = 0x100 + flow;
  if (generator_ == GeneratorKind::saturating) {
    out.created_ps = now_ps;
  } else {
    out.created_ps = static_cast<uint64_t>(std::ceil(next_gen_ps_));
    assert(out.created_ps <= now_ps);
    if (!phases_.empty())
      next_gen_ps_ = next_phased_time(phases_, next_gen_ps_, false, generator_ == GeneratorKind::poisson, rng_);
    else next_gen_ps_ += generator_ == GeneratorKind::poisson ? rng_.exponential(mean_interval_ps_) : mean_interval_ps_;
  }
  ++taken_;
}

Destination FlowSource::pick_destination() {
  switch (pattern_) {
    case DestinationPattern::fixed: return fixed_;
    case DestinationPattern::hotspot:
      if (!hotspots_.empty() && rng_.uniform() < hotspot_fraction_) return hotspots_[rng_.below(hotspots_.size())];
      [[fallthrough]];
    case DestinationPattern::uniform: return others_[rng_.below(others_.size())];
  }
  return fixed_;
}

}  // namespace ibvp::workload
