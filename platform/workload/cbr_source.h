#pragma once
// The packets of the CBR connections of seed 002 (Sec. 4.2) that leave one endpoint on one
// SL: a single ep::TrafficSource for all of them (seed 002 runs about 1750 per host), holding
// the connections in a min-heap by the time their next packet is due. Each packet is created
// at its connection's nominal time start + k x interval (its created_ps), carries the
// connection's payload and DLID and its index in PacketSpec::connection. The endpoint's
// arbiter serves the SL's VL, so these packets queue at the source when the link is busy.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/endpoint/traffic_source.h"
#include "platform/workload/cbr_connection.h"

namespace ibvp::workload {

class CbrSource : public ep::TrafficSource {
 public:
  // `conns` is the run's whole list (it must outlive the source); `mine` the indices of the
  // connections this source sends, all of one endpoint and SL.
  CbrSource(const CbrConnections& conns, const std::vector<uint32_t>& mine, uint8_t sl);

  uint64_t next_ready_ps(uint64_t now_ps) override;
  void take(uint64_t now_ps, ep::PacketSpec& out) override;
  uint32_t next_payload_bytes() const override;

  // Connections still to send a packet.
  size_t active() const { return heap_.size(); }

 private:
  struct Due {
    uint64_t at_ps;   // nominal time of its next packet
    uint32_t conn;    // index in the run's list
    uint32_t count;   // packets it has created so far
  };
  // Min-heap order, ties by connection index: the same run gives the same packets.
  static bool later(const Due& a, const Due& b) { return a.at_ps != b.at_ps ? a.at_ps > b.at_ps : a.conn > b.conn; }

  const CbrConnections& conns_;
  std::vector<Due> heap_;
};

}  // namespace ibvp::workload
