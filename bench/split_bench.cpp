// ibvp-split-bench (issue 17, docs/parallel.md): a fabric-only scenario split across MPI
// ranks with conservative windows, for measuring. Every rank elaborates the whole fabric and
// runs only the switches and endpoints its partition gives it (the others' agendas are
// remote); deliveries across the cut are exchanged at the end of each window, keyed by their
// senders (event_order: canonical). It writes no result files: it prints the run's totals
// (summed over ranks: they must equal a one-process canonical run's summary.json), and per
// rank its actions served, messages sent, windows and wall time.
//
//   mpirun -n 2 build/ibvp-split-bench scenario.yaml [--set key=value ...]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "platform/builder/fabric.h"
#include "platform/params/config_error.h"
#include "platform/parallel/message.h"
#include "platform/parallel/partition.h"
#include "platform/parallel/split_check.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;

namespace {

class Outbox : public sim::RemoteSink {
 public:
  Outbox(const parallel::Partition& part, ib::PacketPool& pool, uint32_t ranks)
      : part_(part), pool_(pool), out_(ranks) {}
  void send(const sim::Action& a, sim::TimedQueue& to) override {
    parallel::Message m;
    m.action = a;
    m.action.ptr = nullptr;
    m.target = to.source_id();
    m.sent_ps = sim::TimedQueue::now_ps();
    if (a.ptr) {
      // Switch kArrive / kHead and Endpoint kHead carry a packet; kCredit carries none.
      auto* p = static_cast<ib::Packet*>(a.ptr);
      m.has_packet = true;
      m.packet = parallel::to_wire(*p);
      pool_.release(p);  // it lives on in the receiving process
    }
    out_[part_.rank_of[m.target]].push_back(m);
    ++sent_;
  }
  std::vector<std::vector<parallel::Message>>& out() { return out_; }
  uint64_t sent() const { return sent_; }

 private:
  const parallel::Partition& part_;
  ib::PacketPool& pool_;
  std::vector<std::vector<parallel::Message>> out_;
  uint64_t sent_ = 0;
};

}  // namespace

int sc_main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank_i = 0, ranks_i = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_i);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks_i);
  const uint32_t rank = static_cast<uint32_t>(rank_i), ranks = static_cast<uint32_t>(ranks_i);
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
  if (ranks == 1) part.lookahead_ps = scenario.duration.value();

  Fabric fabric(scenario);
  Outbox outbox(part, fabric.packet_pool(), ranks);
  sim::Scheduler::instance().set_remote_sink(&outbox);
  std::vector<sim::TimedQueue*> agenda_of(scenario.topology.nodes.size(), nullptr);
  for (uint32_t n = 0; n < agenda_of.size(); ++n) {
    if (sw::Switch* s = fabric.switch_at(n)) agenda_of[n] = &s->agenda();
    else if (ep::Endpoint* e = fabric.endpoint_at(n)) agenda_of[n] = &e->agenda();
    if (agenda_of[n] && part.rank_of[n] != rank) agenda_of[n]->set_remote(true);
  }
  sim::Scheduler::instance().drop_remote_actions();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);

  const uint64_t end_ps = scenario.duration.value();
  const uint64_t lookahead = part.lookahead_ps;
  const auto wall_start = std::chrono::steady_clock::now();
  uint64_t windows = 0, received = 0;
  std::vector<int> send_counts(ranks), recv_counts(ranks), send_displs(ranks), recv_displs(ranks);
  std::vector<parallel::Message> send_buf, recv_buf;
  const int msg_bytes = static_cast<int>(sizeof(parallel::Message));
  auto exchange = [&] {
    send_buf.clear();
    for (uint32_t r = 0; r < ranks; ++r) {
      send_counts[r] = static_cast<int>(outbox.out()[r].size()) * msg_bytes;
      send_displs[r] = static_cast<int>(send_buf.size()) * msg_bytes;
      send_buf.insert(send_buf.end(), outbox.out()[r].begin(), outbox.out()[r].end());
      outbox.out()[r].clear();
    }
    MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (uint32_t r = 0; r < ranks; ++r) {
      recv_displs[r] = total;
      total += recv_counts[r];
    }
    recv_buf.resize(static_cast<size_t>(total / msg_bytes));
    MPI_Alltoallv(send_buf.data(), send_counts.data(), send_displs.data(), MPI_BYTE, recv_buf.data(),
                  recv_counts.data(), recv_displs.data(), MPI_BYTE, MPI_COMM_WORLD);
    for (const parallel::Message& m : recv_buf) {
      sim::Action a = m.action;
      if (m.has_packet) {
        ib::Packet* p = fabric.packet_pool().acquire();
        parallel::from_wire(m.packet, *p);
        a.ptr = p;
      }
      try {
        sim::Scheduler::instance().push_keyed(a, agenda_of[m.target]);
      } catch (const std::logic_error& e) {
        std::fprintf(stderr, "rank %u: %s; from agenda %llu, kind %u, port %u, packet %d, sent at %llu\n", rank, e.what(),
                     (unsigned long long)(a.seq >> sim::Scheduler::kCounterBits), a.kind, a.port, m.has_packet,
                     (unsigned long long)m.sent_ps);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    received += recv_buf.size();
  };
  // Conservative windows: every rank runs to the same window end, no further than the
  // earliest pending action anywhere plus the lookahead; whatever it sent arrives at or
  // after that end (push_keyed refuses anything earlier).
  while (sc_core::sc_time_stamp().value() < end_ps) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    uint64_t mine = sim::Scheduler::instance().next_ps(), next = 0;
    MPI_Allreduce(&mine, &next, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    if (next >= end_ps) {
      sc_core::sc_start(sc_core::sc_time::from_value(end_ps - now));
      break;
    }
    const uint64_t window_end = std::min(end_ps, std::max(now, next) + lookahead);
    sc_core::sc_start(sc_core::sc_time::from_value(window_end - now));
    ++windows;
    exchange();
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  exchange();  // messages of the last window: in flight at the end, as in one process
  fabric.finish();

  const metrics::Recorder& rec = fabric.recorder();
  uint64_t mine[5] = {rec.injected(), rec.delivered(), rec.dropped(), rec.transmissions(), fabric.packets_in_flight()};
  uint64_t sum[5] = {};
  MPI_Reduce(mine, sum, 5, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  const uint64_t events = sim::TimedQueue::served_total();
  std::fprintf(stderr, "SPLIT rank=%u ports=%llu events=%llu sent=%llu received=%llu windows=%llu wall_s=%.3f\n", rank,
               (unsigned long long)part.ports[rank], (unsigned long long)events, (unsigned long long)outbox.sent(),
               (unsigned long long)received, (unsigned long long)windows, wall);
  double max_wall = 0;
  MPI_Reduce(&wall, &max_wall, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("SPLIT ranks=%u lookahead_ps=%llu cut_cables=%zu injected=%llu delivered=%llu dropped=%llu "
                "packet_hops=%llu in_flight=%llu wall_s=%.3f\n",
                ranks, (unsigned long long)lookahead, part.cut_links.size(), (unsigned long long)sum[0],
                (unsigned long long)sum[1], (unsigned long long)sum[2], (unsigned long long)sum[3],
                (unsigned long long)sum[4], max_wall);
  MPI_Finalize();
  return 0;
}
