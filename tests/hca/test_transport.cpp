// End-to-end sends between two hosts through a switch: driver code posts WQEs, the default
// firmware image handles the doorbells, the HCAs DMA WQEs and payloads, build packets,
// match them to posted receives and write payload and CQEs into host memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <systemc>
#include <vector>

#include "models/sim/timed_queue.h"
#include "hca/hca_bench.h"

using namespace ibvp;
using namespace ibvp::verbs;
using sc_core::SC_MS;
using sc_core::sc_time;

namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
  return v;
}

constexpr uint64_t kSrc = tb::Side::kBuffer + 0x1000;  // sender's payload
constexpr uint64_t kDst = tb::Side::kBuffer + 0x8000;  // receiver's buffer

}  // namespace

TEST(HcaTransport, UdSendDeliversPayloadAndCompletionsOnBothSides) {
  tb::HcaBench bench;
  tb::Side a, b;
  const std::vector<uint8_t> payload = pattern(300, 3);
  Wc send_wc, recv_wc;
  bool done = false;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::ud);
    tb::open_side(b, *bench.h2, QpType::ud);
    tb::bring_up(a.qp, 0, 0);
    tb::bring_up(b.qp, 0, 0);
    RecvWr r;
    r.wr_id = 0x77;
    r.sg = {kDst, 1024, b.mr->lkey};
    ASSERT_EQ(post_recv(b.qp, &r), 0);
    bench.h1->memory.write(kSrc, payload.data(), payload.size());
    AddressHandle* ah = create_ah(a.pd, AhAttr{b.lid, 0, 1});
    ASSERT_NE(ah, nullptr);
    SendWr w;
    w.wr_id = 0x42;
    w.sg = {kSrc, static_cast<uint32_t>(payload.size()), a.mr->lkey};
    w.opcode = WrOpcode::send_with_imm;
    w.imm_data = 0xA1B2C3D4;
    w.send_flags = SEND_SIGNALED;
    w.ud.ah = ah;
    w.ud.remote_qpn = b.qp->qp_num;
    w.ud.remote_qkey = tb::kQkey;
    ASSERT_EQ(post_send(a.qp, &w), 0);
    poll_cq_wait(b.recv_cq, recv_wc);
    poll_cq_wait(a.send_cq, send_wc);
    done = true;
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  ASSERT_TRUE(done);
  // libibverbs UD semantics: the payload lands after 40 bytes of GRH room, byte_len counts them.
  EXPECT_EQ(bench.h2->memory.read(kDst + IBVP_UD_GRH_BYTES, payload.size()), payload);
  EXPECT_EQ(recv_wc.wr_id, 0x77u);
  EXPECT_EQ(recv_wc.status, WcStatus::success);
  EXPECT_EQ(recv_wc.opcode, WcOpcode::recv);
  EXPECT_EQ(recv_wc.byte_len, payload.size() + 40);
  EXPECT_EQ(recv_wc.imm_data, 0xA1B2C3D4u);
  EXPECT_EQ(recv_wc.wc_flags, uint32_t{WC_WITH_IMM});
  EXPECT_EQ(recv_wc.src_qp, a.qp->qp_num);
  EXPECT_EQ(recv_wc.slid, tb::HcaBench::kLid1);
  EXPECT_EQ(recv_wc.qp_num, b.qp->qp_num);
  EXPECT_EQ(send_wc.wr_id, 0x42u);
  EXPECT_EQ(send_wc.status, WcStatus::success);
  EXPECT_EQ(send_wc.opcode, WcOpcode::send);
  EXPECT_EQ(send_wc.byte_len, payload.size());
  // One data packet each way at most: the UD send, no acknowledgement.
  EXPECT_EQ(bench.h1->hca.counters().packets_tx, 1u);
  EXPECT_EQ(bench.h2->hca.counters().packets_tx, 0u);
  EXPECT_EQ(bench.h2->hca.rx_dropped(), 0u);
  EXPECT_EQ(bench.packets.live(), 0u);
}

