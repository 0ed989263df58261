// Inline data and BlueFlame (docs/hca.md, "Inline data and BlueFlame"; HAL version 6): an
// inline send carries its payload in the WQE, so the HCA reads no payload by DMA and the
// message arrives sooner by at least one PCIe read round trip; a BlueFlame post writes the
// WQE itself through the write-combining buffer, so the HCA reads no WQE from the ring.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <systemc>
#include <vector>

#include "models/sim/sleep.h"
#include "models/sim/timed_queue.h"
#include "hca/hca_bench.h"
#include "models/hca/hca_observer.h"

using namespace ibvp;
using namespace ibvp::verbs;
using sc_core::SC_MS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

// The firmware's DMA reads at one HCA.
struct ReadLog : hca::HcaObserver {
  struct Read {
    uint64_t address;
    uint32_t bytes;
  };
  std::vector<Read> reads;
  void on_dma_read(uint32_t, uint64_t address, uint32_t bytes, uint64_t, uint64_t) override {
    reads.push_back({address, bytes});
  }
  // Reads that touch [begin, end).
  size_t reads_within(uint64_t begin, uint64_t end) const {
    size_t n = 0;
    for (const Read& r : reads) n += r.address < end && begin < r.address + r.bytes;
    return n;
  }
};

constexpr uint32_t kMaxInline = 192;
constexpr uint64_t kPayloadAt = tb::Side::kBuffer + 0x1000;

// A UD QP on `s`'s PD and CQs that may carry up to kMaxInline bytes inline.
QueuePair* inline_qp(tb::Side& s) {
  QpInitAttr a;
  a.send_cq = s.send_cq;
  a.recv_cq = s.recv_cq;
  a.qp_type = QpType::ud;
  a.cap.max_inline_data = kMaxInline;
  return create_qp(s.pd, a);
}

// h1 sends `payloads` UD messages one at a time (each flagged inline or not) to h2; returns
// post-to-receive-poll times and checks each message's bytes at the receiver.
struct SendRun {
  std::vector<uint64_t> latency_ps;
  std::vector<uint64_t> payload_read_after;  // h1's tx payload DMA bytes after each message
  uint64_t bf_posts = 0, doorbell_posts = 0;
  uint64_t sq_addr = 0, sq_bytes = 0;
};

