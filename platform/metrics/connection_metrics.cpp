#include "platform/metrics/connection_metrics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/sim/params.h"

namespace ibvp::metrics {

namespace {

std::string increasing_positive_problem(const std::vector<double>& v) {
  if (v.empty()) return "the list is empty";
  for (size_t i = 0; i < v.size(); ++i) {
    if (!(v[i] > 0) || !std::isfinite(v[i]))
      return "item " + std::to_string(i) + " (" + sim::format_real(v[i]) + ") is not a finite number above 0";
    if (i > 0 && !(v[i] > v[i - 1]))
      return "item " + std::to_string(i) + " (" + sim::format_real(v[i]) + ") is not above item " +
             std::to_string(i - 1) + " (" + sim::format_real(v[i - 1]) + "): the list must be strictly increasing";
  }
  return "";
}

size_t index_of(const std::vector<double>& v, double x) {
  return static_cast<size_t>(std::find(v.begin(), v.end(), x) - v.begin());
}

}  // namespace

std::string deadline_thresholds_problem(const std::vector<double>& t) {
  std::string p = increasing_positive_problem(t);
  if (!p.empty()) return p;
  if (index_of(t, 1.0) == t.size()) return "1 (the deadline D itself) is not among the thresholds, so late packets would not be told apart";
  return "";
}

std::string jitter_bins_problem(const std::vector<double>& e) {
  std::string p = increasing_positive_problem(e);
  if (!p.empty()) return p;
  if (e.size() < 2 || !(e.front() <= 1.0) || !(e.back() > 1.0))
    return "the edges do not enclose 1 (the nominal IAT): there is no central interval";
  return "";
}

std::string rank_threshold_problem(double rank, const std::vector<double>& t) {
  if (index_of(t, rank) == t.size())
    return sim::format_real(rank) + " is not one of the deadline thresholds";
  return "";
}

ConnectionMetrics::ConnectionMetrics(const workload::CbrConnections& connections, uint64_t warmup_ps,
                                     ConnectionMetricsConfig config)
    : connections_(&connections), warmup_ps_(warmup_ps), config_(std::move(config)) {
  for (const std::string& p : {deadline_thresholds_problem(config_.deadline_thresholds),
                               jitter_bins_problem(config_.jitter_bins),
                               rank_threshold_problem(config_.rank_threshold, config_.deadline_thresholds)})
    if (!p.empty()) throw std::invalid_argument("connection metrics: " + p);
  deadline_index_ = index_of(config_.deadline_thresholds, 1.0);
  rank_index_ = index_of(config_.deadline_thresholds, config_.rank_threshold);
  const size_t n = connections.size();
  for (size_t c = 0; c < n; ++c)
    if (connections[c].deadline_ps == 0 || connections[c].interval_ps == 0)
      throw std::invalid_argument("connection " + std::to_string(c) + " has no deadline or no nominal IAT (0 ps)");
  state_.resize(n);
  stride_ = threshold_intervals() + iat_intervals();
  counts_.assign(n * stride_, 0);
  if (config_.stop_after_packets > 0) {
    pending_ = n;
    by_end_.resize(n);
    for (size_t c = 0; c < n; ++c) by_end_[c] = static_cast<uint32_t>(c);
    std::stable_sort(by_end_.begin(), by_end_.end(),
                     [&](uint32_t a, uint32_t b) { return connections[a].end_ps < connections[b].end_ps; });
  }
}

void ConnectionMetrics::count(uint32_t c, uint64_t created_ps, uint64_t delivered_ps) {
  const workload::CbrConnection& k = (*connections_)[c];
  ConnectionState& s = state_[c];
  const uint64_t delay = delivered_ps - created_ps;
  // The first threshold interval whose bound holds the delay; a delay at the bound is within.
  const std::vector<double>& t = config_.deadline_thresholds;
  size_t b = 0;
  while (b < t.size() && delay > scaled_ps(t[b], k.deadline_ps)) ++b;
  uint32_t* counts = &counts_[c * stride_];
  counts[b]++;
  if (s.delivered > 0) {
    // One path per connection (one DLID, one SL): its packets arrive in order.
    const uint64_t iat = delivered_ps > s.last_arrival_ps ? delivered_ps - s.last_arrival_ps : 0;
    const std::vector<double>& e = config_.jitter_bins;
    size_t i = 0;
    while (i < e.size() && iat >= scaled_ps(e[i], k.interval_ps)) ++i;
    counts[threshold_intervals() + i]++;
  }
  s.last_arrival_ps = delivered_ps;
  s.delay_sum_ps += delay;
  if (delay > s.delay_max_ps) s.delay_max_ps = delay;
  ++s.delivered;
  // Stop rule: a connection stops holding the run when it reaches N, unless its end was
  // already swept (then it no longer held it).
  if (config_.stop_after_packets > 0 && s.delivered == config_.stop_after_packets && k.end_ps > swept_ps_) --pending_;
}

uint64_t ConnectionMetrics::within(uint32_t c, size_t k) const {
  uint64_t sum = 0;
  for (size_t j = 0; j <= k; ++j) sum += interval_count(c, j);
  return sum;
}

uint64_t ConnectionMetrics::late(uint32_t c) const { return state_[c].delivered - within(c, deadline_index_); }

double ConnectionMetrics::delay_mean_ps(uint32_t c) const {
  const ConnectionState& s = state_[c];
  return s.delivered == 0 ? 0.0 : static_cast<double>(s.delay_sum_ps) / static_cast<double>(s.delivered);
}

std::vector<SlConnectionSummary> ConnectionMetrics::by_sl() const {
  constexpr size_t kSls = 16;
  std::vector<SlConnectionSummary> sl(kSls);
  std::vector<double> delay_sum(kSls, 0.0);
  // Best and worst by exact comparison of fractions (a/b against c/d as a d against c b, all
  // counts below 2^32), so ties are true ties and go to the lowest index.
  std::vector<uint64_t> best_in(kSls), best_n(kSls), worst_in(kSls), worst_n(kSls);
  const size_t T = threshold_intervals() - 1, I = iat_intervals();
  for (size_t k = 0; k < kSls; ++k) {
    sl[k].sl = static_cast<uint8_t>(k);
    sl[k].within.assign(T, 0);
    sl[k].iat.assign(I, 0);
  }
  for (uint32_t c = 0; c < state_.size(); ++c) {
    const uint8_t l = (*connections_)[c].sl & 0xF;
    SlConnectionSummary& a = sl[l];
    const ConnectionState& s = state_[c];
    a.connections++;
    if (s.delivered == 0) continue;
    a.measured_connections++;
    a.packets += s.delivered;
    a.late += late(c);
    uint64_t cum = 0;
    for (size_t j = 0; j < T; ++j) {
      cum += interval_count(c, j);
      a.within[j] += cum;
    }
    for (size_t j = 0; j < I; ++j) {
      a.iat[j] += iat_count(c, j);
      a.iat_samples += iat_count(c, j);
    }
    delay_sum[l] += static_cast<double>(s.delay_sum_ps);
    a.delay_max_ps = std::max(a.delay_max_ps, s.delay_max_ps);
    const uint64_t in = within(c, rank_index_), n = s.delivered;
    if (n < config_.rank_min_packets) continue;
    if (a.best == workload::kNoConnection || in * best_n[l] > best_in[l] * n) {
      a.best = c;
      best_in[l] = in;
      best_n[l] = n;
    }
    if (a.worst == workload::kNoConnection || in * worst_n[l] < worst_in[l] * n) {
      a.worst = c;
      worst_in[l] = in;
      worst_n[l] = n;
    }
  }
  std::vector<SlConnectionSummary> out;
  for (size_t k = 0; k < kSls; ++k) {
    SlConnectionSummary& a = sl[k];
    if (a.connections == 0) continue;
    if (a.packets > 0) a.delay_mean_ps = delay_sum[k] / static_cast<double>(a.packets);
    if (a.best != workload::kNoConnection) {
      a.best_fraction = static_cast<double>(best_in[k]) / static_cast<double>(best_n[k]);
      a.worst_fraction = static_cast<double>(worst_in[k]) / static_cast<double>(worst_n[k]);
    }
    out.push_back(std::move(a));
  }
  return out;
}

bool ConnectionMetrics::stop_reached(uint64_t now_ps) {
  if (config_.stop_after_packets == 0 || state_.empty()) return false;
  // Connections whose end has passed stop holding the run; those that had reached N
  // already stopped holding it when they did.
  while (next_end_ < by_end_.size() && (*connections_)[by_end_[next_end_]].end_ps <= now_ps) {
    if (state_[by_end_[next_end_]].delivered < config_.stop_after_packets) --pending_;
    ++next_end_;
  }
  swept_ps_ = std::max(swept_ps_, now_ps);
  return pending_ == 0;
}

uint64_t ConnectionMetrics::slowest_delivered() const {
  uint64_t slowest = config_.stop_after_packets;
  bool any = false;
  for (uint32_t c = 0; c < state_.size(); ++c) {
    if ((*connections_)[c].end_ps <= swept_ps_) continue;
    slowest = any ? std::min<uint64_t>(slowest, state_[c].delivered) : state_[c].delivered;
    any = true;
  }
  return slowest;
}

}  // namespace ibvp::metrics
