// The crossbar kinds (switch.crossbar): a non-multiplexed crossbar connects an input to one
// output at a time; a multiplexed one (seed 002 Sec. 4.1) lets one input's packets leave
// through several outputs at once. Numbers derived by hand from the IBA rates.
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

// A UD SEND Only with 2048 payload bytes is 2082 bytes on the wire: 2082 ns at 4X SDR
// (1 byte/ns), 520.5 ns at 4X QDR (4 bytes/ns).
constexpr uint64_t kSdrSerPs = 2082'000;
constexpr uint64_t kQdrSerPs = 520'500;
constexpr uint64_t kPropPs = 5'000;       // 1 m at 5 ns/m
constexpr uint64_t kPipelinePs = 100'000;  // SwitchConfig default

// One switch; h1 on a 4X QDR cable, the other hosts on 4X SDR: h1 can bring packets in four
// times as fast as one output can send them, so its input buffer holds packets for several
// outputs and the crossbar decides whether they leave one at a time.
Scenario fast_input_star(uint32_t hosts, sw::Crossbar crossbar) {
  topo::Topology t = tb::star(hosts);
  t.links[0].cfg.speed = link::Speed::qdr;  // h1 - s1 port 1
  t.index();
  Scenario s = tb::basic_scenario(t);
  s.switch_cfg.crossbar = crossbar;
  return s;
}

FlowConfig one_packet(const std::string& name, const std::string& src, const std::string& dst) {
  FlowConfig f = tb::saturating_flow(name, src, dst);
  f.generator = GeneratorKind::constant;
  f.load = 0.01;  // the next packet would come 100 packet times later, after stop
  f.start = sc_core::SC_ZERO_TIME;
  f.stop = sc_time(1, SC_NS);
  return f;
}

// When each flow's first packet left the switch: it reached its host one SDR packet time
// and one cable after its transmission started (the tail came in at QDR, long before).
std::vector<uint64_t> switch_starts_ps(const metrics::Recorder& rec, uint32_t flows) {
  std::vector<uint64_t> start(flows, 0);
  for (const metrics::PacketRecord& r : rec.packets())
    if (r.flow < flows && r.done_ps && !r.drop && start[r.flow] == 0) start[r.flow] = r.done_ps - kSdrSerPs - kPropPs;
  return start;
}

std::vector<uint64_t> two_packets_to_two_outputs(sw::Crossbar crossbar) {
  Scenario s = fast_input_star(3, crossbar);
  s.flows.push_back(one_packet("to_h2", "h1", "h2"));
  s.flows.push_back(one_packet("to_h3", "h1", "h3"));
  Fabric f(s);
  sc_core::sc_start(sc_time(1, SC_MS));
  f.finish();
  EXPECT_EQ(f.recorder().delivered(), 2u);
  std::vector<uint64_t> start = switch_starts_ps(f.recorder(), 2);
  std::sort(start.begin(), start.end());
  return start;
}

void expect_conserved(Fabric& f) {
  const metrics::Recorder& r = f.recorder();
  EXPECT_EQ(r.injected(), r.delivered() + r.dropped() + f.packets_in_flight());
  EXPECT_EQ(r.dropped(), 0u);
  uint64_t per_flow = 0;
  for (const auto& ft : r.flows()) per_flow += ft.delivered;
  EXPECT_EQ(per_flow, r.delivered());
  // No switch input buffer ever held more than it advertised as credits.
  const Scenario& s = f.scenario();
  for (uint32_t n = 0; n < s.topology.nodes.size(); ++n) {
    if (!f.switch_at(n)) continue;
    for (uint16_t p = 1; p <= s.topology.nodes[n].num_ports; ++p) {
      if (s.topology.link_at(n, p) < 0) continue;
      EXPECT_LE(f.switch_at(n)->counters(p).vl[0].buffer_hwm_blocks, s.switch_cfg.vl_buffer_bytes / 64);
    }
  }
}

// Payload bytes per second of one saturated SDR output carrying 2048-byte payloads.
double sdr_payload_rate() {
  return link::LinkRate(link::LinkConfig{}).data_bits_per_s() / 8 * 2048.0 / 2082.0;
}

