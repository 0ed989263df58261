// CQ moderation (ibv_modify_cq, IBV_CQ_ATTR_MODERATE; docs/hca.md): an armed CQ raises one
// event per cq_count completions, or cq_period after the first of them. A consumer that
// arms, waits for the event and drains the CQ is woken cq_count times less often.
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

constexpr uint64_t kSrc = tb::Side::kBuffer + 0x1000;
constexpr uint64_t kDst = tb::Side::kBuffer + 0x40000;
constexpr double kGapUs = 5;  // the sender posts one SEND every 5 us: slower than the consumer

struct EventLog {
  std::vector<int> batches;        // CQEs drained after each event
  std::vector<sc_time> event_at;   // when each event woke the consumer
  std::vector<sc_time> posted_at;  // when each SEND was posted
};

// `sends` paced RC SENDs from h1 to h2; h2's receive CQ moderated by `m` (none if null). h2's
// program arms its CQ, waits for the event, drains the CQ, and again, until all arrived.
void run(tb::HcaBench& bench, int sends, const CqModeration* m, EventLog& out) {
  tb::Side a, b;
  bool ready = false;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::rc, 0, ACCESS_LOCAL_WRITE, 128);
    tb::open_side(b, *bench.h2, QpType::rc, 0, ACCESS_LOCAL_WRITE, 128);
    tb::ConnectedAttrs c;
    tb::bring_up_connected(a.qp, b.lid, b.qp->qp_num, c);
    tb::bring_up_connected(b.qp, a.lid, a.qp->qp_num, c);
    if (m != nullptr) {
      ASSERT_EQ(modify_cq(b.recv_cq, *m), 0);
    }
    for (int i = 0; i < sends; ++i) {
      RecvWr r;
      r.wr_id = i;
      r.sg = {kDst + 64 * i, 64, b.mr->lkey};
      ASSERT_EQ(post_recv(b.qp, &r), 0);
    }
    ready = true;
    // The receives' doorbells and the consumer's first arming are served before any SEND.
    bench.h1->cpu.spend(sc_time(100, SC_US));
    for (int i = 0; i < sends; ++i) {
      SendWr w;
      w.wr_id = i;
      w.sg = {kSrc, 32, a.mr->lkey};
      w.send_flags = SEND_SIGNALED;
      out.posted_at.push_back(sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps()));
      ASSERT_EQ(post_send(a.qp, &w), 0);
      bench.h1->cpu.spend(sc_time(kGapUs, SC_US));
    }
  });
  bench.h2->cpu.run([&] {
    while (!ready) bench.h2->cpu.spend(sc_time(1, SC_US));
    int got = 0;
    while (got < sends) {
      ASSERT_EQ(req_notify_cq(b.recv_cq, 0), 0);
      ASSERT_EQ(get_cq_event(b.recv_cq), 0);
      out.event_at.push_back(sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps()));
      int batch = 0;
      Wc wc[64];
      for (int n; (n = poll_cq(b.recv_cq, 64, wc)) > 0;) {
        for (int i = 0; i < n; ++i) EXPECT_EQ(wc[i].status, WcStatus::success);
        batch += n;
      }
      out.batches.push_back(batch);
      got += batch;
    }
  });
  sc_core::sc_start(sc_time(10, SC_MS));
}

}  // namespace

TEST(HcaCqModeration, WithoutModerationEveryCompletionOfAPacedStreamRaisesAnEvent) {
  tb::HcaBench bench;
  EventLog r;
  run(bench, 64, nullptr, r);
  EXPECT_EQ(r.batches, std::vector<int>(64, 1));
}

TEST(HcaCqModeration, CqCountRaisesOneEventPerCountCompletions) {
  tb::HcaBench bench;
  EventLog r;
  CqModeration m;
  m.cq_count = 8;
  run(bench, 64, &m, r);
  // 64 completions, 8 events: the factor the count asks for, each event after exactly 8.
  EXPECT_EQ(r.batches, std::vector<int>(8, 8));
}

TEST(HcaCqModeration, CqPeriodRaisesTheEventForCompletionsShortOfTheCount) {
  tb::HcaBench bench;
  EventLog r;
  CqModeration m;
  m.cq_count = 8;
  m.cq_period = 50;  // us: longer than 8 completions take (35 us), so the count ends full batches
  run(bench, 60, &m, r);
  // Seven full batches by the count; the last 4 completions by the period.
  std::vector<int> expect(7, 8);
  expect.push_back(4);
  EXPECT_EQ(r.batches, expect);
  ASSERT_EQ(r.event_at.size(), 8u);
  // The period runs from the first completion after the arming: SEND 56's, a few us after
  // its post. Its event comes 50 us later, not before.
  const double wait_us = (r.event_at.back() - r.posted_at[56]).to_seconds() * 1e6;
  EXPECT_GE(wait_us, 50);
  EXPECT_LT(wait_us, 50 + 10);
}
