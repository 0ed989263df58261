#include "platform/apps/perftest.h"

#include "platform/apps/perftest_report.h"

#include "models/sim/sleep.h"
#include "models/sim/timed_queue.h"

#include <cstring>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace ibvp::apps {

using namespace verbs;

uint32_t Perftest::inline_flag(WrOpcode op, uint64_t bytes) const {
  // perftest -I: SENDs and WRITEs up to the inline size carry their data in the WQE.
  return op != WrOpcode::rdma_read && bytes <= cfg_.inline_size ? uint32_t{SEND_INLINE} : 0u;
}

HostMemoryPlan Perftest::plan(const PerftestConfig& cfg) {
  // The objects setup() creates, in its order.
  HostMemoryPlan p;
  const uint32_t sends = perftest_is_bw(cfg.test) ? cfg.tx_depth : 16;
  p.cq(static_cast<int>(sends * cfg.qps));
  p.cq(static_cast<int>(cfg.iterations * cfg.qps));
  QpCap cap;
  cap.max_send_wr = sends;
  cap.max_recv_wr = cfg.iterations;
  cap.max_inline_data = cfg.inline_size;
  for (uint32_t i = 0; i < cfg.qps; ++i) p.qp(cap);
  uint64_t largest = 0;
  for (uint64_t b : cfg.sizes) largest = std::max(largest, b);
  p.buffer(largest + kSpare);
  return p;
}

Perftest::Perftest(const PerftestConfig& cfg, driver::HostNode& client, driver::HostNode& server)
    : cfg_(cfg), plan_(plan(cfg)), buffer_(plan_.buffer_address()) {
  client_.host = &client;
  server_.host = &server;
  for (uint64_t b : cfg_.sizes) max_bytes_ = std::max(max_bytes_, b);
  client.cpu.run([this] { client_program(); });
  server.cpu.run([this] { server_program(); });
}

void Perftest::fail(const std::string& why) {
  if (error_.empty()) error_ = why;
  finished_ = true;
}

void Perftest::rendezvous(int side) {
  sim::catch_up();  // the other side goes on at this program's time
  const uint64_t mine = ++arrived_[side];
  rendezvous_event_.notify(sc_core::SC_ZERO_TIME);
  while (arrived_[1 - side] < mine && !finished_) sc_core::wait(rendezvous_event_);
}

bool Perftest::setup(Side& s) {
  s.ctx = open_device(s.host->cpu, HostMemoryPlan::kDriverBase, plan_.driver_bytes());
  if (!s.ctx) return fail("cannot open the HCA of " + std::string(s.host->name())), false;
  // The host's observer (a timeline, outputs.timeline) hears the driver side too.
  s.ctx->set_observer(s.host->hca.observer(), s.host->hca.node());
  PortAttr port;
  query_port(*s.ctx, 1, port);
  s.lid = port.lid;
  s.pd = alloc_pd(*s.ctx);
  s.mr = reg_mr(s.pd, buffer_, max_bytes_ + kSpare, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ);
  const bool bw = perftest_is_bw(cfg_.test);
  const uint32_t sends = bw ? cfg_.tx_depth : 16;
  // One send and one receive CQ for all QPs (perftest -q shares them too).
  s.send_cq = create_cq(*s.ctx, static_cast<int>(sends * cfg_.qps));
  // Every receive of one size is posted before the size starts (no send waits out an RNR
  // timer): the receive queues and CQ hold them all.
  s.recv_cq = create_cq(*s.ctx, static_cast<int>(cfg_.iterations * cfg_.qps));
  if (!s.mr || !s.send_cq || !s.recv_cq) return fail("cannot register memory or create CQs"), false;
  QpInitAttr a;
  a.send_cq = s.send_cq;
  a.recv_cq = s.recv_cq;
  a.qp_type = cfg_.qp_type == PerftestQpType::ud ? QpType::ud : QpType::rc;
  a.cap.max_send_wr = sends;
  a.cap.max_recv_wr = cfg_.iterations;
  a.cap.max_inline_data = cfg_.inline_size;
  for (uint32_t i = 0; i < cfg_.qps; ++i) {
    s.qps.push_back(create_qp(s.pd, a));
    if (!s.qps.back()) return fail("cannot create QP " + std::to_string(i + 1) + " of " + std::to_string(cfg_.qps)), false;
  }
  s.qp = s.qps[0];
  return true;
}

