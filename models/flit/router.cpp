#include "models/flit/router.h"

#include <algorithm>
#include <cassert>
#include <tuple>

#include "models/flit/vc_allocator.h"

namespace ibvp::flit {

FlitRouter::FlitRouter(uint32_t node, uint16_t ports, const FlitConfig& cfg, std::vector<Message>& msgs)
    : node_(node),
      cfg_(cfg),
      cycle_ps_(cfg.flit_cycle_ps()),
      msgs_(msgs),
      inputs_(ports, std::vector<InputVc>(cfg.vcs_per_channel)),
      outputs_(ports, std::vector<OutputVc>(cfg.vcs_per_channel)),
      holder_in_(ports, std::vector<uint32_t>(cfg.vcs_per_channel, kNone)),
      vclock_(ports, sched::VirtualClock(cfg.vc_bits)),
      queued_(ports),
      block_vc_(ports, 0),
      block_left_(ports, 0) {
  for (auto& port : outputs_)
    for (OutputVc& o : port) o.init(cfg.vc_buffer_flits);
}

void FlitRouter::set_route(uint32_t dst, uint16_t out_port) {
  if (route_.size() <= dst) route_.resize(dst + 1, 0);
  route_[dst] = out_port;
}

void FlitRouter::enqueue_sched(uint16_t p, uint32_t connection, Cycle now) {
  std::vector<uint32_t>& q = queued_[p];
  if (q.size() <= connection) q.resize(connection + 1, 0);
  // Zhang's real-time term in ps, the unit of the unbounded counters (finite ones have none).
  if (q[connection]++ == 0) vclock_[p].activate(connection, now * cycle_ps_);
}

void FlitRouter::receive(uint16_t port, uint16_t vc, const Flit& f, Cycle now) {
  InputVc& v = in(port, vc);
  auto& buf = f.pool == Pool::extra ? v.extra : v.regular;
  buf.push_back({f, now, false});
  ++held_;
  // The sender held a credit for this slot: a buffer never holds more received flits than
  // its depth (generated dummies take no slot).
  assert(std::count_if(buf.begin(), buf.end(), [](const BufferedFlit& b) { return !b.generated; }) <=
         static_cast<long>(cfg_.vc_buffer_flits));
  enqueue_sched(port, msgs_[f.msg].connection, now);
}

// Sec. 3.2.1, stage 1: a header in the extra buffer starts the preemption of the message in
// the regular buffer.
void FlitRouter::start_preemption(uint16_t p, InputVc& v, Cycle now) {
  const BufferedFlit& h = v.extra.front();
  const uint8_t hc = h.flit.cls;
  VcRoute& r = v.regular_route;
  if (!r.allocated) {
    v.serving_extra = true;
    return;
  }
  const Message& m1 = msgs_[r.msg];
  if (m1.cls <= hc) {  // not lower priority: it finishes first
    v.preempt_pending = true;
    return;
  }
  if (!r.head_crossed) {
    // Its header holds an output VC but has not crossed: give the VC back, nothing to close.
    OutputVc& o = outputs_[r.out_port][r.out_vc];
    (r.pool == Pool::extra ? o.extra_owner : o.owner) = kNone;
    holder_in_[r.out_port][r.out_vc] = kNone;
    r = VcRoute{};
    v.serving_extra = true;
    counts_[m1.cls].preempted++;
    counts_[hc].preempting++;
    return;
  }
  // "The router first checks whether the tail flit of the lower priority message has passed
  // through the stage 1 decoder. If not, a dummy tail flit is created": the flit at the front
  // of the buffer that has passed stage 1 is committed and goes before it.
  size_t committed = 0;
  if (!v.regular.empty() && v.regular.front().flit.msg == r.msg && v.regular.front().arrived + 1 <= now)
    committed = 1;
  const bool tail_committed = committed && is_tail(v.regular.front().flit.kind);
  if (!tail_committed) {
    const uint32_t next_seq = committed ? v.regular.front().flit.seq + 1 : v.regular.empty() ? 0 : v.regular.front().flit.seq;
    Flit tail{r.msg, next_seq, FlitKind::tail, true, Pool::regular, m1.cls};
    Flit head{r.msg, next_seq, FlitKind::head, true, Pool::regular, m1.cls};
    // The dummy header stands for the history stack's routing information (made again when
    // the message resumes).
    auto at = v.regular.begin() + static_cast<long>(committed);
    at = v.regular.insert(at, BufferedFlit{head, now, true});
    v.regular.insert(at, BufferedFlit{tail, now, true});
    dummies_made_ += 2;
    held_ += 2;
    msgs_[r.msg].preemptions++;
    counts_[m1.cls].preempted++;
    counts_[hc].preempting++;
    enqueue_sched(p, m1.connection, now);
    enqueue_sched(p, m1.connection, now);
  }
  if (cfg_.acceleration && !v.accelerate) {
    v.accelerate = true;
    counts_[m1.cls].accelerated_preempted++;
  }
  v.preempt_pending = true;
}

void FlitRouter::allocate(Cycle now) {
  struct Req {
    uint8_t cls;
    Cycle arrived;
    uint16_t p, v;
  };
  std::vector<Req> reqs;
  for (uint16_t p = 0; p < inputs_.size(); ++p)
    for (uint16_t vc = 0; vc < inputs_[p].size(); ++vc) {
      InputVc& v = in(p, vc);
      if (cfg_.variant == Variant::preemptive && !v.serving_extra && !v.preempt_pending && !v.extra.empty() &&
          v.extra.front().arrived + 1 <= now)
        start_preemption(p, v, now);
      auto& buf = active(v);
      const VcRoute& r = active_route(v);
      if (r.allocated || buf.empty() || !is_head(buf.front().flit.kind)) continue;
      if (buf.front().arrived + 2 > now) continue;  // stages 1 and 2 first
      reqs.push_back({buf.front().flit.cls, buf.front().arrived, p, vc});
    }
  // Higher priority first, then the older header.
  std::sort(reqs.begin(), reqs.end(), [](const Req& a, const Req& b) {
    return std::tie(a.cls, a.arrived, a.p, a.v) < std::tie(b.cls, b.arrived, b.p, b.v);
  });
  for (const Req& q : reqs) {
    InputVc& v = in(q.p, q.v);
    const Flit& f = active(v).front().flit;
    const uint16_t out = route_.at(msgs_[f.msg].dst);
    const ResumeRoute* back = f.dummy ? v.resume_of(f.msg) : nullptr;
    const VcChoice c = back ? resume_vc(*back, f.cls) : choose_vc(cfg_, outputs_[out], f.cls, msgs_, false);
    if (!c.found) {
      // Fig. 2b: the output VC is held by a lower-priority message; accelerate it.
      if (c.has_blocker && cfg_.acceleration) {
        const uint32_t h = holder_in_[out][c.blocker];
        if (h != kNone) {
          InputVc& b = in(static_cast<uint16_t>(h / cfg_.vcs_per_channel), static_cast<uint16_t>(h % cfg_.vcs_per_channel));
          if (!b.accelerate) {
            b.accelerate = true;
            counts_[msgs_[outputs_[out][c.blocker].owner].cls].accelerated_blocking++;
          }
        }
      }
      continue;
    }
    OutputVc& o = outputs_[out][c.vc];
    (c.pool == Pool::extra ? o.extra_owner : o.owner) = f.msg;
    holder_in_[out][c.vc] = static_cast<uint32_t>(q.p) * cfg_.vcs_per_channel + q.v;
    VcRoute& r = active_route(v);
    r = VcRoute{true, false, out, c.vc, c.pool, now, f.msg};
  }
}

// A dummy header reopens its message's path through the output VC and buffer its earlier
// flits took (ResumeRoute): the next router holds those flits in that VC's buffer, and only
// one FIFO buffer keeps the two parts of the message in order there. While another message
// holds that VC the header waits; a lower-priority holder is accelerated (Fig. 2b).
VcChoice FlitRouter::resume_vc(const ResumeRoute& back, uint8_t cls) const {
  VcChoice c;
  const OutputVc& o = outputs_[back.out_port][back.out_vc];
  const uint32_t holder = back.pool == Pool::extra ? o.extra_owner : o.owner;
  if (holder == kNone) {
    c.vc = back.out_vc;
    c.pool = back.pool;
    c.found = true;
  } else if (msgs_[holder].cls > cls && back.pool == Pool::regular) {
    c.blocker = back.out_vc;
    c.has_blocker = true;
  }
  return c;
}

void FlitRouter::crossbar(Cycle now, Wire& wire) {
  cands_.clear();
  const uint16_t n = ports();
  const bool fcfs = cfg_.variant == Variant::traditional;
  const bool last = cfg_.unreserved == Unreserved::last;
  // Stamps are ps of simulated time (2^62 ps is 53 days): unreserved flits rank above them all.
  constexpr uint64_t kUnreservedTier = uint64_t{1} << 62;
  for (uint16_t p = 0; p < n; ++p) {
    const size_t first = cands_.size();
    for (uint16_t vc = 0; vc < inputs_[p].size(); ++vc) {
      InputVc& v = in(p, vc);
      auto& buf = active(v);
      const VcRoute& r = active_route(v);
      if (buf.empty() || !r.allocated) continue;
      const BufferedFlit& b = buf.front();
      if (is_head(b.flit.kind) ? r.allocated_at >= now : b.arrived + 1 > now) continue;
      if (outputs_[r.out_port][r.out_vc].credits[static_cast<size_t>(r.pool)] == 0) continue;
      const Message& m = msgs_[b.flit.msg];
      uint64_t key;
      if (fcfs) key = b.arrived;
      else if (v.accelerate) key = 0;
      else key = vclock_[p].stamp(m.connection, cfg_.vc_units(m.vtick_ps)) + 1 + (m.unreserved && last ? kUnreservedTier : 0);
      // Control ahead of VirtualClock (NP, P; TR has no priority): Sec. 4.2 gives control "the
      // highest priority", and a stamp would rank it behind a backlogged connection whose
      // auxVC lags the real time (docs/seed003.md, "Control's 68 us": 2.7 ms for one message).
      // Among control flits the stamp still orders. Control is never accelerated: it is never
      // the lower class that preemption or Fig. 2b accelerates.
      const uint8_t tier = !fcfs && b.flit.cls == 0 ? 0 : 1;
      const uint32_t tie = static_cast<uint32_t>((p + n - rr_) % n) * cfg_.vcs_per_channel + vc;
      cands_.push_back({tier, key, b.arrived, tie, p, vc, r.out_port});
    }
    // Block-level multiplexing (Fig. 6): the VC that holds this crossbar input keeps it.
    if (block_left_[p] > 0) {
      auto it = std::find_if(cands_.begin() + static_cast<long>(first), cands_.end(),
                             [&](const Candidate& c) { return c.vc == block_vc_[p]; });
      if (it == cands_.end()) {
        block_left_[p] = 0;
      } else {
        const Candidate keep = *it;
        cands_.resize(first);
        cands_.push_back(keep);
      }
    }
  }
  std::sort(cands_.begin(), cands_.end(),
            [](const Candidate& a, const Candidate& b) {
              return std::tie(a.tier, a.key, a.arrived, a.tie) < std::tie(b.tier, b.key, b.arrived, b.tie);
            });
  std::vector<bool> in_used(n, false), out_used(n, false);
  for (const Candidate& c : cands_) {
    if (in_used[c.in_port] || out_used[c.out_port]) continue;
    in_used[c.in_port] = out_used[c.out_port] = true;
    cross(c.in_port, c.vc, now, wire);
  }
  rr_ = static_cast<uint16_t>((rr_ + 1) % n);
}

void FlitRouter::cross(uint16_t p, uint16_t vc, Cycle now, Wire& wire) {
  InputVc& v = in(p, vc);
  auto& buf = active(v);
  VcRoute& r = active_route(v);
  const BufferedFlit b = buf.front();
  buf.pop_front();
  --held_;
  Flit f = b.flit;
  const Pool came_in = f.pool;
  f.pool = r.pool;
  OutputVc& o = outputs_[r.out_port][r.out_vc];
  o.sent(f);
  wire.send_flit(node_, r.out_port, r.out_vc, f, now + 1);  // stage 5, then the cable
  if (!b.generated) wire.send_credit(node_, p, vc, came_in, f.cls, now);
  ++crossed_;
  if (!f.dummy) counts_[f.cls].flits_crossed++;
  const Message& m = msgs_[f.msg];
  vclock_[p].charge(m.connection, cfg_.vc_units(m.vtick_ps));
  if (m.connection < queued_[p].size() && queued_[p][m.connection] > 0) --queued_[p][m.connection];
  if (block_left_[p] > 0 && block_vc_[p] == vc) {
    --block_left_[p];
  } else {
    block_vc_[p] = vc;
    block_left_[p] = cfg_.block_flits - 1;
  }
  if (is_head(f.kind)) r.head_crossed = true;
  if (!is_tail(f.kind)) return;
  // A dummy tail leaves the message's earlier flits in the far buffer of this output VC: its
  // dummy header, behind it in this buffer, must take the same one (ResumeRoute). Its real
  // tail ends it.
  auto back = std::find_if(v.resumes.begin(), v.resumes.end(), [&](const ResumeRoute& x) { return x.msg == f.msg; });
  assert(back == v.resumes.end() || (back->out_vc == r.out_vc && back->pool == r.pool));
  if (f.dummy && back == v.resumes.end()) v.resumes.push_back({f.msg, r.out_port, r.out_vc, r.pool});
  else if (!f.dummy && back != v.resumes.end()) v.resumes.erase(back);
  // The tail (real or dummy) releases the path (wormhole switching).
  (r.pool == Pool::extra ? o.extra_owner : o.owner) = kNone;
  holder_in_[r.out_port][r.out_vc] = kNone;
  r = VcRoute{};
  v.accelerate = false;
  block_left_[p] = 0;
  if (v.serving_extra) {
    // The preempting message is through; the regular buffer resumes, its dummy header
    // entering stage 1 now (routing and arbitration again).
    v.serving_extra = false;
    if (!v.regular.empty() && v.regular.front().generated) v.regular.front().arrived = now;
  } else if (v.preempt_pending) {
    v.preempt_pending = false;
    v.serving_extra = true;
  }
}

uint64_t FlitRouter::payload_flits_held() const {
  uint64_t n = 0;
  for (const auto& port : inputs_)
    for (const InputVc& v : port)
      for (const auto* buf : {&v.regular, &v.extra})
        for (const BufferedFlit& b : *buf) n += !b.flit.dummy;
  return n;
}

uint64_t FlitRouter::dummy_flits_held() const {
  uint64_t n = 0;
  for (const auto& port : inputs_)
    for (const InputVc& v : port)
      for (const auto* buf : {&v.regular, &v.extra})
        for (const BufferedFlit& b : *buf) n += b.flit.dummy;
  return n;
}

void FlitRouter::step(Cycle now, Wire& wire) {
  allocate(now);
  crossbar(now, wire);
}

}  // namespace ibvp::flit
