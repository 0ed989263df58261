// RQ doorbells are registers (docs/hca.md, "Hardware behaviour and timing"): a write while
// the QP's last RQ doorbell waits unpeeked updates its producer index, one that comes after
// the firmware's peek files a new doorbell. Whatever the interleaving of post_recv bursts
// and the firmware's peeks and ring reads, every receive posted is fetched exactly once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <systemc>
#include <vector>

#include "models/sim/timed_queue.h"
#include "hca/hca_bench.h"

using namespace ibvp;
using namespace ibvp::verbs;
using sc_core::SC_MS;
using sc_core::SC_NS;
using sc_core::SC_US;
using sc_core::sc_time;

TEST(HcaDoorbellRegister, ReceivesPostedInIrregularBurstsAreEachConsumedOnceInPostingOrder) {
  constexpr int kRecvs = 120;
  tb::HcaBench bench;
  tb::Side a, b;
  bool up = false;
  int posted = 0;  // receives h2 has posted so far: h1 sends no more than that
  std::vector<uint64_t> wr_ids;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::rc, 0, ACCESS_LOCAL_WRITE, 128);
    tb::open_side(b, *bench.h2, QpType::rc, 0, ACCESS_LOCAL_WRITE, 128);
    tb::ConnectedAttrs c;
    tb::bring_up_connected(a.qp, b.lid, b.qp->qp_num, c);
    tb::bring_up_connected(b.qp, a.lid, a.qp->qp_num, c);
    up = true;
    // One SEND per posted receive, up to eight at a time; RNR retry is infinite, so a
    // receive the firmware never fetched would leave its SEND waiting and the count short.
    for (int sent = 0; sent < kRecvs;) {
      if (sent == posted) {
        bench.h1->cpu.spend(sc_time(1, SC_US));
        continue;
      }
      int burst = 0;
      for (; burst < 8 && sent < posted; ++burst, ++sent) {
        SendWr w;
        w.wr_id = sent;
        w.sg = {tb::Side::kBuffer, 32, a.mr->lkey};
        w.send_flags = SEND_SIGNALED;
        ASSERT_EQ(post_send(a.qp, &w), 0);
      }
      for (int done = 0; done < burst;) {
        Wc wc[8];
        const int n = poll_cq(a.send_cq, 8, wc);
        ASSERT_GE(n, 0);
        for (int i = 0; i < n; ++i) ASSERT_EQ(wc[i].status, WcStatus::success);
        done += n;
        if (n == 0) bench.h1->cpu.spend(sc_time(1, SC_US));
      }
    }
  });
  bench.h2->cpu.run([&] {
    while (!up) bench.h2->cpu.spend(sc_time(1, SC_US));
    // Bursts of 1 to 7 receives, 0 to 1 us apart in 10 ns steps: doorbells land before,
    // during and after the firmware's peeks and its DMA reads of the ring (~0.6 us each).
    // At most 8 outstanding: h2 often waits for a completion, which only a receive the
    // firmware fetched can give, so a producer index lost at any such pause hangs the run.
    // The 120 receives go round the ring (fetched in runs up to its end) twice.
    auto poll = [&] {
      Wc wc[16];
      const int n = poll_cq(b.recv_cq, 16, wc);
      EXPECT_GE(n, 0);
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(wc[i].status, WcStatus::success);
        wr_ids.push_back(wc[i].wr_id);
      }
    };
    for (int burst = 0; posted < kRecvs && sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps()) < sc_time(5, SC_MS); ++burst) {
      poll();
      const int n = std::min(1 + burst % 7, kRecvs - posted);
      if (posted - static_cast<int>(wr_ids.size()) + n > 8) {
        bench.h2->cpu.spend(sc_time(1, SC_US));
        continue;
      }
      for (int k = 0; k < n; ++k, ++posted) {
        RecvWr r;
        r.wr_id = posted;
        r.sg = {tb::Side::kBuffer + 0x10000 + 64 * uint64_t(posted), 64, b.mr->lkey};
        ASSERT_EQ(post_recv(b.qp, &r), 0);
      }
      bench.h2->cpu.spend(sc_time(10 * ((burst * 37) % 101), SC_NS));
    }
    while (wr_ids.size() < static_cast<size_t>(kRecvs) && sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps()) < sc_time(5, SC_MS)) {
      const size_t before = wr_ids.size();
      poll();
      if (wr_ids.size() == before) bench.h2->cpu.spend(sc_time(1, SC_US));
    }
  });
  sc_core::sc_start(sc_time(6, SC_MS));
  ASSERT_EQ(wr_ids.size(), static_cast<size_t>(kRecvs));
  for (int i = 0; i < kRecvs; ++i) EXPECT_EQ(wr_ids[i], static_cast<uint64_t>(i)) << "completion " << i;
}
