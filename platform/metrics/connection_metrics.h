#pragma once
// Seed 002's per-connection metrics of CBR connections (Alfaro, Sanchez, Duato, Sec. 4.3),
// computed streaming: each connection keeps a fixed number of counters, whatever the number
// of packets it delivers, and nothing is kept per packet (seed 002 runs 112k-119k
// connections).
//
// - Fig. 3, packet delay: per SL, the fraction of packets delivered within thresholds that
//   are fractions of each connection's own deadline D (its guaranteed maximum delay).
// - Fig. 4, packet jitter: per SL, the fraction of packets whose inter-arrival time (IAT)
//   falls in intervals around the connection's nominal IAT.
// - Fig. 5: per SL, the connections delivering the highest (best) and lowest (worst)
//   fraction of their packets within D/100.
// - Sec. 4.2, the stop rule: the steady state lasts "until the connection with a smaller
//   mean bandwidth has received 100 packets", i.e. until every connection has N.
//
// Only packets created at or after the warm-up count, as for flows' latencies. Delay is
// delivery (tail at the destination) minus creation at the source, so source queueing
// counts. docs/realtime_metrics.md states the choices made where the paper leaves room.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "platform/workload/cbr_connection.h"

namespace ibvp::metrics {

struct ConnectionMetricsConfig {
  // Fractions of D, strictly increasing, above 0, including 1 (D itself). seed 002 Fig. 3
  // draws thresholds from D/100 to D; these are its 1-2-5 steps.
  std::vector<double> deadline_thresholds{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0};
  // Edges of the IAT intervals, as measured IAT / nominal IAT, strictly increasing, above
  // 0, with one edge at or below 1 and one above. B edges make B + 1 intervals: below the
  // first edge, between consecutive edges, at or above the last. seed 002 Fig. 4 does not
  // give its intervals; these are symmetric around 1 with a central interval of +-5 %.
  std::vector<double> jitter_bins{0.5, 0.75, 0.9, 0.95, 1.05, 1.1, 1.25, 1.5};
  // The threshold (one of deadline_thresholds) at which connections are ranked best and
  // worst: D/100 (seed 002 Fig. 5).
  double rank_threshold = 0.01;
  // A connection is ranked only with at least this many packets: the paper ranks connections
  // that received 100 packets or more (Sec. 4.2's stop rule); with one packet every
  // connection is 0 % or 100 % and best and worst say nothing.
  uint64_t rank_min_packets = 10;
  // The stop rule's N (scenario connections.stop_after_packets); 0: no stop rule.
  uint64_t stop_after_packets = 0;
};

// Why a threshold list or a list of IAT edges cannot be used ("" when it can), in words
// the scenario loader puts in its error message.
std::string deadline_thresholds_problem(const std::vector<double>& thresholds);
std::string jitter_bins_problem(const std::vector<double>& edges);
std::string rank_threshold_problem(double rank, const std::vector<double>& thresholds);

// round(fraction x base) (halves up), in integer ps: the one place a fraction of a
// connection's D or IAT becomes a time, so counting and tests agree to the picosecond. A
// multiply, an add and a truncation: it runs for each threshold a packet is compared with.
inline uint64_t scaled_ps(double fraction, uint64_t base_ps) {
  const double v = fraction * static_cast<double>(base_ps) + 0.5;
  return v < 18446744073709549568.0 ? static_cast<uint64_t>(v) : ~uint64_t{0};
}

// The fixed part of one connection's state (its counts are in a flat array, one 32-bit
// count per threshold interval and per IAT interval, a connection's counts side by side). Its size is asserted in the
// tests, so growth is noticed: at 115k connections each 8 bytes cost 0.9 MB.
struct ConnectionState {
  uint64_t last_arrival_ps = 0;  // delivery of its previous counted packet (for the IAT)
  uint64_t delay_sum_ps = 0;
  uint64_t delay_max_ps = 0;
  uint32_t delivered = 0;  // counted packets (created at or after the warm-up)
  uint32_t reserved = 0;   // padding, kept explicit
};

// One SL's connections together (seed 002 Figs. 3-5): sums of their counts.
struct SlConnectionSummary {
  uint8_t sl = 0;
  uint32_t connections = 0;           // every connection of the SL
  uint32_t measured_connections = 0;  // those that delivered at least one counted packet
  uint64_t packets = 0;
  uint64_t late = 0;                  // delay above D
  std::vector<uint64_t> within;       // per threshold: packets with delay <= threshold x D
  uint64_t iat_samples = 0;           // IATs measured: packets - measured connections
  std::vector<uint64_t> iat;          // per IAT interval
  double delay_mean_ps = 0;           // over the SL's packets; 0 without packets
  uint64_t delay_max_ps = 0;
  // seed 002 Fig. 5: the connections with the highest and lowest fraction of their packets
  // within rank_threshold x D; workload::kNoConnection when no connection has a packet.
  uint32_t best = workload::kNoConnection;
  uint32_t worst = workload::kNoConnection;
  double best_fraction = 0, worst_fraction = 0;
};

class ConnectionMetrics {
 public:
  // `connections` is read, not copied: it must outlive this object and keep its size (the
  // run's list, owned by the Fabric). std::invalid_argument for a config the loader would
  // refuse, or a connection with no deadline or no nominal IAT.
  ConnectionMetrics(const workload::CbrConnections& connections, uint64_t warmup_ps,
                    ConnectionMetricsConfig config = {});

