// The order in which the process-wide Scheduler serves actions due at the same time
// (models/sim/timed_queue.h): fifo follows the pushes; canonical follows (source id, the
// source's own push count), which a fabric split across processes reproduces because no
// key depends on what another process pushed in between (docs/parallel.md).
#include <gtest/gtest.h>

#include <string>
#include <systemc>
#include <vector>

#include "models/sim/timed_queue.h"

using ibvp::sim::Action;
using ibvp::sim::Scheduler;
using ibvp::sim::TimedQueue;

namespace {

// Agendas that log "<name><arg>" for every action served, and may push on from inside.
struct Bench {
  std::vector<std::string> served;
  std::vector<std::function<void(const Action&)>> hooks;
  std::vector<std::unique_ptr<TimedQueue>> queues;
  TimedQueue& add(const std::string& name, uint32_t id) {
    const size_t i = queues.size();
    hooks.emplace_back();
    queues.push_back(std::make_unique<TimedQueue>(("q" + name).c_str(), [this, name, i](const Action& a) {
      served.push_back(name + std::to_string(a.arg));
      if (hooks[i]) hooks[i](a);
    }));
    queues.back()->set_source_id(id);
    return *queues.back();
  }
};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

}  // namespace

TEST(EventOrder, FifoServesEqualTimesInPushOrder) {
  Bench b;
  TimedQueue& a = b.add("a", 7);
  TimedQueue& c = b.add("c", 2);
  a.push_at(1000, 0, 0, 1);
  c.push_at(1000, 0, 0, 1);
  a.push_at(1000, 0, 0, 2);
  sc_core::sc_start();
  EXPECT_EQ(joined(b.served), "a1 c1 a2");
}

TEST(EventOrder, CanonicalServesEqualTimesBySourceIdThenItsPushCount) {
  Scheduler::set_canonical(true);
  Bench b;
  TimedQueue& a = b.add("a", 7);
  TimedQueue& c = b.add("c", 2);
  // Pushed from outside the Scheduler: each action's source is its own agenda.
  a.push_at(1000, 0, 0, 1);
  c.push_at(1000, 0, 0, 1);
  a.push_at(1000, 0, 0, 2);
  c.push_at(1000, 0, 0, 2);
  sc_core::sc_start();
  EXPECT_EQ(joined(b.served), "c1 c2 a1 a2");
}

// What a split needs: a delivery into agenda r carries its sender's key, so the order at r
// does not depend on which sender pushed first in wall-clock (here: simulated) time.
TEST(EventOrder, CanonicalKeyIsTheDispatchingSendersNotTheReceiversNorThePushTime) {
  Scheduler::set_canonical(true);
  Bench b;
  TimedQueue& early = b.add("e", 9);  // pushes first (at 100 ps) but has the larger id
  TimedQueue& late = b.add("l", 3);   // pushes later (at 500 ps)
  TimedQueue& r = b.add("r", 1);      // receives both at 2000 ps; its own id is the smallest
  b.hooks[0] = [&](const Action&) { r.push_at(2000, 0, 0, 9); };
  b.hooks[1] = [&](const Action&) { r.push_at(2000, 0, 0, 3); };
  early.push_at(100, 0, 0, 0);
  late.push_at(500, 0, 0, 0);
  r.push_at(2000, 0, 0, 1);  // r's own, pushed from outside: key (1, 0), served first
  sc_core::sc_start();
  EXPECT_EQ(joined(b.served), "e0 l0 r1 r3 r9");
}

TEST(EventOrder, FifoDeliveryAtEqualTimesFollowsPushTime) {
  Bench b;
  TimedQueue& early = b.add("e", 9);
  TimedQueue& late = b.add("l", 3);
  TimedQueue& r = b.add("r", 1);
  b.hooks[0] = [&](const Action&) { r.push_at(2000, 0, 0, 9); };
  b.hooks[1] = [&](const Action&) { r.push_at(2000, 0, 0, 3); };
  early.push_at(100, 0, 0, 0);
  late.push_at(500, 0, 0, 0);
  r.push_at(2000, 0, 0, 1);
  sc_core::sc_start();
  EXPECT_EQ(joined(b.served), "e0 l0 r1 r9 r3");
}

// ---- split runs: remote agendas (docs/parallel.md) --------------------------------------

