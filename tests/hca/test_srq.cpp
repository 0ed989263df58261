// Shared receive queues (IBA 10.2.9, ibv_create_srq; docs/hca.md): several QPs take their
// receive WQEs from one SRQ, in posting order, each WQE exactly once; a message that finds
// the SRQ empty is refused with an RNR NAK and lands once a WQE is posted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <systemc>
#include <vector>

#include "models/sim/timed_queue.h"
#include "hca/hca_bench.h"

using namespace ibvp;
using namespace ibvp::verbs;
using sc_core::SC_MS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

constexpr uint64_t kSrc = tb::Side::kBuffer + 0x1000;   // sender's payloads, 4 KiB apart
constexpr uint64_t kDst = tb::Side::kBuffer + 0x80000;  // the SRQ's buffers, 4 KiB apart
constexpr uint32_t kBytes = 1500;
constexpr int kQps = 3, kPerQp = 8;

// Message m of QP q: its first byte names it, the rest is a pattern of it.
std::vector<uint8_t> message(int q, int m) {
  std::vector<uint8_t> v(kBytes);
  v[0] = static_cast<uint8_t>(q * kPerQp + m);
  for (uint32_t i = 1; i < kBytes; ++i) v[i] = static_cast<uint8_t>(v[0] * 29 + i * 3);
  return v;
}

}  // namespace

TEST(HcaSrq, ReceivesOfOneSrqAreConsumedByThreeQpsInPostingOrderEachExactlyOnce) {
  tb::HcaBench bench;
  tb::Side a, b;
  std::vector<QueuePair*> qa, qb;
  std::vector<Wc> recvs;
  Wc late{};
  sc_time t_late_post, t_late_done;
  uint64_t extra = 0;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::rc, 0, ACCESS_LOCAL_WRITE, 128);
    tb::open_side(b, *bench.h2, QpType::rc, 0, ACCESS_LOCAL_WRITE, 128);
    SharedReceiveQueue* srq = create_srq(b.pd, 64);
    ASSERT_NE(srq, nullptr);
    tb::ConnectedAttrs c;
    c.min_rnr_timer = 1;  // 10 us
    for (int q = 0; q < kQps; ++q) {
      qa.push_back(tb::add_qp(a, QpType::rc, 0));
      QpInitAttr attr;
      attr.send_cq = b.send_cq;
      attr.recv_cq = b.recv_cq;
      attr.srq = srq;
      qb.push_back(create_qp(b.pd, attr));
      ASSERT_NE(qa[q], nullptr);
      ASSERT_NE(qb[q], nullptr);
    }
    for (int q = 0; q < kQps; ++q) {
      tb::bring_up_connected(qa[q], b.lid, qb[q]->qp_num, c);
      tb::bring_up_connected(qb[q], a.lid, qa[q]->qp_num, c);
    }
    RecvWr own;
    EXPECT_EQ(post_recv(qb[0], &own), EINVAL) << "a QP with an SRQ has no receive queue of its own";
    std::vector<RecvWr> r(kQps * kPerQp);
    for (size_t i = 0; i < r.size(); ++i) {
      r[i].wr_id = i;
      r[i].sg = {kDst + 0x1000 * i, 4096, b.mr->lkey};
      if (i + 1 < r.size()) r[i].next = &r[i + 1];
    }
    ASSERT_EQ(post_srq_recv(srq, &r[0]), 0);
    // The QPs' messages interleaved: QP 0, 1, 2, 0, 1, 2, ...
    for (int m = 0; m < kPerQp; ++m)
      for (int q = 0; q < kQps; ++q) {
        const std::vector<uint8_t> d = message(q, m);
        const uint64_t src = kSrc + 0x1000 * (q * kPerQp + m);
        bench.h1->memory.write(src, d.data(), d.size());
        SendWr w;
        w.wr_id = q * kPerQp + m;
        w.sg = {src, kBytes, a.mr->lkey};
        ASSERT_EQ(post_send(qa[q], &w), 0);
      }
    for (int i = 0; i < kQps * kPerQp; ++i) {
      Wc wc;
      poll_cq_wait(b.recv_cq, wc);
      recvs.push_back(wc);
    }
    // The SRQ is empty now: one more message waits out RNR NAKs until a WQE is posted.
    const std::vector<uint8_t> d = message(0, kPerQp);
    bench.h1->memory.write(kSrc, d.data(), d.size());
    SendWr w;
    w.sg = {kSrc, kBytes, a.mr->lkey};
    ASSERT_EQ(post_send(qa[1], &w), 0);
    bench.h1->cpu.spend(sc_time(50, SC_US));
    RecvWr one;
    one.wr_id = 99;
    one.sg = {kDst + 0x1000 * 40, 4096, b.mr->lkey};
    t_late_post = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
    ASSERT_EQ(post_srq_recv(srq, &one), 0);
    poll_cq_wait(b.recv_cq, late);
    t_late_done = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
    EXPECT_EQ(bench.h2->memory.read(kDst + 0x1000 * 40, kBytes), d);
    bench.h1->cpu.spend(sc_time(100, SC_US));
    Wc more;
    extra = static_cast<uint64_t>(poll_cq(b.recv_cq, 1, &more));
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  ASSERT_EQ(recvs.size(), size_t{kQps * kPerQp});
  std::map<uint32_t, int> per_qp;
  for (size_t i = 0; i < recvs.size(); ++i) {
    const Wc& wc = recvs[i];
    EXPECT_EQ(wc.status, WcStatus::success);
    // WQEs are taken in posting order, whichever QP the message came on.
    EXPECT_EQ(wc.wr_id, i);
    EXPECT_EQ(wc.byte_len, kBytes);
    const auto qit = std::find_if(qb.begin(), qb.end(), [&](QueuePair* q) { return q->qp_num == wc.qp_num; });
    ASSERT_NE(qit, qb.end());
    const int q = static_cast<int>(qit - qb.begin());
    // The WQE's buffer holds the message that consumed it: that QP's next one.
    const std::vector<uint8_t> got = bench.h2->memory.read(kDst + 0x1000 * wc.wr_id, kBytes);
    EXPECT_EQ(got, message(q, per_qp[wc.qp_num]++)) << "WQE " << i;
  }
  for (QueuePair* q : qb) EXPECT_EQ(per_qp[q->qp_num], kPerQp);
  EXPECT_EQ(late.status, WcStatus::success);
  EXPECT_EQ(late.wr_id, 99u);
  EXPECT_EQ(late.qp_num, qb[1]->qp_num);
  EXPECT_GT(t_late_done, t_late_post);
  EXPECT_GE(bench.h1->hca.fw_counter(IBVP_CNT_RNR_RETRIES), 2u);
  EXPECT_EQ(extra, 0u);
}
