#include "platform/builder/runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <unistd.h>

#include "models/sim/params.h"
#include "models/sim/sleep.h"
#include "models/sim/timed_queue.h"
#include "platform/apps/cbr_streams.h"
#include "platform/apps/flow_streams.h"
#include "platform/apps/perftest.h"
#include "platform/params/config_error.h"
#include "platform/builder/deadlock_watch.h"
#include "platform/builder/fabric.h"
#include "platform/metrics/report.h"
#include "platform/scenario/output_paths.h"

namespace ibvp {

namespace {

std::string format_time(uint64_t ps) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ps) * 1e-9);
  return buf;
}

}  // namespace

// On a terminal the bar redraws in place; in a log (CI, a pipe) each report is one line.
void print_progress(uint64_t now_ps, uint64_t end_ps, double wall_s, uint64_t hops, const std::string& extra) {
  const double frac = end_ps ? static_cast<double>(now_ps) / static_cast<double>(end_ps) : 1.0;
  const int width = 30;
  const int filled = static_cast<int>(frac * width);
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(width, '.');
  const double rate = wall_s > 0 ? static_cast<double>(now_ps) * 1e-9 / wall_s : 0.0;
  static const bool tty = isatty(fileno(stderr));
  std::fprintf(stderr, "%s[%s] %5.1f%%  sim %s  %.2f sim-ms/s  %.2f M packet-hops/s%s%s", tty ? "\r" : "", bar.c_str(),
               frac * 100.0, format_time(now_ps).c_str(), rate,
               wall_s > 0 ? static_cast<double>(hops) / wall_s * 1e-6 : 0.0, extra.c_str(), tty ? "   " : "\n");
  std::fflush(stderr);
}

// Peak resident set of this process since exec (Linux's VmHWM). Not getrusage: its maxrss
// includes the parent's pages a forked child started with, which would hide a small run
// behind a large Python parent.
uint64_t peak_rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  unsigned long long kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmHWM: %llu kB", &kb) == 1) break;
  std::fclose(f);
  return kb * 1024;
}

// Every cabled port's counters now, in (node, port) order (metrics/traffic_metrics.h).
std::vector<metrics::PortTraffic> read_port_traffic(const Fabric& fabric) {
  const topo::Topology& t = fabric.scenario().topology;
  std::vector<metrics::PortTraffic> out;
  for (uint32_t n = 0; n < t.nodes.size(); ++n)
    for (uint16_t p = 1; p <= t.nodes[n].num_ports; ++p) {
      if (t.link_at(n, p) < 0) continue;
      const link::PortCounters& c = fabric.port_counters(n, p);
      out.push_back({t.nodes[n].kind == topo::NodeKind::endpoint, fabric.port_rate_bytes_per_s(n, p), c.bytes_tx,
                     c.bytes_rx, c.busy_ps});
    }
  return out;
}


