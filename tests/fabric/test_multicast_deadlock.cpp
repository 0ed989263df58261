// The deadlock watch and multicast (platform/builder/deadlock_watch; seed 000 Sec. 3.6.1): a
// multicast packet frees its input only when every copy has left, and a synchronous multicast
// holds the outputs it reserved until all its copies start. A credit cycle with multicast
// packets caught in it is still reported, naming the group and the output it holds; a
// multicast held by a branch that is only blocked (no cycle) is not.
#include <gtest/gtest.h>

#include <systemc>

#include "common/fabrics.h"
#include "platform/builder/deadlock_watch.h"
#include "platform/builder/fabric.h"
#include "platform/builder/runner.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

// Five switches in a ring, every host hk sending to h(k+2) from 20 us on (min-hop: two hops
// clockwise, a credit cycle round the ring, as tests/fabric/test_deadlock_watch.cpp), and from
// time 0 bystander x on s0 multicasting to {h1, h2}. Its source tree runs s0 -> s1 -> s2, so
// at s1 each packet has two copies: to h1 (port 3) and on round the ring (port 1).
Scenario ring_with_multicast(sw::Replication scheme) {
  Scenario s = tb::basic_scenario(tb::ring(5, true));
  s.routing = "minhop";
  s.switch_cfg.multicast_replication = scheme;
  MulticastGroupConfig g;
  g.name = "g";
  g.source = "x";
  g.members = {"h1", "h2"};
  s.multicast.push_back(g);
  FlowConfig mc = tb::saturating_flow("mc", "x", "g", 2048);
  mc.generator = GeneratorKind::constant;
  mc.load = 0.3;
  s.flows.push_back(mc);
  for (int k = 0; k < 5; ++k) {
    s.flows.push_back(tb::saturating_flow("f" + std::to_string(k), "h" + std::to_string(k),
                                          "h" + std::to_string((k + 2) % 5), 2048));
    s.flows.back().start = sc_time(20, SC_US);
  }
  s.duration = sc_time(5, SC_MS);
  s.deadlock_timeout = sc_time(100, SC_US);
  return s;
}

std::string deadlock_message(const Scenario& s) {
  try {
    run_scenario(s, RunOptions{});
  } catch (const DeadlockError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// At s1 a synchronous multicast reserves the output to h1 and waits for its copy round the
// ring, which the credit cycle holds for good: the output to h1 can never send again either,
// and the report says why.
TEST(MulticastDeadlock, SynchronousMulticastCaughtInACreditCycleIsReportedNamingItsGroup) {
  const std::string m = deadlock_message(ring_with_multicast(sw::Replication::synchronous));
  ASSERT_FALSE(m.empty()) << "the run was not stopped";
  EXPECT_NE(m.find("multicast group 'g' (MLID 0xC000)"), std::string::npos) << m;
  EXPECT_NE(m.find("s1/3 VL0 is reserved for a synchronous copy"), std::string::npos) << m;
  // The cycle is still the ring's.
  EXPECT_NE(m.find("s0/1 VL0 -> s1/1 VL0"), std::string::npos) << m;
}

// Asynchronous copies: a multicast packet in s1's buffer from s0 waits for its copy round
// the ring (the one to h1 has left); the cycle through that buffer is reported, and the
// report says a packet of the group is caught in it.
TEST(MulticastDeadlock, AsynchronousMulticastPacketInACycleBufferIsReported) {
  const std::string m = deadlock_message(ring_with_multicast(sw::Replication::asynchronous));
  ASSERT_FALSE(m.empty()) << "the run was not stopped";
  EXPECT_NE(m.find("s0/1 VL0 -> s1/1 VL0"), std::string::npos) << m;
  EXPECT_NE(m.find("multicast involved: s0/1 VL0 waits for a buffer that holds a packet of multicast group 'g'"),
            std::string::npos)
      << m;
}

// No cycle: one switch, h1 multicasts synchronously to {h2, h3, h4} and the output to h3 never
// gets a credit. The multicast holds the outputs to h2 and h4 for good, but what blocks it is
// a channel adapter's buffer, not a cycle of switch credits: the watch reports nothing (the
// run's stuck report lists the outputs).
TEST(MulticastDeadlock, MulticastHeldByABlockedBranchWithoutACycleIsNotADeadlock) {
  Scenario s = tb::basic_scenario(tb::star(5));
  s.switch_cfg.multicast_replication = sw::Replication::synchronous;
  MulticastGroupConfig g;
  g.name = "g";
  g.source = "h1";
  g.members = {"h2", "h3", "h4"};
  s.multicast.push_back(g);
  FlowConfig mc = tb::saturating_flow("mc", "h1", "g", 256);
  mc.generator = GeneratorKind::constant;
  mc.load = 0.1;
  s.flows.push_back(mc);
  s.flows.push_back(tb::saturating_flow("uni", "h5", "h2", 2048));  // waits behind the held output
  Fabric f(s);
  f.switch_at(0)->set_peer_buffer(3, 0, 0);
  DeadlockWatch watch(f, 50'000'000);
  for (int k = 1; k <= 6; ++k) {
    sc_core::sc_start(sc_time(50, SC_US));
    EXPECT_FALSE(watch.check(sc_core::sc_time_stamp().value()).has_value());
  }
  EXPECT_TRUE(f.switch_at(0)->mc_reserved(2));
  EXPECT_TRUE(f.switch_at(0)->mc_reserved(4));
  const std::optional<StuckReport> stuck = watch.stuck(sc_core::sc_time_stamp().value());
  ASSERT_TRUE(stuck.has_value());
  EXPECT_GE(stuck->outputs, 3u);  // the outputs to h2, h3 and h4
}
