#pragma once
// Adaptive choice among a destination's alternative outputs (seed 000 Sec. 3.4, after
// Vaidya et al. [8]): the multipath forwarding table of seed 000 Sec. 3.3 gives a switch 2 or
// 4 entries per destination (Sec. 5.1: "either 30 (= 15 x 2^1) or 60 (= 15 x 2^2)"), and an
// unreliable datagram picks one of them at each switch:
//  - first: the first alternative, the deterministic (shortest) path; what IBA's LFT does;
//  - lfu: the least frequently used output, counting every packet routed to that output
//    since the start of the run, whatever its VL or class (Sec. 5.1 explains LFU's gain by
//    it steering away from outputs that real-time and control packets use, which only a
//    count seeing those packets can do; the paper names no decay, so none);
//  - max_credit: the output with the most credits for the packet's VL on the next hop, less
//    the blocks of requests already waiting there for that VL (what the output will hold
//    once those have gone; without it, packets routed at the same instant all pick the same
//    output, as credits change only when one is sent).
// Ties go to the lowest port. Real-time packets (those of a video frame), VL15 packets and
// every transport other than UD take the first alternative (seed 000 Sec. 5.1: "for
// real-time traffic, we select the shortest path"; connections keep one path, Sec. 3.4).
// A packet whose source chose its path (reliable datagrams, Sec. 3.4: the verbs layer picks
// one of the paths at random) carries random path bits; each switch reads its own choice
// from them, so the source fixes the whole path and the switch policy does not apply.
//
// Where this departs from IBA (7.11.1, 18.2.4.3.1): an LFT entry names one output port per
// LID, and alternatives are other LIDs (LMC path bits, at most 7 of them). Here a switch keeps
// beside its LFT a table of up to 4 output ports per DLID, the first equal to the LFT entry.
#include <array>
#include <cstdint>
#include <vector>

#include "models/ib/packet.h"
#include "models/switch/alt_table.h"

namespace ibvp::sw {

enum class PathSelection : uint8_t { first, lfu, max_credit };
inline const char* path_selection_name(PathSelection s) {
  return s == PathSelection::lfu ? "lfu" : s == PathSelection::max_credit ? "max_credit" : "first";
}

// Whether a packet may leave by another alternative than the first (header comment).
inline bool adaptive_eligible(const ib::Packet& p) {
  const bool ud = p.bth.opcode == ib::Opcode::ud_send_only || p.bth.opcode == ib::Opcode::ud_send_only_imm;
  return ud && p.lrh.vl != ib::kVl15 && p.frame == ib::kNoFrame;
}

// The alternative a source-chosen path takes at switch `node`: a few bits of the packet's
// path bits, mixed with the switch's index so that switches along one path read different
// bits (as each switch of seed 000 Sec. 3.3 reads the path bits of its own cycles).
inline uint8_t source_choice(uint32_t path_bits, uint32_t node, uint8_t count) {
  uint64_t z = (uint64_t{path_bits} << 32) ^ (uint64_t{node} * 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;  // splitmix64's finalizer
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<uint8_t>(z % count);
}

// One switch's selector: its LFU counts and the per-alternative use that results report.
class PathSelector {
 public:
  void configure(PathSelection policy, size_t ports, const AltTable& table) {
    policy_ = policy;
    routed_.assign(ports, 0);
    use_.assign(table.entry.size(), {});
  }
  PathSelection policy() const { return policy_; }

  // The index of the alternative `p` takes among `e`. `credits(port)`: max_credit's measure of
  // an output for this packet (signed: queued requests may exceed the credits held).
  template <class Credits>
  uint8_t choose(const AltTable::Entry& e, const ib::Packet& p, uint32_t node, Credits&& credits) const {
    if (!adaptive_eligible(p)) return 0;
    if (p.source_path) return source_choice(p.path_bits, node, e.count);
    if (policy_ == PathSelection::first) return 0;
    uint8_t best = 0;
    for (uint8_t i = 1; i < e.count; ++i) {
      const uint8_t a = e.port[i], b = e.port[best];
      bool better;
      if (policy_ == PathSelection::lfu) {
        better = routed_[a] < routed_[b] || (routed_[a] == routed_[b] && a < b);
      } else {
        const int64_t ca = credits(a), cb = credits(b);
        better = ca > cb || (ca == cb && a < b);
      }
      if (better) best = i;
    }
    return best;
  }
  // Every packet routed to `port` (LFU's count); `dlid`, `alternative` when it had a choice.
  void count(uint16_t port) { routed_[port]++; }
  void count_use(uint16_t dlid, uint8_t alternative) { use_[dlid][alternative]++; }
  // Packets that left by each alternative of `dlid` (only DLIDs with alternatives count).
  const std::array<uint64_t, AltTable::kMaxAlternatives>& use(uint16_t dlid) const { return use_.at(dlid); }
  size_t dlids() const { return use_.size(); }

 private:
  PathSelection policy_ = PathSelection::first;
  std::vector<uint64_t> routed_;  // [port]
  std::vector<std::array<uint64_t, AltTable::kMaxAlternatives>> use_;  // [dlid][alternative]
};

}  // namespace ibvp::sw
