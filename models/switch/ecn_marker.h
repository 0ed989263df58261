#pragma once
// Congestion detection in an input-buffered switch: which packets get the FECN bit of their
// BTH (seed 004 Sec. 5). A packet is "generating" when it is sent on the root link of a
// congestion spreading tree; the destination returns the mark to the source (BECN), whose
// response lowers its rate.
//
//   naive                   the packets in an input buffer that becomes full;
//   input_triggered         an input buffer that becomes full makes every output that a
//                           packet in it waits for congested, and the packets the switch
//                           holds for such an output are marked as they leave: per output,
//                           cnt1 counts the packets waiting for it and, at the trigger,
//                           cnt2 <- cnt1; each transmission marks while cnt2 > 0, counting
//                           it down ("mark at transmission, not by scanning");
//   input_output_triggered  as input_triggered, and also triggered when the packets waiting
//                           for one output exceed output_threshold.
//
// "Full" is the paper's: the receipt of a packet's last byte leaves the buffer without room
// for one more maximum-sized packet (a buffer in that state can block its upstream sender).
// This class keeps the per-output counters; the switch tells it what happens and scans its
// own queues for the naive policy.
#include <cstdint>
#include <vector>

namespace ibvp::sw {

enum class MarkingPolicy : uint8_t { none, naive, input_triggered, input_output_triggered };
const char* marking_policy_name(MarkingPolicy p);

struct EcnConfig {
  MarkingPolicy policy = MarkingPolicy::none;
  uint32_t output_threshold = 8;  // packets waiting for one output (input_output_triggered)
  // The largest packet the buffer must still have room for not to count as full, in bytes
  // on the wire; 0: the largest packet of the run's flows (the builder fills it in).
  uint32_t max_packet_bytes = 0;
};

class EcnMarker {
 public:
  EcnMarker(const EcnConfig& cfg, uint16_t ports) : cfg_(cfg), cnt1_(ports + 1u, 0), cnt2_(ports + 1u, 0) {}

  bool enabled() const { return cfg_.policy != MarkingPolicy::none; }
  bool marks_by_counters() const {
    return cfg_.policy == MarkingPolicy::input_triggered || cfg_.policy == MarkingPolicy::input_output_triggered;
  }
  bool naive() const { return cfg_.policy == MarkingPolicy::naive; }

  // A packet starts waiting for `out` (it requested the output).
  void waiting(uint16_t out) {
    ++cnt1_[out];
    // Sec. 5: output-triggered when the packets waiting for an output exceed the threshold.
    if (cfg_.policy == MarkingPolicy::input_output_triggered && cnt1_[out] > cfg_.output_threshold) trigger(out);
  }
  // An input buffer became full and a packet in it waits for `out`: the output is congested.
  void trigger(uint16_t out) { cnt2_[out] = cnt1_[out]; }
  // A packet leaves through `out`; true when it is to be marked.
  bool transmit(uint16_t out) {
    --cnt1_[out];
    if (!marks_by_counters() || cnt2_[out] == 0) return false;
    --cnt2_[out];
    return true;
  }

  uint32_t cnt1(uint16_t out) const { return cnt1_[out]; }
  uint32_t cnt2(uint16_t out) const { return cnt2_[out]; }

 private:
  EcnConfig cfg_;
  std::vector<uint32_t> cnt1_;  // [output] packets waiting for it
  std::vector<uint32_t> cnt2_;  // [output] next transmissions to mark
};

}  // namespace ibvp::sw
