// perftest-style applications over HCA hosts (platform/apps/perftest): latency rows equal
// the sum of a message's parts, bandwidth rows reach the slower of link and host bus, and
// the configs and errors of the perftest section.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <systemc>

#include "common/hca_latency.h"
#include "common/testing.h"
#include "platform/apps/perftest.h"
#include "platform/builder/fabric.h"
#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;

namespace {

const std::string kHosts =
    "topology: {generator: single_switch, hosts: 2, link: {width: 4X, speed: EDR, length_m: 2}}\n"
    "switch: {vl_buffer_bytes: 16640}\n"
    "endpoint: {vl_buffer_bytes: 16640}\n"
    "endpoint_model: hca\n";

// Runs the scenario until its perftest is done and returns its rows.
std::vector<apps::PerftestRow> run_perftest(const std::string& yaml) {
  const Scenario s = scenario_from_yaml(yaml, "test.yaml");
  Fabric f(s);
  sc_core::sc_start(s.duration);
  const apps::Perftest* pt = f.perftest();
  EXPECT_NE(pt, nullptr);
  if (!pt) return {};
  EXPECT_TRUE(pt->finished()) << pt->error();
  return pt->rows();
}

// perftest's MB/s: 2^20 bytes per second.
double mbps(double bytes_per_s) { return bytes_per_s / (1 << 20); }

}  // namespace

TEST(Perftest, SendLatHalfRoundTripIsTheOneWaySumOfParts) {
  // A ping-pong is two one-way trips of the same parts; the fastest sample has no queueing.
  const auto rows = run_perftest("duration: 10ms\n" + kHosts +
                                 "hca: {event_cycles: 0, hal_call_cycles: 0}\n"
                                 "perftest: {test: send_lat, client: h1, server: h2, sizes: [64, 256], "
                                 "iterations: 5, qp_type: UD}\n");
  ASSERT_EQ(rows.size(), 2u);
  for (const apps::PerftestRow& r : rows) {
    const double expected_us = static_cast<double>(tb::ud_send_latency_ps({}, r.bytes)) * 1e-6;
    EXPECT_NEAR(r.t_min_us, expected_us, 1e-6) << r.bytes << " bytes";
    EXPECT_LE(r.t_min_us, r.t_typical_us);
    EXPECT_LE(r.t_typical_us, r.t_max_us);
    EXPECT_EQ(r.iterations, 5u);
  }
}

TEST(Perftest, SendBwReachesTheLinkPayloadRateWhenTheBusIsFaster) {
  // PCIe Gen3 x16 (126 Gb/s) feeds a 4X EDR link (100 Gb/s): RC SENDs of 4096-byte packets
  // carry 4096 of every 4096 + 26 bytes (LRH 8, BTH 12, ICRC 4, VCRC 2).
  const auto rows = run_perftest("duration: 50ms\n" + kHosts +
                                 "hca: {host_bus: {generation: gen3, lanes: 16}}\n"
                                 "perftest: {test: send_bw, client: h1, server: h2, sizes: [1048576], "
                                 "iterations: 20}\n");
  ASSERT_EQ(rows.size(), 1u);
  const double link = mbps(12.5e9 * 4096.0 / (4096 + 26));
  EXPECT_NEAR(rows[0].bw_avg_MBps, link, 0.02 * link);
}

// RDMA WRITE moves 1 MiB in 256 packets of 4096 bytes; only the first carries a RETH (16
// bytes), so it too reaches the link's payload rate within 2 %. (The test also checks that
// WRITE completions free send-queue slots: without that the queue fills and post_send
// refuses.)
static double bw_of(const char* test) {
  const auto rows = run_perftest("duration: 50ms\n" + kHosts +
                                 "hca: {host_bus: {generation: gen3, lanes: 16}}\n"
                                 "perftest: {test: " + std::string(test) +
                                 ", client: h1, server: h2, sizes: [1048576], iterations: 20}\n");
  EXPECT_EQ(rows.size(), 1u);
  return rows.empty() ? 0 : rows[0].bw_avg_MBps;
}

