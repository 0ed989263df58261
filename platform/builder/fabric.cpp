#include "platform/builder/fabric.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "models/link/link_params.h"
#include "platform/apps/cbr_streams.h"
#include "platform/apps/control_agents.h"
#include "platform/apps/flow_streams.h"
#include "platform/apps/perftest.h"
#include "platform/params/config_error.h"
#include "platform/sm/multicast.h"
#include "platform/sm/route_stats.h"
#include "platform/workload/replicated_unicast.h"
#include "platform/workload/video_source.h"

namespace ibvp {

namespace {

// SystemC object names allow letters, digits and '_' safely; topology names come from real
// fabrics ("ibsw-r1 S12", "h1/mlx5_0") and are kept readable but made legal.
std::string module_name(const std::string& node_name, std::set<std::string>& used) {
  std::string n;
  for (char c : node_name) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) n = "n_" + n;
  std::string unique = n;
  for (int k = 2; used.count(unique); ++k) unique = n + "_" + std::to_string(k);
  used.insert(unique);
  return unique;
}

// Writes every packet crossing one cable, both directions, to a capture file.
class PcapTap : public link::LinkTap {
 public:
  PcapTap(const std::string& path, ib::PcapLinkType type) : writer_(path, type) {}
  void on_packet(int, const sc_core::sc_time& head_leaves, const ib::Packet& p) override {
    writer_.write(head_leaves, p);
  }

 private:
  ib::PcapWriter writer_;
};

// What a port holds before an in-band SM programs it. IBA leaves the reset contents of the
// SLtoVLMappingTable and VLArbitrationTable to the vendor (14.2.5.8, 14.2.5.9); here every SL
// maps to VL0 and only VL0 is served, so a port the SM has not reached shows it.
sw::Sl2VlTable inband_reset_sl2vl() { return sw::Sl2VlTable{}; }
link::VlArbConfig inband_reset_vlarb() {
  link::VlArbConfig c;
  c.low.push_back({0, 255});
  return c;
}

// An HCA host as the scenario describes it: the hca section's HCA, bus, memory and CPU, with
// the CA port of every endpoint (data VLs, buffers, SL2VL, VL arbitration).
driver::HostNodeConfig host_node_config(const Scenario& s) {
  driver::HostNodeConfig c;
  c.hca = s.hca_host.hca;
  c.hca.data_vls = s.endpoint_cfg.data_vls;
  c.hca.vl_buffer_bytes = s.endpoint_cfg.vl_buffer_bytes;
  c.hca.vl15_buffer_bytes = s.endpoint_cfg.vl15_buffer_bytes;
  c.hca.vlarb = s.endpoint_cfg.vlarb;
  c.hca.sl2vl = s.endpoint_cfg.sl2vl;
  if (c.hca.firmware_image.empty()) c.hca.firmware_image = driver::default_firmware_image();
  c.bus = s.hca_host.bus;
  c.memory = s.hca_host.memory;
  c.cpu.verbs_call_cost = s.hca_host.verbs_call_cost;
  return c;
}

}  // namespace

Fabric::Fabric(const Scenario& scenario, const std::string& out_dir) : scenario_(scenario) {
  const topo::Topology& t = scenario_.topology;
  if (scenario_.endpoint_cfg.data_vls != scenario_.switch_cfg.data_vls)
    throw ConfigError(scenario_.source, "endpoint.data_vls", 0,
                      "endpoints operate " + std::to_string(scenario_.endpoint_cfg.data_vls) +
                          " data VLs but switches " + std::to_string(scenario_.switch_cfg.data_vls),
                      "give endpoint.data_vls and switch.data_vls the same value");
  if (flit_model()) prepare_flit_model();
  routing_ = sm::make_routing_engine(scenario_.routing, scenario_.routing_options)->compute(t);
  check_every_endpoint_reachable();
  for (const std::vector<uint8_t>& row : routing_.path_sl)
    for (uint8_t sl : row) path_sl_layers_ = std::max<uint32_t>(path_sl_layers_, sl + 1u);
  check_path_sls();
  switches_.resize(t.nodes.size());
  endpoints_.resize(t.nodes.size());
  hosts_.resize(t.nodes.size());
  build_multicast();
  if (scenario_.multicast_bandwidth.enabled) multicast_vlarb();
  build_flows();
  build_trace_flows();
  if (scenario_.connections.enabled) admit_connections();
  build_control_flows();
  // HCA hosts' packets carry their flow but not their destination node (docs/hca.md): no
  // packet records for them.
  const bool hca_hosts = scenario_.endpoint_model == EndpointModel::hca;
  recorder_ = std::make_unique<metrics::Recorder>(static_cast<uint32_t>(flows_.size()), scenario_.warmup.value(),
                                                  scenario_.outputs.packets_csv && !hca_hosts);
  probe_.attach(recorder_.get());
  if (!mix_plan_.empty()) {
    std::vector<uint64_t> periods;
    std::vector<double> links;
    for (const FlowConfig& f : flows_) {
      periods.push_back(f.frame_period.value());
      links.push_back(link::LinkRate(t.links.at(static_cast<size_t>(t.link_at(t.find(f.src), 1))).cfg).data_bits_per_s() /
                      8.0);
    }
    mix_metrics_ = std::make_unique<metrics::MixMetrics>(
        workload::mix_phases(scenario_.mix, scenario_.duration.value()), mix_plan_, periods, links,
        scenario_.mix.total_load, scenario_.warmup.value());
    probe_.attach(mix_metrics_.get());
  }
  for (size_t f = 0; f < scenario_.flows.size(); ++f)
    if (const MulticastGroupConfig* g = group_named(flows_[f].dst)) {
      std::vector<uint32_t> members;
      for (const std::string& m : g->members) members.push_back(t.find(m));
      recorder_->track_multicast(static_cast<uint32_t>(f), std::move(members));
    }
  for (size_t f = 0; f < flows_.size(); ++f)
    if (flows_[f].generator == GeneratorKind::video)
      recorder_->track_video(static_cast<uint32_t>(f), flows_[f].frame_period.value());
  if (connections_) {
    // The manager owns the list and outlives the recorder's use of it (both live as long as
    // the Fabric).
    const OutputConfig& o = scenario_.outputs;
    recorder_->track_connections(connections_->connections(),
                                 {o.deadline_thresholds, o.jitter_bins, o.rank_threshold, o.rank_min_packets,
                                  scenario_.connections.stop_after_packets});
  }
  // Before any model pushes its first action (timed_queue.h).
  sim::Scheduler::set_canonical(scenario_.event_order == EventOrder::canonical);
  recorder_->set_canonical_ids(scenario_.event_order == EventOrder::canonical);
  build_nodes();
  build_links();
  program_switches();
  if (scenario_.multicast_bandwidth.enabled &&
      scenario_.multicast_bandwidth.destinations == MulticastDestinations::downstream)
    program_multicast_vlarb();
  // Sources attach after the endpoints exist.
  for (auto& s : sources_) {
    const uint32_t src = t.find(flows_[s->flow].src);
    endpoints_[src]->add_source(s.get());
  }
  if (connections_) {
    build_cbr_sources();
    schedule_releases();
  }
  if (scenario_.outputs.rate_window.value() > 0) {
    recorder_->set_rate_grid(scenario_.outputs.rate_window.value(), scenario_.outputs.rate_step.value(),
                             scenario_.duration.value());
    for (const std::string& spec : scenario_.outputs.rate_ports) {
      const size_t slash = spec.rfind('/');
      const uint32_t node = t.find(spec.substr(0, slash));
      const uint16_t port = static_cast<uint16_t>(std::stoi(spec.substr(slash + 1)));
      recorder_->track_port(node, port, spec, port_rate_bytes_per_s(node, port));
    }
    for (size_t f = 0; f < scenario_.flows.size(); ++f)
      recorder_->track_flow(static_cast<uint32_t>(f), flows_[f].name, port_rate_bytes_per_s(t.find(flows_[f].src), 1));
  }
  if (!out_dir.empty()) attach_captures(out_dir);
  build_programs();
  // After the in-band SM (build_programs): in band, the events wait for the subnet to be up.
  if (!scenario_.link_events.empty())
    link_events_ = std::make_unique<LinkEvents>("link_events", *this, scenario_.link_events);
  spawn_unwinder();
}

