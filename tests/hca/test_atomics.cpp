// RC atomics (IBA 9.4.5): FETCH_AND_ADD and CMP_AND_SWP execute once each, linearizably, on
// the responder's memory; the original value returns into the requester's 8-byte SGE; a
// duplicate after a lost ATOMIC ACKNOWLEDGE is answered from the responder's saved results
// (IBA 9.7.5.1.3); access and alignment errors NAK with the statuses libibverbs reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <systemc>
#include <vector>

#include "hca/hca_bench.h"

using namespace ibvp;
using namespace ibvp::verbs;
using sc_core::SC_MS;
using sc_core::sc_time;

namespace {

constexpr uint64_t kCounter = tb::Side::kBuffer + 0x8000;  // on h2, 8-byte aligned
constexpr uint64_t kResults = tb::Side::kBuffer + 0x1000;  // on h1: one 8-byte slot per atomic
constexpr uint32_t kAtomicAccess = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_ATOMIC;
constexpr uint8_t kAtomicAck = 0x12;

struct DropFirst {
  int opcode = -1;
  int dropped = 0;
  bool operator()(const ibvp_rx_packet& p) {
    if (dropped > 0 || p.opcode != opcode) return false;
    ++dropped;
    return true;
  }
};

// Requesters on h1 (n QPs), each connected to its own responder QP on h2, whose memory holds
// the counter. `access` is the responders' QP and region access.
struct AtomicSetup {
  tb::Side a, b;
  std::vector<QueuePair*> req, resp;
  void open(tb::HcaBench& bench, int n, uint32_t access = kAtomicAccess, uint8_t timeout = 14) {
    tb::open_side(a, *bench.h1, QpType::rc, 0, kAtomicAccess, 256);
    tb::open_side(b, *bench.h2, QpType::rc, 0, access, 256);
    req.push_back(a.qp);
    resp.push_back(b.qp);
    for (int i = 1; i < n; ++i) {
      req.push_back(tb::add_qp(a, QpType::rc, 0));
      resp.push_back(tb::add_qp(b, QpType::rc, 0));
    }
    tb::ConnectedAttrs c;
    c.access = access;
    c.timeout = timeout;
    c.max_rd_atomic = 4;
    c.max_dest_rd_atomic = 4;
    for (int i = 0; i < n; ++i) {
      tb::bring_up_connected(req[i], b.lid, resp[i]->qp_num, c);
      tb::bring_up_connected(resp[i], a.lid, req[i]->qp_num, c);
    }
  }
  SendWr fetch_add(uint64_t wr_id, uint64_t result_addr, uint64_t add, uint64_t remote = kCounter) const {
    SendWr w;
    w.wr_id = wr_id;
    w.opcode = WrOpcode::atomic_fetch_and_add;
    w.sg = {result_addr, 8, a.mr->lkey};
    w.send_flags = SEND_SIGNALED;
    w.atomic.remote_addr = remote;
    w.atomic.rkey = b.mr->rkey;
    w.atomic.compare_add = add;
    return w;
  }
};

uint64_t read_u64(driver::HostNode& h, uint64_t addr) {
  uint64_t v = 0;
  h.memory.read(addr, &v, sizeof v);
  return v;
}

}  // namespace

