#pragma once
// Elaborates a scenario into SystemC modules: one Switch or Endpoint per topology node, one
// Link per cable, forwarding tables from the routing engine, traffic sources from the flows,
// and the observers that record results. One Fabric per process (SystemC elaborates once).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/endpoint/endpoint.h"
#include "models/ib/packet.h"
#include "models/ib/pcap.h"
#include "models/link/fabric_payload.h"
#include "models/link/link.h"
#include "models/sim/observer.h"
#include "models/flit/flit_fabric.h"
#include "models/switch/switch.h"
#include "platform/builder/link_events.h"
#include "platform/driver/host_node.h"
#include "platform/metrics/mix_metrics.h"
#include "platform/metrics/recorder.h"
#include "platform/metrics/timeline.h"
#include "platform/scenario/scenario.h"
#include "platform/sm/connection_manager.h"
#include "platform/sm/inband_sm.h"
#include "platform/sm/routing.h"
#include "platform/workload/cbr_source.h"
#include "platform/workload/control_source.h"
#include "platform/workload/flow_source.h"
#include "platform/workload/trace_source.h"

namespace ibvp {

namespace apps {
class CbrStreams;
class ControlAgents;
class FlowStreams;
class Perftest;
}

class Fabric {
 public:
  explicit Fabric(const Scenario& scenario, const std::string& out_dir = "");
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  const Scenario& scenario() const { return scenario_; }
  const sm::RoutingTables& routing() const { return routing_; }
  metrics::Recorder& recorder() { return *recorder_; }
  sim::Probe& probe() { return probe_; }

  sw::Switch* switch_at(uint32_t node) const { return switches_.at(node).get(); }
  // switch.model flit_wormhole: every switch is a flit router of this one module (and
  // switch_at is null); null with IBA switches.
  const flit::FlitFabric* flit_fabric() const { return flit_.get(); }
  ep::Endpoint* endpoint_at(uint32_t node) const { return endpoints_.at(node).get(); }
  // The HCA host at `node` (endpoint_model: hca), or null.
  driver::HostNode* host_at(uint32_t node) const { return hosts_.at(node).get(); }
  // Counters of the port at (node, port): a switch port, an endpoint or an HCA.
  const link::PortCounters& port_counters(uint32_t node, uint16_t port) const;
  // The perftest the scenario runs, or null.
  apps::Perftest* perftest() const { return perftest_.get(); }
  // The flows' programs on HCA hosts, or null (fabric-only endpoints, or no flows).
  apps::FlowStreams* flow_streams() const { return flow_streams_.get(); }
  // The in-band subnet manager (subnet_manager.mode: in_band), or null.
  sm::InbandSm* subnet_manager() const { return inband_sm_.get(); }
  // The scenario's link events (docs/management.md), or null when it has none.
  const LinkEvents* link_events() const { return link_events_.get(); }
  // The CBR connections' programs on HCA hosts, or null (fabric-only endpoints, or no
  // connections section).
  apps::CbrStreams* cbr_streams() const { return cbr_streams_.get(); }
  // The phased mix's per-phase results (scenario key mix), or null.
  metrics::MixMetrics* mix_metrics() const { return mix_metrics_.get(); }
  // The message timeline (outputs.timeline on HCA hosts), or null.
  const metrics::Timeline* timeline() const { return timeline_.get(); }
  link::Link* link_at(size_t index) const { return links_.at(index).get(); }
  // Data rate of the cable at (node, port), bytes per second.
  double port_rate_bytes_per_s(uint32_t node, uint16_t port) const;
  // The connection manager (a connections section), or null: the admitted connections,
  // their paths and every output port's admission state.
  const sm::ConnectionManager* connections() const { return connections_.get(); }
  // The flows as simulated: the scenario's flows followed by the expanded traffic streams,
  // the trace's flows and the control section's senders (FlowConfig::control).
  const std::vector<FlowConfig>& flows() const { return flows_; }

  // Packets injected and neither delivered nor dropped: the pool's live packets less those
  // HCAs hold off the wire (Hca::packets_held).
  uint64_t packets_in_flight() const;
  // The run's packet pool (split runs take packets out of it and put them in).
  ib::PacketPool& packet_pool() { return packets_; }
  uint64_t packets_buffered_in_switches() const;
  // Closes the models' time accumulators; call once after the last sc_start.
  void finish();

