// Rate-based scheduling at the switch's outputs (seed 003 Sec. 3.1, switch.scheduling):
// under overload, VirtualClock and Fair Queueing give each connection a share of the output
// in proportion to the rate it reserved; across_vls replaces the VLArb tables; each
// connection's packets keep their order.
#include <gtest/gtest.h>

#include <map>
#include <systemc>

#include "common/fabrics.h"
#include "platform/builder/fabric.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

// Checks that every flow's packets arrive in the order they were made (ids grow per source).
class OrderCheck : public sim::FabricObserver {
 public:
  void on_deliver(const ib::Packet& p, uint32_t, uint64_t) override {
    auto [it, fresh] = last_.emplace(p.flow, p.id);
    if (!fresh) {
      if (p.id < it->second) out_of_order++;
      it->second = p.id;
    }
    delivered++;
  }
  uint64_t out_of_order = 0, delivered = 0;

 private:
  std::map<uint32_t, uint64_t> last_;
};

// h1, h2, h3 saturate h4 through one switch (1 Gb/s links, 2048-byte payloads), reserving
// `rates` b/s; on SLs `sls` (VL = SL with two data VLs).
Scenario overload(sw::Scheduling scheduling, const std::vector<double>& rates, const std::vector<uint8_t>& sls) {
  Scenario s = tb::basic_scenario(tb::star(4));
  s.switch_cfg.scheduling = scheduling;
  s.switch_cfg.data_vls = s.endpoint_cfg.data_vls = 2;
  s.switch_cfg.sl2vl = s.endpoint_cfg.sl2vl = sw::SwitchConfig::default_sl2vl(2);
  s.switch_cfg.vlarb = s.endpoint_cfg.vlarb = link::VlArbConfig::round_robin(2);
  for (size_t i = 0; i < rates.size(); ++i) {
    FlowConfig f = tb::saturating_flow("f" + std::to_string(i), "h" + std::to_string(i + 1), "h4", 2048, sls[i]);
    f.reserved_rate = rates[i];
    s.flows.push_back(f);
  }
  s.warmup = sc_time(500, SC_US);
  s.duration = sc_time(5, SC_MS);
  return s;
}

std::vector<double> shares(Fabric& f) {
  std::vector<double> bytes;
  double total = 0;
  for (const auto& fl : f.recorder().flows()) {
    bytes.push_back(static_cast<double>(fl.measured_payload_bytes));
    total += bytes.back();
  }
  for (double& b : bytes) b /= total;
  return bytes;
}

void run(Fabric& f, const Scenario& s) {
  sc_core::sc_start(s.duration);
  f.finish();
}

}  // namespace

TEST(RateScheduling, VirtualClockSharesAnOverloadedOutputInProportionToReservedRates) {
  // Reserved 100, 200 and 500 Mb/s on one VL: shares 1/8, 2/8, 5/8 of the saturated output.
  const Scenario s = overload(sw::Scheduling::virtual_clock, {100e6, 200e6, 500e6}, {0, 0, 0});
  Fabric f(s);
  OrderCheck order;
  f.probe().attach(&order);
  run(f, s);
  const auto sh = shares(f);
  EXPECT_NEAR(sh[0], 0.125, 0.01);
  EXPECT_NEAR(sh[1], 0.25, 0.01);
  EXPECT_NEAR(sh[2], 0.625, 0.01);
  // Work conserving: together they still fill the link.
  double bytes = 0;
  for (const auto& fl : f.recorder().flows()) bytes += static_cast<double>(fl.measured_payload_bytes);
  EXPECT_NEAR(bytes / 4.5e-3 / (1e9 * 2048.0 / 2082.0), 1.0, 0.01);
  EXPECT_GT(order.delivered, 1000u);
  EXPECT_EQ(order.out_of_order, 0u);
}

