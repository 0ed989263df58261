#pragma once
// Deterministic random numbers: one scenario seed, one independent stream per component,
// derived from the component's name. The generator (xoshiro256**) and every conversion
// below are spelled out here rather than taken from <random>'s distributions, whose output
// differs between standard libraries: the same config and seed give the same run anywhere.
#include <cmath>
#include <cstdint>
#include <string>

namespace ibvp::sim {

class Rng {
 public:
  Rng(uint64_t seed, const std::string& component) {
    uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a of the component name
    for (unsigned char c : component) h = (h ^ c) * 0x100000001b3ULL;
    uint64_t x = seed ^ h;
    for (uint64_t& word : s_) word = splitmix64(x);
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n), without modulo bias (Lemire's method).
  uint64_t below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = -n % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }
  // Exponentially distributed with the given mean.
  double exponential(double mean) { return -mean * std::log1p(-uniform()); }
  // A stream of its own for one part of a component (a flow's ON/OFF periods beside its
  // packets), seeded from this stream's state and the part's name; this stream is unchanged.
  Rng derive(const std::string& part) const { return Rng(s_[0] ^ rotl(s_[2], 17), part); }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t s_[4];
};

}  // namespace ibvp::sim
