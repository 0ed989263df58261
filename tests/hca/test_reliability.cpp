// Reliability of the transports under packet loss. Packets are lost at the receiving HCA's
// rx engine through its test hook (Hca::set_test_rx_drop), chosen by opcode and PSN, so
// each test loses exactly the packet it names: RC recovers (sequence NAK and go-back-N,
// local ACK timeout, READ re-request) with every message delivered once, in order and
// byte-exact; UD loses exactly the dropped messages; UC loses the message with the gap;
// RC with its retries exhausted completes with IBV_WC_RETRY_EXC_ERR.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <systemc>
#include <vector>

#include "models/sim/sleep.h"
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
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 13 + (i >> 7));
  return v;
}

constexpr uint64_t kSrc = tb::Side::kBuffer + 0x1000;   // sender's payloads, 16 KiB apart
constexpr uint64_t kDst = tb::Side::kBuffer + 0x40000;  // receiver's buffers, 16 KiB apart
constexpr uint64_t kStride = 0x4000;
constexpr uint32_t kAll = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ;
constexpr uint8_t kRcAck = 0x11, kReadRespMiddle = 0x0E;
// Local ACK timeout 4.096 us * 2^3 = 32.768 us.
constexpr uint8_t kTimeout = 3;
constexpr uint64_t kTimeoutPs = 32'768'000;

// Drops the first `count` packets that match `opcode` (any if < 0) and `psn` (any if < 0).
struct DropFirst {
  int opcode = -1;
  int64_t psn = -1;
  int count = 1;
  int dropped = 0;
  bool operator()(const ibvp_rx_packet& p) {
    if (dropped >= count) return false;
    if (opcode >= 0 && p.opcode != opcode) return false;
    if (psn >= 0 && p.psn != static_cast<uint32_t>(psn)) return false;
    ++dropped;
    return true;
  }
};

struct RcPair {
  tb::Side a, b;
  void open(tb::HcaBench& bench, QpType type = QpType::rc, uint8_t retry_cnt = 7) {
    tb::open_side(a, *bench.h1, type, 0, kAll);
    tb::open_side(b, *bench.h2, type, 0, kAll);
    tb::ConnectedAttrs c;
    c.access = kAll;
    c.timeout = kTimeout;
    c.retry_cnt = retry_cnt;
    tb::bring_up_connected(a.qp, b.lid, b.qp->qp_num, c);
    tb::bring_up_connected(b.qp, a.lid, a.qp->qp_num, c);
  }
};

// Posts `n` SENDs of `bytes` each (receives first), waits for all completions on both
// sides, and checks that nothing more completes afterwards.
struct SendRun {
  std::vector<Wc> sends, recvs;
  int extra_recvs = 0;
};
void run_sends(tb::HcaBench& bench, RcPair& p, int n, uint32_t bytes, SendRun& out) {
  for (int i = 0; i < n; ++i) {
    RecvWr r;
    r.wr_id = 100 + i;
    r.sg = {kDst + i * kStride, 8192, p.b.mr->lkey};
    ASSERT_EQ(post_recv(p.b.qp, &r), 0);
    const std::vector<uint8_t> data = pattern(bytes, static_cast<uint8_t>(i * 31 + 1));
    bench.h1->memory.write(kSrc + i * kStride, data.data(), data.size());
  }
  std::vector<SendWr> w(n);
  for (int i = 0; i < n; ++i) {
    w[i].wr_id = i;
    w[i].sg = {kSrc + i * kStride, bytes, p.a.mr->lkey};
    w[i].opcode = WrOpcode::send;
    w[i].send_flags = SEND_SIGNALED;
    if (i + 1 < n) w[i].next = &w[i + 1];
  }
  ASSERT_EQ(post_send(p.a.qp, &w[0]), 0);
  for (int i = 0; i < n; ++i) {
    Wc wc;
    poll_cq_wait(p.b.recv_cq, wc);
    out.recvs.push_back(wc);
  }
  for (int i = 0; i < n; ++i) {
    Wc wc;
    poll_cq_wait(p.a.send_cq, wc);
    out.sends.push_back(wc);
  }
  // Long enough for any late duplicate to have been delivered twice.
  bench.h1->cpu.spend(sc_time(4 * kTimeoutPs, sc_core::SC_PS));
  Wc extra;
  out.extra_recvs = poll_cq(p.b.recv_cq, 1, &extra);
}

