// RNR NAK and retry (IBA 9.7.5.2.8): an RC SEND (or RDMA WRITE with immediate) that finds no
// receive WQE is refused with an RNR NAK carrying the responder's min_rnr_timer; the
// requester waits that long and sends the request again, rnr_retry times (7: forever), and
// completes it with IBV_WC_RNR_RETRY_EXC_ERR when the retries are spent.
#include <gtest/gtest.h>

#include <cstdint>
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

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
  return v;
}

constexpr uint64_t kSrc = tb::Side::kBuffer + 0x1000;
constexpr uint64_t kDst = tb::Side::kBuffer + 0x40000;
constexpr uint32_t kAll = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ;

struct RnrPair {
  tb::Side a, b;
  // `rnr_retry` on the requester a, `min_rnr_timer` (IBA Table 45 code) on the responder b.
  void open(tb::HcaBench& bench, uint8_t rnr_retry, uint8_t min_rnr_timer) {
    tb::open_side(a, *bench.h1, QpType::rc, 0, kAll);
    tb::open_side(b, *bench.h2, QpType::rc, 0, kAll);
    tb::ConnectedAttrs c;
    c.access = kAll;
    c.rnr_retry = rnr_retry;
    c.min_rnr_timer = min_rnr_timer;
    tb::bring_up_connected(a.qp, b.lid, b.qp->qp_num, c);
    tb::bring_up_connected(b.qp, a.lid, a.qp->qp_num, c);
  }
};

double us(sc_time t) { return t.to_seconds() * 1e6; }

}  // namespace

TEST(HcaRnr, SendWithoutReceiveCompletesAfterTheReceiverPostsWithEveryRetryWaitingTheRnrTimer) {
  tb::HcaBench bench;
  RnrPair p;
  constexpr uint32_t kBytes = 2500;  // three packets at MTU 1024: the two behind the refused First are dropped
  constexpr double kTimerUs = 40;    // Table 45 code 4
  const std::vector<uint8_t> data = pattern(kBytes, 3);
  sc_time t0, t_post, t_send_done;
  Wc swc, rwc;
  int extra = -1;
  bench.h1->cpu.run([&] {
    p.open(bench, 7, 4);
    bench.h1->memory.write(kSrc, data.data(), data.size());
    SendWr w;
    w.wr_id = 9;
    w.sg = {kSrc, kBytes, p.a.mr->lkey};
    w.send_flags = SEND_SIGNALED;
    t0 = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
    ASSERT_EQ(post_send(p.a.qp, &w), 0);
    // Ten RNR timers without a receive: more than 7 retries, so 7 must mean "forever".
    bench.h1->cpu.spend(sc_time(400, SC_US));
    RecvWr r;
    r.wr_id = 77;
    r.sg = {kDst, 4096, p.b.mr->lkey};
    t_post = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
    ASSERT_EQ(post_recv(p.b.qp, &r), 0);
    poll_cq_wait(p.a.send_cq, swc);
    t_send_done = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
    poll_cq_wait(p.b.recv_cq, rwc);
    bench.h1->cpu.spend(sc_time(200, SC_US));
    Wc more;
    extra = poll_cq(p.b.recv_cq, 1, &more);
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  EXPECT_EQ(swc.status, WcStatus::success);
  EXPECT_EQ(rwc.status, WcStatus::success);
  EXPECT_EQ(rwc.wr_id, 77u);
  EXPECT_EQ(rwc.byte_len, kBytes);
  EXPECT_EQ(bench.h2->memory.read(kDst, kBytes), data);
  EXPECT_EQ(extra, 0) << "delivered twice";
  const uint64_t naks = bench.h2->hca.fw_counter(IBVP_CNT_RNR_NAKS_SENT);
  const uint64_t retries = bench.h1->hca.fw_counter(IBVP_CNT_RNR_RETRIES);
  EXPECT_EQ(retries, naks) << "every RNR NAK was waited out and retried, the last retry succeeded";
  EXPECT_GT(retries, 7u);
  EXPECT_LE(retries, 11u) << "no retry came before its RNR timer expired";
  // Every retry waited a whole RNR timer; the one after the receive was posted found it.
  EXPECT_GT(t_send_done, t_post);
  EXPECT_GE(us(t_send_done - t0), retries * kTimerUs);
  EXPECT_LT(us(t_send_done - t_post), kTimerUs + 10);
  // RNR is flow control, not loss: no sequence NAK, no go-back-N, no ACK timeout.
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_NAKS_SENT), 0u);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_RETRANSMISSIONS), 0u);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_ACK_TIMEOUTS), 0u);
}