bool Perftest::connect(Side& s, const Side& peer) {
  for (size_t i = 0; i < s.qps.size(); ++i)
    if (!connect_qp(s, s.qps[i], peer.qps[i])) return false;
  s.ah = s.ahs.empty() ? nullptr : s.ahs[0];
  return true;
}

bool Perftest::connect_qp(Side& s, QueuePair* qp, const QueuePair* peer_qp) {
  const Side& peer = &s == &client_ ? server_ : client_;
  const bool ud = qp->qp_type == QpType::ud;
  QpAttr a;
  a.qp_state = QpState::init;
  a.qkey = kQkey;
  a.qp_access_flags = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ;
  int rc = modify_qp(qp, a, QP_STATE | QP_PKEY_INDEX | QP_PORT | (ud ? QP_QKEY : QP_ACCESS_FLAGS));
  a.qp_state = QpState::rtr;
  uint32_t mask = QP_STATE;
  if (!ud) {
    a.ah_attr.dlid = peer.lid;
    a.ah_attr.sl = cfg_.sl;
    a.path_mtu = mtu_from_bytes(cfg_.mtu);
    a.dest_qp_num = peer_qp->qp_num;
    a.rq_psn = 0;
    a.max_dest_rd_atomic = 16;
    mask |= QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER;
  }
  if (rc == 0) rc = modify_qp(qp, a, mask);
  a.qp_state = QpState::rts;
  a.sq_psn = 0;
  a.max_rd_atomic = 16;
  mask = QP_STATE | QP_SQ_PSN;
  if (!ud) mask |= QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC;
  if (rc == 0) rc = modify_qp(qp, a, mask);
  AddressHandle* ah = ud && rc == 0 ? create_ah(s.pd, AhAttr{peer.lid, cfg_.sl, 1}) : nullptr;
  if (ud) s.ahs.push_back(ah);
  if (rc != 0 || (ud && !ah)) return fail("cannot bring the QP of " + std::string(s.host->name()) + " to RTS"), false;
  return true;
}

bool Perftest::post_recvs(Side& s, uint64_t bytes, uint32_t count) {
  const uint32_t grh = s.qp->qp_type == QpType::ud ? IBVP_UD_GRH_BYTES : 0;
  std::vector<RecvWr> wrs(count);
  for (uint32_t i = 0; i < count; ++i) {
    wrs[i].wr_id = i;
    wrs[i].sg = {buffer_, static_cast<uint32_t>(bytes + grh), s.mr->lkey};
    wrs[i].next = i + 1 < count ? &wrs[i + 1] : nullptr;
  }
  for (QueuePair* qp : s.qps)
    if (post_recv(qp, wrs.data()) != 0) return fail("cannot post receives"), false;
  return true;
}

bool Perftest::check(const Wc& wc, const char* what, uint64_t bytes) {
  if (wc.status == WcStatus::success) return true;
  // The default image completes an operation it does not implement with LOC_QP_OP_ERR.
  if (wc.status == WcStatus::loc_qp_op_err && std::string(what) != "SEND") {
    unsupported_ = true;
    fail(std::string(what) + " is not supported by firmware image " + client_.host->hca.firmware().path() +
         " (the first " + what + " completed with LOC_QP_OP_ERR)");
    return false;
  }
  fail(std::string(perftest_kind_name(cfg_.test)) + ": a " + what + " of " + std::to_string(bytes) +
       " bytes completed with status " + wc_status_str(wc.status));
  return false;
}

void Perftest::client_program() {
  if (!setup(client_)) return;
  rendezvous(0);  // both sides set up
  if (finished_ || !connect(client_, server_)) return;
  rendezvous(0);  // both connected
  if (cfg_.test == PerftestKind::write_lat && !probe_rdma_write(client_, server_)) return;
  for (uint64_t bytes : cfg_.sizes) {
    if (finished_) return;
    switch (cfg_.test) {
      case PerftestKind::send_bw:
      case PerftestKind::write_bw:
      case PerftestKind::read_bw: client_bw(bytes); break;
      case PerftestKind::send_lat: client_send_lat(bytes); break;
      case PerftestKind::write_lat: client_write_lat(bytes); break;
    }
  }
  sim::catch_up();
  finished_ = true;
  rendezvous_event_.notify(sc_core::SC_ZERO_TIME);
}

