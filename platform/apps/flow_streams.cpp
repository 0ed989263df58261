#include "platform/apps/flow_streams.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "models/ib/packet.h"
#include "models/sim/sleep.h"
#include "models/sim/timed_queue.h"
#include "models/link/link_rate.h"
#include "platform/workload/on_off.h"
#include "platform/workload/video_frames.h"
#include "platform/workload/video_source.h"

namespace ibvp::apps {

using namespace verbs;

namespace {

QpType qp_type(FlowTransport t) {
  switch (t) {
    case FlowTransport::uc: return QpType::uc;
    case FlowTransport::ud: return QpType::ud;
    case FlowTransport::rc: break;
  }
  return QpType::rc;
}

}  // namespace

FlowStreams::FlowStreams(const Scenario& s, const std::vector<driver::HostNode*>& host_of_node)
    : hca_(s.hca_host), transport_(qp_type(s.hca_host.flow_transport)) {
  const topo::Topology& t = s.topology;
  recv_depth_ = recv_depth(hca_);
  buffer_bytes_ = buffer_bytes(s);
  std::map<uint32_t, Host*> by_node;
  auto host = [&](uint32_t node) {
    Host*& h = by_node[node];
    if (!h) {
      hosts_.push_back(std::make_unique<Host>());
      h = hosts_.back().get();
      h->node = host_of_node.at(node);
    }
    return h;
  };
  flows_.reserve(s.flows.size());  // hosts point into it
  for (size_t i = 0; i < s.flows.size(); ++i) {
    const FlowConfig& fc = s.flows[i];
    Flow f;
    f.index = i;
    f.cfg = fc;
    const uint32_t src = t.find(fc.src);
    f.src = host(src);
    f.src_lid = t.nodes[src].lid;
    for (const std::string& r : receivers(s, fc)) f.dsts.push_back(host(t.find(r)));
    const auto group = std::find_if(s.multicast.begin(), s.multicast.end(),
                                    [&](const MulticastGroupConfig& g) { return g.name == fc.dst; });
    f.multicast = group != s.multicast.end();
    if (f.multicast) {
      // One sender per group: its source tree's MLID is the group's (docs/multicast.md).
      f.dlid = static_cast<uint16_t>(group->mlid);
    } else {
      f.dst = f.dsts.front();
      f.dlid = static_cast<uint16_t>(t.nodes[t.find(fc.dst)].lid + fc.dlid_offset);
    }
    // The stream fabric-only sources draw from (Fabric::build_flows), so the ON/OFF periods
    // and Poisson arrivals are the same under either endpoint model.
    f.rng = sim::Rng(s.seed, "flow/" + std::to_string(i) + "/" + fc.name);
    f.seed = s.seed;
    ib::Packet shape;
    shape.bth.opcode = ib::Opcode::ud_send_only;
    shape.payload_bytes = fc.payload_bytes;
    const link::LinkRate rate(t.links.at(static_cast<size_t>(t.link_at(src, 1))).cfg);
    f.packet_time_ps = rate.serialization_ps(shape.wire_bytes());
    flows_.push_back(std::move(f));
  }
  for (Flow& f : flows_) {
    f.src->out.push_back(&f);
    for (Host* d : f.dsts) d->in.push_back(&f);
  }
  if (s.mix.enabled) {
    std::vector<double> link;
    for (const FlowConfig& fc : s.flows)
      link.push_back(link::LinkRate(t.links.at(static_cast<size_t>(t.link_at(t.find(fc.src), 1))).cfg).data_bits_per_s() /
                     8.0);
    const std::vector<workload::MixPhase> phases = workload::mix_phases(s.mix, s.duration.value());
    const std::vector<workload::FlowMix> mix = workload::plan_mix(s.mix, s.flows, link, s.duration.value());
    for (Flow& f : flows_) {
      const workload::FlowMix& m = mix[f.index];
      for (size_t p = 0; p < phases.size(); ++p) {
        f.phase_end_ps.push_back(phases[p].end_ps);
        if (m.cls == workload::MixClass::best_effort)
          f.load_phases.push_back(
              {phases[p].end_ps, m.load[p] > 0 ? static_cast<double>(f.packet_time_ps) / m.load[p] : 0.0});
      }
      if (m.cls == workload::MixClass::real_time) f.active = m.active;
    }
  }
  for (auto& h : hosts_) h->plan = plan(hca_, h->out.size(), h->in.size(), buffer_bytes_);
  // The programs never return (a receiver waits for its next completion, a sender for its
  // next send slot): the Fabric unwinds them when the run is over (Fabric::~Fabric).
  for (auto& h : hosts_) h->node->cpu.run([this, hp = h.get()] { host_program(*hp); });
  for (Flow& f : flows_) f.src->node->cpu.run([this, fp = &f] { flow_program(*fp); });
}

FlowStreams::~FlowStreams() = default;

uint32_t FlowStreams::recv_depth(const HcaHostConfig& hca) {
  // The receive queue of a flow holds twice what its source keeps posted, and at least 128:
  // the destination's program reposts in batches and must stay ahead of the wire.
  return std::max<uint32_t>(2 * hca.flow_depth, 128);
}

uint32_t FlowStreams::buffer_bytes(const Scenario& s) {
  // One buffer per host, as large as the largest message plus UD's GRH.
  uint32_t bytes = 0;
  for (const FlowConfig& fc : s.flows) bytes = std::max(bytes, fc.payload_bytes + IBVP_UD_GRH_BYTES);
  return bytes;
}

HostMemoryPlan FlowStreams::plan(const HcaHostConfig& hca, size_t out, size_t in, uint32_t buffer_bytes) {
  // create()'s objects, in its order.
  HostMemoryPlan p;
  const uint32_t depth = recv_depth(hca);
  if (in > 0) p.cq(static_cast<int>(std::min<uint64_t>(uint64_t{depth} * in, uint64_t{1} << 22)));
  for (size_t i = 0; i < out; ++i) {
    p.cq(static_cast<int>(hca.flow_depth));
    QpCap cap;
    cap.max_send_wr = hca.flow_depth;
    cap.max_recv_wr = 1;
    p.qp(cap);
  }
  for (size_t i = 0; i < in; ++i) {
    QpCap cap;
    cap.max_send_wr = 1;
    cap.max_recv_wr = depth;
    p.qp(cap);
  }
  p.buffer(buffer_bytes);
  return p;
}

std::vector<std::string> FlowStreams::receivers(const Scenario& s, const FlowConfig& fc) {
  for (const MulticastGroupConfig& g : s.multicast)
    if (g.name == fc.dst) return g.members;
  return {fc.dst};
}

uint64_t FlowStreams::host_memory_bytes(const Scenario& s) {
  std::map<std::string, std::pair<size_t, size_t>> flows_of;  // host: (out, in)
  for (const FlowConfig& fc : s.flows) {
    ++flows_of[fc.src].first;
    for (const std::string& r : receivers(s, fc)) ++flows_of[r].second;
  }
  const uint32_t buffer = buffer_bytes(s);
  uint64_t most = 0;
  for (const auto& [host, n] : flows_of) most = std::max(most, plan(s.hca_host, n.first, n.second, buffer).end());
  return most;
}

void FlowStreams::fail(const std::string& why) {
  sim::catch_up();  // other threads hear of it at this program's time
  if (error_.empty()) error_ = why;
  barrier_event_.notify(sc_core::SC_ZERO_TIME);
}

void FlowStreams::barrier(int phase) {
  sim::catch_up();  // the others go on at this program's time
  ++arrived_[phase];
  barrier_event_.notify(sc_core::SC_ZERO_TIME);
  while (arrived_[phase] < hosts_.size() && error_.empty()) sc_core::wait(barrier_event_);
}

bool FlowStreams::create(Host& h) {
  const std::string name = h.node->name();
  h.ctx = open_device(h.node->cpu, HostMemoryPlan::kDriverBase, h.plan.driver_bytes());
  if (!h.ctx) return fail("cannot open the HCA of " + name), false;
  h.ctx->set_observer(h.node->hca.observer(), h.node->hca.node());
  PortAttr port;
  query_port(*h.ctx, 1, port);
  h.lid = port.lid;
  h.pd = alloc_pd(*h.ctx);
  h.mr = reg_mr(h.pd, h.plan.buffer_address(), buffer_bytes_, ACCESS_LOCAL_WRITE);
  if (!h.mr) return fail("cannot register the flows' buffer on " + name), false;
  if (!h.in.empty()) {
    h.recv_cq = create_cq(*h.ctx, static_cast<int>(recv_depth_ * h.in.size()));
    if (!h.recv_cq) return fail("cannot create the receive CQ of " + name), false;
  }
  for (Flow* f : h.out) {
    f->send_cq = create_cq(*h.ctx, static_cast<int>(hca_.flow_depth));
    QpInitAttr a;
    a.send_cq = f->send_cq;
    // A send-only QP still needs a receive CQ; its receive queue stays empty.
    a.recv_cq = f->send_cq;
    a.qp_type = transport_;
    a.cap.max_send_wr = hca_.flow_depth;
    a.cap.max_recv_wr = 1;
    a.sq_sig_all = true;
    a.ipd = f->cfg.ipd;
    // Seed 003 Sec. 3.3.1: the QoS NIC's prioritized doorbells and VirtualClock (sched=vc),
    // from the flow's doorbell_class and reserved rate (whole Mb/s, at least 1 when it has one).
    a.doorbell_class = static_cast<uint32_t>(std::max<int32_t>(0, f->cfg.doorbell_class));
    const uint64_t reserved = workload::reserved_rate_bps(f->cfg);
    a.reserved_rate_mbps = reserved ? static_cast<uint32_t>(std::max<uint64_t>(1, (reserved + 500'000) / 1'000'000)) : 0;
    f->send_qp = f->send_cq ? create_qp(h.pd, a) : nullptr;
    if (!f->send_qp) return fail("cannot create the send QP of flow " + f->cfg.name + " on " + name), false;
    h.node->hca.tag_flow(f->send_qp->qp_num, static_cast<uint32_t>(f->index), reserved);
  }
  for (Flow* f : h.in) {
    QpInitAttr a;
    a.send_cq = h.recv_cq;  // sends never happen on it
    a.recv_cq = h.recv_cq;
    a.qp_type = transport_;
    a.cap.max_send_wr = 1;
    a.cap.max_recv_wr = recv_depth_;
    QueuePair* qp = create_qp(h.pd, a);
    if (!qp) return fail("cannot create the receive QP of flow " + f->cfg.name + " on " + name), false;
    h.in_qp.push_back(qp);
    if (!f->multicast) f->recv_qp = qp;
  }
  return true;
}

bool FlowStreams::connect(Flow& f, QueuePair* qp, uint16_t dlid, uint32_t dest_qpn) {
  const bool ud = transport_ == QpType::ud;
  const bool rc = transport_ == QpType::rc;
  QpAttr a;
  a.qp_state = QpState::init;
  a.qkey = kQkey;
  a.qp_access_flags = ACCESS_LOCAL_WRITE;
  int r = modify_qp(qp, a, QP_STATE | QP_PKEY_INDEX | QP_PORT | (ud ? QP_QKEY : QP_ACCESS_FLAGS));
  a.qp_state = QpState::rtr;
  uint32_t mask = QP_STATE;
  if (!ud) {
    a.ah_attr.dlid = dlid;
    a.ah_attr.sl = f.cfg.sl;
    a.path_mtu = mtu_from_bytes(hca_.flow_mtu);
    a.dest_qp_num = dest_qpn;
    a.rq_psn = 0;
    mask |= QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN;
    if (rc) mask |= QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER;
  }
  if (r == 0) r = modify_qp(qp, a, mask);
  a.qp_state = QpState::rts;
  a.sq_psn = 0;
  mask = QP_STATE | QP_SQ_PSN;
  if (rc) mask |= QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC;
  if (r == 0) r = modify_qp(qp, a, mask);
  if (r != 0) return fail("cannot bring a QP of flow " + f.cfg.name + " to RTS"), false;
  return true;
}

bool FlowStreams::post_receives(Host& h, size_t k, uint32_t count) {
  const Flow& f = *h.in[k];
  std::vector<RecvWr> wrs(count);
  for (uint32_t i = 0; i < count; ++i) {
    wrs[i].wr_id = f.index;
    wrs[i].sg = {h.plan.buffer_address(), buffer_bytes_, h.mr->lkey};
    wrs[i].next = i + 1 < count ? &wrs[i + 1] : nullptr;
  }
  if (post_recv(h.in_qp[k], wrs.data()) != 0)
    return fail("cannot post receives for flow " + f.cfg.name + " on " + h.node->name()), false;
  return true;
}

void FlowStreams::host_program(Host& h) {
  const bool created = create(h);
  barrier(0);
  if (!created || !error_.empty()) return;
  // Each end learns the other's QPN and LID here, as perftest's TCP exchange would tell it.
  bool ok = true;
  for (Flow* f : h.out) {
    ok = ok && connect(*f, f->send_qp, f->dlid, f->multicast ? IBVP_MULTICAST_QPN : f->recv_qp->qp_num);
    if (ok && transport_ == QpType::ud) {
      f->ah = create_ah(h.pd, AhAttr{f->dlid, f->cfg.sl, 1});
      if (!f->ah) fail("cannot create the address handle of flow " + f->cfg.name), ok = false;
    }
  }
  for (size_t k = 0; k < h.in.size(); ++k) {
    Flow* f = h.in[k];
    ok = ok && connect(*f, h.in_qp[k], f->src_lid, f->send_qp->qp_num) && post_receives(h, k, recv_depth_);
    // A member joins the group before any packet is sent to it (the barrier below).
    if (ok && f->multicast && attach_mcast(h.in_qp[k], f->dlid) != 0)
      fail("cannot attach the receive QP of flow " + f->cfg.name + " on " + h.node->name() + " to its MLID"), ok = false;
  }
  barrier(1);
  if (!ok || !error_.empty() || h.in.empty()) return;
  receive_loop(h);
}

void FlowStreams::receive_loop(Host& h) {
  std::map<uint32_t, size_t>& by_qpn = h.in_by_qpn;
  for (size_t k = 0; k < h.in.size(); ++k) by_qpn[h.in_qp[k]->qp_num] = k;
  std::map<size_t, uint32_t>& repost = h.repost;
  Wc wc[32];
  for (;;) {
    int k = poll_cq(h.recv_cq, 32, wc);
    if (k == 0) k = poll_cq_wait(h.recv_cq, wc[0]);
    repost.clear();
    for (int i = 0; i < k; ++i) {
      const auto it = by_qpn.find(wc[i].qp_num);
      if (it == by_qpn.end()) continue;
      Flow* f = h.in[it->second];
      if (wc[i].status != WcStatus::success)
        return fail("flow " + f->cfg.name + ": a receive on " + std::string(h.node->name()) +
                    " completed with status " + wc_status_str(wc[i].status));
      ++f->received;
      ++repost[it->second];
    }
    for (const auto& [k, n] : repost)
      if (!post_receives(h, k, n)) return;
  }
}

void FlowStreams::flow_program(Flow& f) {
  // Wait for every host's QPs to be connected and receives posted.
  sim::catch_up();
  while (arrived_[1] < hosts_.size() && error_.empty()) sc_core::wait(barrier_event_);
  if (!error_.empty()) return;
  if (gate_.opened) {
    sim::catch_up();
    while (!gate_.open()) sc_core::wait(*gate_.opened);
    const sc_core::sc_time epoch = sc_core::sc_time::from_value(gate_.epoch_ps());
    f.cfg.start += epoch;
    if (f.cfg.stop != sc_core::sc_max_time()) f.cfg.stop += epoch;
  }
  sim::advance_to(f.cfg.start.value());
  if (f.cfg.generator == GeneratorKind::saturating) run_saturating(f);
  else if (f.cfg.generator == GeneratorKind::video) run_video(f);
  else run_open_loop(f);
}

bool FlowStreams::post_message(Flow& f, uint32_t bytes) {
  SendWr wr;
  wr.wr_id = f.completed + f.outstanding;
  wr.sg = {f.src->plan.buffer_address(), bytes > 0 ? bytes : f.cfg.payload_bytes, f.src->mr->lkey};
  wr.opcode = WrOpcode::send;
  wr.send_flags = SEND_SIGNALED;
  if (f.ah) {
    wr.ud.ah = f.ah;
    // IBA 10.5: a datagram to an MLID goes to DestQP 0xFFFFFF, every attached QP.
    wr.ud.remote_qpn = f.multicast ? IBVP_MULTICAST_QPN : f.recv_qp->qp_num;
    wr.ud.remote_qkey = kQkey;
  }
  if (post_send(f.send_qp, &wr) != 0) return fail("flow " + f.cfg.name + ": cannot post a SEND"), false;
  ++f.outstanding;
  return true;
}

bool FlowStreams::reap(Flow& f, bool wait) {
  Wc wc[16];
  int k = poll_cq(f.send_cq, 16, wc);
  if (k == 0 && wait) k = poll_cq_wait(f.send_cq, wc[0]);
  for (int i = 0; i < k; ++i) {
    if (wc[i].status != WcStatus::success) {
      fail("flow " + f.cfg.name + ": a SEND from " + std::string(f.src->node->name()) + " completed with status " +
           wc_status_str(wc[i].status));
      return false;
    }
    ++f.completed;
    --f.outstanding;
    // A video piece is one packet, its PSN its sequence number (run_video): done with its tag.
    if (f.cfg.generator == GeneratorKind::video)
      f.src->node->hca.untag_frame(f.send_qp->qp_num, static_cast<uint32_t>(wc[i].wr_id));
  }
  return true;
}

// Keeps flow_depth messages posted while the flow is on; off periods let the QP drain.
void FlowStreams::run_saturating(Flow& f) {
  const uint64_t stop = f.cfg.stop.value();
  std::optional<workload::OnOffPeriods> periods;
  if (f.cfg.on_off_mean.value() > 0) periods.emplace(f.cfg.start.value(), static_cast<double>(f.cfg.on_off_mean.value()), f.rng);
  for (;;) {
    const uint64_t now = sim::TimedQueue::now_ps();
    if (now >= stop || !error_.empty()) return;
    if (periods && !periods->on_at(now)) {
      sim::advance_to(std::min(periods->period_end_ps(), stop));
      if (!reap(f, false)) return;
      continue;
    }
    while (f.outstanding < hca_.flow_depth)
      if (!post_message(f)) return;
    if (!reap(f, true)) return;
  }
}

bool FlowStreams::Flow::active_at(uint64_t t_ps) const {
  if (active.empty()) return true;
  for (size_t p = 0; p < phase_end_ps.size(); ++p)
    if (t_ps < phase_end_ps[p]) return active[p];
  return false;  // past the last phase: the end of the run
}

// One message per generation time (constant spacing or exponential), as fabric-only
// sources generate packets; a full send queue delays the post until a slot frees. Under a
// mix the rate follows the phases (workload::next_phased_time, as FlowSource).
void FlowStreams::run_open_loop(Flow& f) {
  const uint64_t stop = f.cfg.stop.value();
  const double mean = static_cast<double>(f.packet_time_ps) / f.cfg.load;
  const bool poisson = f.cfg.generator == GeneratorKind::poisson;
  const bool phased = !f.load_phases.empty();
  double next = phased ? workload::next_phased_time(f.load_phases, static_cast<double>(f.cfg.start.value()), true,
                                                    poisson, f.rng)
                       : static_cast<double>(f.cfg.start.value()) + (poisson ? f.rng.exponential(mean) : 0.0);
  for (;;) {
    if (!(next < static_cast<double>(stop))) return;
    const uint64_t g = static_cast<uint64_t>(std::ceil(next));
    if (g >= stop || !error_.empty()) return;
    sim::advance_to(g);
    if (!reap(f, false)) return;
    while (f.outstanding >= hca_.flow_depth)
      if (!reap(f, true)) return;
    if (!post_message(f)) return;
    if (phased) next = workload::next_phased_time(f.load_phases, next, false, poisson, f.rng);
    else next += poisson ? f.rng.exponential(mean) : mean;
  }
}

// Frame k is created at start + k * frame_period and posted then as SENDs of at most
// payload_bytes, one packet each: RTP's packetization of a video frame (RFC 2250 Sec. 3,
// RFC 3550), which is also what UD allows (a datagram fits the path MTU). The frame is
// delivered when its last packet reaches the destination's port, as on fabric-only
// endpoints. A host that is still posting an earlier frame posts the next one late, never
// skips it: the lateness shows in the deadline metrics.
void FlowStreams::run_video(Flow& f) {
  const uint64_t start = f.cfg.start.value(), stop = f.cfg.stop.value(), period = f.cfg.frame_period.value();
  workload::VideoFrameSizes sizes(f.cfg, f.seed);
  hca::Hca& hca = f.src->node->hca;
  // The default firmware numbers a QP's packets from sq_psn 0, one PSN per packet (IBA
  // 9.7.1 for RC and UC; UD alike): a one-packet message's PSN is its sequence number.
  uint64_t posted = 0;
  for (uint32_t k = 0; k != ib::kNoFrame; ++k) {
    const uint64_t created = start + uint64_t{k} * period;
    if (created >= stop || !error_.empty()) return;
    const uint32_t frame_bytes = sizes.next();
    if (!f.active_at(created)) {
      // The mix has the stream off: the frame is not sent; after the last phase, none is.
      if (created >= f.phase_end_ps.back()) return;
      continue;
    }
    sim::advance_to(created);
    if (!reap(f, false)) return;
    const workload::FrameSplit split = workload::split_frame(frame_bytes, f.cfg.payload_bytes);
    for (uint32_t i = 0; i < split.packets; ++i) {
      while (f.outstanding >= hca_.flow_depth)
        if (!reap(f, true)) return;
      hca.tag_frame(f.send_qp->qp_num, static_cast<uint32_t>(posted), {k, split.packets, created, i, sizes.type()});
      if (!post_message(f, i + 1 < split.packets ? split.full_packet_bytes : split.last_packet_bytes)) return;
      ++posted;
    }
  }
}

}  // namespace ibvp::apps
