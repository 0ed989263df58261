// What a fabric costs the SystemC kernel at elaboration: its ports must not spawn processes.
// simple_target_socket spawns a b2nb_thread (a coroutine stack plus a guard mapping) for
// every socket that registers only nb_transport_fw; at two sockets per cabled port a
// 4,096-host fat tree then exceeds vm.max_map_count and fails with E518
// (../shared/SYSTEMC_NOTES.md, issue 17). The fabric's target sockets are passthrough
// sockets, which spawn nothing.
#include <gtest/gtest.h>

#include <string>
#include <systemc>
#include <vector>

#include "common/fabrics.h"
#include "platform/builder/fabric.h"

using namespace ibvp;

namespace {

// Every object of the hierarchy, depth first.
void collect(const std::vector<sc_core::sc_object*>& objects, std::vector<sc_core::sc_object*>& out) {
  for (sc_core::sc_object* o : objects) {
    out.push_back(o);
    collect(o->get_child_objects(), out);
  }
}

}  // namespace

TEST(ElaborationFootprint, NoPortSpawnsASocketThread) {
  Scenario s = tb::basic_scenario(tb::chain(4));
  s.duration = sc_core::sc_time(1, sc_core::SC_US);
  Fabric f(s);
  // start_of_simulation is where simple_target_socket would spawn its threads.
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  std::vector<sc_core::sc_object*> all;
  collect(sc_core::sc_get_top_level_objects(), all);
  size_t threads = 0, socket_threads = 0;
  for (sc_core::sc_object* o : all) {
    if (std::string(o->kind()) != "sc_thread_process") continue;
    ++threads;
    if (std::string(o->basename()).find("b2nb_thread") != std::string::npos) ++socket_threads;
  }
  EXPECT_EQ(socket_threads, 0u) << "of " << threads << " thread processes";
  // The walk must see the fabric at all, or the count above would prove nothing.
  EXPECT_GT(all.size(), 20u);
  f.finish();
}