double payload_rate(const Scenario& s, const metrics::FlowTotals& ft) {
  return static_cast<double>(ft.measured_payload_bytes) / (static_cast<double>((s.duration - s.warmup).value()) * 1e-12);
}

}  // namespace

TEST(Crossbar, MultiplexedInputFeedsTwoOutputsAtOnce) {
  // Both packets start one pipeline delay after their heads came in: the first at
  // prop + pipeline, the second one QDR packet time later, while the first is still leaving
  // (an SDR packet time).
  const std::vector<uint64_t> start = two_packets_to_two_outputs(sw::Crossbar::multiplexed);
  EXPECT_EQ(start[0], kPropPs + kPipelinePs);
  EXPECT_EQ(start[1], kQdrSerPs + kPropPs + kPipelinePs);
  EXPECT_LT(start[1], start[0] + kSdrSerPs);  // the two transmissions overlap
}

TEST(Crossbar, NonMultiplexedInputFeedsOneOutputAtATime) {
  // The second packet's output is idle, but its input is connected to the first one's
  // output until that packet's tail has left.
  const std::vector<uint64_t> start = two_packets_to_two_outputs(sw::Crossbar::non_multiplexed);
  EXPECT_EQ(start[0], kPropPs + kPipelinePs);
  EXPECT_EQ(start[1], start[0] + kSdrSerPs);
}

class CrossbarSaturated : public ::testing::TestWithParam<sw::Crossbar> {};

TEST_P(CrossbarSaturated, FastInputToTwoSlowOutputsReachesTheRateItsCrossbarAllows) {
  // h1 saturates two SDR outputs from one QDR input. A multiplexed crossbar keeps both
  // outputs busy: each flow gets a whole SDR link. A non-multiplexed one lets the input feed
  // one output at a time (head-of-line blocking at the crossbar): the two flows share one
  // SDR link's rate.
  const sw::Crossbar crossbar = GetParam();
  Scenario s = fast_input_star(3, crossbar);
  s.flows.push_back(tb::saturating_flow("to_h2", "h1", "h2"));
  s.flows.push_back(tb::saturating_flow("to_h3", "h1", "h3"));
  s.warmup = sc_time(100, SC_US);
  s.duration = sc_time(2, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  const double a = payload_rate(s, f.recorder().flows().at(0)) / sdr_payload_rate();
  const double b = payload_rate(s, f.recorder().flows().at(1)) / sdr_payload_rate();
  if (crossbar == sw::Crossbar::multiplexed) {
    EXPECT_NEAR(a, 1.0, 0.005);
    EXPECT_NEAR(b, 1.0, 0.005);
  } else {
    EXPECT_NEAR(a + b, 1.0, 0.005);
    EXPECT_NEAR(a, b, 0.01);
  }
  expect_conserved(f);
}

TEST_P(CrossbarSaturated, PoissonTrafficOverMixedRatesLosesAndDuplicatesNothing) {
  // Outputs of different rates make one input's packets leave out of arrival order through
  // a multiplexed crossbar (a short one to a QDR host ends before a long one to an SDR
  // host): the input buffer frees per packet, whatever the order.
  topo::Topology t = tb::star(4);
  t.links[0].cfg.speed = link::Speed::qdr;
  t.links[2].cfg.speed = link::Speed::qdr;
  t.index();
  Scenario s = tb::basic_scenario(t);
  s.switch_cfg.crossbar = GetParam();
  s.traffic.enabled = true;
  s.traffic.generator = GeneratorKind::poisson;
  s.traffic.pattern = DestinationPattern::uniform;
  s.traffic.load = 0.9;
  s.traffic.payload_bytes = 256;
  s.flows.push_back(tb::saturating_flow("big", "h1", "h2", 2048));
  s.duration = sc_time(2, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();
  EXPECT_GT(f.recorder().delivered(), 5000u);
  expect_conserved(f);
  std::vector<bool> seen(f.recorder().packets().size());
  for (const auto& rec : f.recorder().packets()) {
    ASSERT_FALSE(seen[rec.id]);
    seen[rec.id] = true;
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, CrossbarSaturated,
                         ::testing::Values(sw::Crossbar::non_multiplexed, sw::Crossbar::multiplexed),
                         [](const ::testing::TestParamInfo<sw::Crossbar>& i) {
                           return std::string(sw::crossbar_name(i.param));
                         });
