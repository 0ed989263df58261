#pragma once
// Packet lifetimes in a switch and which packets a switch may drop when they expire
// (IBA 18.2.5.4 "Packet Lifetime"; seed 000 Sec. 3.5, "Packet Dropping in a Switch").
//
// Two limits, both 5-bit codes as the subnet manager writes them: the head-of-queue
// lifetime (PortInfo:HOQLife, per output port; here per output VL) bounds how long a packet
// may wait at the head of its output VL, and the switch lifetime (SwitchInfo:LifeTimeValue,
// seed 000's SLL) how long it may stay in the switch at all. A code c in 0..19 means
// 4.096 us x 2^c; 20 and above mean infinite (nothing expires).
#include <array>
#include <cstdint>
#include <string>

#include "models/ib/headers.h"
#include "models/ib/packet.h"

namespace ibvp::sw {

constexpr uint8_t kLifetimeInfinite = 20;  // the first code that means "never expires"
constexpr uint8_t kLifetimeCodeMax = 31;   // 5-bit field
constexpr uint64_t kNoLifetime = ~uint64_t{0};

// 4.096 us x 2^code in ps, or kNoLifetime for codes of 20 and above.
inline uint64_t lifetime_ps(uint8_t code) {
  return code >= kLifetimeInfinite ? kNoLifetime : uint64_t{4'096'000} << code;
}

enum class DropPolicy : uint8_t {
  all,        // any expired packet goes (IBA 18.2.5.4)
  selective,  // seed 000 Sec. 3.5: only eligible ones (drop_eligible)
};
const char* drop_policy_name(DropPolicy p);

// seed 000 Sec. 3.5: "only real-time and best-effort packets can be dropped ... I frame
// packets of MPEG-2 streams are not dropped ... the first and last packets of any MPEG-2 B
// and P frames are not dropped." Control traffic is what travels on VL15 (Sec. 4). A video
// packet whose frame type is not known (a trace given as sizes only) is kept as a P or B
// frame's would be.
inline bool drop_eligible(const ib::Packet& p, DropPolicy policy) {
  if (policy == DropPolicy::all) return true;
  if (p.lrh.vl == ib::kVl15) return false;
  if (p.frame == ib::kNoFrame) return true;  // best effort
  if (p.frame_type == 'I') return false;
  return p.frame_piece != 0 && p.frame_piece + 1 < p.frame_packets;
}

// A scenario's change to the lifetimes of one switch (switch.lifetime_overrides), applied by
// the builder as the subnet manager would program PortInfo and SwitchInfo.
struct LifetimeOverride {
  static constexpr uint8_t kKeep = 0xFF;  // field not given
  std::string switch_name;
  uint16_t port = 0;         // 0: every port of the switch
  uint8_t vl = kKeep;        // kKeep: every VL of the port(s)
  uint8_t hoq_life = kKeep;
  uint8_t switch_life = kKeep;
};

}  // namespace ibvp::sw
