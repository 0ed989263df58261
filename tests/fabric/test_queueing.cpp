// Queueing at one switch output against M/D/1: Poisson arrivals (the superposition of many
// light sources), deterministic service (fixed-size packets at the link rate).
#include <gtest/gtest.h>

#include <systemc>

#include "common/fabrics.h"
#include "platform/builder/fabric.h"

using namespace ibvp;
using sc_core::SC_MS;
using sc_core::sc_time;

class MD1 : public ::testing::TestWithParam<double> {};

TEST_P(MD1, MeanWaitAtOutputMatchesFormula) {
  const double rho = GetParam();
  constexpr uint32_t kSources = 31;
  Scenario s = tb::basic_scenario(tb::star(kSources + 1));
  // Buffers far larger than any queue here: waiting happens at the output, not on credits.
  s.switch_cfg.vl_buffer_bytes = s.endpoint_cfg.vl_buffer_bytes = 1 << 20;
  for (uint32_t h = 1; h <= kSources; ++h) {
    FlowConfig f = tb::saturating_flow("p" + std::to_string(h), "h" + std::to_string(h),
                                            "h" + std::to_string(kSources + 1), 256);
    f.generator = GeneratorKind::poisson;
    f.load = rho / kSources;
    s.flows.push_back(f);
  }
  s.warmup = sc_time(2, SC_MS);
  s.duration = sc_time(rho < 0.7 ? 120 : 300, SC_MS);
  Fabric f(s);
  sc_core::sc_start(s.duration);
  f.finish();

  // 256 payload + 34 header/CRC bytes at 1 byte/ns.
  const double service_ns = 290.0;
  const double unloaded_ns = service_ns + 2 * 5.0 + 100.0;  // serialization, 2 cables, pipeline
  double sum = 0;
  uint64_t n = 0;
  for (const auto& ft : f.recorder().flows()) {
    sum += ft.network_latency_ps.mean() * 1e-3 * static_cast<double>(ft.network_latency_ps.count());
    n += ft.network_latency_ps.count();
  }
  ASSERT_GT(n, 100000u);
  const double wait_ns = sum / static_cast<double>(n) - unloaded_ns;
  const double md1_ns = rho * service_ns / (2.0 * (1.0 - rho));  // Pollaczek-Khinchine, D service
  EXPECT_NEAR(wait_ns / md1_ns, 1.0, 0.05) << "measured " << wait_ns << " ns, M/D/1 " << md1_ns << " ns";
}

INSTANTIATE_TEST_SUITE_P(Loads, MD1, ::testing::Values(0.3, 0.6, 0.8));