namespace {
void collect_threads(const std::vector<sc_core::sc_object*>& objects, std::vector<sc_core::sc_process_handle>& out) {
  for (sc_core::sc_object* o : objects) {
    if (std::string(o->kind()) == "sc_thread_process") out.emplace_back(o);
    collect_threads(o->get_child_objects(), out);
  }
}
}  // namespace

// A run ends with threads suspended in the middle of their work: host programs waiting for
// a completion, an HCA core inside a DMA. Their stacks hold what they allocated, and
// SystemC never resumes them. Killing them unwinds those stacks (their destructors run);
// SystemC kills only from inside the simulation, hence a method process and one more delta
// cycle when the Fabric goes.
void Fabric::spawn_unwinder() {
  sc_core::sc_spawn_options opts;
  opts.spawn_method();
  opts.set_sensitivity(&unwind_event_);
  opts.dont_initialize();
  sc_core::sc_spawn(
      [] {
        std::vector<sc_core::sc_process_handle> threads;
        collect_threads(sc_core::sc_get_top_level_objects(), threads);
        for (sc_core::sc_process_handle& t : threads)
          if (t.valid() && !t.terminated()) t.kill();
      },
      "fabric_unwinder", &opts);
}

Fabric::~Fabric() {
  if (sc_core::sc_get_status() != sc_core::SC_PAUSED) return;
  unwind_event_.notify();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
}

// The perftest's client and server, and the flows, run as program threads on the hosts' CPUs.
void Fabric::build_programs() {
  if (scenario_.endpoint_model != EndpointModel::hca) return;
  if (!scenario_.outputs.timeline.empty()) {
    std::vector<std::string> names;
    for (const auto& node : scenario_.topology.nodes) names.push_back(node.name);
    timeline_ = std::make_unique<metrics::Timeline>(std::move(names));
    for (const auto& h : hosts_)
      if (h) h->hca.set_observer(timeline_.get());
  }
  if (scenario_.perftest.enabled) {
    const topo::Topology& t = scenario_.topology;
    perftest_ = std::make_unique<apps::Perftest>(scenario_.perftest, *hosts_.at(t.find(scenario_.perftest.client)),
                                                 *hosts_.at(t.find(scenario_.perftest.server)));
  }
  if (!hca_control_sources_.empty()) {
    std::vector<apps::ControlAgents::Sender> senders;
    for (const auto& c : hca_control_sources_)
      senders.push_back({c.get(), &hosts_.at(scenario_.topology.find(flows_[c->flow].src))->hca});
    control_agents_ = std::make_unique<apps::ControlAgents>("control_agents", std::move(senders));
  }
  std::vector<driver::HostNode*> hosts;
  for (const auto& h : hosts_) hosts.push_back(h.get());
  if (!scenario_.flows.empty()) flow_streams_ = std::make_unique<apps::FlowStreams>(scenario_, hosts);
  if (scenario_.subnet_manager.mode == SmMode::in_band) start_inband_sm();
  if (connections_)
    cbr_streams_ = std::make_unique<apps::CbrStreams>(scenario_, connections_->connections(), hca_cbr_sources_, hosts);
}

const link::PortCounters& Fabric::port_counters(uint32_t node, uint16_t port) const {
  if (flit_ && scenario_.topology.nodes.at(node).kind == topo::NodeKind::switch_node) return flit_->counters(node, port);
  if (switches_.at(node)) return switches_[node]->counters(port);
  if (hosts_.at(node)) return hosts_[node]->hca.counters();
  return endpoints_.at(node)->counters();
}

