#include "platform/parallel/lookahead.h"

#include <algorithm>
#include <limits>

#include "models/ib/headers.h"
#include "models/link/link_rate.h"
#include "models/switch/lifetime.h"

namespace ibvp::parallel {

uint32_t smallest_credited_packet(const Scenario& s) {
  uint32_t payload = std::numeric_limits<uint32_t>::max();
  for (const FlowConfig& f : s.flows)
    if (!f.vl15) payload = std::min(payload, f.payload_bytes);
  if (s.traffic.enabled) payload = std::min(payload, s.traffic.payload_bytes);
  for (const TracePacket& p : s.trace.packets) payload = std::min(payload, p.payload_bytes);
  if (payload == std::numeric_limits<uint32_t>::max()) return 0;
  // The least a data packet carries besides its payload (IBA 7.7, 9.2): LRH, BTH, ICRC, VCRC.
  return payload + ib::kLrhBytes + ib::kBthBytes + ib::kIcrcBytes + ib::kVcrcBytes;
}

uint64_t lookahead_ps(const Scenario& s, const Partition& part) {
  const topo::Topology& t = s.topology;
  bool vl15 = false;
  for (const FlowConfig& f : s.flows) vl15 |= f.vl15;
  // Lifetimes drop a packet at any moment, freeing its input space (and returning its
  // credit) with no lead beyond the cable (switch_lifetime.cpp).
  const bool lifetimes = s.switch_cfg.hoq_life < sw::kLifetimeInfinite ||
                         s.switch_cfg.switch_life < sw::kLifetimeInfinite ||
                         !s.switch_cfg.lifetime_overrides.empty();
  const uint32_t smallest = smallest_credited_packet(s);
  const uint64_t pipeline = vl15 ? 0 : s.switch_cfg.pipeline_delay.value();
  // A credit's lead at switch n: the serialization of the smallest packet at n's fastest port.
  auto credit_lead = [&](uint32_t n) -> uint64_t {
    if (lifetimes || smallest == 0) return 0;
    uint64_t lead = std::numeric_limits<uint64_t>::max();
    for (uint16_t p = 1; p <= t.nodes[n].num_ports; ++p) {
      const int l = t.link_at(n, p);
      if (l >= 0) lead = std::min(lead, link::LinkRate(t.links[static_cast<size_t>(l)].cfg).serialization_ps(smallest));
    }
    return lead == std::numeric_limits<uint64_t>::max() ? 0 : lead;
  };
  uint64_t out = Partition::kNoCut;
  for (uint32_t i : part.cut_links) {
    const topo::Link& l = t.links[i];
    const uint64_t prop = link::LinkRate(l.cfg).propagation().value();
    // Both ends are switches (endpoints stay with theirs): each receives packets and
    // returns credits.
    for (uint32_t r : {l.a.node, l.b.node}) out = std::min(out, prop + std::min(pipeline, credit_lead(r)));
  }
  return out;
}

}  // namespace ibvp::parallel