TEST(Perftest, WriteBwReachesTheLinkPayloadRate) {
  const double link = mbps(12.5e9 * 4096.0 / (4096 + 26));
  EXPECT_NEAR(bw_of("write_bw"), link, 0.02 * link);
}

TEST(Perftest, ReadBwReachesTheLinkPayloadRate) {
  // READ responses carry 4096 of 4096 + 26 bytes (first and last add an AETH). The responder
  // streams each response packet by packet (one DMA read per packet): reading the whole 1 MiB
  // response before its first packet left cost one message time per run, 95.5 % of the rate
  // with 20 iterations (docs/hca.md).
  const double link = mbps(12.5e9 * 4096.0 / (4096 + 26));
  const double bw = bw_of("read_bw");
  EXPECT_LE(bw, link);
  EXPECT_GE(bw, 0.98 * link);
}

TEST(Perftest, AnUnknownHcaProfileIsAConfigErrorAtHcaProfileNamingTheProfiles) {
  try {
    scenario_from_yaml("duration: 1ms\n" + kHosts + "hca: {profile: connectx9}\nperftest: {client: h1, server: h2}\n",
                       "test.yaml");
    ADD_FAILURE() << "an unknown profile was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "hca.profile");
    EXPECT_NE(e.problem().find("connectx9"), std::string::npos) << e.problem();
    EXPECT_NE(e.fix().find("connectx4_edr"), std::string::npos) << e.fix();
  }
}

TEST(Perftest, TheProfileSetsOnlyTheKeysTheScenarioDoesNotWrite) {
  const Scenario s = scenario_from_yaml(
      "duration: 1ms\n" + kHosts +
          "hca: {profile: connectx4_edr, event_cycles: 77, host_bus: {lanes: 8}}\nperftest: {client: h1, server: h2}\n",
      "test.yaml");
  EXPECT_EQ(s.hca_host.hca.event_cycles, 77u);    // written
  EXPECT_EQ(s.hca_host.bus.lanes, 8u);            // written, inside a section the profile also fills
  EXPECT_EQ(s.hca_host.hca.hal_call_cycles, 3u);  // the profile's
  EXPECT_EQ(s.hca_host.hca.blueflame_bytes, 256u);
  EXPECT_EQ(s.hca_host.bus.generation, host::PcieGen::gen3);
  const Scenario plain = scenario_from_yaml("duration: 1ms\n" + kHosts + "perftest: {client: h1, server: h2}\n",
                                            "test.yaml");
  EXPECT_EQ(plain.hca_host.hca.blueflame_bytes, 0u);  // no profile: no BlueFlame
  EXPECT_EQ(plain.hca_host.hca.event_cycles, 100u);
}