TEST(HcaRnr, RetriesSpentCompleteWithRnrRetryExcErrAndFlushTheRest) {
  tb::HcaBench bench;
  RnrPair p;
  constexpr double kTimerUs = 10;  // Table 45 code 1
  Wc first, second;
  sc_time t0, t_done;
  bench.h1->cpu.run([&] {
    p.open(bench, 2, 1);
    std::vector<SendWr> w(2);
    for (int i = 0; i < 2; ++i) {
      w[i].wr_id = 1 + i;
      w[i].sg = {kSrc, 100, p.a.mr->lkey};
      w[i].send_flags = SEND_SIGNALED;
    }
    w[0].next = &w[1];
    t0 = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
    ASSERT_EQ(post_send(p.a.qp, &w[0]), 0);
    poll_cq_wait(p.a.send_cq, first);
    t_done = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
    poll_cq_wait(p.a.send_cq, second);
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  EXPECT_EQ(first.wr_id, 1u);
  EXPECT_EQ(first.status, WcStatus::rnr_retry_exc_err);
  EXPECT_EQ(second.wr_id, 2u);
  EXPECT_EQ(second.status, WcStatus::wr_flush_err);
  // The first try and two retries were refused; the third NAK ended it.
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_RNR_NAKS_SENT), 3u);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_RNR_RETRIES), 2u);
  EXPECT_GE(us(t_done - t0), 2 * kTimerUs);
  EXPECT_LT(us(t_done - t0), 2 * kTimerUs + 20);
}

TEST(HcaRnr, WriteWithImmediateWithoutReceiveIsRetriedAndItsBytesLandOnce) {
  tb::HcaBench bench;
  RnrPair p;
  constexpr uint32_t kBytes = 3000;  // the RNR NAK refuses the Last packet: only it goes again
  const std::vector<uint8_t> data = pattern(kBytes, 91);
  Wc swc, rwc;
  bench.h1->cpu.run([&] {
    p.open(bench, 7, 1);
    bench.h1->memory.write(kSrc, data.data(), data.size());
    SendWr w;
    w.wr_id = 5;
    w.opcode = WrOpcode::rdma_write_with_imm;
    w.imm_data = 0xBEEF;
    w.sg = {kSrc, kBytes, p.a.mr->lkey};
    w.rdma.remote_addr = kDst;
    w.rdma.rkey = p.b.mr->rkey;
    w.send_flags = SEND_SIGNALED;
    ASSERT_EQ(post_send(p.a.qp, &w), 0);
    bench.h1->cpu.spend(sc_time(35, SC_US));
    RecvWr r;
    r.wr_id = 8;
    r.sg = {kDst + 0x10000, 16, p.b.mr->lkey};
    ASSERT_EQ(post_recv(p.b.qp, &r), 0);
    poll_cq_wait(p.a.send_cq, swc);
    poll_cq_wait(p.b.recv_cq, rwc);
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  EXPECT_EQ(swc.status, WcStatus::success);
  EXPECT_EQ(rwc.status, WcStatus::success);
  EXPECT_EQ(rwc.opcode, WcOpcode::recv_rdma_with_imm);
  EXPECT_EQ(rwc.imm_data, 0xBEEFu);
  EXPECT_EQ(rwc.byte_len, kBytes);
  EXPECT_EQ(bench.h2->memory.read(kDst, kBytes), data);
  EXPECT_GE(bench.h1->hca.fw_counter(IBVP_CNT_RNR_RETRIES), 2u);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_RNR_RETRIES), bench.h2->hca.fw_counter(IBVP_CNT_RNR_NAKS_SENT));
}
