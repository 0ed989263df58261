#include "platform/parallel/split_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <time.h>
#include <unistd.h>

#include "models/sim/timed_queue.h"
#include "platform/builder/deadlock_watch.h"
#include "platform/builder/fabric.h"
#include "platform/metrics/bytes.h"
#include "platform/metrics/report.h"
#include "platform/parallel/lookahead.h"
#include "platform/parallel/message.h"
#include "platform/scenario/output_paths.h"

namespace ibvp::parallel {

namespace {

// Deliveries to remote agendas, per receiving rank, as Message bytes.
class Outbox : public sim::RemoteSink {
 public:
  Outbox(const Partition& part, ib::PacketPool& pool) : part_(part), pool_(pool), out_(part.ranks) {}
  void send(const sim::Action& a, sim::TimedQueue& to) override {
    Message m;
    m.action = a;
    m.action.ptr = nullptr;
    m.target = to.source_id();
    m.sent_ps = sim::TimedQueue::now_ps();
    if (a.ptr) {
      // Switch kArrive / kHead and Endpoint kHead carry a packet; kCredit carries none.
      auto* p = static_cast<ib::Packet*>(a.ptr);
      m.has_packet = true;
      m.packet = to_wire(*p);
      pool_.release(p);  // it lives on in the receiving process
    }
    metrics::put(out_[part_.rank_of[m.target]], m);
    ++sent_;
  }
  std::vector<std::string>& out() { return out_; }
  uint64_t sent() const { return sent_; }

 private:
  const Partition& part_;
  ib::PacketPool& pool_;
  std::vector<std::string> out_;
  uint64_t sent_ = 0;
};

// Every cabled port of the nodes `rank` holds, in (node, port) order.
template <class Fn>
void for_each_port_of(const topo::Topology& t, const Partition& part, uint32_t rank, Fn&& fn) {
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    if (part.rank_of[n] != rank) continue;
    for (uint16_t p = 1; p <= t.nodes[n].num_ports; ++p)
      if (t.link_at(n, p) >= 0) fn(n, p);
  }
}

// Index of (node, port) in read_port_traffic's list.
std::vector<std::vector<size_t>> port_index(const topo::Topology& t) {
  std::vector<std::vector<size_t>> idx(t.nodes.size());
  size_t k = 0;
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    idx[n].assign(t.nodes[n].num_ports + 1u, 0);
    for (uint16_t p = 1; p <= t.nodes[n].num_ports; ++p)
      if (t.link_at(n, p) >= 0) idx[n][p] = k++;
  }
  return idx;
}

}  // namespace

