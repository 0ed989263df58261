#include "models/sim/timed_queue.h"
#include "hca/incast.h"

#include <gtest/gtest.h>

#include <memory>
#include <systemc>
#include <vector>

#include "hca/hca_bench.h"
#include "models/hca/hca_observer.h"

namespace ibvp::tb {

using namespace verbs;

namespace {
constexpr uint32_t kAll = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ;
constexpr uint8_t kRcWriteOnly = 0x0A, kRcAck = 0x11;

// The RDMA WRITE packets one HCA port sends, in order.
struct DataOut : hca::HcaObserver {
  std::vector<PacedRun::Packet> out;
  void on_packet_out(uint32_t, uint32_t, const ib::Packet& p, uint64_t start_ps, uint64_t end_ps) override {
    if (static_cast<uint8_t>(p.bth.opcode) == kRcWriteOnly) out.push_back({start_ps, end_ps, p.bth.psn});
  }
};
}  // namespace

sw::EcnConfig input_triggered_marking() {
  sw::EcnConfig c;
  c.policy = sw::MarkingPolicy::input_triggered;
  return c;
}

void fast_sender(driver::HostNodeConfig& h) {
  h.hca.event_cycles = 20;
  h.hca.hal_call_cycles = 2;
  h.bus.lanes = 16;
}

Incast run_incast(const std::string& args, bool rc, int qps, sw::EcnConfig ecn) {
  const int kQps = qps;
  const int kWqes = 6000 / kQps;
  constexpr uint32_t kBytes = 4096;
  ib::PacketPool packets;
  link::PayloadPool payloads;
  sim::Probe probe;
  const link::LinkConfig cable{link::Width::x4, link::Speed::edr, 2.0, 5.0};
  const link::LinkRate rate(cable);
  driver::HostNodeConfig hc[3];
  for (int i = 0; i < 2; ++i) {
    fast_sender(hc[i]);
    hc[i].hca.firmware_args = args;
  }
  std::unique_ptr<driver::HostNode> h[3];
  for (int i = 0; i < 3; ++i)
    h[i] = std::make_unique<driver::HostNode>(("h" + std::to_string(i + 1)).c_str(), i, static_cast<uint16_t>(i + 1),
                                              hc[i], rate, packets, payloads, probe);
  sw::SwitchConfig sc = HcaBenchOptions::default_switch();
  sc.num_ports = 3;
  // On the wire: LRH 8, BTH 12, DETH 8 (UD) or RETH 16 (RC WRITE), payload, ICRC 4, VCRC 2.
  const uint32_t wire = 8 + 12 + (rc ? 16 : 8) + kBytes + 4 + 2;
  sc.ecn = ecn;
  if (sc.ecn.max_packet_bytes == 0) sc.ecn.max_packet_bytes = wire;
  sw::Switch s("sw", 3, sc, {{1, rate}, {2, rate}, {3, rate}}, packets, payloads, probe);
  sw::Lft lft;
  lft.port = {sw::Lft::kNoRoute, 1, 2, 3};
  s.set_lft(lft);
  std::vector<std::unique_ptr<link::Link>> links;
  for (int i = 0; i < 3; ++i) {
    const uint16_t port = static_cast<uint16_t>(i + 1);
    auto l = std::make_unique<link::Link>(("link" + std::to_string(i)).c_str(), cable);
    h[i]->hca.tx.bind(l->in[0]);
    l->out[0].bind(s.rx(port));
    s.tx(port).bind(l->in[1]);
    l->out[1].bind(h[i]->hca.rx);
    h[i]->hca.set_peer_buffer(0, sc.vl_buffer_bytes);
    s.set_peer_buffer(port, 0, hc[i].hca.vl_buffer_bytes);
    links.push_back(std::move(l));
  }
  // Throughput at h3 while both senders are backlogged: from h3's 200th packet to its
  // (2 * kWqes - 400)th.
  std::vector<uint64_t> arrivals;
  arrivals.reserve(12000);
  h[2]->hca.set_test_rx_drop([&](const ibvp_rx_packet&) {
    arrivals.push_back(sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps()).value());
    return false;  // observe only; h3 has no receive WQEs and drops them after any CNP
  });
  Side side[3];
  h[0]->cpu.run([&] {
    // One program thread sets up all three hosts (as tests/hca/test_reliability.cpp does).
    for (int i = 0; i < 3; ++i) open_side(side[i], *h[i], rc ? QpType::rc : QpType::ud, 0, kAll);
    // kQps flows per sender, each to its own QP on h3 (RC) or to h3's one UD QP.
    QueuePair* q[2][kQps];
    QueuePair* r[2][kQps];
    for (int i = 0; i < 2; ++i)
      for (int f = 0; f < kQps; ++f) {
        QpInitAttr at;
        at.send_cq = side[i].send_cq;
        at.recv_cq = side[i].recv_cq;
        at.qp_type = rc ? QpType::rc : QpType::ud;
        at.cap.max_send_wr = kWqes;
        q[i][f] = create_qp(side[i].pd, at);
        ASSERT_NE(q[i][f], nullptr);
        r[i][f] = rc ? add_qp(side[2], QpType::rc, 0) : side[2].qp;
        ASSERT_NE(r[i][f], nullptr);
      }
    if (rc) {
      ConnectedAttrs c;
      c.access = kAll;
      c.mtu = Mtu::mtu_4096;
      for (int i = 0; i < 2; ++i)
        for (int f = 0; f < kQps; ++f) {
          bring_up_connected(q[i][f], 3, r[i][f]->qp_num, c);
          bring_up_connected(r[i][f], static_cast<uint16_t>(i + 1), q[i][f]->qp_num, c);
        }
    } else {
      bring_up(side[2].qp, 0, 0);
      for (int i = 0; i < 2; ++i)
        for (int f = 0; f < kQps; ++f) bring_up(q[i][f], 0, 0);
    }
    for (int i = 0; i < 2; ++i) {
      AddressHandle* ah = rc ? nullptr : create_ah(side[i].pd, AhAttr{3, 0, 1});
      std::vector<SendWr> w(kWqes);
      for (int f = 0; f < kQps; ++f) {
        for (int k = 0; k < kWqes; ++k) {
          w[k] = SendWr{};
          w[k].sg = {Side::kBuffer, kBytes, side[i].mr->lkey};
          if (rc) {
            w[k].opcode = WrOpcode::rdma_write;
            w[k].rdma.remote_addr = Side::kBuffer + 0x10000;
            w[k].rdma.rkey = side[2].mr->rkey;
          } else {
            w[k].ud.ah = ah;
            w[k].ud.remote_qpn = side[2].qp->qp_num;
            w[k].ud.remote_qkey = kQkey;
          }
          w[k].next = k + 1 < kWqes ? &w[k + 1] : nullptr;
        }
        ASSERT_EQ(post_send(q[i][f], &w[0]), 0);
      }
    }
  });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_MS));
  Incast r;
  EXPECT_EQ(arrivals.size(), 2u * kWqes * kQps);
  const size_t from = 1000, to = 2u * kWqes * kQps - 400;
  if (arrivals.size() > to) {
    r.window_ps = arrivals[to] - arrivals[from];
    r.delivered_bytes = (to - from) * uint64_t{wire};
  }
  r.marked = s.counters(3).fecn_marked;
  for (int i = 0; i < 2; ++i) {
    r.blocked_ps[i] = h[i]->hca.counters().credit_blocked_ps;
    r.sent[i] = h[i]->hca.counters().packets_tx;
    r.becn_received[i] = h[i]->hca.fw_counter(IBVP_CNT_BECN_RECEIVED);
  }
  return r;
}

