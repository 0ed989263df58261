// QP scheduling in the default firmware ("sched=..." in the image's arguments) and static
// rate: saturating UD QPs on h1 send 4 KiB messages to one QP on h2, and the packets that
// reach h2's rx engine (observed through Hca::set_test_rx_drop, dropping nothing) show the
// share each QP got. h1 has a fast core and a x16 bus so that the 100 Gb/s cable, not the
// firmware or PCIe, limits the sender.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "models/sim/timed_queue.h"
#include "hca/hca_bench.h"

using namespace ibvp;
using namespace ibvp::verbs;
using sc_core::SC_MS;
using sc_core::sc_time;

namespace {

constexpr uint32_t kBytes = 4096;
// A UD packet of 4096 bytes on the wire: LRH 8, BTH 12, DETH 8, payload, ICRC 4, VCRC 2;
// 80 ps per byte on 4X EDR.
constexpr uint64_t kWireBytes = 8 + 12 + 8 + kBytes + 4 + 2;
constexpr uint64_t kPacketPs = kWireBytes * 80;

struct Flow {
  uint8_t sl = 0;
  uint32_t weight = 1;
  uint32_t rate_mbps = 0;
  uint32_t ipd = 0;
};

struct Arrival {
  uint64_t ps;
  int flow;
};

// Posts `wqes` SENDs on each flow's QP, in flow order, and returns the arrivals at h2.
// `image`: h1's firmware (null: the default); `mark`: the packets h2 takes as marked (FECN).
std::vector<Arrival> run(const std::vector<Flow>& flows, const std::string& args, int wqes,
                         const char* image = nullptr, std::function<bool(const ibvp_rx_packet&)> mark = {}) {
  tb::HcaBenchOptions o;
  o.h1.hca.firmware_args = args;
  if (image != nullptr) o.h1.hca.firmware_image = image;
  o.h1.hca.event_cycles = 20;
  o.h1.hca.hal_call_cycles = 2;
  o.h1.bus.lanes = 16;
  tb::HcaBench bench(o);
  tb::Side a, b;
  std::vector<uint32_t> qpns;
  std::vector<Arrival> arrivals;
  arrivals.reserve(flows.size() * wqes);
  bench.h2->hca.set_test_rx_drop([&](const ibvp_rx_packet& p) {
    for (size_t f = 0; f < qpns.size(); ++f)
      if (p.src_qp == qpns[f]) arrivals.push_back({sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps()).value(), static_cast<int>(f)});
    return false;  // observe only; h2 has no receive WQEs and drops them itself
  });
  if (mark) bench.h2->hca.set_test_rx_mark(mark);
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::ud);
    tb::open_side(b, *bench.h2, QpType::ud);
    tb::bring_up(b.qp, 0, 0);
    std::vector<QueuePair*> qps;
    for (const Flow& f : flows) {
      QpInitAttr at;
      at.send_cq = a.send_cq;
      at.recv_cq = a.recv_cq;
      at.qp_type = QpType::ud;
      at.cap.max_send_wr = static_cast<uint32_t>(wqes);
      at.weight = f.weight;
      at.reserved_rate_mbps = f.rate_mbps;
      at.ipd = f.ipd;
      QueuePair* q = create_qp(a.pd, at);
      ASSERT_NE(q, nullptr);
      tb::bring_up(q, 0, 0);
      qps.push_back(q);
      qpns.push_back(q->qp_num);
    }
    std::vector<SendWr> w(wqes);
    for (size_t f = 0; f < flows.size(); ++f) {
      AddressHandle* ah = create_ah(a.pd, AhAttr{b.lid, flows[f].sl, 1});
      for (int i = 0; i < wqes; ++i) {
        w[i] = SendWr{};
        w[i].sg = {tb::Side::kBuffer, kBytes, a.mr->lkey};  // unsignaled: no CQEs to poll
        w[i].ud.ah = ah;
        w[i].ud.remote_qpn = b.qp->qp_num;
        w[i].ud.remote_qkey = tb::kQkey;
        w[i].next = i + 1 < wqes ? &w[i + 1] : nullptr;
      }
      ASSERT_EQ(post_send(qps[f], &w[0]), 0);
    }
  });
  sc_core::sc_start(sc_time(10, SC_MS));
  EXPECT_EQ(arrivals.size(), flows.size() * wqes);
  return arrivals;
}

