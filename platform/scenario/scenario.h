#pragma once
// A scenario: everything one simulation run needs, as loaded and validated from a YAML
// document (scenario_loader.h) or built in code. Units are in the types (sc_time) or in
// the names (_bytes, _m).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/endpoint/endpoint.h"
#include "models/hca/hca.h"
#include "models/host/host_bus.h"
#include "models/host/host_memory.h"
#include "models/link/link_rate.h"
#include "models/switch/switch.h"
#include "platform/sm/routing.h"
#include "platform/topology/topology.h"

namespace ibvp {

// Transport of a perftest QP (the verbs names rc, ud; platform/driver/verbs.h QpType).
enum class PerftestQpType : uint8_t { rc, ud };

enum class GeneratorKind : uint8_t {
  saturating,  // always has a packet ready: the flow sends whenever credits and IPD allow
  constant,    // one packet every payload-time / load (deterministic inter-arrival)
  poisson,     // exponential inter-arrival times with mean payload-time / load
  video,       // one frame per frame_period, all its packets at once (platform/workload/video_source.h)
};
enum class DestinationPattern : uint8_t {
  fixed,    // always `dst`
  uniform,  // any other endpoint, uniformly at random per packet
  hotspot,  // with probability hotspot_fraction one of `hotspots`, otherwise uniform
};

// How a flow's packets pick among a destination's alternative paths (seed 000 Sec. 3.4).
enum class FlowMultipath : uint8_t {
  none,    // the switches decide (switch.path_selection)
  random,  // reliable datagrams: the source picks one path per packet at random (seeded)
};

// One flow, or (with pattern != fixed) a traffic stream whose destinations vary per packet.
struct FlowConfig {
  std::string name;
  std::string src;                 // endpoint name
  std::string dst;                 // endpoint name (pattern fixed)
  DestinationPattern pattern = DestinationPattern::fixed;
  std::vector<std::string> hotspots;
  double hotspot_fraction = 0.0;
  GeneratorKind generator = GeneratorKind::saturating;
  double load = 1.0;               // offered load as a fraction of the source link's data rate
  uint32_t payload_bytes = 2048;
  uint8_t sl = 0;
  uint32_t ipd = 0;                // static inter-packet delay, in packet times
  sc_core::sc_time start = sc_core::SC_ZERO_TIME;
  sc_core::sc_time stop = sc_core::sc_max_time();  // no packet is created at or after stop
  uint32_t dlid_offset = 0;        // LMC path bits: dlid = base LID + offset
  FlowMultipath multipath = FlowMultipath::none;
  bool vl15 = false;               // management traffic on VL15: uncredited, dropped on overflow
  // Seed 004 Sec. 6.3.2 dynamic flows: ON and OFF periods exponentially distributed with this
  // mean each (ON first, from start); 0: the flow is static (always on between start and stop).
  sc_core::sc_time on_off_mean = sc_core::SC_ZERO_TIME;
  // generator video (issue 11, seed 000 Sec. 4): frame sizes from a trace file (relative to
  // the scenario file; frames loaded by the loader into video_frames) or from the MPEG-2
  // generator at video_bit_rate with the GOP pattern video_gop; one frame every frame_period.
  std::string video_trace;
  std::vector<uint32_t> video_frame_bytes;  // the trace's frame sizes, in order
  std::string video_frame_types;            // the trace's frame types ('I', 'P', 'B'), in order; may be empty
  double video_bit_rate = 0.0;              // b/s; 0: not given
  std::string video_gop = "IBBPBBPBBPBB";
  sc_core::sc_time frame_period = sc_core::sc_time::from_value(33'333'333'333);  // 1/30 s in ps
  // Seed 003 Sec. 3.1: the rate the flow reserves, b/s, that switches' rate schedulers (and
  // on HCA hosts the firmware's VirtualClock) charge it at; 0: not given (a video flow then
  // reserves its stream's mean rate, other flows none). workload::reserved_rate_bps.
  double reserved_rate = 0.0;
  // HCA hosts: the doorbell priority class of the flow's send QP (seed 003 Sec. 3.3.1, higher
  // first); -1: not given (class 0).
  int32_t doorbell_class = -1;
  bool control = false;  // one of the control section's senders (not a key: the builder sets it)
};

// Traffic on every endpoint at once (the pattern-based studies of seed 001): expands into
// one FlowConfig per endpoint.
struct TrafficConfig {
  bool enabled = false;
  GeneratorKind generator = GeneratorKind::poisson;
  DestinationPattern pattern = DestinationPattern::uniform;
  double load = 0.3;
  uint32_t payload_bytes = 256;
  uint8_t sl = 0;
  std::vector<std::string> hotspots;
  double hotspot_fraction = 0.0;
  sc_core::sc_time start = sc_core::SC_ZERO_TIME;
  sc_core::sc_time stop = sc_core::sc_max_time();
};

// Packets listed one by one (a trace, or a Python generator's output): CSV with the header
// time_s,src,dst,payload_bytes,sl. Each (source, SL) becomes one flow named trace/<src>/sl<sl>.
struct TracePacket {
  uint64_t time_ps = 0;
  uint32_t src = 0;  // topology node indices
  uint32_t dst = 0;
  uint32_t payload_bytes = 0;
  uint8_t sl = 0;
};
struct TraceConfig {
  std::string file;                  // as written, relative to the scenario file
  std::vector<TracePacket> packets;  // loaded from it, in time order
};

struct PcapConfig {
  std::string node;      // capture what node's port transmits and receives
  uint16_t port = 1;
  std::string file;      // relative to the output directory
  bool upper_pdu = true; // link type 252 (exported PDU, "infiniband"); false: 247
};

struct OutputConfig {
  bool packets_csv = true;
  sc_core::sc_time rate_window = sc_core::sc_time(2, sc_core::SC_MS);  // sliding window width
  sc_core::sc_time rate_step = sc_core::sc_time(100, sc_core::SC_US);  // sample spacing
  // Ports whose transmit rate is sampled over time, as "node/port" (plus all flows).
  std::vector<std::string> rate_ports;
  std::vector<PcapConfig> pcaps;
  sc_core::sc_time progress_interval = sc_core::SC_ZERO_TIME;  // 0: no progress lines
  // Chrome/Perfetto trace of each message's life on HCA hosts, relative to the output
  // directory; "": none (platform/metrics/timeline.h).
  std::string timeline;
  // CBR connections' metrics (seed 002 Figs. 3-5, platform/metrics/connection_metrics.h;
  // the same defaults as metrics::ConnectionMetricsConfig, a test keeps them equal).
  std::vector<double> deadline_thresholds{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0};  // fractions of D
  std::vector<double> jitter_bins{0.5, 0.75, 0.9, 0.95, 1.05, 1.1, 1.25, 1.5};     // IAT / nominal IAT
  double rank_threshold = 0.01;
  uint64_t rank_min_packets = 10;  // connections with fewer packets are not ranked  // best and worst connections are ranked at rank_threshold x D
};

// What each endpoint of the topology is: a fabric-only CA port fed by flows (ep::Endpoint),
// or a host with memory, CPU, PCIe bus and a programmable HCA (driver::HostNode).
enum class EndpointModel : uint8_t { fabric, hca };

// How the fabric's scheduler orders actions due at the same time (models/sim/timed_queue.h):
// fifo, in push order; canonical, by the pushing model and its own push count, the order a
// run split across processes reproduces (docs/parallel.md).
enum class EventOrder : uint8_t { fifo, canonical };

// The `hca:` section: every HCA host's HCA (its CA port tables, data VLs and buffers come
// from the endpoint section, as a subnet manager programs every CA port alike), host bus,
// host memory and CPU.
// Transport of the QPs that carry the flows on HCA hosts (platform/apps/flow_streams.h).
enum class FlowTransport : uint8_t { rc, uc, ud };

struct HcaHostConfig {
  hca::HcaConfig hca;  // firmware_image "" = the default image (driver/firmware_location.h)
  host::HostBusConfig bus;
  host::HostMemoryConfig memory;
  sc_core::sc_time verbs_call_cost = sc_core::sc_time(50, sc_core::SC_NS);
  // How the flows section runs on HCA hosts: one QP per flow at each end.
  FlowTransport flow_transport = FlowTransport::rc;
  uint32_t flow_depth = 16;   // messages a saturating flow keeps posted
  uint32_t flow_mtu = 2048;   // path MTU of the flows' QPs, bytes
  // A named hardware profile (platform/scenario/hca_profile.h): its values were merged into
  // the section where it wrote none; "" for none.
  std::string profile;
};

enum class PerftestKind : uint8_t { send_bw, write_bw, read_bw, send_lat, write_lat };
const char* perftest_kind_name(PerftestKind k);
inline bool perftest_is_bw(PerftestKind k) {
  return k == PerftestKind::send_bw || k == PerftestKind::write_bw || k == PerftestKind::read_bw;
}

// The `perftest:` section: one perftest-style test between two HCA hosts (platform/apps).
struct PerftestConfig {
  bool enabled = false;
  PerftestKind test = PerftestKind::send_bw;
  std::string client, server;     // endpoint names
  std::vector<uint64_t> sizes;    // message sizes; from `sizes` or min_bytes..max_bytes (powers of two)
  bool sizes_given = false;       // the document listed sizes
  uint64_t min_bytes = 2;
  uint64_t max_bytes = 8 << 20;
  uint32_t iterations = 1000;     // messages per size
  PerftestQpType qp_type = PerftestQpType::rc;
  uint32_t tx_depth = 128;        // bandwidth tests: send WRs outstanding
  uint32_t cq_mod = 100;          // bandwidth tests: one signaled send WR every cq_mod
  uint32_t mtu = 4096;            // path MTU, bytes
  uint8_t sl = 0;
  uint32_t inline_size = 0;       // SENDs and WRITEs up to this many bytes go inline (perftest -I)
  uint32_t qps = 1;               // QPs per side (perftest -q); bandwidth tests post over all of them
};


// The `connections:` section (issue 11, seed 002 Sec. 4.2): CBR connections requested at
// random, each admitted along its routed path by the connection manager
// (platform/sm/connection_manager) into the high-priority VL arbitration tables, or refused.
// One class per SL (seed 002 Table 1): a maximum table distance and a bandwidth range.
struct CbrServiceLevel {
  uint8_t sl = 0;
  uint32_t max_distance = 64;    // requested maximum distance between high-table entries
  double min_bandwidth_bps = 0;  // the connection's mean bandwidth is uniform in [min, max]
  double max_bandwidth_bps = 0;
};
struct ConnectionsConfig {
  bool enabled = false;
  std::vector<CbrServiceLevel> service_levels;
  uint32_t payload_bytes = 256;          // every connection's packets (seed 002: 256..4096)
  uint32_t refusals_in_a_row = 1000;     // requests stop after this many consecutive refusals
  uint64_t max_connections = 0;          // 0: no limit besides refusals
  double reservable_fraction = 0.8;      // seed 002 Sec. 4.2: "up to 80% of the available bandwidth"
  // The run ends when every connection has delivered this many packets created after the
  // warm-up (seed 002 Sec. 4.2: "until the connection with a smaller mean bandwidth has
  // received 100 packets"); 0: the run lasts `duration`.
  uint64_t stop_after_packets = 0;
  // Mean of each connection's exponential holding time, from the start of the run; when it
  // ends the connection stops sending and its table entries are released (0: connections
  // last the whole run).
  sc_core::sc_time hold_time = sc_core::SC_ZERO_TIME;
};

// The `control:` section (issue 11; seed 000 Sec. 4, seed 003 Sec. 4.2): control
// (management) traffic. Every sender sends one packet every period on VL15, the highest
// priority, uncredited and dropped where a VL15 buffer overflows (IBA 7.6.9, 7.9.4). It
// expands into one flow per sender, named control/<sender>.
struct ControlConfig {
  bool enabled = false;
  sc_core::sc_time period = sc_core::sc_time::from_value(33'333'333'333);  // seed 000: 33.3 ms (1/30 s in ps)
  uint32_t payload_bytes = 256;      // one MAD (IBA 13.4.1)
  std::vector<std::string> senders;  // endpoint names; empty: every endpoint (but dst)
  std::string dst;                   // endpoint name; empty: a uniformly random other endpoint per packet
  sc_core::sc_time start = sc_core::SC_ZERO_TIME;  // the first packet of every sender
  sc_core::sc_time stop = sc_core::sc_max_time();  // no packet at or after
};
// A multicast group (seed 000 Sec. 3.6, docs/multicast.md): its tree from the subnet
// manager's multicast library (platform/sm/multicast.h), its MFT entries in the switches, and
// the flows whose dst names it.
enum class MulticastTree : uint8_t { source_based, shared };
enum class MulticastDelivery : uint8_t {
  replicate,           // one packet to the group's MLID; switches copy it (switch.multicast_replication)
  replicated_unicast,  // the baseline: the source sends one unicast per member
};
// Seed 000 Sec. 3.6.2: bandwidth for multicast through the VLArb tables. Multicast flows
// send on `sl`, whose VL carries nothing else; every port's low-priority table gives each
// other data VL unicast_weight and that VL unicast_weight x f(n), n the largest group's
// members: f = 1 (equal), n (linear), max(1, round(log2 n)) (logarithmic).
enum class MulticastAllocation : uint8_t { equal, linear, logarithmic };
// Which n a port's weight follows: the receivers its copies serve, or the largest group.
enum class MulticastDestinations : uint8_t { downstream, group };
struct MulticastBandwidthConfig {
  bool enabled = false;
  MulticastAllocation allocation = MulticastAllocation::equal;
  MulticastDestinations destinations = MulticastDestinations::downstream;
  uint8_t sl = 1;
  uint32_t unicast_weight = 32;  // 64-byte units per VLArb entry
};
struct MulticastGroupConfig {
  std::string name;                  // a flow's dst names it
  uint32_t mlid = 0;                 // 0: the next free MLID from 0xC000
  std::string source;                // the endpoint that sends to it
  std::vector<std::string> members;  // endpoints that receive
  MulticastTree tree = MulticastTree::source_based;
  MulticastDelivery delivery = MulticastDelivery::replicate;
};
// A traffic mix whose real-time to best-effort ratio changes in phases (seed 003 Sec. 4.2;
// platform/workload/mix.h, docs/mix.md).
struct MixConfig {
  bool enabled = false;
  double total_load = 0.8;  // both classes, fraction of each source's link
  // Per phase, in order: {real-time, best-effort} percent of total_load (they sum to 100).
  std::vector<std::array<uint32_t, 2>> phases;
  sc_core::sc_time phase_length = sc_core::SC_ZERO_TIME;  // 0: duration / phases
};

// The subnet manager (issue 16, docs/management.md). Out of band, the default, writes the
// routing engine's tables into the switches before time 0. In band runs the SM as host
// software on one HCA host (platform/sm/inband_sm.h): it discovers the fabric by
// directed-route SMPs, assigns LIDs, programs every LFT and brings every port to Active;
// the flows' times count from then (their start 0 is the moment the subnet is up).
enum class SmMode : uint8_t { out_of_band, in_band };
struct SubnetManagerConfig {
  SmMode mode = SmMode::out_of_band;
  std::string host;  // the HCA host the SM runs on; empty: the first endpoint
  uint32_t max_outstanding = 4;  // SMPs on the wire at once (OpenSM max_wire_smps)
  sc_core::sc_time mad_processing = sc_core::sc_time(1, sc_core::SC_US);
  sc_core::sc_time transaction_timeout = sc_core::sc_time(200, sc_core::SC_MS);
  uint32_t retries = 3;
  uint8_t subnet_timeout = 18;  // PortInfo:SubnetTimeout the SM sets; traps resend at 4.096 us x 2^t
  // Out of band: after a link event, the routing engine routes the fabric without its down
  // cables and the tables are loaded this long after the event (reroute: the key was given).
  bool reroute = false;
  sc_core::sc_time reroute_delay = sc_core::SC_ZERO_TIME;
};

// A link event (issue 16, docs/management.md "A link that goes down"): at `at` the cable
// at `link` (node/port, either end) goes down, or comes back up. Times count like the
// flows': from time 0 out of band, from the moment the subnet is up in band.
struct LinkEventConfig {
  sc_core::sc_time at = sc_core::SC_ZERO_TIME;
  std::string link;  // node/port
  bool up = false;   // state: up (false: down)
};

struct Scenario {
  std::string source = "<memory>";  // file it came from
  std::string name;
  topo::Topology topology;
  std::string routing = "minhop";
  sm::RoutingOptions routing_options;  // roots resolved to nodes, lfts_file to a path
  SubnetManagerConfig subnet_manager;
  uint64_t seed = 1;
  sc_core::sc_time duration = sc_core::sc_time(10, sc_core::SC_MS);
  sc_core::sc_time warmup = sc_core::SC_ZERO_TIME;  // statistics ignore packets created before
  sc_core::sc_time deadlock_timeout = sc_core::sc_time(1, sc_core::SC_MS);  // no progress this long = deadlock
  EventOrder event_order = EventOrder::fifo;
  sw::SwitchConfig switch_cfg;
  ep::EndpointConfig endpoint_cfg;
  std::vector<FlowConfig> flows;
  TrafficConfig traffic;
  TraceConfig trace;
  OutputConfig outputs;
  EndpointModel endpoint_model = EndpointModel::fabric;
  HcaHostConfig hca_host;
  PerftestConfig perftest;
  ConnectionsConfig connections;
  ControlConfig control;
  MixConfig mix;
  MulticastBandwidthConfig multicast_bandwidth;  // absent: multicast shares the VLs its SLs map to
  std::vector<MulticastGroupConfig> multicast;  // groups; resolved MLIDs (never 0) after loading
  std::vector<LinkEventConfig> link_events;     // in the order given (the loader checks each link's alternate)
  // A fabric with no traffic of its own is valid: software outside drives it (issue 16,
  // ibvp-sim --serve-umad sets it).
  bool allow_idle = false;
};

}  // namespace ibvp
