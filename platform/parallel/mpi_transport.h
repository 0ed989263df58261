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
  void exchange_with(const std::vector<uint32_t>& peers, const std::vector<std::string>& out,
                     std::vector<std::string>& in) override {
    // Every send first, non-blocking, so no order of the calls across ranks can deadlock;
    // then each peer's message, whatever its size (matched probe). MPI keeps the order of
    // the messages between two ranks, so call k's message is received in call k.
    requests_.resize(peers.size());
    for (size_t i = 0; i < peers.size(); ++i)
      MPI_Isend(out[i].data(), static_cast<int>(out[i].size()), MPI_BYTE, static_cast<int>(peers[i]), kTag,
                MPI_COMM_WORLD, &requests_[i]);
    in.resize(peers.size());
    for (size_t i = 0; i < peers.size(); ++i) {
      MPI_Message msg;
      MPI_Status status;
      MPI_Mprobe(static_cast<int>(peers[i]), kTag, MPI_COMM_WORLD, &msg, &status);
      int n = 0;
      MPI_Get_count(&status, MPI_BYTE, &n);
      in[i].resize(static_cast<size_t>(n));
      MPI_Mrecv(in[i].data(), n, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    }
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
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
  std::vector<MPI_Request> requests_;
  static constexpr int kTag = 17;
};

}  // namespace ibvp::parallel
