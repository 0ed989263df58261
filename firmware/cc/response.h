// Source response functions of seed 004 Sec. 6.2: how a source's rate limit falls on a
// marked ACK (f_dec) and rises on an unmarked one (f_inc), for a flow limited between
// R_min and R_max. Firmware code: no SystemC, no model headers; rates in any unit (the
// paper's figures use packets per second, so that 1/r is the interval between ACKs).
//
// Sec. 6.2's principles fix f_inc from f_dec: a flow decreased by one mark returns to its
// previous rate in constant time T = 1/R_min, and the rate after an unmarked ACK is the
// continuous recovery curve F_inc^r evaluated one ACK interval (1/r) later.
//
// Adding a response function is one more class here (or in a file beside it) and a name in
// make_response().
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

namespace ibvp::fw::cc {

struct RateLimits {
  double r_max = 1.0;
  double r_min = 1.0 / 256;  // Sec. 6.2: R_max / 256, the lowest rate of IBA's 8-bit IPD
  double t() const { return 1.0 / r_min; }  // T: the recovery time from one mark
};

class ResponseFunction {
 public:
  explicit ResponseFunction(RateLimits limits) : l_(limits) {}
  virtual ~ResponseFunction() = default;
  virtual const char* name() const = 0;
  // Rate after a marked ACK at rate r.
  virtual double decrease(double r) const = 0;
  // Rate after an unmarked ACK at rate r: min(F_inc^r(1/r), R_max).
  virtual double increase(double r) const = 0;
  // F_inc(t): the rate t after a decrease to R_min with no mark since (Fig. 6).
  virtual double recovery(double t) const = 0;
  // Time F_inc takes from R_min to R_max.
  virtual double recovery_time() const = 0;
  const RateLimits& limits() const { return l_; }

 protected:
  RateLimits l_;
};

// Fast Increase Multiplicative Decrease: f_dec = max(r/m, R_min), F_inc(t) = R_min m^(t/T),
// f_inc = min(r m^(R_min/r), R_max).
class Fimd : public ResponseFunction {
 public:
  Fimd(RateLimits l, double m = 2) : ResponseFunction(l), m_(m) {}
  const char* name() const override { return "fimd"; }
  double decrease(double r) const override { return std::max(r / m_, l_.r_min); }
  double increase(double r) const override { return std::min(r * std::pow(m_, l_.r_min / r), l_.r_max); }
  double recovery(double t) const override { return std::min(l_.r_min * std::pow(m_, t / l_.t()), l_.r_max); }
  double recovery_time() const override { return l_.t() * std::log(l_.r_max / l_.r_min) / std::log(m_); }

 private:
  double m_;
};

// Linear Inter-Packet Delay: a mark adds one to the IPD (rate R_max/(1+ipd)):
// f_dec = max(R_max/(R_max/r + 1), R_min), F_inc(t) = R_max/(R_max/R_min - t/T),
// f_inc = min(r/(1 - R_min/R_max), R_max).
class Lipd : public ResponseFunction {
 public:
  explicit Lipd(RateLimits l) : ResponseFunction(l) {}
  const char* name() const override { return "lipd"; }
  double decrease(double r) const override { return std::max(l_.r_max / (l_.r_max / r + 1), l_.r_min); }
  double increase(double r) const override { return std::min(r / (1 - l_.r_min / l_.r_max), l_.r_max); }
  double recovery(double t) const override {
    const double d = l_.r_max / l_.r_min - t / l_.t();
    return d <= 1 ? l_.r_max : l_.r_max / d;
  }
  double recovery_time() const override { return (l_.r_max / l_.r_min - 1) * l_.t(); }
};

// Additive Increase Multiplicative Decrease: f_dec = max(r/m, R_min) (the paper prints
// min, a typo: with min every mark would drop the rate to R_min at once), and a linear rise
// of slope (m-1) R_min^2 per unit time, so f_inc = min(r + (m-1) R_min^2 / r, R_max).
class Aimd : public ResponseFunction {
 public:
  Aimd(RateLimits l, double m = 2) : ResponseFunction(l), m_(m) {}
  const char* name() const override { return "aimd"; }
  double decrease(double r) const override { return std::max(r / m_, l_.r_min); }
  double increase(double r) const override {
    return std::min(r + (m_ - 1) * l_.r_min * l_.r_min / r, l_.r_max);
  }
  double recovery(double t) const override {
    return std::min(l_.r_min + (m_ - 1) * l_.r_min * l_.r_min * t, l_.r_max);
  }
  double recovery_time() const override { return (l_.r_max - l_.r_min) / ((m_ - 1) * l_.r_min * l_.r_min); }

 private:
  double m_;
};

// By name ("fimd", "lipd", "aimd"); null for an unknown name.
inline std::unique_ptr<ResponseFunction> make_response(const std::string& name, RateLimits l, double m = 2) {
  if (name == "fimd") return std::make_unique<Fimd>(l, m);
  if (name == "lipd") return std::make_unique<Lipd>(l);
  if (name == "aimd") return std::make_unique<Aimd>(l, m);
  return nullptr;
}

// Sec. 6.3: IBA paces a flow by an IPD of 0..255 packet times, so a rate limit r becomes
// the discrete rate R_max/(1+ipd) with the smallest ipd whose rate does not exceed r.
inline unsigned ipd_for(double r, const RateLimits& l) {
  const double ipd = std::ceil(l.r_max / r - 1 - 1e-9);
  return static_cast<unsigned>(std::clamp(ipd, 0.0, 255.0));
}
inline double rate_of_ipd(unsigned ipd, const RateLimits& l) { return l.r_max / (1.0 + ipd); }

}  // namespace ibvp::fw::cc
