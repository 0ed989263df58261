#include "models/link/vl_arbiter.h"

#include <cassert>
#include <limits>

#include "models/ib/packet.h"

namespace ibvp::link {

VlArbConfig VlArbConfig::round_robin(uint8_t data_vls) {
  VlArbConfig c;
  for (uint8_t vl = 0; vl < data_vls; ++vl) c.low.push_back({vl, 255});
  c.high_limit = 0;
  return c;
}

VlArbiter::VlArbiter(const VlArbConfig& cfg)
    : cfg_(cfg),
      high_limit_bytes_(cfg.high_limit == 255 ? std::numeric_limits<uint64_t>::max()
                                              : uint64_t{cfg.high_limit} * 4096u) {
  assert(cfg.high.size() <= 64 && cfg.low.size() <= 64);
  high_.entries = cfg.high;
  low_.entries = cfg.low;
  if (!high_.entries.empty()) high_.remaining = high_.entries[0].weight;
  if (!low_.entries.empty()) low_.remaining = low_.entries[0].weight;
}

bool VlArbiter::has_ready(const Table& t, uint16_t ready) {
  for (const VlArbEntry& e : t.entries)
    if (e.weight > 0 && (ready & (1u << e.vl))) return true;
  return false;
}

int VlArbiter::pick(Table& t, uint16_t ready) {
  const size_t n = t.entries.size();
  // The current entry keeps its turn while it has weight left and its VL has a packet;
  // otherwise the arbiter walks the table once, reloading each entry's weight.
  for (size_t step = 0; step <= n && n > 0; ++step) {
    const VlArbEntry& e = t.entries[t.current];
    if (t.remaining > 0 && (ready & (1u << e.vl))) return static_cast<int>(t.current);
    t.current = (t.current + 1) % n;
    t.remaining = t.entries[t.current].weight;
  }
  return -1;
}

void VlArbiter::charge(Table& t, uint32_t bytes) {
  // Weight is in 64-byte units; a packet is sent whole even when it exceeds what is left,
  // and the entry then yields its turn (IBA 7.6.9.2).
  t.remaining -= static_cast<int32_t>(ib::blocks_for(bytes));
  if (t.remaining <= 0) {
    t.current = (t.current + 1) % t.entries.size();
    t.remaining = t.entries[t.current].weight;
  }
}

}  // namespace ibvp::link
