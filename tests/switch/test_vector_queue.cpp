// sim::VectorQueue, the per-VL request queue of the switch: a random mix of the operations
// the switch uses (push, pop, erase by index as bypass and lifetime drops do, insert before
// the first unicast as synchronous multicast does) must leave it equal to a std::deque
// given the same operations, across many compactions.
#include <gtest/gtest.h>

#include <deque>
#include <random>

#include "models/sim/vector_queue.h"

namespace {

using ibvp::sim::VectorQueue;

void expect_same(const VectorQueue<int>& q, const std::deque<int>& ref) {
  ASSERT_EQ(q.size(), ref.size());
  ASSERT_EQ(q.empty(), ref.empty());
  size_t i = 0;
  for (int x : q) EXPECT_EQ(x, ref[i++]);
  for (i = 0; i < ref.size(); ++i) EXPECT_EQ(q[i], ref[i]);
  if (!ref.empty()) {
    EXPECT_EQ(q.front(), ref.front());
  }
}

TEST(VectorQueue, BehavesAsADequeUnderTheSwitchsOperations) {
  std::mt19937 rng(7);
  VectorQueue<int> q;
  std::deque<int> ref;
  int next = 0;
  for (int step = 0; step < 6000; ++step) {
    const unsigned op = rng() % 10;
    // Push more than pop in the first half (deep backlogs, compaction with live elements),
    // less in the second (the queue empties again and again).
    const bool filling = step < 3000;
    if (op < (filling ? 5u : 3u)) {
      q.push_back(next);
      ref.push_back(next++);
    } else if (op < 8 && !ref.empty()) {
      q.pop_front();
      ref.pop_front();
    } else if (op == 8 && !ref.empty()) {
      const size_t at = rng() % ref.size();
      q.erase(q.begin() + static_cast<std::ptrdiff_t>(at));
      ref.erase(ref.begin() + static_cast<std::ptrdiff_t>(at));
    } else if (op == 9) {
      const size_t at = ref.empty() ? 0 : rng() % (ref.size() + 1);
      q.insert(q.begin() + static_cast<std::ptrdiff_t>(at), next);
      ref.insert(ref.begin() + static_cast<std::ptrdiff_t>(at), next++);
    }
    expect_same(q, ref);
    if (::testing::Test::HasFailure()) FAIL() << "after step " << step;
  }
}

TEST(VectorQueue, EraseAtTheFrontReturnsTheNewFront) {
  VectorQueue<int> q;
  for (int i = 0; i < 40; ++i) q.push_back(i);
  for (int i = 0; i < 39; ++i) {
    auto it = q.erase(q.begin());
    ASSERT_EQ(*it, i + 1);
  }
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.front(), 39);
}

}  // namespace
