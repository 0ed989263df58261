// Seed 003 Sec. 3.3.1: a doorbell whose VL has no room in the transmit buffer is skipped,
// not left to block the doorbell queue; the work behind it, on another VL, goes on.
#include <gtest/gtest.h>

#include <systemc>

#include "models/sim/sleep.h"
#include "models/sim/timed_queue.h"
#include "hca/hca_bench.h"

using namespace ibvp;
using namespace ibvp::verbs;
using sc_core::SC_MS;
using sc_core::sc_time;

TEST(HcaDoorbells, ADoorbellWhoseVlIsFullIsSkippedNotBlockingTheQueue) {
  tb::HcaBenchOptions o;
  o.switch_cfg.data_vls = 2;
  o.switch_cfg.sl2vl = sw::SwitchConfig::default_sl2vl(2);
  o.switch_cfg.vlarb = link::VlArbConfig::round_robin(2);
  for (driver::HostNodeConfig* h : {&o.h1, &o.h2}) {
    h->hca.data_vls = 2;
    h->hca.sl2vl = sw::SwitchConfig::default_sl2vl(2);  // SL0 -> VL0, SL1 -> VL1
    h->hca.vlarb = link::VlArbConfig::round_robin(2);
  }
  tb::HcaBench bench(o);

  // The VL0 QP is paced at IPD 255 (IBA static rate): its packets leave one per 256 packet
  // times, so 40 of them fill VL0's transmit buffer and take most of a millisecond to drain.
  constexpr int kSlow = 40;
  tb::Side a, b;
  Wc done, got;
  sc_time posted, completed, arrived;
  bool ready = false;  // h2's side is set up by h1's program
  sc_core::sc_event ready_event;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::ud, 0, ACCESS_LOCAL_WRITE, 256);
    QpInitAttr slow_attr;
    slow_attr.send_cq = a.send_cq;
    slow_attr.recv_cq = a.recv_cq;
    slow_attr.qp_type = QpType::ud;
    slow_attr.ipd = 255;
    QueuePair* slow = create_qp(a.pd, slow_attr);  // same doorbell class as a.qp, filed first
    ASSERT_NE(slow, nullptr);
    tb::open_side(b, *bench.h2, QpType::ud, 0, ACCESS_LOCAL_WRITE, 256);
    tb::bring_up(slow, 0, 0);
    tb::bring_up(a.qp, 0, 0);
    tb::bring_up(b.qp, 0, 0);
    for (int i = 0; i <= kSlow; ++i) {
      RecvWr r;
      r.wr_id = 500 + static_cast<uint64_t>(i);
      r.sg = {tb::Side::kBuffer + static_cast<uint64_t>(i) * 4096, 4096, b.mr->lkey};
      ASSERT_EQ(post_recv(b.qp, &r), 0);
    }
    ready = true;
    ibvp::sim::catch_up();  // a program may run ahead of the kernel (models/sim/sleep.h)
    ready_event.notify(sc_core::SC_ZERO_TIME);
    SendWr w;
    w.sg = {tb::Side::kBuffer, 1024, a.mr->lkey};
    w.ud.remote_qpn = b.qp->qp_num;
    w.ud.remote_qkey = tb::kQkey;
    w.ud.ah = create_ah(a.pd, AhAttr{b.lid, 0, 1});
    for (int i = 0; i < kSlow; ++i) {
      w.wr_id = static_cast<uint64_t>(i);
      ASSERT_EQ(post_send(slow, &w), 0);
    }
    w.wr_id = 1000;
    w.ud.ah = create_ah(a.pd, AhAttr{b.lid, 1, 1});
    w.send_flags = SEND_SIGNALED;
    posted = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
    ASSERT_EQ(post_send(a.qp, &w), 0);
    poll_cq_wait(a.send_cq, done);
    completed = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
  });
  bench.h2->cpu.run([&] {
    ibvp::sim::catch_up();  // a program may run ahead of the kernel (models/sim/sleep.h)
    while (!ready) sc_core::wait(ready_event);
    for (int i = 0; i <= kSlow; ++i) {
      Wc wc;
      poll_cq_wait(b.recv_cq, wc);
      if (wc.sl == 1) {
        got = wc;
        arrived = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
        return;
      }
    }
  });
  sc_core::sc_start(sc_time(2, SC_MS));
  // The VL1 message went past the doorbell of the paced VL0 QP (filed before it) while that
  // QP's packets still trickled out. Behind a blocked queue it would have waited for all of
  // them: 40 packets of 1058 bytes (UD: LRH BTH DETH ICRC VCRC) at 80 ps a byte, each
  // followed by 255 packet times of IPD. Served first-come first-served, the VL0 QP keeps
  // the scheduler until its VL is full (tens of microseconds); then it is skipped.
  const double slow_drain_s = kSlow * 256 * 1058 * 80e-12;  // 0.867 ms
  EXPECT_EQ(done.wr_id, 1000u);
  EXPECT_EQ(done.status, WcStatus::success);
  EXPECT_EQ(got.status, WcStatus::success);
  EXPECT_LT((completed - posted).to_seconds(), slow_drain_s / 10);
  EXPECT_LT((arrived - posted).to_seconds(), slow_drain_s / 10);
  EXPECT_GT(bench.h1->hca.fw_counter(IBVP_CNT_DOORBELLS_SKIPPED), 0u);
  // The slow QP's packets keep going out at their pace: all of them arrive by the end.
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_RX_PACKETS), static_cast<uint64_t>(kSlow) + 1);
}
