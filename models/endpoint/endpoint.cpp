#include "models/endpoint/endpoint.h"

#include <algorithm>
#include <cassert>

namespace ibvp::ep {

Endpoint::Endpoint(sc_core::sc_module_name name, uint32_t node, uint16_t lid, const EndpointConfig& cfg,
                   const link::LinkRate& rate, ib::PacketPool& packets, link::PayloadPool& payloads,
                   sim::Probe& probe)
    : sc_module(name),
      tx("tx"),
      rx("rx"),
      node_(node),
      lid_(lid),
      cfg_(cfg),
      rate_(rate),
      packets_(packets),
      payloads_(payloads),
      probe_(probe),
      agenda_("agenda", [this](const sim::Action& a) { dispatch(a); }),
      arbiter_(cfg.vlarb) {
  tx.register_nb_transport_bw(this, &Endpoint::on_tx_bw);
  rx.register_nb_transport_fw(this, &Endpoint::on_rx);
  for (uint8_t vl = 0; vl < cfg_.data_vls; ++vl) buffers_.set_capacity(vl, cfg_.vl_buffer_bytes);
  buffers_.set_capacity(ib::kVl15, cfg_.vl15_buffer_bytes);
}

void Endpoint::add_source(TrafficSource* s) {
  SourceState st;
  st.source = s;
  st.sl = s->next_sl();
  st.vl = vl_of(*s, st.sl);
  assert((st.vl == ib::kVl15 || st.vl < cfg_.data_vls) && "SL2VL maps a source to a VL the port does not operate");
  ib::Packet empty;
  empty.bth.opcode = s->opcode;
  empty.payload_bytes = 0;
  st.header_bytes = empty.wire_bytes();
  by_vl_[st.vl].push_back(static_cast<uint32_t>(sources_.size()));
  sources_.push_back(st);
  schedule_wake(0);
}

tlm::tlm_sync_enum Endpoint::on_rx(tlm::tlm_generic_payload& gp, tlm::tlm_phase&, sc_core::sc_time& delay) {
  link::FabricExt& e = link::PayloadPool::ext(gp);
  assert(e.kind == link::FabricExt::Kind::packet);
  receive(0, e.packet, delay.value(), e.duration.value());
  return tlm::TLM_COMPLETED;
}

void Endpoint::receive(uint16_t, ib::Packet* p, uint64_t delay_ps, uint64_t duration_ps) {
  const uint64_t head_ps = agenda_.now_ps() + delay_ps;
  p->hop_tail_ps = head_ps + duration_ps;
  if (p->lrh.vl == ib::kVl15 || sim::Scheduler::canonical()) {
    // Uncredited: whether it fits is decided when its head arrives. In canonical event order
    // every packet is: the sender's event touches none of this endpoint's state, and the
    // delivery is one action of this endpoint, keyed by the sender (timed_queue.h).
    agenda_.push_at(head_ps, kHead, 0, 0, p);
  } else {
    // As in the switch: a data packet is admitted as it is sent (the sender held credits,
    // so its space is free), and the endpoint wakes only when its tail is in.
    head_arrived(p);
  }
}

void Endpoint::head_arrived(ib::Packet* p) {
  const uint8_t vl = p->lrh.vl;
  const uint32_t blocks = ib::blocks_for(p->size);
  counters_.packets_rx++;
  counters_.bytes_rx += p->size;
  if (vl == ib::kVl15 && !buffers_.fits(vl, blocks)) {
    // IBA 7.9.4: VL15 is not flow controlled; a packet that does not fit is dropped.
    counters_.vl15_dropped++;
    p->drop = ib::DropReason::vl15_overflow;
    probe_.drop(*p, node_, agenda_.now_ps());
    packets_.release(p);
    return;
  }
  buffers_.admit(vl, blocks, counters_);
  agenda_.push_at(p->hop_tail_ps, kDeliver, 0, 0, p);
}

tlm::tlm_sync_enum Endpoint::on_tx_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase&, sc_core::sc_time& delay) {
  const link::FabricExt& e = link::PayloadPool::ext(gp);
  assert(e.kind == link::FabricExt::Kind::credit);
  credit_in(0, e.vl, e.blocks, delay.value());
  return tlm::TLM_COMPLETED;
}

void Endpoint::credit_in(uint16_t, uint8_t vl, uint32_t blocks, uint64_t delay_ps) {
  const uint64_t at = agenda_.now_ps() + delay_ps;
  if (sim::Scheduler::canonical())
    agenda_.push_at(at, kCredit, 0, (blocks << 4) | vl);
  else
    credit_arrived(vl, blocks, at);
}

