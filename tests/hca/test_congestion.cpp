// Congestion control at the end devices (seed 004 Sec. 4 and 6): the destination returns a
// switch's FECN mark to the source (RC: BECN in the ACK; UD/UC: a CNP), and the default
// firmware's source response ("cc=fimd|lipd|aimd") paces the flow (QP, DLID). Marks come
// from Hca::set_test_rx_mark (as if a switch had set FECN) or, end to end, from a switch
// with switch.ecn = input_triggered where two senders congest one output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <systemc>
#include <vector>

#include "models/sim/timed_queue.h"
#include "firmware/cc/response.h"
#include "hca/hca_bench.h"
#include "hca/incast.h"
#include "models/hca/hca_observer.h"

using namespace ibvp;
using namespace ibvp::verbs;
using sc_core::SC_MS;
using sc_core::sc_time;

namespace {

constexpr uint8_t kRcAck = 0x11, kRcWriteOnly = 0x0A, kCnp = 0x81;
constexpr uint32_t kAll = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ;

// Packets one HCA port sends, in order.
struct PacketsOut : hca::HcaObserver {
  struct Out {
    uint64_t start, end;
    uint8_t opcode;
    uint32_t psn;
  };
  std::vector<Out> out;
  void on_packet_out(uint32_t, uint32_t, const ib::Packet& p, uint64_t start_ps, uint64_t end_ps) override {
    out.push_back({start_ps, end_ps, static_cast<uint8_t>(p.bth.opcode), p.bth.psn});
  }
};

TEST(HcaCongestion, RcAckReturnsTheMarkOfTheMessageItAcknowledges) {
  tb::HcaBenchOptions o;
  tb::HcaBench bench(o);
  tb::Side a, b;
  int marked = 0;
  bench.h2->hca.set_test_rx_mark([&](const ibvp_rx_packet& p) {
    const bool m = p.opcode == kRcWriteOnly && p.psn == 0x101;
    marked += m;
    return m;
  });
  std::vector<ibvp_rx_packet> acks;
  bench.h1->hca.set_test_rx_drop([&](const ibvp_rx_packet& p) {
    if (p.opcode == kRcAck) acks.push_back(p);
    return false;
  });
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::rc, 0, kAll);
    tb::open_side(b, *bench.h2, QpType::rc, 0, kAll);
    tb::ConnectedAttrs c;
    c.access = kAll;
    tb::bring_up_connected(a.qp, b.lid, b.qp->qp_num, c);
    tb::bring_up_connected(b.qp, a.lid, a.qp->qp_num, c);
    std::vector<SendWr> w(3);
    for (int i = 0; i < 3; ++i) {
      w[i].wr_id = i;
      w[i].opcode = WrOpcode::rdma_write;
      w[i].sg = {tb::Side::kBuffer, 256, a.mr->lkey};
      w[i].rdma.remote_addr = tb::Side::kBuffer + 0x10000;
      w[i].rdma.rkey = b.mr->rkey;
      w[i].send_flags = SEND_SIGNALED;
      if (i < 2) w[i].next = &w[i + 1];
    }
    ASSERT_EQ(post_send(a.qp, &w[0]), 0);
    for (int i = 0; i < 3; ++i) {
      Wc wc;
      poll_cq_wait(a.send_cq, wc);
      EXPECT_EQ(wc.status, WcStatus::success);
    }
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  EXPECT_EQ(marked, 1);
  ASSERT_EQ(acks.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(acks[i].psn, 0x100 + i);
    EXPECT_EQ((acks[i].ecn & IBVP_RX_BECN) != 0, i == 1) << "ACK " << i;
    EXPECT_EQ(acks[i].ecn & IBVP_RX_FECN, 0);
  }
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_FECN_RECEIVED), 1u);
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_BECN_SENT), 1u);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_BECN_RECEIVED), 1u);
}

