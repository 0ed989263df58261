#pragma once
// Real-time (video) traffic metrics of seeds 000 and 003 (issue 11), computed streaming:
// each stream keeps a fixed number of counters however many frames it delivers, and the
// reassembly of frames from packets keeps only the frames still in progress.
//
// seed 000 Sec. 4 (seed 003 Sec. 4.2 alike): "The DMP is the ratio of the number of frames that
// missed their deadlines to the total number of delivered frames. The deadline for each
// frame is determined by adding 33.3 msec to the previous deadline. However, if a previous
// frame misses its deadline, a new deadline is set by adding 33.3 msec to the arrival time
// of the previous frame. Whenever a frame misses its deadline, we measure the deadline
// missing time and then calculate the average DMT."
// seed 003 Sec. 3.1, Table 1: inter-frame delivery time and its standard deviation (SD).
//
// All times are integer picoseconds (the simulator's resolution). docs/realtime_metrics.md
// states the choices made where the papers leave room.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibvp::metrics {

// 1/30 s, the MPEG-2 frame period of seed 003 Sec. 4.2 ("the frame rate is 30
// frames/sec"), of which the papers' "33.3 msec" is the rounded value. 1/30 s is not a
// whole number of ps; this is it rounded down (1/3 ps short, 10 ps per simulated second),
// so a source injecting one frame every kFramePeriod30Hz_ps and the deadlines advance in
// the same steps.
inline constexpr uint64_t kFramePeriod30Hz_ps = 33'333'333'333;

// Mean and variance of a sequence by Welford's update, mergeable by Chan et al.'s pairwise
// formula, so a class total equals the statistics of all its streams' values together.
class RunningMoments {
 public:
  void add(double x);
  void merge(const RunningMoments& other);

  uint64_t count() const { return n_; }
  double mean() const { return n_ == 0 ? 0.0 : mean_; }
  // Population variance (divided by n): the spread of the values observed in the run, not
  // an estimate of a larger population's. 0 with fewer than two values.
  double variance() const;
  double sd() const;

 private:
  uint64_t n_ = 0;
  double mean_ = 0.0;
  double m2_ = 0.0;  // sum of squared deviations from the mean
};

// One video stream's deadline and inter-frame statistics, fed with frames in the order
// they complete at the receiver (their last packet delivered).
class FrameStreamStats {
 public:
  // std::invalid_argument if period_ps is 0.
  explicit FrameStreamStats(uint64_t period_ps = kFramePeriod30Hz_ps);

  // A frame completed at delivered_ps. Frames are counted in completion order: the
  // deadline rule is about the receiver's playout, which takes frames as they arrive, so a
  // frame overtaken by a later one simply takes the next deadline; frame_index serves only
  // to count such reordering (reordered()). delivered_ps must not decrease from one call
  // to the next (simulated time); std::invalid_argument otherwise.
  //
  // The first frame has no previous deadline; the papers give none. With its creation time
  // at the source (created_ps, as the fabric's recorder passes it), the first deadline is
  // that time + period, and so, until a miss re-bases it, every frame is due one period
  // after its own creation: a large I frame is not late merely for being larger than the
  // first frame. Without it (kUnknownCreation), the first arrival starts the playout clock:
  // the first frame is on time and the second is due at that arrival + period. That
  // anchor makes every frame that takes longer to arrive than the first one a miss on an
  // idle fabric (measured on configs/examples/video.yaml: 8 of 210 frames, all I frames),
  // so the recorder uses the creation anchor.
  static constexpr uint64_t kUnknownCreation = UINT64_MAX;
  // `incomplete`: some of its packets were dropped on the way (a switch lifetime), but its
  // last packet arrived. Seed 000 Sec. 3.5 never drops the first or last packet of a frame
  // "for the simulation purpose": the receiver sees the frame end and plays it out, and its
  // DMP is over delivered frames. Such a frame is delivered and judged like any other, and
  // counted in incomplete() besides.
  void on_frame(uint64_t frame_index, uint64_t delivered_ps, uint64_t created_ps = kUnknownCreation,
                bool incomplete = false);

  uint64_t period_ps() const { return period_ps_; }
  uint64_t frames() const { return frames_; }
  uint64_t missed() const { return missed_; }
  // Delivered frames of which some packet was dropped (included in frames()).
  uint64_t incomplete() const { return incomplete_; }
  // A frame that never arrives: its last packet was dropped (possible only when the drop
  // policy drops any packet, docs/switch_lifetimes.md). Neither in frames() nor missed(); its
  // playout slot passes all the same, so the next deadline is one period later (Sec. 4:
  // "adding 33.3 msec to the previous deadline"). Left where it was, the next frame would be
  // judged against the lost frame's deadline, a period early, and counted missed.
  void on_lost_frame();
  uint64_t lost() const { return lost_; }
  // Sum of delivery minus deadline over the missed frames, for DMT.
  uint64_t lateness_sum_ps() const { return lateness_sum_ps_; }
  // Frames that completed after a frame with a higher index.
  uint64_t reordered() const { return reordered_; }
  // Deadline of the next frame; meaningful once a frame was delivered.
  uint64_t next_deadline_ps() const { return deadline_ps_; }

