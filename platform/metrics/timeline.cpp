#include "platform/metrics/timeline.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "models/hca/firmware_guard.h"

namespace ibvp::metrics {

namespace {

// BTH opcodes (IBA Table 38): the transport in the top three bits, the operation below.
// RC 0x00, UC 0x20, UD 0x60.
constexpr uint8_t kOpMask = 0x1F;
bool is_request(uint8_t op) { return (op & kOpMask) <= 0x0C; }  // SEND, RDMA WRITE, READ request
bool is_first(uint8_t op) {
  const uint8_t o = op & kOpMask;
  return o == 0x00 || o == 0x04 || o == 0x05 || o == 0x06 || o == 0x0A || o == 0x0B || o == 0x0C;
}
bool is_last(uint8_t op) {
  const uint8_t o = op & kOpMask;
  return o == 0x02 || o == 0x03 || o == 0x04 || o == 0x05 || (o >= 0x08 && o <= 0x0C);
}
// Packets that acknowledge requests: ACK, READ RESPONSE Last and Only (RC only).
bool acknowledges(uint8_t op) { return op == 0x11 || op == 0x0F || op == 0x10 || op == 0x12; }  // 0x12: ATOMIC ACKNOWLEDGE
// a <= b in 24-bit PSN space (IBA 9.7.1: half the space is ahead).
bool psn_le(uint32_t a, uint32_t b) { return ((b - a) & 0xFFFFFF) < 0x800000; }

// Chrome's trace format counts in microseconds. One division of the exact picoseconds gives
// the double nearest the exact value, and JSON numbers are written so they read back as that
// double: a reader recovers the picoseconds with a rounding of ts * 1e6.
double us(uint64_t ps) { return static_cast<double>(ps) / 1e6; }

}  // namespace

const char* Timeline::stage_name(Stage s) {
  static const char* const names[kStages] = {"post", "doorbell", "wqe_fetch", "first_out",
                                             "last_out", "ack", "cqe", "poll"};
  return s < kStages ? names[s] : "?";
}

void Timeline::mark(uint32_t node, uint32_t qpn, uint32_t index, Stage s, uint64_t t_ps, bool first_only) {
  uint64_t& t = messages_[Key{node, qpn, index}].t[s];
  if (t == kUnset || !first_only) t = t_ps;
}

void Timeline::on_create_qp(uint32_t node, uint32_t qpn, uint64_t sq_addr, uint32_t sq_entries,
                            uint32_t sq_stride) {
  SendQueue& q = sqs_[{node, qpn}];
  q = SendQueue{};
  q.sq_addr = sq_addr;
  q.entries = sq_entries;
  q.stride = sq_stride;
}

void Timeline::on_create_cq(uint32_t node, uint32_t cqn, uint64_t ring, uint32_t entries) {
  cqs_.push_back({node, cqn, ring, uint64_t{entries} * IBVP_CQE_BYTES});
}

void Timeline::on_post_send(uint32_t node, uint32_t qpn, uint32_t wqe_index, uint64_t wr_id, uint64_t t_ps) {
  Message& m = messages_[Key{node, qpn, wqe_index}];
  m = Message{};  // a QP's WQE indices count on; a reset QP starts again
  m.wr_id = wr_id;
  m.t[post] = t_ps;
}

void Timeline::on_doorbell(uint32_t node, uint32_t qpn, uint32_t kind, uint32_t value, uint64_t t_ps,
                           uint32_t wqe_bytes) {
  if (kind != IBVP_DB_SQ) return;
  const auto it = sqs_.find({node, qpn});
  if (it == sqs_.end()) return;
  SendQueue& q = it->second;
  // The doorbell carries the new producer index: it covers the WQEs posted since the last.
  for (uint32_t i = q.doorbell; i != value; ++i) mark(node, qpn, i, doorbell, t_ps);
  q.doorbell = value;
  // BlueFlame: the WQE came with the doorbell. If the firmware reads it from the ring
  // anyway (it was not the only WQE waiting), the WQE had reached the HCA here already.
  if (wqe_bytes != 0 && value != 0) mark(node, qpn, value - 1, wqe_fetch, t_ps);
}

void Timeline::on_dma_read(uint32_t node, uint64_t address, uint32_t bytes, uint64_t, uint64_t done_ps) {
  for (auto& [key, q] : sqs_) {
    if (key.first != node || q.entries == 0) continue;
    const uint64_t end = q.sq_addr + uint64_t{q.entries} * q.stride;
    if (address < q.sq_addr || address >= end) continue;
    // WQEs are read in ring order, a read being a run of whole slots. The read's first slot
    // names its WQE: the first one from `fetched` on in that slot (a WQE taken from a
    // BlueFlame doorbell is never read, so a read may skip it).
    const uint32_t slot = static_cast<uint32_t>((address - q.sq_addr) / q.stride);
    uint32_t index = q.fetched + (slot + q.entries - q.fetched % q.entries) % q.entries;
    for (uint32_t k = 0; k < bytes / q.stride; ++k) mark(node, key.second, index++, wqe_fetch, done_ps);
    q.fetched = index;
    return;
  }
}

void Timeline::on_dma_write(uint32_t node, uint64_t address, const void* data, uint32_t bytes, uint64_t,
                            uint64_t left_ps) {
  if (bytes != IBVP_CQE_BYTES) return;
  for (const CompletionRing& r : cqs_) {
    if (r.node != node || address < r.ring || address >= r.ring + r.bytes) continue;
    ibvp_cqe e;
    std::memcpy(&e, data, sizeof e);
    if (e.opcode < IBVP_WC_RECV) {
      // A send CQE carries the WQE counter: WQEs consumed up to and including this one.
      mark(node, e.qp_num, e.src_qp - 1, cqe, left_ps);
    } else {
      instants_.push_back({node, e.qp_num, "recv_cqe", left_ps, e.wr_id});
    }
    return;
  }
}

void Timeline::on_packet_out(uint32_t node, uint32_t qpn, const ib::Packet& p, uint64_t start_ps, uint64_t end_ps) {
  const uint8_t op = static_cast<uint8_t>(p.bth.opcode);
  if (!is_request(op)) return;  // ACKs and READ responses belong to the responder
  const auto it = sqs_.find({node, qpn});
  if (it == sqs_.end()) return;
  SendQueue& q = it->second;
  const uint32_t psn = p.bth.psn;
  if (is_first(op)) {
    const auto f = q.first_psn.find(psn);
    if (f != q.first_psn.end()) {
      q.current = f->second;  // a retransmission
    } else {
      q.current = q.started++;
      q.first_psn[psn] = q.current;
      mark(node, qpn, q.current, first_out, start_ps);
    }
  }
  if (is_last(op)) {
    mark(node, qpn, q.current, last_out, end_ps, false);
    if ((op >> 5) == 0) q.unacked.emplace_back(psn, q.current);  // RC
  }
}

void Timeline::on_packet_in(uint32_t node, const ibvp_rx_packet& p, uint64_t t_ps) {
  if (!acknowledges(p.opcode) || (p.aeth_syndrome >> 5) != 0) return;  // NAKs acknowledge nothing new here
  const auto it = sqs_.find({node, p.dest_qp});
  if (it == sqs_.end()) return;
  auto& un = it->second.unacked;
  // An ACK covers every request up to its PSN (coalesced ACKs too).
  const auto done = std::stable_partition(un.begin(), un.end(),
                                          [&](const std::pair<uint32_t, uint32_t>& u) { return !psn_le(u.first, p.psn); });
  for (auto d = done; d != un.end(); ++d) mark(node, p.dest_qp, d->second, ack, t_ps);
  un.erase(done, un.end());
}

void Timeline::on_poll_return(uint32_t node, uint32_t qpn, bool send, uint32_t wqe_index, uint64_t wr_id,
                              uint64_t t_ps) {
  if (send) mark(node, qpn, wqe_index, poll, t_ps);
  else instants_.push_back({node, qpn, "recv_poll", t_ps, wr_id});
}

void Timeline::on_firmware_event(uint32_t node, uint32_t kind, uint64_t start_ps, uint64_t end_ps, uint64_t cycles) {
  fw_events_.push_back({node, kind, start_ps, end_ps, cycles});
}

void Timeline::write(std::ostream& out) const {
  using Json = nlohmann::ordered_json;
  // One event per line, each written by the JSON library as it comes: a long run has
  // millions of events, and one document holding them all would cost far more memory than
  // the timeline itself.
  out << "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  bool first = true;
  auto line = [&](const Json& e) {
    out << (first ? "" : ",\n") << e.dump(-1, ' ', false, Json::error_handler_t::replace);
    first = false;
  };
  // Tracks of each host, numbered in a fixed order: the firmware core, then per QP its slots
  // and its receive track.
  constexpr uint32_t kFirmwareTid = 1;
  constexpr uint32_t kReceiveSlot = ~uint32_t{0};
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> tids;  // (node, qpn, slot) -> tid
  std::map<Key, uint32_t> slot_of;                                     // message -> slot
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint64_t>> slot_end;  // (node, qpn) -> end of each slot
  for (const auto& [key, m] : messages_) {
    const auto [node, qpn, index] = key;
    uint64_t first = kUnset, last = 0;
    for (uint64_t t : m.t)
      if (t != kUnset) {
        first = std::min(first, t);
        last = std::max(last, t);
      }
    if (first == kUnset) continue;
    // Messages in WQE order; the lowest slot whose last message ended by this one's start.
    std::vector<uint64_t>& ends = slot_end[{node, qpn}];
    uint32_t slot = 0;
    while (slot < ends.size() && ends[slot] > first) ++slot;
    if (slot == ends.size()) ends.push_back(0);
    ends[slot] = last;
    slot_of[key] = slot;
    tids[{node, qpn, slot}] = 0;
  }
  for (const Instant& i : instants_) tids[{i.node, i.qpn, kReceiveSlot}] = 0;
  std::vector<uint32_t> pids;
  for (const auto& [t, tid] : tids) pids.push_back(std::get<0>(t));
  for (const FirmwareEvent& e : fw_events_) pids.push_back(e.node);
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  for (uint32_t pid : pids) {
    line(Json{{"name", "process_name"},
              {"ph", "M"},
              {"pid", pid},
              {"args", Json{{"name", pid < names_.size() ? names_[pid] : std::to_string(pid)}}}});
    line(Json{{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", kFirmwareTid},
              {"args", Json{{"name", "firmware core"}}}});
    line(Json{{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", kFirmwareTid},
              {"args", Json{{"sort_index", kFirmwareTid}}}});
  }
  uint32_t prev_node = ~uint32_t{0}, next_tid = 0;
  for (auto& [t, tid] : tids) {
    const auto [node, qpn, slot] = t;
    if (node != prev_node) next_tid = kFirmwareTid + 1;
    prev_node = node;
    tid = next_tid++;
    const std::string name = "QP " + std::to_string(qpn) +
                             (slot == kReceiveSlot ? std::string(" receive") : " slot " + std::to_string(slot));
    line(Json{{"name", "thread_name"}, {"ph", "M"}, {"pid", node}, {"tid", tid}, {"args", Json{{"name", name}}}});
    line(Json{{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", node}, {"tid", tid},
              {"args", Json{{"sort_index", tid}}}});
  }
  for (const FirmwareEvent& e : fw_events_)
    line(Json{{"name", hca::firmware_event_name(e.kind)}, {"cat", "firmware"}, {"ph", "X"}, {"ts", us(e.start_ps)},
              {"dur", us(e.end_ps - e.start_ps)}, {"pid", e.node}, {"tid", kFirmwareTid},
              {"args", Json{{"cycles", e.cycles}}}});
  for (const auto& [key, m] : messages_) {
    const auto [node, qpn, index] = key;
    const auto slot = slot_of.find(key);
    if (slot == slot_of.end()) continue;
    const uint32_t tid = tids.at({node, qpn, slot->second});
    const Json args{{"qpn", qpn}, {"wqe", index}, {"wr_id", m.wr_id}};
    uint64_t prev = kUnset;
    for (uint8_t s = 0; s < kStages; ++s) {
      const uint64_t t = m.t[s];
      if (t == kUnset) continue;
      const char* name = stage_name(static_cast<Stage>(s));
      line(Json{{"name", name}, {"ph", "i"}, {"s", "t"}, {"ts", us(t)}, {"pid", node}, {"tid", tid}, {"args", args}});
      if (prev != kUnset && t >= prev)
        line(Json{{"name", name}, {"cat", "message"}, {"ph", "X"}, {"ts", us(prev)}, {"dur", us(t - prev)},
                  {"pid", node}, {"tid", tid}, {"args", args}});
      if (prev == kUnset || t >= prev) prev = t;
    }
  }
  for (const Instant& i : instants_)
    line(Json{{"name", i.name}, {"ph", "i"}, {"s", "t"}, {"ts", us(i.t_ps)}, {"pid", i.node},
              {"tid", tids.at({i.node, i.qpn, kReceiveSlot})}, {"args", Json{{"qpn", i.qpn}, {"wr_id", i.wr_id}}}});
  out << "\n]}\n";
}

}  // namespace ibvp::metrics
