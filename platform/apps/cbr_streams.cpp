#include "platform/apps/cbr_streams.h"

#include <algorithm>
#include <map>

#include "models/ib/packet.h"
#include "models/sim/sleep.h"
#include "models/sim/timed_queue.h"

namespace ibvp::apps {

using namespace verbs;

CbrStreams::CbrStreams(const Scenario& s, const workload::CbrConnections& conns,
                       const std::vector<std::pair<uint32_t, workload::CbrSource*>>& sources,
                       const std::vector<driver::HostNode*>& host_of_node)
    : conns_(conns),
      buffer_bytes_(s.connections.payload_bytes + IBVP_UD_GRH_BYTES) {
  host_of_node_.assign(host_of_node.size(), nullptr);
  auto host = [&](uint32_t node) {
    Host*& h = host_of_node_.at(node);
    if (!h) {
      hosts_.push_back(std::make_unique<Host>());
      h = hosts_.back().get();
      h->node = node;
      h->hca_host = host_of_node.at(node);
    }
    return h;
  };
  // Hosts in node order, so QPNs and set-up times do not depend on the connections' order.
  std::vector<bool> used(host_of_node.size(), false);
  for (const auto& [node, src] : sources) used.at(node) = true;
  for (const workload::CbrConnection& k : conns) used.at(k.dst_node) = true;
  for (uint32_t n = 0; n < used.size(); ++n)
    if (used[n]) host(n);
  for (const auto& [node, src] : sources) {
    Sender snd;
    snd.source = src;
    snd.sl = src->sl;
    host_of_node_[node]->senders.push_back(snd);
  }
  for (auto& h : hosts_)
    std::sort(h->senders.begin(), h->senders.end(), [](const Sender& a, const Sender& b) { return a.sl < b.sl; });
  for (const workload::CbrConnection& k : conns) host_of_node_[k.dst_node]->receives = true;
  ah_.assign(conns.size(), nullptr);
  for (auto& h : hosts_) h->plan = plan(h->senders.size(), h->receives, buffer_bytes_);
  // The programs never return while a run goes on (a receiver waits for its next
  // completion): the Fabric unwinds them at the end (Fabric::~Fabric).
  for (auto& h : hosts_) {
    h->hca_host->cpu.run([this, hp = h.get()] { host_program(*hp); });
    if (!h->senders.empty()) h->hca_host->cpu.run([this, hp = h.get()] { send_program(*hp); });
  }
}

CbrStreams::~CbrStreams() = default;

HostMemoryPlan CbrStreams::plan(size_t senders, bool receives, uint32_t buffer_bytes) {
  // create()'s objects, in its order.
  HostMemoryPlan p;
  for (size_t i = 0; i < senders; ++i) {
    p.cq(static_cast<int>(kSendDepth));
    QpCap cap;
    cap.max_send_wr = kSendDepth;
    cap.max_recv_wr = 1;
    p.qp(cap);
  }
  if (receives) {
    p.cq(static_cast<int>(kRecvDepth));
    QpCap cap;
    cap.max_send_wr = 1;
    cap.max_recv_wr = kRecvDepth;
    p.qp(cap);
  }
  p.buffer(buffer_bytes);
  return p;
}

uint64_t CbrStreams::host_memory_bytes(const Scenario& s) {
  return plan(s.connections.service_levels.size(), true, s.connections.payload_bytes + IBVP_UD_GRH_BYTES).end();
}

uint64_t CbrStreams::posted() const {
  uint64_t n = 0;
  for (const auto& h : hosts_)
    for (const Sender& s : h->senders) n += s.posted;
  return n;
}

uint64_t CbrStreams::received() const {
  uint64_t n = 0;
  for (const auto& h : hosts_) n += h->received;
  return n;
}

void CbrStreams::fail(const std::string& why) {
  sim::catch_up();  // other threads hear of it at this program's time
  if (error_.empty()) error_ = why;
  barrier_event_.notify(sc_core::SC_ZERO_TIME);
}

void CbrStreams::barrier(int phase) {
  sim::catch_up();  // the others go on at this program's time
  ++arrived_[phase];
  barrier_event_.notify(sc_core::SC_ZERO_TIME);
  while (arrived_[phase] < hosts_.size() && error_.empty()) sc_core::wait(barrier_event_);
}

bool CbrStreams::create(Host& h) {
  const std::string name = h.hca_host->name();
  h.ctx = open_device(h.hca_host->cpu, HostMemoryPlan::kDriverBase, h.plan.driver_bytes());
  if (!h.ctx) return fail("cannot open the HCA of " + name), false;
  h.ctx->set_observer(h.hca_host->hca.observer(), h.hca_host->hca.node());
  h.pd = alloc_pd(*h.ctx);
  h.mr = reg_mr(h.pd, h.plan.buffer_address(), buffer_bytes_, ACCESS_LOCAL_WRITE);
  if (!h.mr) return fail("cannot register the connections' buffer on " + name), false;
  for (Sender& s : h.senders) {
    s.cq = create_cq(*h.ctx, static_cast<int>(kSendDepth));
    QpInitAttr a;
    a.send_cq = s.cq;
    a.recv_cq = s.cq;  // a send-only QP still needs one; its receive queue stays empty
    a.qp_type = QpType::ud;
    a.cap.max_send_wr = kSendDepth;
    a.cap.max_recv_wr = 1;
    s.qp = s.cq ? create_qp(h.pd, a) : nullptr;
    if (!s.qp) return fail("cannot create the SL " + std::to_string(s.sl) + " send QP of " + name), false;
  }
  if (h.receives) {
    h.recv_cq = create_cq(*h.ctx, static_cast<int>(kRecvDepth));
    QpInitAttr a;
    a.send_cq = h.recv_cq;  // sends never happen on it
    a.recv_cq = h.recv_cq;
    a.qp_type = QpType::ud;
    a.cap.max_send_wr = 1;
    a.cap.max_recv_wr = kRecvDepth;
    h.recv_qp = h.recv_cq ? create_qp(h.pd, a) : nullptr;
    if (!h.recv_qp) return fail("cannot create the receiving QP of " + name), false;
  }
  return true;
}

// UD: RESET -> INIT (Q_Key) -> RTR -> RTS (SQ PSN 0), IBA 10.3.1; no path, the AH has it.
bool CbrStreams::connect(Host& h, QueuePair* qp) {
  QpAttr a;
  a.qp_state = QpState::init;
  a.qkey = kQkey;
  int r = modify_qp(qp, a, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_QKEY);
  a.qp_state = QpState::rtr;
  if (r == 0) r = modify_qp(qp, a, QP_STATE);
  a.qp_state = QpState::rts;
  a.sq_psn = 0;
  if (r == 0) r = modify_qp(qp, a, QP_STATE | QP_SQ_PSN);
  if (r != 0) return fail("cannot bring a UD QP of " + std::string(h.hca_host->name()) + " to RTS"), false;
  return true;
}

bool CbrStreams::post_receives(Host& h, uint32_t count) {
  std::vector<RecvWr> wrs(count);
  for (uint32_t i = 0; i < count; ++i) {
    wrs[i].sg = {h.plan.buffer_address(), buffer_bytes_, h.mr->lkey};
    wrs[i].next = i + 1 < count ? &wrs[i + 1] : nullptr;
  }
  if (post_recv(h.recv_qp, wrs.data()) != 0)
    return fail("cannot post receives on " + std::string(h.hca_host->name())), false;
  return true;
}

void CbrStreams::host_program(Host& h) {
  const bool created = create(h);
  barrier(0);
  if (!created || !error_.empty()) return;
  bool ok = true;
  for (Sender& s : h.senders) ok = ok && connect(h, s.qp);
  // One address handle per (DLID, SL) the host sends to.
  std::map<std::pair<uint16_t, uint8_t>, AddressHandle*> ahs;
  for (uint32_t c = 0; ok && c < conns_.size(); ++c) {
    const workload::CbrConnection& k = conns_[c];
    if (k.src_node != h.node) continue;
    AddressHandle*& ah = ahs[{k.dlid, k.sl}];
    if (!ah) ah = create_ah(h.pd, AhAttr{k.dlid, k.sl, 1});
    if (!ah) fail("cannot create an address handle to DLID " + std::to_string(k.dlid) + " on " + h.hca_host->name()), ok = false;
    ah_[c] = ah;
  }
  if (h.receives) ok = ok && connect(h, h.recv_qp) && post_receives(h, kRecvDepth);
  barrier(1);
  if (!ok || !error_.empty() || !h.receives) return;
  receive_loop(h);
}

// Receives are reposted kRepostBatch at a time (one doorbell, one WQE fetch by the
// firmware for the lot), as drivers batch them; the queue keeps kRecvDepth - kRepostBatch
// posted at least, many times what a 1X link delivers while the host reposts.
void CbrStreams::receive_loop(Host& h) {
  Wc wc[32];
  uint32_t consumed = 0;
  for (;;) {
    int k = poll_cq(h.recv_cq, 32, wc);
    if (k == 0) k = poll_cq_wait(h.recv_cq, wc[0]);
    for (int i = 0; i < k; ++i)
      if (wc[i].status != WcStatus::success)
        return fail("a connection's receive on " + std::string(h.hca_host->name()) + " completed with status " +
                    wc_status_str(wc[i].status));
    h.received += static_cast<uint64_t>(k);
    consumed += static_cast<uint32_t>(k);
    if (consumed >= kRepostBatch) {
      if (!post_receives(h, consumed)) return;
      consumed = 0;
    }
  }
}

// Frees send queue slots: a completion covers every WQE before it (its WQE counter).
bool CbrStreams::reap(Host& h, Sender& s, bool wait) {
  Wc wc[8];
  int k = poll_cq(s.cq, 8, wc);
  if (k == 0 && wait) k = poll_cq_wait(s.cq, wc[0]);
  for (int i = 0; i < k; ++i)
    if (wc[i].status != WcStatus::success)
      return fail("a connection's SEND from " + std::string(h.hca_host->name()) + " completed with status " +
                  wc_status_str(wc[i].status)),
             false;
  return true;
}

void CbrStreams::send_program(Host& h) {
  // Wait for every host's QPs to be connected and receives posted.
  sim::catch_up();
  while (arrived_[1] < hosts_.size() && error_.empty()) sc_core::wait(barrier_event_);
  if (!error_.empty()) return;
  hca::Hca& hca = h.hca_host->hca;
  for (;;) {
    // The next packet due over the host's SLs; ties go to the lower SL (senders are in SL order).
    Sender* next = nullptr;
    uint64_t due = ep::TrafficSource::kNever;
    for (Sender& s : h.senders) {
      const uint64_t t = s.source->next_ready_ps(sim::TimedQueue::now_ps());
      if (t < due) due = t, next = &s;
    }
    if (!next || !error_.empty()) return;
    sim::advance_to(due);
    Sender& s = *next;
    const uint32_t used = s.qp->sq_head - s.qp->sq_tail;
    if (used >= kSendDepth / 2 && !reap(h, s, false)) return;
    while (s.qp->sq_head - s.qp->sq_tail >= kSendDepth)
      if (!reap(h, s, true)) return;
    ep::PacketSpec spec;
    s.source->take(std::max(sim::TimedQueue::now_ps(), due), spec);
    const workload::CbrConnection& k = conns_[spec.connection];
    const Host* dst = host_of_node_[k.dst_node];
    SendWr wr;
    wr.wr_id = s.posted;
    wr.sg = {h.plan.buffer_address(), k.payload_bytes, h.mr->lkey};
    wr.opcode = WrOpcode::send;
    wr.send_flags = s.posted % kSignalEvery == kSignalEvery - 1 ? uint32_t{SEND_SIGNALED} : 0u;
    wr.ud.ah = ah_[spec.connection];
    wr.ud.remote_qpn = dst->recv_qp->qp_num;
    wr.ud.remote_qkey = kQkey;
    // One packet per SEND, numbered from sq_psn 0 (IBA 9.7.1): its PSN is its count.
    hca.tag_connection(s.qp->qp_num, s.posted, spec.connection, spec.created_ps, spec.reserved_bps);
    if (post_send(s.qp, &wr) != 0) return fail("cannot post a connection's SEND on " + std::string(h.hca_host->name()));
    ++s.posted;
  }
}

}  // namespace ibvp::apps