TEST(HcaTransport, RcSendOfThreePacketsArrivesInOrderAndCompletesOnAck) {
  tb::HcaBench bench;
  tb::Side a, b;
  // Path MTU 1024 (bring_up): 2500 bytes are SEND First, Middle, Last.
  const std::vector<uint8_t> payload = pattern(2500, 11);
  Wc send_wc, recv_wc;
  sc_time recv_at, send_at;
  bool done = false;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::rc);
    tb::open_side(b, *bench.h2, QpType::rc);
    tb::bring_up(a.qp, b.lid, b.qp->qp_num);
    tb::bring_up(b.qp, a.lid, a.qp->qp_num);
    RecvWr r;
    r.wr_id = 0x99;
    r.sg = {kDst, 4096, b.mr->lkey};
    ASSERT_EQ(post_recv(b.qp, &r), 0);
    bench.h1->memory.write(kSrc, payload.data(), payload.size());
    SendWr w;
    w.wr_id = 0x1234;
    w.sg = {kSrc, static_cast<uint32_t>(payload.size()), a.mr->lkey};
    w.opcode = WrOpcode::send;
    w.send_flags = SEND_SIGNALED;
    ASSERT_EQ(post_send(a.qp, &w), 0);
    poll_cq_wait(b.recv_cq, recv_wc);
    recv_at = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
    poll_cq_wait(a.send_cq, send_wc);
    send_at = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps());
    done = true;
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  ASSERT_TRUE(done);
  EXPECT_EQ(bench.h2->memory.read(kDst, payload.size()), payload);
  EXPECT_EQ(recv_wc.wr_id, 0x99u);
  EXPECT_EQ(recv_wc.status, WcStatus::success);
  EXPECT_EQ(recv_wc.opcode, WcOpcode::recv);
  EXPECT_EQ(recv_wc.byte_len, payload.size());
  EXPECT_EQ(recv_wc.wc_flags, 0u);
  EXPECT_EQ(send_wc.wr_id, 0x1234u);
  EXPECT_EQ(send_wc.status, WcStatus::success);
  EXPECT_EQ(send_wc.byte_len, payload.size());
  // Three data packets one way, one ACK (AETH) back: the requester completes on the ACK.
  EXPECT_EQ(bench.h1->hca.counters().packets_tx, 3u);
  EXPECT_EQ(bench.h2->hca.counters().packets_tx, 1u);
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_ACKS_SENT), 1u);
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_RX_PSN_ERRORS), 0u);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_NAKS_RECEIVED), 0u);
  EXPECT_GT(send_at, recv_at - sc_time(1, sc_core::SC_US));
  EXPECT_EQ(bench.packets.live(), 0u);
}

TEST(HcaTransport, UcSendDeliversWithoutAcknowledgement) {
  tb::HcaBench bench;
  tb::Side a, b;
  const std::vector<uint8_t> payload = pattern(1500, 5);
  Wc send_wc, recv_wc;
  bool done = false;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::uc);
    tb::open_side(b, *bench.h2, QpType::uc);
    tb::bring_up(a.qp, b.lid, b.qp->qp_num);
    tb::bring_up(b.qp, a.lid, a.qp->qp_num);
    RecvWr r;
    r.wr_id = 5;
    r.sg = {kDst, 2048, b.mr->lkey};
    ASSERT_EQ(post_recv(b.qp, &r), 0);
    bench.h1->memory.write(kSrc, payload.data(), payload.size());
    SendWr w;
    w.wr_id = 6;
    w.sg = {kSrc, static_cast<uint32_t>(payload.size()), a.mr->lkey};
    w.send_flags = SEND_SIGNALED;
    ASSERT_EQ(post_send(a.qp, &w), 0);
    poll_cq_wait(b.recv_cq, recv_wc);
    poll_cq_wait(a.send_cq, send_wc);
    done = true;
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  ASSERT_TRUE(done);
  EXPECT_EQ(bench.h2->memory.read(kDst, payload.size()), payload);
  EXPECT_EQ(recv_wc.byte_len, payload.size());
  EXPECT_EQ(recv_wc.status, WcStatus::success);
  EXPECT_EQ(send_wc.status, WcStatus::success);
  EXPECT_EQ(bench.h1->hca.counters().packets_tx, 2u);  // First + Last at MTU 1024
  EXPECT_EQ(bench.h2->hca.counters().packets_tx, 0u);  // UC has no ACKs
}