SendRun run_sends(const tb::HcaBenchOptions& o, const std::vector<bool>& inline_flags, uint32_t payload,
              ReadLog* log = nullptr) {
  tb::HcaBench bench(o);
  if (log) bench.h1->hca.set_observer(log);
  tb::Side a, b;
  SendRun run;
  bool ready = false;
  sc_core::sc_event ready_event, received;
  uint32_t received_count = 0;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::ud);
    tb::open_side(b, *bench.h2, QpType::ud);
    QueuePair* q = inline_qp(a);
    ASSERT_NE(q, nullptr);
    run.sq_addr = q->sq_addr;
    run.sq_bytes = uint64_t{q->sq_entries} * q->sq_stride;
    tb::bring_up(q, 0, 0);
    tb::bring_up(b.qp, 0, 0);
    for (size_t i = 0; i < inline_flags.size(); ++i) {
      RecvWr r;
      r.wr_id = i;
      r.sg = {tb::Side::kBuffer + i * 0x1000, 4096, b.mr->lkey};
      ASSERT_EQ(post_recv(b.qp, &r), 0);
    }
    AddressHandle* ah = create_ah(a.pd, AhAttr{b.lid, 0, 1});
    ready = true;
    ibvp::sim::catch_up();  // a program may run ahead of the kernel (models/sim/sleep.h)
    ready_event.notify(sc_core::SC_ZERO_TIME);
    for (size_t i = 0; i < inline_flags.size(); ++i) {
      // Both firmwares idle before each measurement; a fresh pattern per message.
      bench.h1->cpu.spend(sc_time(20, SC_US));
      std::vector<uint8_t> bytes(payload);
      for (uint32_t k = 0; k < payload; ++k) bytes[k] = static_cast<uint8_t>(k * 7 + i + 1);
      bench.h1->memory.write(kPayloadAt, bytes.data(), payload);
      SendWr w;
      w.wr_id = i;
      w.sg = {kPayloadAt, payload, a.mr->lkey};
      w.send_flags = SEND_SIGNALED | (inline_flags[i] ? uint32_t{SEND_INLINE} : 0u);
      w.ud.ah = ah;
      w.ud.remote_qpn = b.qp->qp_num;
      w.ud.remote_qkey = tb::kQkey;
      const uint64_t t0 = sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps()).value();
      ASSERT_EQ(post_send(q, &w), 0);
      ibvp::sim::catch_up();  // a program may run ahead of the kernel (models/sim/sleep.h)
      while (received_count <= i) sc_core::wait(received);
      run.latency_ps.push_back(sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps()).value() - t0);
      Wc wc;
      poll_cq_wait(a.send_cq, wc);
      EXPECT_EQ(wc.status, WcStatus::success);
      run.payload_read_after.push_back(bench.h1->hca.tx_payload_read_bytes());
    }
    run.bf_posts = a.ctx->bf_posts;
    run.doorbell_posts = a.ctx->doorbell_posts;
  });
  bench.h2->cpu.run([&] {
    ibvp::sim::catch_up();  // a program may run ahead of the kernel (models/sim/sleep.h)
    while (!ready) sc_core::wait(ready_event);
    for (size_t i = 0; i < inline_flags.size(); ++i) {
      Wc wc;
      poll_cq_wait(b.recv_cq, wc);
      EXPECT_EQ(wc.status, WcStatus::success);
      EXPECT_EQ(wc.byte_len, payload + IBVP_UD_GRH_BYTES);
      std::vector<uint8_t> got(payload);
      bench.h2->memory.read(tb::Side::kBuffer + i * 0x1000 + IBVP_UD_GRH_BYTES, got.data(), payload);
      for (uint32_t k = 0; k < payload; ++k)
        ASSERT_EQ(got[k], static_cast<uint8_t>(k * 7 + i + 1)) << "message " << i << " byte " << k;
      ++received_count;
      ibvp::sim::catch_up();  // a program may run ahead of the kernel (models/sim/sleep.h)
      received.notify(sc_core::SC_ZERO_TIME);
    }
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  EXPECT_EQ(run.latency_ps.size(), inline_flags.size());
  return run;
}

tb::HcaBenchOptions blueflame(uint32_t bytes) {
  tb::HcaBenchOptions o;
  o.h1.hca.blueflame_bytes = bytes;
  o.h2.hca.blueflame_bytes = bytes;
  return o;
}

}  // namespace

TEST(HcaInline, AnInlineSendIssuesNoDmaReadForItsPayload) {
  // First a send by reference (its 100 payload bytes are read), then the same size inline:
  // the tx engine's payload reads do not grow, and the receiver has the inline bytes.
  const SendRun run = run_sends(tb::HcaBenchOptions{}, {false, true}, 100);
  ASSERT_EQ(run.payload_read_after.size(), 2u);
  EXPECT_EQ(run.payload_read_after[0], 100u);
  EXPECT_EQ(run.payload_read_after[1], 100u);
}

TEST(HcaInline, InlineIsFasterThanByReferenceByAtLeastOnePcieReadRoundTrip) {
  // The by-reference send waits for a payload read: request TLP, bus latency, memory access,
  // completion, bus latency (models/host/README.md). Inline skips it; the inline WQE's slot is
  // larger (64 + 128 bytes fetched instead of 64), which costs less than the read it saves.
  const tb::HcaBenchOptions o;
  const SendRun run = run_sends(o, {false, true}, 64);
  ASSERT_EQ(run.latency_ps.size(), 2u);
  const uint64_t round_trip = 2 * o.h1.bus.latency.value() + o.h1.memory.access_latency.value();
  EXPECT_LT(run.latency_ps[1] + round_trip, run.latency_ps[0])
      << "by reference " << run.latency_ps[0] << " ps, inline " << run.latency_ps[1] << " ps";
}