void Fabric::build_flows() {
  const topo::Topology& t = scenario_.topology;
  flows_ = scenario_.flows;
  if (scenario_.traffic.enabled) {
    const TrafficConfig& tc = scenario_.traffic;
    for (uint32_t e : t.endpoints()) {
      FlowConfig f;
      f.name = "traffic/" + t.nodes[e].name;
      f.src = t.nodes[e].name;
      f.pattern = tc.pattern;
      f.hotspots = tc.hotspots;
      f.hotspot_fraction = tc.hotspot_fraction;
      f.generator = tc.generator;
      f.load = tc.load;
      f.payload_bytes = tc.payload_bytes;
      f.sl = tc.sl;
      f.start = tc.start;
      f.stop = tc.stop;
      flows_.push_back(f);
    }
  }
  // The phased mix (workload/mix.h): each flow's load or activity per phase.
  std::vector<workload::MixPhase> phases;
  std::vector<double> link_bytes_per_s;
  if (scenario_.mix.enabled) {
    for (const FlowConfig& f : flows_)
      link_bytes_per_s.push_back(
          link::LinkRate(t.links.at(static_cast<size_t>(t.link_at(t.find(f.src), 1))).cfg).data_bits_per_s() / 8.0);
    phases = workload::mix_phases(scenario_.mix, scenario_.duration.value());
    mix_plan_ = workload::plan_mix(scenario_.mix, flows_, link_bytes_per_s, scenario_.duration.value());
  }
  // On HCA hosts the flows are programs (build_programs, which plan the mix alike), not
  // packet sources.
  if (scenario_.endpoint_model == EndpointModel::hca) return;
  const std::vector<uint32_t> endpoints = t.endpoints();
  std::vector<uint64_t> phase_end_ps;
  for (const workload::MixPhase& ph : phases) phase_end_ps.push_back(ph.end_ps);
  for (size_t i = 0; i < flows_.size(); ++i) {
    const FlowConfig& f = flows_[i];
    const uint32_t src = t.find(f.src);
    workload::Destination fixed{src, 0};
    const MulticastGroupConfig* group = f.pattern == DestinationPattern::fixed ? group_named(f.dst) : nullptr;
    std::vector<workload::Destination> members;
    if (group) {
      for (const std::string& m : group->members) members.push_back({t.find(m), t.nodes[t.find(m)].lid});
      // Packet::dst_node must name a node (packets.csv): the first member stands for the group.
      fixed = {members.front().node, static_cast<uint16_t>(group->mlid)};
    } else if (f.pattern == DestinationPattern::fixed) {
      const uint32_t dst = t.find(f.dst);
      fixed = {dst, static_cast<uint16_t>(t.nodes[dst].lid + f.dlid_offset)};
    }
    std::vector<workload::Destination> others, hot;
    for (uint32_t e : endpoints)
      if (e != src) others.push_back({e, t.nodes[e].lid});
    for (const std::string& h : f.hotspots) {
      const uint32_t n = t.find(h);
      if (n != src) hot.push_back({n, t.nodes[n].lid});
    }
    if (f.pattern != DestinationPattern::fixed && others.empty())
      throw ConfigError(scenario_.source, "flows." + f.name, 0, "no destination other than the source itself",
                        "add endpoints to the topology or use pattern: fixed");
    const int link = t.link_at(src, 1);
    const link::LinkRate rate(t.links.at(static_cast<size_t>(link)).cfg);
    if (f.generator == GeneratorKind::video) {
      auto video = std::make_unique<workload::VideoSource>(f, static_cast<uint32_t>(i), fixed, scenario_.seed);
      if (path_sl_layers_ > 1) video->set_path_sl(routing_.path_sl.at(src));
      if (!mix_plan_.empty() && mix_plan_[i].cls == workload::MixClass::real_time)
        video->set_active_phases(phase_end_ps, mix_plan_[i].active);
      sources_.push_back(std::move(video));
      continue;
    }
    ib::Packet shape;
    shape.bth.opcode = ib::Opcode::ud_send_only;
    shape.payload_bytes = f.payload_bytes;
    const uint64_t packet_time_ps = rate.serialization_ps(shape.wire_bytes());
    std::vector<workload::LoadPhase> load_phases;
    if (!mix_plan_.empty() && mix_plan_[i].cls == workload::MixClass::best_effort)
      for (size_t p = 0; p < phases.size(); ++p)
        load_phases.push_back({phases[p].end_ps, mix_plan_[i].load[p] > 0
                                                     ? static_cast<double>(packet_time_ps) / mix_plan_[i].load[p]
                                                     : 0.0});
    auto source = std::make_unique<workload::FlowSource>(
        f, static_cast<uint32_t>(i), packet_time_ps, fixed, std::move(others), std::move(hot),
        sim::Rng(scenario_.seed, "flow/" + std::to_string(i) + "/" + f.name), std::move(load_phases));
    if (path_sl_layers_ > 1) source->set_path_sl(routing_.path_sl.at(src));
    if (f.multipath == FlowMultipath::random)
      source->set_random_paths(sim::Rng(scenario_.seed, "flow/" + std::to_string(i) + "/" + f.name + "/path"));
    if (group && group->delivery == MulticastDelivery::replicated_unicast) {
      sources_.push_back(std::make_unique<workload::ReplicatedUnicastSource>(std::move(source), std::move(members)));
      continue;
    }
    sources_.push_back(std::move(source));
  }
}

// Seed 000 Sec. 3.6.2 (after [23]): the multicast VL's weight grows with the number of
// destinations n: x1 (equal), x n (linear), x max(1, round(log2 n)) (logarithmic). Every port
// starts with the largest group's n, the most any port can serve (the check of the table's
// size is made for it); with destinations: downstream, program_multicast_vlarb then gives each
// port its own n.
void Fabric::multicast_vlarb() {
  size_t n = 1;
  for (const MulticastGroupConfig& g : scenario_.multicast) n = std::max(n, g.members.size());
  const link::VlArbConfig cfg = multicast_table(n);
  scenario_.switch_cfg.vlarb = cfg;
  scenario_.endpoint_cfg.vlarb = cfg;
}

// Entries hold at most 255 units (IBA 7.6.9), so a larger weight takes several.
link::VlArbConfig Fabric::multicast_table(size_t n) const {
  const MulticastBandwidthConfig& b = scenario_.multicast_bandwidth;
  uint64_t factor = 1;
  if (b.allocation == MulticastAllocation::linear) factor = n;
  if (b.allocation == MulticastAllocation::logarithmic)
    factor = std::max<uint64_t>(1, static_cast<uint64_t>(std::lround(std::log2(static_cast<double>(n)))));
  const uint8_t mvl = scenario_.endpoint_cfg.sl2vl[b.sl];
  link::VlArbConfig cfg;
  for (uint8_t vl = 0; vl < scenario_.switch_cfg.data_vls; ++vl) {
    for (uint64_t w = vl == mvl ? b.unicast_weight * factor : b.unicast_weight; w > 0;) {
      const uint8_t part = static_cast<uint8_t>(std::min<uint64_t>(w, 255));
      cfg.low.push_back({vl, part});
      w -= part;
    }
  }
  if (cfg.low.size() > 64)
    throw ConfigError(scenario_.source, "multicast_bandwidth.unicast_weight", 0,
                      "the multicast VL's weight (" + std::to_string(b.unicast_weight * factor) +
                          " units) needs more than the 64 entries of a VLArb table",
                      "use a smaller unicast_weight or allocation logarithmic");
  return cfg;
}