  // A packet of `connection`, created at created_ps, delivered at delivered_ps.
  // Packets created before the warm-up are ignored. A delay equal to threshold x D counts
  // as within that threshold (the guarantee is "at most D"); an IAT equal to an edge falls
  // in the interval above the edge.
  void on_deliver(uint32_t connection, uint64_t created_ps, uint64_t delivered_ps) {
    if (created_ps < warmup_ps_) return;
    count(connection, created_ps, delivered_ps);
  }

  const ConnectionMetricsConfig& config() const { return config_; }
  const workload::CbrConnections& connections() const { return *connections_; }
  size_t size() const { return state_.size(); }
  const ConnectionState& state(uint32_t c) const { return state_[c]; }
  size_t threshold_intervals() const { return config_.deadline_thresholds.size() + 1; }
  size_t iat_intervals() const { return config_.jitter_bins.size() + 1; }
  // Packets of connection c in threshold interval k: delay in (t[k-1] D, t[k] D], the last
  // one above the last threshold.
  uint32_t interval_count(uint32_t c, size_t k) const { return counts_[c * stride_ + k]; }
  // Packets of c with delay <= t[k] x D.
  uint64_t within(uint32_t c, size_t k) const;
  uint64_t late(uint32_t c) const;  // delay above D
  // IATs of c in interval k: k = 0 below the first edge, k = B at or above the last.
  uint32_t iat_count(uint32_t c, size_t k) const { return counts_[c * stride_ + threshold_intervals() + k]; }
  double delay_mean_ps(uint32_t c) const;
  // Index of D (1.0) and of the rank threshold in deadline_thresholds.
  size_t deadline_index() const { return deadline_index_; }
  size_t rank_index() const { return rank_index_; }

  // Bytes kept per connection: the fixed state and its counts (the stop rule adds 4).
  size_t bytes_per_connection() const {
    return sizeof(ConnectionState) + sizeof(uint32_t) * (threshold_intervals() + iat_intervals());
  }

  // Per SL that has connections, in SL order.
  std::vector<SlConnectionSummary> by_sl() const;

  // The stop rule (seed 002 Sec. 4.2), checked between kernel slices: true when
  // stop_after_packets > 0, there is at least one connection, and every connection still
  // sending at now_ps (end_ps after now_ps) has delivered stop_after_packets counted packets.
  // Connections whose end has passed no longer hold the run. now_ps must not decrease.
  bool stop_reached(uint64_t now_ps);
  // For the progress line: the fewest counted packets of a connection still sending at
  // the last stop_reached() (stop_after_packets if none). One pass over the connections.
  uint64_t slowest_delivered() const;

 private:
  void count(uint32_t c, uint64_t created_ps, uint64_t delivered_ps);

  const workload::CbrConnections* connections_;
  uint64_t warmup_ps_;
  ConnectionMetricsConfig config_;
  size_t deadline_index_ = 0, rank_index_ = 0;
  std::vector<ConnectionState> state_;
  // Per connection: its threshold interval counts, then its IAT interval counts.
  size_t stride_ = 0;
  std::vector<uint32_t> counts_;
  // Stop rule: connections still holding the run (sending, fewer than N packets), and the
  // connections in order of their end, swept as simulated time passes them.
  uint64_t pending_ = 0;
  uint64_t swept_ps_ = 0;
  size_t next_end_ = 0;
  std::vector<uint32_t> by_end_;
};

}  // namespace ibvp::metrics
