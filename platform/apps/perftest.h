#pragma once
// Perftest-style applications (linux-rdma/perftest: ib_send_bw, ib_write_bw, ib_read_bw,
// ib_send_lat, ib_write_lat) as a client and a server program running in the host CPUs'
// program threads of two HCA hosts, through the verbs driver. The out-of-band exchange
// perftest does over TCP (QPN, LID, buffer address, rkey; "ready" between sizes) is a
// zero-time rendezvous here, so it adds nothing to a measurement. docs/perftest.md.
#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/driver/host_node.h"
#include "platform/driver/verbs.h"
#include "platform/scenario/scenario.h"

namespace ibvp::apps {

// One row of perftest's table: bandwidth tests fill bw_peak_MBps and bw_avg_MBps (perftest's
// MB: 2^20 bytes, MiB) and msg_rate_Mpps; latency tests the times in microseconds (half round
// trips).
struct PerftestRow {
  uint64_t bytes = 0;
  uint32_t iterations = 0;
  double bw_peak_MBps = 0, bw_avg_MBps = 0, msg_rate_Mpps = 0;
  double t_min_us = 0, t_max_us = 0, t_typical_us = 0, t_avg_us = 0, t_stdev_us = 0, p99_us = 0, p999_us = 0;
};

class Perftest {
 public:
  // Registers the client's and the server's programs on the hosts' CPUs (before sc_start).
  Perftest(const PerftestConfig& cfg, driver::HostNode& client, driver::HostNode& server);

  const PerftestConfig& config() const { return cfg_; }
  // Every size measured, or the test stopped on an error.
  bool finished() const { return finished_; }
  // Why the test stopped early ("" if it did not): a completion in error, or an operation the
  // firmware image does not implement.
  const std::string& error() const { return error_; }
  // The test failed because the firmware does not implement its operation.
  bool unsupported() const { return unsupported_; }
  const std::vector<PerftestRow>& rows() const { return rows_; }
  // Send WQEs the client's (server = false) or the server's program posted and has not seen
  // complete: 0 on both sides once a test has run, as perftest waits for its last send's
  // completion on both sides (run_iter_lat_send / run_iter_lat_write signal the last send
  // and poll the send CQ until it is in).
  uint32_t sends_outstanding(bool server) const;

  // Where each host's driver area and buffer go (verbs::HostMemoryPlan); plan(cfg).end() is
  // the host memory the test needs, which the scenario loader checks against
  // hca.host_memory.size_bytes before the run.
  static verbs::HostMemoryPlan plan(const PerftestConfig& cfg);

  // perftest's report, as the tools print it: header block, addresses, results table
  // (perftest_report.h).
  std::string table() const;
  // The summary.json section: {"test": ..., "rows": [...]}.
  nlohmann::ordered_json json() const;

 private:
  struct Side {
    driver::HostNode* host = nullptr;
    std::unique_ptr<verbs::Context> ctx;
    verbs::ProtectionDomain* pd = nullptr;
    verbs::MemoryRegion* mr = nullptr;
    verbs::CompletionQueue* send_cq = nullptr;
    verbs::CompletionQueue* recv_cq = nullptr;
    verbs::QueuePair* qp = nullptr;      // qps[0]
    std::vector<verbs::QueuePair*> qps;  // perftest -q: one per QP pair, qps[i] to the peer's qps[i]
    std::vector<verbs::AddressHandle*> ahs;
    verbs::AddressHandle* ah = nullptr;  // UD: to the peer (ahs[0])
    uint16_t lid = 0;
  };
  static constexpr uint64_t kSpare = 4096;  // after the largest message: the write_lat probe target
  static constexpr uint32_t kQkey = 0x11111111;

  void client_program();
  void server_program();
  bool setup(Side& s);         // device, PD, MR, CQs, QP; false on failure (error_ set)
  bool connect(Side& s, const Side& peer);
  bool connect_qp(Side& s, verbs::QueuePair* qp, const verbs::QueuePair* peer_qp);
  void rendezvous(int side);   // both programs reach the same point (perftest's TCP sync)
  bool post_recvs(Side& s, uint64_t bytes, uint32_t count);
  bool check(const verbs::Wc& wc, const char* what, uint64_t bytes);
  void fail(const std::string& why);
  uint32_t inline_flag(verbs::WrOpcode op, uint64_t bytes) const;  // SEND_INLINE or 0

  void client_bw(uint64_t bytes);
  void server_bw(uint64_t bytes);
  void client_send_lat(uint64_t bytes);
  void server_send_lat(uint64_t bytes);
  void client_write_lat(uint64_t bytes);
  void server_write_lat(uint64_t bytes);
  bool probe_rdma_write(Side& s, const Side& peer);
  void reap_sends(Side& s, bool wait);
  void drain_sends(Side& s);  // polls until every send posted has completed
  void latency_row(uint64_t bytes, std::vector<uint64_t>& half_rtt_ps);

  PerftestConfig cfg_;
  // Host addresses of the driver's area and the application buffer on both hosts (plan).
  const verbs::HostMemoryPlan plan_;
  const uint64_t buffer_;
  uint64_t max_bytes_ = 0;
  Side client_, server_;
  uint64_t arrived_[2] = {0, 0};
  sc_core::sc_event rendezvous_event_;
  bool finished_ = false;
  bool unsupported_ = false;
  std::string error_;
  std::vector<PerftestRow> rows_;
};

}  // namespace ibvp::apps
