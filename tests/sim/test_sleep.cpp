// Threads' timed waits as Scheduler actions (models/sim/sleep.h): threads that sleep until
// the same time wake in the order they went to sleep, after the Scheduler's actions of that
// time pushed before them, whatever order the SystemC kernel's own event heap would give.
#include <gtest/gtest.h>

#include <string>
#include <systemc>
#include <vector>

#include "models/sim/sleep.h"
#include "models/sim/timed_queue.h"

using ibvp::sim::Action;
using ibvp::sim::TimedQueue;

namespace {
constexpr uint64_t kWake = 1'000'000;  // 1 us
}  // namespace

TEST(Sleep, ThreadsSleepingUntilOneTimeWakeInTheOrderTheyWentToSleep) {
  std::vector<std::string> log;
  // An agenda action at the wake time, pushed before any thread sleeps: served first.
  TimedQueue agenda("agenda", [&](const Action&) { log.push_back("action"); });
  agenda.push_at(kWake, 0);
  // Thread i goes to sleep (40 - 10 i) ns into the run: thread 3 first, thread 0 last.
  for (int i = 0; i < 4; ++i) {
    sc_core::sc_spawn(
        [&log, i] {
          ibvp::sim::sleep_for(sc_core::sc_time(40 - 10 * i, sc_core::SC_NS));
          ibvp::sim::sleep_until(kWake);
          EXPECT_EQ(sc_core::sc_time_stamp().value(), kWake);
          log.push_back("t" + std::to_string(i));
        },
        ("sleeper" + std::to_string(i)).c_str());
  }
  sc_core::sc_start();
  const std::vector<std::string> expected{"action", "t3", "t2", "t1", "t0"};
  EXPECT_EQ(log, expected);
}

TEST(Sleep, ATimeNotAfterNowReturnsAtOnce) {
  bool done = false;
  sc_core::sc_spawn([&] {
    ibvp::sim::sleep_for(sc_core::sc_time(5, sc_core::SC_NS));
    ibvp::sim::sleep_until(1000);  // 1 ns, in the past
    ibvp::sim::sleep_for(sc_core::SC_ZERO_TIME);
    EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(5, sc_core::SC_NS));
    done = true;
  });
  sc_core::sc_start();
  EXPECT_TRUE(done);
}
