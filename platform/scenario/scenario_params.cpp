// Declarations of a scenario document's keys: the top level, flows, traffic, outputs and the
// topology section. The models' own parameters (switch, endpoint, link) are declared next
// to the models and only referenced here.
#include <string>
#include <vector>

#include "models/endpoint/endpoint_params.h"
#include "models/hca/hca_params.h"
#include "models/host/host_params.h"
#include "models/link/link_params.h"
#include "models/switch/switch_params.h"
#include "platform/scenario/scenario_loader.h"
#include "platform/sm/connection_manager.h"
#include "platform/sm/routing.h"
#include "platform/topology/topology.h"
#include "platform/metrics/connection_metrics.h"
#include "platform/workload/video_frames.h"
#include "platform/workload/mix.h"

namespace ibvp {

namespace {

using sim::GroupBuilder;
using sim::ParamError;

const std::vector<std::pair<std::string, GeneratorKind>> kGenerators = {
    {"saturating", GeneratorKind::saturating}, {"constant", GeneratorKind::constant}, {"poisson", GeneratorKind::poisson}};
// Flows may also be video streams (issue 11); the traffic section's per-endpoint streams may not.
const std::vector<std::pair<std::string, GeneratorKind>> kFlowGenerators = {
    {"saturating", GeneratorKind::saturating}, {"constant", GeneratorKind::constant},
    {"poisson", GeneratorKind::poisson}, {"video", GeneratorKind::video}};

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : ", ") + w;
  return s;
}

// The keys `pattern` controls, shared by flows and traffic: a key that the chosen pattern
// ignores is refused rather than silently unused.
template <class Cfg>
void check_pattern(const Cfg& c, const std::set<std::string>& given) {
  if (c.pattern == DestinationPattern::hotspot) {
    if (c.hotspots.empty())
      throw ParamError("hotspots", "pattern hotspot needs at least one hot-spot endpoint",
                       "list endpoint names, e.g. hotspots: [h1]");
    if (c.hotspot_fraction <= 0.0)
      throw ParamError("hotspot_fraction", "pattern hotspot needs a hotspot_fraction above 0",
                       "give the share of packets sent to the hot spots, e.g. hotspot_fraction: 0.2");
  } else {
    for (const char* k : {"hotspots", "hotspot_fraction"})
      if (given.count(k))
        throw ParamError(k, std::string(k) + " is only used with pattern hotspot",
                         "remove it or set pattern: hotspot");
  }
  if (c.start >= c.stop)
    throw ParamError("stop", "stop " + sim::format_time(c.stop) + " is not after start " + sim::format_time(c.start),
                     "give a stop time later than start");
}

// The keys of generator video: exactly one frame-size source, and none of them elsewhere.
void check_video(const FlowConfig& c, const std::set<std::string>& given) {
  const char* keys[] = {"video_trace", "video_bit_rate", "video_gop", "frame_period"};
  if (c.generator != GeneratorKind::video) {
    for (const char* k : keys)
      if (given.count(k))
        throw ParamError(k, std::string(k) + " is only used with generator video", "remove it or set generator: video");
    return;
  }
  const bool trace = given.count("video_trace") > 0, rate = given.count("video_bit_rate") > 0;
  if (trace == rate)
    throw ParamError(trace ? "video_bit_rate" : "video_trace",
                     trace ? "both video_trace and video_bit_rate given: a video flow has one source of frame sizes"
                           : "generator video needs video_trace or video_bit_rate",
                     trace ? "remove one of them" : "add video_trace: <frame-size file> or video_bit_rate: <b/s>");
  if (trace && c.video_trace.empty())
    throw ParamError("video_trace", "the path is empty", "give the frame-size trace file");
  if (given.count("video_gop") && !rate)
    throw ParamError("video_gop", "video_gop shapes the built-in generator, not a trace",
                     "remove video_gop, or use video_bit_rate instead of video_trace");
  if (rate) {
    const std::string problem = workload::Mpeg2FrameGenerator::gop_problem(c.video_gop);
    if (!problem.empty())
      throw ParamError("video_gop", problem, "give a pattern of I, P, B starting with I, e.g. IBBPBBPBBPBB");
  }
  if (given.count("load"))
    throw ParamError("load", "a video flow's rate is that of its frames", "remove load");
  if (c.pattern != DestinationPattern::fixed)
    throw ParamError("pattern", "a video stream goes to one destination", "use pattern: fixed with a dst");
  if (c.payload_bytes == 0)
    throw ParamError("payload_bytes", "a video frame cannot be cut into packets of 0 bytes",
                     "give the packet payload (at most the MTU), e.g. payload_bytes: 2048");
}

template <class Cfg>
void declare_traffic_shape(GroupBuilder<Cfg>& b, bool video) {
  if (video)
    b.choice("generator", &Cfg::generator, kFlowGenerators,
             "saturating: always ready; constant: fixed spacing; poisson: exponential spacing (mean from load); "
             "video: one frame per frame_period (video_trace or video_bit_rate), its packets all at once.");
  else
    b.choice("generator", &Cfg::generator, kGenerators,
             "saturating: always ready; constant: fixed spacing; poisson: exponential spacing (mean from load).");
  b.real("load", &Cfg::load, "fraction", "Offered load as a fraction of the source link's data rate.")
      .real_range(0.0, 1.0, true);
  // 4096 bytes is the largest IBA MTU.
  b.integer("payload_bytes", &Cfg::payload_bytes, "bytes", "Payload of every packet (headers come on top).")
      .range(0, 4096);
  b.integer("sl", &Cfg::sl, "", "Service level of the packets.").range(0, 15);
  b.strings("hotspots", &Cfg::hotspots, "pattern hotspot: the hot-spot destination endpoints.");
  b.real("hotspot_fraction", &Cfg::hotspot_fraction, "fraction",
         "pattern hotspot: share of packets sent to a hot spot (the rest go uniformly).")
      .real_range(0.0, 1.0);
  b.time("start", &Cfg::start, "No packet is created before this time.");
  b.time("stop", &Cfg::stop, "No packet is created at or after this time.").defaults_to("end of run");
  b.rule("start is before stop; pattern hotspot needs hotspots and a hotspot_fraction above 0, other patterns take neither.");
}

