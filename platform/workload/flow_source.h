#pragma once
// The generators of fabric-only studies: constant-rate, Poisson and saturating sources,
// each with a destination pattern (fixed, uniform, hot-spot).
//
// Open-loop sources (constant, Poisson) produce packets at generation times g0 < g1 < ...;
// the packets not yet sent are the backlog at the source, and a packet's latency counts from
// its generation time. The backlog is never stored: its oldest entry is the one generation
// time kept, and the next is drawn when that one is taken.
#include <cstdint>
#include <optional>
#include <vector>

#include "models/endpoint/traffic_source.h"
#include "models/sim/rng.h"
#include "platform/workload/mix.h"
#include "platform/workload/on_off.h"
#include "platform/scenario/scenario.h"

namespace ibvp::workload {

// The rate a flow reserves, b/s, that rate schedulers charge it at (seed 003 Sec. 3.1): its
// reserved_rate; without one, a video flow's stream mean rate (the mean frame size of its
// trace, or its video_bit_rate, over frame_period; seed 003 Sec. 4.2: a stream's messages
// carry its bandwidth requirement) and 0 (none) for other flows.
uint64_t reserved_rate_bps(const FlowConfig& cfg);

struct Destination {
  uint32_t node;
  uint16_t dlid;
};

class FlowSource : public ep::TrafficSource {
 public:
  // `packet_time_ps`: serialization time of one packet on the source's link, from which an
  // offered load becomes an inter-arrival time. `others` are the uniform-pattern candidates.
  // `phases` (constant and Poisson only): the load changes at each phase's end instead of
  // being cfg.load throughout.
  FlowSource(const FlowConfig& cfg, uint32_t flow_index, uint64_t packet_time_ps, Destination fixed,
             std::vector<Destination> others, std::vector<Destination> hotspots, sim::Rng rng,
             std::vector<LoadPhase> phases = {});

  uint64_t next_ready_ps(uint64_t now_ps) override;
  void take(uint64_t now_ps, ep::PacketSpec& out) override;
  uint8_t next_sl() override;

  // The SL the subnet manager gave this source's path to each DLID (dfsssp's VL layers,
  // RoutingTables::path_sl), indexed by DLID; empty: every packet on the flow's sl. With it,
  // the next packet's destination is drawn when its SL is asked for, one packet ahead; the
  // random draws keep their order, so a run differs from one without path SLs only in SLs.
  void set_path_sl(std::vector<uint8_t> sl_by_dlid) { path_sl_ = std::move(sl_by_dlid); }

  // seed 000 Sec. 3.4 reliable datagrams (flows[i].multipath: random): every packet carries
  // random path bits from `rng`, a stream of its own so the flow's other draws are unchanged.
  void set_random_paths(sim::Rng rng) { path_rng_ = rng; }

  uint64_t generated() const { return taken_; }

 private:
  Destination pick_destination();

  GeneratorKind generator_;
  DestinationPattern pattern_;
  uint64_t start_ps_;
  uint64_t stop_ps_;
  double mean_interval_ps_;
  double next_gen_ps_;  // exact (fractional) generation time of the oldest backlog packet
  Destination fixed_;
  std::vector<Destination> others_;
  std::vector<Destination> hotspots_;
  double hotspot_fraction_;
  sim::Rng rng_;
  uint64_t taken_ = 0;
  std::optional<sim::Rng> path_rng_;
  std::optional<OnOffPeriods> periods_;  // FlowConfig::on_off_mean > 0
  std::vector<uint8_t> path_sl_;
  std::vector<LoadPhase> phases_;
  bool next_drawn_ = false;  // next_ holds the destination of the next packet
  Destination next_{};
};

}  // namespace ibvp::workload