namespace {
struct CapturingSink : ibvp::sim::RemoteSink {
  std::vector<std::pair<Action, uint32_t>> sent;  // action, target agenda id
  void send(const Action& a, TimedQueue& to) override { sent.emplace_back(a, to.source_id()); }
};
}  // namespace

TEST(SplitRun, PushToARemoteAgendaDuringDispatchGoesToTheSinkKeyedByTheSender) {
  Scheduler::set_canonical(true);
  CapturingSink sink;
  Scheduler::instance().set_remote_sink(&sink);
  Bench b;
  TimedQueue& sender = b.add("s", 4);
  TimedQueue& far = b.add("f", 6);
  far.set_remote(true);
  b.hooks[0] = [&](const Action&) {
    far.push_at(900, 1, 2, 3);
    far.push_at(950, 1, 2, 4);
  };
  sender.push_at(100, 0, 0, 0);  // key (4, 0): the sender's first push
  sc_core::sc_start();
  EXPECT_EQ(joined(b.served), "s0");  // nothing of the remote agenda runs here
  ASSERT_EQ(sink.sent.size(), 2u);
  EXPECT_EQ(sink.sent[0].second, 6u);
  EXPECT_EQ(sink.sent[0].first.when_ps, 900u);
  EXPECT_EQ(sink.sent[0].first.seq, (uint64_t{4} << Scheduler::kCounterBits) | 1u);
  EXPECT_EQ(sink.sent[1].first.seq, (uint64_t{4} << Scheduler::kCounterBits) | 2u);
}

TEST(SplitRun, ElaborationPushesToARemoteAgendaAreLeftToItsOwnProcess) {
  Scheduler::set_canonical(true);
  CapturingSink sink;
  Scheduler::instance().set_remote_sink(&sink);
  Bench b;
  TimedQueue& far = b.add("f", 6);
  far.set_remote(true);
  far.push_at(100, 0, 0, 1);  // every process builds every model and makes this push
  sc_core::sc_start();
  EXPECT_TRUE(b.served.empty());
  EXPECT_TRUE(sink.sent.empty());
}

TEST(SplitRun, AKeyedMessageTakesItsPlaceAmongLocalActionsByKey) {
  Scheduler::set_canonical(true);
  Bench b;
  TimedQueue& r = b.add("r", 5);
  r.push_at(1000, 0, 0, 1);  // key (5, 0)
  // From agendas 3 and 8 of another process, as the exchange at a window's end delivers them.
  Action low{1000, (uint64_t{3} << Scheduler::kCounterBits) | 7, 0, 0, 3, nullptr};
  Action high{1000, (uint64_t{8} << Scheduler::kCounterBits) | 0, 0, 0, 8, nullptr};
  Scheduler::instance().push_keyed(high, &r);
  Scheduler::instance().push_keyed(low, &r);
  sc_core::sc_start();
  EXPECT_EQ(joined(b.served), "r3 r1 r8");
}

TEST(SplitRun, AMessageInTheReceiversPastIsRefused) {
  Scheduler::set_canonical(true);
  Bench b;
  TimedQueue& r = b.add("r", 5);
  r.push_at(0, 0, 0, 1);
  sc_core::sc_start(sc_core::sc_time::from_value(2000));
  Action late{1500, uint64_t{3} << Scheduler::kCounterBits, 0, 0, 3, nullptr};
  EXPECT_THROW(Scheduler::instance().push_keyed(late, &r), std::logic_error);
  Action on_time{2000, uint64_t{3} << Scheduler::kCounterBits, 0, 0, 4, nullptr};
  EXPECT_NO_THROW(Scheduler::instance().push_keyed(on_time, &r));
}

// A message at the time of a step already served would be out of order among that step's
// actions even though it is not before now.
TEST(SplitRun, AMessageAtAStepAlreadyServedIsRefused) {
  Scheduler::set_canonical(true);
  Bench b;
  TimedQueue& r = b.add("r", 5);
  bool refused = false;
  b.hooks[0] = [&](const Action&) {
    Action same_step{1000, uint64_t{3} << Scheduler::kCounterBits, 0, 0, 3, nullptr};
    try {
      Scheduler::instance().push_keyed(same_step, &r);
    } catch (const std::logic_error&) {
      refused = true;
    }
  };
  r.push_at(1000, 0, 0, 1);
  sc_core::sc_start();
  EXPECT_TRUE(refused);
  EXPECT_EQ(joined(b.served), "r1");
}