void Perftest::server_program() {
  if (!setup(server_)) return;
  rendezvous(1);
  if (finished_ || !connect(server_, client_)) return;
  rendezvous(1);
  for (uint64_t bytes : cfg_.sizes) {
    if (finished_) return;
    switch (cfg_.test) {
      case PerftestKind::send_bw:
      case PerftestKind::write_bw:
      case PerftestKind::read_bw: server_bw(bytes); break;
      case PerftestKind::send_lat: server_send_lat(bytes); break;
      case PerftestKind::write_lat: server_write_lat(bytes); break;
    }
  }
}

// ---- bandwidth: the client keeps tx_depth WRs outstanding, one signaled every cq_mod;
// BW = iterations * bytes over first post to last completion (perftest's BW average).
void Perftest::client_bw(uint64_t bytes) {
  Side& s = client_;
  const char* what = cfg_.test == PerftestKind::send_bw ? "SEND" : cfg_.test == PerftestKind::write_bw ? "RDMA WRITE"
                                                                                                      : "RDMA READ";
  const WrOpcode op = cfg_.test == PerftestKind::send_bw    ? WrOpcode::send
                      : cfg_.test == PerftestKind::write_bw ? WrOpcode::rdma_write
                                                            : WrOpcode::rdma_read;
  const uint32_t depth = std::min(cfg_.tx_depth, s.qp->sq_entries);
  const uint32_t cq_mod = std::min(cfg_.cq_mod, depth);
  const uint32_t n = cfg_.iterations;
  const uint32_t nq = static_cast<uint32_t>(s.qps.size());
  const uint64_t total = uint64_t{n} * nq;  // every QP runs n messages (perftest -q)
  rendezvous(0);  // the server's receives are posted
  const uint64_t start = sim::TimedQueue::now_ps();
  // Per QP: WRs posted and known completed (a completion's WR and those before it).
  std::vector<uint32_t> posted(nq), completed(nq);
  uint64_t all_posted = 0, all_completed = 0;
  Wc wc[16];
  // perftest's tposted and tcompleted (run_iter_bw) over all QPs in posting and completion
  // order: each post's time, and each completion's poll time, for the peak bandwidth.
  std::vector<uint64_t> tposted(total), tcompleted(total);
  while (all_completed < total) {
    // run_iter_bw: QP after QP, each topped up to tx_depth outstanding.
    for (uint32_t q = 0; q < nq; ++q) {
      while (posted[q] < n && posted[q] - completed[q] < depth) {
        SendWr w;
        w.wr_id = uint64_t{q} << 32 | (posted[q] + 1);  // the QP, and its WRs done when this one completes
        w.opcode = op;
        w.sg = {buffer_, static_cast<uint32_t>(bytes), s.mr->lkey};
        w.send_flags = ((posted[q] + 1) % cq_mod == 0 || posted[q] + 1 == n) ? uint32_t{SEND_SIGNALED} : 0u;
        w.send_flags |= inline_flag(op, bytes);
        w.rdma.remote_addr = buffer_;
        w.rdma.rkey = server_.mr->rkey;
        if (s.ah) {
          w.ud.ah = s.ahs[q];
          w.ud.remote_qpn = server_.qps[q]->qp_num;
          w.ud.remote_qkey = kQkey;
        }
        tposted[all_posted] = sim::TimedQueue::now_ps();
        if (const int err = post_send(s.qps[q], &w); err != 0)
          return fail("post_send refused a work request: " + std::string(std::strerror(err)));
        ++posted[q];
        ++all_posted;
      }
    }
    int got = poll_cq(s.send_cq, 16, wc);
    if (got == 0) got = poll_cq_wait(s.send_cq, wc[0]);
    for (int i = 0; i < got; ++i) {
      if (!check(wc[i], what, bytes)) return;
      const uint32_t q = static_cast<uint32_t>(wc[i].wr_id >> 32);
      const uint32_t done = static_cast<uint32_t>(wc[i].wr_id & 0xFFFFFFFF);
      if (q >= nq || done <= completed[q]) continue;
      for (uint32_t k = completed[q]; k < done && all_completed < total; ++k) tcompleted[all_completed++] = sim::TimedQueue::now_ps();
      completed[q] = done;
    }
  }
  const double seconds = static_cast<double>(sim::TimedQueue::now_ps() - start) * 1e-12;
  PerftestRow r;
  r.bytes = bytes;
  r.iterations = n;
  r.bw_avg_MBps = static_cast<double>(bytes) * static_cast<double>(total) / seconds / 1048576.0;
  // print_report_bw: bytes over the best time per message, in MiB/s.
  const uint64_t peak_ps = std::max<uint64_t>(1, perftest_peak_delta_ps(tposted, tcompleted, cq_mod));
  r.bw_peak_MBps = static_cast<double>(bytes) * 1e12 / static_cast<double>(peak_ps) / 1048576.0;
  r.msg_rate_Mpps = static_cast<double>(total) / seconds * 1e-6;
  rows_.push_back(r);
  rendezvous(0);  // the server has its receives (send_bw)
}

