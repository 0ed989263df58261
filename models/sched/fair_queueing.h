#pragma once
// Fair Queueing (Demers, Keshav and Shenker, seed 003's [9]) with weights, as seed 003
// Sec. 3.1 compares it with VirtualClock: each packet gets a finish tag, the time its last
// bit would leave in a bit-by-bit weighted round robin (the fluid system), and packets go in
// the order of their tags. The fluid system's round number R(t) is what makes Fair Queueing
// the costlier of the two ("maintaining the round robin number", Sec. 3.1): R grows at
// C / (sum of the rates of the connections active in the fluid system), a connection being
// active while its last finish tag is ahead of R.
//
//   F_i^k = max(F_i^(k-1), R(arrival)) + L / r_i      (L bits, r_i its rate in b/s)
//
// F and R are in seconds of service (L / r_i). Pure C++ like virtual_clock.h; connections
// are indices the user assigns. Arithmetic is IEEE double in a fixed order, so a run's tags
// are the same bit for bit on every run.
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace ibvp::sched {

class FairQueueing {
 public:
  // `link_bps`: the capacity C the fluid system shares.
  explicit FairQueueing(double link_bps) : link_bps_(link_bps) {}

  // A packet of `bits` of connection i (rate `rate_bps` > 0) arrives at `now_ps`; returns its
  // finish tag. Arrivals come in time order.
  double arrive(size_t i, uint64_t now_ps, double bits, double rate_bps) {
    advance(now_ps);
    if (i >= finish_.size()) {
      finish_.resize(i + 1, 0.0);
      rate_.resize(i + 1, 0.0);
      active_.resize(i + 1, false);
    }
    if (active_[i]) {
      active_weight_ += rate_bps - rate_[i];  // a connection whose rate changed
    } else {
      active_[i] = true;
      ++active_count_;
      active_weight_ += rate_bps;
    }
    rate_[i] = rate_bps;
    const double start = finish_[i] > round_ ? finish_[i] : round_;
    finish_[i] = start + bits / rate_bps;
    heap_.emplace(finish_[i], i);
    return finish_[i];
  }

  // R(now): the round number of the fluid system at `now_ps` (>= the last time asked).
  double round(uint64_t now_ps) {
    advance(now_ps);
    return round_;
  }
  // The connection's last finish tag (0 before its first packet).
  double finish(size_t i) const { return i < finish_.size() ? finish_[i] : 0.0; }
  // Rates of the connections active in the fluid system now (as of the last advance).
  double active_weight() const { return active_weight_; }

 private:
  // Runs the fluid system from t_ps_ to now_ps: R grows at C / active weight, and each
  // connection leaves when R reaches its last finish tag (iterated deletion).
  void advance(uint64_t now_ps) {
    if (now_ps <= t_ps_) return;
    double t = static_cast<double>(t_ps_) * 1e-12;
    const double now = static_cast<double>(now_ps) * 1e-12;
    while (!heap_.empty()) {
      const auto [f, i] = heap_.top();
      if (!active_[i] || finish_[i] != f) {  // a stale entry: a later packet of i replaced it
        heap_.pop();
        continue;
      }
      // When R reaches f at the present slope.
      const double reach = t + (f - round_) * active_weight_ / link_bps_;
      if (reach > now) break;
      heap_.pop();
      round_ = f;
      t = reach;
      active_[i] = false;
      active_weight_ -= rate_[i];
      if (--active_count_ == 0) active_weight_ = 0;  // no rounding residue when idle
    }
    if (active_weight_ > 0) round_ += (now - t) * link_bps_ / active_weight_;
    t_ps_ = now_ps;
  }

  double link_bps_;
  double round_ = 0.0;
  uint64_t t_ps_ = 0;
  double active_weight_ = 0.0;
  size_t active_count_ = 0;
  std::vector<double> finish_;
  std::vector<double> rate_;
  std::vector<bool> active_;
  // (finish tag, connection), smallest first; entries go stale when a connection's tag moves.
  std::priority_queue<std::pair<double, size_t>, std::vector<std::pair<double, size_t>>, std::greater<>> heap_;
};

}  // namespace ibvp::sched
