#include "platform/workload/mix.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>

#include "platform/workload/video_frames.h"

namespace ibvp::workload {

const sim::ParamGroup& mix_params() {
  static const sim::ParamGroup group = [] {
    sim::GroupBuilder<MixConfig> b(
        "mix",
        "A real-time / best-effort mix whose ratio changes in phases (seed 003 Sec. 4.2; docs/mix.md); present "
        "means enabled.");
    b.real("total_load", &MixConfig::total_load, "fraction",
           "Offered load of both classes together, as a fraction of each source's link.")
        .real_range(0.0, 1.0, true);
    b.raw_list("phases",
               "Per phase, [real-time, best-effort] percent of total_load summing to 100, e.g. [[20, 80], [30, 70], "
               "[50, 50], [70, 30], [80, 20]].")
        .require();
    b.time("phase_length", &MixConfig::phase_length, "Length of each phase; the last one runs to the end of the run.")
        .defaults_to("duration / number of phases")
        .real_range(1e6, 3600e12);
    b.rule("Video flows are the real-time class, poisson and constant flows the best-effort class (their load "
           "comes from the mix); every source sends both classes unless a class's share is 0 in every phase.");
    b.on_begin([](MixConfig& c) { c.enabled = true; });
    return b.build();
  }();
  return group;
}

std::vector<MixPhase> mix_phases(const MixConfig& mix, uint64_t duration_ps) {
  std::vector<MixPhase> out;
  const uint64_t n = mix.phases.size();
  if (n == 0) return out;
  const uint64_t len = mix.phase_length.value() > 0 ? mix.phase_length.value() : duration_ps / n;
  for (uint64_t p = 0; p < n; ++p) {
    MixPhase ph;
    ph.start_ps = p * len;
    ph.end_ps = p + 1 == n ? std::max(duration_ps, ph.start_ps) : (p + 1) * len;
    ph.real_time_percent = mix.phases[p][0];
    ph.best_effort_percent = mix.phases[p][1];
    out.push_back(ph);
  }
  return out;
}

size_t phase_at(const std::vector<MixPhase>& phases, uint64_t t_ps) {
  for (size_t p = 0; p + 1 < phases.size(); ++p)
    if (t_ps < phases[p].end_ps) return p;
  return phases.empty() ? 0 : phases.size() - 1;
}

double next_phased_time(const std::vector<LoadPhase>& phases, double from, bool fresh, bool poisson, sim::Rng& rng) {
  for (const LoadPhase& ph : phases) {
    const double end = static_cast<double>(ph.end_ps);
    if (from >= end) continue;
    if (ph.mean_interval_ps > 0) {
      const double t = from + (poisson ? rng.exponential(ph.mean_interval_ps) : fresh ? 0.0 : ph.mean_interval_ps);
      if (t < end) return t;
    }
    from = end;
    fresh = true;
  }
  return std::numeric_limits<double>::infinity();
}

double video_mean_rate_bytes_per_s(const FlowConfig& f) {
  double frame_bytes = 0;
  if (!f.video_frame_bytes.empty()) {
    for (uint32_t b : f.video_frame_bytes) frame_bytes += b;
    frame_bytes /= static_cast<double>(f.video_frame_bytes.size());
  } else {
    // Mpeg2FrameGenerator: the mean over a GOP is the rate's share of one 1/30 s frame.
    frame_bytes = f.video_bit_rate / 8.0 / kVideoFramesPerSecond;
  }
  return frame_bytes / (static_cast<double>(f.frame_period.value()) * 1e-12);
}

namespace {
// Bytes per second as Mb/s with one decimal, for messages.
std::string mbps(double bytes_per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytes_per_s * 8.0 / 1e6);
  return buf;
}
}  // namespace

std::vector<FlowMix> plan_mix(const MixConfig& mix, const std::vector<FlowConfig>& flows,
                              const std::vector<double>& link_bytes_per_s, uint64_t duration_ps) {
  const std::vector<MixPhase> phases = mix_phases(mix, duration_ps);
  const size_t n = phases.size();
  std::vector<FlowMix> plan(flows.size());
  uint32_t max_rt = 0, max_be = 0;
  for (const MixPhase& ph : phases) {
    max_rt = std::max(max_rt, ph.real_time_percent);
    max_be = std::max(max_be, ph.best_effort_percent);
  }
  // Each source's flows of either class, in scenario order.
  std::map<std::string, std::pair<std::vector<size_t>, std::vector<size_t>>> by_source;
  std::vector<std::string> order;
  for (size_t i = 0; i < flows.size(); ++i) {
    const FlowConfig& f = flows[i];
    const bool rt = f.generator == GeneratorKind::video;
    const bool be = f.generator == GeneratorKind::poisson || f.generator == GeneratorKind::constant;
    if (!rt && !be) continue;
    if (!by_source.count(f.src)) order.push_back(f.src);
    (rt ? by_source[f.src].first : by_source[f.src].second).push_back(i);
  }
  for (const std::string& src : order) {
    const auto& [rt, be] = by_source[src];
    if (rt.empty() && max_rt > 0)
      throw std::invalid_argument(src + " sends best-effort flows but no video flow, and a phase gives real-time traffic " +
                                  std::to_string(max_rt) + " %");
    if (be.empty() && max_be > 0)
      throw std::invalid_argument(src + " sends video flows but no poisson or constant flow, and a phase gives "
                                  "best-effort traffic " + std::to_string(max_be) + " %");
    const double link = link_bytes_per_s[rt.empty() ? be.front() : rt.front()];
    std::vector<double> prefix{0.0};  // mean rate of the first k streams
    for (size_t i : rt) {
      plan[i].cls = MixClass::real_time;
      plan[i].mean_rate_bytes_per_s = video_mean_rate_bytes_per_s(flows[i]);
      plan[i].active.assign(n, false);
      prefix.push_back(prefix.back() + plan[i].mean_rate_bytes_per_s);
    }
    for (size_t p = 0; p < n; ++p) {
      const double target = mix.total_load * phases[p].real_time_percent / 100.0 * link;
      if (!rt.empty() && target > prefix.back() * (1.0 + 1e-9))
        throw std::invalid_argument("the video flows of " + src + " offer " + mbps(prefix.back()) +
                                    " Mb/s together; phase " + std::to_string(p) + " asks for " + mbps(target) +
                                    " Mb/s of real-time traffic");
      // The first k streams whose summed mean rate is nearest the target (the fewer on a tie).
      size_t k = 0;
      for (size_t j = 1; j < prefix.size(); ++j)
        if (std::fabs(prefix[j] - target) < std::fabs(prefix[k] - target)) k = j;
      for (size_t j = 0; j < k; ++j) plan[rt[j]].active[p] = true;
    }
    for (size_t i : be) {
      plan[i].cls = MixClass::best_effort;
      plan[i].load.resize(n);
      for (size_t p = 0; p < n; ++p)
        plan[i].load[p] = mix.total_load * phases[p].best_effort_percent / 100.0 / static_cast<double>(be.size());
    }
  }
  return plan;
}

}  // namespace ibvp::workload
