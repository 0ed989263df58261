#pragma once
// Transport over MPI_COMM_WORLD (Open MPI from Debian). Header-only and included only by the
// programs built with MPI, so the platform library needs no MPI (docs/parallel.md).
#include <mpi.h>

#include "platform/parallel/transport.h"

namespace ibvp::parallel {

class MpiTransport : public Transport {
 public:
  MpiTransport() {
    int r = 0, n = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    rank_ = static_cast<uint32_t>(r);
    ranks_ = static_cast<uint32_t>(n);
  }
  uint32_t rank() const override { return rank_; }
  uint32_t ranks() const override { return ranks_; }
  uint64_t min_all(uint64_t v) override {
    uint64_t out = 0;
    MPI_Allreduce(&v, &out, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    return out;
  }
  uint64_t sum_all(uint64_t v) override {
    uint64_t out = 0;
    MPI_Allreduce(&v, &out, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return out;
  }
  std::string exchange(std::vector<std::string>& out) override {
    std::vector<int> send_counts(ranks_), recv_counts(ranks_), send_displs(ranks_), recv_displs(ranks_);
    send_buf_.clear();
    for (uint32_t r = 0; r < ranks_; ++r) {
      send_counts[r] = static_cast<int>(out[r].size());
      send_displs[r] = static_cast<int>(send_buf_.size());
      send_buf_ += out[r];
      out[r].clear();
    }
    MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (uint32_t r = 0; r < ranks_; ++r) {
      recv_displs[r] = total;
      total += recv_counts[r];
    }
    std::string in(static_cast<size_t>(total), '\0');
    MPI_Alltoallv(send_buf_.data(), send_counts.data(), send_displs.data(), MPI_BYTE, in.data(), recv_counts.data(),
                  recv_displs.data(), MPI_BYTE, MPI_COMM_WORLD);
    return in;
  }
  std::vector<std::string> gather(const std::string& mine) override {
    const int n = static_cast<int>(mine.size());
    std::vector<int> sizes(ranks_), displs(ranks_);
    MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string all;
    if (rank_ == 0) {
      int total = 0;
      for (uint32_t r = 0; r < ranks_; ++r) {
        displs[r] = total;
        total += sizes[r];
      }
      all.resize(static_cast<size_t>(total));
    }
    MPI_Gatherv(mine.data(), n, MPI_BYTE, all.data(), sizes.data(), displs.data(), MPI_BYTE, 0, MPI_COMM_WORLD);
    std::vector<std::string> out;
    if (rank_ == 0)
      for (uint32_t r = 0; r < ranks_; ++r) out.push_back(all.substr(static_cast<size_t>(displs[r]), static_cast<size_t>(sizes[r])));
    return out;
  }
  [[noreturn]] void abort(int status) override {
    MPI_Abort(MPI_COMM_WORLD, status);
    std::abort();
  }

 private:
  uint32_t rank_ = 0, ranks_ = 1;
  std::string send_buf_;
};

}  // namespace ibvp::parallel