TEST(RateScheduling, VirtualClockWithFiniteCountersKeepsTheSharesAcrossCounterOverflows) {
  // The same overload through 20-bit counters of ns (limit 1,048,575 ns, seed 003 Sec. 3.1's
  // overflow rule): each flow's auxVC grows by its Vtick per packet (a 2,082-byte packet is
  // 166,560 ns at 100 Mb/s, 33,312 ns at 500 Mb/s), so over 5 ms every counter wraps several
  // times, and the shares stay 1/8, 2/8, 5/8.
  Scenario s = overload(sw::Scheduling::virtual_clock, {100e6, 200e6, 500e6}, {0, 0, 0});
  s.switch_cfg.vc_bits = 20;
  Fabric f(s);
  OrderCheck order;
  f.probe().attach(&order);
  run(f, s);
  const auto sh = shares(f);
  EXPECT_NEAR(sh[0], 0.125, 0.01);
  EXPECT_NEAR(sh[1], 0.25, 0.01);
  EXPECT_NEAR(sh[2], 0.625, 0.01);
  // Each flow was charged more than the counter holds: its clock overflowed, and the output's
  // counters stayed within 20 bits.
  const uint64_t limit = (uint64_t{1} << 20) - 1;
  const sched::VirtualClock* vc = f.switch_at(s.topology.find("s1"))->virtual_clock(4);  // h4's port
  ASSERT_NE(vc, nullptr);
  EXPECT_EQ(vc->counter_bits(), 20u);
  ASSERT_GE(vc->size(), 3u);
  for (size_t k = 0; k < vc->size(); ++k) EXPECT_LE(vc->aux_vc(k), limit);
  const std::vector<double> rates = {100e6, 200e6, 500e6};
  size_t i = 0;
  for (const auto& fl : f.recorder().flows()) {
    const double charged_ns = static_cast<double>(fl.measured_payload_bytes) / 2048.0 * 2082.0 * 8e9 / rates[i++];
    EXPECT_GT(charged_ns, 2.0 * static_cast<double>(limit));
  }
  EXPECT_EQ(order.out_of_order, 0u);
}

TEST(RateScheduling, FairQueueingSharesAnOverloadedOutputInProportionToReservedRates) {
  const Scenario s = overload(sw::Scheduling::fair_queueing, {100e6, 200e6, 500e6}, {0, 0, 0});
  Fabric f(s);
  OrderCheck order;
  f.probe().attach(&order);
  run(f, s);
  const auto sh = shares(f);
  EXPECT_NEAR(sh[0], 0.125, 0.01);
  EXPECT_NEAR(sh[1], 0.25, 0.01);
  EXPECT_NEAR(sh[2], 0.625, 0.01);
  EXPECT_EQ(order.out_of_order, 0u);
}

TEST(RateScheduling, FifoSharesTheOutputEquallyWhateverTheReservedRates) {
  // The same overload under FIFO: the reservations are ignored, the three inputs alternate.
  const Scenario s = overload(sw::Scheduling::fifo, {100e6, 200e6, 500e6}, {0, 0, 0});
  Fabric f(s);
  run(f, s);
  for (double x : shares(f)) EXPECT_NEAR(x, 1.0 / 3, 0.01);
}

TEST(RateScheduling, PerVlLeavesTheChoiceOfVlToTheVlArbTables) {
  // One flow per VL, reserved 1 : 3, round-robin VLArb tables: per_vl has one connection
  // per VL to choose from, so the tables split the output evenly.
  Scenario s = overload(sw::Scheduling::virtual_clock, {250e6, 750e6}, {0, 1});
  s.switch_cfg.scheduling_scope = sw::SchedulingScope::per_vl;
  Fabric f(s);
  run(f, s);
  const auto sh = shares(f);
  EXPECT_NEAR(sh[0], 0.5, 0.01);
}

TEST(RateScheduling, AcrossVlsSharesByReservedRatesInPlaceOfTheVlArbTables) {
  Scenario s = overload(sw::Scheduling::virtual_clock, {250e6, 750e6}, {0, 1});
  s.switch_cfg.scheduling_scope = sw::SchedulingScope::across_vls;
  Fabric f(s);
  run(f, s);
  const auto sh = shares(f);
  EXPECT_NEAR(sh[0], 0.25, 0.01);
  EXPECT_NEAR(sh[1], 0.75, 0.01);
}

TEST(RateScheduling, FairQueueingAcrossVlsSharesByReservedRates) {
  Scenario s = overload(sw::Scheduling::fair_queueing, {250e6, 750e6}, {0, 1});
  s.switch_cfg.scheduling_scope = sw::SchedulingScope::across_vls;
  Fabric f(s);
  run(f, s);
  const auto sh = shares(f);
  EXPECT_NEAR(sh[0], 0.25, 0.01);
}