// Seed 000 Sec. 3.6.2 allocates multicast bandwidth "proportional to the number of
// destinations"; an IBA switch allocates per output port and VL, and the destinations a
// port's copy serves are the receivers downstream of it in the group's tree. So each port's
// n is the most receivers behind it over the groups (1 where no multicast passes): the
// source's port serves the whole group, a branch towards one member serves one.
void Fabric::program_multicast_vlarb() {
  const topo::Topology& t = scenario_.topology;
  std::map<std::pair<uint32_t, uint16_t>, size_t> n;  // (node, port) -> destinations
  for (const MulticastGroupConfig& g : scenario_.multicast) {
    if (g.delivery != MulticastDelivery::replicate) continue;
    const uint32_t src = t.find(g.source);
    const sm::MulticastWalk w = sm::walk_multicast(t, mft_, src, static_cast<uint16_t>(g.mlid));
    size_t& at_source = n[{src, 1}];
    at_source = std::max(at_source, w.reached.size());
    for (const auto& [port, receivers] : w.receivers_behind) n[port] = std::max<size_t>(n[port], receivers);
  }
  for (uint32_t node = 0; node < t.nodes.size(); ++node) {
    if (sw::Switch* s = switches_[node].get()) {
      for (uint16_t p = 1; p <= t.nodes[node].num_ports; ++p) {
        if (!s->attached(p)) continue;
        const auto it = n.find({node, p});
        s->set_vlarb(p, multicast_table(it == n.end() ? 1 : std::max<size_t>(1, it->second)));
      }
      continue;
    }
    const auto it = n.find({node, 1});
    const link::VlArbConfig cfg = multicast_table(it == n.end() ? 1 : std::max<size_t>(1, it->second));
    if (ep::Endpoint* e = endpoints_[node].get()) e->set_vlarb(cfg);
    else if (driver::HostNode* h = hosts_[node].get()) h->hca.set_vlarb(cfg);
  }
}

const MulticastGroupConfig* Fabric::group_named(const std::string& name) const {
  for (const MulticastGroupConfig& g : scenario_.multicast)
    if (g.name == name) return &g;
  return nullptr;
}

// Seed 000 Sec. 3.6: each group's tree from the subnet manager's multicast library, its MFT
// entries merged into every switch's table (docs/multicast.md). Groups without an MLID take
// the lowest free ones from 0xC000, in group order.
void Fabric::build_multicast() {
  if (scenario_.multicast.empty()) return;
  const topo::Topology& t = scenario_.topology;
  std::set<uint32_t> used;
  for (const MulticastGroupConfig& g : scenario_.multicast)
    if (g.mlid) used.insert(g.mlid);
  uint32_t next = sw::Mft::kMlidBase;
  for (MulticastGroupConfig& g : scenario_.multicast) {
    if (g.mlid) continue;
    while (used.count(next)) ++next;
    if (next > sw::Mft::kMlidTop)
      throw ConfigError(scenario_.source, "multicast", 0, "no multicast LID left for group " + g.name,
                        "use fewer groups");
    g.mlid = next;
    used.insert(next);
  }
  mft_.assign(t.nodes.size(), sw::Mft{});
  for (size_t i = 0; i < scenario_.multicast.size(); ++i) {
    const MulticastGroupConfig& g = scenario_.multicast[i];
    if (g.delivery != MulticastDelivery::replicate) continue;  // the baseline uses the LFTs
    sm::MulticastGroup mg;
    mg.mlid = static_cast<uint16_t>(g.mlid);
    for (const std::string& m : g.members) mg.members.push_back(t.find(m));
    mg.senders.push_back(t.find(g.source));
    sm::MulticastTables tables;
    try {
      tables = sm::compute_multicast_tables(
          t, {mg}, g.tree == MulticastTree::shared ? sm::MulticastMode::shared_tree : sm::MulticastMode::source_trees);
    } catch (const ConfigError& e) {
      throw ConfigError(scenario_.source, "multicast[" + std::to_string(i) + "]", 0, e.problem(), e.fix());
    }
    for (uint32_t n = 0; n < t.nodes.size(); ++n) {
      const sw::Mft& m = tables.mft.at(n);
      for (size_t e = 0; e < m.port_mask.size(); ++e)
        if (m.port_mask[e].any()) mft_[n].entry(static_cast<uint16_t>(sw::Mft::kMlidBase + e)) |= m.port_mask[e];
    }
  }
}

void Fabric::build_trace_flows() {
  const topo::Topology& t = scenario_.topology;
  // One source per (endpoint, SL): an endpoint's SLs may map to different VLs.
  std::map<std::pair<uint32_t, uint8_t>, std::vector<workload::TraceSource::Item>> groups;
  for (const TracePacket& p : scenario_.trace.packets)
    groups[{p.src, p.sl}].push_back({p.time_ps, p.dst, t.nodes[p.dst].lid, p.payload_bytes});
  for (auto& [key, items] : groups) {
    FlowConfig f;
    f.name = "trace/" + t.nodes[key.first].name + "/sl" + std::to_string(key.second);
    f.src = t.nodes[key.first].name;
    f.dst = "*trace";
    f.sl = key.second;
    const uint32_t index = static_cast<uint32_t>(flows_.size());
    flows_.push_back(f);
    sources_.push_back(std::make_unique<workload::TraceSource>(index, key.second, std::move(items)));
  }
}

// The control section (docs/control.md): one VL15 flow per sender, control/<sender>, after
// every other flow, so that adding control traffic leaves the other flows' indices and
// random streams as they were.
void Fabric::build_control_flows() {
  const ControlConfig& cc = scenario_.control;
  if (!cc.enabled) return;
  const topo::Topology& t = scenario_.topology;
  const uint32_t dst = cc.dst.empty() ? topo::Topology::npos : t.find(cc.dst);
  std::vector<uint32_t> senders;
  if (cc.senders.empty()) {
    for (uint32_t e : t.endpoints())
      if (e != dst) senders.push_back(e);
  } else {
    for (const std::string& n : cc.senders) senders.push_back(t.find(n));
  }
  for (uint32_t src : senders) {
    FlowConfig f;
    f.name = "control/" + t.nodes[src].name;
    f.src = t.nodes[src].name;
    f.pattern = cc.dst.empty() ? DestinationPattern::uniform : DestinationPattern::fixed;
    f.dst = cc.dst;
    f.generator = GeneratorKind::constant;
    f.payload_bytes = cc.payload_bytes;
    f.start = cc.start;
    f.stop = cc.stop;
    f.vl15 = true;
    f.control = true;
    const uint32_t index = static_cast<uint32_t>(flows_.size());
    flows_.push_back(f);
    std::optional<workload::Destination> fixed;
    std::vector<workload::Destination> others;
    if (dst != topo::Topology::npos) {
      fixed = workload::Destination{dst, t.nodes[dst].lid};
    } else {
      for (uint32_t e : t.endpoints())
        if (e != src) others.push_back({e, t.nodes[e].lid});
    }
    auto source = std::make_unique<workload::ControlSource>(cc, index, fixed, std::move(others),
                                                            sim::Rng(scenario_.seed, "control/" + t.nodes[src].name));
    if (scenario_.endpoint_model == EndpointModel::hca)
      hca_control_sources_.push_back(std::move(source));
    else
      sources_.push_back(std::move(source));
  }
}

