#pragma once
// What a run split across processes supports (docs/parallel.md), checked before anything
// is built: a scenario that asks for more is refused with the key that asks for it.
#include <cstdint>

#include "platform/parallel/partition.h"
#include "platform/scenario/scenario.h"

namespace ibvp::parallel {

// Throws ConfigError naming the scenario file, the key and the fix.
void check_splittable(const Scenario& s, const Partition& part);

// The number of processes this one was started among and its rank, from the launcher's
// environment (Open MPI's mpirun: OMPI_COMM_WORLD_SIZE / _RANK; MPICH, Slurm's PMI:
// PMI_SIZE / PMI_RANK); {1, 0} when started alone.
struct Launch {
  uint32_t ranks = 1;
  uint32_t rank = 0;
};
Launch launched_ranks();

}  // namespace ibvp::parallel
