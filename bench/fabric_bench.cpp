// ibvp-bench: fabric-only speed on the random irregular networks of seed 001 (8-port
// switches, 4 ports to switches, 4 to hosts; 16, 32, 64 switches), uniform Poisson traffic
// at 30 % and 70 % load, 256-byte payloads, 1X SDR links, up*/down* routing.
//
// Each run is a child process (one SystemC kernel per process); a case's figure is the
// median of its runs. Prints one line per case:
//   BENCH case=<name> packet_hops_per_s=<N> events_per_s=<N> wall_s=<N> peak_rss_mb=<N>
//
//   ibvp-bench [--runs N] [--sim-ms T] [--case NAME]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <systemc>
#include <vector>

#include "platform/builder/runner.h"
#include "platform/topology/generators.h"

namespace {

struct Case {
  std::string name;
  uint32_t switches;
  double load;
};

struct Sample {
  double hops_per_s, events_per_s, wall_s, rss_mb;
};

ibvp::Scenario scenario_for(const Case& c, double sim_ms) {
  ibvp::Scenario s;
  s.name = c.name;
  s.source = "bench:" + c.name;
  s.topology = ibvp::topo::random_irregular(c.switches, 1);
  s.seed = 1;
  // Seed 001 routes these fabrics with up*/down*: min-hop tables on an irregular fabric have
  // cyclic channel dependencies and deadlock under load (the runner detects and reports it).
  s.routing = "updn";
  s.duration = sc_core::sc_time(sim_ms, sc_core::SC_MS);
  s.switch_cfg.vl_buffer_bytes = 4 * 320;
  s.endpoint_cfg.vl_buffer_bytes = 4 * 320;
  s.endpoint_cfg.sl2vl = ibvp::sw::SwitchConfig::default_sl2vl(1);
  s.traffic.enabled = true;
  s.traffic.generator = ibvp::GeneratorKind::poisson;
  s.traffic.pattern = ibvp::DestinationPattern::uniform;
  s.traffic.load = c.load;
  s.traffic.payload_bytes = 256;
  s.outputs.packets_csv = false;
  s.outputs.rate_window = sc_core::SC_ZERO_TIME;
  return s;
}

// Runs one case in a child; the child reports its figures through a pipe.
bool run_once(const Case& c, double sim_ms, Sample& out) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    try {
      const ibvp::RunResult r = ibvp::run_scenario(scenario_for(c, sim_ms), ibvp::RunOptions{});
      const double v[3] = {static_cast<double>(r.transmissions) / r.wall_seconds,
                           static_cast<double>(r.events) / r.wall_seconds, r.wall_seconds};
      if (write(fds[1], v, sizeof v) != static_cast<ssize_t>(sizeof v)) std::_Exit(1);
      std::_Exit(0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ibvp-bench: %s: %s\n", c.name.c_str(), e.what());
      std::_Exit(1);
    }
  }
  close(fds[1]);
  double v[3] = {0, 0, 0};
  const bool got = read(fds[0], v, sizeof v) == static_cast<ssize_t>(sizeof v);
  close(fds[0]);
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
  out = Sample{v[0], v[1], v[2], static_cast<double>(ru.ru_maxrss) / 1024.0};
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int sc_main(int argc, char** argv) {
  int runs = 5;
  double sim_ms = 20.0;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--sim-ms") && i + 1 < argc) sim_ms = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--case") && i + 1 < argc) only = argv[++i];
    else {
      std::fprintf(stderr, "usage: ibvp-bench [--runs N] [--sim-ms T] [--case NAME]\n");
      return 2;
    }
  }
  std::vector<Case> cases;
  for (uint32_t n : {16u, 32u, 64u})
    for (double load : {0.3, 0.7})
      cases.push_back({"irregular" + std::to_string(n) + "_load" + std::to_string(static_cast<int>(load * 100)), n, load});
  int failures = 0;
  for (const Case& c : cases) {
    if (!only.empty() && c.name != only) continue;
    std::vector<double> hops, events, wall, rss;
    for (int r = 0; r < runs; ++r) {
      Sample s;
      if (!run_once(c, sim_ms, s)) {
        ++failures;
        break;
      }
      hops.push_back(s.hops_per_s);
      events.push_back(s.events_per_s);
      wall.push_back(s.wall_s);
      rss.push_back(s.rss_mb);
    }
    if (hops.empty()) continue;
    std::printf("BENCH case=%s packet_hops_per_s=%.0f events_per_s=%.0f wall_s=%.3f peak_rss_mb=%.1f\n", c.name.c_str(),
                median(hops), median(events), median(wall), median(rss));
    std::fflush(stdout);
  }
  return failures ? 1 : 0;
}

// Ahead of libsystemc's main: silence the banner, then run sc_main as the library would.
int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