void expect_delivered_once_in_order(tb::HcaBench& bench, const SendRun& r, int n, uint32_t bytes) {
  ASSERT_EQ(static_cast<int>(r.recvs.size()), n);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(r.recvs[i].status, WcStatus::success) << i;
    EXPECT_EQ(r.recvs[i].wr_id, uint64_t(100 + i)) << "receive completions in posting order";
    EXPECT_EQ(r.recvs[i].byte_len, bytes);
    EXPECT_EQ(bench.h2->memory.read(kDst + i * kStride, bytes), pattern(bytes, static_cast<uint8_t>(i * 31 + 1))) << i;
    EXPECT_EQ(r.sends[i].status, WcStatus::success) << i;
    EXPECT_EQ(r.sends[i].wr_id, uint64_t(i));
  }
  EXPECT_EQ(r.extra_recvs, 0) << "a message was delivered twice";
}

}  // namespace

TEST(HcaReliability, RcRecoversALostDataPacketWithSequenceNakAndGoBackN) {
  tb::HcaBench bench;
  RcPair p;
  SendRun run;
  DropFirst drop;
  drop.psn = 0x101;  // the Middle packet of the first 2500-byte message (MTU 1024)
  bench.h2->hca.set_test_rx_drop(std::ref(drop));
  bench.h1->cpu.run([&] {
    p.open(bench);
    run_sends(bench, p, 3, 2500, run);
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  expect_delivered_once_in_order(bench, run, 3, 2500);
  EXPECT_EQ(drop.dropped, 1);
  // The Last packet after the gap drew one PSN sequence NAK; the requester went back to
  // 0x101 without waiting for its timer.
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_NAKS_SENT), 1u);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_NAKS_RECEIVED), 1u);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_RETRANSMISSIONS), 1u);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_ACK_TIMEOUTS), 0u);
}

TEST(HcaReliability, RcRecoversALostLastPacketByLocalAckTimeout) {
  tb::HcaBench bench;
  RcPair p;
  SendRun run;
  DropFirst drop;
  drop.psn = 0x102;  // the Last packet of the only message: no later packet shows the gap
  bench.h2->hca.set_test_rx_drop(std::ref(drop));
  bench.h1->cpu.run([&] {
    p.open(bench);
    run_sends(bench, p, 1, 2500, run);
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  expect_delivered_once_in_order(bench, run, 1, 2500);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_ACK_TIMEOUTS), 1u);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_RETRANSMISSIONS), 1u);
  // First and Middle went twice: the responder saw them as duplicates and delivered nothing.
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_DUPLICATES), 2u);
}

TEST(HcaReliability, RcRecoversALostAckWithoutDeliveringTwice) {
  tb::HcaBench bench;
  RcPair p;
  SendRun run;
  DropFirst drop;
  drop.opcode = kRcAck;
  bench.h1->hca.set_test_rx_drop(std::ref(drop));
  bench.h1->cpu.run([&] {
    p.open(bench);
    run_sends(bench, p, 1, 2500, run);
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  expect_delivered_once_in_order(bench, run, 1, 2500);
  EXPECT_EQ(drop.dropped, 1);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_ACK_TIMEOUTS), 1u);
  // The whole message went again: three duplicates, re-acknowledged on the last.
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_DUPLICATES), 3u);
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_ACKS_SENT), 2u);
}

