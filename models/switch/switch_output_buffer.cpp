// The switch's output buffers (switch.output_buffer_bytes > 0): a part of Switch kept apart
// from the input-buffered path in switch.cpp, which calls in here only when they are on.
//
// Seed 001 Sec. 2: "Buffer size (input and output) will be fixed to 1 KB" (8 KB with I/O
// traces). An output then runs in two stages:
//   - the crossbar: one request at a time per output port (its crossbar connection) moves
//     from its input buffer into the output buffer of its output VL when that buffer has
//     room for the whole packet; the request order (fifo, fifo_bypass) and the
//     non-multiplexed crossbar's busy inputs apply as without output buffers, the room
//     taking the place of the next hop's credits. Among the VLs with a request that can go,
//     the oldest request goes first (the paper's "FIFO request queues per output crossbar
//     port"), so a VL whose buffer is full does not hold the others back. The transfer
//     runs at the output link's rate and ends no earlier than the tail's arrival; then the
//     input space frees and its credit returns upstream (IBA 7.9: a credit stands for
//     receive-buffer space, and the input's space is empty once the packet has crossed).
//   - the link: when the transmitter is idle, the VL arbiter (IBA 7.6.9) chooses among the
//     VLs whose oldest output-buffered packet has the next hop's credits for its whole
//     size. A packet may start as soon as its head is in the output buffer (virtual
//     cut-through) and ends no earlier than its tail came in. Its output-buffer space frees
//     when its tail has left.
// The output buffer's space is taken for a packet from its crossbar start, so the crossbar
// never writes more than the buffer holds. Without congestion both stages start at the same
// instant and a packet leaves when it would without output buffers.
//
// Refused with output buffers (switch_params.cpp): rate schedulers, congestion marking,
// finite lifetimes, synchronous and central-buffer multicast and the flit router; each acts
// on the requests of an output, which here are split over two queues.
#include <algorithm>
#include <cassert>

#include "models/switch/switch.h"