void Fabric::build_nodes() {
  const topo::Topology& t = scenario_.topology;
  const bool in_band = scenario_.subnet_manager.mode == SmMode::in_band;
  std::set<std::string> used;
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    const topo::Node& node = t.nodes[n];
    const std::string name = module_name(node.name, used);
    if (node.kind == topo::NodeKind::switch_node && flit_model()) {
      continue;  // build_flit_fabric
    } else if (node.kind == topo::NodeKind::switch_node) {
      sw::SwitchConfig cfg = scenario_.switch_cfg;
      cfg.num_ports = node.num_ports;
      // In band, the SM writes the SL2VL and VLArb tables (start_inband_sm): the switch starts
      // from its reset tables.
      if (in_band) {
        cfg.sl2vl = inband_reset_sl2vl();
        cfg.vlarb = inband_reset_vlarb();
      }
      if (cfg.ecn.max_packet_bytes == 0) cfg.ecn.max_packet_bytes = largest_packet_bytes();
      std::vector<sw::Switch::Cable> cables;
      for (uint16_t p = 1; p <= node.num_ports; ++p) {
        const int l = t.link_at(n, p);
        if (l >= 0) cables.push_back({p, link::LinkRate(t.links[static_cast<size_t>(l)].cfg)});
      }
      switches_[n] = std::make_unique<sw::Switch>(name.c_str(), n, cfg, cables, packets_, payloads_, probe_);
      // Canonical event order: the agenda's id is its node index, the same in every process.
      switches_[n]->set_order_id(n);
      // What its SMA answers to NodeInfo, NodeDescription and PortInfo of port 0. In band, the
      // switch has no LID until the SM gives it one, and its cabled ports wait in Init.
      switches_[n]->set_identity(
          {topo::node_guid(t, n), 0, topo::node_description(node), in_band ? uint16_t{0} : node.lid, node.lmc});
      if (in_band) switches_[n]->start_ports_in_init();
    } else if (scenario_.endpoint_model == EndpointModel::hca) {
      const int l = t.link_at(n, 1);
      const link::LinkRate rate(t.links.at(static_cast<size_t>(l)).cfg);
      try {
        // What the HCA's SMA reports (NodeInfo, PortInfo, NodeDescription): this node's.
        driver::HostNodeConfig hc = host_node_config(scenario_);
        hc.hca.node_guid = topo::node_guid(t, n);
        hc.hca.port_guid = topo::port_guid(t, n);
        hc.hca.node_description = topo::node_description(node);
        hc.hca.lmc = node.lmc;
        hc.hca.link_width = t.links.at(static_cast<size_t>(l)).cfg.width;
        hc.hca.link_speed = t.links.at(static_cast<size_t>(l)).cfg.speed;
        // In band, the port has LID 0, its reset SL2VL and VLArb tables, and waits in Init
        // until the SM programs it.
        if (in_band) {
          hc.hca.port_state = IBVP_PORT_INIT;
          hc.hca.sl2vl = inband_reset_sl2vl();
          hc.hca.vlarb = inband_reset_vlarb();
        }
        hosts_[n] = std::make_unique<driver::HostNode>(name.c_str(), n, in_band ? uint16_t{0} : node.lid, hc, rate,
                                                       packets_, payloads_, probe_);
      } catch (const hca::FirmwareInitRefused& e) {
        // Only the image can tell whether it takes its arguments: asked here, before the run.
        throw ConfigError(scenario_.source, "hca.firmware_args", 0, e.what(),
                          "give arguments the image takes (the default image's: docs/hca.md)");
      }
    } else {
      const int l = t.link_at(n, 1);
      const link::LinkRate rate(t.links.at(static_cast<size_t>(l)).cfg);
      endpoints_[n] = std::make_unique<ep::Endpoint>(name.c_str(), n, node.lid, scenario_.endpoint_cfg, rate,
                                                     packets_, payloads_, probe_);
      endpoints_[n]->set_order_id(n);
    }
  }
}

link::DirectPort* Fabric::direct_port(const topo::PortRef& r) const {
  if (sw::Switch* s = switches_[r.node].get()) return s;
  if ((flit_ && flit_->is_edge(r.node, r.port)) || hosts_[r.node]) return nullptr;
  return endpoints_[r.node].get();
}

void Fabric::set_direct_peer(const topo::PortRef& at, link::DirectPort* peer, uint16_t peer_port,
                             uint64_t propagation_ps) {
  if (sw::Switch* s = switches_[at.node].get()) {
    if (peer) s->set_direct_peer(at.port, peer, peer_port, propagation_ps);
    else s->clear_direct_peer(at.port);
  } else if (peer) {
    endpoints_[at.node]->set_direct_peer(peer, peer_port, propagation_ps);
  } else {
    endpoints_[at.node]->clear_direct_peer();
  }
}