const sim::ParamGroup& flow_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<FlowConfig> b("flow", "One traffic flow from one endpoint.");
    b.string("name", &FlowConfig::name, "Name in reports; unique among flows.").defaults_to("flow<index>");
    b.string("src", &FlowConfig::src, "Source endpoint.").require();
    b.string("dst", &FlowConfig::dst, "Destination endpoint (pattern fixed only).");
    b.choice("pattern", &FlowConfig::pattern,
             {{"fixed", DestinationPattern::fixed},
              {"uniform", DestinationPattern::uniform},
              {"hotspot", DestinationPattern::hotspot}},
             "Destination per packet: fixed (dst), uniform (any other endpoint), hotspot.");
    declare_traffic_shape(b, true);
    b.integer("ipd", &FlowConfig::ipd, "packet times",
              "IBA static rate control: idle time after each packet (0: full rate).")
        .range(0, 255);
    b.integer("dlid_offset", &FlowConfig::dlid_offset, "",
              "LMC path bits added to the destination's base LID (selects one of its paths).")
        .range(0, (1 << topo::Topology::kMaxLmc) - 1);
    b.choice("multipath", &FlowConfig::multipath,
             {{"none", FlowMultipath::none}, {"random", FlowMultipath::random}},
             "routing multipath_adaptive: none (each switch chooses by switch.path_selection); random (seed 000 "
             "Sec. 3.4 reliable datagrams: the source picks one of the alternative paths per packet at random, "
             "from the run's seed). Fabric endpoints only; not for video or vl15 flows.");
    b.boolean("vl15", &FlowConfig::vl15,
              "Management traffic: sent on VL15 whatever the SL, not credited, dropped where it overflows.");
    b.time("on_off_mean", &FlowConfig::on_off_mean,
           "Dynamic flow (seed 004 Sec. 6.3.2): mean of its exponential ON and OFF periods; 0: static.")
        .real_range(0, 3600e12);
    b.string("video_trace", &FlowConfig::video_trace,
             "generator video: frame-size trace (lines \"number type bytes\", docs/video.md), relative to the "
             "scenario file; it loops when it ends.");
    b.real("video_bit_rate", &FlowConfig::video_bit_rate, "b/s",
           "generator video: mean bit rate of the built-in MPEG-2 frame generator (instead of video_trace).")
        .real_range(0.0, workload::Mpeg2FrameGenerator::kMaxBitRateBps, true);
    b.string("video_gop", &FlowConfig::video_gop, "generator video with video_bit_rate: GOP pattern of I, P, B frames.");
    b.time("frame_period", &FlowConfig::frame_period,
           "generator video: time between frames (default 1/30 s, rounded down to whole ps).")
        .real_range(1e6, 3600e12);
    b.real("reserved_rate", &FlowConfig::reserved_rate, "b/s",
           "The rate the flow reserves (seed 003 Sec. 3.1): switches with a rate scheduler (switch.scheduling) "
           "and, on HCA hosts, the firmware's VirtualClock charge its packets at it.")
        .real_range(0.0, 1e13, true)
        .defaults_to("a video flow's mean stream rate, none for other flows");
    b.integer("doorbell_class", &FlowConfig::doorbell_class, "class",
              "HCA hosts: the doorbell priority class of the flow's send QP (seed 003 Sec. 3.3.1: the firmware "
              "serves higher classes first); below hca.doorbell_classes.")
        .range(0, 15)
        .defaults_to("0, the lowest");
    b.rule("pattern fixed needs dst; the other patterns take no dst.");
    b.rule("generator video needs exactly one of video_trace and video_bit_rate, pattern fixed and payload_bytes "
           "above 0; video_gop goes with video_bit_rate; the video keys go with generator video only.");
    b.rule("on_off_mean above 0 needs generator saturating: a dynamic flow sends all it can while ON.");
    b.rule("src, dst and hotspots name endpoints of the topology; dst differs from src; dlid_offset is below 2^lmc of dst.");
    b.on_complete([](FlowConfig& c, const std::set<std::string>& given) {
      if (given.count("name") && c.name.empty())
        throw ParamError("name", "the name is empty", "give the flow a name, or leave name out for flow<index>");
      if (c.pattern == DestinationPattern::fixed && !given.count("dst"))
        throw ParamError("dst", "pattern fixed needs a destination", "add dst: <endpoint name>, or choose pattern uniform");
      if (c.pattern != DestinationPattern::fixed && given.count("dst"))
        throw ParamError("dst", "dst is only used with pattern fixed", "remove dst or set pattern: fixed");
      check_pattern(c, given);
      check_video(c, given);
      if (c.multipath == FlowMultipath::random && (c.generator == GeneratorKind::video || c.vl15))
        throw ParamError("multipath", "real-time (video) and vl15 packets take the shortest path (seed 000 Sec. 5.1)",
                         "remove multipath: random from this flow");
      if (c.on_off_mean.value() > 0 && c.generator != GeneratorKind::saturating)
        throw ParamError("on_off_mean", "an ON/OFF flow sends all it can while ON, so it needs generator saturating",
                         "set generator: saturating, or remove on_off_mean");
    });
    return b.build();
  }();
  return group;
}

const sim::ParamGroup& traffic_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<TrafficConfig> b(
        "traffic", "Traffic from every endpoint at once (one flow each); present means enabled.");
    b.choice("pattern", &TrafficConfig::pattern,
             {{"uniform", DestinationPattern::uniform}, {"hotspot", DestinationPattern::hotspot}},
             "Destination per packet: uniform (any other endpoint) or hotspot.");
    declare_traffic_shape(b, false);
    b.on_begin([](TrafficConfig& c) { c.enabled = true; });
    b.on_complete([](TrafficConfig& c, const std::set<std::string>& given) {
      if (c.enabled) check_pattern(c, given);
    });
    return b.build();
  }();
  return group;
}

// Issue 11, seed 000 Sec. 4: "We generate a control packet every 33.3 msec. This traffic has
// the highest priority in our model, and always uses VL15"; seed 003 Sec. 4.2 sends it to
// uniformly distributed destinations.
const sim::ParamGroup& control_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<ControlConfig> b(
        "control",
        "Control (management) traffic on VL15 from every sender, one packet per period; present means enabled.");
    b.time("period", &ControlConfig::period,
           "Time between two packets of one sender (seed 000: 33.3 ms; default 1/30 s in whole ps).")
        .real_range(1e6, 3600e12);
    b.integer("payload_bytes", &ControlConfig::payload_bytes, "bytes",
              "Payload of every control packet (256: one MAD); the packet must fit the VL15 buffers.")
        .range(0, 4096);
    b.strings("senders", &ControlConfig::senders, "Endpoints that send; empty: every endpoint except dst.");
    b.string("dst", &ControlConfig::dst,
             "Endpoint every control packet goes to (a subnet manager's node); empty: a uniformly random other "
             "endpoint per packet, drawn from the seed.")
        .defaults_to("uniform");
    b.time("start", &ControlConfig::start, "Every sender's first packet.");
    b.time("stop", &ControlConfig::stop, "No packet is sent at or after this time.").defaults_to("end of run");
    b.rule("start is before stop and before duration; senders and dst name endpoints, each sender once, dst not "
           "among them; each sends to itself never.");
    b.on_begin([](ControlConfig& c) { c.enabled = true; });
    b.on_complete([](ControlConfig& c, const std::set<std::string>& given) {
      if (c.enabled && given.count("stop") && c.stop <= c.start)
        throw ParamError("stop", "stop " + sim::format_time(c.stop) + " is not after start " + sim::format_time(c.start),
                         "give a stop after start, or leave stop out");
      if (given.count("dst") && c.dst.empty())
        throw ParamError("dst", "dst is empty", "name an endpoint, or leave dst out for uniform destinations");
    });
    return b.build();
  }();
  return group;
}

