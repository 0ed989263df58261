#pragma once
// Multicast forwarding table of one switch: MLID -> set of output ports (IBA 18.2.4.3.2,
// attribute MulticastForwardingTable, IBA 14.2.5.12). The subnet manager fills it; the switch
// reads it once per multicast packet and sends a copy out of every port in the mask except the
// one the packet arrived on (IBA 18.2.4.3.2), so one table entry serves every sender of a tree.
#include <bitset>
#include <cstdint>
#include <vector>

namespace ibvp::sw {

struct Mft {
  // Multicast LIDs are 0xC000..0xFFFE; 0xFFFF is the permissive LID (IBA 4.1.3).
  static constexpr uint16_t kMlidBase = 0xC000;
  static constexpr uint16_t kMlidTop = 0xFFFE;
  // One bit per port 0..254 (port 0 is the switch's management port, IBA 18.2.4.3.2).
  static constexpr uint16_t kPortMaskBits = 255;
  // The attribute carries the mask in 16-bit PortMask words, one per position
  // (ports 16 * position .. 16 * position + 15) and 32 MLIDs per block (IBA 14.2.5.12).
  static constexpr uint16_t kPortsPerPosition = 16;
  static constexpr uint16_t kMlidsPerBlock = 32;
  using PortMask = std::bitset<kPortMaskBits>;

  // Indexed by MLID - kMlidBase up to MulticastFDBTop - kMlidBase; MLIDs past the end have no
  // entry, and an empty mask drops the packet, as an invalid entry does in IBA 18.2.4.3.2.
  std::vector<PortMask> port_mask;

  static constexpr bool is_mlid(uint16_t lid) { return lid >= kMlidBase && lid <= kMlidTop; }

  PortMask lookup(uint16_t mlid) const {
    if (!is_mlid(mlid)) return {};
    const size_t i = static_cast<size_t>(mlid - kMlidBase);
    return i < port_mask.size() ? port_mask[i] : PortMask{};
  }

  // Mask for `mlid`, growing the table (the SM's side; the switch only reads).
  PortMask& entry(uint16_t mlid) {
    const size_t i = static_cast<size_t>(mlid - kMlidBase);
    if (port_mask.size() <= i) port_mask.resize(i + 1);
    return port_mask[i];
  }

  // The highest MLID with an entry (SwitchInfo:MulticastFDBTop); 0xBFFF when there is none.
  uint16_t multicast_fdb_top() const {
    return static_cast<uint16_t>(kMlidBase - 1 + port_mask.size());
  }

  // The 16-bit PortMask word of `mlid` at `position` as the MulticastForwardingTable attribute
  // carries it: bit i is port 16 * position + i.
  uint16_t port_mask_word(uint16_t mlid, uint8_t position) const {
    const PortMask m = lookup(mlid);
    uint16_t word = 0;
    for (uint16_t i = 0; i < kPortsPerPosition; ++i) {
      const size_t port = static_cast<size_t>(position) * kPortsPerPosition + i;
      if (port < kPortMaskBits && m.test(port)) word = static_cast<uint16_t>(word | (1u << i));
    }
    return word;
  }
};

}  // namespace ibvp::sw
