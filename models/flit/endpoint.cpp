#include "models/flit/endpoint.h"

#include <algorithm>

#include "models/flit/vc_allocator.h"

namespace ibvp::flit {

FlitEndpoint::FlitEndpoint(uint32_t node, const FlitConfig& cfg, std::vector<Message>& msgs)
    : node_(node), cfg_(cfg), msgs_(msgs), vcs_(cfg.vcs_per_channel), vclock_(cfg.vc_bits) {
  for (OutputVc& o : vcs_) o.init(cfg.vc_buffer_flits);
}

void FlitEndpoint::receive(uint16_t vc, const Flit& f, Cycle now, Wire& wire) {
  wire.send_credit(node_, 0, vc, f.pool, f.cls, now);
  if (f.dummy) {
    ++dummies_received_;
    return;
  }
  ++payload_received_;
  Message& m = msgs_[f.msg];
  // Wormhole switching keeps a message's flits in order, preempted or not (a dummy header
  // resumes on its message's output VC, router.cpp): a flit out of sequence is a model
  // error, counted once per message (summary.json's flit_router.messages_out_of_order).
  if (f.seq != m.flits_delivered && !m.out_of_order) {
    m.out_of_order = true;
    ++messages_out_of_order_;
  }
  ++m.flits_delivered;
  if (f.seq == 0) m.head_delivered = now;
  if (is_tail(f.kind)) {
    m.tail_delivered = now;
    if (listener_) listener_->delivered(f.msg, now);
  }
}

// Sec. 3.3.1: the QoS NIC's "hardware-implemented VirtualClock algorithm for transferring
// flits from different VCs in the NIC buffer": the flit with the smallest auxVC + Vtick of
// its connection goes (best effort after every reservation with unreserved: last, as in the
// router); equal stamps go by class, then age. Control (class 0) goes ahead of every stamp,
// as at the router's crossbar input: Sec. 4.2 gives it "the highest priority", and the
// doorbell queues already serve it first ("a doorbell queue for each class", Sec. 3.3.1).
// The other two NICs have no rates.
std::tuple<uint8_t, uint64_t, uint8_t, Cycle, uint32_t> FlitEndpoint::key(const Sending& s) const {
  const Message& m = msgs_[s.msg];
  switch (cfg_.nic_scheduler) {
    case NicScheduler::virtual_clock: {
      // Stamps are ps of simulated time (2^62 ps is 53 days): unreserved flits rank above them all.
      constexpr uint64_t kUnreservedTier = uint64_t{1} << 62;
      const bool last = m.unreserved && cfg_.unreserved == Unreserved::last;
      const uint8_t tier = m.cls == 0 ? 0 : 1;
      return {tier, vclock_.stamp(m.connection, vtick(m)) + (last ? kUnreservedTier : 0), m.cls, m.created, s.msg};
    }
    case NicScheduler::priority: return {0, 0, m.cls, m.created, s.msg};
    case NicScheduler::fcfs: return {0, 0, 0, m.created, s.msg};
  }
  return {};
}

void FlitEndpoint::start_sending(uint32_t msg, uint16_t vc, Pool pool, Cycle now) {
  (pool == Pool::extra ? vcs_[vc].extra_owner : vcs_[vc].owner) = msg;
  sending_.push_back({msg, vc, pool, 0});
  if (cfg_.nic_scheduler != NicScheduler::virtual_clock) return;
  // A connection with no message in the NIC's VC buffers gets work: Zhang's auxVC <- max(auxVC,
  // now), so a connection earns no credit while it has nothing to send (with unbounded
  // counters; Sec. 3.1's finite ones have no real-time term).
  const uint32_t k = msgs_[msg].connection;
  if (in_buffers_.size() <= k) in_buffers_.resize(k + 1, 0);
  if (in_buffers_[k]++ == 0) vclock_.activate(k, now * cfg_.flit_cycle_ps());
}

void FlitEndpoint::sent_flit(const Message& m) {
  if (cfg_.nic_scheduler == NicScheduler::virtual_clock) vclock_.charge(m.connection, vtick(m));
}

void FlitEndpoint::step(Cycle now, Wire& wire) {
  // VC allocation from the doorbell queues, the highest class first, each in creation order
  // (Sec. 3.3.1's prioritized doorbells; the traditional NIC's one queue holds every class):
  // a message that finds no VC waits, and so do the younger ones of its queue.
  // Sec. 4.2: "Once the input VC for a connection is determined": a reserved connection (a
  // stream) sends one message at a time, so a frame's messages follow each other on one VC;
  // its younger messages wait, and the other connections' messages pass them. Messages
  // without a reservation (best effort) each take a VC of their own ("the input and output
  // VCs for a message are assigned ... of the available VCs for this traffic class").
  auto busy = [&](uint32_t msg) {
    const Message& m = msgs_[msg];
    if (m.unreserved) return false;
    for (const Sending& s : sending_)
      if (!msgs_[s.msg].unreserved && msgs_[s.msg].connection == m.connection) return true;
    return false;
  };
  for (std::deque<uint32_t>& q : waiting_)
    for (auto it = q.begin(); it != q.end() && msgs_[*it].created <= now;) {
      if (busy(*it)) {
        ++it;
        continue;
      }
      const VcChoice c = choose_vc(cfg_, vcs_, msgs_[*it].cls, msgs_, true);
      if (!c.found) break;
      start_sending(*it, c.vc, c.pool, now);
      it = q.erase(it);
      --queued_;
    }
  // One flit per cycle, of the message the scheduler ranks first among those with a credit.
  auto credited = [&](const Sending& s) { return vcs_[s.vc].credits[static_cast<size_t>(s.pool)] > 0; };
  Sending* best = nullptr;
  if (on_wire_ != kNone) {
    // Message-level multiplexing (Sec. 3.3.1): the send DMA moves the whole message; the
    // wire waits for its credits rather than carry another message's flits.
    if (now < on_wire_from_) return;
    for (Sending& s : sending_)
      if (s.msg == on_wire_) best = &s;
    if (!best || !credited(*best)) return;
  } else {
    for (Sending& s : sending_) {
      if (!credited(s)) continue;
      if (!best || key(s) < key(*best)) best = &s;
    }
    if (!best) return;
    if (cfg_.nic_multiplexing == NicMultiplexing::message) {
      // "the messages are selected using the VirtualClock algorithm" (Sec. 3.3.1).
      on_wire_ = best->msg;
      // "This implementation includes the DMA overhead for each message transfer" (Sec. 3.3.1).
      on_wire_from_ = now + cfg_.nic_dma_cycles;
      if (now < on_wire_from_) return;
    }
  }
  Message& m = msgs_[best->msg];
  Flit f;
  f.msg = best->msg;
  f.seq = best->next;
  f.cls = m.cls;
  f.pool = best->pool;
  const bool first = best->next == 0, last = best->next + 1 == m.flits;
  f.kind = first && last ? FlitKind::head_tail : first ? FlitKind::head : last ? FlitKind::tail : FlitKind::body;
  OutputVc& o = vcs_[best->vc];
  o.sent(f);
  wire.send_flit(node_, 0, best->vc, f, now);
  sent_flit(m);
  ++payload_sent_;
  if (first) m.head_injected = now;
  if (++best->next < m.flits) return;
  m.tail_injected = now;
  if (on_wire_ == best->msg) on_wire_ = kNone;
  if (listener_) listener_->tail_injected(best->msg, now);
  (best->pool == Pool::extra ? o.extra_owner : o.owner) = kNone;
  if (cfg_.nic_scheduler == NicScheduler::virtual_clock) --in_buffers_[m.connection];
  sending_.erase(sending_.begin() + (best - sending_.data()));
}

}  // namespace ibvp::flit