TEST(HcaCongestion, UdDestinationSendsACnpToTheSourceQp) {
  tb::HcaBenchOptions o;
  tb::HcaBench bench(o);
  tb::Side a, b;
  int seen = 0;
  bench.h2->hca.set_test_rx_mark([&](const ibvp_rx_packet&) { return ++seen == 2; });
  std::vector<ibvp_rx_packet> cnps;
  bench.h1->hca.set_test_rx_drop([&](const ibvp_rx_packet& p) {
    if (p.opcode == kCnp) cnps.push_back(p);
    return false;
  });
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::ud);
    tb::open_side(b, *bench.h2, QpType::ud);
    tb::bring_up(a.qp, 0, 0);
    tb::bring_up(b.qp, 0, 0);
    AddressHandle* ah = create_ah(a.pd, AhAttr{b.lid, 0, 1});
    for (int i = 0; i < 3; ++i) {
      RecvWr r;
      r.wr_id = i;
      r.sg = {tb::Side::kBuffer + 0x10000 + i * 0x1000, 0x1000, b.mr->lkey};
      ASSERT_EQ(post_recv(b.qp, &r), 0);
    }
    std::vector<SendWr> w(3);
    for (int i = 0; i < 3; ++i) {
      w[i].wr_id = i;
      w[i].sg = {tb::Side::kBuffer, 512, a.mr->lkey};
      w[i].ud.ah = ah;
      w[i].ud.remote_qpn = b.qp->qp_num;
      w[i].ud.remote_qkey = tb::kQkey;
      w[i].send_flags = i == 2 ? static_cast<uint32_t>(SEND_SIGNALED) : 0u;
      if (i < 2) w[i].next = &w[i + 1];
    }
    ASSERT_EQ(post_send(a.qp, &w[0]), 0);
    for (int i = 0; i < 3; ++i) {
      Wc wc;
      poll_cq_wait(b.recv_cq, wc);
      EXPECT_EQ(wc.status, WcStatus::success);
    }
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  ASSERT_EQ(cnps.size(), 1u);
  EXPECT_EQ(cnps[0].dest_qp, a.qp->qp_num);
  EXPECT_EQ(cnps[0].slid, b.lid);
  EXPECT_NE(cnps[0].ecn & IBVP_RX_BECN, 0);
  EXPECT_EQ(cnps[0].payload_len, 0u);
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_BECN_SENT), 1u);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_BECN_RECEIVED), 1u);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_RX_DROPPED), 0u);
}

namespace {

// Two 16 KiB WRITEs (16 packets of 1 KiB each) under `args` with cc_window=1 (the paper's
// window): every RC packet asks for an ACK and the next one leaves only after it, and the
// data arrive whole. Returns, per packet after the first, the time from the ACK of the one
// before reaching h1 to the packet's first bit.
std::vector<uint64_t> window_of_one_gaps(const std::string& args) {
  std::vector<uint64_t> gaps;
  tb::HcaBenchOptions o;
  o.h1.hca.firmware_args = args;
  tb::HcaBench bench(o);
  PacketsOut obs;
  bench.h1->hca.set_observer(&obs);
  std::vector<std::pair<uint64_t, uint32_t>> acks;  // arrival, PSN
  bench.h1->hca.set_test_rx_drop([&](const ibvp_rx_packet& p) {
    if (p.opcode == kRcAck) acks.emplace_back(sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps()).value(), p.psn);
    return false;
  });
  std::vector<ibvp_rx_packet> data;
  bench.h2->hca.set_test_rx_drop([&](const ibvp_rx_packet& p) {
    data.push_back(p);
    return false;
  });
  tb::Side a, b;
  std::vector<uint8_t> got(2 * 16384);
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::rc, 0, kAll);
    tb::open_side(b, *bench.h2, QpType::rc, 0, kAll);
    tb::ConnectedAttrs c;
    c.access = kAll;
    tb::bring_up_connected(a.qp, b.lid, b.qp->qp_num, c);
    tb::bring_up_connected(b.qp, a.lid, a.qp->qp_num, c);
    std::vector<uint8_t> src(2 * 16384);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + (i >> 9));
    bench.h1->memory.write(tb::Side::kBuffer, src.data(), src.size());
    std::vector<SendWr> w(2);
    for (int i = 0; i < 2; ++i) {
      w[i].wr_id = i;
      w[i].opcode = WrOpcode::rdma_write;
      w[i].sg = {tb::Side::kBuffer + i * 16384u, 16384, a.mr->lkey};
      w[i].rdma.remote_addr = tb::Side::kBuffer + 0x40000 + i * 16384u;
      w[i].rdma.rkey = b.mr->rkey;
      w[i].send_flags = SEND_SIGNALED;
    }
    w[0].next = &w[1];
    ASSERT_EQ(post_send(a.qp, &w[0]), 0);
    for (int i = 0; i < 2; ++i) {
      Wc wc;
      poll_cq_wait(a.send_cq, wc);
      EXPECT_EQ(wc.status, WcStatus::success);
    }
    bench.h1->cpu.spend(sc_time(10, sc_core::SC_US));
    bench.h2->memory.read(tb::Side::kBuffer + 0x40000, got.data(), got.size());
    EXPECT_EQ(got, src);
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  bench.h1->hca.set_observer(nullptr);
  EXPECT_EQ(data.size(), 32u);
  for (const auto& p : data) EXPECT_TRUE(p.ack_req) << "PSN " << p.psn;
  EXPECT_EQ(acks.size(), 32u);
  if (acks.size() != 32u) return gaps;
  std::vector<PacketsOut::Out> out;
  for (const auto& p : obs.out)
    if (p.opcode != kRcAck) out.push_back(p);
  EXPECT_EQ(out.size(), 32u);
  if (out.size() != 32u) return gaps;
  for (size_t k = 1; k < out.size(); ++k) {
    EXPECT_EQ(acks[k - 1].second, out[k - 1].psn);
    EXPECT_GT(out[k].start, acks[k - 1].first) << "packet " << k << " left before the ACK of the one before";
    gaps.push_back(out[k].start - acks[k - 1].first);
  }
  return gaps;
}

