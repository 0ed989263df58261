#pragma once
// perftest's report, as linux-rdma/perftest prints it (src/perftest_parameters.c at commit
// 00b55b6: ctx_print_test_info, print_report_bw, print_report_lat; src/perftest_communication.c:
// ctx_print_pingpong_data): the client's header block, the local and remote addresses, and
// the results table with perftest's column heads and row formats (bandwidth in MiB/sec,
// perftest's "MB", with two decimals; latencies in usec with two). ibvp-sim prints it,
// `ibvp run` prints the same text (perftest.txt in the output directory), so a run's output
// can be set beside a real perftest's line by line (docs/perftest.md).
#include <cstdint>
#include <string>
#include <vector>

#include "platform/scenario/scenario.h"

namespace ibvp::apps {

struct PerftestRow;

// What ctx_print_pingpong_data prints of one side: " local address: LID ... QPN ... PSN ...".
struct PerftestAddress {
  uint16_t lid = 0;
  uint32_t qpn = 0, psn = 0, rkey = 0, out_reads = 0;
  uint64_t vaddr = 0;
};

// The header block's settings, as the client of the test sees them.
struct PerftestSetup {
  PerftestConfig cfg;
  std::string device;           // "Device" (perftest: the ibv device name)
  uint32_t tx_depth = 0;        // the send queue depth the test used (latency tests: 1)
  uint32_t cq_mod = 0;          // the moderation the test used (bandwidth tests)
  uint32_t cqe_poll = 16;       // completions taken per poll
  uint32_t max_inline_bytes = 0;
  PerftestAddress local, remote;
  // perftest -q: the other QPs' addresses, printed after the first QP's local and remote line.
  std::vector<PerftestAddress> more_local, more_remote;
};

// print_report_bw's peak: the smallest time per message over every run of consecutive
// messages i..j that ends at a signaled one, (tcompleted[j] - tposted[i]) / (j - i + 1) in
// integer ps as perftest divides cycles. perftest tries every pair, O(n^2 / cq_mod); this
// finds the same minimum in O(n log n) (the tangent from (j, tcompleted[j]) to the upper
// hull of the points (i - 1, tposted[i])), so a million iterations cost no more than a run.
// tcompleted[j] is read only where j + 1 is a multiple of cq_mod, and at j = n - 1.
uint64_t perftest_peak_delta_ps(const std::vector<uint64_t>& tposted, const std::vector<uint64_t>& tcompleted,
                                uint32_t cq_mod);
// The same by perftest's own double loop, for tests.
uint64_t perftest_peak_delta_ps_by_pairs(const std::vector<uint64_t>& tposted,
                                         const std::vector<uint64_t>& tcompleted, uint32_t cq_mod);

// The whole report: header block, addresses, results table.
std::string perftest_report(const PerftestSetup& setup, const std::vector<PerftestRow>& rows);

}  // namespace ibvp::apps
