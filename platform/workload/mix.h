#pragma once
// A traffic mix whose real-time to best-effort ratio changes in phases, from one scenario
// key (`mix:`; issue 11, seed 003 Sec. 4.2, docs/mix.md).
//
// seed 003 Sec. 4.2: "For a specified input load, we vary the ratio of the two classes
// (x : y, where x/(x + y) is the fraction of the load for the VBR component and y/(x + y)
// is the fraction of the load for the best-effort component) ... We changed the load in 5
// different phases during a simulation run to simulate dynamic workload. In the beginning
// of the simulation, the real-time to best-effort traffic ratio is 20:80. ... Later the
// ratio changes to 30:70, 50:50, 70:30, and finally 80:20."
//
// The real-time streams come from traces of fixed bit rates ("seven real MPEG-2 video
// traces with different bandwidth requirements", "several simultaneous streams per node"),
// so the real-time load of a phase is set by how many streams run; the best-effort load
// ("generated with a given injection rate ... Poisson") by the injection rate. Here: in
// each phase, each source host runs the first k of its video flows (scenario order), k
// chosen so their mean rates come nearest to the phase's real-time share of total_load;
// its Poisson and constant flows share the best-effort part of total_load equally.
#include <cstdint>
#include <string>
#include <vector>

#include "models/sim/params.h"
#include "models/sim/rng.h"
#include "platform/scenario/scenario.h"

namespace ibvp::workload {

// The declared keys of `mix:` (phases are a raw list, read by the scenario loader).
const sim::ParamGroup& mix_params();

struct MixPhase {
  uint64_t start_ps = 0, end_ps = 0;  // [start, end)
  uint32_t real_time_percent = 0, best_effort_percent = 0;
};

// Phase p spans [p L, (p + 1) L) with L = phase_length, or duration / phases (whole ps)
// when phase_length is 0; the last phase runs to the end of the run.
std::vector<MixPhase> mix_phases(const MixConfig& mix, uint64_t duration_ps);

// Index of the phase holding t (the last one past its end).
size_t phase_at(const std::vector<MixPhase>& phases, uint64_t t_ps);

// What the mix makes of one flow.
enum class MixClass : uint8_t { none, real_time, best_effort };
struct FlowMix {
  MixClass cls = MixClass::none;
  std::vector<bool> active;     // real time: it sends in phase p
  std::vector<double> load;     // best effort: its offered load in phase p, fraction of its source link
  double mean_rate_bytes_per_s = 0;  // real time: the stream's mean rate
};

// A video flow's mean rate: its trace's mean frame (or the generator's, video_bit_rate / 8
// / 30 bytes) per frame_period.
double video_mean_rate_bytes_per_s(const FlowConfig& f);

// A phase of an open-loop source's offered load (the mix's best-effort flows): until end_ps,
// packets are generated with this mean interval; 0: none.
struct LoadPhase {
  uint64_t end_ps;
  double mean_interval_ps;
};

// The generation time after `from` under the phases' rates (Poisson: exponential intervals
// drawn from `rng`; else constant); `fresh`: `from` is a start (a constant source sends at
// once). A phase boundary restarts the arrival process there: exact for Poisson
// (memoryless), a constant source sends its first packet of the phase at the boundary.
// After the last phase: infinity. Fabric-only sources (FlowSource) and HCA hosts' programs
// (apps::FlowStreams) share it.
double next_phased_time(const std::vector<LoadPhase>& phases, double from, bool fresh, bool poisson, sim::Rng& rng);

// The plan of every flow (`flows`: the scenario's flows and the traffic section's streams,
// as the Fabric builds them). `link_bytes_per_s[i]`: data rate of flow i's source link.
// Throws std::invalid_argument with the reason when a source has best-effort flows but no
// video flow while some phase asks for real-time load, or the reverse, or its streams
// together cannot reach its largest real-time share (the loader turns it into a ConfigError).
std::vector<FlowMix> plan_mix(const MixConfig& mix, const std::vector<FlowConfig>& flows,
                              const std::vector<double>& link_bytes_per_s, uint64_t duration_ps);

}  // namespace ibvp::workload