 private:
  void build_nodes();
  void build_links();
  // The model at `r` if it takes direct calls across a cable (link/direct_port.h: switches
  // and endpoints), else null; and setting (peer null: clearing) its direct peer.
  link::DirectPort* direct_port(const topo::PortRef& r) const;
  void set_direct_peer(const topo::PortRef& at, link::DirectPort* peer, uint16_t peer_port, uint64_t propagation_ps);
  // switch.model flit_wormhole (fabric_flit.cpp): refuses what the flit routers do not model
  // and sets every cable to the flit link rate; makes the FlitFabric; loads its routes.
  bool flit_model() const { return scenario_.switch_cfg.model == sw::SwitchModel::flit_wormhole; }
  void prepare_flit_model();
  void build_flit_fabric();
  void program_flit_routes();
  void check_every_endpoint_reachable() const;
  void check_path_sls() const;
  uint32_t largest_packet_bytes() const;
  void program_switches();
  void start_inband_sm();
  void program_lifetimes();
  void admit_connections();
  void build_cbr_sources();
  void program_vlarb(uint32_t port_index);
  void schedule_releases();
  void build_multicast();
  void multicast_vlarb();
  // multicast_bandwidth with destinations: downstream: every port's table from the receivers
  // its copies serve (after the MFTs are loaded).
  void program_multicast_vlarb();
  // The low-priority VLArb table that gives the multicast VL the allocation's weight for n
  // destinations (seed 000 Sec. 3.6.2).
  link::VlArbConfig multicast_table(size_t n) const;
  const MulticastGroupConfig* group_named(const std::string& name) const;
  void build_flows();
  void build_trace_flows();
  void build_control_flows();
  void attach_captures(const std::string& out_dir);
  void build_programs();
  void spawn_unwinder();

  Scenario scenario_;
  sm::RoutingTables routing_;
  uint32_t path_sl_layers_ = 0;  // SLs the routing spreads paths over (dfsssp), 0 or 1: one
  ib::PacketPool packets_;
  link::PayloadPool payloads_;
  sim::Probe probe_;
  std::unique_ptr<metrics::Recorder> recorder_;
  std::vector<workload::FlowMix> mix_plan_;  // scenario key mix: each flow's phases
  std::unique_ptr<metrics::MixMetrics> mix_metrics_;
  // Owners of the fabric's SystemC objects, destroyed newest first. SystemC's port and export
  // registries look for the object to remove from their newest end and fill its slot with
  // the newest one, so destroying the oldest first costs a scan of every socket per socket:
  // 2.3 billion instructions, longer than the run, at the end of a 1,024-host fat tree.
  template <class T>
  struct NewestFirst : std::vector<std::unique_ptr<T>> {
    ~NewestFirst() {
      while (!this->empty()) this->pop_back();
    }
  };
  NewestFirst<sw::Switch> switches_;        // by node; null for endpoints
  NewestFirst<ep::Endpoint> endpoints_;     // by node; null for switches and HCA hosts
  NewestFirst<driver::HostNode> hosts_;     // by node; null unless an HCA host
  NewestFirst<link::Link> links_;           // by topology cable; null between flit routers
  std::unique_ptr<flit::FlitFabric> flit_;
  std::vector<FlowConfig> flows_;
  std::vector<sw::Mft> mft_;  // by node, the multicast groups' tables; empty without groups
  std::vector<std::unique_ptr<ep::TrafficSource>> sources_;
  std::vector<std::unique_ptr<link::LinkTap>> taps_;
  std::unique_ptr<sm::ConnectionManager> connections_;
  std::vector<std::unique_ptr<workload::CbrSource>> cbr_sources_;
  // On HCA hosts the sources are walked by the hosts' programs (apps::CbrStreams), not
  // pulled by an endpoint: each with the node that sends it.
  std::vector<std::pair<uint32_t, workload::CbrSource*>> hca_cbr_sources_;
  std::unique_ptr<apps::CbrStreams> cbr_streams_;
  // hold_time: connections that send no packet, by end time, and the next one to release;
  // the others are released when their last packet is out of the fabric (release_watch_).
  std::vector<std::pair<uint64_t, uint32_t>> releases_;
  size_t next_release_ = 0;
  std::unique_ptr<sim::FabricObserver> release_watch_;
  std::vector<uint32_t> pending_releases_;
  sc_core::sc_event release_event_;
  void release_due();
  std::unique_ptr<apps::Perftest> perftest_;
  std::unique_ptr<apps::FlowStreams> flow_streams_;
  std::unique_ptr<sm::InbandSm> inband_sm_;
  std::unique_ptr<LinkEvents> link_events_;
  // The control section on HCA hosts: its sources feed the HCAs' VL15 queues (on fabric-only
  // endpoints they are in sources_, pulled by the endpoints).
  std::vector<std::unique_ptr<workload::ControlSource>> hca_control_sources_;
  std::unique_ptr<apps::ControlAgents> control_agents_;
  std::unique_ptr<metrics::Timeline> timeline_;
  sc_core::sc_event unwind_event_;  // ~Fabric: kill the threads still suspended
};

}  // namespace ibvp
