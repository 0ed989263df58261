#include "platform/workload/trace_source.h"

#include <cassert>

namespace ibvp::workload {

TraceSource::TraceSource(uint32_t flow_index, uint8_t sl_, std::vector<Item> items) : items_(std::move(items)) {
  flow = flow_index;
  sl = sl_;
  payload_bytes = items_.empty() ? 0 : items_.front().payload_bytes;
}

uint64_t TraceSource::next_ready_ps(uint64_t) { return next_ < items_.size() ? items_[next_].time_ps : kNever; }

uint32_t TraceSource::next_payload_bytes() const {
  return next_ < items_.size() ? items_[next_].payload_bytes : payload_bytes;
}

void TraceSource::take(uint64_t now_ps, ep::PacketSpec& out) {
  assert(next_ < items_.size() && items_[next_].time_ps <= now_ps);
  (void)now_ps;
  const Item& it = items_[next_++];
  out.dst_node = it.dst_node;
  out.dlid = it.dlid;
  out.dest_qp = 0x100 + flow;
  out.created_ps = it.time_ps;
}

}  // namespace ibvp::workload
