// perftest's report as linux-rdma/perftest prints it (platform/apps/perftest_report.h): the
// peak bandwidth of print_report_bw and the formats of its header block and tables.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "platform/apps/perftest.h"
#include "platform/apps/perftest_report.h"

using namespace ibvp;
using namespace ibvp::apps;

namespace {

// A run of n messages: posts spaced by a random gap, completions later by a random time that
// never runs backwards; what a bandwidth test's clock sees.
void random_run(std::mt19937_64& rng, size_t n, std::vector<uint64_t>& tp, std::vector<uint64_t>& tc) {
  tp.assign(n, 0);
  tc.assign(n, 0);
  uint64_t t = 1000, done = 0;
  for (size_t i = 0; i < n; ++i) {
    t += rng() % 5000;
    tp[i] = t;
    done = std::max(done, t) + 1 + rng() % 20000;
    tc[i] = done;
  }
}

PerftestSetup setup_of(PerftestKind test) {
  PerftestSetup s;
  s.cfg.test = test;
  s.cfg.mtu = 4096;
  s.device = "h1/hca";
  s.tx_depth = perftest_is_bw(test) ? 128 : 1;
  s.cq_mod = 100;
  s.local = {1, 0x48, 0, 0x1234, 16, 0x10000};
  s.remote = {2, 0x49, 0, 0x5678, 16, 0x10000};
  return s;
}

std::string line_starting(const std::string& text, const std::string& start) {
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    if (line.rfind(start, 0) == 0) return line;
    at = end == std::string::npos ? text.size() : end + 1;
  }
  return "";
}

}  // namespace

TEST(PerftestReport, PeakTimePerMessageEqualsPerftestsLoopOverEveryPairOfMessages) {
  std::mt19937_64 rng(15);
  std::vector<uint64_t> tp, tc;
  for (size_t n : {1, 2, 3, 7, 64, 100, 101, 257}) {
    for (uint32_t cq_mod : {1u, 2u, 5u, 16u, 100u, 300u}) {
      for (int round = 0; round < 4; ++round) {
        random_run(rng, n, tp, tc);
        EXPECT_EQ(perftest_peak_delta_ps(tp, tc, cq_mod), perftest_peak_delta_ps_by_pairs(tp, tc, cq_mod))
            << "n " << n << " cq_mod " << cq_mod << " round " << round;
      }
    }
  }
}

TEST(PerftestReport, PeakOfAnEvenlySpacedRunIsItsSpacing) {
  // Messages posted every 1000 ps, each done 5000 ps later: a run i..j takes
  // 5000 + 1000 (j - i) over j - i + 1 messages, least for the longest run.
  const size_t n = 1000;
  std::vector<uint64_t> tp(n), tc(n);
  for (size_t i = 0; i < n; ++i) tp[i] = 1000 * i, tc[i] = 1000 * i + 5000;
  EXPECT_EQ(perftest_peak_delta_ps(tp, tc, 100), (5000 + 1000 * (n - 1)) / n);
}

TEST(PerftestReport, BandwidthTableHasPerftestsHeadsAndRowsInMiBPerSecondWithTwoDecimals) {
  PerftestRow r;
  r.bytes = 65536;
  r.iterations = 5000;
  r.bw_peak_MBps = 11533.871;
  r.bw_avg_MBps = 11532.904;
  r.msg_rate_Mpps = 0.1845264;
  const std::string text = perftest_report(setup_of(PerftestKind::write_bw), {r});
  EXPECT_NE(text.find("                    RDMA_Write BW Test\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"),
            std::string::npos)
      << text;
  // perftest's REPORT_FMT, tabs and all.
  EXPECT_EQ(line_starting(text, " 65536"), " 65536" + std::string(6, ' ') + "5000" + std::string(13, ' ') +
                                               "11533.87" + std::string(12, ' ') + "11532.90\t\t     0.184526");
  EXPECT_EQ(line_starting(text, " TX depth"), " TX depth        : 128");
  EXPECT_EQ(line_starting(text, " CQ Moderation"), " CQ Moderation   : 100");
  EXPECT_EQ(line_starting(text, " Mtu"), " Mtu             : 4096[B]");
  EXPECT_EQ(line_starting(text, " local address"),
            " local address: LID 0x01 QPN 0x0048 PSN 000000 RKey 0x001234 VAddr 0x00000000010000");
  EXPECT_EQ(line_starting(text, " remote address"),
            " remote address: LID 0x02 QPN 0x0049 PSN 000000 RKey 0x005678 VAddr 0x00000000010000");
}

TEST(PerftestReport, LatencyTableHasPerftestsHeadsAndRowsInMicrosecondsWithTwoDecimals) {
  PerftestRow r;
  r.bytes = 2;
  r.iterations = 1000;
  r.t_min_us = 0.8312;
  r.t_max_us = 3.4;
  r.t_typical_us = 0.846;
  r.t_avg_us = 0.85;
  r.t_stdev_us = 0.031;
  r.p99_us = 0.99;
  r.p999_us = 3.4;
  const std::string text = perftest_report(setup_of(PerftestKind::send_lat), {r});
  EXPECT_NE(text.find("                    Send Latency Test\n"), std::string::npos) << text;
  EXPECT_EQ(line_starting(text, " #bytes"),
            " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% "
            "percentile[usec]   99.9% percentile[usec] ");
  EXPECT_EQ(line_starting(text, " 2 "),
            " 2" + std::string(6, ' ') + " 1000" + std::string(10, ' ') + "0.83" + std::string(11, ' ') + "3.40" +
                std::string(9, ' ') + "0.85" + std::string(5, ' ') + "\t" + std::string(7, ' ') + "0.85" +
                std::string(8, ' ') + "\t0.03   \t\t0.99    \t\t3.40   ");
  // Latency tests have no CQ moderation, and send tests print the inline size, not reads.
  EXPECT_EQ(line_starting(text, " CQ Moderation"), "");
  EXPECT_EQ(line_starting(text, " Max inline data"), " Max inline data : 0[B]");
  EXPECT_EQ(line_starting(text, " local address"), " local address: LID 0x01 QPN 0x0048 PSN 000000");
}

TEST(PerftestReport, ReadTestsReportOutstandingReadsInsteadOfInlineData) {
  const std::string text = perftest_report(setup_of(PerftestKind::read_bw), {});
  EXPECT_EQ(line_starting(text, " Outstand reads"), " Outstand reads  : 16");
  EXPECT_EQ(line_starting(text, " Max inline data"), "");
  EXPECT_EQ(line_starting(text, " local address"),
            " local address: LID 0x01 QPN 0x0048 PSN 000000 OUT 0x10 RKey 0x001234 VAddr 0x00000000010000");
}
