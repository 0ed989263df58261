#include "models/switch/switch.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

#include "models/link/link_params.h"

namespace ibvp::sw {

const char* marking_policy_name(MarkingPolicy p) {
  switch (p) {
    case MarkingPolicy::none: return "none";
    case MarkingPolicy::naive: return "naive";
    case MarkingPolicy::input_triggered: return "input_triggered";
    case MarkingPolicy::input_output_triggered: return "input_output_triggered";
    case MarkingPolicy::cc_annex: return "cc_annex";
  }
  return "?";
}

const char* switch_model_name(SwitchModel m) {
  switch (m) {
    case SwitchModel::iba: return "iba";
    case SwitchModel::flit_wormhole: return "flit_wormhole";
  }
  return "unknown";
}

const char* crossbar_name(Crossbar c) {
  switch (c) {
    case Crossbar::non_multiplexed: return "non_multiplexed";
    case Crossbar::multiplexed: return "multiplexed";
  }
  return "unknown";
}

const char* request_order_name(RequestOrder o) {
  switch (o) {
    case RequestOrder::fifo: return "fifo";
    case RequestOrder::fifo_bypass: return "fifo_bypass";
  }
  return "unknown";
}

Sl2VlTable SwitchConfig::default_sl2vl(uint8_t data_vls) {
  Sl2VlTable t{};
  for (uint8_t sl = 0; sl < 16; ++sl) t[sl] = static_cast<uint8_t>(sl % std::max<uint8_t>(data_vls, 1));
  return t;
}

Switch::Switch(sc_core::sc_module_name name, uint32_t node, const SwitchConfig& cfg,
               const std::vector<Cable>& cables, ib::PacketPool& packets, link::PayloadPool& payloads,
               sim::Probe& probe)
    : sc_module(name),
      node_(node),
      cfg_(cfg),
      packets_(packets),
      payloads_(payloads),
      probe_(probe),
      agenda_("agenda", [this](const sim::Action& a) { dispatch(a); }),
      ports_(cfg.num_ports + 1u),
      sl2vl_((cfg.num_ports + 1u) * (cfg.num_ports + 1u), cfg.sl2vl),
      requests_from_((cfg.num_ports + 1u) * (cfg.num_ports + 1u), 0),
      multiplexed_(cfg.crossbar == Crossbar::multiplexed),
      ecn_(cfg.ecn, cfg.num_ports),
      rate_(cfg.scheduling != Scheduling::fifo),
      obuf_(cfg.output_buffer_bytes > 0),
      unreserved_bps_(static_cast<uint64_t>(std::max(1.0, std::round(cfg.unreserved_rate)))),
      sma_(*this) {
  // Management port 0 sends the SMA's responses: a VL15 buffer of its own holds them until
  // they leave (IBA 7.9.4: VL15 is uncredited; one that does not fit is dropped).
  ports_[0].buffers.set_capacity(ib::kVl15, cfg_.vl15_buffer_bytes);
  for (uint16_t p = 1; p < ports_.size(); ++p) ports_[p].port_state = ib::mad::kPortDown;
  for (const Cable& c : cables) attach_port(c.port, c.rate);
  set_switch_life(cfg.switch_life);
}

void Switch::attach_port(uint16_t port, const link::LinkRate& rate) {
  assert(port >= 1 && port <= cfg_.num_ports);
  Port& p = ports_[port];
  const std::string n = std::to_string(port);
  p.rx = std::make_unique<InSocket>(("rx" + n).c_str());
  p.tx = std::make_unique<OutSocket>(("tx" + n).c_str());
  p.rx->register_nb_transport_fw(this, &Switch::on_rx, port);
  p.tx->register_nb_transport_bw(this, &Switch::on_tx_bw, port);
  p.rate = rate;
  p.port_state = ib::mad::kPortActive;  // until an SM says otherwise (sma.h)
  for (uint8_t vl = 0; vl < cfg_.data_vls; ++vl) p.buffers.set_capacity(vl, cfg_.vl_buffer_bytes);
  p.buffers.set_capacity(ib::kVl15, cfg_.vl15_buffer_bytes);
  p.arbiter = std::make_unique<link::VlArbiter>(cfg_.vlarb);
  p.vl0_alone = cfg_.data_vls == 1 && link::vlarb_serves(cfg_.vlarb, 0);
  if (obuf_) {
    p.ob = std::make_unique<OutputBuffer>();
    for (uint8_t vl = 0; vl < cfg_.data_vls; ++vl) p.ob->space.set_capacity(vl, cfg_.output_buffer_bytes);
    p.ob->space.set_capacity(ib::kVl15, cfg_.vl15_buffer_bytes);
  }
  for (VlState& v : p.vls) v.hoq_life_ps = lifetime_ps(cfg_.hoq_life);
  lifetimes_ |= cfg_.hoq_life < kLifetimeInfinite;
  if (cfg_.scheduling != Scheduling::fifo) {
    p.sched = std::make_unique<RateState>();
    p.sched->vc = sched::VirtualClock(cfg_.vc_bits);
    // Fair Queueing's fluid system shares this output's link.
    if (cfg_.scheduling == Scheduling::fair_queueing)
      p.sched->fq = std::make_unique<sched::FairQueueing>(rate.data_bits_per_s());
  }
}

void Switch::set_peer_buffer(uint16_t port, uint8_t vl, uint32_t bytes) {
  ports_.at(port).credits.set_limit(vl, bytes / ib::kCreditBlockBytes);
}

void Switch::set_sl2vl(uint16_t in_port, uint16_t out_port, const Sl2VlTable& table) {
  if (in_port > cfg_.num_ports || out_port > cfg_.num_ports) throw std::out_of_range("Switch::set_sl2vl: no such port");
  sl2vl_at(in_port, out_port) = table;
}

void Switch::set_vlarb(uint16_t out_port, const link::VlArbConfig& cfg) {
  Port& p = ports_.at(out_port);
  p.arbiter = std::make_unique<link::VlArbiter>(cfg);
  p.vl0_alone = cfg_.data_vls == 1 && link::vlarb_serves(cfg, 0);
}

// ---- TLM boundary -------------------------------------------------------------------

void Switch::set_direct_peer(uint16_t port, link::DirectPort* peer, uint16_t peer_port, uint64_t propagation_ps) {
  Port& p = ports_.at(port);
  assert(p.tx && "a direct peer on a port without a cable");
  p.peer = peer;
  p.peer_port = peer_port;
  p.peer_propagation_ps = propagation_ps;
}

tlm::tlm_sync_enum Switch::on_rx(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                 sc_core::sc_time& delay) {
  assert(phase == tlm::BEGIN_REQ);
  (void)phase;
  link::FabricExt& e = link::PayloadPool::ext(gp);
  assert(e.kind == link::FabricExt::Kind::packet);
  receive(static_cast<uint16_t>(port), e.packet, delay.value(), e.duration.value());
  return tlm::TLM_COMPLETED;
}

void Switch::receive(uint16_t port, ib::Packet* p, uint64_t delay_ps, uint64_t duration_ps) {
  const uint64_t head_ps = agenda_.now_ps() + delay_ps;
  p->hop_tail_ps = head_ps + duration_ps;
  if (p->lrh.vl == ib::kVl15) {
    // Uncredited: whether it fits is decided when its head arrives.
    agenda_.push_at(head_ps, kHead, static_cast<uint16_t>(port), 0, p);
  } else if (sim::Scheduler::canonical()) {
    // Canonical event order: the sender's event touches none of this switch's state; the
    // delivery is one action of this switch when the head has passed the pipeline (it is
    // admitted and requests its output then), keyed by the sender. Nothing about it is
    // observable earlier, so a run split at this cable may run a cable's propagation plus
    // the pipeline ahead (docs/parallel.md). Until then the deadlock watch counts its blocks
    // as held here, as fifo's admission at the send does (a watch-only counter, as
    // credits_on_cable).
    uint32_t counted = 0;
    if (!agenda_.remote()) {
      ports_[static_cast<size_t>(port)].blocks_on_cable[p->lrh.vl] += ib::blocks_for(p->size);
      counted = 1;
    }
    agenda_.push_at(head_ps + cfg_.pipeline_delay.value(), kArrive, static_cast<uint16_t>(port), counted, p);
  } else {
    arrived(static_cast<uint16_t>(port), p, head_ps);
  }
}

void Switch::arrived(uint16_t port, ib::Packet* p, uint64_t head_ps) {
  // A data packet is admitted as it is sent (fifo order) or once its head has passed the
  // pipeline (canonical): the sender held credits for it, so its space was freed at least a
  // cable's delay before, and waking at the head would only cost an event per hop. It
  // requests its output after the pipeline delay (canonical: now).
  admit(port, p);
  const bool canonical = sim::Scheduler::canonical();
  if (!canonical) agenda_.push_at(head_ps + cfg_.pipeline_delay.value(), kRouted, port, 0, p);
  if (ecn_.watches_input_buffers()) {
    const uint8_t vl = p->lrh.vl;
    const uint32_t blocks = ib::blocks_for(p->size);
    ports_[port].vls[vl].arriving_blocks += blocks;
    agenda_.push_at(std::max(p->hop_tail_ps, agenda_.now_ps()), kTailIn, port, (blocks << 4) | vl);
  }
  if (canonical) routed(port, p);
}

tlm::tlm_sync_enum Switch::on_tx_bw(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                    sc_core::sc_time& delay) {
  (void)phase;
  const link::FabricExt& e = link::PayloadPool::ext(gp);
  assert(e.kind == link::FabricExt::Kind::credit);
  credit_in(static_cast<uint16_t>(port), e.vl, e.blocks, delay.value());
  return tlm::TLM_COMPLETED;
}

void Switch::credit_in(uint16_t port, uint8_t vl, uint32_t blocks, uint64_t delay_ps) {
  const uint64_t at = agenda_.now_ps() + delay_ps;
  if (sim::Scheduler::canonical()) {
    // The update is this switch's action when it lands; until then the watch must still see
    // it on its way, as fifo's announcement shows it (IBA 7.9.4: a credit in flight is the
    // sender's to count). A counter only the watch reads: no result depends on it.
    uint32_t arg = (blocks << 4) | vl;
    if (!agenda_.remote()) {
      ports_[port].credits_on_cable[vl] += blocks;
      arg |= kCreditCounted;
    }
    agenda_.push_at(at, kCredit, port, arg);
  } else
    credit_arrived(port, vl, blocks, at);
}

void Switch::credit_arrived(uint16_t port, uint8_t vl, uint32_t blocks, uint64_t at_ps) {
  Port& out = ports_[port];
  out.credits.arrive(vl, blocks, at_ps);
  // Only an output waiting for credits needs to look again when these land; any other looks
  // at them the next time it arbitrates.
  if (out.credit_blocked) schedule_retry(port, at_ps);
}

void Switch::dispatch(const sim::Action& a) {
  switch (a.kind) {
    case kHead: head_arrived(a.port, static_cast<ib::Packet*>(a.ptr)); break;
    case kRouted: routed(a.port, static_cast<ib::Packet*>(a.ptr)); break;
    case kArrive: {
      auto* p = static_cast<ib::Packet*>(a.ptr);
      if (a.arg) ports_[a.port].blocks_on_cable[p->lrh.vl] -= ib::blocks_for(p->size);
      arrived(a.port, p, a.when_ps - cfg_.pipeline_delay.value());
      break;
    }
    case kCredit: {
      const uint8_t vl = static_cast<uint8_t>(a.arg & 0xF);
      const uint32_t blocks = (a.arg & ~kCreditCounted) >> 4;
      if (a.arg & kCreditCounted) ports_[a.port].credits_on_cable[vl] -= blocks;
      credit_arrived(a.port, vl, blocks, a.when_ps);
      break;
    }
    case kTxEnd:
      if (ports_[a.port].retry_at == a.when_ps) ports_[a.port].retry_at = ~uint64_t{0};
      if (ports_[a.arg].offer_at == a.when_ps) ports_[a.arg].offer_at = ~uint64_t{0};
      arbitrate(a.port);
      offer_input(static_cast<uint16_t>(a.arg));
      break;
    case kRetry:
      if (ports_[a.port].retry_at == a.when_ps) ports_[a.port].retry_at = ~uint64_t{0};
      arbitrate(a.port);
      break;
    case kOffer:
      if (ports_[a.port].offer_at == a.when_ps) ports_[a.port].offer_at = ~uint64_t{0};
      offer_input(a.port);
      break;
    case kFreeInput: free_input(a.port, static_cast<uint8_t>(a.arg & 0xF), a.arg >> 4); break;
    case kTailIn: tail_in(a.port, static_cast<uint8_t>(a.arg & 0xF), a.arg >> 4); break;
    case kCentralFree: central_freed(a.port, static_cast<uint32_t>(a.arg)); break;
    case kSmaIn: sma_in(a.port, static_cast<ib::Packet*>(a.ptr)); break;
    case kSmi: sma_next(); break;
    case kTrap: send_trap(a.arg); break;
    case kDeliverLocal: {
      auto* p = static_cast<ib::Packet*>(a.ptr);
      probe_.deliver(*p, node_, agenda_.now_ps());
      free_input(a.port, p->lrh.vl, ib::blocks_for(p->size));
      packets_.release(p);
      break;
    }
    default: assert(false && "unknown switch action");
  }
}

// ---- input side -----------------------------------------------------------------------

void Switch::head_arrived(uint16_t in_port, ib::Packet* p) {
  Port& in = ports_[in_port];
  const uint8_t vl = p->lrh.vl;
  const uint32_t blocks = ib::blocks_for(p->size);
  if (in.link_down) {
    // On a cable that went down while it was on the wire: it never arrives.
    p->drop = ib::DropReason::link_down;
    dropped_++;
    probe_.drop(*p, node_, agenda_.now_ps());
    packets_.release(p);
    return;
  }
  in.buffers.absorb(agenda_.now_ps());
  if (vl == ib::kVl15 && !in.buffers.fits(vl, blocks)) {
    in.counters.packets_rx++;
    in.counters.bytes_rx += p->size;
    // IBA 7.9.4: VL15 is not flow controlled; a packet that does not fit is dropped.
    in.counters.vl15_dropped++;
    p->drop = ib::DropReason::vl15_overflow;
    dropped_++;
    probe_.drop(*p, node_, agenda_.now_ps());
    packets_.release(p);
    return;
  }
  admit(in_port, p);
  agenda_.push_after(cfg_.pipeline_delay, kRouted, in_port, 0, p);
}

void Switch::admit(uint16_t in_port, ib::Packet* p) {
  Port& in = ports_[in_port];
  const uint8_t vl = p->lrh.vl;
  assert((vl == ib::kVl15 || vl < cfg_.data_vls) && "packet on a VL this switch does not operate");
  in.counters.packets_rx++;
  in.counters.bytes_rx += p->size;
  in.buffers.absorb(agenda_.now_ps());
  in.buffers.admit(vl, ib::blocks_for(p->size), in.counters);
  buffered_++;
}

uint8_t Switch::select_output(uint16_t in_port, ib::Packet& p) {
  uint8_t out_port = lft_.lookup(p.lrh.dlid);
  if (const AltTable::Entry* e = alternatives_.lookup(p.lrh.dlid)) {
    const uint8_t i = selector_.choose(*e, p, node_, [&](uint8_t port) -> int64_t {
      // max_credit: credits of the packet's next VL there, less what queued requests will take.
      Port& out = ports_[port];
      const uint8_t vl = sl2vl_at(in_port, port)[p.lrh.sl];
      if (vl >= cfg_.data_vls) return INT64_MIN;
      out.credits.absorb(agenda_.now_ps());
      return int64_t{out.credits.available(vl)} - int64_t{out.vls[vl].waiting_blocks};
    });
    out_port = e->port[i];
    selector_.count_use(p.lrh.dlid, i);
  }
  if (!alternatives_.entry.empty() && out_port < ports_.size()) selector_.count(out_port);
  if (p.hops < ib::kRouteHops) p.route[p.hops] = out_port;
  return out_port;
}

void Switch::routed(uint16_t in_port, ib::Packet* p) {
  // A port whose cable went down discards what it was still taking in (IBA 7.2).
  if (ports_[in_port].link_down) return drop(in_port, p, ib::DropReason::link_down);
  // IBA 18.2.4.3.2: a DLID in the multicast range is looked up in the MFT (replication.cpp).
  if (Mft::is_mlid(p->lrh.dlid) && p->lrh.vl != ib::kVl15) return replicate(in_port, p);
  // IBA 14.2.2, 18.2.4.1: the permissive DLID addresses this switch's management port, as
  // its own LID does through the LFT.
  const uint8_t out_port = p->lrh.dlid == ib::kPermissiveLid ? 0 : select_output(in_port, *p);
  if (out_port == Lft::kNoRoute) return drop(in_port, p, ib::DropReason::no_route);
  if (out_port == 0) {
    // Addressed to this switch's management port: an SMP goes to the management processor's
    // queue when its tail is in; anything else is consumed then.
    const uint64_t tail = std::max(p->hop_tail_ps, agenda_.now_ps());
    if (is_smp(*p)) agenda_.push_at(tail, kSmaIn, in_port, 0, p);
    else agenda_.push_at(tail, kDeliverLocal, in_port, 0, p);
    return;
  }
  // A route back out of the input port, or to a port without a cable, is a table error.
  if (out_port == in_port || !attached(out_port)) return drop(in_port, p, ib::DropReason::bad_port);
  request_output(in_port, p, out_port);
}

void Switch::request_output(uint16_t in_port, ib::Packet* p, uint8_t out_port) {
  const bool smp = p->lrh.vl == ib::kVl15;
  // An SL that maps to VL15 is dropped like one beyond the operational VLs (IBA 7.6.6).
  const uint8_t out_vl = smp ? ib::kVl15 : sl2vl_at(in_port, out_port)[p->lrh.sl];
  if (!smp && out_vl >= cfg_.data_vls) return drop(in_port, p, ib::DropReason::sl2vl);
  // IBA 7.2: data enters through Armed or Active ports and leaves through Active ones only;
  // SMPs pass any port whose link is up. Port 0 (the SMA's responses) is always up.
  const uint8_t in_state = ports_[in_port].port_state, out_state = ports_[out_port].port_state;
  if (smp ? out_state == ib::mad::kPortDown
          : in_state < ib::mad::kPortArmed || out_state != ib::mad::kPortActive)
    return drop(in_port, p, state_drop_reason(in_port, out_port));

  Port& out = ports_[out_port];
  Request r;
  r.packet = p;
  r.tail_ps = p->hop_tail_ps;
  r.arrived_ps = agenda_.now_ps() - std::min<uint64_t>(agenda_.now_ps(), cfg_.pipeline_delay.value());
  r.blocks = ib::blocks_for(p->size);
  r.in_port = in_port;
  r.in_vl = p->lrh.vl;
  p->lrh.vl = out_vl;  // the VL it will carry on the next link
  // A VL that had nothing to send starts waiting now, not at its last transmission (nor in
  // its output buffer, which is part of the output VL).
  if (!((out.ob ? out.requested_vls | out.ob->vls : out.requested_vls) & (1u << out_vl)))
    out.vls[out_vl].progress_ps = out.vls[out_vl].head_since_ps = agenda_.now_ps();
  if (rate_) rate_enqueue(out, r);
  out.vls[out_vl].requests.push_back(r);
  out.vls[out_vl].waiting_blocks += r.blocks;
  requests_from_[in_port * ports_.size() + out_port]++;
  ports_[in_port].queued++;
  out.requested_vls |= static_cast<uint16_t>(1u << out_vl);
  if (ecn_.watches_input_buffers()) ecn_.waiting(out_port);
  arbitrate(out_port);
}

void Switch::drop(uint16_t in_port, ib::Packet* p, ib::DropReason why) {
  p->drop = why;
  dropped_++;
  probe_.drop(*p, node_, agenda_.now_ps());
  // The buffer holds the packet until its tail has arrived; only then is the space free.
  const uint32_t arg = (ib::blocks_for(p->size) << 4) | p->lrh.vl;
  agenda_.push_at(std::max(p->hop_tail_ps, agenda_.now_ps()), kFreeInput, in_port, arg);
  packets_.release(p);
}

// Seed 004 Sec. 5: a buffer is full when the receipt of a packet's last byte leaves it
// without room for one more maximum-sized packet. Then the naive policy marks the packets in
// it, and the triggered policies make every output its packets wait for congested.
void Switch::tail_in(uint16_t in_port, uint8_t vl, uint32_t blocks) {
  Port& in = ports_[in_port];
  assert(in.vls[vl].arriving_blocks >= blocks);
  in.vls[vl].arriving_blocks -= blocks;
  in.buffers.absorb(agenda_.now_ps());
  // Packets behind this one have taken their space as they were sent but are not here yet.
  const uint32_t resident = in.buffers.used_blocks(vl) - in.vls[vl].arriving_blocks;
  if (resident + ib::blocks_for(cfg_.ecn.max_packet_bytes) <= in.buffers.capacity_blocks(vl)) return;
  const size_t n = ports_.size();
  for (uint16_t out = 1; out < n; ++out) {
    if (requests_from_[in_port * n + out] == 0) continue;
    if (!ecn_.naive()) {
      ecn_.trigger(out);
      continue;
    }
    // The packets of this buffer still waiting here (one already leaving cannot be marked;
    // one still in the pipeline has not asked for its output yet and is not seen).
    for (VlState& v : ports_[out].vls)
      for (Request& r : v.requests)
        if (r.in_port == in_port && r.in_vl == vl && !r.packet->bth.fecn) {
          r.packet->bth.fecn = true;
          in.counters.fecn_marked++;
        }
  }
}

void Switch::free_input(uint16_t in_port, uint8_t vl, uint32_t blocks) {
  Port& in = ports_[in_port];
  in.buffers.absorb(agenda_.now_ps());
  in.buffers.release(vl, blocks);
  assert(buffered_ > 0);
  buffered_--;
  return_credit(in_port, vl, blocks, 0);
}

void Switch::return_credit(uint16_t in_port, uint8_t vl, uint32_t blocks, uint64_t after_ps) {
  if (vl == ib::kVl15) return;  // VL15 is not credited
  Port& in = ports_[in_port];
  // A cable that nothing taps, to a port that takes direct calls: Link::backward's sum,
  // without the sockets (set_direct_peer).
  if (in.peer) return in.peer->credit_in(in.peer_port, vl, blocks, after_ps + in.peer_propagation_ps);
  // Announced now, counted by the sender from when it arrives (annotated timing).
  payloads_.send_credit(*in.rx, vl, blocks, after_ps);
}

// ---- output side ----------------------------------------------------------------------

template <class OnBusyInput, class Fits>
int Switch::candidate(const Port& out, uint8_t vl, bool& credit_blocked, OnBusyInput&& on_busy_input,
                      Fits&& fits) const {
  const RequestQueue& q = out.vls[vl].requests;
  const uint64_t now = agenda_.now_ps();
  auto feeding = [&](uint16_t in) {
    const uint64_t until = ports_[in].feeding_until;
    if (until <= now) return false;
    on_busy_input(in, until);
    return true;
  };
  credit_blocked = false;
  if (q.empty()) return -1;
  if (rate_) {
    // Seed 003 Sec. 3.1: the request the rate scheduler serves; like a FIFO head, it waits
    // for credits rather than let another request of its VL pass it.
    const int i = rate_candidate(out, vl, false, on_busy_input);
    if (i < 0 || fits(q[static_cast<size_t>(i)].blocks)) return i;
    credit_blocked = true;
    return -1;
  }
  const Request& head = q.front();
  if (head.mc == McKind::sync_copy) {
    // Nothing passes a synchronous copy (multicast ahead of unicast); its input and its other
    // outputs are sync_gate's to judge once the arbiter has chosen this VL.
    if (fits(head.blocks)) return 0;
    credit_blocked = true;
    return -1;
  }
  if (!feeding(head.in_port)) {
    if (fits(head.blocks)) return 0;
    credit_blocked = true;  // the whole VL waits: a packet may not pass its VL's head for credits
    return -1;
  }
  if (cfg_.request_order == RequestOrder::fifo || head.bypassed >= cfg_.bypass_limit) return -1;
  // Bypass: the oldest request whose input is free. Requests from one input keep their
  // order: a request is not eligible if an older one from the same input is still queued.
  std::bitset<256> seen;
  seen.set(head.in_port);
  for (size_t i = 1; i < q.size(); ++i) {
    const Request& r = q[i];
    if (!seen.test(r.in_port) && !feeding(r.in_port) && fits(r.blocks))
      return static_cast<int>(i);
    seen.set(r.in_port);
  }
  return -1;
}

template <class OnBusyInput>
int Switch::rate_candidate(const Port& out, uint8_t vl, bool ignore_busy, OnBusyInput&& on_busy_input) const {
  const RequestQueue& q = out.vls[vl].requests;
  const uint64_t now = agenda_.now_ps();
  // Only a connection's oldest request here is its candidate: its packets keep their order
  // (IBA 9.5: in order per path). Later ones of a connection whose oldest waits for a busy
  // input share that input, so they are passed over too.
  if (++seen_epoch_ == 0) {
    std::fill(seen_.begin(), seen_.end(), 0);
    seen_epoch_ = 1;
  }
  int best = -1;
  for (size_t i = 0; i < q.size(); ++i) {
    const Request& r = q[i];
    if (seen_[r.slot] == seen_epoch_) continue;
    seen_[r.slot] = seen_epoch_;
    if (!ignore_busy && ports_[r.in_port].feeding_until > now) {
      on_busy_input(r.in_port, ports_[r.in_port].feeding_until);
      continue;
    }
    // Equal stamps go to the older request (the queue is in arrival order).
    if (best < 0 || rate_before(out, r, q[static_cast<size_t>(best)])) best = static_cast<int>(i);
  }
  return best;
}

int Switch::ob_candidate(uint16_t out_port, uint8_t vl) {
  Port& out = ports_[out_port];
  bool full = false;
  return candidate(out, vl, full, [this](uint16_t in, uint64_t until) { schedule_offer(in, until); },
                   [&out, vl](uint32_t blocks) { return out.ob->space.fits(vl, blocks); });
}

void Switch::arbitrate(uint16_t out_port) {
  if (obuf_) return ob_arbitrate(out_port);  // two stages (switch_output_buffer.cpp)
  Port& out = ports_[out_port];
  if (out.requested_vls == 0) return;
  if (lifetimes_) {
    expire(out_port);
    if (out.requested_vls == 0) return;
  }
  const uint64_t now = agenda_.now_ps();
  if (out.busy_until > now) {
    // Look again when the packet on the wire is done.
    schedule_retry(out_port, out.busy_until);
    return;
  }
  out.credits.absorb(now);
  // Synchronous multicast: an output the arbiter reserved for it sends nothing else until the
  // multicast goes (seed 000 Sec. 3.6.1).
  if (out.mc.reserved) {
    if (out.mc.sync_waiting) {
      sync_gate(out_port);
      return;
    }
    out.mc.reserved = false;  // its copies left or were dropped
  }
  std::array<int, ib::kMaxVls> pick;
  uint16_t ready = 0;
  bool any_credit_blocked = false;
  // An input feeding another output is offered to its outputs, this one included, when it
  // frees.
  auto on_busy_input = [this](uint16_t in, uint64_t until) { schedule_offer(in, until); };
  for (uint32_t pending = out.requested_vls; pending; pending &= pending - 1) {
    const uint8_t vl = static_cast<uint8_t>(__builtin_ctz(pending));
    bool blocked = false;
    pick[vl] = candidate(out, vl, blocked, on_busy_input,
                         [&out, vl](uint32_t blocks) { return out.credits.can_send(vl, blocks); });
    out.credit_wait.sample(vl, blocked, now, out.counters);
    any_credit_blocked |= blocked;
    if (pick[vl] >= 0) ready |= static_cast<uint16_t>(1u << vl);
  }
  out.credit_wait.sample_port(ready == 0 && any_credit_blocked, now, out.counters);
  out.credit_blocked = ready == 0 && any_credit_blocked;
  out.credit_starved |= out.credit_blocked;
  if (ready == 0) {
    // Waiting for credits already on their way: look again when the next one lands.
    if (any_credit_blocked && out.credits.next_arrival_ps() != ~uint64_t{0})
      schedule_retry(out_port, out.credits.next_arrival_ps());
    return;
  }
  const int vl = rate_ && cfg_.scheduling_scope == SchedulingScope::across_vls
                     ? rate_choose_vl(out, ready, pick)
                     : ready == 1 && out.vl0_alone
                         ? 0
                         : out.arbiter->choose(ready,
                                               [&](uint8_t v) { return out.vls[v].requests[pick[v]].packet->size; });
  assert(vl >= 0);
  if (out.vls[vl].requests[pick[vl]].mc == McKind::sync_copy) {
    // Seed 000 Sec. 5.2: multicast on VLs of its own "uses the limited number of VLs": its
    // turn comes from the VLArb table, like any VL's; on its turn it reserves the output.
    out.mc.reserved = true;
    sync_gate(out_port);
    return;
  }
  start_transmit(out_port, static_cast<uint8_t>(vl), pick[vl]);
}

void Switch::schedule_retry(uint16_t out_port, uint64_t at_ps) {
  Port& out = ports_[out_port];
  const uint64_t now = agenda_.now_ps();
  // One pending retry per output suffices: an earlier one re-arbitrates and schedules again.
  if (out.retry_at >= now && out.retry_at <= at_ps) return;
  out.retry_at = at_ps;
  agenda_.push_at(at_ps, kRetry, out_port);
}

void Switch::schedule_offer(uint16_t in_port, uint64_t at_ps) {
  Port& in = ports_[in_port];
  const uint64_t now = agenda_.now_ps();
  if (in.offer_at >= now && in.offer_at <= at_ps) return;
  in.offer_at = at_ps;
  agenda_.push_at(at_ps, kOffer, in_port);
}

void Switch::offer_input(uint16_t in_port) {
  // A freed crossbar input goes to the outputs holding its requests, asked in rotating
  // order so that no port number is favoured.
  const uint16_t n = cfg_.num_ports;
  const uint32_t* row = &requests_from_[in_port * ports_.size()];
  for (uint16_t k = 0; k < n && ports_[in_port].feeding_until <= agenda_.now_ps(); ++k) {
    const uint16_t port = static_cast<uint16_t>(1 + (rr_start_ - 1 + k) % n);
    if (row[port]) arbitrate(port);
  }
  rr_start_ = static_cast<uint16_t>(rr_start_ % n + 1);
}

// The packet leaves on `out_port`'s cable from `start` to `end`: the output is busy, the
// port counters (IBA 16.1.3.5) and the probe see it, and the link takes it. Shared by the
// crossbar's direct path and the output buffer's.
void Switch::put_on_wire(uint16_t out_port, uint8_t vl, ib::Packet* p, uint32_t bytes, uint64_t start,
                         uint64_t end) {
  Port& out = ports_[out_port];
  out.busy_until = end;
  out.credit_blocked = false;
  p->hops++;

  link::VlCounters& vc = out.counters.vl[vl];
  vc.packets_tx++;
  vc.bytes_tx += bytes;
  out.counters.packets_tx++;
  out.counters.bytes_tx += bytes;
  out.counters.busy_ps += end - start;
  probe_.transmit(node_, out_port, *p, start, end);

  // A cable that nothing taps, to a port that takes direct calls: Link::forward's sum,
  // without the sockets (set_direct_peer).
  if (out.peer) return out.peer->receive(out.peer_port, p, out.peer_propagation_ps, end - start);
  payloads_.send_packet(*out.tx, p, end - start);
}

void Switch::start_transmit(uint16_t out_port, uint8_t vl, int index) {
  Port& out = ports_[out_port];
  RequestQueue& q = out.vls[vl].requests;
  if (index > 0) q.front().bypassed++;
  else out.vls[vl].head_since_ps = agenda_.now_ps();  // the next request is the head from now
  const Request r = q[static_cast<size_t>(index)];
  if (rate_) rate_dequeue(out, r, true);
  if (index == 0)
    q.pop_front();
  else
    q.erase(q.begin() + index);
  requests_from_[r.in_port * ports_.size() + out_port]--;
  ports_[r.in_port].queued--;
  if (q.empty()) out.requested_vls = static_cast<uint16_t>(out.requested_vls & ~(1u << vl));
  assert(out.vls[vl].waiting_blocks >= r.blocks);
  out.vls[vl].waiting_blocks -= r.blocks;

  ib::Packet* p = r.packet;
  const uint32_t bytes = p->size;
  const uint64_t start = agenda_.now_ps();
  if (ecn_.enabled()) {
    // The annex compares the queue behind this packet with what one input VL buffer holds.
    // The annex marks data packets only (a MAD on VL15 carries no BTH to mark).
    const bool mark = ecn_.annex() ? vl != ib::kVl15 && ecn_.annex_transmit(out_port, out.vls[vl].waiting_blocks,
                                                                             ib::blocks_for(cfg_.vl_buffer_bytes),
                                                                             r.blocks, out.credit_starved)
                                   : ecn_.transmit(out_port);
    if (mark) {
      p->bth.fecn = true;
      out.counters.fecn_marked++;
    }
  }
  out.credit_starved = false;
  out.vls[vl].progress_ps = start;
  // Cut-through: the tail cannot leave before it has arrived (a faster output waits).
  const uint64_t end = std::max(start + out.rate.serialization_ps(bytes), r.tail_ps);
  out.credits.consume(vl, r.blocks);
  out.credit_wait.sample(vl, false, start, out.counters);
  out.credit_wait.sample_port(false, start, out.counters);
  Port& in = ports_[r.in_port];
  // Non-multiplexed: the input is connected to this output until the tail has left. The
  // multiplexed crossbar leaves it free (feeding_until stays 0), so candidate() never finds
  // an input busy and the hot path needs no test of the crossbar kind.
  if (!multiplexed_ && r.mc != McKind::central_copy) in.feeding_until = end;
  put_on_wire(out_port, vl, p, bytes, start, end);

  // The input's space frees, and its credit reaches upstream a cable later, when the tail
  // has left. Nothing else happens at `end` unless someone waits for this output or input.
  if (r.mc != McKind::unicast) {
    copy_left(out_port, r, end);  // a multicast copy: the input frees after the last one
  } else {
    in.buffers.release_at(r.in_vl, r.blocks, end);
    assert(buffered_ > 0);
    buffered_--;
    return_credit(r.in_port, r.in_vl, r.blocks, end - start);
  }
  if (multiplexed_) {
    // No request waits for this input: only the output's own requests need the end.
    if (out.requested_vls) {
      out.retry_at = end;
      agenda_.push_at(end, kRetry, out_port);
    }
  } else if (out.requested_vls || in.queued) {
    // One action at the end serves both the output's and the input's waiting requests.
    out.retry_at = end;
    in.offer_at = end;
    agenda_.push_at(end, kTxEnd, out_port, r.in_port);
  }
}

bool Switch::vl_waits_for_credits(uint16_t port, uint8_t vl) const {
  if (obuf_) return ob_vl_stuck(port, vl);
  const Port& out = ports_.at(port);
  if (vl == ib::kVl15 || out.vls[vl].requests.empty()) return false;
  if (lifetimes_ && vl_drains_by_lifetime(port, vl)) return false;
  const RequestQueue& q = out.vls[vl].requests;
  const uint32_t credits = out.credits.available(vl) + out.credits.announced(vl) + out.credits_on_cable[vl];
  if (rate_) {
    // The request the rate scheduler serves once the inputs now busy free (they free after
    // one packet); it waits for credits like a FIFO head (candidate()).
    const int i = rate_candidate(out, vl, true, [](uint16_t, uint64_t) {});
    return q[static_cast<size_t>(i)].blocks > credits;
  }
  if (q.front().blocks <= credits) return false;
  // A head without credits blocks its VL (candidate()); with bypass, a younger request may
  // pass it while its input feeds another output, if that request fits. Whether the head's
  // input is busy at this instant does not matter: it frees after one packet.
  // With the multiplexed crossbar no input is ever busy, so nothing passes the head; nor once
  // the head has been passed bypass_limit times. As in candidate(), a request may pass only
  // if no older request of its input is queued (the head's input included).
  if (cfg_.request_order == RequestOrder::fifo || cfg_.crossbar == Crossbar::multiplexed ||
      q.front().bypassed >= cfg_.bypass_limit)
    return true;
  std::bitset<256> seen;
  seen.set(q.front().in_port);
  for (const Request& r : q) {
    if (!seen.test(r.in_port) && r.blocks <= credits) return false;
    seen.set(r.in_port);
  }
  return true;
}

uint32_t Switch::input_held_blocks(uint16_t in_port, uint8_t vl, uint64_t now_ps, bool& releasing) const {
  const Port& in = ports_.at(in_port);
  const link::RxBuffers& b = in.buffers;
  return b.used_blocks(vl) - b.released_by(vl, now_ps, releasing) + in.blocks_on_cable[vl];
}

void Switch::finish() {
  const uint64_t now = agenda_.now_ps();
  for (Port& p : ports_) p.credit_wait.close_all(now, p.counters);
}

}  // namespace ibvp::sw
