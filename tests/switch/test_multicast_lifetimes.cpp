// Lifetimes and multicast together (IBA 18.2.5.4; seed 000 Secs. 3.5 and 3.6.1): a copy
// waiting at a blocked output is dropped alone when its HOQ lifetime runs out; the other
// copies of its packet go on, the input frees when the last copy has left or been dropped, and
// conservation holds counting copies. One switch, h1 sends to {h2, h3, h4}, and the output to
// h3 (port 3) never gets a credit. Every output's HOQLife is code 3 (32.8 us), port 3's code 1
// (8.2 us): each copy is judged by its own output's lifetime, and a synchronous multicast's
// copies are all heads of their outputs while they wait for each other.
#include <gtest/gtest.h>

#include <algorithm>
#include <systemc>

#include "common/fabrics.h"
#include "platform/builder/fabric.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_NS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

constexpr uint32_t kSwitch = 0;     // tb::star: the switch is node 0
constexpr uint64_t kLifePs = 8'192'000;  // HOQLife code 1 (port 3): 4.096 us x 2

Scenario blocked_group(sw::Replication scheme, uint32_t packets) {
  Scenario s = tb::basic_scenario(tb::star(5));
  s.switch_cfg.multicast_replication = scheme;
  s.switch_cfg.hoq_life = 3;
  MulticastGroupConfig g;
  g.name = "g";
  g.source = "h1";
  g.members = {"h2", "h3", "h4"};
  s.multicast.push_back(g);
  // One 256-byte packet every 20 us (290 ns on the wire): each copy at port 3 is alone at the
  // head for a whole lifetime before the next comes.
  FlowConfig f = tb::saturating_flow("mc", "h1", "g", 256);
  f.generator = GeneratorKind::constant;
  f.load = 290.0 / 20'000.0;
  f.stop = sc_time(20 * packets - 10, SC_US);
  s.flows.push_back(f);
  s.duration = sc_time(20 * packets + 100, SC_US);
  s.outputs.packets_csv = true;
  return s;
}

// h3's buffer gives no credit ever, and port 3's copies live 8.2 us at the head.
void block_port_3(Fabric& f) {
  f.switch_at(kSwitch)->set_peer_buffer(3, 0, 0);
  f.switch_at(kSwitch)->set_hoq_life(3, 0, 1);
}

void expect_only_the_blocked_copies_dropped(sw::Replication scheme) {
  constexpr uint32_t kPackets = 10;
  const Scenario s = blocked_group(scheme, kPackets);
  Fabric f(s);
  block_port_3(f);
  sc_core::sc_start(s.duration);
  f.finish();
  const metrics::Recorder& r = f.recorder();
  const uint64_t sent = r.flows()[0].injected;
  ASSERT_EQ(sent, kPackets);
  const std::vector<uint64_t> copies = r.member_copies(0);  // h2, h3, h4
  EXPECT_EQ(copies[0], sent);
  EXPECT_EQ(copies[1], 0u);
  EXPECT_EQ(copies[2], sent);
  // The copy to h3 of every packet, and nothing else, went by the HOQ lifetime.
  EXPECT_EQ(r.dropped(), sent);
  EXPECT_EQ(r.flows()[0].dropped, sent);
  EXPECT_EQ(r.drops_by_reason().at(static_cast<uint8_t>(ib::DropReason::hoq_lifetime)), sent);
  EXPECT_EQ(f.switch_at(kSwitch)->counters(3).xmit_discards, sent);
  EXPECT_EQ(f.switch_at(kSwitch)->counters(3).packets_tx, 0u);
  // Conservation counting copies, and nothing left held: the input freed after each
  // packet's last copy, its credits returned.
  EXPECT_EQ(r.replicated(), 2 * sent);
  EXPECT_EQ(r.injected() + r.replicated(), r.delivered() + r.dropped() + f.packets_in_flight());
  EXPECT_EQ(f.packets_in_flight(), 0u);
  EXPECT_EQ(f.switch_at(kSwitch)->buffered_packets(), 0u);
  bool releasing = false;
  EXPECT_EQ(f.switch_at(kSwitch)->input_held_blocks(1, 0, sc_core::sc_time_stamp().value(), releasing), 0u);
}

}  // namespace

TEST(MulticastLifetimes, AsynchronousCopyAtABlockedOutputIsDroppedAloneAndTheOthersArrive) {
  expect_only_the_blocked_copies_dropped(sw::Replication::asynchronous);
}

