// ibvp-split-bench (issue 17, docs/parallel.md): a fabric-only scenario split across MPI
// ranks, for measuring: the split runner ibvp-sim uses (platform/parallel/split_runner.h),
// without writing files. It prints the run's totals (merged on rank 0: they equal a
// one-process canonical run's summary.json), and per rank its actions served, messages sent,
// windows and wall time.
//
//   mpirun -n 2 build/ibvp-split-bench scenario.yaml [--set key=value ...]
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "platform/params/config_error.h"
#include "platform/parallel/lookahead.h"
#include "platform/parallel/mpi_transport.h"
#include "platform/parallel/partition.h"
#include "platform/parallel/split_check.h"
#include "platform/parallel/split_runner.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;

int sc_main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  parallel::MpiTransport tr;
  const uint32_t rank = tr.rank(), ranks = tr.ranks();
  if (argc < 2) {
    if (rank == 0) std::fprintf(stderr, "usage: mpirun -n N ibvp-split-bench SCENARIO.yaml [--set key=value ...]\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<std::string> overrides;
  for (int i = 2; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--set") overrides.push_back(argv[i + 1]);
  Scenario scenario;
  parallel::Partition part;
  try {
    scenario = load_scenario(argv[1], overrides);
    part = parallel::partition_fabric(scenario.topology, ranks);
    if (ranks > 1) parallel::check_splittable(scenario, part);
  } catch (const ConfigError& e) {
    if (rank == 0) std::fprintf(stderr, "ibvp-split-bench: %s\n", e.what());
    MPI_Finalize();
    return 2;
  }
  parallel::SplitStats st;
  const RunResult r = parallel::run_split(scenario, RunOptions{}, part, tr, &st);
  std::fprintf(stderr, "SPLIT rank=%u ports=%llu events=%llu sent=%llu received=%llu windows=%llu wall_s=%.3f run_s=%.3f run_cpu_s=%.3f sync_s=%.3f\n", rank,
               (unsigned long long)part.ports[rank], (unsigned long long)st.actions, (unsigned long long)st.sent,
               (unsigned long long)st.received, (unsigned long long)st.windows, st.wall_seconds, st.run_seconds, st.run_cpu_seconds, st.sync_seconds);
  double max_wall = 0;
  MPI_Reduce(&st.wall_seconds, &max_wall, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("SPLIT ranks=%u lookahead_ps=%llu cut_cables=%zu injected=%llu delivered=%llu dropped=%llu "
                "packet_hops=%llu in_flight=%llu wall_s=%.3f\n",
                ranks, (unsigned long long)(ranks > 1 ? parallel::lookahead_ps(scenario, part) : 0), part.cut_links.size(),
                (unsigned long long)r.injected, (unsigned long long)r.delivered, (unsigned long long)r.dropped,
                (unsigned long long)r.transmissions, (unsigned long long)r.in_flight, max_wall);
  MPI_Finalize();
  return 0;
}