TEST(HcaReliability, RdmaWriteWithImmediateAndRdmaReadMoveBytesExactly) {
  tb::HcaBench bench;
  RcPair p;
  const std::vector<uint8_t> out = pattern(3000, 5), back = pattern(2900, 77);
  Wc wwc, rwc, imm_wc;
  bench.h1->cpu.run([&] {
    p.open(bench);
    bench.h1->memory.write(kSrc, out.data(), out.size());
    bench.h2->memory.write(kDst + kStride, back.data(), back.size());
    RecvWr r;
    r.wr_id = 55;
    r.sg = {kDst + 4 * kStride, 64, p.b.mr->lkey};
    ASSERT_EQ(post_recv(p.b.qp, &r), 0);
    SendWr w;
    w.wr_id = 1;
    w.opcode = WrOpcode::rdma_write_with_imm;
    w.imm_data = 0xCAFE;
    w.sg = {kSrc, 3000, p.a.mr->lkey};
    w.rdma.remote_addr = kDst;
    w.rdma.rkey = p.b.mr->rkey;
    w.send_flags = SEND_SIGNALED;
    SendWr rd;
    rd.wr_id = 2;
    rd.opcode = WrOpcode::rdma_read;
    rd.sg = {kSrc + 2 * kStride, 2900, p.a.mr->lkey};
    rd.rdma.remote_addr = kDst + kStride;
    rd.rdma.rkey = p.b.mr->rkey;
    rd.send_flags = SEND_SIGNALED;
    w.next = &rd;
    ASSERT_EQ(post_send(p.a.qp, &w), 0);
    poll_cq_wait(p.a.send_cq, wwc);
    poll_cq_wait(p.a.send_cq, rwc);
    poll_cq_wait(p.b.recv_cq, imm_wc);
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  EXPECT_EQ(bench.h2->memory.read(kDst, out.size()), out);
  EXPECT_EQ(bench.h1->memory.read(kSrc + 2 * kStride, back.size()), back);
  EXPECT_EQ(wwc.status, WcStatus::success);
  EXPECT_EQ(wwc.opcode, WcOpcode::rdma_write);
  EXPECT_EQ(rwc.status, WcStatus::success);
  EXPECT_EQ(rwc.opcode, WcOpcode::rdma_read);
  EXPECT_EQ(rwc.byte_len, 2900u);
  // RDMA WRITE with immediate consumes a receive WQE and reports the written length.
  EXPECT_EQ(imm_wc.status, WcStatus::success);
  EXPECT_EQ(imm_wc.wr_id, 55u);
  EXPECT_EQ(imm_wc.opcode, WcOpcode::recv_rdma_with_imm);
  EXPECT_EQ(imm_wc.imm_data, 0xCAFEu);
  EXPECT_EQ(imm_wc.byte_len, 3000u);
}

TEST(HcaReliability, RcRecoversALostReadResponseByAskingForTheRest) {
  tb::HcaBench bench;
  RcPair p;
  const std::vector<uint8_t> back = pattern(3000, 91);
  Wc rwc;
  int extra = 0;
  DropFirst drop;
  drop.opcode = kReadRespMiddle;
  bench.h1->hca.set_test_rx_drop(std::ref(drop));
  bench.h1->cpu.run([&] {
    p.open(bench);
    bench.h2->memory.write(kDst, back.data(), back.size());
    SendWr rd;
    rd.wr_id = 9;
    rd.opcode = WrOpcode::rdma_read;
    rd.sg = {kSrc, 3000, p.a.mr->lkey};
    rd.rdma.remote_addr = kDst;
    rd.rdma.rkey = p.b.mr->rkey;
    rd.send_flags = SEND_SIGNALED;
    ASSERT_EQ(post_send(p.a.qp, &rd), 0);
    poll_cq_wait(p.a.send_cq, rwc);
    bench.h1->cpu.spend(sc_time(4 * kTimeoutPs, sc_core::SC_PS));
    Wc more;
    extra = poll_cq(p.a.send_cq, 1, &more);
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  EXPECT_EQ(drop.dropped, 1);
  EXPECT_EQ(rwc.status, WcStatus::success);
  EXPECT_EQ(rwc.wr_id, 9u);
  EXPECT_EQ(bench.h1->memory.read(kSrc, back.size()), back);
  EXPECT_EQ(extra, 0);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_ACK_TIMEOUTS), 1u);
  // The Last response after the gap was refused; the retry asked for packets 1 and 2 only,
  // and the responder answered the duplicate request again.
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_DUPLICATES), 1u);
  EXPECT_EQ(bench.h2->hca.counters().packets_tx, 3u + 2u);
}

