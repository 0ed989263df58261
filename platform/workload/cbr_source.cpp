#include "platform/workload/cbr_source.h"

#include <algorithm>
#include <cassert>

#include "models/ib/packet.h"

namespace ibvp::workload {

CbrSource::CbrSource(const CbrConnections& conns, const std::vector<uint32_t>& mine, uint8_t sl_) : conns_(conns) {
  flow = ib::kNoFlow;  // CBR packets are no scenario flow; the recorder reads Packet::connection
  sl = sl_;
  payload_bytes = mine.empty() ? 0 : conns[mine.front()].payload_bytes;
  heap_.reserve(mine.size());
  for (uint32_t c : mine)
    if (conns[c].start_ps < conns[c].end_ps) heap_.push_back({conns[c].start_ps, c, 0});
  std::make_heap(heap_.begin(), heap_.end(), later);
}

uint64_t CbrSource::next_ready_ps(uint64_t) { return heap_.empty() ? kNever : heap_.front().at_ps; }

uint32_t CbrSource::next_payload_bytes() const {
  return heap_.empty() ? payload_bytes : conns_[heap_.front().conn].payload_bytes;
}

void CbrSource::take(uint64_t now_ps, ep::PacketSpec& out) {
  assert(!heap_.empty() && heap_.front().at_ps <= now_ps);
  (void)now_ps;
  std::pop_heap(heap_.begin(), heap_.end(), later);
  Due& d = heap_.back();
  const CbrConnection& k = conns_[d.conn];
  out.dst_node = k.dst_node;
  out.dlid = k.dlid;
  out.created_ps = d.at_ps;
  out.connection = d.conn;
  out.reserved_bps = k.reserved_bps;  // what the connection manager reserved on its path
  // The next nominal time from the start, not from this one: no rounding drift.
  d.count++;
  d.at_ps = k.start_ps + uint64_t{d.count} * k.interval_ps;
  if (d.at_ps < k.end_ps) std::push_heap(heap_.begin(), heap_.end(), later);
  else heap_.pop_back();
}

}  // namespace ibvp::workload
