#pragma once
// Packets of a trace: one source per (endpoint, SL), handing out the trace's packets of that
// pair at their listed times, each with its own destination and size.
#include <vector>

#include "models/endpoint/traffic_source.h"
#include "platform/scenario/scenario.h"

namespace ibvp::workload {

class TraceSource : public ep::TrafficSource {
 public:
  struct Item {
    uint64_t time_ps;
    uint32_t dst_node;
    uint16_t dlid;
    uint32_t payload_bytes;
  };
  TraceSource(uint32_t flow_index, uint8_t sl, std::vector<Item> items);

  uint64_t next_ready_ps(uint64_t now_ps) override;
  void take(uint64_t now_ps, ep::PacketSpec& out) override;
  uint32_t next_payload_bytes() const override;

 private:
  std::vector<Item> items_;
  size_t next_ = 0;
};

}  // namespace ibvp::workload