void Perftest::server_bw(uint64_t bytes) {
  if (cfg_.test == PerftestKind::send_bw && !post_recvs(server_, bytes, cfg_.iterations)) return;
  rendezvous(1);
  if (cfg_.test == PerftestKind::send_bw) {
    Wc wc[16];
    for (uint64_t got = 0; got < uint64_t{cfg_.iterations} * cfg_.qps && !finished_;) {
      int k = poll_cq(server_.recv_cq, 16, wc);
      if (k == 0) k = poll_cq_wait(server_.recv_cq, wc[0]);
      for (int i = 0; i < k; ++i)
        if (!check(wc[i], "receive", bytes)) return;
      got += static_cast<uint32_t>(k);
    }
  }
  rendezvous(1);
}

// Send completions free send-queue slots; the latency loops reap them outside the timed span.
void Perftest::reap_sends(Side& s, bool wait) {
  Wc wc[16];
  for (;;) {
    const int k = poll_cq(s.send_cq, 16, wc);
    for (int i = 0; i < k; ++i)
      if (!check(wc[i], cfg_.test == PerftestKind::write_lat ? "RDMA WRITE" : "SEND", 0)) return;
    if (k > 0 || !wait) return;
    poll_cq_wait(s.send_cq, wc[0]);
    if (!check(wc[0], cfg_.test == PerftestKind::write_lat ? "RDMA WRITE" : "SEND", 0)) return;
    return;
  }
}

// The end of a latency loop on either side: perftest signals the last send of the run and
// polls the send CQ until its completion is in, so no side leaves a send unfinished (a
// server that stopped at its last post would leave its last SEND's CQE unpolled, and on
// RC its ACK unseen).
void Perftest::drain_sends(Side& s) {
  while (!finished_ && s.qp->sq_head != s.qp->sq_tail) reap_sends(s, true);
}

uint32_t Perftest::sends_outstanding(bool server) const {
  const Side& s = server ? server_ : client_;
  uint32_t n = 0;
  for (const QueuePair* qp : s.qps) n += qp->sq_head - qp->sq_tail;
  return n;
}

// ---- latency: ping-pong; a sample is half of one round trip, from the client's post to
// its poll (send_lat) or its read of the last byte (write_lat) returning.
void Perftest::client_send_lat(uint64_t bytes) {
  Side& s = client_;
  if (!post_recvs(s, bytes, cfg_.iterations)) return;
  rendezvous(0);  // both sides' receives are posted
  std::vector<uint64_t> half;
  half.reserve(cfg_.iterations);
  for (uint32_t i = 0; i < cfg_.iterations && !finished_; ++i) {
    SendWr w;
    w.wr_id = i;
    w.sg = {buffer_, static_cast<uint32_t>(bytes), s.mr->lkey};
    w.send_flags = SEND_SIGNALED | inline_flag(w.opcode, bytes);
    if (s.ah) {
      w.ud.ah = s.ah;
      w.ud.remote_qpn = server_.qp->qp_num;
      w.ud.remote_qkey = kQkey;
    }
    const uint64_t t0 = sim::TimedQueue::now_ps();
    if (const int err = post_send(s.qp, &w); err != 0)
        return fail("post_send refused a work request: " + std::string(std::strerror(err)));
    Wc wc;
    poll_cq_wait(s.recv_cq, wc);
    const uint64_t t1 = sim::TimedQueue::now_ps();
    if (!check(wc, "receive", bytes)) return;
    half.push_back(t1 - t0);
    reap_sends(s, s.qp->sq_head - s.qp->sq_tail >= s.qp->sq_entries - 1);
  }
  latency_row(bytes, half);
  drain_sends(s);
  rendezvous(0);
}