TEST(HcaCongestion, RcWindowOfOnePacketWaitsForEachAck) {
  EXPECT_EQ(window_of_one_gaps("cc_window=1").size(), 31u);
}

// cc_prefetch=1 (the default): the packet beyond the window is fetched and built while the
// window is closed and leaves as the ACK's release reaches the port: the ACK's event, the
// firmware's handling (0.12 us of core cycles here) and the port's wake. With
// cc_prefetch=0 its WQE is scheduled and its payload read over PCIe only after the ACK,
// which adds at least one DMA read round trip (2 x 200 ns bus latency + 80 ns DRAM).
// Packets within a message (the first of the second WRITE waits for its WQE either way).
constexpr uint64_t kHeldGapPs = 200'000;
constexpr uint64_t kDmaReadPs = 480'000;

TEST(HcaCongestion, PrefetchedPacketLeavesSoonAfterTheAck) {
  const std::vector<uint64_t> gaps = window_of_one_gaps("cc_window=1,cc_prefetch=1");
  ASSERT_EQ(gaps.size(), 31u);
  for (size_t k = 0; k < 31; ++k) {
    if (k == 15) continue;
    EXPECT_LT(gaps[k], kHeldGapPs) << "packet " << k + 1;
  }
}

TEST(HcaCongestion, WithoutPrefetchThePayloadIsReadAfterTheAck) {
  const std::vector<uint64_t> gaps = window_of_one_gaps("cc_window=1,cc_prefetch=0");
  ASSERT_EQ(gaps.size(), 31u);
  for (size_t k = 0; k < 31; ++k) {
    if (k == 15) continue;
    EXPECT_GT(gaps[k], kHeldGapPs + kDmaReadPs) << "packet " << k + 1;
  }
}

}  // namespace

// One marked WRITE (rate R_max/2 after its ACK), all acknowledged, an idle 10 us, then two
// WRITEs posted together: the gap between them over their packet time (0 or 1).
double gap_after_idle(const std::string& args) {
  tb::HcaBenchOptions o;
  o.h1.hca.firmware_args = args;
  tb::HcaBench bench(o);
  PacketsOut obs;
  bench.h1->hca.set_observer(&obs);
  bench.h2->hca.set_test_rx_mark([&](const ibvp_rx_packet& p) { return p.psn == 0x100; });
  tb::Side a, b;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::rc, 0, kAll);
    tb::open_side(b, *bench.h2, QpType::rc, 0, kAll);
    tb::ConnectedAttrs c;
    c.access = kAll;
    tb::bring_up_connected(a.qp, b.lid, b.qp->qp_num, c);
    tb::bring_up_connected(b.qp, a.lid, a.qp->qp_num, c);
    std::vector<SendWr> w(3);
    for (int i = 0; i < 3; ++i) {
      w[i].wr_id = i;
      w[i].opcode = WrOpcode::rdma_write;
      w[i].sg = {tb::Side::kBuffer, 1024, a.mr->lkey};
      w[i].rdma.remote_addr = tb::Side::kBuffer + 0x10000;
      w[i].rdma.rkey = b.mr->rkey;
      w[i].send_flags = SEND_SIGNALED;
    }
    Wc wc;
    ASSERT_EQ(post_send(a.qp, &w[0]), 0);
    poll_cq_wait(a.send_cq, wc);
    bench.h1->cpu.spend(sc_time(10, sc_core::SC_US));
    w[1].next = &w[2];
    ASSERT_EQ(post_send(a.qp, &w[1]), 0);
    poll_cq_wait(a.send_cq, wc);
    poll_cq_wait(a.send_cq, wc);
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  bench.h1->hca.set_observer(nullptr);
  std::vector<PacketsOut::Out> out;
  for (const auto& p : obs.out)
    if (p.opcode == kRcWriteOnly) out.push_back(p);
  EXPECT_EQ(out.size(), 3u);
  if (out.size() != 3) return -1;
  return static_cast<double>(out[2].start - out[1].end) / static_cast<double>(out[1].end - out[1].start);
}