TEST(HcaAtomics, ConcurrentFetchAddsFromTwoQpsEndAtTheExactSumAndReturnDistinctOriginalValues) {
  tb::HcaBench bench;
  AtomicSetup s;
  constexpr int kPerQp = 24;
  std::vector<Wc> wcs;
  bench.h1->cpu.run([&] {
    s.open(bench, 2);
    // Interleaved chains, 4 outstanding per QP (max_rd_atomic): the responder sees the two
    // QPs' requests mixed.
    std::vector<SendWr> w[2];
    for (int q = 0; q < 2; ++q) {
      for (int i = 0; i < kPerQp; ++i)
        w[q].push_back(s.fetch_add(q * 100 + i, kResults + 8 * (q * kPerQp + i), 1));
      for (int i = 0; i + 1 < kPerQp; ++i) w[q][i].next = &w[q][i + 1];
    }
    ASSERT_EQ(post_send(s.req[0], &w[0][0]), 0);
    ASSERT_EQ(post_send(s.req[1], &w[1][0]), 0);
    for (int i = 0; i < 2 * kPerQp; ++i) {
      Wc wc;
      poll_cq_wait(s.a.send_cq, wc);
      wcs.push_back(wc);
    }
  });
  sc_core::sc_start(sc_time(5, SC_MS));
  ASSERT_EQ(wcs.size(), size_t{2 * kPerQp});
  for (const Wc& wc : wcs) {
    EXPECT_EQ(wc.status, WcStatus::success);
    EXPECT_EQ(wc.opcode, WcOpcode::fetch_add);
    EXPECT_EQ(wc.byte_len, 8u);
  }
  EXPECT_EQ(read_u64(*bench.h2, kCounter), uint64_t{2 * kPerQp});
  // Linearizable: each add saw the counter after all earlier ones, so the originals are
  // exactly 0 .. 47, each once.
  std::vector<uint64_t> orig;
  for (int i = 0; i < 2 * kPerQp; ++i) orig.push_back(read_u64(*bench.h1, kResults + 8 * i));
  std::sort(orig.begin(), orig.end());
  for (int i = 0; i < 2 * kPerQp; ++i) EXPECT_EQ(orig[i], uint64_t(i));
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_ATOMICS), uint64_t{2 * kPerQp});
}

TEST(HcaAtomics, CompareSwapWritesOnlyWhenTheCompareMatchesAndAlwaysReturnsTheOriginal) {
  tb::HcaBench bench;
  AtomicSetup s;
  uint64_t after_miss = 0, orig_miss = 0, orig_hit = 0;
  Wc miss, hit;
  bench.h1->cpu.run([&] {
    s.open(bench, 1);
    const uint64_t initial = 0x1122334455667788ull;
    bench.h2->memory.write(kCounter, &initial, 8);
    SendWr w;
    w.wr_id = 1;
    w.opcode = WrOpcode::atomic_cmp_and_swp;
    w.sg = {kResults, 8, s.a.mr->lkey};
    w.send_flags = SEND_SIGNALED;
    w.atomic.remote_addr = kCounter;
    w.atomic.rkey = s.b.mr->rkey;
    w.atomic.compare_add = 42;  // does not match
    w.atomic.swap = 7;
    ASSERT_EQ(post_send(s.req[0], &w), 0);
    poll_cq_wait(s.a.send_cq, miss);
    after_miss = read_u64(*bench.h2, kCounter);
    orig_miss = read_u64(*bench.h1, kResults);
    w.wr_id = 2;
    w.sg.addr = kResults + 8;
    w.atomic.compare_add = initial;  // matches
    ASSERT_EQ(post_send(s.req[0], &w), 0);
    poll_cq_wait(s.a.send_cq, hit);
    orig_hit = read_u64(*bench.h1, kResults + 8);
  });
  sc_core::sc_start(sc_time(2, SC_MS));
  EXPECT_EQ(miss.status, WcStatus::success);
  EXPECT_EQ(miss.opcode, WcOpcode::comp_swap);
  EXPECT_EQ(after_miss, 0x1122334455667788ull) << "a compare that does not match writes nothing";
  EXPECT_EQ(orig_miss, 0x1122334455667788ull);
  EXPECT_EQ(hit.status, WcStatus::success);
  EXPECT_EQ(orig_hit, 0x1122334455667788ull);
  EXPECT_EQ(read_u64(*bench.h2, kCounter), 7u);
}

