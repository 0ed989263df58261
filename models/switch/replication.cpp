// Multicast replication (seed 000 Sec. 3.6.1): the switch's methods that copy a packet to the
// ports of its MFT entry and free its input buffer after the last copy (replication.h).
#include <algorithm>
#include <cassert>

#include "models/switch/switch.h"

namespace ibvp::sw {

const char* replication_name(Replication r) {
  switch (r) {
    case Replication::synchronous: return "synchronous";
    case Replication::asynchronous: return "asynchronous";
    case Replication::central_buffer: return "central_buffer";
  }
  return "unknown";
}

const char* multicast_order_name(MulticastOrder o) {
  switch (o) {
    case MulticastOrder::fcfs: return "fcfs";
    case MulticastOrder::round_robin: return "round_robin";
  }
  return "unknown";
}

uint32_t Switch::new_hold() {
  uint32_t h;
  if (!free_holds_.empty()) {
    h = free_holds_.back();
    free_holds_.pop_back();
  } else {
    h = static_cast<uint32_t>(holds_.size());
    holds_.emplace_back();
  }
  McHold& m = holds_[h];
  m.remaining = 0;
  m.latest_end_ps = 0;
  m.outs.clear();
  return h;
}

void Switch::replicate(uint16_t in_port, ib::Packet* p) {
  const Mft::PortMask mask = mft_.lookup(p->lrh.dlid);
  // IBA 18.2.4.3.2: a copy to every port of the entry except the arrival port. Port 0 (the
  // switch's management port) takes no data copies: the model's switches join no group.
  std::array<uint16_t, 256> outs;
  std::array<uint8_t, 256> vls;
  uint32_t k = 0;
  for (uint16_t o = 1; o <= cfg_.num_ports && o < Mft::kPortMaskBits; ++o) {
    if (!mask.test(o) || o == in_port || !attached(o)) continue;
    const uint8_t vl = sl2vl_at(in_port, o)[p->lrh.sl];
    if (vl >= cfg_.data_vls) return drop(in_port, p, ib::DropReason::sl2vl);
    outs[k] = o;
    vls[k] = vl;
    ++k;
  }
  // No entry, or an entry with only the arrival port: the packet ends here (IBA 18.2.4.3.2).
  if (k == 0) return drop(in_port, p, ib::DropReason::no_route);
  const uint64_t now = agenda_.now_ps();
  const uint64_t arrived = now - cfg_.pipeline_delay.value();  // the switch lifetime counts from it
  const uint32_t h = new_hold();
  {
    McHold& m = holds_[h];
    m.remaining = k;
    m.seq = mc_seq_++;
    m.tail_ps = p->hop_tail_ps;
    m.blocks = ib::blocks_for(p->size);
    m.in_port = in_port;
    m.in_vl = p->lrh.vl;
    if (cfg_.multicast_replication == Replication::synchronous) m.outs.assign(outs.begin(), outs.begin() + k);
  }
  if (k > 1) probe_.replicate(*p, node_, k - 1, now);
  // Clones first: each is the packet as it arrived (same id, so observers see one packet).
  std::array<ib::Packet*, 256> copies;
  copies[0] = p;
  for (uint32_t i = 1; i < k; ++i) {
    ib::Packet* c = packets_.acquire();
    *c = *p;
    copies[i] = c;
  }
  const McKind kind = cfg_.multicast_replication == Replication::synchronous ? McKind::sync_copy : McKind::async_copy;
  for (uint32_t i = 0; i < k; ++i) {
    copies[i]->lrh.vl = vls[i];
    if (cfg_.multicast_replication == Replication::central_buffer) {
      place_central(outs[i], copies[i], h, arrived);
      continue;
    }
    Request r;
    r.packet = copies[i];
    r.tail_ps = p->hop_tail_ps;
    r.arrived_ps = arrived;
    r.blocks = holds_[h].blocks;
    r.in_port = in_port;
    r.in_vl = holds_[h].in_vl;
    r.mc = kind;
    r.hold = h;
    enqueue_copy(outs[i], r);
  }
  // Synchronous copies are looked at together, once all of them are queued.
  if (kind == McKind::sync_copy)
    for (uint32_t i = 0; i < k; ++i) arbitrate(outs[i]);
}

void Switch::enqueue_copy(uint16_t out_port, const Request& r) {
  Port& out = ports_[out_port];
  // The scenario loader refuses multicast with a rate scheduler (docs/qos.md): copies go
  // ahead of unicast by their own rules.
  assert(!rate_ && "multicast copies under a rate scheduler");
  const uint8_t vl = r.packet->lrh.vl;
  const uint64_t now = agenda_.now_ps();
  if (!(out.requested_vls & (1u << vl))) out.vls[vl].progress_ps = out.vls[vl].head_since_ps = now;
  RequestQueue& q = out.vls[vl].requests;
  if (r.mc == McKind::async_copy && !cfg_.multicast_priority) {
    q.push_back(r);
  } else {
    // Seed 000 Sec. 3.6.1: synchronous and central-buffer copies go ahead of unicast, in the
    // order they came; Sec. 5.2 gives asynchronous copies the same priority for Fig. 10(f)'s
    // scheme 1 (multicast_priority). One switch has one replication scheme, so the copies
    // before this one are all of its kind.
    auto it = q.begin();
    while (it != q.end() && it->mc != McKind::unicast &&
           (it->mc != McKind::async_copy || cfg_.multicast_priority))
      ++it;
    // A copy put before the head is the head from now (its HOQ lifetime counts from here).
    if (it == q.begin()) out.vls[vl].head_since_ps = now;
    q.insert(it, r);
  }
  out.vls[vl].waiting_blocks += r.blocks;
  requests_from_[r.in_port * ports_.size() + out_port]++;
  ports_[r.in_port].queued++;
  out.requested_vls |= static_cast<uint16_t>(1u << vl);
  if (r.mc == McKind::sync_copy) {
    out.mc.sync_waiting++;
    return;  // replicate() arbitrates once all siblings are queued
  }
  if (ecn_.watches_input_buffers()) ecn_.waiting(out_port);
  arbitrate(out_port);
}

void Switch::place_central(uint16_t out_port, ib::Packet* c, uint32_t hold, uint64_t arrived_ps) {
  Port& out = ports_[out_port];
  const uint32_t blocks = ib::blocks_for(c->size);
  const uint32_t cap = cfg_.multicast_buffer_bytes / ib::kCreditBlockBytes;
  if (!out.mc.central_pending.empty() || out.mc.central_used_blocks + blocks > cap) {
    out.mc.central_pending.push_back({c, hold, arrived_ps});
    return;
  }
  out.mc.central_used_blocks += blocks;
  McHold& m = holds_[hold];
  const uint64_t now = agenda_.now_ps();
  if (--m.remaining == 0) {
    // Every copy is written: the input frees once the tail is in.
    release_input(m.in_port, m.in_vl, m.blocks, std::max(now, m.tail_ps));
    free_holds_.push_back(hold);
  }
  Request r;
  r.packet = c;
  r.tail_ps = c->hop_tail_ps;
  r.arrived_ps = arrived_ps;
  r.blocks = blocks;
  r.in_port = 0;  // the central buffer, not an input: its crossbar input is never busy
  r.in_vl = 0;
  r.mc = McKind::central_copy;
  enqueue_copy(out_port, r);
}

void Switch::central_freed(uint16_t out_port, uint32_t blocks) {
  Port& out = ports_[out_port];
  assert(out.mc.central_used_blocks >= blocks);
  out.mc.central_used_blocks -= blocks;
  const uint32_t cap = cfg_.multicast_buffer_bytes / ib::kCreditBlockBytes;
  while (!out.mc.central_pending.empty()) {
    const McPending next = out.mc.central_pending.front();
    if (out.mc.central_used_blocks + ib::blocks_for(next.packet->size) > cap) break;
    out.mc.central_pending.pop_front();
    place_central(out_port, next.packet, next.hold, next.arrived_ps);
  }
}

void Switch::copy_left(uint16_t out_port, const Request& r, uint64_t end_ps) {
  if (r.mc == McKind::central_copy) {
    // Its central-buffer space frees when its tail has left.
    agenda_.push_at(end_ps, kCentralFree, out_port, r.blocks);
    return;
  }
  if (r.mc == McKind::sync_copy) {
    ports_[out_port].mc.sync_waiting--;
    ports_[out_port].mc.reserved = false;  // the next arbitration chooses afresh
  }
  McHold& m = holds_[r.hold];
  m.latest_end_ps = std::max(m.latest_end_ps, end_ps);
  if (--m.remaining) return;
  // The last copy has started: the input frees, and its credit returns, when the last tail
  // of all copies has left.
  release_input(m.in_port, m.in_vl, m.blocks, m.latest_end_ps);
  free_holds_.push_back(r.hold);
}

void Switch::drop_copy(uint16_t out_port, const Request& r, ib::DropReason why) {
  const uint64_t now = agenda_.now_ps();
  const uint64_t tail = std::max(now, r.tail_ps);
  ib::Packet* p = r.packet;
  p->drop = why;
  dropped_++;
  probe_.drop(*p, node_, now);
  packets_.release(p);  // each copy is a packet of its own; only the input space is shared
  if (r.mc == McKind::central_copy) {
    // Its central-buffer space frees when its tail is in, as a sent copy's when it has left
    // (through the agenda: the caller is in the middle of arbitrating this output).
    agenda_.push_at(tail, kCentralFree, out_port, r.blocks);
    return;
  }
  McHold& m = holds_[r.hold];
  if (r.mc == McKind::sync_copy) {
    // The lock-step group loses this branch; the others may now be able to go together.
    ports_[out_port].mc.sync_waiting--;
    if (ports_[out_port].mc.sync_waiting == 0) ports_[out_port].mc.reserved = false;
    m.outs.erase(std::find(m.outs.begin(), m.outs.end(), out_port));
    for (uint16_t o : m.outs) schedule_retry(o, now);
  }
  m.latest_end_ps = std::max(m.latest_end_ps, tail);
  if (--m.remaining) return;
  // The last copy is gone: the input frees once the last tail has left (or is in).
  release_input(m.in_port, m.in_vl, m.blocks, m.latest_end_ps);
  free_holds_.push_back(r.hold);
}

void Switch::release_input(uint16_t in_port, uint8_t vl, uint32_t blocks, uint64_t at_ps) {
  const uint64_t now = agenda_.now_ps();
  assert(at_ps >= now);
  ports_[in_port].buffers.release_at(vl, blocks, at_ps);
  assert(buffered_ > 0);
  buffered_--;
  return_credit(in_port, vl, blocks, at_ps - now);
}

// One order for the whole switch (FCFS by routing, or round robin over inputs from mc_rr_),
// so the first multicast of the switch is first at each of its outputs and always goes.
bool Switch::mc_before(uint32_t a, uint32_t b) const {
  const McHold& x = holds_[a];
  const McHold& y = holds_[b];
  if (cfg_.multicast_order == MulticastOrder::round_robin) {
    const uint16_t n = cfg_.num_ports;
    const uint32_t rx = (x.in_port + n - mc_rr_) % n, ry = (y.in_port + n - mc_rr_) % n;
    if (rx != ry) return rx < ry;
  }
  return x.seq < y.seq;
}

uint32_t Switch::first_sync_at(const Port& po) const {
  uint32_t best = kNoHold;
  for (uint32_t pending = po.requested_vls; pending; pending &= pending - 1) {
    const uint8_t vl = static_cast<uint8_t>(__builtin_ctz(pending));
    for (const Request& r : po.vls[vl].requests) {
      if (r.mc != McKind::sync_copy) break;  // they are at the front
      if (best == kNoHold || mc_before(r.hold, best)) best = r.hold;
    }
  }
  return best;
}

bool Switch::sync_gate(uint16_t out_port) {
  Port& out = ports_[out_port];
  const uint64_t now = agenda_.now_ps();
  const uint16_t n = cfg_.num_ports;
  auto first_at = [this](const Port& po) { return first_sync_at(po); };
  auto locate = [&](const Port& po, uint32_t h, uint8_t& vl_out) {
    for (uint32_t pending = po.requested_vls; pending; pending &= pending - 1) {
      const uint8_t vl = static_cast<uint8_t>(__builtin_ctz(pending));
      const RequestQueue& q = po.vls[vl].requests;
      for (size_t i = 0; i < q.size() && q[i].mc == McKind::sync_copy; ++i)
        if (q[i].hold == h) {
          vl_out = vl;
          return static_cast<int>(i);
        }
    }
    return -1;
  };
  const uint32_t h = first_at(out);
  assert(h != kNoHold);
  const McHold& m = holds_[h];
  bool ready = true;
  if (!multiplexed_ && ports_[m.in_port].feeding_until > now) {
    schedule_offer(m.in_port, ports_[m.in_port].feeding_until);
    ready = false;
  }
  std::array<uint16_t, 256> outs;
  std::array<uint8_t, 256> vls;
  std::array<int, 256> index;
  const size_t k = m.outs.size();
  for (size_t i = 0; i < k; ++i) {
    const uint16_t o = m.outs[i];
    Port& po = ports_[o];
    outs[i] = o;
    if (po.busy_until > now) {
      schedule_retry(o, po.busy_until);
      ready = false;
      continue;
    }
    // A branch that serves an earlier multicast first: this one waits until that one has
    // started there (the branch arbitrates again when its transmission ends).
    if (o != out_port && first_at(po) != h) {
      ready = false;
      continue;
    }
    // A branch whose VL arbiter has not given multicast its turn yet: it arbitrates now and
    // reserves itself when the turn comes (then its own sync_gate starts the copies).
    if (!po.mc.reserved) {
      schedule_retry(o, now);
      ready = false;
      continue;
    }
    index[i] = locate(po, h, vls[i]);
    assert(index[i] >= 0);
    po.credits.absorb(now);
    if (!po.credits.can_send(vls[i], m.blocks)) {
      // Look again when credits land at that branch (on_tx_bw retries a blocked output).
      po.credit_blocked = true;
      if (po.credits.next_arrival_ps() != ~uint64_t{0}) schedule_retry(o, po.credits.next_arrival_ps());
      ready = false;
    }
  }
  if (!ready) return true;  // the output is held for the multicast: no unicast starts
  // All branches free and credited: every copy starts now, together.
  if (cfg_.multicast_order == MulticastOrder::round_robin) mc_rr_ = static_cast<uint16_t>(m.in_port % n + 1);
  for (size_t i = 0; i < k; ++i) {
    uint8_t vl = vls[i];
    const int idx = locate(ports_[outs[i]], h, vl);  // indices shift as earlier copies leave
    start_transmit(outs[i], vl, idx);
  }
  return true;
}

}  // namespace ibvp::sw
