#pragma once
// Linear forwarding table of one switch: DLID -> output port (IBA 18.2.4.3.1). The subnet
// manager fills it; the switch reads it once per packet.
#include <cstdint>
#include <vector>

namespace ibvp::sw {

struct Lft {
  static constexpr uint8_t kNoRoute = 0xFF;
  std::vector<uint8_t> port;  // indexed by DLID; kNoRoute where the DLID has no entry
  uint8_t lookup(uint16_t dlid) const { return dlid < port.size() ? port[dlid] : kNoRoute; }
};

}  // namespace ibvp::sw