TEST(HcaReliability, RetriesExhaustedCompleteWithRetryExcErrAndFlushTheRest) {
  tb::HcaBench bench;
  RcPair p;
  Wc first, second;
  sc_time posted, failed;
  bench.h2->hca.set_test_rx_drop([](const ibvp_rx_packet&) { return true; });  // h2 hears nothing
  bench.h1->cpu.run([&] {
    p.open(bench, QpType::rc, 2);
    SendWr w[2];
    for (int i = 0; i < 2; ++i) {
      w[i].wr_id = 10 + i;
      w[i].sg = {kSrc, 100, p.a.mr->lkey};
      w[i].send_flags = SEND_SIGNALED;
    }
    w[0].next = &w[1];
    posted = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
    ASSERT_EQ(post_send(p.a.qp, &w[0]), 0);
    poll_cq_wait(p.a.send_cq, first);
    failed = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
    poll_cq_wait(p.a.send_cq, second);
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  EXPECT_EQ(first.wr_id, 10u);
  EXPECT_EQ(first.status, WcStatus::retry_exc_err);
  EXPECT_EQ(second.wr_id, 11u);
  EXPECT_EQ(second.status, WcStatus::wr_flush_err);
  // retry_cnt 2: the first try and two retries, each ending in a local ACK timeout.
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_ACK_TIMEOUTS), 3u);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_RETRANSMISSIONS), 2u);
  const uint64_t waited = (failed - posted).value();
  EXPECT_GT(waited, 3 * kTimeoutPs);
  EXPECT_LT(waited, 3 * kTimeoutPs + 10'000'000);  // plus the path, well under 10 us
}

TEST(HcaReliability, RdmaWriteOutsideTheRemoteRegionIsNakedWithRemoteAccessError) {
  tb::HcaBench bench;
  RcPair p;
  Wc wc;
  bench.h1->cpu.run([&] {
    p.open(bench);
    SendWr w;
    w.wr_id = 3;
    w.opcode = WrOpcode::rdma_write;
    w.sg = {kSrc, 512, p.a.mr->lkey};
    // The last 256 bytes lie past the end of the remote region.
    w.rdma.remote_addr = tb::Side::kBuffer + tb::Side::kBufferBytes - 256;
    w.rdma.rkey = p.b.mr->rkey;
    w.send_flags = SEND_SIGNALED;
    ASSERT_EQ(post_send(p.a.qp, &w), 0);
    poll_cq_wait(p.a.send_cq, wc);
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  EXPECT_EQ(wc.status, WcStatus::rem_access_err);
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_NAKS_SENT), 1u);
}