TEST(HcaCongestion, RateStatePersistsAcrossConsecutiveFlowsByDefault) {
  EXPECT_DOUBLE_EQ(gap_after_idle("cc=lipd"), 1.0);
}

TEST(HcaCongestion, WithoutPersistenceAFlowAfterIdleStartsAtRmax) {
  EXPECT_DOUBLE_EQ(gap_after_idle("cc=lipd,cc_persist=0"), 0.0);
}

// LIPD from one mark: the rates after each unmarked ACK, until R_max again.
std::vector<double> lipd_recovery() {
  const fw::cc::RateLimits l;
  const auto f = fw::cc::make_response("lipd", l);
  std::vector<double> r{f->decrease(l.r_max)};
  while (r.back() < l.r_max) r.push_back(f->increase(r.back()));
  return r;
}

TEST(HcaCongestion, LipdOneMarkAddsOneIpdUntilUnmarkedAcksRestoreTheRate) {
  const int n = 400;
  const tb::PacedRun run = tb::run_paced("cc=lipd", n, 40);
  ASSERT_EQ(run.data.size(), static_cast<size_t>(n));
  ASSERT_EQ(run.becn_acks, 1u);
  const std::vector<double> rates = lipd_recovery();
  const fw::cc::RateLimits l;
  // One mark: IPD 1 (rate R_max/2); every rate until R_max itself keeps IPD 1.
  EXPECT_EQ(fw::cc::ipd_for(rates.front(), l), 1u);
  for (size_t k = 0; k + 1 < rates.size(); ++k) EXPECT_EQ(fw::cc::ipd_for(rates[k], l), 1u);
  // Gaps on the wire: 0 or exactly one packet time; the paced packets are one run that
  // starts after the BECN arrived, as long as the unmarked ACKs LIPD needs (one per
  // message here), give or take the packets in the tx buffer and in flight.
  int paced = 0, first_paced = -1, last_paced = -1;
  for (int i = 1; i < n; ++i) {
    const auto& prev = run.data[i - 1];
    const uint64_t gap = run.data[i].start - prev.end, d = prev.end - prev.start;
    if (gap == 0) continue;
    EXPECT_EQ(gap, d) << "packet " << i;
    ++paced;
    if (first_paced < 0) first_paced = i;
    last_paced = i;
  }
  const int acks_to_recover = static_cast<int>(rates.size()) - 1;
  EXPECT_GT(run.data[first_paced].start, run.becn_ps);
  EXPECT_EQ(last_paced - first_paced + 1, paced) << "one run of IPD 1";
  EXPECT_NEAR(paced, acks_to_recover, 8) << "LIPD needs " << acks_to_recover << " unmarked ACKs";
  EXPECT_LT(last_paced, n - 1) << "back at R_max before the end";
}