void Perftest::server_send_lat(uint64_t bytes) {
  Side& s = server_;
  if (!post_recvs(s, bytes, cfg_.iterations)) return;
  rendezvous(1);
  for (uint32_t i = 0; i < cfg_.iterations && !finished_; ++i) {
    Wc wc;
    poll_cq_wait(s.recv_cq, wc);
    if (!check(wc, "receive", bytes)) return;
    SendWr w;
    w.wr_id = i;
    w.sg = {buffer_, static_cast<uint32_t>(bytes), s.mr->lkey};
    w.send_flags = SEND_SIGNALED | inline_flag(w.opcode, bytes);
    if (s.ah) {
      w.ud.ah = s.ah;
      w.ud.remote_qpn = client_.qp->qp_num;
      w.ud.remote_qkey = kQkey;
    }
    if (const int err = post_send(s.qp, &w); err != 0)
        return fail("post_send refused a work request: " + std::string(std::strerror(err)));
    reap_sends(s, s.qp->sq_head - s.qp->sq_tail >= s.qp->sq_entries - 1);
  }
  drain_sends(s);
  rendezvous(1);
}

// One signaled 1-byte RDMA WRITE into the peer's spare area: a firmware that does not
// implement RDMA WRITE says so here, before the ping-pong waits on memory that would never
// change.
bool Perftest::probe_rdma_write(Side& s, const Side& peer) {
  SendWr w;
  w.opcode = WrOpcode::rdma_write;
  w.sg = {buffer_ + max_bytes_, 1, s.mr->lkey};
  w.send_flags = SEND_SIGNALED;
  w.rdma.remote_addr = buffer_ + max_bytes_;
  w.rdma.rkey = peer.mr->rkey;
  if (post_send(s.qp, &w) != 0) return fail("post_send refused a work request"), false;
  Wc wc;
  poll_cq_wait(s.send_cq, wc);
  return check(wc, "RDMA WRITE", 1);
}

// perftest's write_lat: each side writes the message into the other's buffer, the last byte
// carrying the iteration's number, and polls the last byte of its own buffer.
void Perftest::client_write_lat(uint64_t bytes) {
  Side& s = client_;
  host::HostCpu& cpu = s.host->cpu;
  const uint64_t last = buffer_ + bytes - 1;
  rendezvous(0);
  std::vector<uint64_t> half;
  half.reserve(cfg_.iterations);
  for (uint32_t i = 0; i < cfg_.iterations && !finished_; ++i) {
    const uint8_t mark = static_cast<uint8_t>(2 * i + 1), reply = static_cast<uint8_t>(2 * i + 2);
    s.host->memory.write(last, &mark, 1);
    SendWr w;
    w.opcode = WrOpcode::rdma_write;
    w.sg = {buffer_, static_cast<uint32_t>(bytes), s.mr->lkey};
    w.send_flags = SEND_SIGNALED | inline_flag(w.opcode, bytes);
    w.rdma.remote_addr = buffer_;
    w.rdma.rkey = server_.mr->rkey;
    const uint64_t t0 = sim::TimedQueue::now_ps();
    if (const int err = post_send(s.qp, &w); err != 0)
        return fail("post_send refused a work request: " + std::string(std::strerror(err)));
    for (;;) {
      const auto m = cpu.arm_monitor(last, 1);
      uint8_t v = 0;
      s.host->memory.read(last, &v, 1);
      if (v == reply) {
        cpu.disarm_monitor(m);
        break;
      }
      cpu.wait_monitor(m);
    }
    cpu.spend_call();  // the poll that sees the byte
    half.push_back(sim::TimedQueue::now_ps() - t0);
    reap_sends(s, s.qp->sq_head - s.qp->sq_tail >= s.qp->sq_entries - 1);
  }
  latency_row(bytes, half);
  drain_sends(s);
  rendezvous(0);
}

void Perftest::server_write_lat(uint64_t bytes) {
  Side& s = server_;
  host::HostCpu& cpu = s.host->cpu;
  const uint64_t last = buffer_ + bytes - 1;
  rendezvous(1);
  for (uint32_t i = 0; i < cfg_.iterations && !finished_; ++i) {
    const uint8_t mark = static_cast<uint8_t>(2 * i + 1), reply = static_cast<uint8_t>(2 * i + 2);
    for (;;) {
      const auto m = cpu.arm_monitor(last, 1);
      uint8_t v = 0;
      s.host->memory.read(last, &v, 1);
      if (v == mark) {
        cpu.disarm_monitor(m);
        break;
      }
      cpu.wait_monitor(m);
    }
    cpu.spend_call();
    s.host->memory.write(last, &reply, 1);
    SendWr w;
    w.opcode = WrOpcode::rdma_write;
    w.sg = {buffer_, static_cast<uint32_t>(bytes), s.mr->lkey};
    w.send_flags = SEND_SIGNALED | inline_flag(w.opcode, bytes);
    w.rdma.remote_addr = buffer_;
    w.rdma.rkey = client_.mr->rkey;
    if (const int err = post_send(s.qp, &w); err != 0)
        return fail("post_send refused a work request: " + std::string(std::strerror(err)));
    reap_sends(s, s.qp->sq_head - s.qp->sq_tail >= s.qp->sq_entries - 1);
  }
  drain_sends(s);
  rendezvous(1);
}