TEST(HcaAtomics, LostAtomicAcknowledgeIsRetriedAndAnsweredFromSavedResultsSoTheAddHappensOnce) {
  tb::HcaBench bench;
  AtomicSetup s;
  DropFirst drop;
  drop.opcode = kAtomicAck;
  bench.h1->hca.set_test_rx_drop(std::ref(drop));
  Wc wc;
  bench.h1->cpu.run([&] {
    s.open(bench, 1, kAtomicAccess, 3);  // local ACK timeout 32.8 us
    const uint64_t initial = 1000;
    bench.h2->memory.write(kCounter, &initial, 8);
    SendWr w = s.fetch_add(5, kResults, 5);
    ASSERT_EQ(post_send(s.req[0], &w), 0);
    poll_cq_wait(s.a.send_cq, wc);
  });
  sc_core::sc_start(sc_time(2, SC_MS));
  EXPECT_EQ(drop.dropped, 1);
  EXPECT_EQ(wc.status, WcStatus::success);
  EXPECT_EQ(read_u64(*bench.h2, kCounter), 1005u) << "the retried add was executed again";
  EXPECT_EQ(read_u64(*bench.h1, kResults), 1000u) << "the replayed answer carries the original value";
  EXPECT_EQ(bench.h1->hca.fw_counter(IBVP_CNT_ACK_TIMEOUTS), 1u);
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_ATOMICS), 1u);
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_ATOMIC_REPLAYS), 1u);
}

TEST(HcaAtomics, WithoutRemoteAtomicAccessTheRequestCompletesWithRemAccessErrAndMemoryIsUntouched) {
  tb::HcaBench bench;
  AtomicSetup s;
  Wc wc;
  bench.h1->cpu.run([&] {
    s.open(bench, 1, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ);
    SendWr w = s.fetch_add(1, kResults, 9);
    ASSERT_EQ(post_send(s.req[0], &w), 0);
    poll_cq_wait(s.a.send_cq, wc);
  });
  sc_core::sc_start(sc_time(2, SC_MS));
  EXPECT_EQ(wc.status, WcStatus::rem_access_err);
  EXPECT_EQ(read_u64(*bench.h2, kCounter), 0u);
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_ATOMICS), 0u);
}

TEST(HcaAtomics, MisalignedTargetCompletesWithRemInvReqErrAndMemoryIsUntouched) {
  tb::HcaBench bench;
  AtomicSetup s;
  Wc wc;
  bench.h1->cpu.run([&] {
    s.open(bench, 1);
    SendWr w = s.fetch_add(1, kResults, 9, kCounter + 4);
    ASSERT_EQ(post_send(s.req[0], &w), 0);
    poll_cq_wait(s.a.send_cq, wc);
  });
  sc_core::sc_start(sc_time(2, SC_MS));
  EXPECT_EQ(wc.status, WcStatus::rem_inv_req_err);
  EXPECT_EQ(read_u64(*bench.h2, kCounter), 0u);
  EXPECT_EQ(read_u64(*bench.h2, kCounter + 8), 0u);
}

TEST(HcaAtomics, AtomicsOnAUdQpOrInlineAreRefusedByPostSend) {
  tb::HcaBench bench;
  int ud_err = 0, inline_err = 0;
  bench.h1->cpu.run([&] {
    AtomicSetup s;
    s.open(bench, 1);
    SendWr w = s.fetch_add(1, kResults, 1);
    w.send_flags |= SEND_INLINE;
    inline_err = post_send(s.req[0], &w);
    QueuePair* ud = tb::add_qp(s.a, QpType::ud, 0);
    tb::bring_up(ud, 0, 0);
    w.send_flags = SEND_SIGNALED;
    w.ud.ah = create_ah(s.a.pd, AhAttr{s.b.lid, 0, 1});
    w.ud.remote_qpn = s.resp[0]->qp_num;
    ASSERT_NE(w.ud.ah, nullptr);
    ud_err = post_send(ud, &w);
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  EXPECT_EQ(inline_err, EINVAL);
  EXPECT_EQ(ud_err, EINVAL);
}
