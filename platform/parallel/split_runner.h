#pragma once
// Runs a fabric-only scenario split across processes (docs/parallel.md, issue 17): every
// process elaborates the whole fabric and runs only the switches and endpoints its part of
// the partition holds (the others' agendas are remote). Conservative windows: a rank runs
// up to the least promise of its peers (the ranks across its cut cables), then sends each
// the deliveries that crossed the cut to it, keyed by their senders (event_order:
// canonical), with its own promise: its earliest pending action (or how far it could be
// sent work) plus the lookahead (lookahead.h; docs/parallel.md). At the end rank 0 gathers every rank's
// counts (metrics::Recorder::save, port counters, stuck outputs) and writes the files one
// process writes. Only rank 0 touches the output directory.
#include <cstdint>

#include "platform/builder/runner.h"
#include "platform/parallel/partition.h"
#include "platform/parallel/transport.h"
#include "platform/scenario/scenario.h"

namespace ibvp::parallel {

// One rank's work, for measuring (ibvp-split-bench).
struct SplitStats {
  uint64_t actions = 0;   // model actions served here
  uint64_t sent = 0;      // deliveries sent across the cut
  uint64_t received = 0;
  uint64_t windows = 0;
  double wall_seconds = 0;
  double run_seconds = 0;   // inside sc_start: this rank's own work (wall clock)
  double run_cpu_seconds = 0;  // the same in this thread's CPU time: what other jobs on the machine do not inflate
  double sync_seconds = 0;  // exchanging with the other ranks, waiting for them included
};

// The scenario passed check_splittable(scenario, part). The result (on rank 0: the merged
// run's; elsewhere: this rank's own counts) is what ibvp-sim reports. options.out_dir is
// written by rank 0 only; options.progress prints on rank 0 only.
RunResult run_split(const Scenario& scenario, const RunOptions& options, const Partition& part, Transport& transport,
                    SplitStats* stats = nullptr);

}  // namespace ibvp::parallel