TEST(HcaInline, InlineDataBeyondMaxInlineDataIsRefusedByPostSend) {
  // libibverbs (mlx5): more inline bytes than the QP's max_inline_data is EINVAL; exactly
  // max_inline_data is posted. A QP cannot ask for more than IBVP_MAX_INLINE_DATA.
  tb::HcaBench bench;
  int too_long = 0, fits = -1;
  bench.h1->cpu.run([&] {
    tb::Side a;
    tb::open_side(a, *bench.h1, QpType::ud);
    QueuePair* q = inline_qp(a);
    ASSERT_NE(q, nullptr);
    tb::bring_up(q, 0, 0);
    AddressHandle* ah = create_ah(a.pd, AhAttr{a.lid, 0, 1});
    SendWr w;
    w.sg = {kPayloadAt, kMaxInline + 1, a.mr->lkey};
    w.send_flags = SEND_INLINE;
    w.ud.ah = ah;
    w.ud.remote_qpn = a.qp->qp_num;
    w.ud.remote_qkey = tb::kQkey;
    too_long = post_send(q, &w);
    w.sg.length = kMaxInline;
    fits = post_send(q, &w);
    QpInitAttr big;
    big.send_cq = a.send_cq;
    big.recv_cq = a.recv_cq;
    big.cap.max_inline_data = IBVP_MAX_INLINE_DATA + 1;
    EXPECT_EQ(create_qp(a.pd, big), nullptr);
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  EXPECT_EQ(too_long, EINVAL);
  EXPECT_EQ(fits, 0);
}

TEST(HcaBlueFlame, ABlueFlameSendIssuesNoDmaReadOfTheWqe) {
  // With a 256-byte BlueFlame buffer a lone post is written to the HCA with its WQE: the
  // firmware reads nothing of the send ring, by reference or inline.
  ReadLog log;
  const SendRun run = run_sends(blueflame(256), {false, true}, 64, &log);
  EXPECT_EQ(run.bf_posts, 2u);
  EXPECT_EQ(run.doorbell_posts, 0u);
  EXPECT_EQ(log.reads_within(run.sq_addr, run.sq_addr + run.sq_bytes), 0u);
  ASSERT_EQ(run.payload_read_after.size(), 2u);
  EXPECT_EQ(run.payload_read_after[1], 64u);  // only the by-reference message's payload
}

TEST(HcaBlueFlame, WithoutBlueFlameTheFirmwareReadsEachWqeFromTheRing) {
  // The same sends on a device without BlueFlame ring the doorbell, and each WQE is fetched.
  ReadLog log;
  const SendRun run = run_sends(tb::HcaBenchOptions{}, {false, true}, 64, &log);
  EXPECT_EQ(run.bf_posts, 0u);
  EXPECT_EQ(run.doorbell_posts, 2u);
  EXPECT_EQ(log.reads_within(run.sq_addr, run.sq_addr + run.sq_bytes), 2u);
}

TEST(HcaBlueFlame, AWqeTooLargeForTheBufferGoesByDoorbell) {
  // 64 bytes of WQE and 192 inline do not fit a 128-byte buffer: the driver rings the
  // doorbell and the firmware fetches the WQE, inline data included, from the ring.
  ReadLog log;
  const SendRun run = run_sends(blueflame(128), {true}, kMaxInline, &log);
  EXPECT_EQ(run.bf_posts, 0u);
  EXPECT_EQ(run.doorbell_posts, 1u);
  EXPECT_EQ(log.reads_within(run.sq_addr, run.sq_addr + run.sq_bytes), 1u);
  ASSERT_EQ(run.payload_read_after.size(), 1u);
  EXPECT_EQ(run.payload_read_after[0], 0u);
}
