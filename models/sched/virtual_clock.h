#pragma once
// VirtualClock (Zhang, seed 003's [31]) as seed 003 Sec. 3.1 builds it in hardware: two
// variables per connection, auxVC (the connection's virtual clock) and Vtick (the time one
// unit of its data takes at its reserved rate, set when the connection is set up). The
// unit waiting with the smallest auxVC + Vtick goes next, and auxVC then grows by Vtick, so
// backlogged connections share the link in proportion to their reserved rates.
//
// Pure C++ (no SystemC, no model types): the IBA switch (models/switch), the HCA firmware's
// QP scheduler (firmware/default) and a flit-level router use this one class. Times and
// Vticks are in whatever unit the user picks (the switch and the firmware use ns); a
// connection is an index the user assigns, and the table grows to fit it.
//
// Counters (counter_bits):
//  - 0: unbounded 64-bit counters with Zhang's real-time term: a connection that gets work
//    after being idle starts from max(auxVC, now), so idling earns no credit.
//  - n: n-bit counters with the paper's overflow rule and no real-time term: when auxVC_i
//    would overflow, auxVC_i restarts at 0 and every other auxVC_j becomes auxVC_j - auxVC_i
//    (0 if negative). auxVC_i is the value before the add, and the Vtick is then added to
//    the restarted counter, so the differences between the clocks, which decide the order
//    of service, survive the overflow (exactly so while no clock is behind the overflowing
//    one). The counter must hold the largest Vtick (Sec. 3.1: 16 bits sufficed there).
#include <algorithm>
#include <cstdint>
#include <vector>

namespace ibvp::sched {

// Vtick of `bytes` at `rate_bps`, in ns, rounded up (a packet is never charged less than
// its time at the reserved rate). rate_bps > 0.
inline uint64_t vtick_ns(uint64_t bytes, uint64_t rate_bps) {
  // bytes * 8e9 overflows 64 bits only above 2.3 GB, far beyond any packet or message.
  return (bytes * 8'000'000'000ull + rate_bps - 1) / rate_bps;
}

class VirtualClock {
 public:
  explicit VirtualClock(uint32_t counter_bits = 0)
      : bits_(counter_bits), limit_(counter_bits == 0 || counter_bits >= 64 ? ~uint64_t{0}
                                                                             : (uint64_t{1} << counter_bits) - 1) {}

  uint32_t counter_bits() const { return bits_; }
  // The largest value a counter holds (and so the largest Vtick it can take).
  uint64_t counter_limit() const { return limit_; }
  size_t size() const { return aux_.size(); }
  // Makes room for connections 0 .. n-1 (new ones start at auxVC 0).
  void resize(size_t n) {
    if (n > aux_.size()) aux_.resize(n, 0);
  }
  uint64_t aux_vc(size_t i) const { return i < aux_.size() ? aux_[i] : 0; }

  // Connection i had nothing waiting and gets work at `now`. Unbounded counters: Zhang's
  // auxVC <- max(auxVC, now). Finite counters have no real-time term (Sec. 3.1).
  void activate(size_t i, uint64_t now) {
    resize(i + 1);
    if (bits_ == 0) aux_[i] = std::max(aux_[i], now);
  }
  // The stamp connection i's next unit would carry: the smallest goes first.
  uint64_t stamp(size_t i, uint64_t vtick) const { return aux_vc(i) + vtick; }
  // Connection i sent a unit of `vtick`.
  void charge(size_t i, uint64_t vtick) {
    resize(i + 1);
    if (bits_ == 0 || aux_[i] + vtick <= limit_) {
      aux_[i] += vtick;
      return;
    }
    // Sec. 3.1's overflow rule.
    const uint64_t old = aux_[i];
    for (uint64_t& a : aux_) a = a > old ? a - old : 0;
    aux_[i] = std::min(vtick, limit_);
  }

 private:
  uint32_t bits_;
  uint64_t limit_;
  std::vector<uint64_t> aux_;
};

}  // namespace ibvp::sched
