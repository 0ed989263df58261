// The latency of one small UD send equals the sum of its parts, to the picosecond, as
// computed here from the configured parameters; firmware cycles add exactly cycles / f for
// each firmware event on the path (the sender's doorbell event and the receiver's rx event).
#include <gtest/gtest.h>

#include <cstdint>
#include <systemc>

#include "models/sim/sleep.h"
#include "models/sim/timed_queue.h"
#include "common/hca_latency.h"
#include "hca/hca_bench.h"

using namespace ibvp;
using namespace ibvp::verbs;
using sc_core::SC_MS;
using sc_core::sc_time;

namespace {

using Parts = tb::UdLatencyParts;
// The sum of the parts (tests/common/hca_latency.h), post_send to poll return.
uint64_t expected_ps(const Parts& p, uint64_t payload) { return tb::ud_send_latency_ps(p, payload); }

// Runs one UD send of `payload` bytes from h1 to h2 and returns post-to-completion time.
uint64_t measure(const tb::HcaBenchOptions& o, uint32_t payload) {
  tb::HcaBench bench(o);
  tb::Side a, b;
  bool ready = false;
  sc_core::sc_event ready_event;
  sc_time t0, t_end;
  Wc wc;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::ud);
    tb::open_side(b, *bench.h2, QpType::ud);
    tb::bring_up(a.qp, 0, 0);
    tb::bring_up(b.qp, 0, 0);
    RecvWr r;
    r.wr_id = 1;
    r.sg = {tb::Side::kBuffer, 4096, b.mr->lkey};
    ASSERT_EQ(post_recv(b.qp, &r), 0);
    AddressHandle* ah = create_ah(a.pd, AhAttr{b.lid, 0, 1});
    ready = true;
    ibvp::sim::catch_up();  // a program may run ahead of the kernel (models/sim/sleep.h)
    ready_event.notify(sc_core::SC_ZERO_TIME);
    // Both firmwares idle and the receiver polling before the measurement starts.
    bench.h1->cpu.spend(sc_time(20, sc_core::SC_US));
    SendWr w;
    w.sg = {tb::Side::kBuffer + 0x1000, payload, a.mr->lkey};
    w.ud.ah = ah;
    w.ud.remote_qpn = b.qp->qp_num;
    w.ud.remote_qkey = tb::kQkey;
    t0 = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
    ASSERT_EQ(post_send(a.qp, &w), 0);
  });
  bench.h2->cpu.run([&] {
    ibvp::sim::catch_up();  // a program may run ahead of the kernel (models/sim/sleep.h)
    while (!ready) sc_core::wait(ready_event);
    poll_cq_wait(b.recv_cq, wc);
    t_end = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  EXPECT_EQ(wc.status, WcStatus::success);
  EXPECT_EQ(wc.byte_len, payload + IBVP_UD_GRH_BYTES);
  return (t_end - t0).value();
}

tb::HcaBenchOptions zero_firmware_cost() {
  tb::HcaBenchOptions o;
  for (driver::HostNodeConfig* h : {&o.h1, &o.h2}) {
    h->hca.event_cycles = 0;
    h->hca.hal_call_cycles = 0;
  }
  return o;
}

}  // namespace

TEST(HcaLatency, SmallUdSendIsTheSumOfItsParts) {
  const uint64_t measured = measure(zero_firmware_cost(), 64);
  EXPECT_EQ(measured, expected_ps(Parts{}, 64));
}

TEST(HcaLatency, FirmwareCyclesAddCyclesOverClockPerEventOnThePath) {
  tb::HcaBenchOptions o = zero_firmware_cost();
  constexpr uint64_t kEventCycles = 1000, kWqeCycles = 300, kRxCycles = 500;
  constexpr uint64_t kHz = 800'000'000;  // 1.25 ns per cycle
  for (driver::HostNodeConfig* h : {&o.h1, &o.h2}) {
    h->hca.core_clock_hz = kHz;
    h->hca.event_cycles = kEventCycles;
    h->hca.firmware_args = "wqe_cycles=" + std::to_string(kWqeCycles) + ",rx_cycles=" + std::to_string(kRxCycles);
  }
  const uint64_t measured = measure(o, 64);
  const auto over_f = [](uint64_t cycles) { return cycles * 1'000'000'000'000ULL / kHz; };
  // Two events on the path (doorbell at the sender, rx packet at the receiver), one WQE
  // executed by the sender's firmware and one packet received by the receiver's.
  EXPECT_EQ(measured, expected_ps(Parts{}, 64) + 2 * over_f(kEventCycles) + over_f(kWqeCycles) + over_f(kRxCycles));
}