TEST(HcaCongestion, LipdContinuousRatePacesByNonIntegerGapsAlongFinc) {
  const int n = 400;
  const tb::PacedRun run = tb::run_paced("cc=lipd,cc_rate=continuous", n, 40);
  ASSERT_EQ(run.data.size(), static_cast<size_t>(n));
  const std::vector<double> rates = lipd_recovery();
  // Every gap is (R_max/r - 1) packet times (in 1/256 steps) for a rate r of the LIPD
  // recovery sequence, and they shrink from one packet time to none.
  uint64_t last_gap = ~uint64_t{0};
  int paced = 0, fractional = 0;
  for (int i = 1; i < n; ++i) {
    const auto& prev = run.data[i - 1];
    const uint64_t gap = run.data[i].start - prev.end, d = prev.end - prev.start;
    if (gap == 0) continue;
    ++paced;
    EXPECT_LE(gap, last_gap) << "packet " << i;
    last_gap = gap;
    bool on_curve = false;
    for (double r : rates) {
      const uint64_t q8 = static_cast<uint64_t>(std::lround((1.0 / r - 1.0) * 256.0));
      if (q8 > 0 && gap == (q8 * d + 128) / 256) on_curve = true;
    }
    EXPECT_TRUE(on_curve) << "packet " << i << " gap " << gap << " ps of " << d;
    fractional += gap < d;
  }
  EXPECT_GT(paced, 100);
  EXPECT_GT(fractional, 100) << "the gap is not a whole number of packet times";
  EXPECT_LT(paced, static_cast<int>(rates.size()) + 8);
}

}  // namespace

// Two senders with four RC QPs each (WRITEs of 4 KiB, round robin between the QPs) into one
// receiver: the switch's output to it is offered twice its rate.
TEST(HcaCongestion, IncastWithoutCcKeepsSendingAtFullRateAndTheBuffersFull) {
  const tb::Incast r = tb::run_incast("sched=rr", true, 4);
  ASSERT_GT(r.window_ps, 0u);
  EXPECT_GT(tb::utilization(r), 0.99);
  // Nothing slows the sources: each waits for the switch's credits (its input buffer is
  // full) about half the time, and input_triggered marks nearly every packet.
  for (int i = 0; i < 2; ++i) EXPECT_GT(r.blocked_ps[i], r.window_ps * 4 / 10) << "sender " << i;
  EXPECT_GT(r.marked, (r.sent[0] + r.sent[1]) * 9 / 10);
}

TEST(HcaCongestion, IncastWithLipdKeepsTheSumOfRatesNearTheLinkRate) {
  const tb::Incast r = tb::run_incast("sched=rr,cc=lipd,cc_rate=continuous", true, 4);
  ASSERT_GT(r.window_ps, 0u);
  const double util = tb::utilization(r);
  RecordProperty("utilization", std::to_string(util));
  EXPECT_GT(util, 0.90) << "the sum of the marked flows' rates stays within 10 % of the link rate";
  EXPECT_LE(util, 1.0 + 1e-9);
  for (int i = 0; i < 2; ++i) {
    EXPECT_GT(r.becn_received[i], 0u) << "sender " << i;
    // The switch's input buffer is full far less often: without CC about half the time.
    EXPECT_LT(r.blocked_ps[i], r.window_ps / 50) << "sender " << i;
  }
  EXPECT_LT(r.marked, (r.sent[0] + r.sent[1]) / 10);
}

TEST(HcaCongestion, UdIncastWithLipdAnswersCnpsAndKeepsTheSumOfRatesNearTheLinkRate) {
  const tb::Incast r = tb::run_incast("sched=rr,cc=lipd,cc_rate=continuous", false, 4);
  ASSERT_GT(r.window_ps, 0u);
  const double util = tb::utilization(r);
  RecordProperty("utilization", std::to_string(util));
  EXPECT_GT(util, 0.90);
  EXPECT_LE(util, 1.0 + 1e-9);
  for (int i = 0; i < 2; ++i) {
    EXPECT_GT(r.becn_received[i], 0u) << "sender " << i;
    EXPECT_LT(r.blocked_ps[i], r.window_ps / 50) << "sender " << i;
  }
  EXPECT_LT(r.marked, (r.sent[0] + r.sent[1]) / 10);
}

TEST(HcaCongestion, UnknownResponseFunctionIsRefused) {
  tb::expect_firmware_refused("cc=vegas", "unknown congestion control 'vegas' (none, fimd, lipd, aimd, cct)");
}
TEST(HcaCongestion, WindowOutOfRangeIsRefused) {
  tb::expect_firmware_refused("cc_window=1025", "cc_window '1025' is out of range (0 = none, 1..1024 packets)");
}
TEST(HcaCongestion, UnknownRateModeIsRefused) { tb::expect_firmware_refused("cc_rate=fast", "unknown cc_rate 'fast'"); }
TEST(HcaCongestion, PersistOtherThanZeroOrOneIsRefused) {
  tb::expect_firmware_refused("cc_persist=2", "cc_persist must be 0 or 1");
}