  // Deadline missing probability: missed / delivered frames; 0 with no frame delivered.
  double dmp() const;
  // Average deadline missing time of the missed frames, ps; 0 with no missed frame.
  double dmt_ps() const;
  // Time between consecutive frame completions (seed 003 Sec. 3.1, Table 1), ps.
  double inter_frame_mean_ps() const { return inter_frame_.mean(); }
  double inter_frame_sd_ps() const { return inter_frame_.sd(); }
  const RunningMoments& inter_frame() const { return inter_frame_; }

 private:
  void judge(uint64_t delivered_ps);  // the deadline rule for one delivered frame

  uint64_t period_ps_;
  uint64_t frames_ = 0;
  uint64_t missed_ = 0;
  uint64_t lost_ = 0;
  uint64_t incomplete_ = 0;
  uint64_t lateness_sum_ps_ = 0;
  uint64_t reordered_ = 0;
  uint64_t deadline_ps_ = 0;
  uint64_t last_delivered_ps_ = 0;
  uint64_t highest_index_ = 0;
  RunningMoments inter_frame_;
};

// The streams of one traffic class together: DMP over all their frames, DMT over all
// their missed frames, inter-frame moments over all their inter-frame times (never a time
// between two different streams' frames). Exact: sums of counts and Chan's merge.
class FrameClassStats {
 public:
  void add(const FrameStreamStats& stream);

  uint64_t streams() const { return streams_; }
  uint64_t frames() const { return frames_; }
  uint64_t missed() const { return missed_; }
  uint64_t lost() const { return lost_; }
  uint64_t incomplete() const { return incomplete_; }
  uint64_t lateness_sum_ps() const { return lateness_sum_ps_; }
  double dmp() const;
  double dmt_ps() const;
  double inter_frame_mean_ps() const { return inter_frame_.mean(); }
  double inter_frame_sd_ps() const { return inter_frame_.sd(); }

 private:
  uint64_t streams_ = 0;
  uint64_t frames_ = 0;
  uint64_t missed_ = 0;
  uint64_t lost_ = 0;
  uint64_t incomplete_ = 0;
  uint64_t lateness_sum_ps_ = 0;
  RunningMoments inter_frame_;
};

// Reassembly of one stream's frames from their packets, which may arrive in any order
// within a frame and interleaved with other frames' packets. A frame completes when all
// of its packets are in; its delivery time is that of its latest packet. Only frames in
// progress are kept (a small vector reused from frame to frame, so no allocation once it
// has grown to the number of frames in flight): memory does not grow with run length.
// Each packet is assumed delivered once (the fabric model does not duplicate packets and
// RC drops duplicates by PSN before delivery); a packet of a frame already completed would
// open a new entry that never completes, visible in in_progress().
class FrameReassembly {
 public:
  struct Completed {
    bool done = false;
    uint64_t frame_index = 0;
    uint64_t delivered_ps = 0;
    bool incomplete = false;  // some of its packets were dropped
  };

  // One packet of frame_index, a frame of packets_in_frame packets, delivered at
  // delivered_ps. Returns done = true with the frame's delivery time when this was the last
  // of its packets to be accounted for (delivered or dropped), and incomplete = true if any
  // was dropped. std::invalid_argument if packets_in_frame is 0 or differs from the count
  // given by an earlier packet of the same frame.
  Completed on_packet(uint64_t frame_index, uint32_t packets_in_frame, uint64_t delivered_ps);

  // One packet of frame_index was dropped on the way. Returns true when this drop was the
  // last of its packets to be accounted for: the frame never arrives (lost). Otherwise the
  // frame completes, incomplete, with its last delivered packet (on_packet). A stream's
  // packets keep their order on their path, so with seed 000's selective policy, which never
  // drops a frame's last packet, every frame that loses packets still arrives.
  bool on_lost(uint64_t frame_index, uint32_t packets_in_frame);

  size_t in_progress() const { return pending_.size(); }

 private:
  struct Pending {
    uint64_t frame_index;
    uint32_t packets;
    uint32_t remaining;
    uint64_t latest_ps;
    bool lost;  // a packet of it was dropped
  };
  std::vector<Pending> pending_;
};

}  // namespace ibvp::metrics
