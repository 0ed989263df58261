#pragma once
// Output-port VL arbitration exactly as IBA 7.6.9 defines it: a high- and a low-priority
// table of up to 64 (VL, weight) entries, weights in 64-byte units; LimitOfHighPriority
// bounds how much the high table may send while the low table has packets waiting; VL15
// (subnet management) goes before every data VL. A packet is always sent whole.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/ib/headers.h"

namespace ibvp::link {

struct VlArbEntry {
  uint8_t vl = 0;
  uint8_t weight = 0;  // 64-byte units, 0..255; 0 disables the entry
};

struct VlArbConfig {
  std::vector<VlArbEntry> high;  // at most 64 entries each
  std::vector<VlArbEntry> low;
  // LimitOfHighPriority in 4096-byte units: 0 allows one packet, 255 is unbounded.
  uint8_t high_limit = 0;
  // One low-priority entry per data VL, weight 255 each: round robin over data VLs.
  static VlArbConfig round_robin(uint8_t data_vls);
};

using ib::kMaxVls;
using ib::kVl15;

class VlArbiter {
 public:
  explicit VlArbiter(const VlArbConfig& cfg);

  // Chooses the VL to send next among those whose bit is set in `ready` (a VL is ready when
  // it has a packet that can go whole: crossbar free and downstream credits). `bytes_of`
  // gives the size of the packet that VL would send. Returns -1 if nothing can be sent.
  // Commits the choice: weights and the high-priority counter are charged.
  template <class BytesOf>
  int choose(uint16_t ready, BytesOf&& bytes_of);

  const VlArbConfig& config() const { return cfg_; }

 private:
  struct Table {
    std::vector<VlArbEntry> entries;
    size_t current = 0;
    int32_t remaining = 0;  // 64-byte units left for the current entry
  };
  // Index of the entry in `t` that would send next, or -1. Entries whose VL is not ready or
  // whose weight is 0 are skipped (IBA: the arbiter moves on, the skipped entry's weight is
  // not kept).
  static int pick(Table& t, uint16_t ready);
  static void charge(Table& t, uint32_t bytes);
  static bool has_ready(const Table& t, uint16_t ready);

  VlArbConfig cfg_;
  Table high_, low_;
  uint64_t high_sent_bytes_ = 0;  // since the last low-priority packet
  uint64_t high_limit_bytes_;     // UINT64_MAX when unbounded
};

template <class BytesOf>
int VlArbiter::choose(uint16_t ready, BytesOf&& bytes_of) {
  if (ready & (1u << kVl15)) return kVl15;  // VL15 is above all data VLs (IBA 7.6.9)
  const bool low_waiting = has_ready(low_, ready);
  // The limit counts high-priority bytes sent while low-priority packets wait; with none
  // waiting, low has had its opportunity. The packet that crosses the limit goes whole, so
  // LimitOfHighPriority 0 still lets one packet through.
  if (!low_waiting) high_sent_bytes_ = 0;
  const bool high_allowed = high_sent_bytes_ == 0 || high_sent_bytes_ < high_limit_bytes_;
  if (high_allowed) {
    const int e = pick(high_, ready);
    if (e >= 0) {
      const uint8_t vl = high_.entries[e].vl;
      const uint32_t bytes = bytes_of(vl);
      charge(high_, bytes);
      high_sent_bytes_ += bytes;
      return vl;
    }
  }
  const int e = pick(low_, ready);
  if (e >= 0) {
    const uint8_t vl = low_.entries[e].vl;
    charge(low_, bytes_of(vl));
    high_sent_bytes_ = 0;
    return vl;
  }
  // Low table had nothing sendable after all (its ready VLs have weight 0): high may go.
  if (!high_allowed) {
    const int h = pick(high_, ready);
    if (h >= 0) {
      const uint8_t vl = high_.entries[h].vl;
      const uint32_t bytes = bytes_of(vl);
      charge(high_, bytes);
      high_sent_bytes_ += bytes;
      return vl;
    }
  }
  return -1;
}

}  // namespace ibvp::link
