// ibvp-sim: runs one scenario and writes its results.
//
//   ibvp-sim SCENARIO.yaml [--set key=value ...] [--out DIR] [--quiet]
//   ibvp-sim --schema FILE --reference FILE     (JSON Schema and parameter reference)
//   ibvp-sim SCENARIO.yaml --serve-umad [--serve-for SECONDS] [--umad-host NODE]
//            [--umad-socket NAME | --umad-port PORT] [--umad-timeout TIME]
//       serves ibsim's protocol to OpenSM and infiniband-diags run under libumad2sim.so
//       (platform/umad/serve.h, docs/management.md); prints the environment they need.
//
// The run owns DIR (default out/<scenario name>): a new directory, an empty one or one an
// earlier run wrote, cleared before the scenario is read (platform/builder/output_dir.h).
//
// Exit status: 0 done, 2 bad input (the message names file, key and fix), 3 deadlock
// detected, 4 firmware fault (the HCA's firmware image crashed or hung; the message names
// the image, the event and hca.firmware_image: models/hca/firmware_guard.h), 1 anything else.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <systemc>
#include <vector>

#include "platform/builder/output_dir.h"
#include "platform/builder/runner.h"
#include "platform/params/config_error.h"
#include "platform/params/validate.h"
#include "platform/parallel/partition.h"
#include "platform/parallel/split_check.h"
#include "platform/parallel/split_runner.h"
#ifdef IBVP_HAVE_MPI
#include "platform/parallel/mpi_transport.h"
#endif
#include "platform/scenario/scenario_loader.h"
#include "platform/umad/serve.h"
#include "models/sim/params.h"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: ibvp-sim SCENARIO.yaml [--set key=value ...] [--out DIR (default out/<name>)] [--quiet]\n"
               "       ibvp-sim SCENARIO.yaml --serve-umad [--serve-for SECONDS] [--umad-host NODE]\n"
               "                [--umad-socket NAME | --umad-port PORT] [--umad-timeout TIME] [--set ...] [--out DIR]\n"
               "       ibvp-sim --schema FILE --reference FILE\n");
  return 2;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!f) {
    std::fprintf(stderr, "ibvp-sim: %s: cannot open for writing\n", path.c_str());
    return false;
  }
  f << text;
  return true;
}


#ifdef IBVP_HAVE_MPI
// mpirun -n N ibvp-sim ... (docs/parallel.md): the scenario passed check_splittable. Exit
// status as one process's; a refusal found only now (the launcher and MPI disagree on the
// rank count, the output directory cannot be claimed) is reported by rank 0 with status 2.
int run_as_ranks(const ibvp::Scenario& scenario, const ibvp::parallel::Partition& part,
              const ibvp::parallel::Launch& launch, const std::string& scenario_path,
              const std::vector<std::string>& overrides, std::string out_dir, bool quiet) {
  MPI_Init(nullptr, nullptr);
  ibvp::parallel::MpiTransport tr;
  auto finish = [](int status) {
    MPI_Finalize();
    return status;
  };
  if (tr.ranks() != launch.ranks || tr.rank() != launch.rank) {
    if (launch.rank == 0)
      std::fprintf(stderr, "ibvp-sim: the launcher's environment names %u processes but MPI started %u; start "
                           "ibvp-sim with the MPI it was built with (mpirun from libopenmpi-dev, or srun --mpi=pmix)\n",
                   launch.ranks, tr.ranks());
    return finish(2);
  }
  uint64_t claimed = 1;
  if (tr.rank() == 0) {
    try {
      if (out_dir.empty()) out_dir = "out/" + ibvp::scenario_file_name(scenario_path, overrides);
      ibvp::claim_output_dir(out_dir, ibvp::OutputDirKind::run, {scenario_path});
    } catch (const ibvp::ConfigError& e) {
      std::fprintf(stderr, "ibvp-sim: %s\n", e.what());
      claimed = 0;
    }
  }
  if (tr.min_all(claimed) == 0) return finish(2);
  ibvp::RunOptions options;
  options.out_dir = out_dir;
  options.progress = !quiet;
  try {
    const ibvp::RunResult r = ibvp::parallel::run_split(scenario, options, part, tr);
    if (tr.rank() == 0 && !quiet)
      std::fprintf(stderr,
                   "ibvp-sim: %s: %.3f ms simulated in %.2f s on %u processes; packets injected %llu, delivered %llu, "
                   "dropped %llu, in flight %llu; results in %s/\n",
                   scenario.name.c_str(), r.sim_seconds * 1e3, r.wall_seconds, tr.ranks(),
                   (unsigned long long)r.injected, (unsigned long long)r.delivered, (unsigned long long)r.dropped,
                   (unsigned long long)r.in_flight, out_dir.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ibvp-sim: rank %u: %s\n", tr.rank(), e.what());
    tr.abort(1);
  }
  return finish(0);
}
#endif

}  // namespace

