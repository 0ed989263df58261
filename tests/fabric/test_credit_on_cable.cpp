// The deadlock watch's reading of "waits for credits" (platform/builder/deadlock_watch.h,
// IBA 7.9): an output VL that waits for credits can send nothing until a credit lands that
// was not already on its way. With event_order: canonical a credit update on the cable is
// an action of the receiving switch, not an announcement in its TxCredits (docs/parallel.md),
// and the watch must count it all the same: otherwise it takes an output for stuck while
// the credit that frees it is on the cable.
#include <gtest/gtest.h>

#include <map>
#include <systemc>
#include <tuple>
#include <vector>

#include "common/fabrics.h"
#include "models/link/link_rate.h"
#include "platform/builder/fabric.h"

using namespace ibvp;

namespace {

struct TxStarts : sim::FabricObserver {
  std::map<std::pair<uint32_t, uint16_t>, std::vector<uint64_t>> starts;  // (node, port) -> starts
  void on_transmit(uint32_t node, uint16_t port, const ib::Packet&, uint64_t start, uint64_t) override {
    starts[{node, port}].push_back(start);
  }
};

// Steps a congested chain of switches (buffers of two packets, so credits bind all the time)
// 1 ns at a time; whenever a switch output is read as waiting for credits at time T, its next
// transmission must start no sooner than T + the cable's propagation: a credit sent at T or
// later takes that long. Returns the violations.
int outputs_sent_sooner_than_a_new_credit_could_land(EventOrder order) {
  Scenario s = tb::congested_chain(order, sc_core::sc_time(40, sc_core::SC_US));
  s.switch_cfg.request_order = sw::RequestOrder::fifo;  // a head without credits blocks its VL
  Fabric f(s);
  TxStarts tx;
  f.probe().attach(&tx);
  const topo::Topology& t = s.topology;
  std::vector<std::tuple<uint32_t, uint16_t, uint64_t, uint64_t>> waiting;  // node, port, T, propagation
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  for (uint64_t step = 0; step < 40000; ++step) {
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_NS));
    const uint64_t now = sc_core::sc_time_stamp().value();
    for (uint32_t n = 0; n < t.nodes.size(); ++n) {
      const sw::Switch* sw = f.switch_at(n);
      if (!sw) continue;
      for (uint16_t p = 1; p <= t.nodes[n].num_ports; ++p) {
        const int l = t.link_at(n, p);
        if (l < 0 || !sw->vl_waits_for_credits(p, 0)) continue;
        waiting.emplace_back(n, p, now, link::LinkRate(t.links[static_cast<size_t>(l)].cfg).propagation().value());
      }
    }
  }
  f.finish();
  int violations = 0;
  for (const auto& [n, p, at, prop] : waiting) {
    const std::vector<uint64_t>& v = tx.starts[{n, p}];
    const auto next = std::lower_bound(v.begin(), v.end(), at);
    if (next != v.end() && *next < at + prop) ++violations;
  }
  EXPECT_GT(waiting.size(), 100u) << "the chain must be credit-bound for the test to mean anything";
  return violations;
}

}  // namespace

TEST(CreditOnCable, FifoOutputReadAsWaitingForCreditsSendsNoSoonerThanANewCreditCouldLand) {
  EXPECT_EQ(outputs_sent_sooner_than_a_new_credit_could_land(EventOrder::fifo), 0);
}

TEST(CreditOnCable, CanonicalOutputReadAsWaitingForCreditsSendsNoSoonerThanANewCreditCouldLand) {
  EXPECT_EQ(outputs_sent_sooner_than_a_new_credit_could_land(EventOrder::canonical), 0);
}

namespace {

struct OnCable : sim::FabricObserver {
  struct Sent {
    uint32_t node;
    uint16_t port;
    uint64_t start;
    uint32_t blocks;
  };
  std::vector<Sent> sent;
  void on_transmit(uint32_t node, uint16_t port, const ib::Packet& p, uint64_t start, uint64_t) override {
    sent.push_back({node, port, start, ib::blocks_for(p.size)});
  }
};

// Steps the same congested chain 1 ns at a time; at each step every switch input must count
// as held at least the blocks of the packets on the cable into it (sent, head not arrived):
// they take its space and request no output yet, so the watch must not read the buffer as
// holding only packets that wait at stuck outputs. Returns the steps where one did not.
int inputs_that_missed_a_packet_on_the_cable(EventOrder order) {
  const Scenario s = tb::congested_chain(order, sc_core::sc_time(20, sc_core::SC_US));
  Fabric f(s);
  OnCable tx;
  f.probe().attach(&tx);
  const topo::Topology& t = s.topology;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  int missed = 0, seen = 0;
  size_t first = 0;  // sends before it have all arrived
  for (uint64_t step = 0; step < 20000; ++step) {
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_NS));
    const uint64_t now = sc_core::sc_time_stamp().value();
    std::map<std::pair<uint32_t, uint16_t>, uint32_t> on_cable;  // far (node, port) -> blocks
    for (size_t i = first; i < tx.sent.size(); ++i) {
      const OnCable::Sent& x = tx.sent[i];
      const int l = t.link_at(x.node, x.port);
      const uint64_t prop = link::LinkRate(t.links[static_cast<size_t>(l)].cfg).propagation().value();
      // Strictly inside (start, head arrival): no doubt whether this step served either end.
      if (x.start < now && now < x.start + prop) {
        const topo::PortRef far = t.peer(x.node, x.port);
        if (f.switch_at(far.node)) on_cable[{far.node, far.port}] += x.blocks;
      }
    }
    while (first < tx.sent.size() && tx.sent[first].start + 10000 < now) ++first;
    for (const auto& [far, blocks] : on_cable) {
      bool releasing = false;
      ++seen;
      if (f.switch_at(far.first)->input_held_blocks(far.second, 0, now, releasing) < blocks) ++missed;
    }
  }
  f.finish();
  EXPECT_GT(seen, 100) << "packets must be on the cables for the test to mean anything";
  return missed;
}

}  // namespace

TEST(PacketOnCable, FifoInputCountsThePacketsOnTheCableIntoItAsHeld) {
  EXPECT_EQ(inputs_that_missed_a_packet_on_the_cable(EventOrder::fifo), 0);
}

TEST(PacketOnCable, CanonicalInputCountsThePacketsOnTheCableIntoItAsHeld) {
  EXPECT_EQ(inputs_that_missed_a_packet_on_the_cable(EventOrder::canonical), 0);
}
