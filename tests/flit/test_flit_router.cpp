// Seed 003's flit router (models/flit): conservation of flits and credits, wormhole order,
// zero-load latency against the pipeline, and the preemptive router's properties (Sec.
// 3.2, 5.1) against the traditional one, each against a number derived by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/flit/network.h"

namespace ibvp::flit {
namespace {

constexpr uint16_t kNoVc = 0xffff;

FlitConfig config(Variant v, uint16_t vcs = 4, std::vector<uint16_t> class_vcs = {1, 1, 2}) {
  FlitConfig c;
  c.variant = v;
  c.vcs_per_channel = vcs;
  c.class_vcs = std::move(class_vcs);
  c.vc_buffer_flits = 8;
  return c;
}

// A Vtick of `cycles` flit times: the connection reserved 1/cycles of the link.
uint64_t vtick(const FlitNetwork& net, uint64_t cycles) { return cycles * net.config().flit_cycle_ps(); }

// Latency of one message from its header's injection to its tail's delivery, in cycles.
Cycle network_latency(const Message& m) { return m.tail_delivered - m.head_injected; }

// A 2x2 mesh of 5-port routers (seed 003 Sec. 5.2), one endpoint per router on port 0,
// ports 1..4 east, west, north, south; XY routing. Router r sits at (r % 2, r / 2);
// endpoint r is node r, router r is node 4 + r.
std::unique_ptr<FlitNetwork> mesh2x2(const FlitConfig& cfg) {
  auto net = std::make_unique<FlitNetwork>(cfg);
  for (int e = 0; e < 4; ++e) net->add_endpoint();
  for (int r = 0; r < 4; ++r) net->add_router(5);
  for (uint32_t r = 0; r < 4; ++r) net->connect(r, 0, 4 + r, 0);
  net->connect(4 + 0, 1, 4 + 1, 2);  // (0,0) east -> (1,0) west
  net->connect(4 + 2, 1, 4 + 3, 2);
  net->connect(4 + 0, 4, 4 + 2, 3);  // (0,0) south -> (0,1) north
  net->connect(4 + 1, 4, 4 + 3, 3);
  for (uint32_t r = 0; r < 4; ++r)
    for (uint32_t d = 0; d < 4; ++d) {
      const uint32_t rx = r % 2, ry = r / 2, dx = d % 2, dy = d / 2;
      const uint16_t port = dx > rx ? 1 : dx < rx ? 2 : dy > ry ? 4 : dy < ry ? 3 : 0;
      net->set_route(4 + r, d, port);
    }
  return net;
}

// Mixed traffic, deterministic: every endpoint sends messages of every class to the others.
// A source sends one message of a reserved connection at a time, so without best effort's
// message-by-message VCs nothing would run out of VCs and preempt.
void offer_mixed_traffic(FlitNetwork& net, uint32_t endpoints, uint32_t messages, uint32_t seed) {
  uint32_t x = seed;
  auto next = [&] { return x = x * 1664525u + 1013904223u; };
  for (uint32_t i = 0; i < messages; ++i) {
    const uint32_t src = next() % endpoints;
    uint32_t dst = next() % endpoints;
    if (dst == src) dst = (dst + 1) % endpoints;
    const uint8_t cls = static_cast<uint8_t>(next() % 3);
    const uint32_t flits = cls == 0 ? 20 : 40;  // Sec. 4.1: control 20 flits, the others 40
    // Best effort (class 2) reserves nothing, the other classes reserve a rate per source.
    net.send(src, dst, cls, flits, next() % 2000, cls * 16 + src, vtick(net, cls == 2 ? 8 : 2), cls == 2);
  }
}

// Every cycle: flits in = flits out + buffered + on cables; dummies alike; per-VC credits.
void expect_conservation_every_cycle(FlitNetwork& net, Cycle cycles) {
  for (Cycle c = 0; c < cycles; ++c) {
    net.step();
    ASSERT_EQ(net.payload_flits_injected(),
              net.payload_flits_delivered() + net.payload_flits_buffered() + net.payload_flits_on_cables())
        << "cycle " << net.now();
    ASSERT_EQ(net.dummies_made(), net.dummies_delivered() + net.dummies_buffered() + net.dummies_on_cables())
        << "cycle " << net.now();
    ASSERT_EQ(net.credit_violation(), "") << "cycle " << net.now();
  }
}

TEST(FlitConfig, FlitCycleIsOneFlitTimeOnTheLink) {
  FlitConfig c;  // Sec. 4.1: 128-bit flits on 1.6 Gb/s links
  EXPECT_EQ(c.flit_cycle_ps(), 80'000u);
  EXPECT_EQ(c.problem(), "");
  c.class_vcs = {8, 8, 8};
  EXPECT_NE(c.problem().find("class_vcs gives 24 VCs"), std::string::npos);
}

TEST(FlitRouter, ZeroLoadLatencyIsPipelineStagesPlusSerialization) {
  // Per router: stages 1-3 for the header (3 cycles), the crossbar (1), stage 5 (1); per
  // cable d; then the n - 1 flits behind the header, one per cycle.
  for (uint32_t d : {1u, 3u}) {
    FlitConfig c = config(Variant::preemptive);
    c.link_delay_cycles = d;
    c.vc_buffer_flits = 40;
    auto one = FlitNetwork::single_router(c, 2);
    const uint32_t m = one->send(0, 1, 1, 40, 0);
    ASSERT_TRUE(one->drain(1000));
    EXPECT_EQ(network_latency(one->message(m)), 1 * (d + 4) + d + 40 - 1) << "d=" << d;
    EXPECT_EQ(one->message(m).head_injected, 0u);

    // Three routers between endpoints 0 and 3 of the mesh's diagonal: (0,0) -> (1,0) -> (1,1).
    auto mesh = mesh2x2(c);
    const uint32_t k = mesh->send(0, 3, 1, 40, 0);
    ASSERT_TRUE(mesh->drain(1000));
    EXPECT_EQ(network_latency(mesh->message(k)), 3 * (d + 4) + d + 40 - 1) << "d=" << d;
  }
}

TEST(FlitRouter, FlitsAndPerVcCreditsAreConservedInEveryDesign) {
  for (Variant v : {Variant::traditional, Variant::non_preemptive, Variant::preemptive}) {
    SCOPED_TRACE(variant_name(v));
    auto net = FlitNetwork::single_router(config(v), 8);
    offer_mixed_traffic(*net, 8, 300, 7);
    expect_conservation_every_cycle(*net, 6000);
    ASSERT_TRUE(net->drain(100000));
    EXPECT_EQ(net->payload_flits_buffered() + net->payload_flits_on_cables(), 0u);
  }
}

// Every NIC (nic_scheduler) and both multiplexings, on every router design of one 8-port
// router: flits and per-VC credits are conserved every cycle, and every message arrives
// whole and in order (the mesh's test is MeshDeliversEveryMessagesFlitsInSequence...).
TEST(FlitEndpoint, EveryNicConservesFlitsAndCreditsAndDeliversEveryMessageInOrder) {
  for (NicScheduler s : {NicScheduler::virtual_clock, NicScheduler::priority, NicScheduler::fcfs})
    for (NicMultiplexing mux : {NicMultiplexing::flit, NicMultiplexing::message})
      for (Variant v : {Variant::traditional, Variant::non_preemptive, Variant::preemptive}) {
        SCOPED_TRACE(std::string(nic_scheduler_name(s)) + " " + nic_multiplexing_name(mux) + " " + variant_name(v));
        FlitConfig c = config(v);
        c.nic_scheduler = s;
        c.nic_multiplexing = mux;
        auto net = FlitNetwork::single_router(c, 8);
        offer_mixed_traffic(*net, 8, 300, 11);
        expect_conservation_every_cycle(*net, 4000);
        ASSERT_TRUE(net->drain(200000));
        for (const Message& m : net->messages()) {
          EXPECT_FALSE(m.out_of_order);
          EXPECT_EQ(m.flits_delivered, m.flits);
        }
      }
}

TEST(FlitRouter, MeshConservesFlitsAndCreditsThroughPreemptions) {
  auto net = mesh2x2(config(Variant::preemptive));
  offer_mixed_traffic(*net, 4, 400, 3);
  expect_conservation_every_cycle(*net, 8000);
  ASSERT_TRUE(net->drain(100000));
  // The run exercised Sec. 3.2.1: routers made dummy tails and headers.
  EXPECT_GT(net->dummies_made(), 0u);
  EXPECT_EQ(net->dummies_made(), net->dummies_delivered());
}

TEST(FlitRouter, EachMessagesFlitsArriveInOrderAndCompleteEvenWhenPreempted) {
  for (Variant v : {Variant::traditional, Variant::preemptive}) {
    SCOPED_TRACE(variant_name(v));
    auto net = mesh2x2(config(v));
    offer_mixed_traffic(*net, 4, 400, 3);
    ASSERT_TRUE(net->drain(200000));
    uint32_t preempted = 0;
    for (const Message& m : net->messages()) {
      EXPECT_FALSE(m.out_of_order);
      EXPECT_EQ(m.flits_delivered, m.flits);
      preempted += m.preemptions > 0;
    }
    if (v == Variant::preemptive) EXPECT_GT(preempted, 0u);
    else EXPECT_EQ(preempted, 0u);
  }
}

// One VC per channel, shared by the classes: a control message (class 0) queued at a source
// behind a long best-effort message (class 2) on the same cable. Returns the control
// message's latency from its creation to its tail's delivery.
Cycle control_latency_behind(Variant v, uint32_t long_flits) {
  FlitConfig c = config(v, 1);
  c.shared_vcs = true;
  c.vc_buffer_flits = 40;
  auto net = FlitNetwork::single_router(c, 2);
  net->send(0, 1, 2, long_flits, 0, 0, vtick(*net, 8));
  const uint32_t ctl = net->send(0, 1, 0, 20, 100, 1, vtick(*net, 1));
  EXPECT_TRUE(net->drain(100000));
  const Message& m = net->message(ctl);
  EXPECT_FALSE(m.out_of_order);
  return m.tail_delivered - m.created;
}

TEST(FlitRouter, PreemptionBoundsAControlMessagesLatencyBehindALongMessageAndTraditionalDoesNot) {
  // P: the control message goes to the extra buffer and preempts (Sec. 3.2.1): its latency is
  // its zero-load latency (1 router, d = 1: 20 + 5) plus at most the committed flit and the
  // dummy tail ahead of it at the crossbar, whatever the long message's length.
  const Cycle zero_load = 20 + 5;
  const Cycle p_short = control_latency_behind(Variant::preemptive, 400);
  const Cycle p_long = control_latency_behind(Variant::preemptive, 1600);
  EXPECT_LE(p_short, zero_load + 2);
  EXPECT_EQ(p_short, p_long);
  // TR: it waits for the VC until the long message's tail has left the source, 400 - 100
  // flits after its creation, and 1200 more for a message 1200 flits longer.
  const Cycle tr_short = control_latency_behind(Variant::traditional, 400);
  const Cycle tr_long = control_latency_behind(Variant::traditional, 1600);
  EXPECT_GE(tr_short, 400 - 100 + 20u);
  EXPECT_EQ(tr_long - tr_short, 1200u);
}

// Fig. 2b at one router, two VCs per channel shared by the classes: endpoint 0 sends a long
// best-effort message m2 to endpoint 3 and another one to endpoint 4; endpoint 2 sends one to
// endpoint 3 (both of 3's VCs now held); then endpoint 1's control message m3 to endpoint 3
// finds both output VCs held by lower-priority messages and waits for m2's tail.
struct Fig2b {
  Cycle m2_done, m3_done;
};
Fig2b fig2b(bool acceleration) {
  FlitConfig c = config(Variant::preemptive, 2);
  c.shared_vcs = true;
  c.acceleration = acceleration;
  c.vc_buffer_flits = 40;
  auto net = FlitNetwork::single_router(c, 5);
  const uint32_t m2 = net->send(0, 3, 2, 400, 0, 0, vtick(*net, 4));
  net->send(0, 4, 2, 400, 0, 1, vtick(*net, 4));
  net->send(2, 3, 2, 400, 1, 2, vtick(*net, 4));
  const uint32_t m3 = net->send(1, 3, 0, 20, 60, 3, vtick(*net, 1));
  EXPECT_TRUE(net->drain(100000));
  return {net->message(m2).tail_delivered, net->message(m3).tail_delivered};
}

TEST(FlitRouter, AccelerationCompletesTheBlockingMessageAndTheHigherPriorityOneSooner) {
  const Fig2b with = fig2b(true), without = fig2b(false);
  // Without acceleration m2 shares its crossbar input with the other message of endpoint 0
  // and its output with endpoint 2's; accelerated it goes first at both (Sec. 3.2.2).
  EXPECT_LT(with.m2_done, without.m2_done);
  EXPECT_LT(with.m3_done, without.m3_done);
  // m3 follows m2's tail on the freed VC within its own zero-load time (20 + 5) and a few
  // cycles of allocation.
  EXPECT_LE(with.m3_done, with.m2_done + 20 + 5 + 3);
}

// Sec. 5.1, Fig. 6: endpoint 0 sends a long best-effort message to endpoint 1 and, every 93
// cycles (not a multiple of a block, so its headers meet blocks at every phase), a real-time
// message to endpoint 2, both through the same crossbar input. Endpoint 3 sends a long
// best-effort message to endpoint 1 too, so the first one is backlogged in its input VC.
// Returns the real-time messages' mean latency from creation to delivery.
double realtime_latency_with_blocks(uint32_t block_flits) {
  FlitConfig c = config(Variant::preemptive, 4, {1, 1, 2});
  c.block_flits = block_flits;
  c.vc_buffer_flits = 40;
  auto net = FlitNetwork::single_router(c, 4);
  net->send(0, 1, 2, 4000, 0, 0, vtick(*net, 16));
  net->send(3, 1, 2, 4000, 0, 2, vtick(*net, 16));
  std::vector<uint32_t> rt;
  for (int k = 0; k < 30; ++k) rt.push_back(net->send(0, 2, 1, 40, 50 + 93 * static_cast<Cycle>(k), 1, vtick(*net, 1)));
  EXPECT_TRUE(net->drain(100000));
  double sum = 0;
  for (uint32_t id : rt) sum += static_cast<double>(net->message(id).tail_delivered - net->message(id).created);
  return sum / static_cast<double>(rt.size());
}

TEST(FlitRouter, LargerBlocksRaiseRealTimeLatency) {
  const double b1 = realtime_latency_with_blocks(1), b5 = realtime_latency_with_blocks(5),
               b10 = realtime_latency_with_blocks(10);
  // Flit-level multiplexing: the real-time flits (smaller stamp) always go first: zero-load.
  EXPECT_DOUBLE_EQ(b1, 40 + 5);
  EXPECT_LT(b1, b5);
  EXPECT_LT(b5, b10);
}

// Sec. 4.2: only real-time messages carry a Vtick. Endpoints 0 (best effort, no reservation)
// and 1 (a stream reserving 1/100 of the link) each send a 40-flit message to endpoint 2 at
// cycle 0. Returns the tails' delivery cycles {best effort, real time}.
std::pair<Cycle, Cycle> unreserved_against_stream(Unreserved u) {
  FlitConfig c = config(Variant::non_preemptive);
  c.unreserved = u;
  c.vc_buffer_flits = 40;
  auto net = FlitNetwork::single_router(c, 3);
  const uint32_t be = net->send(0, 2, 2, 40, 0, 0, 0, /*unreserved=*/true);
  const uint32_t rt = net->send(1, 2, 1, 40, 0, 1, vtick(*net, 100));
  EXPECT_TRUE(net->drain(10000));
  return {net->message(be).tail_delivered, net->message(rt).tail_delivered};
}

TEST(FlitRouter, UnreservedFlitsGoAfterEveryReservedFlitUnderVirtualClock) {
  // last: the stream's flits win the output every cycle: its zero-load latency (40 + 5), and
  // the best-effort message after it.
  const auto [be_last, rt_last] = unreserved_against_stream(Unreserved::last);
  EXPECT_EQ(rt_last, 40u + 5);
  EXPECT_GT(be_last, rt_last);
  // rate: best effort charged at the link rate stamps its flits 100 times closer than the
  // stream's, and finishes first.
  const auto [be_rate, rt_rate] = unreserved_against_stream(Unreserved::rate);
  EXPECT_LT(be_rate, rt_rate);
  // offered: charged at its Vtick (here the link rate, what the message carries) in the one
  // order with the reservations, as rate; only the fabric's choice of that Vtick differs.
  const auto [be_offered, rt_offered] = unreserved_against_stream(Unreserved::offered);
  EXPECT_EQ(be_offered, be_rate);
  EXPECT_EQ(rt_offered, rt_rate);
}

TEST(FlitEndpoint, AStreamHoldsOneVcAtATimeAndItsMessagesFollowEachOther) {
  // Sec. 4.2, "once the input VC for a connection is determined": three messages of one
  // stream queued together leave one after the other; three best-effort ones take a VC each.
  FlitConfig c = config(Variant::preemptive, 8, {1, 3, 4});
  c.vc_buffer_flits = 40;
  auto net = FlitNetwork::single_router(c, 3);
  std::vector<uint32_t> rt;
  for (int k = 0; k < 3; ++k) rt.push_back(net->send(0, 1 + k % 2, 1, 40, 0, 7, vtick(*net, 4)));
  for (int k = 0; k < 3; ++k) net->send(0, 1 + k % 2, 2, 40, 0, 8, 0, true);
  uint32_t most_rt = 0, most_be = 0;
  for (Cycle t = 0; t < 400; ++t) {
    net->step();
    uint32_t n_rt = 0, n_be = 0;
    for (uint16_t v = 0; v < c.vcs_per_channel; ++v) {
      const uint32_t o = net->endpoint(0).output(v).owner;
      if (o == kNone) continue;
      (net->message(o).unreserved ? n_be : n_rt)++;
    }
    most_rt = std::max(most_rt, n_rt);
    most_be = std::max(most_be, n_be);
  }
  EXPECT_EQ(most_rt, 1u);
  EXPECT_EQ(most_be, 3u);
  for (int k = 1; k < 3; ++k) EXPECT_GT(net->message(rt[k]).head_injected, net->message(rt[k - 1]).tail_injected);
}

TEST(FlitEndpoint, ANewMessageTakesAnEmptyVcRatherThanQueueBehindAnotherMessagesFlits) {
  // A leaves the source by cycle 39; B, created at 40, finds A's VC free but its far buffer
  // still holding A's last flits, and another VC of its class empty.
  FlitConfig c = config(Variant::traditional);
  c.vc_buffer_flits = 40;
  auto net = FlitNetwork::single_router(c, 3);
  const uint32_t a = net->send(0, 1, 2, 40, 0, 0, 0, true);
  const uint32_t b = net->send(0, 2, 2, 40, 40, 1, 0, true);
  uint16_t vc_a = kNoVc, vc_b = kNoVc;
  for (Cycle t = 0; t < 200; ++t) {
    net->step();
    for (uint16_t v = 0; v < c.vcs_per_channel; ++v) {
      if (net->endpoint(0).output(v).owner == a) vc_a = v;
      if (net->endpoint(0).output(v).owner == b) vc_b = v;
    }
  }
  ASSERT_NE(vc_a, kNoVc);
  ASSERT_NE(vc_b, kNoVc);
  EXPECT_NE(vc_a, vc_b);
  EXPECT_EQ(net->message(b).tail_delivered - net->message(b).created, 40u + 5);
}

// Sec. 3.2 and Fig. 4: one real-time VC per channel, as NP's static split at a low real-time
// share. Stream A (endpoint 0 to 1) sends a 400-flit message that crawls, because endpoint 2
// floods endpoint 1 with best effort charged at the link rate; stream B (endpoint 0 to 3)
// sends 40 flits at cycle 50. Returns B's latency from creation to its tail's delivery.
Cycle second_stream_latency(Variant v) {
  FlitConfig c = config(v, 8, {1, 1, 6});
  c.vc_buffer_flits = 40;
  auto net = FlitNetwork::single_router(c, 4);
  net->send(0, 1, 1, 400, 0, 1, vtick(*net, 4));
  for (int k = 0; k < 20; ++k) net->send(2, 1, 2, 40, 0, 2, 0, true);
  const uint32_t b = net->send(0, 3, 1, 40, 50, 3, vtick(*net, 4));
  EXPECT_TRUE(net->drain(100000));
  return net->message(b).tail_delivered - net->message(b).created;
}

TEST(FlitRouter, PreemptiveRouterGivesAStreamAVcOfAnotherClassWhenItsOwnAreHeld) {
  // P: B takes a free best-effort VC at once and crosses within twice its zero-load latency
  // (40 + 5; it shares its source's link with A's flits). NP: B waits for the one real-time
  // VC until A's tail has left the source, no sooner than cycle 400 (one flit per cycle), so
  // at least 400 - 50 + 45 cycles after its creation.
  EXPECT_LE(second_stream_latency(Variant::preemptive), 2 * (40u + 5));
  EXPECT_GE(second_stream_latency(Variant::non_preemptive), 400u - 50 + 45);
}

TEST(FlitRouter, SameTrafficSameResultsBitForBit) {
  auto a = mesh2x2(config(Variant::preemptive));
  auto b = mesh2x2(config(Variant::preemptive));
  offer_mixed_traffic(*a, 4, 200, 5);
  offer_mixed_traffic(*b, 4, 200, 5);
  ASSERT_TRUE(a->drain(100000));
  ASSERT_TRUE(b->drain(100000));
  for (size_t i = 0; i < a->messages().size(); ++i) {
    EXPECT_EQ(a->messages()[i].tail_delivered, b->messages()[i].tail_delivered);
    EXPECT_EQ(a->messages()[i].preemptions, b->messages()[i].preemptions);
  }
}


namespace ibvp::flit {
namespace {

// Sec. 3.2's events counted per class on a mesh of P routers under mixed traffic. A
// preemption needs a lower-priority message whose header crossed and one of whose flits
// is still buffered, so a class is preempted at most once per flit it sent through a
// crossbar; control (class 0) is the highest and is never preempted; every preemption has
// one preempting header of a higher class.
TEST(FlitRouter, PreemptionAndAccelerationCountsAreConservedPerClass) {
  for (bool accel : {true, false}) {
    SCOPED_TRACE(accel ? "acceleration" : "no acceleration");
    FlitConfig c = config(Variant::preemptive);
    c.acceleration = accel;
    auto net = mesh2x2(c);
    offer_mixed_traffic(*net, 4, 400, 3);
    ASSERT_TRUE(net->drain(100000));
    uint64_t preempted = 0, preempting = 0, accelerated = 0;
    for (uint8_t k = 0; k < c.classes(); ++k) {
      const ClassCounts n = net->class_counts(k);
      EXPECT_LE(n.preempted, n.flits_crossed) << "class " << int{k};
      preempted += n.preempted;
      preempting += n.preempting;
      accelerated += n.accelerated_preempted + n.accelerated_blocking;
    }
    EXPECT_EQ(net->class_counts(0).preempted, 0u);
    EXPECT_EQ(net->class_counts(c.classes() - 1).preempting, 0u);  // the lowest class preempts nothing
    EXPECT_EQ(preempted, preempting);
    EXPECT_GT(preempted, 0u);
    // Every dummy pair is one preemption (a preemption before the header crossed makes none).
    EXPECT_LE(net->dummies_made(), 2 * preempted);
    if (accel) {
      EXPECT_GT(accelerated, 0u);
    } else {
      EXPECT_EQ(accelerated, 0u);
    }
    uint64_t crossed = 0;
    for (uint8_t k = 0; k < c.classes(); ++k) crossed += net->class_counts(k).flits_crossed;
    // Every payload flit crosses each router on its path: at least once, at most three times here.
    EXPECT_GE(crossed, net->payload_flits_delivered());
    EXPECT_LE(crossed, 3 * net->payload_flits_delivered());
  }
}

TEST(FlitRouter, NonPreemptiveAndTraditionalRoutersNeitherPreemptNorAccelerate) {
  for (Variant v : {Variant::traditional, Variant::non_preemptive}) {
    SCOPED_TRACE(variant_name(v));
    auto net = FlitNetwork::single_router(config(v), 8);
    offer_mixed_traffic(*net, 8, 300, 7);
    ASSERT_TRUE(net->drain(100000));
    for (uint8_t k = 0; k < 3; ++k) {
      const ClassCounts n = net->class_counts(k);
      EXPECT_EQ(n.preempted + n.preempting + n.accelerated_preempted + n.accelerated_blocking, 0u);
      EXPECT_GT(n.flits_crossed, 0u);
    }
  }
}

// What each endpoint's wire carried, flit by flit: (departure cycle, message, kind).
struct WireFlit {
  Cycle at;
  uint32_t msg;
  FlitKind kind;
};

// Fig. 9, Sec. 3.3.1: with message-level multiplexing a source's wire carries a whole
// message, header to tail, before any flit of the next; with flit-level multiplexing the
// same traffic interleaves messages on the wire (a control message created while a long
// best-effort one is sending goes at once).
TEST(FlitEndpoint, MessageMultiplexingNeverInterleavesTwoMessagesOnASourcesWire) {
  for (NicMultiplexing mux : {NicMultiplexing::flit, NicMultiplexing::message}) {
    SCOPED_TRACE(nic_multiplexing_name(mux));
    FlitConfig c = config(Variant::preemptive);
    c.nic_multiplexing = mux;
    auto net = FlitNetwork::single_router(c, 8);
    std::map<uint32_t, std::vector<WireFlit>> wire;
    net->set_flit_trace([&](uint32_t node, uint16_t, uint16_t, const Flit& f, Cycle at) {
      if (net->is_endpoint(node)) wire[node].push_back({at, f.msg, f.kind});
    });
    offer_mixed_traffic(*net, 8, 300, 7);
    ASSERT_TRUE(net->drain(200000));
    // Then one control message into the middle of a long best-effort message from endpoint 0.
    const Cycle t = net->now();
    const uint32_t be = net->send(0, 1, 2, 400, t, 99, 0, true);
    const uint32_t ctl = net->send(0, 2, 0, 20, t + 100, 98);
    ASSERT_TRUE(net->drain(200000));
    uint64_t interleaved = 0;
    for (const auto& [node, flits] : wire) {
      uint32_t open = kNone;  // the message whose header went and whose tail has not
      for (const WireFlit& w : flits) {
        if (open != kNone && w.msg != open) ++interleaved;
        if (is_head(w.kind) && open == kNone) open = w.msg;
        if (is_tail(w.kind) && w.msg == open) open = kNone;
      }
    }
    const Message& b = net->message(be);
    const Message& k = net->message(ctl);
    if (mux == NicMultiplexing::message) {
      EXPECT_EQ(interleaved, 0u);
      // The control message waits for the best-effort message's tail on the wire.
      EXPECT_GT(k.head_injected, b.tail_injected);
    } else {
      EXPECT_GT(interleaved, 0u);
      EXPECT_LT(k.tail_injected, b.tail_injected);
    }
  }
}

// The send DMA's overhead (Sec. 5.3): with nic_dma_cycles g, each message's header leaves
// g cycles after the message was chosen, so two 40-flit messages queued together leave
// their source in 2 (40 + g) cycles instead of 80.
TEST(FlitEndpoint, MessageMultiplexingIdlesTheWireForTheDmaOverheadBeforeEachMessage) {
  for (uint32_t g : {0u, 25u}) {
    FlitConfig c = config(Variant::preemptive);
    c.vc_buffer_flits = 40;
    c.nic_multiplexing = NicMultiplexing::message;
    c.nic_dma_cycles = g;
    auto net = FlitNetwork::single_router(c, 3);
    const uint32_t a = net->send(0, 1, 2, 40, 0, 1, 0, true);
    const uint32_t b = net->send(0, 2, 2, 40, 0, 2, 0, true);
    ASSERT_TRUE(net->drain(10000));
    EXPECT_EQ(net->message(a).head_injected, g);
    EXPECT_EQ(net->message(a).tail_injected, g + 39);
    EXPECT_EQ(net->message(b).head_injected, g + 40 + g);
    EXPECT_EQ(net->message(b).tail_injected, 2 * (40 + g) - 1);
  }
}

// Sec. 3.3.1: the QoS NIC's VirtualClock flit scheduler shares the wire between backlogged
// connections in proportion to their reserved rates. One source, two streams reserving 1/2
// and 1/6 of the link, each with 20 messages queued at cycle 0 to its own destination: in
// the wire's first 400 cycles they send 300 and 100 flits (3:1). The priority NIC (same
// class) sends the older messages first instead, far from that share.
TEST(FlitEndpoint, VirtualClockNicSharesTheWireByTheConnectionsReservedRates) {
  auto flits_of_fast = [](NicScheduler s) {
    FlitConfig c = config(Variant::preemptive, 8, {1, 3, 4});
    c.nic_scheduler = s;
    c.vc_buffer_flits = 40;
    auto net = FlitNetwork::single_router(c, 3);
    std::vector<uint32_t> conn(1);
    net->set_flit_trace([&](uint32_t node, uint16_t, uint16_t, const Flit& f, Cycle at) {
      if (node == 0 && at < 400) conn.push_back(net->message(f.msg).connection);
    });
    for (int k = 0; k < 20; ++k) {
      net->send(0, 1, 1, 40, 0, 1, vtick(*net, 2));
      net->send(0, 2, 1, 40, 0, 2, vtick(*net, 6));
    }
    EXPECT_TRUE(net->drain(100000));
    EXPECT_EQ(conn.size() - 1, 400u);  // the wire never idles
    return std::count(conn.begin() + 1, conn.end(), 1u);
  };
  EXPECT_NEAR(static_cast<double>(flits_of_fast(NicScheduler::virtual_clock)), 300.0, 2.0);
  // Priority, oldest first: the messages were queued in turn, so each connection's message
  // goes whole before the other's, 200 flits each.
  EXPECT_NEAR(static_cast<double>(flits_of_fast(NicScheduler::priority)), 200.0, 40.0);
}

// The traditional VIA NIC (Sec. 5, the baseline of Fig. 9(a)): the oldest message goes first
// whatever its class, so a control message created while a 400-flit best-effort message is
// on the wire waits for that message's tail; the prioritized NICs send it at once.
TEST(FlitEndpoint, TraditionalNicServesTheOldestMessageFirstWhateverItsClass) {
  for (NicScheduler s : {NicScheduler::fcfs, NicScheduler::priority, NicScheduler::virtual_clock}) {
    SCOPED_TRACE(nic_scheduler_name(s));
    FlitConfig c = config(Variant::preemptive);
    c.nic_scheduler = s;
    c.unreserved = Unreserved::last;
    auto net = FlitNetwork::single_router(c, 3);
    const uint32_t be = net->send(0, 1, 2, 400, 0, 1, 0, true);
    const uint32_t ctl = net->send(0, 2, 0, 20, 100, 2);
    ASSERT_TRUE(net->drain(10000));
    const Message& b = net->message(be);
    const Message& k = net->message(ctl);
    if (s == NicScheduler::fcfs) {
      EXPECT_GT(k.head_injected, b.tail_injected);
    } else {
      // At once: its header one cycle after it was created (VC allocation, then the wire).
      EXPECT_LE(k.head_injected, 101u);
      EXPECT_LT(k.tail_injected, b.tail_injected);
    }
  }
}

// The traditional NIC has one doorbell queue: a message that finds no free VC of its class
// holds every message behind it (Sec. 3.3.1 adds a queue per class, and lets the scheduler
// pass a doorbell whose VC is full). TR, one VC per class: a 200-flit best-effort message
// holds the best-effort VC, a second one waits for it, and a real-time message queued after
// them waits too under fcfs; under priority it takes its VC and goes first.
TEST(FlitEndpoint, TraditionalNicHoldsEveryClassBehindAMessageWithoutAVc) {
  for (NicScheduler s : {NicScheduler::fcfs, NicScheduler::priority}) {
    SCOPED_TRACE(nic_scheduler_name(s));
    FlitConfig c = config(Variant::traditional, 3, {1, 1, 1});
    c.nic_scheduler = s;
    auto net = FlitNetwork::single_router(c, 3);
    const uint32_t a = net->send(0, 1, 2, 200, 0, 1, 0, true);
    net->send(0, 1, 2, 40, 1, 2, 0, true);
    const uint32_t rt = net->send(0, 2, 1, 40, 2, 3, vtick(*net, 4));
    ASSERT_TRUE(net->drain(10000));
    if (s == NicScheduler::fcfs) EXPECT_GT(net->message(rt).head_injected, net->message(a).tail_injected);
    else EXPECT_LT(net->message(rt).tail_injected, net->message(a).tail_injected);
  }
}

TEST(FlitConfig, DmaOverheadWithoutMessageMultiplexingIsRefused) {
  FlitConfig c;
  c.nic_dma_cycles = 10;
  EXPECT_NE(c.problem().find("nic_multiplexing: message"), std::string::npos);
  c.nic_multiplexing = NicMultiplexing::message;
  EXPECT_EQ(c.problem(), "");
}


// Sec. 3.2.1 on a mesh: a preempted message's dummy header reopens its path on the output VC
// its earlier flits took, so at every router each message leaves on one VC, and every sink
// gets every message's flits in sequence. Over 13 seeds of mixed traffic and all three NICs
// (before the fix, every seed had messages resumed on another VC, and 1 to 5 of these 13
// seeds a message whose later flits passed earlier ones at the next router).
TEST(FlitRouter, MeshDeliversEveryMessagesFlitsInSequenceAndEachLeavesARouterOnOneVc) {
  for (NicScheduler s : {NicScheduler::virtual_clock, NicScheduler::priority, NicScheduler::fcfs}) {
    SCOPED_TRACE(nic_scheduler_name(s));
    uint32_t preempted = 0;
    for (uint32_t seed = 1; seed <= 13; ++seed) {
      FlitConfig c = config(Variant::preemptive);
      c.nic_scheduler = s;
      auto net = mesh2x2(c);
      std::map<std::tuple<uint32_t, uint32_t, uint16_t>, uint16_t> vc_of;  // (message, router, port) -> VC
      uint32_t vc_changes = 0;
      net->set_flit_trace([&](uint32_t node, uint16_t port, uint16_t vc, const Flit& f, Cycle) {
        if (net->is_endpoint(node)) return;
        const auto [it, fresh] = vc_of.try_emplace({f.msg, node, port}, vc);
        vc_changes += !fresh && it->second != vc;
      });
      offer_mixed_traffic(*net, 4, 300, seed);
      ASSERT_TRUE(net->drain(400000)) << "seed " << seed;
      EXPECT_EQ(net->messages_out_of_order(), 0u) << "seed " << seed;
      EXPECT_EQ(vc_changes, 0u) << "seed " << seed;
      for (const Message& m : net->messages()) preempted += m.preemptions > 0;
    }
    // The traffic preempts: the property is tested where it can fail.
    EXPECT_GT(preempted, 13u);
  }
}

}  // namespace
}  // namespace ibvp::flit

// Seed 003 Sec. 3.1's finite counters, written out here as the paper states them, over two
// always-backlogged connections of one source: the smallest auxVC + Vtick goes (equal stamps:
// the older message, the lower id, as the NIC's key); when auxVC_i + Vtick_i would pass the
// counter, auxVC_i restarts at 0 and every other auxVC_j becomes auxVC_j - auxVC_i, 0 if
// negative (the Vtick then added to the restarted counter). `limit` 0: unbounded. Returns
// the connection (0 or 1) of each of the first n flits, and the auxVCs after them.
std::pair<std::vector<int>, std::vector<int64_t>> paper_virtual_clock(std::vector<int64_t> vt, int64_t limit, int n) {
  std::vector<int64_t> aux(2, 0);
  std::vector<int> sent(2, 0), order;
  for (int k = 0; k < n; ++k) {
    // Messages were queued A0, B0, A1, B1, ...: connection i's current message has id
    // 2 * (its flits sent / 40) + i.
    auto key = [&](int i) { return std::make_pair(aux[i] + vt[i], 2 * (sent[i] / 40) + i); };
    const int i = key(0) < key(1) ? 0 : 1;
    order.push_back(i);
    ++sent[i];
    if (limit > 0 && aux[i] + vt[i] > limit) {
      const int64_t old = aux[i];
      for (int64_t& a : aux) a = std::max<int64_t>(0, a - old);
      aux[i] = vt[i];
    } else {
      aux[i] += vt[i];
    }
  }
  return {order, aux};
}

// The QoS NIC with 16-bit counters of ns (switch.flit.vc_bits: 16): two streams of one source
// reserving 1/2 and 1/6 of the link (Vticks 160 and 480 ns a flit), 60 messages each queued at
// cycle 0. The faster one's counter passes 65,535 ns three times in the wire's first 2,000
// flits, each time with the other one's auxVC behind it, which the rule sets to 0: the order
// of the flits on the wire is the paper's rule's, flit by flit, and differs from the unbounded
// clock's (which is the rule-less order), and the auxVCs after 2,000 flits are the rule's.
TEST(FlitEndpoint, FiniteNicCountersOrderTheWireByThePapersOverflowRule) {
  constexpr int kFlits = 2000;
  auto wire = [&](uint32_t bits, std::vector<uint64_t>* aux) {
    FlitConfig c = config(Variant::preemptive, 8, {1, 3, 4});
    c.nic_scheduler = NicScheduler::virtual_clock;
    c.vc_buffer_flits = 40;
    c.vc_bits = bits;
    auto net = FlitNetwork::single_router(c, 3);
    std::vector<int> conn;
    net->set_flit_trace([&](uint32_t node, uint16_t, uint16_t, const Flit& f, Cycle) {
      if (node == 0) conn.push_back(static_cast<int>(net->message(f.msg).connection) - 1);
    });
    for (int k = 0; k < 60; ++k) {
      net->send(0, 1, 1, 40, 0, 1, vtick(*net, 2));
      net->send(0, 2, 1, 40, 0, 2, vtick(*net, 6));
    }
    while (conn.size() < kFlits) net->step();
    conn.resize(kFlits);  // the wire never idles: one flit per cycle, the last cycle's included
    if (aux) *aux = {net->endpoint(0).aux_vc(1), net->endpoint(0).aux_vc(2)};
    return conn;
  };
  const auto [finite_order, finite_aux] = paper_virtual_clock({160, 480}, 65535, kFlits);
  const auto [unbounded_order, unbounded_aux] = paper_virtual_clock({160, 480}, 0, kFlits);
  ASSERT_NE(finite_order, unbounded_order);  // the wraps matter to the order
  std::vector<uint64_t> aux;
  EXPECT_EQ(wire(16, &aux), finite_order);
  EXPECT_EQ(aux, (std::vector<uint64_t>{static_cast<uint64_t>(finite_aux[0]), static_cast<uint64_t>(finite_aux[1])}));
  // Unbounded: the rule-less order (both clocks run ahead of real time, so Zhang's real-time
  // term never acts), in ps.
  EXPECT_EQ(wire(0, &aux), unbounded_order);
  EXPECT_EQ(aux[0], static_cast<uint64_t>(unbounded_aux[0]) * 1000);
}

// The router's VirtualClock at a crossbar input takes the same counters: after the two streams
// above cross a P router with 16-bit counters, input 0's auxVCs are what the paper's rule
// gives over the flits that crossed from it, in the order they crossed (the router charges
// every flit it passes; an unbounded counter, or one that wraps modulo 2^16, would hold other
// values).
TEST(FlitRouter, FiniteRouterCountersFollowThePapersOverflowRule) {
  FlitConfig c = config(Variant::preemptive, 8, {1, 3, 4});
  c.nic_scheduler = NicScheduler::virtual_clock;
  c.vc_buffer_flits = 40;
  c.vc_bits = 16;
  auto net = FlitNetwork::single_router(c, 3);
  const uint64_t vt[2] = {160, 480};  // ns a flit: 1/2 and 1/6 of the link
  std::vector<int64_t> aux(2, 0);
  int overflows = 0;
  net->set_flit_trace([&](uint32_t node, uint16_t, uint16_t, const Flit& f, Cycle) {
    if (node != 3) return;  // the router's crossbar, every flit from input 0
    const int i = static_cast<int>(net->message(f.msg).connection) - 1;
    if (aux[i] + static_cast<int64_t>(vt[i]) > 65535) {
      ++overflows;
      const int64_t old = aux[i];
      for (int64_t& a : aux) a = std::max<int64_t>(0, a - old);
      aux[i] = static_cast<int64_t>(vt[i]);
    } else {
      aux[i] += static_cast<int64_t>(vt[i]);
    }
  });
  for (int k = 0; k < 60; ++k) {
    net->send(0, 1, 1, 40, 0, 1, vtick(*net, 2));
    net->send(0, 2, 1, 40, 0, 2, vtick(*net, 6));
  }
  ASSERT_TRUE(net->drain(100000));
  EXPECT_GE(overflows, 5);
  EXPECT_EQ(net->router(3).aux_vc(0, 1), static_cast<uint64_t>(aux[0]));
  EXPECT_EQ(net->router(3).aux_vc(0, 2), static_cast<uint64_t>(aux[1]));
}

// nic_vtick frame (docs/seed003.md, Fig. 9): the QoS NIC charges a frame's messages at the
// frame's own rate. One source: a stream's frame of 100 40-flit messages, all queued at cycle
// 0, whose mean rate is a fifth of the frame's (an I frame), and best effort at 1/2 of the
// link queued at the same time. The frame's Vtick is its period over its 4,000 flits: at
// it, every flit the NIC sends is stamped no later than the period ahead of cycle 0, and the
// frame leaves within the period; at the mean rate its stamps reach 5 periods ahead and it
// leaves later, behind best effort.
TEST(FlitEndpoint, FrameVtickStampsAFramesMessagesNoFurtherAheadThanTheFrameRate) {
  constexpr uint64_t kPeriodCycles = 10000;  // the frame period, in flit cycles
  auto run = [&](bool by_frame, uint64_t* latest_stamp_ps) {
    FlitConfig c = config(Variant::preemptive, 8, {1, 3, 4});
    c.nic_scheduler = NicScheduler::virtual_clock;
    c.vc_buffer_flits = 40;
    auto net = FlitNetwork::single_router(c, 3);
    const uint64_t frame_vtick = kPeriodCycles * c.flit_cycle_ps() / 4000;
    std::vector<uint32_t> frame;
    for (int k = 0; k < 100; ++k)
      frame.push_back(net->send(0, 1, 1, 40, 0, 1, 5 * frame_vtick, false, by_frame ? frame_vtick : 0));
    for (int k = 0; k < 200; ++k) net->send(0, 2, 2, 40, 0, 2, vtick(*net, 2), true);
    *latest_stamp_ps = 0;
    net->set_flit_trace([&](uint32_t node, uint16_t, uint16_t, const Flit& f, Cycle) {
      // The stamp the flit goes with (auxVC + Vtick, before the NIC charges it).
      if (node == 0 && net->message(f.msg).connection == 1)
        *latest_stamp_ps = std::max(*latest_stamp_ps, net->endpoint(0).stamp(f.msg));
    });
    EXPECT_TRUE(net->drain(100000));
    return net->message(frame.back()).tail_injected;
  };
  uint64_t stamp_frame = 0, stamp_mean = 0;
  const Cycle done_frame = run(true, &stamp_frame);
  const Cycle done_mean = run(false, &stamp_mean);
  const uint64_t period_ps = kPeriodCycles * FlitConfig{}.flit_cycle_ps();
  EXPECT_LE(stamp_frame, period_ps);
  EXPECT_GE(stamp_mean, 4 * period_ps);
  EXPECT_LT(done_frame, kPeriodCycles);
  EXPECT_LT(done_frame, done_mean);
}

TEST(FlitConfig, FiniteCountersAndFrameVticksNeedTheirSchedulers) {
  FlitConfig c;
  c.vc_bits = 8;
  EXPECT_NE(c.problem().find("cannot hold a flit's Vtick"), std::string::npos);
  c.vc_bits = 16;
  EXPECT_EQ(c.problem(), "");  // P's VirtualClock uses them
  c.variant = Variant::traditional;
  EXPECT_NE(c.problem().find("neither the traditional router nor this NIC"), std::string::npos);
  c.nic_scheduler = NicScheduler::virtual_clock;
  EXPECT_EQ(c.problem(), "");
  c.router_vtick = StreamVtick::frame;
  EXPECT_NE(c.problem().find("traditional router is FCFS"), std::string::npos);
  c.router_vtick = StreamVtick::mean;
  c.nic_vtick = StreamVtick::frame;
  EXPECT_EQ(c.problem(), "");
  c.nic_scheduler = NicScheduler::fcfs;
  EXPECT_NE(c.problem().find("needs nic_scheduler: virtual_clock"), std::string::npos);
}

// Control ahead of VirtualClock (Sec. 4.2: control "has the highest priority in our model").
// A backlogged connection served below the rate it is charged at has an auxVC behind the real
// time, and a connection that gets work starts at the real time (Zhang's max(auxVC, now)): by
// stamp alone a control message arriving late would wait until that backlog's stamps catch
// up (docs/seed003.md, "Control's 68 us"). Here two sources each keep a best-effort backlog
// charged at the link rate toward one output, so each input's best effort gets half of it
// and its auxVC falls behind the real time by half the elapsed time; at cycle 1000 source 0
// sends a 20-flit control message to the same output.
constexpr Cycle kControlAt = 1000;

TEST(FlitRouter, ControlCrossesAheadOfABestEffortBacklogWhoseStampsLagTheRealTime) {
  for (Variant v : {Variant::non_preemptive, Variant::preemptive}) {
    SCOPED_TRACE(variant_name(v));
    FlitConfig c = config(v, 4, {1, 1, 2});
    c.vc_buffer_flits = 40;
    auto net = FlitNetwork::single_router(c, 3);
    const uint32_t router = 3;
    for (int k = 0; k < 80; ++k) {
      net->send(0, 1, 2, 40, 0, 10, vtick(*net, 1), /*unreserved=*/true);
      net->send(2, 1, 2, 40, 0, 12, vtick(*net, 1), /*unreserved=*/true);
    }
    const uint32_t ctl = net->send(0, 1, 0, 20, kControlAt, 1, vtick(*net, 1));
    expect_conservation_every_cycle(*net, kControlAt);
    // The premise: input 0's best effort is stamped about 500 cycles behind the real time.
    const uint64_t now_ps = kControlAt * c.flit_cycle_ps();
    EXPECT_LT(net->router(router).aux_vc(0, 10), now_ps - 400 * c.flit_cycle_ps());
    expect_conservation_every_cycle(*net, 2000);
    ASSERT_TRUE(net->drain(100000));
    const Message& m = net->message(ctl);
    EXPECT_FALSE(m.out_of_order);
    // The source's priority NIC sends it at once (VC allocation, then the wire).
    EXPECT_LE(m.head_injected, kControlAt + 1);
    if (v == Variant::non_preemptive) {
      // NP: VC 0 is control's alone at every hop, and its flits win their crossbar input and
      // output every cycle: its zero-load latency, 1 (d + 4) + d + 20 - 1 with d = 1.
      EXPECT_EQ(network_latency(m), 25u);
    } else {
      // P: best effort holds every VC (any class takes any free VC), so control goes to an
      // extra buffer and preempts (Sec. 3.2.1), and at the output it waits for a best-effort
      // tail on some VC, accelerated (Fig. 2b): at most one 40-flit message's worth, plus the
      // dummies and a few cycles of allocation. By stamp it waited about 1000 cycles.
      EXPECT_LE(network_latency(m), 25u + 40 + 10);
    }
  }
}

// The same in the QoS NIC (Sec. 3.3.1's VirtualClock to the wire): one source with two
// best-effort backlogs charged at the link rate, to two outputs, each getting half the
// wire. Best effort takes a VC per message (six VCs), so each connection always has
// messages in the NIC's buffers and is never reactivated at the real time. At cycle 1000
// a control message leaves ahead of both, and crosses the NP router (its own VC 0) at
// zero-load latency.
TEST(FlitEndpoint, QosNicSendsControlAheadOfABestEffortBacklogWhoseStampsLagTheRealTime) {
  FlitConfig c = config(Variant::non_preemptive, 8, {1, 1, 6});
  c.nic_scheduler = NicScheduler::virtual_clock;
  c.vc_buffer_flits = 40;
  auto net = FlitNetwork::single_router(c, 3);
  for (int k = 0; k < 40; ++k) {
    net->send(0, 1, 2, 40, 0, 10, vtick(*net, 1), /*unreserved=*/true);
    net->send(0, 2, 2, 40, 0, 12, vtick(*net, 1), /*unreserved=*/true);
  }
  const uint32_t ctl = net->send(0, 1, 0, 20, kControlAt, 1, vtick(*net, 1));
  expect_conservation_every_cycle(*net, kControlAt);
  const uint64_t now_ps = kControlAt * c.flit_cycle_ps();
  EXPECT_LT(net->endpoint(0).aux_vc(10), now_ps - 400 * c.flit_cycle_ps());
  EXPECT_LT(net->endpoint(0).aux_vc(12), now_ps - 400 * c.flit_cycle_ps());
  expect_conservation_every_cycle(*net, 2000);
  ASSERT_TRUE(net->drain(100000));
  const Message& m = net->message(ctl);
  EXPECT_LE(m.head_injected, kControlAt + 1);
  EXPECT_EQ(m.tail_injected, m.head_injected + 19);  // its 20 flits back to back
  EXPECT_EQ(network_latency(m), 25u);
  EXPECT_EQ(net->payload_flits_delivered(), 2u * 40 * 40 + 20);
}

}  // namespace
}  // namespace ibvp::flit