// Issue 16: the in-band subnet manager's knobs carry OpenSM's names and defaults.
const sim::ParamGroup& subnet_manager_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<SubnetManagerConfig> b(
        "subnet_manager", "How the fabric is brought up: tables written out of band, or an SM in band (docs/management.md).");
    b.choice("mode", &SubnetManagerConfig::mode, {{"out_of_band", SmMode::out_of_band}, {"in_band", SmMode::in_band}},
             "out_of_band: the routing engine's tables are in the switches at time 0. in_band: an SM on one HCA "
             "host discovers the fabric by directed-route SMPs, assigns LIDs, programs the LFTs, SL2VL, VLArb and "
             "MFT tables and brings every port to Active; flow times count from the moment the subnet is up "
             "(endpoint_model: hca).");
    b.string("host", &SubnetManagerConfig::host, "The HCA host the SM runs on.").defaults_to("the first endpoint");
    b.integer("max_outstanding", &SubnetManagerConfig::max_outstanding, "SMPs",
              "SMPs on the wire at once (OpenSM's max_wire_smps).")
        .range(1, 1024);
    b.time("mad_processing", &SubnetManagerConfig::mad_processing,
           "Host time the SM spends on every response it reads.")
        .real_range(0, 1e12);
    b.time("transaction_timeout", &SubnetManagerConfig::transaction_timeout,
           "An SMP without a response this long is sent again (OpenSM's transaction_timeout).")
        .real_range(1e3, 3600e12);
    b.integer("retries", &SubnetManagerConfig::retries, "",
              "Resends of an SMP before the sweep fails (OpenSM's transaction_retries).")
        .range(0, 100);
    b.integer("subnet_timeout", &SubnetManagerConfig::subnet_timeout, "code",
              "PortInfo:SubnetTimeout the SM sets on every port (OpenSM's subnet_timeout): a switch resends an "
              "unrepressed trap every 4.096 us x 2^code (18: 1.07 s).")
        .range(0, 31);
    b.time("reroute_delay", &SubnetManagerConfig::reroute_delay,
           "mode out_of_band: this long after each link event the routing engine routes the fabric without "
           "its down cables and the new tables are loaded into the switches (no SMPs).")
        .real_range(0, 3600e12)
        .defaults_to("absent: no reroute (the tables of time 0 stay)");
    b.on_complete([](SubnetManagerConfig& c, const std::set<std::string>& given) {
      c.reroute = given.count("reroute_delay") != 0;
    });
    return b.build();
  }();
  return group;
}

// Issue 16: a cable that goes down (or comes back) during the run.
const sim::ParamGroup& link_event_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<LinkEventConfig> b("link_event", "A cable that goes down or comes back up during the run.");
    b.time("at", &LinkEventConfig::at,
           "When, counted like the flows' times (from the moment the subnet is up with an in-band SM).")
        .require();
    b.string("link", &LinkEventConfig::link, "The cable, as node/port of either end, e.g. leaf1/3.").require();
    b.choice("state", &LinkEventConfig::up, {{"down", false}, {"up", true}},
             "down: the cable carries nothing from then on; up: it trains again (Init, for an in-band SM to "
             "activate; Active out of band).")
        .require();
    return b.build();
  }();
  return group;
}

const sim::ParamGroup& trace_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<TraceConfig> b("trace", "Packets listed one by one: a trace file, or a Python generator's output.");
    b.string("file", &TraceConfig::file,
             "CSV with the header time_s,src,dst,payload_bytes,sl; relative to the scenario file; a regular "
             "file of at most 256 MiB.")
        .require();
    b.rule("every row names two different endpoints, a payload of 0..4096 bytes, an SL of 0..15 and a time "
           "before duration; each (src, sl) becomes the flow trace/<src>/sl<sl>.");
    return b.build();
  }();
  return group;
}

const sim::ParamGroup& pcap_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<PcapConfig> b("pcap", "A packet capture of one port (both directions).");
    b.string("node", &PcapConfig::node, "Node whose port is captured.").require();
    b.integer("port", &PcapConfig::port, "", "Port number on that node.").range(1, topo::Topology::kMaxPorts);
    b.string("file", &PcapConfig::file, "Capture file, a relative path inside the output directory (no \"..\").")
        .defaults_to("<node>-<port>.pcap");
    b.choice_with("link_type", {"upper_pdu", "infiniband"},
                  [](PcapConfig& c, const std::string& v) { c.upper_pdu = v == "upper_pdu"; }, "upper_pdu",
                  "pcap link type: upper_pdu (252, Wireshark exported PDU) or infiniband (247).");
    b.on_complete([](PcapConfig& c, const std::set<std::string>& given) {
      if (given.count("file") && c.file.empty())
        throw ParamError("file", "the file name is empty", "name the capture file, or leave file out for <node>-<port>.pcap");
    });
    return b.build();
  }();
  return group;
}

const sim::ParamGroup& output_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<OutputConfig> b("outputs", "What a run writes besides its summary.");
    b.boolean("packets_csv", &OutputConfig::packets_csv, "Write one line per delivered packet (packets.csv).");
    b.time("rate_window", &OutputConfig::rate_window, "Width of the sliding window rates are averaged over.")
        .real_range(0, 3600e12, true);
    // The loader bounds duration / rate_step (points per series, kMaxRateSamples).
    b.time("rate_step", &OutputConfig::rate_step, "Spacing of rate samples (at most 1,000,000 per series over the run).")
        .real_range(0, 3600e12, true);
    b.strings("rate_ports", &OutputConfig::rate_ports,
              "Ports whose transmit rate is sampled over time, as node/port (flows are always sampled).");
    b.objects("pcaps", &OutputConfig::pcaps, pcap_params(), "Packet captures.");
    b.time("progress_interval", &OutputConfig::progress_interval, "Print a progress line this often (0: never).")
        .real_range(0, 3600e12);
    b.string("timeline", &OutputConfig::timeline,
             "Chrome/Perfetto trace (JSON) of each send message's stages on HCA hosts (doorbell, WQE fetch, "
             "packets, ACK, CQE, poll), a relative path inside the output directory; absent: none.");
    b.rule("rate_ports and pcaps name cabled ports of existing nodes; pcap files are distinct; timeline and pcap "
           "files are relative paths that stay inside the output directory (no absolute path, no \"..\").");
    // seed 002 Sec. 4.3 (docs/realtime_metrics.md): per-connection metrics of CBR connections.
    b.reals("deadline_thresholds", &OutputConfig::deadline_thresholds, "fraction of D",
            "CBR connections: delay thresholds as fractions of each connection's deadline D (seed 002 Fig. 3).")
        .positive();
    b.reals("jitter_bins", &OutputConfig::jitter_bins, "IAT / nominal IAT",
            "CBR connections: edges of the inter-arrival-time intervals, relative to the nominal IAT (seed 002 Fig. 4).")
        .positive();
    b.real("rank_threshold", &OutputConfig::rank_threshold, "fraction of D",
           "CBR connections: the threshold at which each SL's best and worst connections are ranked (seed 002 Fig. 5: D/100).");
    b.integer("rank_min_packets", &OutputConfig::rank_min_packets, "packets",
              "CBR connections: only connections with at least this many packets (created after the warm-up) are "
              "ranked best or worst.")
        .range(1, 1'000'000'000);
    b.rule("deadline_thresholds are strictly increasing, above 0 and include 1 (D); jitter_bins are strictly "
           "increasing, above 0, with one edge at or below 1 and one above; rank_threshold is one of deadline_thresholds.");
    b.on_complete([](OutputConfig& c, const std::set<std::string>&) {
      if (std::string p = metrics::deadline_thresholds_problem(c.deadline_thresholds); !p.empty())
        throw ParamError("deadline_thresholds", p,
                         "give fractions of D in increasing order that include 1, e.g. [0.01, 0.1, 0.5, 1]");
      if (std::string p = metrics::jitter_bins_problem(c.jitter_bins); !p.empty())
        throw ParamError("jitter_bins", p,
                         "give increasing edges around 1, e.g. [0.5, 0.9, 1.1, 1.5] (intervals below 0.5, ..., at or above 1.5)");
      if (std::string p = metrics::rank_threshold_problem(c.rank_threshold, c.deadline_thresholds); !p.empty())
        throw ParamError("rank_threshold", p, "use one of deadline_thresholds, or add it to them");
    });
    return b.build();
  }();
  return group;
}

