// How the default firmware multiplexes several QPs' messages onto the port ("mux=..."):
// seed 003 Sec. 3.3.1 and 5.3 compare flit-level multiplexing in the NIC with
// message-level, where a message chosen goes whole. On an HCA the grain is the packet.
// h1 sends 4 KiB UC SENDs (four 1 KiB packets each) on two QPs to two QPs on h2; the packets
// that reach h2's rx engine (observed, none dropped by the observer) show the order on the
// wire. h2 posts no receives: UC drops a SEND it cannot place, silently (IBA 9.7.5.1.3),
// after the observer has seen it.
#include <gtest/gtest.h>

#include <algorithm>
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
constexpr uint32_t kPacketsPerMessage = 4;  // MTU 1024
constexpr int kMessages = 40;               // per QP

struct Arrival {
  uint64_t ps;
  int qp;       // 0 or 1: which of h1's QPs sent it
  uint32_t psn;
};

std::vector<Arrival> run(const std::string& args) {
  tb::HcaBenchOptions o;
  o.h1.hca.firmware_args = args;
  o.h1.hca.event_cycles = 20;
  o.h1.hca.hal_call_cycles = 2;
  o.h1.bus.lanes = 16;
  tb::HcaBench bench(o);
  tb::Side a, b;
  std::vector<uint32_t> dest(2);
  std::vector<Arrival> arrivals;
  bench.h2->hca.set_test_rx_drop([&](const ibvp_rx_packet& p) {
    for (int q = 0; q < 2; ++q)
      if (p.dest_qp == dest[q]) arrivals.push_back({sc_core::sc_time::from_value(ibvp::sim::TimedQueue::now_ps()).value(), q, p.psn});
    return false;
  });
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::uc);
    tb::open_side(b, *bench.h2, QpType::uc);
    QueuePair* b2 = tb::add_qp(b, QpType::uc, 0);
    ASSERT_NE(b2, nullptr);
    dest = {b.qp->qp_num, b2->qp_num};
    std::vector<QueuePair*> qps;
    for (int q = 0; q < 2; ++q) {
      QpInitAttr at;
      at.send_cq = a.send_cq;
      at.recv_cq = a.recv_cq;
      at.qp_type = QpType::uc;
      at.cap.max_send_wr = kMessages;
      QueuePair* qp = create_qp(a.pd, at);
      ASSERT_NE(qp, nullptr);
      qps.push_back(qp);
    }
    tb::ConnectedAttrs c;
    for (int q = 0; q < 2; ++q) tb::bring_up_connected(qps[q], b.lid, dest[q], c);
    tb::bring_up_connected(b.qp, a.lid, qps[0]->qp_num, c);
    tb::bring_up_connected(b2, a.lid, qps[1]->qp_num, c);
    std::vector<SendWr> w(kMessages);
    for (int q = 0; q < 2; ++q) {
      for (int i = 0; i < kMessages; ++i) {
        w[i] = SendWr{};
        w[i].sg = {tb::Side::kBuffer, kBytes, a.mr->lkey};  // unsignaled
        w[i].next = i + 1 < kMessages ? &w[i + 1] : nullptr;
      }
      ASSERT_EQ(post_send(qps[q], &w[0]), 0);
    }
  });
  sc_core::sc_start(sc_time(10, SC_MS));
  EXPECT_EQ(arrivals.size(), size_t{2 * kMessages * kPacketsPerMessage});
  return arrivals;
}

// Times the wire switched from one QP's packet to the other's while both had messages.
int switches_while_both_send(const std::vector<Arrival>& arr) {
  int seen[2] = {0, 0}, switches = 0;
  const int total = kMessages * static_cast<int>(kPacketsPerMessage);
  for (size_t i = 1; i < arr.size(); ++i) {
    ++seen[arr[i - 1].qp];
    if (seen[0] == total || seen[1] == total) break;
    if (arr[i].qp != arr[i - 1].qp) ++switches;
  }
  return switches;
}

}  // namespace

TEST(HcaMultiplexing, PacketLevelInterleavesTheMessagesOfTwoQps) {
  const auto arr = run("sched=rr");
  ASSERT_EQ(arr.size(), size_t{2 * kMessages * kPacketsPerMessage});
  // Round robin per packet: the QPs alternate packet by packet once both send, so nearly
  // every packet starts another QP's turn, several per message.
  EXPECT_GT(switches_while_both_send(arr), kMessages * 3);
}

TEST(HcaMultiplexing, MessageLevelSendsEachMessageWhole) {
  const auto arr = run("sched=rr,mux=message");
  ASSERT_EQ(arr.size(), size_t{2 * kMessages * kPacketsPerMessage});
  // Every message's four packets reach h2 back to back, in PSN order, none of the other
  // QP's between them (the run is split where the QP changes: each piece is whole messages).
  size_t i = 0;
  while (i < arr.size()) {
    size_t j = i;
    while (j + 1 < arr.size() && arr[j + 1].qp == arr[i].qp) ++j;
    const size_t run_length = j - i + 1;
    EXPECT_EQ(run_length % kPacketsPerMessage, 0u) << "a message split at packet " << i;
    for (size_t k = i + 1; k <= j; ++k) EXPECT_EQ(arr[k].psn, (arr[k - 1].psn + 1) & 0xFFFFFF) << k;
    i = j + 1;
  }
  // Round robin per message: the QPs still take turns, once per message.
  const int s = switches_while_both_send(arr);
  EXPECT_GE(s, kMessages / 2);
  EXPECT_LE(s, 2 * kMessages);
  // Holding the port for a message adds no idle time: a packet that starts a message follows
  // the one before as closely as packets inside a message follow each other (h1's per-packet
  // firmware and DMA work, not the cable, sets that pace here).
  std::vector<uint64_t> inside, boundary;
  for (size_t k = 20; k + 1 < arr.size() - 20; ++k)
    (k % kPacketsPerMessage == kPacketsPerMessage - 1 ? boundary : inside).push_back(arr[k + 1].ps - arr[k].ps);
  std::sort(inside.begin(), inside.end());
  ASSERT_FALSE(boundary.empty());
  EXPECT_LE(*std::max_element(boundary.begin(), boundary.end()), inside[inside.size() / 2]);
}

TEST(HcaMultiplexing, UnknownMultiplexingIsRefused) {
  tb::expect_firmware_refused("mux=flit", "unknown multiplexing 'flit' (packet, message)");
}