TEST(HcaTransport, BadLkeyCompletesWithProtectionErrorAndSendsNothing) {
  tb::HcaBench bench;
  tb::Side a, b;
  Wc send_wc;
  bool done = false;
  int late_recv = -1;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::rc);
    tb::open_side(b, *bench.h2, QpType::rc);
    tb::bring_up(a.qp, b.lid, b.qp->qp_num);
    tb::bring_up(b.qp, a.lid, a.qp->qp_num);
    RecvWr r;
    r.wr_id = 1;
    r.sg = {kDst, 4096, b.mr->lkey};
    ASSERT_EQ(post_recv(b.qp, &r), 0);
    SendWr w;
    w.wr_id = 0xBAD;
    w.sg = {kSrc, 128, a.mr->lkey + 7};  // no such memory region
    ASSERT_EQ(post_send(a.qp, &w), 0);   // unsignaled: an error completes anyway
    poll_cq_wait(a.send_cq, send_wc);
    bench.h1->cpu.spend(sc_time(20, sc_core::SC_US));
    Wc wc;
    late_recv = poll_cq(b.recv_cq, 1, &wc);
    done = true;
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  ASSERT_TRUE(done);
  EXPECT_EQ(send_wc.wr_id, 0xBADu);
  EXPECT_EQ(send_wc.status, WcStatus::loc_prot_err);
  EXPECT_EQ(send_wc.opcode, WcOpcode::send);
  EXPECT_EQ(bench.h1->hca.counters().packets_tx, 0u);
  EXPECT_EQ(late_recv, 0);
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_ERROR_CQES), 1u);
}

TEST(HcaTransport, SgeBeyondItsRegionCompletesWithProtectionError) {
  tb::HcaBench bench;
  tb::Side a, b;
  Wc send_wc;
  bool done = false;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::ud);
    tb::open_side(b, *bench.h2, QpType::ud);
    tb::bring_up(a.qp, 0, 0);
    AddressHandle* ah = create_ah(a.pd, AhAttr{b.lid, 0, 1});
    SendWr w;
    w.wr_id = 3;
    // Starts inside the region, ends 1 byte past it.
    w.sg = {tb::Side::kBuffer + tb::Side::kBufferBytes - 63, 64, a.mr->lkey};
    w.ud.ah = ah;
    w.ud.remote_qpn = b.qp->qp_num;
    w.ud.remote_qkey = tb::kQkey;
    ASSERT_EQ(post_send(a.qp, &w), 0);
    poll_cq_wait(a.send_cq, send_wc);
    done = true;
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  ASSERT_TRUE(done);
  EXPECT_EQ(send_wc.status, WcStatus::loc_prot_err);
  EXPECT_EQ(bench.h1->hca.counters().packets_tx, 0u);
}

TEST(HcaTransport, ArmedCqSignalsOneEventForTheNextCompletion) {
  tb::HcaBench bench;
  tb::Side a, b;
  bool done = false;
  uint32_t events_after = 0;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::ud);
    tb::open_side(b, *bench.h2, QpType::ud);
    tb::bring_up(a.qp, 0, 0);
    tb::bring_up(b.qp, 0, 0);
    RecvWr r;
    r.sg = {kDst, 1024, b.mr->lkey};
    ASSERT_EQ(post_recv(b.qp, &r), 0);
    ASSERT_EQ(req_notify_cq(b.recv_cq, 0), 0);
    AddressHandle* ah = create_ah(a.pd, AhAttr{b.lid, 0, 1});
    SendWr w;
    w.sg = {kSrc, 16, a.mr->lkey};
    w.ud.ah = ah;
    w.ud.remote_qpn = b.qp->qp_num;
    w.ud.remote_qkey = tb::kQkey;
    ASSERT_EQ(post_send(a.qp, &w), 0);
    ASSERT_EQ(get_cq_event(b.recv_cq), 0);
    Wc wc;
    EXPECT_EQ(poll_cq(b.recv_cq, 1, &wc), 1);
    events_after = b.recv_cq->events_seen;
    done = true;
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  ASSERT_TRUE(done);
  EXPECT_EQ(events_after, 1u);
}