// The port of an HCA host is the scenario's endpoint port (data VLs, buffers, SL2VL, VL
// arbitration, which a qos section may set): the HCA group's own port keys are left out.
bool is_port_key(const std::string& name) {
  for (const char* k : {"data_vls", "vl_buffer_bytes", "vl15_buffer_bytes", "vlarb", "sl2vl"})
    if (name == k) return true;
  return false;
}

const sim::ParamGroup& hca_host_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<HcaHostConfig> b(
        "hca", "Every HCA host (endpoint_model: hca): the HCA, its PCIe host bus, host memory and CPU. The CA "
               "port's data VLs, buffers, SL2VL and VL arbitration are the endpoint section's.");
    sim::ParamGroup g = b.build();
    // The HCA's own declarations (models/hca/hca_params.cpp), bound through HcaHostConfig::hca.
    const auto hca_of = [](void* c) -> void* { return &static_cast<HcaHostConfig*>(c)->hca; };
    for (const sim::ParamDecl& d : hca::hca_params().params) {
      if (is_port_key(d.name)) continue;
      sim::ParamDecl w = d;
      if (d.set) w.set = [set = d.set, hca_of](void* c, const sim::ParamValue& v) { set(hca_of(c), v); };
      if (d.member) w.member = [member = d.member, hca_of](void* c) { return member(hca_of(c)); };
      if (d.resize) w.resize = [resize = d.resize, hca_of](void* c, size_t n) { resize(hca_of(c), n); };
      if (d.item) w.item = [item = d.item, hca_of](void* c, size_t i) { return item(hca_of(c), i); };
      if (d.name == "firmware_image")
        w.defaults_to("the default image (firmware/default): $IBVP_FIRMWARE_DIR's, else the installed ibvp "
                      "package's, else the build tree's");
      g.params.push_back(std::move(w));
    }
    GroupBuilder<HcaHostConfig> more("hca", "");
    more.string("profile", &HcaHostConfig::profile,
                "A named hardware profile whose values apply to every key of this section the scenario does not "
                "write (docs/hca.md, \"Hardware profiles\"): connectx4_edr.");
    more.object("host_bus", &HcaHostConfig::bus, host::host_bus_params(), "The PCIe link between HCA and host.");
    more.object("host_memory", &HcaHostConfig::memory, host::host_memory_params(), "Host DRAM.");
    // Real calls take tens of ns; 1 ms bounds typos (a unit off by 10^6) without limiting studies.
    more.time("verbs_call_cost", &HcaHostConfig::verbs_call_cost,
              "Host CPU time of one verbs call (building a WQE, bookkeeping); doorbell stores go over the bus.")
        .real_range(0, 1e9);
    more.choice("flow_transport", &HcaHostConfig::flow_transport,
                {{"RC", FlowTransport::rc}, {"UC", FlowTransport::uc}, {"UD", FlowTransport::ud}},
                "Transport of the QPs that carry the flows section (one QP per flow at each end; "
                "docs/hca.md, \"Flows on HCA hosts\").");
    more.integer("flow_depth", &HcaHostConfig::flow_depth, "messages",
                 "Messages a saturating flow keeps posted on its QP (its send queue depth).")
        .range(1, 4096);
    more.choice("flow_mtu", &HcaHostConfig::flow_mtu,
                {{"256", 256u}, {"512", 512u}, {"1024", 1024u}, {"2048", 2048u}, {"4096", 4096u}},
                "Path MTU of the flows' QPs in bytes; a message of payload_bytes is split into MTU packets "
                "(RC, UC), a UD message fits one.");
    for (sim::ParamDecl& d : more.build().params) g.params.push_back(std::move(d));
    g.rules.push_back(
        "firmware_image is relative to the scenario file's directory; it is loaded when the scenario is "
        "validated: an ELF shared object for this machine, with the platform's HAL version and entry points.");
    g.complete = [](void* c, const std::set<std::string>&) { hca::check_hca(static_cast<HcaHostConfig*>(c)->hca); };
    return g;
  }();
  return group;
}

