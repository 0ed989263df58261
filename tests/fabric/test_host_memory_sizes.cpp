// Host memory of any size the loader accepts runs (issue 18): the programs place their driver
// rings and buffers from the bottom of host memory (verbs::HostMemoryPlan), so 1 GiB and
// 4 GiB run a perftest to the end with every completion a success (before, the driver area
// sat at 1 GiB and the buffer at 4 GiB: 1 GiB crashed, 4 GiB gave LOC_PROT_ERR), and the
// plan is exact: memory of exactly the planned size runs too.
#include <gtest/gtest.h>

#include <string>
#include <systemc>

#include "platform/apps/perftest.h"
#include "platform/builder/fabric.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;

namespace {

std::string yaml_for(uint64_t size_bytes) {
  return "duration: 10ms\n"
         "topology: {generator: single_switch, hosts: 2}\n"
         "endpoint_model: hca\n"
         "hca: {host_memory: {size_bytes: " + std::to_string(size_bytes) + "}}\n"
         "perftest: {test: write_bw, client: h1, server: h2, sizes: [65536], iterations: 20}\n";
}

void expect_perftest_finishes(uint64_t size_bytes) {
  const Scenario s = scenario_from_yaml(yaml_for(size_bytes), "test.yaml");
  Fabric f(s);
  sc_core::sc_start(s.duration);
  const apps::Perftest* pt = f.perftest();
  ASSERT_NE(pt, nullptr);
  EXPECT_TRUE(pt->finished());
  EXPECT_EQ(pt->error(), "");
  ASSERT_EQ(pt->rows().size(), 1u);
  EXPECT_GT(pt->rows()[0].bw_avg_MBps, 0.0);
}

}  // namespace

TEST(HostMemorySizes, OneGibibyteRunsThePerftestToTheEnd) { expect_perftest_finishes(uint64_t{1} << 30); }

TEST(HostMemorySizes, FourGibibytesRunThePerftestWithoutProtectionErrors) { expect_perftest_finishes(uint64_t{4} << 30); }

TEST(HostMemorySizes, ExactlyThePlannedSizeRuns) {
  const Scenario s = scenario_from_yaml(yaml_for(uint64_t{1} << 30), "test.yaml");
  expect_perftest_finishes(apps::Perftest::plan(s.perftest).end());
}
