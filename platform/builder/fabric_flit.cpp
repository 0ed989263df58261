// switch.model flit_wormhole: the fabric's switches as seed 003's flit routers
// (models/flit/flit_fabric.h, docs/seed003.md). The channel adapters and their cables stay
// as they are; the routers and the cables between them are one FlitFabric.
#include <cmath>

#include "platform/builder/fabric.h"
#include "platform/params/config_error.h"

namespace ibvp {

// What the IBA switch does and the flit router does not is refused, not ignored.
void Fabric::prepare_flit_model() {
  const sw::SwitchConfig& c = scenario_.switch_cfg;
  auto refuse = [&](const std::string& key, const std::string& what) {
    throw ConfigError(scenario_.source, key, 0, what + " is not modelled by switch.model flit_wormhole",
                      "remove it, or use switch.model: iba");
  };
  if (!scenario_.multicast.empty() || scenario_.multicast_bandwidth.enabled) refuse("multicast", "multicast");
  if (scenario_.connections.enabled) refuse("connections", "seed 002's admitted connections (VLArb high tables)");
  if (c.scheduling != sw::Scheduling::fifo)
    refuse("switch.scheduling", "the IBA switch's rate scheduler (the flit router's variant chooses its own)");
  if (c.ecn.policy != sw::MarkingPolicy::none) refuse("switch.ecn", "congestion marking");
  if (c.hoq_life < sw::kLifetimeInfinite) refuse("switch.hoq_life", "a finite head-of-queue lifetime");
  if (c.switch_life < sw::kLifetimeInfinite) refuse("switch.switch_life", "a finite switch lifetime");
  if (!c.lifetime_overrides.empty()) refuse("switch.lifetime_overrides", "lifetimes");
  if (c.path_selection != sw::PathSelection::first) refuse("switch.path_selection", "adaptive path selection");
  // Every cable, endpoint cables too, runs at the flit router's link rate (Sec. 4.1).
  const uint64_t bps = static_cast<uint64_t>(std::llround(c.flit.link_bps));
  for (topo::Link& l : scenario_.topology.links) l.cfg.data_bps = bps;
}

void Fabric::build_flit_fabric() {
  const topo::Topology& t = scenario_.topology;
  std::vector<flit::FlitFabric::Router> routers;
  std::vector<flit::FlitFabric::Edge> edges;
  for (uint32_t n = 0; n < t.nodes.size(); ++n)
    if (t.nodes[n].kind == topo::NodeKind::switch_node) routers.push_back({n, t.nodes[n].num_ports});
  for (const topo::Link& cable : t.links) {
    const bool a_sw = t.nodes[cable.a.node].kind == topo::NodeKind::switch_node;
    const bool b_sw = t.nodes[cable.b.node].kind == topo::NodeKind::switch_node;
    if (a_sw && !b_sw) edges.push_back({cable.a.node, cable.a.port, cable.b.node});
    if (b_sw && !a_sw) edges.push_back({cable.b.node, cable.b.port, cable.a.node});
  }
  flit::FlitFabric::Options opt;
  opt.flit = scenario_.switch_cfg.flit;
  opt.sl2vl = scenario_.switch_cfg.sl2vl;
  opt.unreserved_rate = scenario_.switch_cfg.unreserved_rate;
  // Best effort's offered rate per flow and phase (unreserved offered or last): a mix flow's
  // load of each phase, another open-loop flow's load, of its source's link.
  const std::vector<workload::MixPhase> phases =
      scenario_.mix.enabled ? workload::mix_phases(scenario_.mix, scenario_.duration.value())
                            : std::vector<workload::MixPhase>{};
  opt.offered_bps.resize(flows_.size());
  opt.frame_period_ps.resize(flows_.size(), 0);
  for (size_t i = 0; i < flows_.size(); ++i) {
    const FlowConfig& f = flows_[i];
    if (f.generator == GeneratorKind::video) opt.frame_period_ps[i] = f.frame_period.value();
    if (f.generator == GeneratorKind::video || f.reserved_rate > 0) continue;
    const double link_bps = opt.flit.link_bps;  // every cable runs at it (prepare_flit_model)
    // Control and trace flows come after the mix's flows (build_control_flows): no plan.
    if (i < mix_plan_.size() && mix_plan_[i].cls == workload::MixClass::best_effort) {
      for (size_t p = 0; p < phases.size(); ++p)
        opt.offered_bps[i].push_back({phases[p].end_ps, mix_plan_[i].load[p] * link_bps});
    } else if (f.generator != GeneratorKind::saturating) {
      opt.offered_bps[i].push_back({~uint64_t{0}, f.load * link_bps});
    }
  }
  flit_ = std::make_unique<flit::FlitFabric>("flit_fabric", opt, routers, edges, packets_, payloads_, probe_);
}

// Stage 2's routing from the subnet manager's LFTs: one output per (router, channel adapter).
void Fabric::program_flit_routes() {
  const topo::Topology& t = scenario_.topology;
  for (const sw::AltTable& alt : routing_.alternatives)
    for (const sw::AltTable::Entry& e : alt.entry)
      if (e.count > 1)
        throw ConfigError(scenario_.source, "routing", 0,
                          "routing engine '" + scenario_.routing + "' gives alternative outputs, which the flit "
                                                                   "routers do not choose among",
                          "use a single-path engine (minhop, updn, dfs, ...) or switch.model: iba");
  for (uint32_t ca = 0; ca < t.nodes.size(); ++ca) {
    if (t.nodes[ca].kind == topo::NodeKind::switch_node || t.link_at(ca, 1) < 0) continue;
    flit_->set_lids(ca, t.nodes[ca].lid, static_cast<uint16_t>(1u << t.nodes[ca].lmc));
    for (uint32_t s = 0; s < t.nodes.size(); ++s) {
      if (t.nodes[s].kind != topo::NodeKind::switch_node) continue;
      const uint8_t port = routing_.lft.at(s).lookup(t.nodes[ca].lid);
      if (port != sw::Lft::kNoRoute && port != 0) flit_->set_route(s, ca, port);
    }
  }
}

}  // namespace ibvp
