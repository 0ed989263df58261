#include "platform/metrics/frame_metrics.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace ibvp::metrics {

void RunningMoments::add(double x) {
  // Welford (1962): the running mean and the sum of squared deviations, without the
  // cancellation of sum(x^2) - n mean^2 on values near 3.3e10 ps.
  ++n_;
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (x - mean_);
}

void RunningMoments::merge(const RunningMoments& other) {
  // Chan, Golub, LeVeque (1979): M2 = M2a + M2b + delta^2 na nb / n.
  if (other.n_ == 0) return;
  if (n_ == 0) {
    *this = other;
    return;
  }
  const double na = static_cast<double>(n_);
  const double nb = static_cast<double>(other.n_);
  const double n = na + nb;
  const double delta = other.mean_ - mean_;
  mean_ += delta * nb / n;
  m2_ += other.m2_ + delta * delta * na * nb / n;
  n_ += other.n_;
}

double RunningMoments::variance() const {
  return n_ < 2 ? 0.0 : m2_ / static_cast<double>(n_);
}

double RunningMoments::sd() const { return std::sqrt(variance()); }

FrameStreamStats::FrameStreamStats(uint64_t period_ps) : period_ps_(period_ps) {
  if (period_ps == 0) throw std::invalid_argument("frame period must be positive (ps)");
}

void FrameStreamStats::on_frame(uint64_t frame_index, uint64_t delivered_ps, uint64_t created_ps, bool incomplete) {
  if (incomplete) ++incomplete_;
  if (frames_ == 0) {
    if (created_ps == kUnknownCreation) {
      // No source clock: the first arrival anchors the playout clock (see the header).
      frames_ = 1;
      highest_index_ = frame_index;
      last_delivered_ps_ = delivered_ps;
      deadline_ps_ = delivered_ps + period_ps_;
      return;
    }
    // The source's clock: the first frame is due one period after it was created, so every
    // frame until a miss is due one period after its own creation, whatever its size.
    frames_ = 1;
    highest_index_ = frame_index;
    last_delivered_ps_ = delivered_ps;
    deadline_ps_ = created_ps + period_ps_;
    judge(delivered_ps);
    return;
  }
  if (delivered_ps < last_delivered_ps_)
    throw std::invalid_argument("frame " + std::to_string(frame_index) + " delivered at " + std::to_string(delivered_ps) +
                                " ps, before the previous frame (" + std::to_string(last_delivered_ps_) +
                                " ps): frames must be fed in completion order");
  ++frames_;
  if (frame_index < highest_index_) ++reordered_;
  else highest_index_ = frame_index;
  inter_frame_.add(static_cast<double>(delivered_ps - last_delivered_ps_));
  last_delivered_ps_ = delivered_ps;
  judge(delivered_ps);
}

void FrameStreamStats::on_lost_frame() {
  ++lost_;
  // Before the first delivered frame there is no deadline yet: that frame anchors it on its
  // own creation (on_frame).
  if (frames_ > 0) deadline_ps_ += period_ps_;
}

void FrameStreamStats::judge(uint64_t delivered_ps) {
  // seed 000 Sec. 4: on time, the next deadline is this deadline + 33.3 ms; missed, it is
  // this frame's arrival + 33.3 ms. Arriving exactly at the deadline is on time.
  if (delivered_ps > deadline_ps_) {
    ++missed_;
    lateness_sum_ps_ += delivered_ps - deadline_ps_;
    deadline_ps_ = delivered_ps + period_ps_;
  } else {
    deadline_ps_ += period_ps_;
  }
}

double FrameStreamStats::dmp() const {
  return frames_ == 0 ? 0.0 : static_cast<double>(missed_) / static_cast<double>(frames_);
}

double FrameStreamStats::dmt_ps() const {
  return missed_ == 0 ? 0.0 : static_cast<double>(lateness_sum_ps_) / static_cast<double>(missed_);
}

void FrameClassStats::add(const FrameStreamStats& stream) {
  ++streams_;
  frames_ += stream.frames();
  missed_ += stream.missed();
  lost_ += stream.lost();
  incomplete_ += stream.incomplete();
  lateness_sum_ps_ += stream.lateness_sum_ps();
  inter_frame_.merge(stream.inter_frame());
}

double FrameClassStats::dmp() const {
  return frames_ == 0 ? 0.0 : static_cast<double>(missed_) / static_cast<double>(frames_);
}

double FrameClassStats::dmt_ps() const {
  return missed_ == 0 ? 0.0 : static_cast<double>(lateness_sum_ps_) / static_cast<double>(missed_);
}

FrameReassembly::Completed FrameReassembly::on_packet(uint64_t frame_index, uint32_t packets_in_frame,
                                                      uint64_t delivered_ps) {
  if (packets_in_frame == 0)
    throw std::invalid_argument("frame " + std::to_string(frame_index) + ": a frame has at least one packet");
  for (size_t i = 0; i < pending_.size(); ++i) {
    Pending& p = pending_[i];
    if (p.frame_index != frame_index) continue;
    if (p.packets != packets_in_frame)
      throw std::invalid_argument("frame " + std::to_string(frame_index) + ": packet says " +
                                  std::to_string(packets_in_frame) + " packets, an earlier one said " +
                                  std::to_string(p.packets));
    if (delivered_ps > p.latest_ps) p.latest_ps = delivered_ps;
    if (--p.remaining > 0) return {};
    // The last packet accounted for arrived: the frame is delivered, whole or not.
    const Completed done{true, frame_index, p.latest_ps, p.lost};
    // Unordered removal: the vector keeps its capacity, nothing is freed or allocated.
    pending_[i] = pending_.back();
    pending_.pop_back();
    return done;
  }
  if (packets_in_frame == 1) return {true, frame_index, delivered_ps};
  pending_.push_back({frame_index, packets_in_frame, packets_in_frame - 1, delivered_ps, false});
  return {};
}

bool FrameReassembly::on_lost(uint64_t frame_index, uint32_t packets_in_frame) {
  if (packets_in_frame == 0)
    throw std::invalid_argument("frame " + std::to_string(frame_index) + ": a frame has at least one packet");
  for (size_t i = 0; i < pending_.size(); ++i) {
    Pending& p = pending_[i];
    if (p.frame_index != frame_index) continue;
    p.lost = true;
    if (--p.remaining > 0) return false;
    pending_[i] = pending_.back();
    pending_.pop_back();
    return true;
  }
  if (packets_in_frame == 1) return true;
  pending_.push_back({frame_index, packets_in_frame, packets_in_frame - 1, 0, true});
  return false;
}

}  // namespace ibvp::metrics
