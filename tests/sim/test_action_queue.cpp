// The Scheduler's timing wheel (models/sim/action_queue.h) serves exactly the (time, sequence)
// order of a binary heap, whatever the mix of pushes: equal times, pushes at the current
// time while serving, pushes past the wheel's horizon, late pushes before the current time.
// The reference is std::priority_queue, which the Scheduler used before (issue 17).
#include <gtest/gtest.h>

#include <cstdint>
#include <queue>
#include <random>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "models/sim/action_queue.h"
#include "models/sim/timed_queue.h"

using ibvp::sim::Action;
using ibvp::sim::ActionQueue;
using ibvp::sim::TimedQueue;

namespace {

using Key = std::pair<uint64_t, uint64_t>;  // (when_ps, seq)
using Reference = std::priority_queue<Key, std::vector<Key>, std::greater<Key>>;

const uint64_t kBucketPs = ActionQueue::bucket_ps();
const uint64_t kHorizonPs = ActionQueue::horizon_ps();

ActionQueue::Entry entry(uint64_t when, uint64_t seq) {
  ActionQueue::Entry e{};
  e.action.when_ps = when;
  e.action.seq = seq;
  e.action.arg = static_cast<uint32_t>(seq);
  return e;
}

// Random operations on both queues; every pop must give the reference's key.
void run_against_reference(uint32_t seed, int ops, int late_percent) {
  std::mt19937_64 rng(seed);
  ActionQueue q;
  Reference ref;
  uint64_t now = 0, seq = 0;
  // Delays as the fabric makes them (most a short, nearly constant time ahead), plus the edges.
  auto delay = [&]() -> uint64_t {
    switch (rng() % 10) {
      case 0: return 0;                                   // at the current time
      case 1: return rng() % kBucketPs;                   // within the current bucket
      case 2: return kHorizonPs - kBucketPs + rng() % (2 * kBucketPs);  // at the horizon's edge
      case 3: return kHorizonPs * (1 + rng() % 5) + rng() % 1000;      // beyond the horizon
      case 4: return (rng() % 4) * 1000;                  // few distinct times: many equal keys
      default: return 100'000 + rng() % 300'000;          // a pipeline, a packet, a cable
    }
  };
  for (int i = 0; i < ops; ++i) {
    const bool push = ref.empty() || rng() % 100 < 52;
    if (push) {
      uint64_t when = now + delay();
      if (now > 0 && static_cast<int>(rng() % 100) < late_percent) when = now - 1 - rng() % std::min<uint64_t>(now, 5000);
      q.push(entry(when, seq));
      ref.push({when, seq});
      ++seq;
    } else {
      ASSERT_FALSE(q.empty());
      const Key want = ref.top();
      ref.pop();
      ASSERT_EQ(q.top().action.when_ps, want.first) << "op " << i;
      ASSERT_EQ(q.top().action.seq, want.second) << "op " << i;
      q.pop();
      now = std::max(now, want.first);
    }
    ASSERT_EQ(q.size(), ref.size());
  }
  while (!ref.empty()) {
    ASSERT_EQ(q.top().action.when_ps, ref.top().first);
    ASSERT_EQ(q.top().action.seq, ref.top().second);
    q.pop();
    ref.pop();
  }
  EXPECT_TRUE(q.empty());
}

}  // namespace

