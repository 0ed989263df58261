// Scatter/gather lists (IBA 10.7.2.1; libibverbs ibv_sge lists, max_send_sge and max_recv_sge
// in the QP's caps): a send WQE's payload is gathered from its SGEs in order (one DMA read
// each), a SEND is scattered over the receive WQE's SGEs in order, an RDMA READ's responses
// over the READ's SGEs; a SEND longer than the receive SGEs' total is a local length error
// at the receiver; inline data is gathered by the CPU and counts against max_inline_data.
#include <gtest/gtest.h>

#include <cstdint>
#include <systemc>
#include <vector>

#include "hca/hca_bench.h"

using namespace ibvp;
using namespace ibvp::verbs;
using sc_core::SC_MS;
using sc_core::sc_time;

namespace {

constexpr uint32_t kAll = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ;
constexpr uint64_t kBuf = tb::Side::kBuffer;

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 13 + (i >> 7));
  return v;
}

// RC QPs with `send_sge` and `recv_sge` SGEs (and `inline_bytes` inline) on both hosts,
// connected (MTU 1024, so a 1637-byte message is two packets that split SGEs).
struct SgePair {
  tb::Side a, b;
  QueuePair* qa = nullptr;
  QueuePair* qb = nullptr;
  void open(tb::HcaBench& bench, uint32_t send_sge, uint32_t recv_sge, uint32_t inline_bytes = 0) {
    tb::open_side(a, *bench.h1, QpType::rc, 0, kAll);
    tb::open_side(b, *bench.h2, QpType::rc, 0, kAll);
    QpInitAttr init;
    init.qp_type = QpType::rc;
    init.cap.max_send_sge = send_sge;
    init.cap.max_recv_sge = recv_sge;
    init.cap.max_inline_data = inline_bytes;
    init.send_cq = a.send_cq;
    init.recv_cq = a.recv_cq;
    qa = create_qp(a.pd, init);
    init.send_cq = b.send_cq;
    init.recv_cq = b.recv_cq;
    qb = create_qp(b.pd, init);
    ASSERT_NE(qa, nullptr);
    ASSERT_NE(qb, nullptr);
    tb::ConnectedAttrs c;
    c.access = kAll;
    c.max_rd_atomic = 4;
    c.max_dest_rd_atomic = 4;
    tb::bring_up_connected(qa, b.lid, qb->qp_num, c);
    tb::bring_up_connected(qb, a.lid, qa->qp_num, c);
  }
};

// Three source SGEs of unequal lengths, apart in h1's buffer; their concatenation.
struct Source {
  std::vector<Sge> sges;
  std::vector<uint8_t> message;
  Source(driver::HostNode& h, uint32_t lkey, std::vector<uint32_t> lengths) {
    uint64_t at = kBuf + 0x1000;
    uint8_t seed = 1;
    for (uint32_t len : lengths) {
      const std::vector<uint8_t> d = pattern(len, seed);
      h.memory.write(at, d.data(), d.size());
      sges.push_back({at, len, lkey});
      message.insert(message.end(), d.begin(), d.end());
      at += 0x3000;  // never adjacent: the gather must follow the list
      seed = static_cast<uint8_t>(seed + 50);
    }
  }
};

}  // namespace

TEST(HcaSge, ThreeSgeSendWithUnequalLengthsArrivesByteExactInATwoSgeReceive) {
  tb::HcaBench bench;
  SgePair p;
  Wc swc, rwc;
  std::vector<uint8_t> message;
  constexpr uint64_t kR1 = kBuf + 0x40000, kR2 = kBuf + 0x50000;
  const std::vector<uint8_t> sentinel(64, 0xEE);
  bench.h1->cpu.run([&] {
    p.open(bench, 3, 2);
    const Source src(*bench.h1, p.a.mr->lkey, {100, 1500, 37});  // 1637 bytes: two packets at MTU 1024
    message = src.message;
    bench.h2->memory.write(kR2 + 637, sentinel.data(), sentinel.size());
    Sge rs[2] = {{kR1, 1000, p.b.mr->lkey}, {kR2, 700, p.b.mr->lkey}};
    RecvWr r;
    r.wr_id = 7;
    r.sg_list = rs;
    r.num_sge = 2;
    ASSERT_EQ(post_recv(p.qb, &r), 0);
    SendWr w;
    w.wr_id = 3;
    w.sg_list = const_cast<Sge*>(src.sges.data());
    w.num_sge = 3;
    w.send_flags = SEND_SIGNALED;
    ASSERT_EQ(post_send(p.qa, &w), 0);
    poll_cq_wait(p.a.send_cq, swc);
    poll_cq_wait(p.b.recv_cq, rwc);
  });
  sc_core::sc_start(sc_time(2, SC_MS));
  EXPECT_EQ(swc.status, WcStatus::success);
  EXPECT_EQ(swc.byte_len, 1637u);
  ASSERT_EQ(rwc.status, WcStatus::success);
  EXPECT_EQ(rwc.byte_len, 1637u);
  ASSERT_EQ(message.size(), 1637u);
  EXPECT_EQ(bench.h2->memory.read(kR1, 1000), std::vector<uint8_t>(message.begin(), message.begin() + 1000));
  EXPECT_EQ(bench.h2->memory.read(kR2, 637), std::vector<uint8_t>(message.begin() + 1000, message.end()));
  EXPECT_EQ(bench.h2->memory.read(kR2 + 637, 64), sentinel) << "bytes past the message were written";
}