void Endpoint::credit_arrived(uint8_t vl, uint32_t blocks, uint64_t at_ps) {
  credits_.arrive(vl, blocks, at_ps);
  // Only a port waiting for credits needs to look again when these land.
  if (credit_blocked_) schedule_wake(at_ps);
}

void Endpoint::dispatch(const sim::Action& a) {
  switch (a.kind) {
    case kWake:
      if (a.when_ps == wake_ps_) wake_ps_ = ~uint64_t{0};
      try_send();
      break;
    case kHead: head_arrived(static_cast<ib::Packet*>(a.ptr)); break;
    case kDeliver: deliver(static_cast<ib::Packet*>(a.ptr)); break;
    case kCredit: credit_arrived(static_cast<uint8_t>(a.arg & 0xF), a.arg >> 4, a.when_ps); break;
    default: assert(false && "unknown endpoint action");
  }
}

uint8_t Endpoint::vl_of(const TrafficSource& s, uint8_t sl) const {
  const uint8_t vl = s.vl15 ? ib::kVl15 : cfg_.sl2vl[sl & 0xF];
  assert((vl == ib::kVl15 || vl < cfg_.data_vls) && "SL2VL maps a source to a VL the port does not operate");
  return vl;
}

// A source whose next packet goes on another SL (per-destination SLs) moves to that VL's
// list, at its end: it has just been served.
void Endpoint::requeue(size_t source_index) {
  SourceState& s = sources_[source_index];
  const uint8_t sl = s.source->next_sl();
  if (sl == s.sl) return;
  const uint8_t vl = vl_of(*s.source, sl);
  s.sl = sl;
  if (vl == s.vl) return;
  std::vector<uint32_t>& from = by_vl_[s.vl];
  const auto at = std::find(from.begin(), from.end(), static_cast<uint32_t>(source_index));
  assert(at != from.end());
  const size_t pos = static_cast<size_t>(at - from.begin());
  from.erase(at);
  // Keep the round robin pointing at the source that was next in line.
  if (!from.empty() && rr_[s.vl] > pos) --rr_[s.vl];
  if (!from.empty()) rr_[s.vl] %= static_cast<uint32_t>(from.size());
  else rr_[s.vl] = 0;
  by_vl_[vl].push_back(static_cast<uint32_t>(source_index));
  s.vl = vl;
}

void Endpoint::schedule_wake(uint64_t when_ps) {
  if (when_ps >= wake_ps_) return;
  wake_ps_ = when_ps;
  agenda_.push_at(when_ps, kWake);
}

int Endpoint::ready_source(uint8_t vl, uint64_t now, uint64_t& earliest) const {
  const std::vector<uint32_t>& list = by_vl_[vl];
  const size_t n = list.size();
  for (size_t k = 0; k < n; ++k) {
    const size_t pos = (rr_[vl] + k) % n;
    const SourceState& s = sources_[list[pos]];
    const uint64_t ready = std::max(s.source->next_ready_ps(now), s.next_allowed_ps);
    if (ready <= now) return static_cast<int>(pos);
    earliest = std::min(earliest, ready);
  }
  return -1;
}

void Endpoint::try_send() {
  const uint64_t now = agenda_.now_ps();
  if (busy_until_ > now) {
    schedule_wake(busy_until_);
    return;
  }
  credits_.absorb(now);
  uint64_t earliest = TrafficSource::kNever;
  std::array<int, ib::kMaxVls> pick;
  std::array<uint32_t, ib::kMaxVls> payload, bytes;
  uint16_t ready = 0;
  bool any_blocked = false;
  for (uint8_t vl = 0; vl < ib::kMaxVls; ++vl) {
    if (by_vl_[vl].empty()) continue;
    pick[vl] = ready_source(vl, now, earliest);
    if (pick[vl] < 0) continue;
    const SourceState& s = sources_[by_vl_[vl][static_cast<size_t>(pick[vl])]];
    payload[vl] = s.source->next_payload_bytes();
    bytes[vl] = wire_bytes(s, payload[vl]);
    const bool blocked = !credits_.can_send(vl, ib::blocks_for(bytes[vl]));
    credit_wait_.sample(vl, blocked, now, counters_);
    any_blocked |= blocked;
    if (!blocked) ready |= static_cast<uint16_t>(1u << vl);
  }
  credit_wait_.sample_port(ready == 0 && any_blocked, now, counters_);
  credit_blocked_ = ready == 0 && any_blocked;
  if (ready == 0) {
    // Nothing can go now: wake when a source or a paced flow becomes ready, or when credits
    // already on their way land.
    if (any_blocked) earliest = std::min(earliest, credits_.next_arrival_ps());
    if (earliest != TrafficSource::kNever) schedule_wake(earliest);
    return;
  }
  const int vl = arbiter_.choose(ready, [&](uint8_t v) { return bytes[v]; });
  assert(vl >= 0);
  const size_t pos = static_cast<size_t>(pick[vl]);
  rr_[vl] = static_cast<uint32_t>((pos + 1) % by_vl_[vl].size());
  send(by_vl_[vl][pos], payload[vl]);
}