const sim::ParamGroup& perftest_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<PerftestConfig> b(
        "perftest", "A perftest-style test between two HCA hosts (docs/perftest.md); present means enabled.");
    b.choice("test", &PerftestConfig::test,
             {{"send_bw", PerftestKind::send_bw},
              {"write_bw", PerftestKind::write_bw},
              {"read_bw", PerftestKind::read_bw},
              {"send_lat", PerftestKind::send_lat},
              {"write_lat", PerftestKind::write_lat}},
             "Which test: ib_send_bw, ib_write_bw, ib_read_bw, ib_send_lat or ib_write_lat.");
    b.string("client", &PerftestConfig::client, "Endpoint that runs the client (sends, writes, reads).").require();
    b.string("server", &PerftestConfig::server, "Endpoint that runs the server.").require();
    b.raw_list("sizes", "Message sizes in bytes, e.g. [2, 64, 65536]; default: powers of two min_bytes..max_bytes.");
    b.integer("min_bytes", &PerftestConfig::min_bytes, "bytes", "Smallest message size (without sizes).")
        .range(1, int64_t{1} << 31);
    b.integer("max_bytes", &PerftestConfig::max_bytes, "bytes", "Largest message size (without sizes).")
        .range(1, int64_t{1} << 31);
    b.integer("iterations", &PerftestConfig::iterations, "messages", "Messages per size (perftest -n).")
        .range(1, 1 << 20);
    b.choice("qp_type", &PerftestConfig::qp_type, {{"RC", PerftestQpType::rc}, {"UD", PerftestQpType::ud}},
             "Transport (perftest -c).");
    b.integer("tx_depth", &PerftestConfig::tx_depth, "WRs", "Bandwidth tests: send WRs outstanding (perftest -t).")
        .range(1, 1 << 15);
    b.integer("cq_mod", &PerftestConfig::cq_mod, "WRs",
              "Bandwidth tests: one signaled send WR every cq_mod (perftest -Q); at most tx_depth is used.")
        .range(1, 1 << 15);
    b.choice("mtu", &PerftestConfig::mtu,
             {{"256", 256u}, {"512", 512u}, {"1024", 1024u}, {"2048", 2048u}, {"4096", 4096u}},
             "Path MTU in bytes (perftest -m); UD messages are at most one MTU.");
    b.integer("sl", &PerftestConfig::sl, "", "Service level of the QPs (perftest -S).").range(0, 15);
    b.integer("inline_size", &PerftestConfig::inline_size, "bytes",
              "SENDs and WRITEs up to this size carry their data inline in the WQE (perftest -I; perftest's "
              "default on ConnectX is 188 for the send tests); 0: none, at most 192.")
        .range(0, IBVP_MAX_INLINE_DATA);
    b.integer("qps", &PerftestConfig::qps, "QPs",
              "QPs per side (perftest -q): bandwidth tests run iterations messages on each, tx_depth "
              "outstanding per QP, posted QP after QP; BW and MsgRate count every QP's messages.")
        .range(1, 64);
    b.on_begin([](PerftestConfig& c) { c.enabled = true; });
    b.rule("client and server are two different endpoints; the scenario has endpoint_model: hca.");
    b.rule("min_bytes <= max_bytes; sizes and min_bytes/max_bytes are not both given; UD sizes are at most mtu.");
    b.rule("qps above 1 only with a bandwidth test (send_bw, write_bw, read_bw).");
    b.on_complete([](PerftestConfig& c, const std::set<std::string>& given) {
      if (!c.enabled) return;
      if (given.count("sizes") && (given.count("min_bytes") || given.count("max_bytes")))
        throw ParamError("sizes", "sizes and min_bytes/max_bytes both given", "give either a list of sizes or a range");
      if (c.qps > 1 && !perftest_is_bw(c.test))
        throw ParamError("qps", "qps " + std::to_string(c.qps) + " with a latency test",
                         "give qps: 1 (perftest's latency tests run one QP) or a bandwidth test");
      if (c.min_bytes > c.max_bytes)
        throw ParamError("min_bytes", "min_bytes " + std::to_string(c.min_bytes) + " is above max_bytes " +
                                          std::to_string(c.max_bytes),
                         "give min_bytes <= max_bytes");
    });
    return b.build();
  }();
  return group;
}

struct GeneratorKeys {
  const char* name;
  std::vector<std::string> required;
  std::vector<std::string> optional;
};

const std::vector<GeneratorKeys>& generator_keys() {
  static const std::vector<GeneratorKeys> table = {
      {"two_switch", {"local", "remote"}, {}},
      {"random_irregular", {"switches"}, {"seed", "switch_ports", "host_ports", "cycles"}},
      {"single_switch", {"hosts"}, {}},
      {"fat_tree", {"k", "n"}, {}},
      {"mesh", {"x", "y"}, {"hosts_per_switch"}},
      {"torus", {"x", "y"}, {"hosts_per_switch"}},
  };
  return table;
}

const sim::ParamGroup& topology_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<TopologySpec> b(
        "topology", "The fabric: exactly one of file, generator (with its parameters) or inline.");
    b.string("file", &TopologySpec::file,
             "Topology file (docs/topology.md), relative to the scenario file's directory.");
    b.string("node_name_map", &TopologySpec::node_name_map,
             "With an ibnetdiscover file: a node-name map (lines 0x<node GUID> \"<name>\", as infiniband-diags "
             "read) naming its nodes; relative to the scenario file's directory.")
        .defaults_to("the names in the dump");
    std::vector<std::string> names;
    for (const GeneratorKeys& g : generator_keys()) names.push_back(g.name);
    b.choice_with("generator", names, [](TopologySpec& t, const std::string& v) { t.generator = v; }, "",
                  "Generated fabric; its parameters are the keys below marked with its name.");
    const uint32_t max_ports = topo::Topology::kMaxPorts;
    // two_switch: B has the inter-switch cable, B_C and B_V besides its local sources; A has
    // the cable and A_V besides its remote sources.
    b.integer("local", &TopologySpec::local, "hosts", "two_switch: local sources B_L1.. on switch B.")
        .range(0, max_ports - 3)
        .no_default();
    b.integer("remote", &TopologySpec::remote, "hosts", "two_switch: remote sources A_R1.. on switch A.")
        .range(0, max_ports - 2)
        .no_default();
    b.integer("switches", &TopologySpec::switches, "switches", "random_irregular: number of switches.")
        .range(1, 4096)
        .no_default();
    b.integer("switch_ports", &TopologySpec::switch_ports, "ports",
              "random_irregular: ports per switch cabled to other switches.")
        .range(1, max_ports - 1);
    b.integer("host_ports", &TopologySpec::host_ports, "ports", "random_irregular: hosts per switch.")
        .range(0, max_ports - 1);
    b.integer("seed", &TopologySpec::seed, "", "random_irregular: seed of the random graph.")
        .defaults_to("the scenario's seed (low 32 bits)");
    b.integer("cycles", &TopologySpec::cycles, "cycles",
              "random_irregular: independent cycles of the switch graph (switch cables - switches + 1): a random "
              "spanning tree plus this many random cables (seed 000 Sec. 5.1: nine).")
        .range(0, 1u << 20)
        .defaults_to("as many cables as the switch ports allow");
    b.integer("hosts", &TopologySpec::hosts, "hosts", "single_switch: hosts h1.. on one switch.")
        .range(1, max_ports)
        .no_default();
    b.integer("k", &TopologySpec::k, "", "fat_tree: arity of the k-ary n-tree (k^n hosts).")
        .range(1, max_ports / 2)
        .no_default();
    b.integer("n", &TopologySpec::n, "", "fat_tree: levels of the k-ary n-tree.")
        .range(1, 16)
        .no_default();
    b.integer("x", &TopologySpec::x, "switches", "mesh, torus: switches along x.")
        .range(1, 1024)
        .no_default();
    b.integer("y", &TopologySpec::y, "switches", "mesh, torus: switches along y.")
        .range(1, 1024)
        .no_default();
    b.integer("hosts_per_switch", &TopologySpec::hosts_per_switch, "hosts", "mesh, torus: hosts on each switch.")
        .range(0, max_ports - 4);
    b.object("link", &TopologySpec::link, link::link_params(), "Generators: settings of every cable.")
        .defaults_to("the generator's own (4X SDR 1 m; random_irregular 1X SDR 1 m)");
    b.raw_object("inline", "A topology in the topology file format (defaults, switches, hosts, links).");
    b.rule("Give exactly one of file, generator, inline.");
    b.rule("A generator takes only its own parameters and needs all but seed, switch_ports, host_ports, "
           "cycles, hosts_per_switch; link applies to generators only (a topology file sets its own cables).");
    b.on_complete([](TopologySpec& t, const std::set<std::string>& given) {
      t.given = given;
      const int sources = static_cast<int>(given.count("file") + given.count("generator") + given.count("inline"));
      if (sources != 1)
        throw ParamError("", sources == 0 ? "no topology given" : "more than one of file, generator and inline given",
                         "give exactly one of file: <path>, generator: <name> with its parameters, or inline: {...}");
      const GeneratorKeys* gen = nullptr;
      for (const GeneratorKeys& g : generator_keys())
        if (t.generator == g.name) gen = &g;
      std::vector<std::string> allowed;
      if (gen != nullptr) {
        allowed = gen->required;
        allowed.insert(allowed.end(), gen->optional.begin(), gen->optional.end());
        allowed.push_back("link");
        for (const std::string& k : gen->required)
          if (!given.count(k))
            throw ParamError(k, "generator " + t.generator + " needs " + k,
                             "add " + k + ": <value>; " + t.generator + " takes " + join(allowed));
      }
      for (const std::string& k : given) {
        if (k == "file" || k == "generator" || k == "inline") continue;
        if (k == "node_name_map") {
          if (!given.count("file"))
            throw ParamError(k, "node_name_map names the nodes of a topology file", "give file: too, or remove it");
          continue;
        }
        bool ok = false;
        for (const std::string& a : allowed) ok = ok || a == k;
        if (!ok)
          throw ParamError(k, gen ? k + " is not a parameter of generator " + t.generator
                                  : k + " is a generator parameter, but no generator is given",
                           gen ? "remove it; " + t.generator + " takes " + join(allowed) : "remove it");
      }
    });
    return b.build();
  }();
  return group;
}

