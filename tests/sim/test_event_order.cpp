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
