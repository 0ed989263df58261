// A MAD goes ahead of the data work waiting for the HCA's core (docs/hca.md, "Hardware
// behaviour and timing"): an SMP that reaches a CA whose core has a backlog of doorbell
// events is answered about as fast as on an idle CA. VL15 is not flow controlled (IBA
// 7.9.4) and the CA's VL15 buffer holds two MADs until the firmware has handled them, so a
// MAD queued behind a loaded core's events is what got the in-band SM's responses dropped.
#include <gtest/gtest.h>

#include <cstdint>
#include <systemc>

#include "models/sim/timed_queue.h"
#include "hca/hca_bench.h"
#include "models/ib/mad.h"

using namespace ibvp;
using namespace ibvp::verbs;
using sc_core::SC_US;
using sc_core::sc_time;
namespace mad = ib::mad;

namespace {

// Which of h2's firmware events started while its MAD event waited.
struct CoreWatch : hca::HcaObserver {
  uint32_t node = 0;
  uint64_t mad_start_ps = 0;
  uint64_t busy_until_ps = 0;  // the end of the last event h2's core ran
  void on_firmware_event(uint32_t n, uint32_t kind, uint64_t start_ps, uint64_t end_ps, uint64_t) override {
    if (n != node) return;
    if (kind == IBVP_EV_MAD) mad_start_ps = start_ps;
    busy_until_ps = end_ps;
  }
};

ib::MadDatagram node_info_smp(uint64_t tid) {
  const uint8_t path[] = {1};  // out of h1's port 1: the cable to h2
  ib::MadDatagram m;
  m.dlid = ib::kPermissiveLid;
  mad::encode(mad::make_directed_smp(mad::kMethodGet, mad::kAttrNodeInfo, 0, tid, path, 1), m.mad);
  return m;
}

}  // namespace

TEST(HcaMadPriority, AnSmpReachingACoreWithABacklogOfDoorbellsIsAnsweredAsFastAsOnAnIdleCore) {
  constexpr int kArms = 64;
  tb::HcaBenchOptions o;
  o.switched = false;
  tb::HcaBench bench(o);
  CoreWatch watch;
  watch.node = bench.h2->hca.node();
  bench.h2->hca.set_observer(&watch);
  uint64_t answered_ps = 0;
  bench.h1->hca.set_mad_receiver([&](const ib::MadDatagram&, uint64_t at_ps) { answered_ps = at_ps; });
  tb::Side b;
  bool up = false;
  // Round 0: h2 idle. Round 1: h2's host writes 64 CQ arm doorbells (64 DOORBELL events:
  // the first serves them all, the others find none), and h1's SMP arrives among them.
  const sc_time round_at[2] = {sc_time(100, SC_US), sc_time(200, SC_US)};
  uint64_t latency_ps[2] = {};
  bench.h2->cpu.run([&] {
    tb::open_side(b, *bench.h2, QpType::ud);
    up = true;
    bench.h2->cpu.spend(round_at[1] - sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps()));
    for (int i = 0; i < kArms; ++i) ASSERT_EQ(req_notify_cq(b.recv_cq, 0), 0);
  });
  bench.h1->cpu.run([&] {
    for (int round = 0; round < 2; ++round) {
      // 2 us after the round starts: h2's arms are filed by then, their events still queued.
      bench.h1->cpu.spend(round_at[round] + sc_time(2, SC_US) - sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps()));
      const uint64_t sent_ps = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps()).value();
      answered_ps = 0;
      bench.h1->hca.send_mad(node_info_smp(10 + round), sent_ps);
      while (answered_ps == 0) bench.h1->cpu.spend(sc_time(1, SC_US));
      latency_ps[round] = answered_ps - sent_ps;
    }
  });
  sc_core::sc_start(sc_time(400, SC_US));
  ASSERT_TRUE(up);
  ASSERT_GT(latency_ps[0], 0u);
  ASSERT_GT(latency_ps[1], 0u);
  // The backlog outlasted the SMP's handling: h2's core still had arm events to run after it.
  EXPECT_GT(watch.busy_until_ps, watch.mad_start_ps);
  // Queued behind the 64 events the answer came about 64 event dispatches late; ahead of
  // them it waits at most for the event the core is running when the SMP arrives.
  EXPECT_LE(latency_ps[1], latency_ps[0] + 1'000'000) << latency_ps[0] << " ps idle";
}