TEST(ActionQueue, ServesTheHeapsOrderUnderRandomPushesAndPops) {
  for (uint32_t seed = 1; seed <= 3; ++seed) run_against_reference(seed, 100'000, 0);
}

TEST(ActionQueue, ServesLatePushesFirstInTheirOwnOrder) {
  for (uint32_t seed = 11; seed <= 12; ++seed) run_against_reference(seed, 50'000, 5);
}

// Equal times, keyed out of push order (canonical keys, reserved pushes): the key decides.
TEST(ActionQueue, EqualTimesGoBySequenceNotByPushOrder) {
  ActionQueue q;
  const uint64_t far = 3 * kHorizonPs + 17;
  for (uint64_t s : {5u, 1u, 9u, 3u}) q.push(entry(far, s));
  for (uint64_t s : {8u, 2u}) q.push(entry(1000, s));
  std::vector<std::pair<uint64_t, uint64_t>> got;
  while (!q.empty()) {
    got.emplace_back(q.top().action.when_ps, q.top().action.seq);
    q.pop();
  }
  const std::vector<std::pair<uint64_t, uint64_t>> want{{1000, 2}, {1000, 8}, {far, 1}, {far, 3}, {far, 5}, {far, 9}};
  EXPECT_EQ(got, want);
}

// A whole rotation of the wheel with nothing in it, then actions that were beyond the
// horizon when pushed and are due in buckets the wheel has reused since.
TEST(ActionQueue, OverflowAndWheelInterleaveAcrossRotations) {
  ActionQueue q;
  Reference ref;
  uint64_t seq = 0;
  for (uint64_t k = 0; k < 40; ++k) {
    const uint64_t when = k * (kHorizonPs / 7) + (k % 3);
    q.push(entry(when, seq));
    ref.push({when, seq++});
  }
  while (!ref.empty()) {
    // Each pop also pushes one action a bucket and one a horizon ahead of it.
    const Key want = ref.top();
    ref.pop();
    ASSERT_EQ(q.top().action.when_ps, want.first);
    ASSERT_EQ(q.top().action.seq, want.second);
    q.pop();
    if (seq < 200) {
      for (uint64_t ahead : {kBucketPs, kHorizonPs}) {
        q.push(entry(want.first + ahead, seq));
        ref.push({want.first + ahead, seq++});
      }
    }
  }
  EXPECT_TRUE(q.empty());
}

TEST(ActionQueue, KeepIfKeepsTheOrderOfWhatStays) {
  ActionQueue q;
  Reference ref;
  std::mt19937_64 rng(7);
  for (uint64_t s = 0; s < 5000; ++s) {
    const uint64_t when = rng() % (3 * kHorizonPs);
    q.push(entry(when, s));
    if (s % 3) ref.push({when, s});
  }
  q.keep_if([](const ActionQueue::Entry& e) { return e.action.seq % 3 != 0; });
  ASSERT_EQ(q.size(), ref.size());
  while (!ref.empty()) {
    ASSERT_EQ(q.top().action.seq, ref.top().second);
    q.pop();
    ref.pop();
  }
}

// Through the Scheduler and the SystemC kernel: agendas whose actions push on (at the current
// time, a short delay ahead, past the horizon) are served in (time, push order) exactly.
TEST(ActionQueue, SchedulerServesEveryPushInTimeThenPushOrder) {
  std::mt19937_64 rng(3);
  std::vector<Key> pushed;  // (when, global push index): fifo's key
  std::vector<uint32_t> served;
  std::vector<std::unique_ptr<TimedQueue>> agendas;
  auto push = [&](TimedQueue& q, uint64_t when) {
    const uint32_t index = static_cast<uint32_t>(pushed.size());
    pushed.push_back({when, index});
    q.push_at(when, 0, 0, index);
  };
  for (int i = 0; i < 8; ++i) {
    agendas.push_back(std::make_unique<TimedQueue>(("a" + std::to_string(i)).c_str(), [&, i](const Action& a) {
      served.push_back(a.arg);
      if (pushed.size() >= 20'000) return;
      const uint64_t now = TimedQueue::now_ps();
      EXPECT_EQ(a.when_ps, now);
      for (int k = 0; k < 2; ++k) {
        TimedQueue& to = *agendas[rng() % agendas.size()];
        const uint64_t r = rng() % 10;
        const uint64_t when = r == 0 ? now : r == 1 ? now + 2 * kHorizonPs + rng() % 100 : now + (rng() % 8) * 50'000;
        push(to, when);
      }
      (void)i;
    }));
  }
  for (int i = 0; i < 8; ++i) push(*agendas[static_cast<size_t>(i)], static_cast<uint64_t>(i % 3) * 1000);
  sc_core::sc_start();
  std::vector<Key> sorted = pushed;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_EQ(served.size(), sorted.size());
  for (size_t i = 0; i < sorted.size(); ++i) ASSERT_EQ(served[i], sorted[i].second) << "at " << i;
}