TEST(HcaSge, SendLongerThanTheReceiveSgesTotalIsALocalLengthError) {
  tb::HcaBench bench;
  SgePair p;
  Wc swc, rwc;
  bench.h1->cpu.run([&] {
    p.open(bench, 3, 2);
    const Source src(*bench.h1, p.a.mr->lkey, {100, 1500, 37});
    Sge rs[2] = {{kBuf + 0x40000, 1000, p.b.mr->lkey}, {kBuf + 0x50000, 600, p.b.mr->lkey}};  // 1600 < 1637
    RecvWr r;
    r.sg_list = rs;
    r.num_sge = 2;
    ASSERT_EQ(post_recv(p.qb, &r), 0);
    SendWr w;
    w.sg_list = const_cast<Sge*>(src.sges.data());
    w.num_sge = 3;
    w.send_flags = SEND_SIGNALED;
    ASSERT_EQ(post_send(p.qa, &w), 0);
    poll_cq_wait(p.b.recv_cq, rwc);
    poll_cq_wait(p.a.send_cq, swc);
  });
  sc_core::sc_start(sc_time(2, SC_MS));
  EXPECT_EQ(rwc.status, WcStatus::loc_len_err);
  EXPECT_EQ(swc.status, WcStatus::rem_inv_req_err);
}

TEST(HcaSge, RdmaWriteGathersAndRdmaReadScattersThreeSges) {
  tb::HcaBench bench;
  SgePair p;
  Wc wwc, rwc;
  std::vector<uint8_t> message;
  constexpr uint64_t kRemote = kBuf + 0x60000;
  constexpr uint64_t kBack[3] = {kBuf + 0x70000, kBuf + 0x74000, kBuf + 0x78000};
  const uint32_t back_len[3] = {1200, 300, 137};
  bench.h1->cpu.run([&] {
    p.open(bench, 3, 1);
    const Source src(*bench.h1, p.a.mr->lkey, {100, 1500, 37});
    message = src.message;
    SendWr w;
    w.opcode = WrOpcode::rdma_write;
    w.sg_list = const_cast<Sge*>(src.sges.data());
    w.num_sge = 3;
    w.send_flags = SEND_SIGNALED;
    w.rdma.remote_addr = kRemote;
    w.rdma.rkey = p.b.mr->rkey;
    ASSERT_EQ(post_send(p.qa, &w), 0);
    poll_cq_wait(p.a.send_cq, wwc);
    // Read the 1637 bytes back into three other SGEs of other lengths.
    Sge back[3];
    for (int i = 0; i < 3; ++i) back[i] = {kBack[i], back_len[i], p.a.mr->lkey};
    SendWr r;
    r.opcode = WrOpcode::rdma_read;
    r.sg_list = back;
    r.num_sge = 3;
    r.send_flags = SEND_SIGNALED;
    r.rdma.remote_addr = kRemote;
    r.rdma.rkey = p.b.mr->rkey;
    ASSERT_EQ(post_send(p.qa, &r), 0);
    poll_cq_wait(p.a.send_cq, rwc);
  });
  sc_core::sc_start(sc_time(2, SC_MS));
  EXPECT_EQ(wwc.status, WcStatus::success);
  ASSERT_EQ(rwc.status, WcStatus::success);
  EXPECT_EQ(rwc.byte_len, 1637u);
  EXPECT_EQ(bench.h2->memory.read(kRemote, 1637), message);
  size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(bench.h1->memory.read(kBack[i], back_len[i]),
              std::vector<uint8_t>(message.begin() + at, message.begin() + at + back_len[i]))
        << "READ SGE " << i;
    at += back_len[i];
  }
}

TEST(HcaSge, InlineGathersEverySgeAndCountsTheirTotalAgainstMaxInlineData) {
  tb::HcaBench bench;
  SgePair p;
  Wc rwc;
  int too_long = 0, too_many = 0;
  std::vector<uint8_t> message;
  bench.h1->cpu.run([&] {
    p.open(bench, 2, 1, 64);
    const Source src(*bench.h1, p.a.mr->lkey, {40, 24});  // 64 bytes: exactly max_inline_data
    message = src.message;
    RecvWr r;
    r.sg = {kBuf + 0x40000, 256, p.b.mr->lkey};
    ASSERT_EQ(post_recv(p.qb, &r), 0);
    SendWr w;
    w.sg_list = const_cast<Sge*>(src.sges.data());
    w.num_sge = 2;
    w.send_flags = SEND_SIGNALED | SEND_INLINE;
    ASSERT_EQ(post_send(p.qa, &w), 0);
    poll_cq_wait(p.b.recv_cq, rwc);
    Sge longer[2] = {src.sges[0], {src.sges[1].addr, 25, src.sges[1].lkey}};  // 65 bytes
    w.sg_list = longer;
    too_long = post_send(p.qa, &w);
    Sge three[3] = {src.sges[0], src.sges[1], src.sges[1]};
    w.sg_list = three;
    w.num_sge = 3;  // above max_send_sge
    w.send_flags = SEND_SIGNALED;
    too_many = post_send(p.qa, &w);
  });
  sc_core::sc_start(sc_time(2, SC_MS));
  ASSERT_EQ(rwc.status, WcStatus::success);
  EXPECT_EQ(rwc.byte_len, 64u);
  EXPECT_EQ(bench.h2->memory.read(kBuf + 0x40000, 64), message);
  EXPECT_EQ(too_long, EINVAL);
  EXPECT_EQ(too_many, EINVAL);
}