// Packets per flow in steady state while every flow is backlogged: from the point where
// every flow has had 50 packets (the firmware fetches each QP's WQEs in turn, so the first
// flow starts alone, and VirtualClock rightly lets the one that waited catch up) until the
// first flow has sent its last packet.
std::vector<double> shares_while_backlogged(const std::vector<Arrival>& arr, size_t flows, int wqes) {
  std::vector<int> seen(flows, 0);
  std::vector<double> count(flows, 0);
  bool steady = false;
  for (size_t i = 0; i < arr.size(); ++i) {
    const int f = arr[i].flow;
    if (++seen[f] == wqes) break;
    if (steady) count[f] += 1;
    steady = steady || *std::min_element(seen.begin(), seen.end()) >= 50;
  }
  return count;
}

}  // namespace

TEST(HcaScheduling, WeightedRoundRobinSharesTheLinkInProportionToWeights) {
  const int kWqes = 600;
  const auto arr = run({Flow{0, 3}, Flow{0, 1}}, "sched=wrr", kWqes);
  const auto c = shares_while_backlogged(arr, 2, kWqes);
  ASSERT_GT(c[1], 100);
  EXPECT_NEAR(c[0] / c[1], 3.0, 3.0 * 0.02);
  // Work conserving: back to back on the cable.
  EXPECT_EQ(arr[40].ps - arr[39].ps, kPacketPs);
}

TEST(HcaScheduling, RoundRobinAlternatesPacketsOfBackloggedQps) {
  const int kWqes = 200;
  const auto arr = run({Flow{}, Flow{}}, "sched=rr", kWqes);
  const auto c = shares_while_backlogged(arr, 2, kWqes);
  EXPECT_NEAR(c[0] / c[1], 1.0, 0.02);
  for (size_t i = 20; i < 300; ++i) EXPECT_NE(arr[i].flow, arr[i + 1].flow) << i;
}

TEST(HcaScheduling, VirtualClockSharesTheLinkInProportionToReservedRates) {
  const int kWqes = 600;
  // 60 and 20 Gb/s reserved: Vtick 546 and 1638 ns per packet.
  const auto arr = run({Flow{0, 1, 60000}, Flow{0, 1, 20000}}, "sched=vc", kWqes);
  const auto c = shares_while_backlogged(arr, 2, kWqes);
  ASSERT_GT(c[1], 100);
  EXPECT_NEAR(c[0] / c[1], 3.0, 3.0 * 0.02);
}

TEST(HcaScheduling, VirtualClockWithFiniteCountersKeepsTheProportions) {
  const int kWqes = 600;
  // 16-bit counters in ns (seed 003 found 16 bits adequate) overflow every ~65 us of
  // virtual time, a dozen times in this run; the overflow rule (restart the overflowing
  // counter, subtract its value from the others) keeps the order of the clocks.
  const auto arr = run({Flow{0, 1, 60000}, Flow{0, 1, 20000}}, "sched=vc,vc_bits=16", kWqes);
  const auto c = shares_while_backlogged(arr, 2, kWqes);
  ASSERT_GT(c[1], 100);
  EXPECT_NEAR(c[0] / c[1], 3.0, 3.0 * 0.02);
}

TEST(HcaScheduling, StrictPriorityStarvesTheLowerSlWhileTheHigherIsBacklogged) {
  const int kWqes = 100;
  // The SL 0 QP posts first; the SL 1 QP a verbs call later.
  const auto arr = run({Flow{0}, Flow{1}}, "sched=sp", kWqes);
  size_t first_high = arr.size(), last_high = 0;
  for (size_t i = 0; i < arr.size(); ++i)
    if (arr[i].flow == 1) {
      first_high = std::min(first_high, i);
      last_high = i;
    }
  ASSERT_LT(first_high, arr.size());
  // Only what the low QP had in the tx buffer (four 4 KiB packets) went before the high
  // QP's first; none between its first and its last.
  EXPECT_LE(first_high, 4u);
  for (size_t i = first_high; i <= last_high; ++i) EXPECT_EQ(arr[i].flow, 1) << i;
  EXPECT_EQ(last_high - first_high + 1, size_t{kWqes});
}

TEST(HcaScheduling, FcfsServesTheOlderWorkFirst) {
  const int kWqes = 50;
  const auto arr = run({Flow{0}, Flow{1}}, "sched=fcfs", kWqes);
  for (int i = 0; i < kWqes; ++i) EXPECT_EQ(arr[i].flow, 0) << i;
}

