#include "platform/scenario/deadlock_timeout.h"

#include <algorithm>

#include "models/ib/packet.h"
#include "models/link/link_rate.h"

namespace ibvp {

uint32_t largest_workload_packet_bytes(const Scenario& s) {
  uint32_t payload = 0;
  // HCA hosts split a message into packets of at most hca.flow_mtu bytes.
  const uint32_t most = s.endpoint_model == EndpointModel::hca ? s.hca_host.flow_mtu : ~uint32_t{0};
  for (const FlowConfig& f : s.flows) payload = std::max(payload, std::min(f.payload_bytes, most));
  if (s.traffic.enabled) payload = std::max(payload, s.traffic.payload_bytes);
  for (const TracePacket& p : s.trace.packets) payload = std::max(payload, p.payload_bytes);
  if (s.connections.enabled) payload = std::max(payload, s.connections.payload_bytes);
  ib::Packet shape;
  shape.bth.opcode = ib::Opcode::ud_send_only;
  shape.payload_bytes = payload;
  uint32_t bytes = shape.wire_bytes();
  // A perftest's largest packet: an MTU of payload with LRH 8, BTH 12, RETH 16, ICRC 4, VCRC 2.
  if (s.perftest.enabled) bytes = std::max<uint32_t>(bytes, s.perftest.mtu + 8 + 12 + 16 + 4 + 2);
  return bytes;
}

uint64_t deadlock_timeout_floor_ps(const Scenario& s) {
  const uint32_t bytes = largest_workload_packet_bytes(s);
  uint64_t slowest = 0;
  for (const topo::Link& l : s.topology.links) slowest = std::max(slowest, link::LinkRate(l.cfg).serialization_ps(bytes));
  return 2 * slowest;
}

}  // namespace ibvp