TEST(HcaReliability, UdLosesExactlyTheDroppedMessages) {
  tb::HcaBench bench;
  tb::Side a, b;
  constexpr int kN = 10;
  constexpr uint32_t kBytes = 700;
  std::vector<Wc> recvs, sends;
  int extra = 0;
  DropFirst d1, d2;
  d1.psn = 0x102;  // UD PSNs count from the QP's SQ PSN (0x100): messages 2 and 5
  d2.psn = 0x105;
  bench.h2->hca.set_test_rx_drop([&](const ibvp_rx_packet& p) { return d1(p) || d2(p); });
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::ud);
    tb::open_side(b, *bench.h2, QpType::ud);
    tb::bring_up(a.qp, 0, 0);
    tb::bring_up(b.qp, 0, 0);
    AddressHandle* ah = create_ah(a.pd, AhAttr{b.lid, 0, 1});
    std::vector<RecvWr> r(kN);
    std::vector<SendWr> w(kN);
    for (int i = 0; i < kN; ++i) {
      r[i].wr_id = 100 + i;
      r[i].sg = {kDst + i * kStride, 4096, b.mr->lkey};
      ASSERT_EQ(post_recv(b.qp, &r[i]), 0);
      const std::vector<uint8_t> data = pattern(kBytes, static_cast<uint8_t>(i));
      bench.h1->memory.write(kSrc + i * kStride, data.data(), data.size());
      w[i].wr_id = i;
      w[i].sg = {kSrc + i * kStride, kBytes, a.mr->lkey};
      w[i].send_flags = SEND_SIGNALED;
      w[i].ud.ah = ah;
      w[i].ud.remote_qpn = b.qp->qp_num;
      w[i].ud.remote_qkey = tb::kQkey;
      if (i + 1 < kN) w[i].next = &w[i + 1];
    }
    ASSERT_EQ(post_send(a.qp, &w[0]), 0);
    for (int i = 0; i < kN; ++i) {
      Wc wc;
      poll_cq_wait(a.send_cq, wc);
      sends.push_back(wc);
    }
    for (int i = 0; i < kN - 2; ++i) {
      Wc wc;
      poll_cq_wait(b.recv_cq, wc);
      recvs.push_back(wc);
    }
    bench.h1->cpu.spend(sc_time(50, SC_US));
    Wc more;
    extra = poll_cq(b.recv_cq, 1, &more);
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  ASSERT_EQ(sends.size(), size_t{kN});
  for (const Wc& wc : sends) EXPECT_EQ(wc.status, WcStatus::success);  // UD: sent is complete
  ASSERT_EQ(recvs.size(), size_t{kN - 2});
  EXPECT_EQ(extra, 0);
  const int delivered[] = {0, 1, 3, 4, 6, 7, 8, 9};
  for (int k = 0; k < kN - 2; ++k) {
    EXPECT_EQ(recvs[k].wr_id, uint64_t(100 + k));
    EXPECT_EQ(bench.h2->memory.read(kDst + k * kStride + IBVP_UD_GRH_BYTES, kBytes),
              pattern(kBytes, static_cast<uint8_t>(delivered[k])))
        << k;
  }
}

