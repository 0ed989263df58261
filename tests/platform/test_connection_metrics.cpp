// Seed 002's per-connection metrics of CBR connections (issue 11,
// platform/metrics/connection_metrics.h): delay thresholds as fractions of each
// connection's D (Fig. 3), inter-arrival-time intervals around its nominal IAT (Fig. 4),
// the best and worst connection per SL at D/100 (Fig. 5), the per-SL sums, the stop rule
// (Sec. 4.2) and the bytes kept per connection. Times are chosen so the arithmetic can be
// followed by hand: D = 1,000,000 ps and a nominal IAT of 1,000,000 ps.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/ib/packet.h"
#include "models/sim/rng.h"
#include "platform/metrics/connection_metrics.h"
#include "platform/metrics/recorder.h"
#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"

namespace ibvp {
namespace {

using metrics::ConnectionMetrics;
using metrics::ConnectionMetricsConfig;
using metrics::ConnectionState;
using metrics::SlConnectionSummary;
using workload::CbrConnection;
using workload::CbrConnections;
using workload::kNoConnection;

constexpr uint64_t kD = 1'000'000;    // ps
constexpr uint64_t kIat = 1'000'000;  // ps

CbrConnection conn(uint8_t sl, uint64_t end_ps = ~uint64_t{0}) {
  CbrConnection c;
  c.sl = sl;
  c.deadline_ps = kD;
  c.interval_ps = kIat;
  c.end_ps = end_ps;
  return c;
}

// Default thresholds: 0.01 0.02 0.05 0.1 0.2 0.5 1 (indices 0..6), interval 7 above D.
// Default IAT edges: 0.5 0.75 0.9 0.95 1.05 1.1 1.25 1.5 -> intervals 0..8, central 4.

TEST(ConnectionMetrics, ADelayExactlyAtAThresholdCountsAsWithinItAndOnePicosecondMoreDoesNot) {
  const CbrConnections conns{conn(0)};
  ConnectionMetrics m(conns, 0);
  const uint64_t created = 5'000'000;
  for (uint64_t delay : {uint64_t{10'000}, uint64_t{10'001}, uint64_t{100'000}, kD, kD + 1})
    m.on_deliver(0, created, created + delay);
  EXPECT_EQ(m.interval_count(0, 0), 1u);  // 10,000 = D/100: within D/100
  EXPECT_EQ(m.interval_count(0, 1), 1u);  // 10,001: in (0.01 D, 0.02 D]
  EXPECT_EQ(m.interval_count(0, 3), 1u);  // 100,000 = D/10: within D/10
  EXPECT_EQ(m.interval_count(0, 6), 1u);  // exactly D: within D
  EXPECT_EQ(m.interval_count(0, 7), 1u);  // D + 1 ps: late
  EXPECT_EQ(m.within(0, 0), 1u);
  EXPECT_EQ(m.within(0, 1), 2u);
  EXPECT_EQ(m.within(0, 3), 3u);
  EXPECT_EQ(m.within(0, 6), 4u);
  EXPECT_EQ(m.late(0), 1u);
  EXPECT_EQ(m.state(0).delivered, 5u);
  EXPECT_EQ(m.state(0).delay_max_ps, kD + 1);
  EXPECT_DOUBLE_EQ(m.delay_mean_ps(0), (10'000.0 + 10'001 + 100'000 + kD + kD + 1) / 5);
}

TEST(ConnectionMetrics, InterArrivalTimesFallInIntervalsRelativeToTheNominalIatWithEdgesGoingUp) {
  const CbrConnections conns{conn(0)};
  ConnectionMetrics m(conns, 0);
  // Arrivals (each packet with a delay of 1,000 ps): IATs 1.0, 0.95 (an edge: the central
  // interval [0.95, 1.05)), 1.05 (an edge: the interval above), 0.4, 2.0, 0.94 x nominal.
  uint64_t t = 10'000'000;
  const std::vector<uint64_t> iats{1'000'000, 950'000, 1'050'000, 400'000, 2'000'000, 940'000};
  m.on_deliver(0, t - 1000, t);
  for (uint64_t iat : iats) {
    t += iat;
    m.on_deliver(0, t - 1000, t);
  }
  const std::vector<uint32_t> expected{1, 0, 0, 1, 2, 1, 0, 0, 1};
  ASSERT_EQ(m.iat_intervals(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) EXPECT_EQ(m.iat_count(0, k), expected[k]) << "interval " << k;
  EXPECT_EQ(m.state(0).delivered, 7u);  // the first packet has no IAT: 6 samples
}

TEST(ConnectionMetrics, PacketsCreatedBeforeTheWarmupAreNeitherCountedNorStartAnIat) {
  const CbrConnections conns{conn(0)};
  const uint64_t warmup = 1'000'000;
  ConnectionMetrics m(conns, warmup);
  m.on_deliver(0, warmup - 1, warmup + 5 * kD);  // late, but created before the warm-up
  m.on_deliver(0, warmup, warmup + 1000);         // created at the warm-up: counted
  m.on_deliver(0, warmup + 400'000, warmup + 401'000);
  EXPECT_EQ(m.state(0).delivered, 2u);
  EXPECT_EQ(m.late(0), 0u);
  EXPECT_EQ(m.state(0).delay_max_ps, 1000u);
  // One IAT, between the two counted packets: 400,000 ps = 0.4 nominal, below 0.5.
  EXPECT_EQ(m.iat_count(0, 0), 1u);
  uint64_t iats = 0;
  for (size_t k = 0; k < m.iat_intervals(); ++k) iats += m.iat_count(0, k);
  EXPECT_EQ(iats, 1u);
}

TEST(ConnectionMetrics, BestAndWorstAtDOver100AreRankedPerSlWithTiesToTheLowestIndex) {
  // SL 0: c0 delivers nothing (not ranked, although lowest), c1 1/2 within D/100, c2 1/1,
  // c3 2/2 (ties c2: c2 wins), c4 1/2 (ties c1: c1 is worst). SL 1: c5 delivers nothing.
  const CbrConnections conns{conn(0), conn(0), conn(0), conn(0), conn(0), conn(1)};
  ConnectionMetricsConfig one;
  one.rank_min_packets = 1;
  ConnectionMetrics m(conns, 0, one);
  ConnectionMetricsConfig two;
  two.rank_min_packets = 2;
  ConnectionMetrics m2(conns, 0, two);
  auto deliver = [&](uint32_t c, uint64_t delay) {
    static uint64_t t = 1'000'000'000;
    m2.on_deliver(c, t + kIat - delay, t + kIat);
    t += kIat;
    m.on_deliver(c, t - delay, t);
  };
  deliver(1, 10'000);
  deliver(1, 10'001);
  deliver(2, 5'000);
  deliver(3, 1);
  deliver(3, 10'000);
  deliver(4, 20'000);
  deliver(4, 9'999);
  const std::vector<SlConnectionSummary> sls = m.by_sl();
  ASSERT_EQ(sls.size(), 2u);
  EXPECT_EQ(sls[0].sl, 0);
  EXPECT_EQ(sls[0].connections, 5u);
  EXPECT_EQ(sls[0].measured_connections, 4u);
  EXPECT_EQ(sls[0].best, 2u);
  EXPECT_EQ(sls[0].best_fraction, 1.0);
  EXPECT_EQ(sls[0].worst, 1u);
  EXPECT_EQ(sls[0].worst_fraction, 0.5);
  EXPECT_EQ(sls[1].sl, 1);
  EXPECT_EQ(sls[1].best, kNoConnection);
  EXPECT_EQ(sls[1].worst, kNoConnection);
  // With two packets needed, c2 (one packet) is not ranked: c3 is best.
  const std::vector<SlConnectionSummary> sls2 = m2.by_sl();
  EXPECT_EQ(sls2[0].best, 3u);
  EXPECT_EQ(sls2[0].worst, 1u);
  EXPECT_EQ(sls2[0].measured_connections, 4u);
}

TEST(ConnectionMetrics, EachSlAggregateIsTheSumOfItsConnections) {
  CbrConnections conns;
  for (uint32_t c = 0; c < 12; ++c) conns.push_back(conn(static_cast<uint8_t>(c % 3 == 0 ? 5 : 2)));
  conns[4].deadline_ps = 3 * kD;  // deadlines and IATs differ per connection
  conns[7].interval_ps = kIat / 4;
  ConnectionMetrics m(conns, 0);
  sim::Rng rng(7, "connections");
  std::vector<uint64_t> t(conns.size(), 1'000'000'000);
  for (int i = 0; i < 2000; ++i) {
    const uint32_t c = static_cast<uint32_t>(rng.uniform() * static_cast<double>(conns.size()));
    t[c] += static_cast<uint64_t>((0.3 + 1.5 * rng.uniform()) * static_cast<double>(conns[c].interval_ps));
    m.on_deliver(c, t[c] - static_cast<uint64_t>(1.3 * rng.uniform() * static_cast<double>(conns[c].deadline_ps)), t[c]);
  }
  for (const SlConnectionSummary& a : m.by_sl()) {
    uint64_t connections = 0, packets = 0, late = 0, iat_samples = 0, max = 0;
    double delay_sum = 0;
    std::vector<uint64_t> within(7, 0), iat(9, 0);
    for (uint32_t c = 0; c < conns.size(); ++c) {
      if (conns[c].sl != a.sl) continue;
      ++connections;
      packets += m.state(c).delivered;
      late += m.late(c);
      delay_sum += static_cast<double>(m.state(c).delay_sum_ps);
      max = std::max(max, m.state(c).delay_max_ps);
      for (size_t k = 0; k < 7; ++k) within[k] += m.within(c, k);
      for (size_t k = 0; k < 9; ++k) {
        iat[k] += m.iat_count(c, k);
        iat_samples += m.iat_count(c, k);
      }
    }
    EXPECT_EQ(a.connections, connections);
    EXPECT_EQ(a.packets, packets);
    EXPECT_GT(a.packets, 0u);
    EXPECT_EQ(a.late, late);
    EXPECT_GT(a.late, 0u);  // delays up to 1.3 D
    EXPECT_EQ(a.within, within);
    EXPECT_EQ(a.iat, iat);
    EXPECT_EQ(a.iat_samples, iat_samples);
    EXPECT_EQ(a.iat_samples, a.packets - a.measured_connections);
    EXPECT_EQ(a.delay_max_ps, max);
    EXPECT_DOUBLE_EQ(a.delay_mean_ps, delay_sum / static_cast<double>(packets));
  }
}

TEST(ConnectionMetrics, PerConnectionStateStaysSmall) {
  // 32 fixed bytes, then one 32-bit count per threshold interval (8) and IAT interval (9):
  // 100 bytes, 11.5 MB for seed 002's 115k connections. A change here is a choice to make.
  static_assert(sizeof(ConnectionState) == 32, "per-connection state grew: seed 002 has ~115k connections");
  const CbrConnections conns(1000, conn(0));
  ConnectionMetrics m(conns, 0);
  EXPECT_EQ(m.bytes_per_connection(), 100u);
  // Counting packets allocates nothing more.
  for (uint64_t i = 0; i < 1000; ++i) m.on_deliver(static_cast<uint32_t>(i), i * kIat, i * kIat + 7);
  EXPECT_EQ(m.bytes_per_connection(), 100u);
}

TEST(ConnectionMetrics, TheStopRuleWaitsForEveryConnectionStillSendingToDeliverN) {
  // c0 runs to the end, c1 stops sending at 50 us, c2 at 10 us having delivered nothing.
  const CbrConnections conns{conn(0), conn(0, 50'000'000), conn(0, 10'000'000)};
  ConnectionMetricsConfig cfg;
  cfg.stop_after_packets = 2;
  const uint64_t warmup = 1'000'000;
  ConnectionMetrics m(conns, warmup, cfg);
  EXPECT_FALSE(m.stop_reached(0));
  m.on_deliver(0, warmup - 1, warmup + 10);  // created before the warm-up: not one of the N
  m.on_deliver(0, warmup, warmup + 10);
  EXPECT_FALSE(m.stop_reached(5'000'000));
  EXPECT_EQ(m.slowest_delivered(), 0u);
  m.on_deliver(0, warmup + 1000, warmup + 2000);
  m.on_deliver(1, warmup, warmup + 10);
  EXPECT_FALSE(m.stop_reached(20'000'000));  // c2 has ended; c1 has 1 of 2
  EXPECT_EQ(m.slowest_delivered(), 1u);
  // c2's packets still arriving after its end change nothing (it no longer holds the run).
  m.on_deliver(2, warmup, 20'000'000);
  m.on_deliver(2, warmup + 10, 20'000'001);
  EXPECT_FALSE(m.stop_reached(30'000'000));
  m.on_deliver(1, warmup + 10, 30'000'010);
  EXPECT_TRUE(m.stop_reached(40'000'000));
  EXPECT_EQ(m.slowest_delivered(), 2u);
}

TEST(ConnectionMetrics, TheStopRuleEndsARunWhoseConnectionsHaveAllStoppedSending) {
  const CbrConnections conns{conn(0, 10'000'000), conn(0, 20'000'000)};
  ConnectionMetricsConfig cfg;
  cfg.stop_after_packets = 100;
  ConnectionMetrics m(conns, 0, cfg);
  EXPECT_FALSE(m.stop_reached(19'999'999));
  EXPECT_TRUE(m.stop_reached(20'000'000));
}

TEST(ConnectionMetrics, WithoutConnectionsOrWithoutNTheStopRuleNeverEndsARun) {
  const CbrConnections none;
  ConnectionMetricsConfig cfg;
  cfg.stop_after_packets = 1;
  ConnectionMetrics empty(none, 0, cfg);
  EXPECT_FALSE(empty.stop_reached(1'000'000'000));
  const CbrConnections one{conn(0, 0)};
  ConnectionMetrics no_rule(one, 0);
  EXPECT_FALSE(no_rule.stop_reached(1'000'000'000));
}

TEST(ConnectionMetrics, UnusableThresholdsEdgesAndConnectionsAreRefused) {
  const CbrConnections conns{conn(0)};
  ConnectionMetricsConfig no_d;
  no_d.deadline_thresholds = {0.01, 0.5};
  EXPECT_THROW(ConnectionMetrics(conns, 0, no_d), std::invalid_argument);
  ConnectionMetricsConfig no_centre;
  no_centre.jitter_bins = {1.1, 1.5};
  EXPECT_THROW(ConnectionMetrics(conns, 0, no_centre), std::invalid_argument);
  ConnectionMetricsConfig rank;
  rank.rank_threshold = 0.03;
  EXPECT_THROW(ConnectionMetrics(conns, 0, rank), std::invalid_argument);
  CbrConnections no_deadline{conn(0)};
  no_deadline[0].deadline_ps = 0;
  EXPECT_THROW(ConnectionMetrics(no_deadline, 0), std::invalid_argument);
}

TEST(ConnectionMetrics, TheScenarioAndTheMetricsHaveTheSameDefaults) {
  const OutputConfig o;
  const ConnectionMetricsConfig c;
  EXPECT_EQ(o.deadline_thresholds, c.deadline_thresholds);
  EXPECT_EQ(o.jitter_bins, c.jitter_bins);
  EXPECT_EQ(o.rank_threshold, c.rank_threshold);
  EXPECT_EQ(o.rank_min_packets, c.rank_min_packets);
}

const std::string kBase =
    "name: t\n"
    "duration: 1ms\n"
    "topology: {generator: single_switch, hosts: 4}\n"
    "flows:\n"
    "  - {name: f1, src: h1, dst: h2}\n";

ConfigError error_of(const std::string& yaml) {
  try {
    scenario_from_yaml(yaml, "test.yaml", {});
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << yaml;
  return ConfigError("", "", 0, "", "");
}

TEST(ConnectionMetrics, TheLoaderReadsThresholdsAndEdgesAndNamesTheKeyOfABadList) {
  const Scenario s = scenario_from_yaml(
      kBase + "outputs: {deadline_thresholds: [0.01, 0.5, 1, 2], jitter_bins: [0.9, 1.1], rank_threshold: 0.5}\n",
      "test.yaml", {});
  EXPECT_EQ(s.outputs.deadline_thresholds, (std::vector<double>{0.01, 0.5, 1, 2}));
  EXPECT_EQ(s.outputs.jitter_bins, (std::vector<double>{0.9, 1.1}));
  EXPECT_EQ(s.outputs.rank_threshold, 0.5);

  ConfigError e = error_of(kBase + "outputs: {deadline_thresholds: [0.5, 0.1, 1]}\n");
  EXPECT_EQ(e.file(), "test.yaml");
  EXPECT_EQ(e.key(), "outputs.deadline_thresholds");
  EXPECT_NE(e.problem().find("strictly increasing"), std::string::npos) << e.problem();
  EXPECT_FALSE(e.fix().empty());
  e = error_of(kBase + "outputs: {deadline_thresholds: [0.01, 0.5]}\n");
  EXPECT_EQ(e.key(), "outputs.deadline_thresholds");
  EXPECT_NE(e.problem().find("deadline D"), std::string::npos) << e.problem();
  e = error_of(kBase + "outputs: {jitter_bins: [1.1, 1.5]}\n");
  EXPECT_EQ(e.key(), "outputs.jitter_bins");
  e = error_of(kBase + "outputs: {jitter_bins: [0, 1.5]}\n");
  EXPECT_EQ(e.key(), "outputs.jitter_bins[0]");
  e = error_of(kBase + "outputs: {rank_threshold: 0.03}\n");
  EXPECT_EQ(e.key(), "outputs.rank_threshold");
  e = error_of(kBase + "outputs: {deadline_thresholds: [0.01, x, 1]}\n");
  EXPECT_EQ(e.key(), "outputs.deadline_thresholds[1]");
}

TEST(ConnectionMetrics, TheRecorderJudgesPacketsOfAConnectionAndIgnoresOthers) {
  const CbrConnections conns{conn(0), conn(3)};
  metrics::Recorder rec(0, 0, false);
  rec.track_connections(conns);
  ib::Packet p;
  p.flow = ~uint32_t{0};  // a connection's packet need not belong to a flow
  p.connection = 1;
  p.created = sc_core::sc_time::from_value(1'000'000);
  p.injected = p.created;
  rec.on_deliver(p, 0, 1'000'000 + 2 * kD);
  ib::Packet other = p;
  other.connection = kNoConnection;
  rec.on_deliver(other, 0, 1'000'000 + 2 * kD);
  const ConnectionMetrics* m = rec.connection_metrics();
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->state(0).delivered, 0u);
  EXPECT_EQ(m->state(1).delivered, 1u);
  EXPECT_EQ(m->late(1), 1u);
  EXPECT_EQ(rec.delivered(), 2u);
}

}  // namespace
}  // namespace ibvp
