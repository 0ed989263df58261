#include "models/link/link_rate.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace ibvp::link {

namespace {
// IBA Vol. 2 (physical layer): per-lane signalling rate and line code of each speed.
// HDR and NDR use PAM4 with 64b/66b-family coding plus RS-FEC; their per-lane data rate is
// 50 and 100 Gb/s, which is what the encoding fields below yield.
const SpeedInfo kSpeeds[] = {
    {"SDR", 2'500'000'000ULL, 8, 10, "8b/10b"},
    {"DDR", 5'000'000'000ULL, 8, 10, "8b/10b"},
    {"QDR", 10'000'000'000ULL, 8, 10, "8b/10b"},
    {"FDR10", 10'312'500'000ULL, 64, 66, "64b/66b"},
    {"FDR", 14'062'500'000ULL, 64, 66, "64b/66b"},
    {"EDR", 25'781'250'000ULL, 64, 66, "64b/66b"},
    {"HDR", 53'125'000'000ULL, 16, 17, "PAM4, 256b/257b + RS(544,514) FEC"},
    {"NDR", 106'250'000'000ULL, 16, 17, "PAM4, 256b/257b + RS(544,514) FEC"},
};

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}
}  // namespace

const SpeedInfo& speed_info(Speed s) { return kSpeeds[static_cast<int>(s)]; }

bool parse_width(const std::string& text, Width& out) {
  const std::string t = upper(text);
  for (Width w : {Width::x1, Width::x2, Width::x4, Width::x8, Width::x12}) {
    if (t == width_name(w)) {
      out = w;
      return true;
    }
  }
  return false;
}

bool parse_speed(const std::string& text, Speed& out) {
  const std::string t = upper(text);
  for (int i = 0; i < 8; ++i) {
    if (t == kSpeeds[i].name) {
      out = static_cast<Speed>(i);
      return true;
    }
  }
  return false;
}

std::string width_name(Width w) { return std::to_string(static_cast<int>(w)) + "X"; }
const char* speed_name(Speed s) { return speed_info(s).name; }

uint8_t port_info_width_code(Width w) {
  switch (w) {
    case Width::x1: return 1;
    case Width::x2: return 16;
    case Width::x4: return 2;
    case Width::x8: return 4;
    case Width::x12: return 8;
  }
  return 0;
}

void port_info_speed_codes(Speed s, uint8_t& speed, uint8_t& ext) {
  speed = 4;
  ext = 0;
  switch (s) {
    case Speed::sdr: speed = 1; break;
    case Speed::ddr: speed = 2; break;
    case Speed::qdr: case Speed::fdr10: speed = 4; break;
    case Speed::fdr: ext = 1; break;
    case Speed::edr: ext = 2; break;
    case Speed::hdr: ext = 4; break;
    case Speed::ndr: ext = 8; break;
  }
}

LinkRate::LinkRate(const LinkConfig& cfg)
    : width_(cfg.width),
      speed_(cfg.speed),
      lanes_(static_cast<uint64_t>(cfg.width)),
      data_bps_(cfg.data_bps),
      info_(speed_info(cfg.speed)),
      propagation_(sc_core::sc_time::from_value(
          static_cast<uint64_t>(std::llround(cfg.length_m * cfg.propagation_ns_per_m * 1000.0)))) {}

double LinkRate::data_bits_per_s() const {
  if (data_bps_) return static_cast<double>(data_bps_);
  return static_cast<double>(lanes_) * static_cast<double>(info_.signal_hz) * info_.enc_payload /
         info_.enc_total;
}

uint64_t LinkRate::serialization_ps(uint32_t bytes) const {
  // ps = bytes * 8 * 1e12 * enc_total / (lanes * signal_hz * enc_payload), rounded up.
  using u128 = unsigned __int128;
  if (data_bps_) return static_cast<uint64_t>((static_cast<u128>(bytes) * 8u * 1'000'000'000'000ULL + data_bps_ - 1) / data_bps_);
  const u128 num = static_cast<u128>(bytes) * 8u * 1'000'000'000'000ULL * info_.enc_total;
  const u128 den = static_cast<u128>(lanes_) * info_.signal_hz * info_.enc_payload;
  return static_cast<uint64_t>((num + den - 1) / den);
}

sc_core::sc_time LinkRate::serialization(uint32_t bytes) const {
  // sc_time's default resolution is 1 ps; from_value counts in resolution units.
  return sc_core::sc_time::from_value(serialization_ps(bytes));
}

}  // namespace ibvp::link