const sim::ParamGroup& routing_options_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<RoutingOptionsSpec> b("routing_options", "Options of the routing engine, as OpenSM's of the same job.");
    b.strings("roots", &RoutingOptionsSpec::roots,
              "updn: root switches, by name or node GUID (0x...), all of rank 0 (OpenSM root_guid_file).");
    b.string("root_guid_file", &RoutingOptionsSpec::root_guid_file,
             "updn: OpenSM's root_guid_file, one switch node GUID per line; relative to the scenario file.");
    b.string("lfts_file", &RoutingOptionsSpec::lfts_file,
             "file: the opensm-lfts.dump whose tables are loaded (OpenSM lfts_file); relative to the scenario file.");
    b.rule("roots and root_guid_file go with routing: updn (together: the roots of both), lfts_file with routing: file.");
    b.on_complete([](RoutingOptionsSpec& o, const std::set<std::string>& given) { o.given = given; });
    return b.build();
  }();
  return group;
}

const sim::ParamGroup& qos_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<QosSpec> b("qos",
                            "QoS policy in OpenSM's option syntax (opensm.conf qos_* options): SL2VL and VL "
                            "arbitration tables of every port.");
    b.string("options_file", &QosSpec::options_file,
             "An OpenSM options file whose qos_* lines are read (relative to the scenario file).");
    struct Field {
      const char* name;
      std::string QosSpec::*field;
      const char* doc;
    };
    const Field fields[] = {
        {"max_vls", &QosSpec::max_vls, "qos_max_vls: 1..15, the data VLs the tables may name."},
        {"sl2vl", &QosSpec::sl2vl, "qos_sl2vl: 16 VLs, entry i the VL of SL i, e.g. \"0,1,0,1,...\"."},
        {"vlarb_high", &QosSpec::vlarb_high, "qos_vlarb_high: up to 64 VL:weight entries, e.g. \"1:255\"."},
        {"vlarb_low", &QosSpec::vlarb_low, "qos_vlarb_low: up to 64 VL:weight entries, e.g. \"0:64,1:64\"."},
        {"high_limit", &QosSpec::high_limit, "qos_high_limit: LimitOfHighPriority 0..255 (4096-byte units)."},
        {"ca_sl2vl", &QosSpec::ca_sl2vl, "qos_ca_sl2vl: as sl2vl, endpoints only."},
        {"ca_vlarb_high", &QosSpec::ca_vlarb_high, "qos_ca_vlarb_high: as vlarb_high, endpoints only."},
        {"ca_vlarb_low", &QosSpec::ca_vlarb_low, "qos_ca_vlarb_low: as vlarb_low, endpoints only."},
        {"ca_high_limit", &QosSpec::ca_high_limit, "qos_ca_high_limit: as high_limit, endpoints only."},
        {"swe_sl2vl", &QosSpec::swe_sl2vl, "qos_swe_sl2vl: as sl2vl, switch ports only."},
        {"swe_vlarb_high", &QosSpec::swe_vlarb_high, "qos_swe_vlarb_high: as vlarb_high, switch ports only."},
        {"swe_vlarb_low", &QosSpec::swe_vlarb_low, "qos_swe_vlarb_low: as vlarb_low, switch ports only."},
        {"swe_high_limit", &QosSpec::swe_high_limit, "qos_swe_high_limit: as high_limit, switch ports only."},
    };
    for (const Field& f : fields) b.string(f.name, f.field, f.doc).defaults_to("the switch/endpoint tables");
    b.on_begin([](QosSpec& q) { q.present = true; });
    b.on_complete([](QosSpec& q, const std::set<std::string>& given) {
      q.given = given;
      if (q.present && given.empty())
        throw ParamError("", "the qos section is empty", "give options_file or qos options, or remove the section");
    });
    b.rule("A key here wins over the same option in options_file; a port-type key (ca_, swe_) wins over the plain one.");
    b.rule("With a qos section, switch/endpoint sl2vl and vlarb are not written (one source of port tables).");
    return b.build();
  }();
  return group;
}