void Fabric::build_links() {
  const topo::Topology& t = scenario_.topology;
  const uint8_t vls = scenario_.switch_cfg.data_vls;
  if (flit_model()) build_flit_fabric();
  for (size_t i = 0; i < t.links.size(); ++i) {
    const topo::Link& cable = t.links[i];
    if (flit_ && t.nodes[cable.a.node].kind == topo::NodeKind::switch_node &&
        t.nodes[cable.b.node].kind == topo::NodeKind::switch_node) {
      flit_->connect(cable.a.node, cable.a.port, cable.b.node, cable.b.port);  // a flit channel each way
      links_.emplace_back();
      continue;
    }
    auto l = std::make_unique<link::Link>(("link" + std::to_string(i)).c_str(), cable.cfg);
    // Direction 0 carries a -> b, direction 1 carries b -> a.
    const topo::PortRef ends[2] = {cable.a, cable.b};
    for (int d = 0; d < 2; ++d) {
      const topo::PortRef from = ends[d], to = ends[1 - d];
      if (sw::Switch* s = switches_[from.node].get())
        s->tx(from.port).bind(l->in[d]);
      else if (flit_ && flit_->is_edge(from.node, from.port))
        flit_->tx(from.node, from.port).bind(l->in[d]);
      else if (driver::HostNode* h = hosts_[from.node].get())
        h->hca.tx.bind(l->in[d]);
      else
        endpoints_[from.node]->tx.bind(l->in[d]);
      if (sw::Switch* s = switches_[to.node].get())
        l->out[d].bind(s->rx(to.port));
      else if (flit_ && flit_->is_edge(to.node, to.port))
        l->out[d].bind(flit_->rx(to.node, to.port));
      else if (driver::HostNode* h = hosts_[to.node].get())
        l->out[d].bind(h->hca.rx);
      else
        l->out[d].bind(endpoints_[to.node]->rx);
      // Credits the sender starts with: the receiver's buffer per VL (IBA flow-control
      // initialisation, done here once instead of by initialisation packets).
      const uint32_t buffer = t.nodes[to.node].kind == topo::NodeKind::switch_node
                                  ? scenario_.switch_cfg.vl_buffer_bytes
                                  : scenario_.endpoint_cfg.vl_buffer_bytes;
      for (uint8_t vl = 0; vl < vls; ++vl) {
        if (sw::Switch* s = switches_[from.node].get())
          s->set_peer_buffer(from.port, vl, buffer);
        else if (flit_ && flit_->is_edge(from.node, from.port))
          flit_->set_peer_buffer(from.node, from.port, vl, buffer);
        else if (driver::HostNode* h = hosts_[from.node].get())
          h->hca.set_peer_buffer(vl, buffer);
        else
          endpoints_[from.node]->set_peer_buffer(vl, buffer);
      }
    }
    // Switches and endpoints at both ends: the cable is crossed by direct calls, not through
    // the sockets and the link, until a capture taps it (link/direct_port.h; issue 17). HCAs
    // and flit routers keep the link.
    link::DirectPort* direct[2] = {direct_port(cable.a), direct_port(cable.b)};
    if (direct[0] && direct[1]) {
      const uint64_t propagation = l->rate().propagation().value();
      for (int e = 0; e < 2; ++e) set_direct_peer(ends[e], direct[1 - e], ends[1 - e].port, propagation);
      l->on_first_tap([this, a = cable.a, b = cable.b] {
        for (const topo::PortRef& r : {a, b}) set_direct_peer(r, nullptr, 0, 0);
      });
    }
    links_.push_back(std::move(l));
  }
}

// A table with holes would drop packets as "no route" and look like congestion: refuse it
// before anything runs, naming one pair the engine left without a path.
void Fabric::check_every_endpoint_reachable() const {
  const topo::Topology& t = scenario_.topology;
  const std::optional<sm::UnroutedPair> hole = sm::first_unrouted(t, routing_);
  if (!hole) return;
  throw ConfigError(scenario_.source, "routing", 0,
                    "routing engine '" + scenario_.routing + "' leaves " + t.nodes[hole->src].name +
                        " without a route to " + t.nodes[t.node_of_lid(hole->dlid)].name + " (DLID " +
                        std::to_string(hole->dlid) + ")",
                    "choose another engine; `ibvp topo FILE --routing ENGINE` shows how each routes this fabric");
}

// An engine that spreads paths over SLs (dfsssp's VL layers) is deadlock-free only if each
// packet travels on its path's SL and every port maps that SL to its own VL: the flows take
// their SLs from the routing (FlowSource::set_path_sl), and what would undo the layers is
// refused.
void Fabric::check_path_sls() const {
  const uint32_t layers = path_sl_layers_;
  if (layers <= 1) return;
  const std::string engine = "routing engine '" + scenario_.routing + "' puts paths on " + std::to_string(layers) +
                             " SLs (VL layers)";
  auto fail = [&](const std::string& key, const std::string& problem, const std::string& fix) {
    throw ConfigError(scenario_.source, key, 0, engine + ": " + problem, fix);
  };
  if (scenario_.switch_cfg.data_vls < layers || scenario_.endpoint_cfg.data_vls < layers)
    fail("switch.data_vls",
         "ports operate " + std::to_string(std::min(scenario_.switch_cfg.data_vls, scenario_.endpoint_cfg.data_vls)) +
             " data VL(s)",
         "set switch.data_vls and endpoint.data_vls to at least " + std::to_string(layers));
  for (uint32_t sl = 0; sl < layers; ++sl) {
    for (const auto& [key, table] : {std::pair<const char*, const sw::Sl2VlTable*>{"switch.sl2vl", &scenario_.switch_cfg.sl2vl},
                                     {"endpoint.sl2vl", &scenario_.endpoint_cfg.sl2vl}})
      if ((*table)[sl] != sl)
        fail(key, "it maps SL " + std::to_string(sl) + " to VL " + std::to_string((*table)[sl]) +
                      ", which mixes layers on one VL",
             "map SL n to VL n for n < " + std::to_string(layers) + " (the default sl2vl does)");
    for (const auto& [key, arb] : {std::pair<const char*, const link::VlArbConfig*>{"switch.vlarb", &scenario_.switch_cfg.vlarb},
                                   {"endpoint.vlarb", &scenario_.endpoint_cfg.vlarb}})
      if (!link::vlarb_serves(*arb, static_cast<uint8_t>(sl)))
        fail(key, "no entry serves VL " + std::to_string(sl), "give every VL below " + std::to_string(layers) +
                                                                    " a vlarb entry with a weight above 0");
  }
  for (size_t i = 0; i < scenario_.flows.size(); ++i)
    if (scenario_.flows[i].sl != 0)
      fail("flows[" + std::to_string(i) + "].sl", "it chooses each packet's SL (its path's layer)",
           "leave sl out of the flows, or choose another routing engine for SLs of your own");
  if (!scenario_.trace.packets.empty())
    fail("trace", "a trace fixes each packet's SL", "use flows or traffic with this engine, or another engine");
}

// Wire bytes of the largest packet the run sends (UD SENDs of the flows' and the trace's
// payloads): what a buffer must still have room for not to count as full.
uint32_t Fabric::largest_packet_bytes() const {
  uint32_t payload = 0;
  // HCA hosts split a message into packets of at most hca.flow_mtu bytes.
  const uint32_t most = scenario_.endpoint_model == EndpointModel::hca ? scenario_.hca_host.flow_mtu : ~uint32_t{0};
  for (const FlowConfig& f : flows_) payload = std::max(payload, std::min(f.payload_bytes, most));
  for (const TracePacket& p : scenario_.trace.packets) payload = std::max(payload, p.payload_bytes);
  if (scenario_.connections.enabled) payload = std::max(payload, scenario_.connections.payload_bytes);
  ib::Packet shape;
  shape.bth.opcode = ib::Opcode::ud_send_only;
  shape.payload_bytes = payload;
  return shape.wire_bytes();
}