// IBA 9.11.2: after a packet of duration d, the QP waits ipd * d: 1 / (1 + ipd) of the link.
double ipd_period_in_packets(uint32_t ipd) {
  const int kWqes = 200;
  const auto arr = run({Flow{0, 1, 0, ipd}}, "", kWqes);
  EXPECT_EQ(arr.size(), size_t{kWqes});
  if (arr.size() != size_t{kWqes}) return 0;
  return static_cast<double>(arr.back().ps - arr[10].ps) / (kWqes - 1 - 10) / kPacketPs;
}

TEST(HcaScheduling, QpAtIpd1SendsAtHalfTheLinkRate) { EXPECT_NEAR(ipd_period_in_packets(1), 2.0, 2.0 * 0.01); }

TEST(HcaScheduling, QpAtIpd3SendsAtAQuarterOfTheLinkRate) { EXPECT_NEAR(ipd_period_in_packets(3), 4.0, 4.0 * 0.01); }

TEST(HcaScheduling, StaticRatePerDlidPacesAllQpsToThatDestinationTogether) {
  const int kWqes = 150;
  // Two QPs without IPD of their own; LID 2 (h2) at IPD 2: one third of the link together.
  const auto arr = run({Flow{}, Flow{}}, "sched=rr,dlid_ipd=2:2", kWqes);
  ASSERT_EQ(arr.size(), size_t{2 * kWqes});
  const double period = static_cast<double>(arr.back().ps - arr[10].ps) / (2 * kWqes - 1 - 10);
  EXPECT_NEAR(period / kPacketPs, 3.0, 3.0 * 0.01);
}

// ---- Plug-in policies (firmware/default/policies.h): firmware/examples/sl_priority.cpp
// brings its own QP scheduler and congestion response to the default transport.

TEST(HcaPolicies, TheExampleSchedulerSendsTheHigherSlFirstAndRoundRobinWithinIt) {
  const int kWqes = 100;
  // The SL 0 QP posts first, then two SL 1 QPs. The default image (sched=fcfs) would send
  // all of SL 0 first (HcaScheduling.FcfsServesTheOlderWorkFirst).
  const auto arr = run({Flow{0}, Flow{1}, Flow{1}}, "", kWqes, IBVP_FW_SL_PRIORITY_IMAGE);
  size_t first_high = arr.size(), last_high = 0, first_third = arr.size();
  for (size_t i = 0; i < arr.size(); ++i) {
    if (arr[i].flow == 0) continue;
    first_high = std::min(first_high, i);
    last_high = i;
    if (arr[i].flow == 2) first_third = std::min(first_third, i);
  }
  ASSERT_LT(first_third, arr.size());
  // Only what the SL 0 QP had in the tx buffer (four 4 KiB packets) went before SL 1's
  // first packet, and none of SL 0 until SL 1 was done: every SL 1 message first.
  EXPECT_LE(first_high, 4u);
  EXPECT_EQ(last_high - first_high + 1, size_t{2 * kWqes});
  // Inside SL 1, the two QPs alternate packet by packet once both have work.
  for (size_t i = first_third; i + 1 < first_third + kWqes; ++i) EXPECT_NE(arr[i].flow, arr[i + 1].flow) << i;
}

TEST(HcaPolicies, TheExampleCongestionResponseHalvesTheRateOnAMark) {
  const int kWqes = 200;
  // h2 takes the 50th packet as marked (FECN) and sends h1 a CNP: the example's response
  // halves the flow's rate, a gap of one packet time after the next packet posted; each
  // packet sent then gives back 1/64 of the rate (UD has no ACKs), so the gaps shrink.
  int seen = 0;
  const auto arr = run({Flow{0}}, "", kWqes, IBVP_FW_SL_PRIORITY_IMAGE,
                       [&](const ibvp_rx_packet&) { return ++seen == 50; });
  ASSERT_EQ(arr.size(), size_t{kWqes});
  uint64_t widest = 0;
  size_t at = 0;
  for (size_t i = 1; i < arr.size(); ++i) {
    const uint64_t gap = arr[i].ps - arr[i - 1].ps;
    if (i < 50) {
      EXPECT_EQ(gap, kPacketPs) << i;  // back to back before the mark
    }
    if (gap > widest) {
      widest = gap;
      at = i;
    }
  }
  // Rate 1/2: the packet after the first paced one starts one packet time after its tail.
  EXPECT_GT(at, 50u);
  EXPECT_EQ(widest, 2 * kPacketPs);
  // Recovery: 32 packets later the rate is back to the link's.
  EXPECT_EQ(arr[at + 40].ps - arr[at + 39].ps, kPacketPs);
}