// seed 002 Sec. 4.2: one class of CBR connections per SL (Table 1).
const sim::ParamGroup& service_level_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<CbrServiceLevel> b("service_level", "One class of CBR connections (seed 002 Table 1).");
    b.integer("sl", &CbrServiceLevel::sl, "", "Service level of the class's connections.").range(0, 15).require();
    b.integer("max_distance", &CbrServiceLevel::max_distance, "entries",
              "Requested maximum distance between consecutive high-priority table entries (its latency "
              "bound); turned into the closest lower power of two.")
        .range(2, 64)
        .require();
    sim::ParamDecl& bw = b.real("bandwidth_mbps", &CbrServiceLevel::min_bandwidth_bps, "Mb/s",
                                "[min, max]: each connection's mean bandwidth is uniform in this range.");
    // Two reals into two fields: a list item of its own kind, bound by hand.
    bw.kind = sim::ParamKind::list;
    bw.element = sim::ParamKind::real;
    bw.min_items = bw.max_items = 2;
    bw.real_range(0.0, 1e6, true);
    bw.require();
    bw.set = [](void* c, const sim::ParamValue& v) {
      auto& sl = *static_cast<CbrServiceLevel*>(c);
      sl.min_bandwidth_bps = v.items.at(0).real * 1e6;
      sl.max_bandwidth_bps = v.items.at(1).real * 1e6;
    };
    b.rule("bandwidth_mbps is [min, max] with 0 < min <= max.");
    b.on_complete([](CbrServiceLevel& c, const std::set<std::string>&) {
      if (c.min_bandwidth_bps > c.max_bandwidth_bps)
        throw ParamError("bandwidth_mbps", "the range's minimum is above its maximum", "write [min, max] with min <= max");
    });
    return b.build();
  }();
  return group;
}

const sim::ParamGroup& connections_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<ConnectionsConfig> b(
        "connections",
        "CBR connections requested at random and admitted by the connection manager into the high-priority VL "
        "arbitration tables along their paths (seed 002, docs/qos.md); present means enabled.");
    sim::ParamDecl& levels = b.objects("service_levels", &ConnectionsConfig::service_levels, service_level_params(),
                                       "The classes of connections, one per SL; or seed002 for seed 002 Table 1.");
    levels.presets = {"seed002"};
    levels.preset = [](void* c, const std::string&) {
      static_cast<ConnectionsConfig*>(c)->service_levels = sm::seed002_service_levels();
    };
    levels.require();
    b.integer("payload_bytes", &ConnectionsConfig::payload_bytes, "bytes",
              "Payload of every connection's packets (seed 002: 256, 1024, 2048, 4096).")
        .range(1, 4096);
    b.integer("refusals_in_a_row", &ConnectionsConfig::refusals_in_a_row, "requests",
              "Requests stop after this many consecutive refusals.")
        .range(1, 100'000'000);
    b.integer("max_connections", &ConnectionsConfig::max_connections, "connections",
              "Requests stop when this many are established (0: no limit).")
        .range(0, 100'000'000);
    b.real("reservable_fraction", &ConnectionsConfig::reservable_fraction, "fraction",
           "Share of each link's data rate connections may reserve (seed 002: 0.8, the rest is best effort).")
        .real_range(0.0, 1.0, true);
    b.integer("stop_after_packets", &ConnectionsConfig::stop_after_packets, "packets",
              "End the run when every connection has delivered this many packets created after the warm-up "
              "(seed 002: 100); 0: the run lasts duration.");
    b.time("hold_time", &ConnectionsConfig::hold_time,
           "Mean of each connection's exponential holding time from the start of the run; then it stops sending "
           "and its entries are released (0: connections last the whole run).")
        .real_range(0, 3600e12);
    b.on_begin([](ConnectionsConfig& c) { c.enabled = true; });
    b.rule("service_levels name each SL once; each SL maps to a VL of its own (endpoint.sl2vl, switch.sl2vl) "
           "below data_vls; on HCA hosts (endpoint_model hca) not together with flows or a perftest.");
    b.on_complete([](ConnectionsConfig& c, const std::set<std::string>&) {
      if (!c.enabled) return;
      if (c.service_levels.empty())
        throw ParamError("service_levels", "no service level given",
                         "list at least one {sl, max_distance, bandwidth_mbps: [min, max]}, or write seed002");
      for (size_t i = 0; i < c.service_levels.size(); ++i)
        for (size_t j = 0; j < i; ++j)
          if (c.service_levels[i].sl == c.service_levels[j].sl)
            throw ParamError("service_levels", "SL " + std::to_string(c.service_levels[i].sl) + " is listed twice",
                             "give each SL one entry (one class of connections per SL)");
    });
    return b.build();
  }();
  return group;
}

// Seed 000 Sec. 3.6: static multicast groups (docs/multicast.md).
const sim::ParamGroup& multicast_group_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<MulticastGroupConfig> b("multicast_group", "A static multicast group: one source, its members.");
    b.string("name", &MulticastGroupConfig::name, "Name a flow's dst gives to send to the group.").require();
    b.integer("mlid", &MulticastGroupConfig::mlid, "",
              "Multicast LID, 0xC000..0xFFFE (IBA 4.1.3; 49152..65534); 0: the next free one from 0xC000.")
        .range(0, 0xFFFE);
    b.string("source", &MulticastGroupConfig::source, "The endpoint that sends to the group.").require();
    b.strings("members", &MulticastGroupConfig::members, "The endpoints that receive (not the source).").require();
    b.choice("tree", &MulticastGroupConfig::tree,
             {{"source_based", MulticastTree::source_based}, {"shared", MulticastTree::shared}},
             "Distribution tree: source_based (seed 000: shortest paths from the source's switch) or shared "
             "(one tree rooted at a central switch, as OpenSM).");
    b.choice("delivery", &MulticastGroupConfig::delivery,
             {{"replicate", MulticastDelivery::replicate},
              {"replicated_unicast", MulticastDelivery::replicated_unicast}},
             "replicate: one packet to the MLID, copied by the switches; replicated_unicast (seed 000's "
             "baseline): the source sends one unicast per member.");
    b.rule("mlid is 0 or in 0xC000..0xFFFE and unique; source and members are distinct endpoints; the name is "
           "no endpoint's.");
    return b.build();
  }();
  return group;
}

const sim::ParamGroup& multicast_bandwidth_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<MulticastBandwidthConfig> b(
        "multicast_bandwidth", "Seed 000 Sec. 3.6.2: a VL of its own for multicast, weighted in every port's VLArb table.");
    b.choice("allocation", &MulticastBandwidthConfig::allocation,
             {{"equal", MulticastAllocation::equal},
              {"linear", MulticastAllocation::linear},
              {"logarithmic", MulticastAllocation::logarithmic}},
             "The multicast VL's weight: unicast_weight times 1 (equal), n (linear) or max(1, round(log2 n)) "
             "(logarithmic), n the destinations (see destinations).");
    b.choice("destinations", &MulticastBandwidthConfig::destinations,
             {{"downstream", MulticastDestinations::downstream}, {"group", MulticastDestinations::group}},
             "The n of each port's table: downstream, the group members its multicast copies serve (the most "
             "over the groups, 1 where none pass); group, the members of the largest group on every port.");
    b.integer("sl", &MulticastBandwidthConfig::sl, "", "The SL of multicast flows; its VL carries no other flow.")
        .range(0, 14);
    b.integer("unicast_weight", &MulticastBandwidthConfig::unicast_weight, "64-byte units",
              "VLArb weight of every other data VL.")
        .range(1, 255);
    b.rule("needs multicast groups and switch.data_vls of at least 2, no qos section, no switch.vlarb or "
           "endpoint.vlarb; multicast flows send on sl, every other flow on an SL of another VL.");
    b.on_begin([](MulticastBandwidthConfig& c) { c.enabled = true; });
    return b.build();
  }();
  return group;
}

}  // namespace