TEST(Perftest, SendLatOnTheConnectX4ProfileIsWithinTenPercentOfTheMeasuredHca) {
  // ib_send_lat between two ConnectX-4 EDR HCAs back to back (RC, inline below 188 bytes,
  // median): 0.83 us at 32 bytes, 4.56 us at 32 KiB (docs/hca.md, Hardware profiles). Not a
  // timed test: simulated time, deterministic.
  const std::string b2b =
      "topology: {inline: {defaults: {width: 4X, speed: EDR, length_m: 2.0}, switches: [], "
      "hosts: [{name: h1, lid: 1}, {name: h2, lid: 2}], links: [[h1, h2]]}}\n"
      "endpoint: {vl_buffer_bytes: 16640}\nendpoint_model: hca\n";
  const auto rows = run_perftest("duration: 10ms\n" + b2b +
                                 "hca: {profile: connectx4_edr}\n"
                                 "perftest: {test: send_lat, client: h1, server: h2, sizes: [32, 32768], "
                                 "iterations: 5, inline_size: 188}\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NEAR(rows[0].t_typical_us, 0.83, 0.083);
  EXPECT_NEAR(rows[1].t_typical_us, 4.56, 0.456);
}

// perftest -q: with one WR outstanding per QP (tx_depth 1) a single QP waits a whole round
// trip per 2-byte WRITE; four QPs keep four in flight, so the message rate rises well above
// one QP's (the firmware, doorbells and PCIe are far from busy), and every QP's messages
// are posted and completed: the client's HCA fetched exactly iterations x qps WQEs.
TEST(Perftest, SeveralQpsRaiseTheMessageRateOfALatencyBoundWriteBwAndEveryMessageCompletes) {
  struct Run {
    double mpps;
    uint64_t wqes;
    uint32_t iterations;
  };
  auto run = [](uint32_t qps) {
    const Scenario s = scenario_from_yaml("duration: 20ms\n" + kHosts +
                                             "hca: {profile: connectx4_edr}\n"
                                             "perftest: {test: write_bw, client: h1, server: h2, sizes: [2], "
                                             "iterations: 200, tx_depth: 1, cq_mod: 1, qps: " +
                                             std::to_string(qps) + "}\n",
                                         "test.yaml");
    Fabric f(s);
    sc_core::sc_start(s.duration);
    const apps::Perftest* pt = f.perftest();
    Run r{0, 0, 0};
    if (!pt || !pt->finished() || pt->rows().size() != 1) return r;
    r.mpps = pt->rows()[0].msg_rate_Mpps;
    r.iterations = pt->rows()[0].iterations;
    r.wqes = f.host_at(s.topology.find("h1"))->hca.fw_counter(IBVP_CNT_WQES);
    return r;
  };
  const Run four = run(4);  // one elaboration per process: the one-QP run is the next test
  EXPECT_EQ(four.iterations, 200u);
  EXPECT_EQ(four.wqes, 4u * 200u) << "every QP posted and completed its iterations";
  // One QP with one WR in flight does one message per round trip, under 0.8 Mpps (next
  // test); four in flight do well over twice that (2.66 Mpps measured).
  EXPECT_GT(four.mpps, 2 * 0.8) << "four QPs in flight should beat one QP's 1 / RTT";
}

TEST(Perftest, OneQpOfALatencyBoundWriteBwRunsOneMessagePerRoundTrip) {
  const Scenario s = scenario_from_yaml("duration: 20ms\n" + kHosts +
                                            "hca: {profile: connectx4_edr}\n"
                                            "perftest: {test: write_bw, client: h1, server: h2, sizes: [2], "
                                            "iterations: 200, tx_depth: 1, cq_mod: 1}\n",
                                        "test.yaml");
  Fabric f(s);
  sc_core::sc_start(s.duration);
  const apps::Perftest* pt = f.perftest();
  ASSERT_NE(pt, nullptr);
  ASSERT_TRUE(pt->finished()) << pt->error();
  EXPECT_EQ(f.host_at(s.topology.find("h1"))->hca.fw_counter(IBVP_CNT_WQES), 200u);
  // A WRITE's round trip (post, BlueFlame store and PCIe, wire, the responder's ACK, the
  // CQE's DMA write, the poll) is at least 1.25 us: at most 0.8 Mpps (0.69 measured).
  EXPECT_LT(pt->rows()[0].msg_rate_Mpps, 0.8) << "one WR in flight cannot beat 1 / RTT";
}

// perftest's latency loops (run_iter_lat_send, run_iter_lat_write) are one loop on both
// sides: the last send is signaled and its completion polled before the loop ends, so
// neither side ends a size with a send it has not seen complete. Each side's send queue is
// empty at the end: posted WQEs equal those its polls saw complete.
void expect_every_send_completes(const std::string& test, const std::string& qp_type) {
  const Scenario s = scenario_from_yaml("duration: 10ms\n" + kHosts +
                                            "perftest: {test: " + test + ", client: h1, server: h2, sizes: [64, 4096], "
                                            "iterations: 20, qp_type: " + qp_type + "}\n",
                                        "test.yaml");
  Fabric f(s);
  sc_core::sc_start(s.duration);
  const apps::Perftest* pt = f.perftest();
  ASSERT_NE(pt, nullptr);
  ASSERT_TRUE(pt->finished()) << pt->error();
  ASSERT_EQ(pt->rows().size(), 2u);
  EXPECT_EQ(pt->sends_outstanding(false), 0u) << "the client left sends unpolled";
  EXPECT_EQ(pt->sends_outstanding(true), 0u) << "the server left sends unpolled";
}

TEST(Perftest, SendLatRcEndsWithEverySendCompletedOnBothSides) { expect_every_send_completes("send_lat", "RC"); }
TEST(Perftest, SendLatUdEndsWithEverySendCompletedOnBothSides) { expect_every_send_completes("send_lat", "UD"); }
TEST(Perftest, WriteLatEndsWithEverySendCompletedOnBothSides) { expect_every_send_completes("write_lat", "RC"); }

TEST(Perftest, QpsAboveOneWithALatencyTestIsAConfigErrorAtPerftestQps) {
  try {
    scenario_from_yaml("duration: 1ms\n" + kHosts +
                           "perftest: {test: send_lat, client: h1, server: h2, sizes: [2], qps: 2}\n",
                       "test.yaml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("qps"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("test.yaml"), std::string::npos) << e.what();
  }
}

TEST(Perftest, SendBwIsTheBusRateWhenTheBusIsSlower) {
  // PCIe Gen3 x4 (31.5 Gb/s) under a 100 Gb/s link: the payload crosses the bus in
  // completions of Max_Payload_Size 256 bytes, each with 24 bytes of TLP overhead.
  const auto rows = run_perftest("duration: 50ms\n" + kHosts +
                                 "hca: {host_bus: {generation: gen3, lanes: 4}}\n"
                                 "perftest: {test: send_bw, client: h1, server: h2, sizes: [1048576], "
                                 "iterations: 20}\n");
  ASSERT_EQ(rows.size(), 1u);
  const double bus = mbps(4 * 8e9 * 128 / 130 / 8 * 256.0 / (256 + 24));
  EXPECT_NEAR(rows[0].bw_avg_MBps, bus, 0.02 * bus);
}

TEST(Perftest, CommittedConfigsValidate) {
  for (const char* name : {"send_bw", "write_bw", "read_bw", "send_lat", "write_lat"}) {
    const std::string path = ibvp::testing::source_path(std::string("configs/perftest/") + name + ".yaml");
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    const Scenario s = load_scenario(path);
    EXPECT_EQ(s.endpoint_model, EndpointModel::hca) << name;
  }
}

TEST(Perftest, BadSectionsAreConfigErrorsWithKeyPaths) {
  const auto error_of = [](const std::string& yaml) -> ConfigError {
    try {
      scenario_from_yaml(yaml, "test.yaml");
    } catch (const ConfigError& e) {
      return e;
    }
    ADD_FAILURE() << "accepted:\n" << yaml;
    return ConfigError("", "", 0, "", "");
  };
  std::string fabric_only = kHosts;
  fabric_only.replace(fabric_only.find("endpoint_model: hca\n"), 20, "");
  EXPECT_NE(error_of("duration: 1ms\n" + fabric_only + "perftest: {client: h1, server: h2}\n").key().find("perftest"),
            std::string::npos);
  EXPECT_NE(error_of("duration: 1ms\n" + kHosts + "perftest: {client: h1, server: h1}\n").key().find("perftest"),
            std::string::npos);
  EXPECT_NE(error_of("duration: 1ms\n" + kHosts + "perftest: {client: h1, server: h9}\n").key().find("perftest"),
            std::string::npos);
  EXPECT_NE(error_of("duration: 1ms\n" + kHosts + "perftest: {test: write_bw, qp_type: UD, client: h1, server: h2}\n")
                .key()
                .find("perftest"),
            std::string::npos);
  EXPECT_NE(error_of("duration: 1ms\n" + kHosts + "perftest: {client: h1, server: h2, sizes: [64, 32]}\n")
                .key()
                .find("perftest.sizes"),
            std::string::npos);
}