RunResult run_split(const Scenario& scenario, const RunOptions& options, const Partition& part, Transport& tr,
                    SplitStats* stats) {
  const uint32_t rank = tr.rank();
  const bool root = rank == 0;
  const std::string out_dir = root ? options.out_dir : "";
  if (!out_dir.empty()) {
    std::filesystem::create_directories(out_dir);
    prepare_output_files(scenario, out_dir);
  }
  Fabric fabric(scenario, out_dir);
  const topo::Topology& t = scenario.topology;
  Outbox outbox(part, fabric.packet_pool());
  sim::Scheduler& sched = sim::Scheduler::instance();
  sched.set_remote_sink(&outbox);
  std::vector<sim::TimedQueue*> agenda_of(t.nodes.size(), nullptr);
  for (uint32_t n = 0; n < agenda_of.size(); ++n) {
    if (sw::Switch* s = fabric.switch_at(n)) agenda_of[n] = &s->agenda();
    else if (ep::Endpoint* e = fabric.endpoint_at(n)) agenda_of[n] = &e->agenda();
    if (agenda_of[n] && part.rank_of[n] != rank) agenda_of[n]->set_remote(true);
  }
  sched.drop_remote_actions();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);

  const uint64_t end_ps = scenario.duration.value();
  const uint64_t warmup_ps = scenario.warmup.value();
  bool warm = warmup_ps == 0;
  std::vector<metrics::PortTraffic> ports_at_warmup = read_port_traffic(fabric);
  const uint64_t progress_ps = scenario.outputs.progress_interval.value() > 0
                                   ? scenario.outputs.progress_interval.value()
                                   : std::max<uint64_t>(end_ps / 50, 1);
  const bool progress = options.progress || options.on_progress;
  uint64_t next_progress_ps = progress_ps;
  const auto wall_start = std::chrono::steady_clock::now();
  auto wall = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count(); };
  auto cpu = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  };
  SplitStats st;

  // The ranks across this rank's cut cables: the only ones it exchanges with.
  std::vector<uint32_t> peers;
  for (uint32_t i : part.cut_links) {
    const topo::Link& l = t.links[i];
    const uint32_t a = part.rank_of[l.a.node], b = part.rank_of[l.b.node];
    if (a == rank) peers.push_back(b);
    if (b == rank) peers.push_back(a);
  }
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  const uint64_t lookahead = part.ranks > 1 ? lookahead_ps(scenario, part) : Partition::kNoCut;
  auto plus = [](uint64_t a, uint64_t b) { return a > sim::Scheduler::kNever - b ? sim::Scheduler::kNever : a + b; };

  // Every message a peer sends starts with its promise and its clock.
  struct Header {
    uint64_t promise;  // no message the peer sends from now on is timed earlier
    uint64_t clock;    // the peer's simulated time after its last window
  };
  std::vector<std::string> out(peers.size()), in(peers.size());
  std::vector<uint64_t> promise(peers.size());
  // Peers this rank still exchanges with before the barrier: a pair stops when both ends
  // stand at it (neither runs, so neither sends, until the barrier is passed).
  std::vector<bool> active(peers.size(), true);
  auto receive = [&](const std::string& bytes, size_t from) {
    metrics::ByteReader r(bytes);
    const Header h = r.get<Header>();
    promise[from] = h.promise;
    while (!r.done()) {
      const Message m = r.get<Message>();
      sim::Action a = m.action;
      if (m.has_packet) {
        ib::Packet* p = fabric.packet_pool().acquire();
        from_wire(m.packet, *p);
        a.ptr = p;
      }
      try {
        sched.push_keyed(a, agenda_of[m.target]);
      } catch (const std::logic_error& e) {
        // The windows broke their own rule: results would be wrong, so no rank writes any.
        std::fprintf(stderr, "ibvp-sim: rank %u: %s (from agenda %llu, sent at %llu ps; lookahead %llu ps)\n", rank,
                     e.what(), (unsigned long long)(a.seq >> sim::Scheduler::kCounterBits),
                     (unsigned long long)m.sent_ps, (unsigned long long)lookahead);
        tr.abort(1);
      }
      ++st.received;
    }
    return h.clock;
  };

  // Conservative synchronization with promises (Chandy and Misra 1979, with lookahead; the
  // argument is in docs/parallel.md): a rank runs up to `safe`, the smallest promise of its
  // peers, then sends each peer what it has for it with its own promise, min(earliest
  // pending action, safe) + lookahead: its future actions are its pending ones or the
  // consequences of messages, and those are at or after `safe`. At the start every promise
  // is the earliest action anywhere plus the lookahead. Windows also stop at the warm-up
  // (the port counters are read there, on every rank at the same simulated time) and at
  // barriers: the end, and progress points, where every rank meets in a collective.
  const uint64_t first = tr.min_all(sched.next_ps());
  std::fill(promise.begin(), promise.end(), plus(first, lookahead));
  uint64_t barrier = progress ? std::min(end_ps, next_progress_ps) : end_ps;
  for (;;) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    uint64_t safe = sim::Scheduler::kNever;
    for (uint64_t p : promise) safe = std::min(safe, p);
    uint64_t target = std::min(safe, barrier);
    if (!warm) target = std::min(target, warmup_ps);
    if (target > now) {
      const double t0 = wall(), c0 = cpu();
      sc_core::sc_start(sc_core::sc_time::from_value(target - now));
      st.run_seconds += wall() - t0;
      st.run_cpu_seconds += cpu() - c0;
      ++st.windows;
    }
    const uint64_t at = sc_core::sc_time_stamp().value();
    if (!warm && at >= warmup_ps) {
      ports_at_warmup = read_port_traffic(fabric);
      warm = true;
    }
    bool any = false;
    for (size_t i = 0; i < peers.size(); ++i) any |= active[i];
    if (any) {
      const double t0 = wall();
      const Header mine{plus(std::min(sched.next_ps(), safe), lookahead), at};
      std::vector<uint32_t> to;
      std::vector<std::string> bytes;
      std::vector<size_t> which;
      for (size_t i = 0; i < peers.size(); ++i) {
        if (!active[i]) continue;
        std::string& o = outbox.out()[peers[i]];
        std::string msg;
        metrics::put(msg, mine);
        msg += o;
        o.clear();
        to.push_back(peers[i]);
        bytes.push_back(std::move(msg));
        which.push_back(i);
      }
      std::vector<std::string> got;
      tr.exchange_with(to, bytes, got);
      for (size_t k = 0; k < which.size(); ++k) {
        const uint64_t clock = receive(got[k], which[k]);
        if (at >= barrier && clock >= barrier) active[which[k]] = false;
      }
      st.sync_seconds += wall() - t0;
      continue;
    }
    if (at < barrier) continue;  // no peers: run on to the barrier
    // This rank and all its peers stand at the barrier; every rank gets here.
    if (progress) {
      const double t0 = wall();
      const uint64_t hops = tr.sum_all(fabric.recorder().transmissions());
      st.sync_seconds += wall() - t0;
      if (root && options.progress) print_progress(at, end_ps, wall(), hops);
      if (root && options.on_progress) options.on_progress(at, end_ps, wall(), hops);
    }
    if (barrier >= end_ps) break;
    next_progress_ps = at + progress_ps;
    barrier = std::min(end_ps, next_progress_ps);
    std::fill(active.begin(), active.end(), true);
  }
  st.wall_seconds = wall();
  if (root && options.progress && isatty(fileno(stderr))) std::fprintf(stderr, "\n");
  fabric.finish();
  st.actions = sim::TimedQueue::served_total();
  st.sent = outbox.sent();
  if (stats) *stats = st;

  // This rank's part of the results, for rank 0.
  const uint64_t at_end = sc_core::sc_time_stamp().value();
  DeadlockWatch watch(fabric, std::max<uint64_t>(scenario.deadlock_timeout.value(), 1));
  std::string mine;
  fabric.recorder().save(mine);
  for_each_port_of(t, part, rank, [&](uint32_t n, uint16_t p) { metrics::put(mine, fabric.port_counters(n, p)); });
  const std::vector<std::vector<size_t>> idx = port_index(t);
  for_each_port_of(t, part, rank, [&](uint32_t n, uint16_t p) { metrics::put(mine, ports_at_warmup[idx[n][p]]); });
  metrics::put_vector(mine, watch.stuck_channels(at_end));
  metrics::put(mine, fabric.packets_in_flight());
  metrics::put(mine, st.actions);
  metrics::put(mine, peak_rss_bytes());
  const std::vector<std::string> parts = tr.gather(mine);

  RunResult result;
  result.sim_seconds = static_cast<double>(at_end) / 1e12;
  result.wall_seconds = st.wall_seconds;
  if (!root) {
    result.injected = fabric.recorder().injected();
    result.delivered = fabric.recorder().delivered();
    result.dropped = fabric.recorder().dropped();
    result.in_flight = fabric.packets_in_flight();
    result.transmissions = fabric.recorder().transmissions();
    result.events = st.actions;
    return result;
  }
  // Rank 0: its own counts stand; every other rank's are added, and the port counters of
  // the nodes a rank ran are taken from it (elsewhere they stayed at zero).
  std::vector<DeadlockWatch::StuckChannel> stuck = watch.stuck_channels(at_end);
  result.in_flight = fabric.packets_in_flight();
  result.events = st.actions;
  result.peak_rss_bytes = peak_rss_bytes();
  for (uint32_t r = 1; r < parts.size(); ++r) {
    metrics::ByteReader in(parts[r]);
    fabric.recorder().merge_saved(in);
    for_each_port_of(t, part, r, [&](uint32_t n, uint16_t p) {
      // The counters' storage belongs to models rank 0 built but did not run.
      const_cast<link::PortCounters&>(fabric.port_counters(n, p)) = in.get<link::PortCounters>();
    });
    for_each_port_of(t, part, r, [&](uint32_t n, uint16_t p) {
      ports_at_warmup[idx[n][p]] = in.get<metrics::PortTraffic>();
    });
    for (const DeadlockWatch::StuckChannel& c : in.get_vector<DeadlockWatch::StuckChannel>()) stuck.push_back(c);
    result.in_flight += in.get<uint64_t>();
    result.events += in.get<uint64_t>();
    result.peak_rss_bytes = std::max(result.peak_rss_bytes, in.get<uint64_t>());
    if (!in.done()) throw std::logic_error("split run: rank " + std::to_string(r) + "'s results are longer than read");
  }
  const metrics::Recorder& rec = fabric.recorder();
  result.injected = rec.injected();
  result.delivered = rec.delivered();
  result.dropped = rec.dropped();
  result.transmissions = rec.transmissions();
  // stuck() lists outputs in (node, port, VL) order.
  std::sort(stuck.begin(), stuck.end(), [](const auto& a, const auto& b) {
    return std::tie(a.node, a.port, a.vl) < std::tie(b.node, b.port, b.vl);
  });
  std::vector<std::string> names;
  for (const auto& n : t.nodes) names.push_back(n.name);
  result.stuck = DeadlockWatch::stuck_report(names, stuck);
  result.traffic = metrics::summarize_traffic(ports_at_warmup, read_port_traffic(fabric), warm ? at_end - warmup_ps : 0);
  if (!out_dir.empty()) metrics::write_results(fabric, result, out_dir);
  return result;
}

}  // namespace ibvp::parallel