const sim::ParamGroup& scenario_params() {
  static const sim::ParamGroup group = [] {
    GroupBuilder<ScenarioDocument> b("scenario", "One simulation run: fabric, models, traffic and outputs.");
    b.string("name", &Scenario::name,
             "Name of the run in reports and output files; one file name (no '/' or '\\', not . or .., at most "
             "200 bytes), since the front ends write to out/<name>.")
        .defaults_to("the scenario file's name without extension");
    b.integer("seed", &Scenario::seed, "", "Seed of every random choice of the run.");
    // At most an hour: a packet-level run simulates milliseconds to seconds per wall second,
    // so longer is a typo (or 2^64 ps), not a study.
    b.time("duration", &Scenario::duration, "Simulated time of the run (at most 1 h; packet-level runs cover ms to s).")
        .real_range(0, 3600e12, true);
    b.time("warmup", &Scenario::warmup, "Statistics ignore packets created before this time.");
    b.time("deadlock_timeout", &Scenario::deadlock_timeout,
           "How long a switch output VL may hold packets without sending before the deadlock watch looks at "
           "it; it reports a deadlock only for outputs that wait for each other's credits in a cycle and can "
           "never send again (docs/architecture.md, Deadlock), and packets stuck this long at the end of a run "
           "in summary.json's stuck. At least twice the largest packet's serialization time on the slowest link.")
        .real_range(0, 3600e12, true);
    b.choice("event_order", &Scenario::event_order, {{"fifo", EventOrder::fifo}, {"canonical", EventOrder::canonical}},
             "Order of the fabric's events due at the same time: fifo (the order they were scheduled in) or "
             "canonical (by the model that scheduled them and its own count; a delivery across a cable is an "
             "event of the receiver). A run split across processes needs canonical and gives the same results "
             "as one process with it (docs/parallel.md); results differ between the two orders.");
    b.object("topology", &ScenarioDocument::topology_spec, topology_params(), "The fabric.").require();
    b.choice_with("routing", sm::routing_engine_names(), [](ScenarioDocument& d, const std::string& v) { d.routing = v; },
                  Scenario{}.routing, "Routing engine that fills the switches' forwarding tables.");
    b.object("routing_options", &ScenarioDocument::routing_options_spec, routing_options_params(),
             "Options of the routing engine (OpenSM's root_guid_file, lfts_file).")
        .defaults_to("absent: none");
    b.object("subnet_manager", &Scenario::subnet_manager, subnet_manager_params(),
             "How the fabric is brought up (docs/management.md).")
        .defaults_to("absent: out of band");
    b.object("switch", &Scenario::switch_cfg, sw::switch_params(), "Every switch.");
    b.object("endpoint", &Scenario::endpoint_cfg, ep::endpoint_params(), "Every endpoint (channel adapter port).");
    b.objects("flows", &Scenario::flows, flow_params(), "Traffic flows.");
    b.raw_object("flow_defaults",
                 "Flow keys every flow takes unless it gives its own, e.g. {on_off_mean: 5ms}: one key for a "
                 "sweep or --set to change many flows.");
    b.object("traffic", &Scenario::traffic, traffic_params(), "Traffic from every endpoint.")
        .defaults_to("absent: disabled");
    b.object("trace", &Scenario::trace, trace_params(), "Packets from a trace file.").defaults_to("absent: none");
    b.object("control", &Scenario::control, control_params(), "Control traffic on VL15 (docs/control.md).")
        .defaults_to("absent: none");
    b.object("outputs", &Scenario::outputs, output_params(), "What the run writes.");
    b.object("qos", &ScenarioDocument::qos_spec, qos_params(), "QoS policy in OpenSM's syntax.")
        .defaults_to("absent: the switch and endpoint tables");
    b.choice("endpoint_model", &Scenario::endpoint_model,
             {{"fabric", EndpointModel::fabric}, {"hca", EndpointModel::hca}},
             "What every endpoint is: fabric (a CA port fed by flows) or hca (a host with PCIe bus, memory, CPU "
             "and a programmable HCA running firmware; docs/hca.md).");
    b.object("hca", &Scenario::hca_host, hca_host_params(), "Every HCA host (endpoint_model: hca).");
    b.object("perftest", &Scenario::perftest, perftest_params(), "A perftest-style test (endpoint_model: hca).")
        .defaults_to("absent: none");
    b.object("connections", &Scenario::connections, connections_params(),
             "CBR connections admitted into the VL arbitration tables (seed 002, docs/qos.md).")
        .defaults_to("absent: none");
    b.object("mix", &Scenario::mix, workload::mix_params(),
             "Real-time (video) and best-effort flows whose ratio changes in phases (docs/mix.md).")
        .defaults_to("absent: none");
    b.object("multicast_bandwidth", &Scenario::multicast_bandwidth, multicast_bandwidth_params(),
             "Bandwidth for multicast through the VLArb tables (seed 000 Sec. 3.6.2, docs/multicast.md).")
        .defaults_to("absent: multicast shares the VLs of its SLs");
    b.objects("multicast", &Scenario::multicast, multicast_group_params(),
              "Multicast groups; a flow whose dst names one sends to it (seed 000 Sec. 3.6, docs/multicast.md).");
    b.objects("link_events", &Scenario::link_events, link_event_params(),
              "Cables that go down or come back during the run; an in-band SM gets Trap 128 and reroutes "
              "(docs/management.md).");
    b.boolean("allow_idle", &Scenario::allow_idle,
              "Accept a scenario that sends nothing of its own: the fabric waits for management software "
              "(ibvp-sim --serve-umad sets it; docs/management.md).");
    b.rule("endpoint_model: hca takes a perftest section or flows (fixed destinations), not both, and no traffic or trace; hca and perftest need it.");
    b.rule("warmup is before duration; flows, traffic, a trace, connections or a perftest are given (or allow_idle); flows and traffic start before duration.");
    b.rule("switch.vl_buffer_bytes and endpoint.vl_buffer_bytes hold the largest packet of any flow "
           "(payload + LRH, BTH, DETH, pad, ICRC, VCRC, rounded up to 64-byte credit blocks).");
    b.rule("endpoint.data_vls equals switch.data_vls (both ends of a cable operate the same VLs).");
    b.rule("The VL that each flow's SL maps to (endpoint.sl2vl, switch.sl2vl) has a vlarb entry with a weight above 0.");
    return b.build();
  }();
  return group;
}

}  // namespace ibvp