TEST(HcaReliability, UcDropsTheMessageWithAGapAndDeliversTheNext) {
  tb::HcaBench bench;
  RcPair p;
  std::vector<Wc> recvs;
  int extra = 0;
  DropFirst drop;
  drop.psn = 0x104;  // the Middle packet of the second 2500-byte message
  bench.h2->hca.set_test_rx_drop(std::ref(drop));
  bench.h1->cpu.run([&] {
    p.open(bench, QpType::uc);
    std::vector<RecvWr> r(3);
    std::vector<SendWr> w(3);
    for (int i = 0; i < 3; ++i) {
      r[i].wr_id = 100 + i;
      r[i].sg = {kDst + i * kStride, 8192, p.b.mr->lkey};
      ASSERT_EQ(post_recv(p.b.qp, &r[i]), 0);
      const std::vector<uint8_t> data = pattern(2500, static_cast<uint8_t>(i * 31 + 1));
      bench.h1->memory.write(kSrc + i * kStride, data.data(), data.size());
      w[i].wr_id = i;
      w[i].sg = {kSrc + i * kStride, 2500, p.a.mr->lkey};
      if (i + 1 < 3) w[i].next = &w[i + 1];
    }
    ASSERT_EQ(post_send(p.a.qp, &w[0]), 0);
    for (int i = 0; i < 2; ++i) {
      Wc wc;
      poll_cq_wait(p.b.recv_cq, wc);
      recvs.push_back(wc);
    }
    bench.h1->cpu.spend(sc_time(50, SC_US));
    Wc more;
    extra = poll_cq(p.b.recv_cq, 1, &more);
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  ASSERT_EQ(recvs.size(), 2u);
  EXPECT_EQ(extra, 0);
  // Message 1 in the first receive WQE; message 3 in the second, which message 2 had
  // started to fill and which IBA 9.8.3 lets the next message reuse.
  EXPECT_EQ(recvs[0].wr_id, 100u);
  EXPECT_EQ(recvs[1].wr_id, 101u);
  EXPECT_EQ(recvs[1].byte_len, 2500u);
  EXPECT_EQ(bench.h2->memory.read(kDst, 2500), pattern(2500, 1));
  EXPECT_EQ(bench.h2->memory.read(kDst + kStride, 2500), pattern(2500, 2 * 31 + 1));
}

TEST(HcaReliability, RcRecoversPacketsTheSwitchDropsWhileItHasNoRoute) {
  // Loss in the fabric itself: the switch's LFT loses the route to LID 2 for 3 us while a
  // stream of SENDs is under way; the switch drops what arrives for LID 2 meanwhile.
  tb::HcaBench bench;
  RcPair p;
  SendRun run;
  bench.h1->cpu.run([&] {
    p.open(bench);
    run_sends(bench, p, 12, 2500, run);
  });
  bench.h2->cpu.run([&] {
    ibvp::sim::catch_up();  // a program may run ahead of the kernel (models/sim/sleep.h)
    sc_core::wait(sc_time(40, SC_US));  // the QPs are up and sending by then
    sw::Lft lft;
    lft.port = {sw::Lft::kNoRoute, 1, sw::Lft::kNoRoute};
    bench.sw->set_lft(lft);
    ibvp::sim::catch_up();  // a program may run ahead of the kernel (models/sim/sleep.h)
    sc_core::wait(sc_time(3, SC_US));
    lft.port = {sw::Lft::kNoRoute, 1, 2};
    bench.sw->set_lft(lft);
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  expect_delivered_once_in_order(bench, run, 12, 2500);
  EXPECT_GT(bench.sw->dropped(), 0u);
  EXPECT_GE(bench.h1->hca.fw_counter(IBVP_CNT_RETRANSMISSIONS), 1u);
}

// A bit error on the way: one payload bit of the second data packet is flipped as the switch
// sends it on (the cable carries the Packet). The receiving CA's ICRC check, against the ICRC
// the sender put on the packet, discards it; RC then delivers the original bytes, resent
// from the sender's memory. Without the end-to-end check the flipped bit would reach memory.
namespace {
class FlipPayloadBit : public sim::FabricObserver {
 public:
  explicit FlipPayloadBit(uint32_t node) : node_(node) {}
  void on_transmit(uint32_t node, uint16_t, const ib::Packet& p, uint64_t, uint64_t) override {
    if (node != node_ || p.payload.empty() || flipped) return;
    if (++seen == 2) {
      const_cast<ib::Packet&>(p).payload[100] ^= 0x10;
      flipped = true;
    }
  }
  int seen = 0;
  bool flipped = false;

 private:
  uint32_t node_;
};
}  // namespace

TEST(HcaReliability, RcRecoversAPacketWhoseIcrcFailsAtTheReceiver) {
  tb::HcaBench bench;
  FlipPayloadBit flip(bench.sw->node());
  bench.probe.attach(&flip);
  RcPair p;
  SendRun run;
  bench.h1->cpu.run([&] {
    p.open(bench);
    run_sends(bench, p, 1, 2500, run);
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  ASSERT_TRUE(flip.flipped);
  expect_delivered_once_in_order(bench, run, 1, 2500);
  EXPECT_EQ(bench.h2->hca.rx_dropped(), 1u);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_RETRANSMISSIONS), 1u);
}