int sc_main(int argc, char** argv) {
  std::string scenario_path, out_dir, schema_path, reference_path;
  std::vector<std::string> overrides;
  bool quiet = false;
  bool serve_umad = false;
  ibvp::umad::ServeOptions serve;
  // A bad serving option is refused like a bad key: what is wrong and how to fix it.
  auto bad_option = [](const std::string& option, const std::string& text, const char* fix) {
    std::fprintf(stderr, "ibvp-sim: command line: %s: '%s' is not valid; %s\n", option.c_str(), text.c_str(), fix);
    std::exit(2);
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* what) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ibvp-sim: %s needs a value\n", what);
        std::exit(usage());
      }
      return argv[++i];
    };
    if (a == "--set") overrides.push_back(value("--set"));
    else if (a == "--out") out_dir = value("--out");
    else if (a == "--schema") schema_path = value("--schema");
    else if (a == "--reference") reference_path = value("--reference");
    else if (a == "--quiet") quiet = true;
    else if (a == "--serve-umad") serve_umad = true;
    else if (a == "--serve-for") {
      const std::string v = value("--serve-for");
      char* end = nullptr;
      serve.serve_for_s = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end || !(serve.serve_for_s > 0) || serve.serve_for_s > 1e7)
        bad_option(a, v, "give the wall-clock seconds to serve, a number above 0");
    } else if (a == "--umad-host") serve.host = value("--umad-host");
    else if (a == "--umad-socket") {
      serve.server.socket_name = value("--umad-socket");
      // libumad2sim appends ":ctl<pid>" and the abstract namespace holds 107 bytes.
      if (serve.server.socket_name.empty() || serve.server.socket_name.size() > 64)
        bad_option(a, serve.server.socket_name, "give a name of 1 to 64 characters (clients set IBSIM_SOCKNAME to it)");
    } else if (a == "--umad-port") {
      const std::string v = value("--umad-port");
      char* end = nullptr;
      const long port = std::strtol(v.c_str(), &end, 10);
      if (end == v.c_str() || *end || port < 1 || port > 65535 - static_cast<long>(ibvp::umad::kMaxClients))
        bad_option(a, v, "give a UDP port from 1 to 65525 (the server takes it and the next 10)");
      serve.server.udp_port = static_cast<uint16_t>(port);
    } else if (a == "--umad-timeout") {
      const std::string v = value("--umad-timeout");
      sc_core::sc_time t;
      std::string problem;
      if (!ibvp::sim::parse_time(v, t, problem) || t == sc_core::SC_ZERO_TIME)
        bad_option(a, v, "give a simulated time above 0 with its unit, e.g. 1ms or 200us");
      serve.response_timeout_ps = t.value();
    }
    else if (a == "-h" || a == "--help") return usage(), 0;
    else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "ibvp-sim: unknown option %s\n", a.c_str());
      return usage();
    } else if (scenario_path.empty()) scenario_path = a;
    else return usage();
  }
  if (!schema_path.empty() || !reference_path.empty()) {
    bool ok = true;
    if (!schema_path.empty()) ok &= write_file(schema_path, ibvp::scenario_json_schema());
    if (!reference_path.empty()) ok &= write_file(reference_path, ibvp::parameter_reference_markdown());
    return ok ? 0 : 1;
  }
  if (scenario_path.empty()) return usage();
  // A served fabric needs no traffic of its own: the management software is its workload.
  if (serve_umad) overrides.insert(overrides.begin(), "allow_idle=true");
  if (!serve_umad && (serve.serve_for_s > 0 || !serve.host.empty() || serve.server.udp_port ||
                      serve.server.socket_name != "sim")) {
    std::fprintf(stderr, "ibvp-sim: command line: --serve-for and --umad-* options need --serve-umad\n");
    return 2;
  }
  // Started by mpirun or srun among several processes (docs/parallel.md): every rank reads
  // and checks the scenario before any process touches the output directory, so a refused
  // scenario (exit 2, reported by rank 0) writes nothing; then rank 0 claims the directory
  // and the ranks run their parts, and rank 0 writes the merged results.
  if (const ibvp::parallel::Launch launch = ibvp::parallel::launched_ranks(); launch.ranks > 1) {
    ibvp::Scenario scenario;
    ibvp::parallel::Partition part;
    try {
      if (serve_umad)
        throw ibvp::ConfigError(scenario_path, "--serve-umad", 0, "a served fabric cannot be split across processes",
                                "run ibvp-sim --serve-umad as one process (without mpirun)");
      scenario = ibvp::load_scenario(scenario_path, overrides);
      part = ibvp::parallel::partition_fabric(scenario.topology, launch.ranks);
      ibvp::parallel::check_splittable(scenario, part);
    } catch (const ibvp::ConfigError& e) {
      if (launch.rank == 0) std::fprintf(stderr, "ibvp-sim: %s\n", e.what());
      return 2;
    }
#ifdef IBVP_HAVE_MPI
    return run_as_ranks(scenario, part, launch, scenario_path, overrides, out_dir, quiet);
#else
    if (launch.rank == 0)
      std::fprintf(stderr, "ibvp-sim: started as %u processes, but this ibvp-sim was built without MPI; install "
                           "Open MPI (libopenmpi-dev) and rebuild, or run it as one process\n", launch.ranks);
    return 2;
#endif
  }
  try {
    // Claimed (and cleared) before the scenario is read, so a refused scenario leaves no
    // earlier run's results behind; the default directory needs the name first.
    if (out_dir.empty()) out_dir = "out/" + ibvp::scenario_file_name(scenario_path, overrides);
    ibvp::claim_output_dir(out_dir, ibvp::OutputDirKind::run, {scenario_path});
    const ibvp::Scenario scenario = ibvp::load_scenario(scenario_path, overrides);
    ibvp::RunOptions options;
    options.out_dir = out_dir;
    options.progress = !quiet;
    if (serve_umad) {
      serve.out_dir = out_dir;
      serve.on_ready = [&](const std::string& env) {
        // The one line a user (or ibvp.serve_umad) reads to start its tools.
        std::fprintf(stdout, "ibvp-sim: ready: %s ibsim-run ibnetdiscover\n", env.c_str());
        std::fflush(stdout);
      };
      const ibvp::umad::ServeResult r = ibvp::umad::serve_umad(scenario, serve);
      if (!quiet)
        std::fprintf(stderr,
                     "ibvp-sim: %s: served %llu client(s) for %.2f s (%s); MADs to the fabric %llu, to clients %llu, "
                     "timed out %llu; %.3f ms simulated; log in %s/umad_mads.csv\n",
                     scenario.name.c_str(), (unsigned long long)r.attaches, r.wall_seconds, r.stopped_by.c_str(),
                     (unsigned long long)r.to_fabric, (unsigned long long)r.to_client,
                     (unsigned long long)r.timed_out, r.sim_seconds * 1e3, out_dir.c_str());
      return 0;
    }
    const ibvp::RunResult r = ibvp::run_scenario(scenario, options);
    if (!r.perftest_table.empty()) std::fputs(r.perftest_table.c_str(), stdout);
    if (!quiet && !r.link_events_text.empty()) std::fputs(r.link_events_text.c_str(), stderr);
    if (!quiet)
      std::fprintf(stderr,
                   "ibvp-sim: %s: %.3f ms simulated in %.2f s; packets injected %llu, delivered %llu, dropped %llu, "
                   "in flight %llu; results in %s/\n",
                   scenario.name.c_str(), r.sim_seconds * 1e3, r.wall_seconds, (unsigned long long)r.injected,
                   (unsigned long long)r.delivered, (unsigned long long)r.dropped, (unsigned long long)r.in_flight,
                   out_dir.c_str());
    return 0;
  } catch (const ibvp::ConfigError& e) {
    std::fprintf(stderr, "ibvp-sim: %s\n", e.what());
    return 2;
  } catch (const ibvp::DeadlockError& e) {
    std::fprintf(stderr, "\nibvp-sim: %s\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ibvp-sim: %s\n", e.what());
    return 1;
  }
}

// Our own entry point, ahead of the one in libsystemc: it silences SystemC's banner, which
// the library prints before sc_main runs, then hands over to the kernel as its main would.
int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