// EDR 4X carries 100 Gb/s of data: 80 ps per byte.
double utilization(const Incast& r) { return r.delivered_bytes * 80.0 / r.window_ps; }

PacedRun run_paced(const std::string& args, int n, uint32_t mark_index) {
  tb::HcaBenchOptions o;
  o.h1.hca.firmware_args = args;
  tb::fast_sender(o.h1);
  tb::HcaBench bench(o);
  DataOut obs;
  bench.h1->hca.set_observer(&obs);
  PacedRun run;
  tb::Side a, b;
  bench.h2->hca.set_test_rx_mark(
      [&](const ibvp_rx_packet& p) { return p.opcode == kRcWriteOnly && p.psn == 0x100 + mark_index; });
  bench.h1->hca.set_test_rx_drop([&](const ibvp_rx_packet& p) {
    if (p.opcode == kRcAck && (p.ecn & IBVP_RX_BECN)) run.becn_ps = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps()).value();
    return false;
  });
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::rc, 0, kAll);
    tb::open_side(b, *bench.h2, QpType::rc, 0, kAll);
    QpInitAttr at;
    at.send_cq = a.send_cq;
    at.recv_cq = a.recv_cq;
    at.qp_type = QpType::rc;
    at.cap.max_send_wr = static_cast<uint32_t>(n);
    QueuePair* q = create_qp(a.pd, at);
    ASSERT_NE(q, nullptr);
    tb::ConnectedAttrs c;
    c.access = kAll;
    c.mtu = Mtu::mtu_4096;
    tb::bring_up_connected(q, b.lid, b.qp->qp_num, c);
    tb::bring_up_connected(b.qp, a.lid, q->qp_num, c);
    std::vector<SendWr> w(n);
    for (int i = 0; i < n; ++i) {
      w[i].wr_id = i;
      w[i].opcode = WrOpcode::rdma_write;
      w[i].sg = {tb::Side::kBuffer, 4096, a.mr->lkey};
      w[i].rdma.remote_addr = tb::Side::kBuffer + 0x10000;
      w[i].rdma.rkey = b.mr->rkey;
      w[i].send_flags = i + 1 == n ? static_cast<uint32_t>(SEND_SIGNALED) : 0u;
      if (i + 1 < n) w[i].next = &w[i + 1];
    }
    ASSERT_EQ(post_send(q, &w[0]), 0);
    Wc wc;
    poll_cq_wait(a.send_cq, wc);
    EXPECT_EQ(wc.status, WcStatus::success);
  });
  sc_core::sc_start(sc_core::sc_time(5, sc_core::SC_MS));
  run.data = obs.out;
  run.becn_acks = bench.h1->hca.fw_counter(IBVP_CNT_BECN_RECEIVED);
  bench.h1->hca.set_observer(nullptr);
  return run;
}

}  // namespace ibvp::tb