void Endpoint::send(size_t source_index, uint32_t payload_bytes) {
  SourceState& s = sources_[source_index];
  TrafficSource& src = *s.source;
  const uint64_t now = agenda_.now_ps();
  PacketSpec spec;
  src.take(now, spec);
  const uint8_t vl = s.vl;

  ib::Packet* p = packets_.acquire();
  // The pool numbers packets in this process's creation order, which a split run cannot
  // reproduce; the canonical order numbers them by their source (packet.h).
  if (sim::Scheduler::canonical()) p->id = ib::canonical_packet_id(node_, created_);
  ++created_;
  p->lrh.vl = vl;
  p->lrh.sl = s.sl;
  p->lrh.lnh = ib::Lnh::iba_local;
  p->lrh.dlid = spec.dlid;
  p->lrh.slid = lid_;
  p->bth.opcode = src.opcode;
  p->bth.dest_qp = spec.dest_qp;
  p->bth.psn = s.psn;
  s.psn = (s.psn + 1) & 0xFFFFFF;
  p->deth.q_key = 0x80010000u;  // the well-known Q_Key range is not special here
  p->deth.src_qp = 0x100 + src.flow;
  p->payload_bytes = payload_bytes;
  p->finalize_lengths();
  p->flow = src.flow;
  p->frame = spec.frame;
  p->frame_packets = spec.frame_packets;
  p->frame_piece = spec.frame_piece;
  p->frame_type = spec.frame_type;
  p->connection = spec.connection;
  p->reserved_bps = spec.reserved_bps ? spec.reserved_bps : src.reserved_bps;
  p->source_path = spec.source_path;
  p->path_bits = spec.path_bits;
  p->src_node = node_;
  p->dst_node = spec.dst_node;
  p->created = sc_core::sc_time::from_value(spec.created_ps);
  p->injected = sc_core::sc_time::from_value(now);

  const uint32_t bytes = wire_bytes(s, payload_bytes);
  const uint32_t blocks = ib::blocks_for(bytes);
  assert(bytes == p->wire_bytes());
  const uint64_t duration = rate_.serialization_ps(bytes);
  const uint64_t end = now + duration;
  // IBA static rate control (9.11.2 / 7.12): the flow is idle for ipd packet times.
  s.next_allowed_ps = end + uint64_t{src.ipd} * duration;
  credits_.consume(vl, blocks);
  credit_wait_.sample(vl, false, now, counters_);
  credit_wait_.sample_port(false, now, counters_);
  busy_until_ = end;
  credit_blocked_ = false;
  injected_++;
  counters_.packets_tx++;
  counters_.bytes_tx += bytes;
  counters_.busy_ps += duration;
  counters_.vl[vl].packets_tx++;
  counters_.vl[vl].bytes_tx += bytes;
  probe_.inject(*p, now);
  probe_.transmit(node_, 1, *p, now, end);

  if (peer_) {
    // An untapped cable to a switch: Link::forward's sum, without the sockets (DirectPort).
    peer_->receive(peer_port_, p, peer_propagation_ps_, duration);
  } else {
    payloads_.send_packet(tx, p, duration);
  }
  // Look again when the port is free and some source may have a packet: at the end of
  // this one for a busy source, later for one that is paced or generates later.
  uint64_t next = TrafficSource::kNever;
  for (const SourceState& st : sources_)
    next = std::min(next, std::max(st.source->next_ready_ps(end), st.next_allowed_ps));
  if (next != TrafficSource::kNever) schedule_wake(std::max(next, end));
  requeue(source_index);
}

void Endpoint::deliver(ib::Packet* p) {
  const uint8_t vl = p->lrh.vl;
  const uint32_t blocks = ib::blocks_for(p->size);
  delivered_++;
  probe_.deliver(*p, node_, agenda_.now_ps());
  buffers_.release(vl, blocks);
  packets_.release(p);
  if (vl == ib::kVl15) return;
  // An untapped cable to a switch: Link::backward's sum, without the sockets (DirectPort).
  if (peer_) return peer_->credit_in(peer_port_, vl, blocks, peer_propagation_ps_);
  payloads_.send_credit(rx, vl, blocks, 0);
}

void Endpoint::finish() { credit_wait_.close_all(agenda_.now_ps(), counters_); }

}  // namespace ibvp::ep
