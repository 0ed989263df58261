#pragma once
// What the processes of a split run say to each other (docs/parallel.md), as the split
// runner needs it: a point-to-point exchange with the ranks across the cut and a few
// collectives. The platform stays free of MPI; the programs that run
// split (ibvp-sim, ibvp-split-bench) pass MpiTransport (mpi_transport.h), tests may pass
// their own.
#include <cstdint>
#include <string>
#include <vector>

namespace ibvp::parallel {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual uint32_t rank() const = 0;
  virtual uint32_t ranks() const = 0;
  // Every rank gets the smallest (the sum) of every rank's value.
  virtual uint64_t min_all(uint64_t v) = 0;
  virtual uint64_t sum_all(uint64_t v) = 0;
  // Point to point with some ranks (the peers across the cut): sends out[i] to peers[i] and
  // returns in in[i] what peers[i] sent this rank in its matching call. Each peer lists this
  // rank in its call the same number of times.
  virtual void exchange_with(const std::vector<uint32_t>& peers, const std::vector<std::string>& out,
                             std::vector<std::string>& in) = 0;
  // Every rank's bytes, in rank order, on rank 0 (other ranks get nothing).
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
  // Ends every process of the run at once (a broken invariant on one rank).
  [[noreturn]] virtual void abort(int status) = 0;
};

}  // namespace ibvp::parallel