RunResult run_scenario(const Scenario& scenario, const RunOptions& options) {
  if (!options.out_dir.empty()) {
    std::filesystem::create_directories(options.out_dir);
    // Output paths the scenario names are checked against what is on disk now, before
    // anything is elaborated or simulated (platform/scenario/output_paths.h).
    prepare_output_files(scenario, options.out_dir);
  }
  Fabric fabric(scenario, options.out_dir);
  if (options.on_elaborated) options.on_elaborated(fabric);
  const metrics::Recorder& rec = fabric.recorder();
  // seed 002 Sec. 4.2's stop rule, when the scenario asks for it and connections are tracked.
  metrics::ConnectionMetrics* connections = fabric.recorder().connection_metrics();
  const bool stop_rule = connections && connections->config().stop_after_packets > 0;
  // Table 2's traffic window opens at the warm-up: nothing has run yet, so these are zeros
  // when there is none.
  uint64_t warmup_ps = scenario.warmup.value();
  std::vector<metrics::PortTraffic> ports_at_warmup = read_port_traffic(fabric);
  bool warm = warmup_ps == 0;
  // SystemC's own elaboration (port binding, end_of_elaboration, time-zero activations) runs
  // here, so the wall clock below measures simulation: sim-ms/s and packet-hops/s are rates
  // of the model, not of start-up.
  sc_core::sc_start(sc_core::SC_ZERO_TIME);

  const auto wall_start = std::chrono::steady_clock::now();
  auto wall = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  };
  uint64_t end_ps = scenario.duration.value();
  // In band, the run's clock for traffic starts when the subnet is up: until then the end is
  // open (the SM ends by itself: every SMP is answered or given up after its retries).
  sm::InbandSm* smgr = fabric.subnet_manager();
  bool sm_pending = smgr != nullptr;
  if (sm_pending) {
    smgr->pause_when_done();
    end_ps = ~uint64_t{0} / 2;
    warm = false;
    warmup_ps = end_ps;
  }
  const uint64_t watch_ps = std::max<uint64_t>(scenario.deadlock_timeout.value(), 1);
  uint64_t slice_ps = watch_ps;
  // Progress every progress_interval of simulated time, or every 2 % of the run by default.
  const uint64_t progress_ps = scenario.outputs.progress_interval.value() > 0
                                   ? scenario.outputs.progress_interval.value()
                                   : std::max<uint64_t>(scenario.duration.value() / 50, 1);
  if (options.progress || options.on_progress) slice_ps = std::min(slice_ps, progress_ps);
  uint64_t next_progress_ps = progress_ps;

  RunResult result;
  DeadlockWatch watch(fabric, watch_ps);
  const apps::Perftest* perftest = fabric.perftest();
  bool on_grid = true;
  while (sc_core::sc_time_stamp().value() < end_ps) {
    // A perftest run ends when its last size is measured (looked at on the grid only).
    if (on_grid && perftest && perftest->finished()) break;
    const uint64_t now = sc_core::sc_time_stamp().value();
    // Slices end on a fixed grid (multiples of slice_ps, and the end), so the watch, the
    // progress lines and the stop rule look at the same simulated times in every run.
    uint64_t step = std::min(slice_ps - now % slice_ps, end_ps - now);
    // One extra slice end at the warm-up, to read the port counters there; the grid is
    // unchanged and nothing else looks at that moment.
    const bool to_warmup = !warm && now + step > warmup_ps;
    if (to_warmup) step = warmup_ps - now;
    sim::set_run_end(now + step);  // the HCA cores run ahead no further (models/sim/sleep.h)
    sc_core::sc_start(sc_core::sc_time::from_value(step));
    const uint64_t t = sc_core::sc_time_stamp().value();
    if (sm_pending && smgr->done()) {
      sm_pending = false;
      if (!smgr->report().up) break;  // reported below, after the results are written
      end_ps = smgr->report().up_ps + scenario.duration.value();
      warmup_ps = smgr->report().up_ps + scenario.warmup.value();
      fabric.recorder().set_warmup_ps(warmup_ps);
      // The SM paused the kernel at the moment it was up (sc_pause), so a warm-up of 0 opens
      // the traffic window exactly there.
      warm = t >= warmup_ps;
      if (warm) ports_at_warmup = read_port_traffic(fabric);
      continue;
    }
    if (!warm && t >= warmup_ps) {
      ports_at_warmup = read_port_traffic(fabric);
      warm = true;
    }
    on_grid = !to_warmup;
    if (to_warmup) continue;
    if (t >= next_progress_ps || t >= end_ps) {
      std::string extra;
      if (stop_rule)
        extra = "  slowest connection " + std::to_string(connections->slowest_delivered()) + "/" +
                std::to_string(connections->config().stop_after_packets) + " packets";
      if (options.progress) print_progress(t, end_ps, wall(), rec.transmissions(), extra);
      if (options.on_progress) options.on_progress(t, end_ps, wall(), rec.transmissions());
      next_progress_ps = t + progress_ps;
    }
    if (std::optional<std::string> report = watch.check(t)) {
      result.deadlock = true;
      result.deadlock_report = std::move(*report);
      result.stopped_by = "deadlock";
      break;
    }
    // seed 002 Sec. 4.2: the steady state lasts until every connection still sending has
    // received N packets; `duration` stays the upper bound.
    if (stop_rule && connections->stop_reached(t)) {
      result.stopped_by = "connections";
      break;
    }
  }
  if (perftest && perftest->finished() && !result.deadlock) result.stopped_by = "perftest";
  if (options.progress && isatty(fileno(stderr))) std::fprintf(stderr, "\n");
  fabric.finish();

  result.injected = rec.injected();
  result.delivered = rec.delivered();
  result.dropped = rec.dropped();
  result.in_flight = fabric.packets_in_flight();
  result.transmissions = rec.transmissions();
  result.stuck = watch.stuck(sc_core::sc_time_stamp().value());
  result.events = sim::TimedQueue::served_total();
  result.sim_seconds = static_cast<double>(sc_core::sc_time_stamp().value()) / 1e12;
  result.wall_seconds = wall();
  result.peak_rss_bytes = peak_rss_bytes();
  result.packets_allocated = fabric.packet_pool().allocated();
  {
    const uint64_t end = sc_core::sc_time_stamp().value();
    // A run that ends before its warm-up has no measured span.
    result.traffic = metrics::summarize_traffic(ports_at_warmup, read_port_traffic(fabric), warm ? end - warmup_ps : 0);
  }
  if (perftest) result.perftest_table = perftest->table();
  if (const LinkEvents* le = fabric.link_events()) result.link_events_text = LinkEvents::text(le->report());
  if (!options.out_dir.empty()) metrics::write_results(fabric, result, options.out_dir);
  if (result.deadlock) throw DeadlockError(result.deadlock_report);
  if (smgr && !smgr->report().up)
    throw std::runtime_error("the in-band subnet manager did not bring the subnet up: " + smgr->report().error);
  if (const apps::FlowStreams* fs = fabric.flow_streams(); fs && !fs->error().empty())
    throw std::runtime_error("flows on HCA hosts stopped: " + fs->error());
  if (const apps::CbrStreams* cs = fabric.cbr_streams(); cs && !cs->error().empty())
    throw std::runtime_error("CBR connections on HCA hosts stopped: " + cs->error());
  if (perftest && perftest->unsupported())
    throw ConfigError(scenario.source, "perftest.test", 0, perftest->error(),
                      "use a firmware image (hca.firmware_image) that implements it, or another test");
  if (perftest && !perftest->error().empty())
    throw std::runtime_error("perftest stopped: " + perftest->error());
  if (perftest && !perftest->finished())
    throw ConfigError(scenario.source, "duration", 0,
                      "the perftest had measured " + std::to_string(perftest->rows().size()) + " of " +
                          std::to_string(perftest->config().sizes.size()) + " sizes when the run ended at duration " +
                          sim::format_time(scenario.duration),
                      "raise duration or lower perftest.iterations");
  return result;
}

}  // namespace ibvp