// Synchronous copies leave together: before lifetimes could drop a copy, a blocked branch
// held its siblings forever. Now the blocked copy expires first and the others go then.
TEST(MulticastLifetimes, SynchronousBlockedBranchExpiresAndItsSiblingsLeaveTogetherThen) {
  expect_only_the_blocked_copies_dropped(sw::Replication::synchronous);
}

TEST(MulticastLifetimes, CentralBufferCopyAtABlockedOutputIsDroppedAndFreesItsSpace) {
  expect_only_the_blocked_copies_dropped(sw::Replication::central_buffer);
}

// The switch's transmissions and drops of the multicast flow.
struct Watch : sim::FabricObserver {
  std::vector<std::pair<uint16_t, uint64_t>> starts;  // (output port, start)
  std::vector<uint64_t> drops;
  void on_transmit(uint32_t node, uint16_t port, const ib::Packet& p, uint64_t s, uint64_t) override {
    if (node == kSwitch && p.flow == 0) starts.push_back({port, s});
  }
  void on_drop(const ib::Packet& p, uint32_t node, uint64_t t) override {
    if (node == kSwitch && p.flow == 0) drops.push_back(t);
  }
};

// The synchronous siblings wait exactly one HOQ lifetime: the copy to h3 becomes the head of
// output 3 when the packet is routed (its head in + the pipeline delay) and expires kLifePs
// later; the copies to h2 and h4 start at that instant, together.
TEST(MulticastLifetimes, SynchronousSiblingsStartTogetherWhenTheBlockedCopyExpires) {
  const Scenario s = blocked_group(sw::Replication::synchronous, 1);
  Fabric f(s);
  Watch w;
  f.probe().attach(&w);
  block_port_3(f);
  sc_core::sc_start(s.duration);
  ASSERT_EQ(f.recorder().packets().size(), 1u);  // the copies share the packet's record
  const uint64_t injected = f.recorder().packets()[0].injected_ps;
  const uint64_t routed = injected + 5'000 + 100'000;  // 1 m of cable, the pipeline delay
  ASSERT_EQ(w.drops.size(), 1u);
  EXPECT_EQ(w.drops[0], routed + kLifePs);
  ASSERT_EQ(w.starts.size(), 2u);
  std::sort(w.starts.begin(), w.starts.end());
  EXPECT_EQ(w.starts[0], (std::pair<uint16_t, uint64_t>{2, routed + kLifePs}));
  EXPECT_EQ(w.starts[1], (std::pair<uint16_t, uint64_t>{4, routed + kLifePs}));
}

// With one HOQLife on every output, a synchronous multicast's copies, all heads since the
// packet was routed, expire at one instant: the blocked branch takes its siblings with it.
TEST(MulticastLifetimes, SynchronousCopiesWithEqualLifetimesExpireTogether) {
  const Scenario s = blocked_group(sw::Replication::synchronous, 5);
  Fabric f(s);
  Watch w;
  f.probe().attach(&w);
  f.switch_at(kSwitch)->set_peer_buffer(3, 0, 0);
  sc_core::sc_start(s.duration);
  const metrics::Recorder& r = f.recorder();
  ASSERT_EQ(r.flows()[0].injected, 5u);
  EXPECT_EQ(r.dropped(), 15u);
  EXPECT_TRUE(w.starts.empty());
  for (size_t k = 0; k < w.drops.size(); k += 3) {
    EXPECT_EQ(w.drops[k + 1], w.drops[k]);
    EXPECT_EQ(w.drops[k + 2], w.drops[k]);
  }
  EXPECT_EQ(r.injected() + r.replicated(), r.delivered() + r.dropped() + f.packets_in_flight());
  EXPECT_EQ(f.switch_at(kSwitch)->buffered_packets(), 0u);
}

// Without a lifetime the blocked branch holds a synchronous multicast for good: the siblings
// never leave (the rule the lifetimes now lift), and the packet stays in the input.
TEST(MulticastLifetimes, SynchronousBlockedBranchWithInfiniteLifetimeHoldsItsSiblings) {
  Scenario s = blocked_group(sw::Replication::synchronous, 1);
  s.switch_cfg.hoq_life = sw::kLifetimeInfinite;
  Fabric f(s);
  f.switch_at(kSwitch)->set_peer_buffer(3, 0, 0);
  sc_core::sc_start(s.duration);
  const metrics::Recorder& r = f.recorder();
  EXPECT_EQ(r.dropped(), 0u);
  EXPECT_EQ(r.member_copies(0)[0], 0u);
  EXPECT_EQ(r.member_copies(0)[2], 0u);
  EXPECT_EQ(f.switch_at(kSwitch)->buffered_packets(), 1u);
}
