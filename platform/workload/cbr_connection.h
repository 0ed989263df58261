#pragma once
// One admitted CBR connection of seed 002 (Alfaro, Sanchez, Duato, Sec. 4.2): what the
// connection manager (platform/sm/connection_manager) decided when it admitted the request,
// and what the sources that send its packets and the metrics that judge them both read.
// Kept small on purpose: seed 002 runs 112k-119k of them on 64 hosts.
#include <cstdint>
#include <vector>

namespace ibvp::workload {

// Packet::connection / PacketSpec::connection of packets no CBR connection sent.
constexpr uint32_t kNoConnection = ~uint32_t{0};

struct CbrConnection {
  uint32_t src_node = 0;        // topology node indices of the two endpoints
  uint32_t dst_node = 0;
  uint16_t dlid = 0;
  uint8_t sl = 0;
  uint8_t hops = 0;             // output ports on its path: the source CA port + one per switch
  uint32_t distance = 0;        // table distance granted (2..64, seed 002 Sec. 3)
  uint32_t payload_bytes = 0;   // every packet of the connection carries this much
  uint64_t bandwidth_bps = 0;   // requested mean bandwidth (application data, seed 002 Table 1)
  uint64_t reserved_bps = 0;    // reserved on every port of its path: bandwidth x wire/payload
  uint64_t interval_ps = 0;     // nominal inter-arrival time (IAT) of its packets
  uint64_t deadline_ps = 0;     // D: the delay its table entries guarantee (docs/qos.md)
  uint64_t start_ps = 0;        // its first packet is created then
  uint64_t end_ps = ~uint64_t{0};  // it sends no packet from then on and releases its entries
};

using CbrConnections = std::vector<CbrConnection>;

}  // namespace ibvp::workload