// Issue 16: the SM runs on its host's CA port, knows the LIDs the scenario's topology gives
// (OpenSM's guid2lid cache, so the flows' DLIDs stay right) and the routing engine and
// roots of the scenario; the flows wait for it.
void Fabric::start_inband_sm() {
  const topo::Topology& t = scenario_.topology;
  const SubnetManagerConfig& c = scenario_.subnet_manager;
  const uint32_t host = c.host.empty() ? t.endpoints().at(0) : t.find(c.host);
  sm::InbandSmOptions o;
  o.routing = scenario_.routing;
  for (uint32_t r : scenario_.routing_options.roots) o.root_guids.push_back(topo::node_guid(t, r));
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    const uint64_t guid = t.nodes[n].kind == topo::NodeKind::switch_node ? topo::node_guid(t, n) : topo::port_guid(t, n);
    o.guid2lid[guid] = t.nodes[n].lid;
    o.lmc[guid] = t.nodes[n].lmc;
  }
  o.max_outstanding = c.max_outstanding;
  o.mad_processing_ps = c.mad_processing.value();
  o.transaction_timeout_ps = c.transaction_timeout.value();
  o.retries = c.retries;
  o.subnet_timeout = c.subnet_timeout;
  o.source = scenario_.source;
  // The tables the builder loads out of band (program_switches, host_node_config): the qos
  // section's or the switch and endpoint sections', and multicast_bandwidth's uniform table.
  o.qos.switch_sl2vl = scenario_.switch_cfg.sl2vl;
  o.qos.switch_vlarb = scenario_.switch_cfg.vlarb;
  o.qos.ca_sl2vl = scenario_.endpoint_cfg.sl2vl;
  o.qos.ca_vlarb = scenario_.endpoint_cfg.vlarb;
  for (const MulticastGroupConfig& g : scenario_.multicast) {
    if (g.delivery != MulticastDelivery::replicate) continue;  // the baseline uses the LFTs
    sm::InbandMulticastGroup mg;
    mg.mlid = static_cast<uint16_t>(g.mlid);
    mg.source_guid = topo::node_guid(t, t.find(g.source));
    for (const std::string& m : g.members) mg.member_guids.push_back(topo::node_guid(t, t.find(m)));
    mg.shared_tree = g.tree == MulticastTree::shared;
    o.multicast.push_back(std::move(mg));
  }
  inband_sm_ = std::make_unique<sm::InbandSm>("subnet_manager", hosts_.at(host)->hca, std::move(o));
  if (flow_streams_) {
    const sm::InbandSm* sm = inband_sm_.get();
    flow_streams_->set_start_gate({&sm->done_event(), [sm] { return sm->report().up; },
                                   [sm] { return sm->report().up_ps; }});
  }
}

void Fabric::program_switches() {
  if (flit_) program_flit_routes();
  // In band, the switches start with empty tables: the SM writes them by SMPs.
  const bool in_band = scenario_.subnet_manager.mode == SmMode::in_band;
  for (uint32_t n = 0; n < switches_.size(); ++n)
    if (switches_[n] && !in_band) {
      switches_[n]->set_lft(routing_.lft.at(n));
      if (n < routing_.alternatives.size()) switches_[n]->set_alternatives(routing_.alternatives[n]);
      if (!mft_.empty()) switches_[n]->set_mft(mft_.at(n));
    }
  program_lifetimes();
  if (connections_)
    for (uint32_t i = 0; i < connections_->ports().size(); ++i) program_vlarb(i);
}

// The lifetimes' overrides, in order, as the subnet manager would write PortInfo:HOQLife and
// SwitchInfo:LifeTimeValue (switch.hoq_life and switch_life are every switch's already).
void Fabric::program_lifetimes() {
  const topo::Topology& t = scenario_.topology;
  const auto& overrides = scenario_.switch_cfg.lifetime_overrides;
  for (size_t i = 0; i < overrides.size(); ++i) {
    const sw::LifetimeOverride& o = overrides[i];
    const std::string key = "switch.lifetime_overrides[" + std::to_string(i) + "]";
    uint32_t node = ~uint32_t{0};
    for (uint32_t n = 0; n < t.nodes.size(); ++n)
      if (t.nodes[n].name == o.switch_name) node = n;
    if (node == ~uint32_t{0} || !switches_[node])
      throw ConfigError(scenario_.source, key + ".switch", 0, "'" + o.switch_name + "' is not a switch of the topology",
                        "name a switch of the topology");
    sw::Switch& s = *switches_[node];
    if (o.switch_life != sw::LifetimeOverride::kKeep) s.set_switch_life(o.switch_life);
    if (o.hoq_life == sw::LifetimeOverride::kKeep) continue;
    if (o.port > t.nodes[node].num_ports)
      throw ConfigError(scenario_.source, key + ".port", 0,
                        o.switch_name + " has " + std::to_string(t.nodes[node].num_ports) + " ports",
                        "give a port from 1 to " + std::to_string(t.nodes[node].num_ports) + ", or 0 for every port");
    for (uint16_t p = 1; p <= t.nodes[node].num_ports; ++p) {
      if ((o.port != 0 && p != o.port) || !s.attached(p)) continue;
      for (uint8_t vl = 0; vl < ib::kMaxVls; ++vl)
        if (o.vl == sw::LifetimeOverride::kKeep || o.vl == vl) s.set_hoq_life(p, vl, o.hoq_life);
    }
  }
}

// seed 002 Sec. 4.2: connections requested and admitted before the run, along the routes
// the LFTs give; the packets and tables follow from them.
void Fabric::admit_connections() {
  sm::ConnectionTiming timing;
  timing.pipeline_delay_ps = scenario_.switch_cfg.pipeline_delay.value();
  timing.max_packet_bytes = std::max(largest_packet_bytes(), sm::ConnectionManager::wire_bytes(scenario_.connections.payload_bytes));
  connections_ = std::make_unique<sm::ConnectionManager>(scenario_.topology, routing_, scenario_.connections, timing,
                                                         scenario_.seed);
  connections_->establish();
}

// A port's VL arbitration: the high-priority table from its admissions, the low table and
// LimitOfHighPriority from the scenario (qos section or switch/endpoint vlarb).
void Fabric::program_vlarb(uint32_t i) {
  const sm::ConnectionManager::Port& port = connections_->ports()[i];
  if (sw::Switch* s = switches_.at(port.node).get())
    s->set_vlarb(port.port, port.admission.vlarb(scenario_.switch_cfg.vlarb, scenario_.switch_cfg.sl2vl));
  else if (ep::Endpoint* e = endpoints_.at(port.node).get())
    e->set_vlarb(port.admission.vlarb(scenario_.endpoint_cfg.vlarb, scenario_.endpoint_cfg.sl2vl));
  else if (driver::HostNode* h = hosts_.at(port.node).get())
    // An HCA's CA port has the endpoint section's tables (host_node_config).
    h->hca.set_vlarb(port.admission.vlarb(scenario_.endpoint_cfg.vlarb, scenario_.endpoint_cfg.sl2vl));
}