// perftest's statistics: sorted samples; typical = median, 99 % and 99.9 % at index
// floor(n * q) (clipped to the last sample).
void Perftest::latency_row(uint64_t bytes, std::vector<uint64_t>& half) {
  if (half.empty()) return;
  std::sort(half.begin(), half.end());
  const size_t n = half.size();
  const auto us = [](double ps2) { return ps2 * 0.5e-6; };  // samples are round trips
  const auto at = [&](double q) { return half[std::min(n - 1, static_cast<size_t>(static_cast<double>(n) * q))]; };
  double sum = 0, sq = 0;
  for (uint64_t v : half) sum += static_cast<double>(v);
  const double mean = sum / static_cast<double>(n);
  for (uint64_t v : half) sq += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
  PerftestRow r;
  r.bytes = bytes;
  r.iterations = static_cast<uint32_t>(n);
  r.t_min_us = us(static_cast<double>(half.front()));
  r.t_max_us = us(static_cast<double>(half.back()));
  r.t_typical_us = us(static_cast<double>(half[n / 2]));
  r.t_avg_us = us(mean);
  r.t_stdev_us = us(std::sqrt(sq / static_cast<double>(n)));
  r.p99_us = us(static_cast<double>(at(0.99)));
  r.p999_us = us(static_cast<double>(at(0.999)));
  rows_.push_back(r);
}

std::string Perftest::table() const {
  PerftestSetup setup;
  setup.cfg = cfg_;
  setup.device = std::string(client_.host->name()) + "/hca";
  const bool bw = perftest_is_bw(cfg_.test);
  // The depths client_bw used; latency tests keep one message in flight (perftest's default
  // tx_depth of 1 for them).
  const uint32_t sq = client_.qp ? client_.qp->sq_entries : cfg_.tx_depth;
  setup.tx_depth = bw ? std::min(cfg_.tx_depth, sq) : 1;
  setup.cq_mod = std::min(cfg_.cq_mod, setup.tx_depth);
  setup.max_inline_bytes = cfg_.inline_size;  // perftest prints the QP's max_inline_data
  // connect(): PSNs start at 0, 16 RDMA READs outstanding; the buffer is at buffer_ on both.
  auto address = [&](const Side& side, size_t i) {
    PerftestAddress a;
    a.lid = side.lid;
    a.qpn = i < side.qps.size() ? side.qps[i]->qp_num : 0;
    a.rkey = side.mr ? side.mr->rkey : 0;
    a.vaddr = buffer_;
    a.out_reads = 16;
    return a;
  };
  setup.local = address(client_, 0);
  setup.remote = address(server_, 0);
  for (size_t i = 1; i < client_.qps.size() && i < server_.qps.size(); ++i) {
    setup.more_local.push_back(address(client_, i));
    setup.more_remote.push_back(address(server_, i));
  }
  return perftest_report(setup, rows_);
}

nlohmann::ordered_json Perftest::json() const {
  using Json = nlohmann::ordered_json;
  Json rows = Json::array();
  for (const PerftestRow& r : rows_) {
    Json row{{"bytes", r.bytes}, {"iterations", r.iterations}};
    if (perftest_is_bw(cfg_.test)) {
      row["bw_peak_MBps"] = r.bw_peak_MBps;
      row["bw_avg_MBps"] = r.bw_avg_MBps;
      row["msg_rate_Mpps"] = r.msg_rate_Mpps;
    } else {
      row["t_min_us"] = r.t_min_us;
      row["t_typical_us"] = r.t_typical_us;
      row["t_avg_us"] = r.t_avg_us;
      row["t_max_us"] = r.t_max_us;
      row["t_stdev_us"] = r.t_stdev_us;
      row["p99_us"] = r.p99_us;
      row["p999_us"] = r.p999_us;
    }
    rows.push_back(std::move(row));
  }
  return Json{{"test", perftest_kind_name(cfg_.test)},
              {"qp_type", cfg_.qp_type == PerftestQpType::ud ? "UD" : "RC"},
              {"mtu", cfg_.mtu},
              {"qps", cfg_.qps},
              {"rows", std::move(rows)}};
}

}  // namespace ibvp::apps