namespace ibvp::sw {

void Switch::ob_arbitrate(uint16_t out_port) {
  // A packet the crossbar moves in may leave on the link at once (cut-through).
  ob_cross(out_port);
  ob_send(out_port);
}

bool Switch::ob_cross(uint16_t out_port) {
  Port& out = ports_[out_port];
  if (out.requested_vls == 0) return false;
  const uint64_t now = agenda_.now_ps();
  OutputBuffer& ob = *out.ob;
  if (ob.xbar_until > now) {
    schedule_retry(out_port, ob.xbar_until);
    return false;
  }
  ob.space.absorb(now);
  int best_vl = -1, best = -1;
  for (uint32_t pending = out.requested_vls; pending; pending &= pending - 1) {
    const uint8_t vl = static_cast<uint8_t>(__builtin_ctz(pending));
    const int i = ob_candidate(out_port, vl);
    if (i < 0) continue;
    // Oldest first across VLs; equal times to the lower VL.
    if (best_vl < 0 || out.vls[vl].requests[static_cast<size_t>(i)].arrived_ps <
                           out.vls[static_cast<size_t>(best_vl)].requests[static_cast<size_t>(best)].arrived_ps) {
      best_vl = vl;
      best = i;
    }
  }
  // Nothing can go: a busy input is offered back to this output when it frees (candidate()),
  // and a full buffer's room comes with the end of a link transmission, which arbitrates.
  if (best_vl < 0) return false;
  ob_enter(out_port, static_cast<uint8_t>(best_vl), best);
  return true;
}

void Switch::ob_enter(uint16_t out_port, uint8_t vl, int index) {
  Port& out = ports_[out_port];
  OutputBuffer& ob = *out.ob;
  RequestQueue& q = out.vls[vl].requests;
  if (index > 0) q.front().bypassed++;
  const Request r = q[static_cast<size_t>(index)];
  q.erase(q.begin() + index);
  requests_from_[r.in_port * ports_.size() + out_port]--;
  ports_[r.in_port].queued--;
  if (q.empty()) out.requested_vls = static_cast<uint16_t>(out.requested_vls & ~(1u << vl));
  assert(out.vls[vl].waiting_blocks >= r.blocks);
  out.vls[vl].waiting_blocks -= r.blocks;

  const uint64_t start = agenda_.now_ps();
  // The crossbar runs at the output link's rate; the tail cannot cross before it is in.
  const uint64_t end = std::max(start + out.rate.serialization_ps(r.packet->size), r.tail_ps);
  out.vls[vl].progress_ps = start;
  Port& in = ports_[r.in_port];
  if (!multiplexed_) in.feeding_until = end;
  ob.xbar_until = end;
  ob.space.admit(vl, r.blocks, ob.counters);
  ob.q[vl].push_back({r.packet, end, r.blocks});
  ob.queued_blocks[vl] += r.blocks;
  ob.vls = static_cast<uint16_t>(ob.vls | (1u << vl));
  obuf_held_++;

  // The input's space frees, and its credit reaches upstream a cable later, when the tail
  // has crossed.
  if (r.mc != McKind::unicast) {
    copy_left(out_port, r, end);  // an asynchronous multicast copy: after the last one
  } else {
    in.buffers.release_at(r.in_vl, r.blocks, end);
    assert(buffered_ > 0);
    buffered_--;
    return_credit(r.in_port, r.in_vl, r.blocks, end - start);
  }
  if (out.requested_vls) schedule_retry(out_port, end);
  if (!multiplexed_ && in.queued) {
    // Not schedule_offer(): an offer of this input due now (which may be what brought us
    // here) would find it busy and offer it to no one, so the offer at `end` must stand.
    in.offer_at = end;
    agenda_.push_at(end, kOffer, r.in_port);
  }
}

void Switch::ob_send(uint16_t out_port) {
  Port& out = ports_[out_port];
  OutputBuffer& ob = *out.ob;
  if (ob.vls == 0) return;
  const uint64_t now = agenda_.now_ps();
  if (out.busy_until > now) {
    schedule_retry(out_port, out.busy_until);
    return;
  }
  out.credits.absorb(now);
  uint16_t ready = 0;
  bool any_credit_blocked = false;
  for (uint32_t pending = ob.vls; pending; pending &= pending - 1) {
    const uint8_t vl = static_cast<uint8_t>(__builtin_ctz(pending));
    // A packet may not pass its VL's oldest for credits (the output buffer is a FIFO per VL).
    const bool blocked = !out.credits.can_send(vl, ob.q[vl].front().blocks);
    out.credit_wait.sample(vl, blocked, now, out.counters);
    any_credit_blocked |= blocked;
    if (!blocked) ready |= static_cast<uint16_t>(1u << vl);
  }
  out.credit_wait.sample_port(ready == 0 && any_credit_blocked, now, out.counters);
  out.credit_blocked = ready == 0 && any_credit_blocked;
  if (ready == 0) {
    // Waiting for credits already on their way: look again when the next one lands (others
    // wake the output through on_tx_bw, as credit_blocked is set).
    if (any_credit_blocked && out.credits.next_arrival_ps() != ~uint64_t{0})
      schedule_retry(out_port, out.credits.next_arrival_ps());
    return;
  }
  const int chosen = out.arbiter->choose(ready, [&](uint8_t v) { return ob.q[v].front().packet->size; });
  assert(chosen >= 0);
  const uint8_t vl = static_cast<uint8_t>(chosen);
  const OutputBuffered b = ob.q[vl].front();
  ob.q[vl].pop_front();
  ob.queued_blocks[vl] -= b.blocks;
  if (ob.q[vl].empty()) ob.vls = static_cast<uint16_t>(ob.vls & ~(1u << vl));
  obuf_held_--;

  ib::Packet* p = b.packet;
  const uint32_t bytes = p->size;
  const uint64_t start = now;
  const uint64_t end = std::max(start + out.rate.serialization_ps(bytes), b.tail_ps);
  out.vls[vl].progress_ps = start;
  out.credits.consume(vl, b.blocks);
  out.credit_wait.sample(vl, false, start, out.counters);
  out.credit_wait.sample_port(false, start, out.counters);
  put_on_wire(out_port, vl, p, bytes, start, end);

  ob.space.release_at(vl, b.blocks, end);
  // At the end the link is free for the next packet and the crossbar has the room back.
  if (out.requested_vls || ob.vls) schedule_retry(out_port, end);
}

// The deadlock watch's test (deadlock_watch.cpp) with output buffers. The output buffer is
// part of its output VL's channel: the VL can never move by itself when the oldest packet
// in its buffer lacks credits even counting those on their way, and no waiting request can
// enter the room the buffer will have once the packets already on the link are gone. A
// request that can enter will, and frees its input: then the VL is not stuck (yet).
bool Switch::ob_vl_stuck(uint16_t port, uint8_t vl) const {
  const Port& out = ports_.at(port);
  const OutputBuffer& ob = *out.ob;
  if (vl == ib::kVl15 || ob.q[vl].empty()) return false;
  const uint32_t credits = out.credits.available(vl) + out.credits.announced(vl) + out.credits_on_cable[vl];
  if (ob.q[vl].front().blocks <= credits) return false;
  const RequestQueue& q = out.vls[vl].requests;
  if (q.empty()) return true;
  const uint32_t room = ob.space.capacity_blocks(vl) - ob.queued_blocks[vl];
  if (q.front().blocks <= room) return false;
  // As in vl_waits_for_credits: with bypass, a younger request from another input may pass a
  // head whose input is busy, if it fits.
  if (cfg_.request_order == RequestOrder::fifo || multiplexed_ || q.front().bypassed >= cfg_.bypass_limit)
    return true;
  std::bitset<256> seen;
  seen.set(q.front().in_port);
  for (const Request& r : q) {
    if (!seen.test(r.in_port) && r.blocks <= room) return false;
    seen.set(r.in_port);
  }
  return true;
}

}  // namespace ibvp::sw