// One source per (endpoint, SL) holding all of that endpoint's connections of that SL. A
// fabric-only endpoint pulls from it; on an HCA host the host's program walks it
// (apps::CbrStreams, made with the programs).
void Fabric::build_cbr_sources() {
  const workload::CbrConnections& conns = connections_->connections();
  std::map<std::pair<uint32_t, uint8_t>, std::vector<uint32_t>> groups;
  for (uint32_t c = 0; c < conns.size(); ++c) groups[{conns[c].src_node, conns[c].sl}].push_back(c);
  for (const auto& [key, mine] : groups) {
    cbr_sources_.push_back(std::make_unique<workload::CbrSource>(conns, mine, key.second));
    if (ep::Endpoint* e = endpoints_.at(key.first).get()) e->add_source(cbr_sources_.back().get());
    else hca_cbr_sources_.push_back({key.first, cbr_sources_.back().get()});
  }
}

// hold_time: a connection sends nothing from end_ps on, and its entries are released when
// its last packet (the last created before end_ps) has left the fabric, delivered or
// dropped: seed 002 Sec. 3, "when a connection finishes, its bandwidth is deducted". Then
// the ports of its path are reprogrammed at once (docs/qos.md).
namespace {
class ReleaseWatch : public sim::FabricObserver {
 public:
  ReleaseWatch(std::vector<uint64_t> last_created, std::vector<uint32_t>& pending, sc_core::sc_event& wake)
      : last_created_(std::move(last_created)), pending_(pending), wake_(wake) {}
  void on_deliver(const ib::Packet& p, uint32_t, uint64_t) override { done(p); }
  void on_drop(const ib::Packet& p, uint32_t, uint64_t) override { done(p); }

 private:
  void done(const ib::Packet& p) {
    if (p.connection >= last_created_.size()) return;
    if (static_cast<uint64_t>(p.created.value()) != last_created_[p.connection]) return;
    pending_.push_back(p.connection);
    wake_.notify(sc_core::SC_ZERO_TIME);  // released by the method, not inside a model's event
  }
  std::vector<uint64_t> last_created_;  // by connection; ~0: none or it never ends
  std::vector<uint32_t>& pending_;
  sc_core::sc_event& wake_;
};
}  // namespace

void Fabric::schedule_releases() {
  const workload::CbrConnections& conns = connections_->connections();
  std::vector<uint64_t> last(conns.size(), ~uint64_t{0});
  bool any = false;
  for (uint32_t c = 0; c < conns.size(); ++c) {
    const workload::CbrConnection& k = conns[c];
    if (k.end_ps == ~uint64_t{0}) continue;
    any = true;
    if (k.start_ps >= k.end_ps) {
      releases_.push_back({k.end_ps, c});  // it sends nothing
      continue;
    }
    // The packets are created at start + n x interval while that is before end.
    const uint64_t n = (k.end_ps - k.start_ps + k.interval_ps - 1) / k.interval_ps;
    last[c] = k.start_ps + (n - 1) * k.interval_ps;
  }
  if (!any) return;
  std::sort(releases_.begin(), releases_.end());
  release_watch_ = std::make_unique<ReleaseWatch>(std::move(last), pending_releases_, release_event_);
  probe_.attach(release_watch_.get());
  sc_core::sc_spawn_options opts;
  opts.spawn_method();
  opts.set_sensitivity(&release_event_);
  opts.dont_initialize();
  sc_core::sc_spawn([this] { release_due(); }, "connection_releases", &opts);
  if (!releases_.empty()) release_event_.notify(sc_core::sc_time::from_value(releases_.front().first));
}

void Fabric::release_due() {
  const uint64_t now = sc_core::sc_time_stamp().value();
  std::vector<uint32_t> due;
  due.swap(pending_releases_);
  for (; next_release_ < releases_.size() && releases_[next_release_].first <= now; ++next_release_)
    due.push_back(releases_[next_release_].second);
  std::vector<uint32_t> touched;
  for (uint32_t c : due) {
    connections_->release(c);
    touched.insert(touched.end(), connections_->path_begin(c), connections_->path_end(c));
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (uint32_t p : touched) program_vlarb(p);
  if (next_release_ < releases_.size())
    release_event_.notify(sc_core::sc_time::from_value(releases_[next_release_].first - now));
}

void Fabric::attach_captures(const std::string& out_dir) {
  const topo::Topology& t = scenario_.topology;
  for (const PcapConfig& pc : scenario_.outputs.pcaps) {
    const uint32_t node = t.find(pc.node);
    const int l = t.link_at(node, pc.port);
    if (node == topo::Topology::npos || l < 0)
      throw ConfigError(scenario_.source, "outputs.pcaps", 0, "no cable at " + pc.node + "/" + std::to_string(pc.port),
                        "name a node and a cabled port");
    if (!links_[static_cast<size_t>(l)])
      throw ConfigError(scenario_.source, "outputs.pcaps", 0,
                        pc.node + "/" + std::to_string(pc.port) + " is a cable between flit routers, which carries flits",
                        "capture a cable to an endpoint");
    auto tap = std::make_unique<PcapTap>(out_dir + "/" + pc.file,
                                         pc.upper_pdu ? ib::PcapLinkType::upper_pdu : ib::PcapLinkType::infiniband);
    links_[static_cast<size_t>(l)]->add_tap(tap.get());
    taps_.push_back(std::move(tap));
  }
}

double Fabric::port_rate_bytes_per_s(uint32_t node, uint16_t port) const {
  const int l = scenario_.topology.link_at(node, port);
  if (l < 0) return 0.0;
  return link::LinkRate(scenario_.topology.links[static_cast<size_t>(l)].cfg).data_bits_per_s() / 8.0;
}

uint64_t Fabric::packets_in_flight() const {
  uint64_t held = 0;
  for (const auto& h : hosts_)
    if (h) held += h->hca.packets_held();
  return packets_.live() - held;
}

uint64_t Fabric::packets_buffered_in_switches() const {
  uint64_t n = 0;
  for (const auto& s : switches_)
    if (s) n += s->buffered_packets();
  if (flit_) n += flit_->packets_held();
  return n;
}

void Fabric::finish() {
  for (auto& s : switches_)
    if (s) s->finish();
  for (auto& e : endpoints_)
    if (e) e->finish();
  if (mix_metrics_) mix_metrics_->finish();
}

}  // namespace ibvp
