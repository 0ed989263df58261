#pragma once
// Runs one scenario to its end: elaborates the fabric, advances the SystemC kernel in slices
// (progress lines, the deadlock watch of platform/builder/deadlock_watch), and writes the
// results. One run per process.
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "platform/builder/deadlock_watch.h"
#include "platform/metrics/traffic_metrics.h"
#include "platform/scenario/scenario.h"

namespace ibvp {

class Fabric;

struct RunOptions {
  std::string out_dir;   // empty: write nothing
  bool progress = false; // progress lines on stderr, in simulated time with the wall rate
  // Called between kernel slices (never inside a SystemC process), so it may throw to stop
  // the run: (simulated ps, end ps, wall seconds, packet-hops so far).
  std::function<void(uint64_t, uint64_t, double, uint64_t)> on_progress;
  // Called once the fabric is elaborated, before the simulation starts: tests attach
  // sources or tracked connections here that no scenario key builds yet.
  std::function<void(Fabric&)> on_elaborated;
};

struct RunResult {
  uint64_t injected = 0;
  uint64_t delivered = 0;
  uint64_t dropped = 0;
  uint64_t in_flight = 0;  // injected - delivered - dropped, checked against the models
  uint64_t transmissions = 0;  // packet-hops: every packet crossing every link
  uint64_t events = 0;         // model actions served
  double sim_seconds = 0;
  double wall_seconds = 0;
  uint64_t peak_rss_bytes = 0;  // the process's peak resident memory (Linux VmHWM), 0 if unknown
  // Packets the run's pool ever allocated: the most in flight at once (the pool only grows).
  uint64_t packets_allocated = 0;
  bool deadlock = false;
  std::string deadlock_report;
  // Packets waiting at switch outputs that made no progress for longer than
  // deadlock_timeout when the run ended (a deadlock, or a run cut short); empty if none.
  std::optional<StuckReport> stuck;
  std::string perftest_table;  // perftest's table (perftest scenarios), as the tools print it
  std::string link_events_text;  // one line per link event (LinkEvents::text), empty without any
  // Why the run ended: "duration" (the upper bound), "connections" (seed 002's stop rule,
  // connections.stop_after_packets), "perftest" (its last size measured) or "deadlock".
  std::string stopped_by = "duration";
  // seed 002 Table 2's traffic metrics from warm-up to the end (metrics/traffic_metrics.h).
  metrics::TrafficSummary traffic;
};

// Switch outputs that can never send again (a cycle of credit waits): the message says when,
// how long they have waited, how many packets they hold, and the cycle of ports and VLs.
class DeadlockError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

RunResult run_scenario(const Scenario& scenario, const RunOptions& options);

// Shared with the split runner (platform/parallel/split_runner.h):
// every cabled port's traffic counters now, in (node, port) order;
std::vector<metrics::PortTraffic> read_port_traffic(const Fabric& fabric);
// this process's peak resident memory (Linux VmHWM), 0 if unknown;
uint64_t peak_rss_bytes();
// one progress line (a bar redrawn in place on a terminal) on stderr.
void print_progress(uint64_t now_ps, uint64_t end_ps, double wall_s, uint64_t hops, const std::string& extra = "");

}  // namespace ibvp
