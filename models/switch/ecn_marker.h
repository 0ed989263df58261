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
//                           for one output exceed output_threshold;
//   cc_annex                IBA Vol 1 Annex A10's Congestion Control Switch Settings: see below.
//
// "Full" is the paper's: the receipt of a packet's last byte leaves the buffer without room
// for one more maximum-sized packet (a buffer in that state can block its upstream sender).
//
// cc_annex decides per packet as it leaves an output (Annex A10, switch marking): the output is congested when
// the packets still waiting for its VL after this one exceed the Threshold; it is the root of
// the congestion when it had credits to send, and a victim when it stood idle for lack of
// credits since its last packet (its next hop is congested, not this link). A root's
// packets, and a victim's when its port is in Victim_Mask, are eligible if they are at least
// Packet_Size credits; Marking_Rate eligible packets go unmarked between two marked ones.
//
// Threshold 1..15 to occupancy: the switch holds the packets waiting for an output in its
// input buffers, and one input VL buffer (vl_buffer_bytes) is what one upstream link can
// have outstanding. Threshold t marks when more than (16 - t)/16 of one input VL buffer
// waits for the output VL: 15 marks as soon as 1/16 of a buffer queues behind the packet
// leaving, 1 only when nearly a whole buffer does; 0 never marks. Like a real switch's
// per-port buffer fraction, the scale follows the buffer size, so one setting suits
// fabrics with different buffers.
//
// Marking_Rate is a deterministic countdown per output, not a random draw: exactly one in
// Marking_Rate + 1 eligible packets is marked, the first eligible one included, so runs
// repeat and tests can count.
//
// This class keeps the per-output counters; the switch tells it what happens and scans its
// own queues for the naive policy.
#include <algorithm>
#include <bitset>
#include <cstdint>
#include <vector>

namespace ibvp::sw {

enum class MarkingPolicy : uint8_t { none, naive, input_triggered, input_output_triggered, cc_annex };
const char* marking_policy_name(MarkingPolicy p);

struct EcnConfig {
  MarkingPolicy policy = MarkingPolicy::none;
  uint32_t output_threshold = 8;  // packets waiting for one output (input_output_triggered)
  // The largest packet the buffer must still have room for not to count as full, in bytes
  // on the wire; 0: the largest packet of the run's flows (the builder fills it in).
  uint32_t max_packet_bytes = 0;
  // cc_annex: the annex's Congestion Control Switch Settings (field widths as the annex's).
  uint8_t threshold = 15;        // 0: no marking; 1..15: more aggressive (see above)
  uint16_t marking_rate = 0;     // eligible packets left unmarked between two marked ones
  uint8_t packet_size = 0;       // credits (64 bytes): smaller packets are never marked
  std::vector<uint16_t> victim_mask;  // ports whose packets are marked also as victims
};

class EcnMarker {
 public:
  EcnMarker(const EcnConfig& cfg, uint16_t ports)
      : cfg_(cfg), cnt1_(ports + 1u, 0), cnt2_(ports + 1u, 0), unmarked_left_(ports + 1u, 0) {
    for (uint16_t port : cfg.victim_mask)
      if (port < victims_.size()) victims_.set(port);
  }

  bool enabled() const { return cfg_.policy != MarkingPolicy::none; }
  bool marks_by_counters() const {
    return cfg_.policy == MarkingPolicy::input_triggered || cfg_.policy == MarkingPolicy::input_output_triggered;
  }
  bool naive() const { return cfg_.policy == MarkingPolicy::naive; }
  bool annex() const { return cfg_.policy == MarkingPolicy::cc_annex; }
  // Whether the switch must tell when an input buffer becomes full (seed 004's policies).
  bool watches_input_buffers() const { return naive() || marks_by_counters(); }

  // A packet starts waiting for `out` (it requested the output).
  void waiting(uint16_t out) {
    ++cnt1_[out];
    // Sec. 5: output-triggered when the packets waiting for an output exceed the threshold.
    if (cfg_.policy == MarkingPolicy::input_output_triggered && cnt1_[out] > cfg_.output_threshold) trigger(out);
  }
  // A packet that waited for `out` was dropped (its lifetime expired): it no longer counts,
  // and no more packets are left to mark than wait.
  void discarded(uint16_t out) {
    if (cnt1_[out] > 0) --cnt1_[out];
    cnt2_[out] = std::min(cnt2_[out], cnt1_[out]);
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

  // cc_annex: the queue for an output VL whose input buffers hold `vl_buffer_blocks` is
  // congested above this many blocks (Threshold 1..15; see the header comment).
  uint32_t threshold_blocks(uint32_t vl_buffer_blocks) const {
    return vl_buffer_blocks * (16u - cfg_.threshold) / 16u;
  }
  // cc_annex: a packet of `packet_blocks` leaves `out`, `waiting_blocks` still wait for its
  // VL; `credit_starved`: the output stood idle for lack of credits since its last packet.
  // True when the packet is to be marked.
  bool annex_transmit(uint16_t out, uint32_t waiting_blocks, uint32_t vl_buffer_blocks, uint32_t packet_blocks,
                      bool credit_starved) {
    if (cfg_.threshold == 0 || waiting_blocks <= threshold_blocks(vl_buffer_blocks)) return false;
    if (packet_blocks < cfg_.packet_size) return false;
    if (credit_starved && !victims_.test(out)) return false;  // a victim, not in Victim_Mask
    if (unmarked_left_[out] > 0) {
      --unmarked_left_[out];
      return false;
    }
    unmarked_left_[out] = cfg_.marking_rate;
    return true;
  }

  uint32_t cnt1(uint16_t out) const { return cnt1_[out]; }
  uint32_t cnt2(uint16_t out) const { return cnt2_[out]; }

 private:
  EcnConfig cfg_;
  std::vector<uint32_t> cnt1_;  // [output] packets waiting for it
  std::vector<uint32_t> cnt2_;  // [output] next transmissions to mark
  std::vector<uint32_t> unmarked_left_;  // [output] cc_annex: eligible packets to pass before the next mark
  std::bitset<256> victims_;             // cc_annex: Victim_Mask (IBA ports 0..254)
};

}  // namespace ibvp::sw
