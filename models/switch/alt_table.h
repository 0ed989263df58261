#pragma once
// A switch's alternative output ports per DLID (seed 000 Sec. 3.3: a multipath forwarding
// table holds 2 or 4 entries per destination). The subnet manager fills it beside the LFT;
// the first alternative of a DLID is its LFT entry. path_select.h chooses among them.
#include <array>
#include <cstdint>
#include <vector>

namespace ibvp::sw {

// The alternatives per DLID of one switch, loaded by the subnet manager beside the LFT.
struct AltTable {
  static constexpr uint8_t kMaxAlternatives = 4;
  struct Entry {
    std::array<uint8_t, kMaxAlternatives> port{};
    uint8_t count = 0;  // 0: no alternatives here, the LFT alone decides
  };
  std::vector<Entry> entry;  // indexed by DLID
  const Entry* lookup(uint16_t dlid) const {
    return dlid < entry.size() && entry[dlid].count > 1 ? &entry[dlid] : nullptr;
  }
};

}  // namespace ibvp::sw
