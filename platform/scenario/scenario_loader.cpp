#include "platform/scenario/scenario_loader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "models/ib/packet.h"
#include "models/link/link_params.h"
#include "platform/apps/cbr_streams.h"
#include "platform/apps/flow_streams.h"
#include "platform/apps/perftest.h"
#include "platform/driver/firmware_location.h"
#include "platform/driver/host_node.h"
#include "platform/params/input_file.h"
#include "platform/params/input_text.h"
#include "platform/params/validate.h"
#include "platform/scenario/output_paths.h"
#include "platform/scenario/deadlock_timeout.h"
#include "platform/scenario/hca_profile.h"
#include "platform/topology/generators.h"
#include "models/sched/virtual_clock.h"
#include "platform/workload/flow_source.h"
#include "platform/workload/mix.h"
#include "platform/workload/video_frames.h"
#include "platform/sm/qos_policy.h"
#include "platform/sm/updn.h"
#include "platform/topology/ibnetdiscover.h"
#include "platform/topology/topology_yaml.h"

namespace ibvp {

void merge_flow_defaults(const params::Document& doc);

namespace {

using params::child;
using params::Document;
using params::item;
using params::Path;

Path key(const std::string& a) { return child({}, a); }
Path key(const std::string& a, const std::string& b) { return child(key(a), b); }

std::string quoted(const std::string& s) { return "\"" + sim::excerpt(s) + "\""; }

// A file the scenario names, relative to the scenario file's directory unless absolute.
std::string input_path(const std::string& file, const std::string& base_dir) {
  std::filesystem::path p(file);
  if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
  return p.lexically_normal().string();
}

// Every file a scenario names for reading goes through read_input_file (a regular file of
// bounded size); its refusal is reported at the key that named the file.
std::string read_named_file(const Document& doc, const Path& at, const std::string& path, const std::string& what,
                            const std::string& base_dir) {
  try {
    return read_input_file(path, what,
                           "give a path relative to the scenario file's directory (" + base_dir +
                               ") or an absolute one");
  } catch (const ConfigError& e) {
    doc.fail(at, e.problem(), e.fix());
  }
}

topo::Topology generate(const ScenarioDocument& sd, const Document& doc) {
  const TopologySpec& t = sd.topology_spec;
  // Without `link` each generator keeps its own cable (random_irregular's is seed 001's 1X).
  const bool own_link = t.given.count("link") != 0;
  const link::LinkConfig cfg = own_link ? t.link : link::LinkConfig{};
  try {
    if (t.generator == "two_switch") return topo::two_switch_congestion(t.local, t.remote, cfg);
    if (t.generator == "single_switch") return topo::single_switch(t.hosts, cfg);
    if (t.generator == "fat_tree") return topo::kary_ntree(t.k, t.n, cfg);
    if (t.generator == "mesh") return topo::mesh2d(t.x, t.y, t.hosts_per_switch, cfg);
    if (t.generator == "torus") return topo::torus2d(t.x, t.y, t.hosts_per_switch, cfg);
    if (t.generator == "random_irregular") {
      topo::RandomIrregularOptions opt;
      opt.switch_ports = static_cast<uint16_t>(t.switch_ports);
      opt.host_ports = static_cast<uint16_t>(t.host_ports);
      if (own_link) opt.cfg = t.link;
      if (t.given.count("cycles")) opt.cycles = t.cycles;
      const uint32_t seed = t.given.count("seed") ? t.seed : static_cast<uint32_t>(sd.seed);
      return topo::random_irregular(t.switches, seed, opt);
    }
  } catch (const ConfigError& e) {
    // A generator names its own parameter; point at that key of the scenario.
    doc.fail(key("topology", t.given.count(e.key()) ? e.key() : "generator"), e.problem(), e.fix());
  }
  throw std::logic_error("topology generator '" + t.generator + "' is declared but not built");
}

// A path the scenario gives, relative to its directory.
std::string scenario_path(const std::string& base_dir, const std::string& file) {
  std::filesystem::path p(file);
  if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
  return p.lexically_normal().string();
}

// routing_options: roots by name or GUID and the root GUID file become switches of the
// topology; lfts_file becomes a path. Each refusal names its key (or the file and line).
sm::RoutingOptions routing_options(const ScenarioDocument& sd, const topo::Topology& t, const Document& doc,
                                   const std::string& base_dir) {
  const RoutingOptionsSpec& o = sd.routing_options_spec;
  sm::RoutingOptions out;
  const bool wants_roots = o.given.count("roots") || o.given.count("root_guid_file");
  if (wants_roots && sd.routing != "updn")
    doc.fail(key("routing_options", o.given.count("roots") ? "roots" : "root_guid_file"),
             "root switches are an option of up*/down* (updn), not of routing engine '" + sd.routing + "'",
             "use routing: updn, or remove the roots");
  if (o.given.count("lfts_file") && sd.routing != "file")
    doc.fail(key("routing_options", "lfts_file"), "an LFT dump is read by routing engine 'file', not by '" + sd.routing + "'",
             "use routing: file, or remove lfts_file");
  if (sd.routing == "file" && !o.given.count("lfts_file"))
    doc.fail(key("routing"), "routing engine 'file' needs the opensm-lfts.dump it loads",
             "add routing_options: {lfts_file: <path>} (OpenSM writes the file with -D 0x41 or dump_files_dir; "
             "ibvp topo --dump writes one)");
  for (size_t i = 0; i < o.roots.size(); ++i) {
    const uint32_t sw = sm::find_switch(t, o.roots[i]);
    if (sw == topo::Topology::npos) {
      const uint32_t any = t.find(o.roots[i]);
      doc.fail(item(key("routing_options", "roots"), i),
               any != topo::Topology::npos ? o.roots[i] + " is an endpoint; roots are switches"
                                           : "no switch is named " + quoted(o.roots[i]) + " or has that node GUID",
               "name a switch of the topology, or give its node GUID as 0x... (ibvp topo --dump DIR lists them in "
               "opensm-subnet.lst)");
    }
    if (std::find(out.roots.begin(), out.roots.end(), sw) == out.roots.end()) out.roots.push_back(sw);
  }
  if (o.given.count("root_guid_file")) {
    for (uint32_t sw : sm::load_root_guid_file(t, scenario_path(base_dir, o.root_guid_file)))
      if (std::find(out.roots.begin(), out.roots.end(), sw) == out.roots.end()) out.roots.push_back(sw);
  }
  if (o.given.count("lfts_file")) {
    out.lfts_file = scenario_path(base_dir, o.lfts_file);
    std::error_code ec;
    if (o.lfts_file.empty() || !std::filesystem::is_regular_file(out.lfts_file, ec))
      doc.fail(key("routing_options", "lfts_file"), "no LFT dump at " + out.lfts_file,
               "give a path relative to the scenario file's directory (" + base_dir + ") or an absolute one");
  }
  return out;
}

topo::Topology build_topology(const ScenarioDocument& sd, const Document& doc, const std::string& base_dir) {
  const TopologySpec& t = sd.topology_spec;
  if (t.given.count("file")) {
    const std::string path = input_path(t.file, base_dir);
    const std::string text = read_named_file(doc, key("topology", "file"), path, "topology file", base_dir);
    // The project's YAML or, told apart by content, an ibnetdiscover dump of a real fabric.
    if (topo::looks_like_ibnetdiscover(text)) {
      topo::NodeNameMap names;
      if (t.given.count("node_name_map")) {
        const std::string map_path = scenario_path(base_dir, t.node_name_map);
        names = topo::parse_node_name_map(
            read_named_file(doc, key("topology", "node_name_map"), map_path, "node-name map", base_dir), map_path);
      }
      return topo::parse_ibnetdiscover(text, path, names);
    }
    if (t.given.count("node_name_map"))
      doc.fail(key("topology", "node_name_map"), "a node-name map names the nodes of an ibnetdiscover dump, and " + path +
                                                     " is a YAML topology",
               "name the nodes in the YAML file, or remove node_name_map");
    return topo::parse_topology_yaml(text, path);
  }
  if (t.given.count("inline")) {
    YAML::Node node;
    doc.find(key("topology", "inline"), node);
    try {
      return topo::topology_from_yaml(node, doc.source(), "topology.inline");
    } catch (const ConfigError& e) {
      doc.rethrow(e);
    }
  }
  return generate(sd, doc);
}

// "h1, h2, h3, ... (16 in all)": enough names to see the naming scheme.
std::string some_names(const topo::Topology& t, const std::vector<uint32_t>& nodes) {
  std::string s;
  const size_t shown = std::min<size_t>(nodes.size(), 6);
  for (size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + t.nodes[nodes[i]].name;
  if (nodes.size() > shown) s += ", ... (" + std::to_string(nodes.size()) + " in all)";
  return s;
}

std::vector<uint32_t> all_nodes(const topo::Topology& t) {
  std::vector<uint32_t> v;
  for (uint32_t i = 0; i < t.nodes.size(); ++i) v.push_back(i);
  return v;
}

class ScenarioChecker {
 public:
  ScenarioChecker(const Scenario& s, const Document& doc)
      : s_(s), t_(s.topology), doc_(doc), endpoints_(t_.endpoints()) {}

  void run() {
    if (s_.warmup >= s_.duration)
      doc_.fail(key("warmup"),
                "warmup " + sim::format_time(s_.warmup) + " is not before the end of the run (duration " +
                    sim::format_time(s_.duration) + ")",
                "give a warmup shorter than duration");
    if (s_.flows.empty() && !s_.traffic.enabled && s_.trace.file.empty() && !s_.perftest.enabled &&
        !s_.connections.enabled && !s_.control.enabled && !s_.allow_idle)
      doc_.fail(key("flows"), "nothing would be sent: the scenario has neither flows nor a traffic section nor a trace "
                    "nor connections nor a perftest nor control traffic",
                "add flows: [...], traffic: {...}, trace: {file: ...}, connections: {...}, control: {} or (with "
                "endpoint_model: hca) perftest: {...}, or allow_idle: true for a fabric only management software drives");
    hca_hosts();
    same_vls();
    if (s_.connections.enabled) connections();
    multicast();
    flows();
    vc_counters();
    if (s_.traffic.enabled) traffic();
    if (s_.control.enabled) control();
    subnet_manager();
    link_events();
    buffers();
    outputs();
  }

 private:
  // Both ends of a cable operate the same data VLs (the fabric builder relies on it).
  void same_vls() const {
    if (s_.endpoint_cfg.data_vls == s_.switch_cfg.data_vls) return;
    YAML::Node written;
    const Path at = doc_.find(key("endpoint", "data_vls"), written) ? key("endpoint", "data_vls") : key("switch", "data_vls");
    doc_.fail(at,
              "endpoints operate " + std::to_string(s_.endpoint_cfg.data_vls) + " data VL(s) but switches " +
                  std::to_string(s_.switch_cfg.data_vls) + "; a cable's two ends must agree",
              "give endpoint.data_vls and switch.data_vls the same value");
  }

  // HCA hosts run programs: a perftest, or the flows as QPs (platform/apps/flow_streams.h).
  // The hca and perftest sections mean nothing to fabric-only endpoints.
  void hca_hosts() const {
    YAML::Node written;
    if (s_.endpoint_model != EndpointModel::hca) {
      for (const Path& at : {key("hca"), key("perftest")})
        if (doc_.find(at, written))
          doc_.fail(at, path_text(at) + " applies to HCA hosts, but endpoint_model is fabric",
                    "add endpoint_model: hca, or remove " + path_text(at));
      for (size_t i = 0; i < s_.flows.size(); ++i)
        if (s_.flows[i].doorbell_class >= 0)
          doc_.fail(child(item(key("flows"), i), "doorbell_class"),
                    "doorbell classes are the HCA's (seed 003 Sec. 3.3.1); fabric-only endpoints have none",
                    "add endpoint_model: hca, or remove doorbell_class");
      return;
    }
    // The flit router's edges stamp what crosses them with the kernel's time, while an HCA's
    // embedded core and its host programs run ahead of that time (docs/hca.md, "Execution
    // model"): their packets and credits would be stamped behind the time they were made.
    if (s_.switch_cfg.model == sw::SwitchModel::flit_wormhole)
      doc_.fail(key("endpoint_model"),
                "HCA hosts on the flit router (switch.model: flit_wormhole) are not built: the router's edges would "
                "stamp the HCAs' packets and credits with the kernel's time, behind the time the firmware and host "
                "programs made them",
                "use switch.model: iba for HCA hosts, or endpoint_model: fabric on the flit router (seed 003's NICs "
                "are switch.flit.nic_scheduler there)");
    for (const char* k : {"traffic", "trace"})
      if (doc_.find(key(k), written))
        doc_.fail(key(k), std::string(k) + " drives fabric-only endpoints; HCA hosts run flows or a perftest",
                  "write the streams as flows: [...], or use endpoint_model: fabric");
    if (!s_.perftest.enabled && s_.flows.empty() && !s_.control.enabled && !s_.connections.enabled && !s_.allow_idle)
      doc_.fail(key("endpoint_model"), "HCA hosts have nothing to run",
                "add a perftest section, flows, connections or control");
    if (s_.perftest.enabled && (!s_.flows.empty() || s_.connections.enabled))
      doc_.fail(key("perftest"),
                std::string("a perftest and ") + (s_.flows.empty() ? "CBR connections" : "flows") +
                    " in one run: the perftest's numbers would include their load",
                "run the perftest in a scenario of its own");
    // Each application opens the HCA with its own driver area at the bottom of host memory
    // (verbs::HostMemoryPlan) and sets up its QPs at time zero; two on one host would share
    // both.
    if (s_.connections.enabled && !s_.flows.empty())
      doc_.fail(key("connections"),
                "on HCA hosts CBR connections and flows cannot run together yet: each would open the HCA with the "
                "same driver memory",
                "run the connections and the flows in separate scenarios, or use endpoint_model: fabric for both");
    if (s_.perftest.enabled) perftest();
    for (size_t i = 0; i < s_.flows.size(); ++i) hca_flow(s_.flows[i], item(key("flows"), i));
    host_memory();
    tx_buffer();
  }

  // The firmware posts a packet only when its VL's transmit buffer has room for all of it
  // (payload up to the path MTU plus the default image's 64-byte header room, its
  // kHeaderRoom: LRH, BTH, RETH, ICRC, VCRC fit); a smaller buffer sends nothing, forever.
  void tx_buffer() const {
    uint64_t payload = 0;
    if (s_.perftest.enabled)
      for (uint64_t b : s_.perftest.sizes) payload = std::max<uint64_t>(payload, std::min<uint64_t>(b, s_.perftest.mtu));
    for (const FlowConfig& f : s_.flows)
      payload = std::max<uint64_t>(payload, std::min(f.payload_bytes, s_.hca_host.flow_mtu));
    // CBR packets are one-packet UD SENDs (apps::CbrStreams), at most the port MTU of 4096.
    if (s_.connections.enabled) payload = std::max<uint64_t>(payload, s_.connections.payload_bytes);
    const uint64_t need = payload + 64;
    const uint32_t have = s_.hca_host.hca.tx_vl_buffer_bytes;
    if (have >= need) return;
    doc_.fail(key("hca", "tx_vl_buffer_bytes"),
              std::to_string(have) + " bytes cannot hold one packet of this run: " + std::to_string(payload) +
                  "-byte payloads (the largest message up to the path MTU) plus up to 64 bytes of headers, so no "
                  "packet would ever be sent",
              "raise hca.tx_vl_buffer_bytes to at least " + std::to_string(need) +
                  ", or send smaller messages or use a smaller MTU");
  }

  // The programs place their driver rings and buffers in host memory from the bottom up
  // (verbs::HostMemoryPlan); all of it must lie inside hca.host_memory.size_bytes, or the
  // first access beyond it would fail mid-run.
  void host_memory() const {
    const uint64_t need = s_.perftest.enabled       ? apps::Perftest::plan(s_.perftest).end()
                          : s_.connections.enabled ? apps::CbrStreams::host_memory_bytes(s_)
                                                   : apps::FlowStreams::host_memory_bytes(s_);
    const uint64_t have = s_.hca_host.memory.size_bytes;
    if (need <= have) return;
    const std::string what = s_.perftest.enabled       ? "the perftest's queues and its largest message"
                             : s_.connections.enabled ? "the CBR connections' queues (a UD QP per SL) and their payload"
                                                      : "the flows' queues (flow_depth) and their largest message";
    doc_.fail(child(key("hca", "host_memory"), "size_bytes"),
              std::to_string(have) + " bytes of host memory cannot hold " + what + ": the busiest host needs " +
                  std::to_string(need) + " bytes",
              "raise hca.host_memory.size_bytes to at least " + std::to_string(need) +
                  " (a multiple of 4096), or use smaller messages or queues");
  }

  // What a flow on HCA hosts can be: one QP to one destination, carrying SENDs.
  void hca_flow(const FlowConfig& f, const Path& at) const {
    // A multicast flow is a UD QP sending to the group's MLID (IBA 10.5: only datagrams go to
    // multicast groups), received by a QP attached to it at every member (docs/multicast.md).
    if (const MulticastGroupConfig* g = group_named(f.dst)) {
      if (s_.hca_host.flow_transport != FlowTransport::ud)
        doc_.fail(child(at, "dst"), "flow '" + f.name + "' sends to multicast group '" + g->name +
                  "', and on HCA hosts only UD QPs send to a multicast LID (IBA 10.5), but hca.flow_transport is not UD",
                  "set hca.flow_transport: UD, or send one flow per member");
      if (g->delivery == MulticastDelivery::replicated_unicast)
        doc_.fail(child(at, "dst"), "group '" + g->name + "' has delivery: replicated_unicast, which HCA hosts do "
                  "not run (their flows are one QP to one destination)",
                  "use delivery: replicate, endpoint_model: fabric for the baseline, or one flow per member");
    }
    if (f.pattern != DestinationPattern::fixed)
      doc_.fail(child(at, "pattern"), "on HCA hosts a flow is one QP to one destination",
                "use pattern: fixed with a dst, one flow per destination");
    if (f.vl15)
      doc_.fail(child(at, "vl15"), "a flow on HCA hosts is a QP on a data VL; management packets go to the HCA's "
                "VL15 queue from the control section",
                "remove vl15 and describe the traffic in control: {...}, or use endpoint_model: fabric");
    const uint32_t classes = s_.hca_host.hca.doorbell_classes;
    if (f.doorbell_class >= 0 && static_cast<uint32_t>(f.doorbell_class) >= classes)
      doc_.fail(child(at, "doorbell_class"),
                "class " + std::to_string(f.doorbell_class) + " but the HCA has " + std::to_string(classes) +
                    " doorbell classes (hca.doorbell_classes)",
                "use a class below " + std::to_string(classes) + ", or raise hca.doorbell_classes");
    // The verbs extension and the HAL carry the rate in whole Mb/s (QpInitAttr::reserved_rate_mbps).
    if (f.reserved_rate > 0 && f.reserved_rate < 1e6)
      doc_.fail(child(at, "reserved_rate"),
                "the HCA's VirtualClock takes reserved rates in whole Mb/s, and " +
                    sim::format_real(f.reserved_rate) + " b/s is below 1 Mb/s",
                "reserve at least 1e6 b/s on HCA hosts");
    const uint32_t mtu = s_.hca_host.flow_mtu;
    if (s_.hca_host.flow_transport == FlowTransport::ud && f.payload_bytes > mtu)
      doc_.fail(child(at, "payload_bytes"),
                "a UD message of " + std::to_string(f.payload_bytes) + " bytes does not fit one " +
                    std::to_string(mtu) + "-byte MTU packet (hca.flow_mtu)",
                "use at most " + std::to_string(mtu) + " bytes, a larger hca.flow_mtu, or hca.flow_transport: RC");
    // A video frame goes out as one-packet SENDs (apps::FlowStreams::run_video), whose PSNs
    // tag the packets with their frame.
    if (f.generator == GeneratorKind::video && f.payload_bytes > mtu)
      doc_.fail(child(at, "payload_bytes"),
                "a video flow on HCA hosts sends each piece of a frame as one packet, and " +
                    std::to_string(f.payload_bytes) + " bytes do not fit one " + std::to_string(mtu) +
                    "-byte MTU packet (hca.flow_mtu)",
                "use payload_bytes of at most " + std::to_string(mtu) + ", or a larger hca.flow_mtu");
  }

  void perftest() const {
    const PerftestConfig& p = s_.perftest;
    const uint32_t client = endpoint(p.client, key("perftest", "client"));
    const uint32_t server = endpoint(p.server, key("perftest", "server"));
    if (client == server)
      doc_.fail(key("perftest", "server"), "server is the client itself", "name another endpoint");
    const bool ud = p.qp_type == PerftestQpType::ud;
    if (ud && p.test != PerftestKind::send_bw && p.test != PerftestKind::send_lat)
      doc_.fail(key("perftest", "qp_type"),
                std::string(perftest_kind_name(p.test)) + " needs a connected QP (RDMA is not defined on UD)",
                "use qp_type: RC");
    for (size_t i = 0; i < p.sizes.size(); ++i)
      if (ud && p.sizes[i] > p.mtu)
        doc_.fail(p.sizes_given ? item(key("perftest", "sizes"), i) : key("perftest", "max_bytes"),
                  "a UD message of " + std::to_string(p.sizes[i]) + " bytes does not fit one " +
                      std::to_string(p.mtu) + "-byte MTU packet",
                  "keep UD sizes at most mtu, or use qp_type: RC");
    // Largest packet: MTU payload + LRH 8, BTH 12, RETH 16, ICRC 4, VCRC 2; cut-through
    // needs room for all of it in every receive buffer.
    const uint32_t need = (p.mtu + 8 + 12 + 16 + 4 + 2 + ib::kCreditBlockBytes - 1) / ib::kCreditBlockBytes *
                          ib::kCreditBlockBytes;
    for (const char* port : {"switch", "endpoint"}) {
      const uint32_t have = std::string(port) == "switch" ? s_.switch_cfg.vl_buffer_bytes : s_.endpoint_cfg.vl_buffer_bytes;
      if (have < need)
        doc_.fail(key(port, "vl_buffer_bytes"),
                  std::to_string(have) + " bytes cannot hold an MTU packet of the perftest (mtu " +
                      std::to_string(p.mtu) + ": " + std::to_string(need) + " bytes in 64-byte credit blocks)",
                  "raise " + std::string(port) + ".vl_buffer_bytes to at least " + std::to_string(need) +
                      " or lower perftest.mtu");
    }
    served(p.sl, key("perftest", "sl"));
  }

  const MulticastGroupConfig* group_named(const std::string& name) const {
    for (const MulticastGroupConfig& g : s_.multicast)
      if (g.name == name) return &g;
    return nullptr;
  }

  // Seed 000 Sec. 3.6.2: the multicast VL carries multicast only, weighted in tables the
  // builder writes (so no other source of VLArb tables).
  void multicast_bandwidth() const {
    const MulticastBandwidthConfig& b = s_.multicast_bandwidth;
    const Path at = key("multicast_bandwidth");
    if (s_.multicast.empty())
      doc_.fail(at, "multicast_bandwidth without multicast groups", "add a multicast section, or remove multicast_bandwidth");
    if (s_.switch_cfg.data_vls < 2)
      doc_.fail(key("switch", "data_vls"), "multicast_bandwidth gives multicast a VL of its own, and switches operate " +
                std::to_string(s_.switch_cfg.data_vls) + " data VL", "set switch.data_vls and endpoint.data_vls to 2 or more");
    YAML::Node written;
    for (const Path& p : {key("qos"), key("switch", "vlarb"), key("endpoint", "vlarb")})
      if (doc_.find(p, written))
        doc_.fail(p, "multicast_bandwidth writes every port's VLArb table itself", "remove this key or multicast_bandwidth");
    const uint8_t mvl = s_.endpoint_cfg.sl2vl[b.sl];
    if (s_.switch_cfg.sl2vl[b.sl] != mvl)
      doc_.fail(child(at, "sl"), "SL " + std::to_string(b.sl) + " maps to VL " + std::to_string(mvl) +
                " at endpoints but VL " + std::to_string(s_.switch_cfg.sl2vl[b.sl]) + " at switches",
                "give endpoint.sl2vl and switch.sl2vl the same entry for it");
    for (size_t i = 0; i < s_.flows.size(); ++i) {
      const FlowConfig& f = s_.flows[i];
      const bool mc = f.pattern == DestinationPattern::fixed && group_named(f.dst);
      if (mc && f.sl != b.sl)
        doc_.fail(child(item(key("flows"), i), "sl"), "a multicast flow on SL " + std::to_string(f.sl) +
                  " while multicast_bandwidth.sl is " + std::to_string(b.sl), "send it on sl " + std::to_string(b.sl));
      if (!mc && !f.vl15 && s_.endpoint_cfg.sl2vl[f.sl] == mvl)
        doc_.fail(child(item(key("flows"), i), "sl"), "SL " + std::to_string(f.sl) + " maps to VL " + std::to_string(mvl) +
                  ", the multicast VL of multicast_bandwidth", "send unicast on an SL of another VL");
    }
    if (s_.traffic.enabled && s_.endpoint_cfg.sl2vl[s_.traffic.sl] == mvl)
      doc_.fail(key("traffic", "sl"), "SL " + std::to_string(s_.traffic.sl) + " maps to VL " + std::to_string(mvl) +
                ", the multicast VL of multicast_bandwidth", "send the traffic on an SL of another VL");
  }

  // Seed 000 Sec. 3.6: static groups, one source each (docs/multicast.md).
  void multicast() const {
    if (s_.multicast_bandwidth.enabled) multicast_bandwidth();
    if (!s_.multicast.empty() && s_.switch_cfg.scheduling != sw::Scheduling::fifo)
      doc_.fail(key("switch", "scheduling"), "multicast copies are ordered by their replication rules, which "
                "the rate schedulers do not follow yet",
                "use scheduling: fifo with multicast groups, or remove the multicast section");
    std::map<std::string, size_t> names;
    std::map<uint32_t, size_t> mlids;
    for (size_t i = 0; i < s_.multicast.size(); ++i) {
      const MulticastGroupConfig& g = s_.multicast[i];
      const Path at = item(key("multicast"), i);
      const auto [prev, fresh] = names.emplace(g.name, i);
      if (!fresh)
        doc_.fail(child(at, "name"), "group name " + quoted(g.name) + " is also used by multicast[" +
                  std::to_string(prev->second) + "]", "give every group its own name");
      if (t_.find(g.name) != topo::Topology::npos)
        doc_.fail(child(at, "name"), "group name " + quoted(g.name) + " is also a node of the topology; a flow's dst "
                  "would be ambiguous", "rename the group");
      if (g.mlid != 0) {
        if (g.mlid < 0xC000)
          doc_.fail(child(at, "mlid"), "mlid " + std::to_string(g.mlid) + " is a unicast LID; multicast LIDs are "
                    "0xC000..0xFFFE (IBA 4.1.3)", "give 49152..65534, or leave mlid out");
        const auto [other, first] = mlids.emplace(g.mlid, i);
        if (!first)
          doc_.fail(child(at, "mlid"), "mlid " + std::to_string(g.mlid) + " is also multicast[" +
                    std::to_string(other->second) + "]'s", "give every group its own MLID, or leave mlid out");
      }
      const uint32_t src = endpoint(g.source, child(at, "source"));
      if (g.members.empty())
        doc_.fail(child(at, "members"), "the group has no members", "list the endpoints that receive");
      std::set<uint32_t> seen;
      for (size_t j = 0; j < g.members.size(); ++j) {
        const Path m = item(child(at, "members"), j);
        const uint32_t n = endpoint(g.members[j], m);
        if (n == src)
          doc_.fail(m, g.members[j] + " is the group's source; a switch never sends a copy back to it",
                    "remove it from members");
        if (!seen.insert(n).second) doc_.fail(m, g.members[j] + " is listed twice", "list each member once");
      }
    }
  }

  uint32_t endpoint(const std::string& name, const Path& at) const {
    const uint32_t n = t_.find(name);
    const std::string fix = "name an endpoint of the topology: " + some_names(t_, endpoints_);
    if (n == topo::Topology::npos) doc_.fail(at, "no endpoint named " + quoted(name) + " in the topology", fix);
    if (t_.nodes[n].kind != topo::NodeKind::endpoint)
      doc_.fail(at, name + " is a switch, not an endpoint", fix);
    return n;
  }

  // A flow whose VL no arbitration table serves would stay silent: refuse it here.
  void served(uint8_t sl, const Path& at) const {
    const struct {
      const char* name;
      const std::array<uint8_t, 16>& sl2vl;
      const link::VlArbConfig& vlarb;
    } ports[] = {{"endpoint", s_.endpoint_cfg.sl2vl, s_.endpoint_cfg.vlarb},
                 {"switch", s_.switch_cfg.sl2vl, s_.switch_cfg.vlarb}};
    for (const auto& p : ports) {
      const uint8_t vl = p.sl2vl[sl];
      if (!link::vlarb_serves(p.vlarb, vl)) {
        const std::string n = p.name;
        doc_.fail(at,
                  "SL " + std::to_string(sl) + " maps to VL " + std::to_string(vl) + " (" + n + ".sl2vl), but " + n +
                      ".vlarb has no entry for VL " + std::to_string(vl) +
                      " with a weight above 0, so these packets would never be sent",
                  "add {vl: " + std::to_string(vl) + ", weight: 255} to " + n + ".vlarb, or map SL " +
                      std::to_string(sl) + " to a VL that " + n + ".vlarb serves");
      }
    }
  }

  // seed 002 Sec. 4.1: "a different VL may be assigned to each SL". Each connection SL gets
  // a VL of its own at every port, so that each class has its own buffers and table entries.
  void connections() const {
    const std::vector<CbrServiceLevel>& levels = s_.connections.service_levels;
    const struct {
      const char* name;
      const std::array<uint8_t, 16>& sl2vl;
      uint8_t data_vls;
    } ports[] = {{"endpoint", s_.endpoint_cfg.sl2vl, s_.endpoint_cfg.data_vls},
                 {"switch", s_.switch_cfg.sl2vl, s_.switch_cfg.data_vls}};
    const std::string fix_vls = "give switch.data_vls and endpoint.data_vls at least " +
                                std::to_string(levels.size()) +
                                " with the default sl2vl (SL mod data_vls), or an sl2vl that maps each connection SL "
                                "to a VL of its own below data_vls";
    for (size_t i = 0; i < levels.size(); ++i) {
      // `service_levels: seed002` has no items in the document: point at the key then.
      YAML::Node written;
      const Path item_at = child(item(key("connections", "service_levels"), i), "sl");
      const Path at = doc_.find(item_at, written) ? item_at : key("connections", "service_levels");
      for (const auto& p : ports) {
        const uint8_t sl = levels[i].sl, vl = p.sl2vl[sl];
        const std::string n = p.name;
        if (vl >= p.data_vls)
          doc_.fail(at, "SL " + std::to_string(sl) + " maps to VL " + std::to_string(vl) + " (" + n + ".sl2vl), but " +
                            n + " ports operate " + std::to_string(p.data_vls) + " data VL(s)",
                    fix_vls);
        for (size_t j = 0; j < i; ++j)
          if (p.sl2vl[levels[j].sl] == vl)
            doc_.fail(at, "SL " + std::to_string(sl) + " and SL " + std::to_string(levels[j].sl) + " both map to VL " +
                              std::to_string(vl) + " (" + n + ".sl2vl); seed 002 gives each SL of connections a VL "
                              "of its own",
                      fix_vls);
      }
    }
  }

  void starts_in_run(const sc_core::sc_time& start, const Path& at) const {
    if (start >= s_.duration)
      doc_.fail(at,
                "starts at " + sim::format_time(start) + ", at or after the end of the run (duration " +
                    sim::format_time(s_.duration) + "), so it would send nothing",
                "start it before duration, or lengthen the run");
  }

  void patterned(DestinationPattern pattern, const std::vector<std::string>& hotspots, const Path& at) const {
    if (pattern != DestinationPattern::fixed && endpoints_.size() < 2)
      doc_.fail(child(at, "pattern"), "the topology has fewer than two endpoints to choose destinations from",
                "use a topology with more endpoints");
    for (size_t j = 0; j < hotspots.size(); ++j) endpoint(hotspots[j], item(child(at, "hotspots"), j));
  }

  // Seed 003 Sec. 3.1: "the counter size should be large enough to store the largest possible
  // Vtick value". The switch's Vtick is a packet's time at its connection's rate, in ns: a
  // 4,224-byte packet (a 4,096-byte payload and every header) at each flow's rate and at
  // unreserved_rate must fit switch.vc_bits.
  void vc_counters() const {
    const sw::SwitchConfig& c = s_.switch_cfg;
    if (c.model == sw::SwitchModel::flit_wormhole) return flit_vc_counters();
    if (c.scheduling != sw::Scheduling::virtual_clock || c.vc_bits == 0 || c.vc_bits >= 64) return;
    const uint64_t limit = (uint64_t{1} << c.vc_bits) - 1;
    double lowest = c.unreserved_rate;
    std::string who = "unreserved_rate";
    for (const FlowConfig& f : s_.flows)
      if (const uint64_t r = workload::reserved_rate_bps(f); r > 0 && static_cast<double>(r) < lowest) {
        lowest = static_cast<double>(r);
        who = "flow " + quoted(f.name);
      }
    const uint64_t vtick = sched::vtick_ns(4224, static_cast<uint64_t>(std::max(1.0, std::floor(lowest))));
    if (vtick <= limit) return;
    uint32_t need = c.vc_bits;
    while (need < 63 && (uint64_t{1} << need) - 1 < vtick) ++need;
    doc_.fail(key("switch", "vc_bits"), "vc_bits " + std::to_string(c.vc_bits) + " holds Vticks up to " +
              std::to_string(limit) + " ns, but a 4,224-byte packet of " + who + " (" + std::to_string(lowest) +
              " b/s) takes " + std::to_string(vtick) + " ns", "give vc_bits: " + std::to_string(need) +
              " or more, or 0 (unbounded)");
  }

  // The same for the flit router and the QoS NIC (switch.flit.vc_bits): their Vtick is one
  // flit's time, in ns; with a frame's Vtick (nic_vtick or router_vtick frame), a video flow's
  // frame period bounds it (a frame of one flit).
  void flit_vc_counters() const {
    const flit::FlitConfig& c = s_.switch_cfg.flit;
    if (c.vc_bits == 0 || c.vc_bits >= 64) return;
    const uint64_t limit = (uint64_t{1} << c.vc_bits) - 1;
    const bool by_frame = c.nic_vtick == flit::StreamVtick::frame || c.router_vtick == flit::StreamVtick::frame;
    double lowest = s_.switch_cfg.unreserved_rate;
    std::string who = "switch.unreserved_rate";
    uint64_t vtick = 0;
    for (const FlowConfig& f : s_.flows) {
      if (by_frame && f.generator == GeneratorKind::video) {
        const uint64_t ns = (f.frame_period.value() + 999) / 1000;
        if (ns > vtick) {
          vtick = ns;
          who = "flow " + quoted(f.name) + "'s frame period";
        }
      }
      if (const uint64_t r = workload::reserved_rate_bps(f); r > 0 && static_cast<double>(r) < lowest)
        lowest = static_cast<double>(r);
    }
    const uint64_t flit_ns = static_cast<uint64_t>(std::ceil(c.width_bits * 1e9 / std::max(1.0, lowest)));
    if (flit_ns > vtick) {
      vtick = flit_ns;
      who = "a flit at " + std::to_string(static_cast<uint64_t>(lowest)) + " b/s";
    }
    if (vtick <= limit) return;
    uint32_t need = c.vc_bits;
    while (need < 63 && (uint64_t{1} << need) - 1 < vtick) ++need;
    doc_.fail(child(key("switch", "flit"), "vc_bits"), "vc_bits " + std::to_string(c.vc_bits) + " holds Vticks up to " +
              std::to_string(limit) + " ns, but " + who + " takes " + std::to_string(vtick) + " ns",
              "give vc_bits: " + std::to_string(need) + " or more, or 0 (unbounded)");
  }

  void flows() const {
    std::map<std::string, size_t> names;
    for (size_t i = 0; i < s_.flows.size(); ++i) {
      const FlowConfig& f = s_.flows[i];
      const Path at = item(key("flows"), i);
      const auto [prev, fresh] = names.emplace(f.name, i);
      if (!fresh)
        doc_.fail(child(at, "name"), "flow name " + quoted(f.name) + " is also used by flows[" + std::to_string(prev->second) + "]",
                  "give every flow its own name");
      const uint32_t src = endpoint(f.src, child(at, "src"));
      if (const MulticastGroupConfig* g = group_named(f.dst)) {
        if (t_.find(g->source) != src)
          doc_.fail(child(at, "src"), "multicast group " + quoted(g->name) + " has source " + g->source + ", not " + f.src,
                    "send from " + g->source + " (a source-based tree is built for its source only)");
        if (f.vl15 || f.generator == GeneratorKind::video || f.dlid_offset != 0)
          doc_.fail(child(at, "dst"), "a multicast flow is a UD data flow: no vl15, video generator or dlid_offset",
                    "remove vl15, generator video and dlid_offset, or send to an endpoint");
      } else if (f.pattern == DestinationPattern::fixed) {
        const uint32_t dst = endpoint(f.dst, child(at, "dst"));
        if (dst == src)
          doc_.fail(child(at, "dst"), "dst is the source itself; its packets would never enter the fabric",
                    "choose another endpoint");
        paths_of(dst, f.dlid_offset, child(at, "dlid_offset"));
      } else {
        for (uint32_t e : endpoints_)
          if (e != src) paths_of(e, f.dlid_offset, child(at, "dlid_offset"));
      }
      if (f.multipath == FlowMultipath::random && s_.routing != "multipath_adaptive")
        doc_.fail(child(at, "multipath"),
                  "multipath: random picks among the alternative paths of routing multipath_adaptive, but routing is " +
                      quoted(s_.routing),
                  "set routing: multipath_adaptive, or remove multipath");
      if (f.multipath == FlowMultipath::random && s_.endpoint_model == EndpointModel::hca)
        doc_.fail(child(at, "multipath"), "multipath: random is a fabric endpoint option; HCA hosts send on one path",
                  "remove multipath, or use endpoint_model: fabric");
      patterned(f.pattern, f.hotspots, at);
      starts_in_run(f.start, child(at, "start"));
      served(f.sl, child(at, "sl"));
    }
  }

  void paths_of(uint32_t dst, uint32_t offset, const Path& at) const {
    const uint32_t lids = 1u << t_.nodes[dst].lmc;
    if (offset >= lids)
      doc_.fail(at,
                "offset " + std::to_string(offset) + " is not a path of " + t_.nodes[dst].name + ", which answers to " +
                    std::to_string(lids) + " LID(s) (lmc " + std::to_string(t_.nodes[dst].lmc) + ")",
                "use an offset in 0.." + std::to_string(lids - 1) + " or give " + t_.nodes[dst].name + " a larger lmc");
  }

  void traffic() const {
    const Path at = key("traffic");
    patterned(s_.traffic.pattern, s_.traffic.hotspots, at);
    starts_in_run(s_.traffic.start, child(at, "start"));
    served(s_.traffic.sl, child(at, "sl"));
  }

  // The in-band SM (docs/management.md) runs on an HCA host and needs an SMA in every node:
  // the HCAs' is in their firmware, fabric-only endpoints have none. Flows' times count from
  // the moment the subnet is up (multicast flows too; the SM writes the MFTs); traffic kinds
  // that keep absolute times of their own do not shift yet.
  void subnet_manager() const {
    const SubnetManagerConfig& c = s_.subnet_manager;
    if (c.reroute && c.mode == SmMode::in_band)
      doc_.fail(key("subnet_manager", "reroute_delay"),
                "an in-band SM reroutes by itself, on the traps of a link event, after the time its SMPs take",
                "leave out reroute_delay, or use mode: out_of_band");
    if (c.mode != SmMode::in_band) return;
    const Path at = key("subnet_manager");
    if (s_.endpoint_model != EndpointModel::hca)
      doc_.fail(child(at, "mode"), "an in-band SM needs an SMA in every node, and fabric-only endpoints have none",
                "add endpoint_model: hca, or use mode: out_of_band");
    if (!c.host.empty()) endpoint(c.host, child(at, "host"));
    const std::pair<bool, const char*> others[] = {{s_.perftest.enabled, "perftest"},
                                                   {s_.connections.enabled, "connections"},
                                                   {s_.control.enabled, "control"},
                                                   {s_.mix.enabled, "mix"}};
    for (const auto& [on, name] : others)
      if (on)
        doc_.fail(child(at, "mode"),
                  std::string("an in-band SM starts the flows when the subnet is up, and ") + name +
                      " does not wait for it yet",
                  std::string("use mode: out_of_band with ") + name + ", or run flows only");
    // The SM writes one VLArb table for every switch port (docs/management.md); per-port
    // weights from each port's multicast receivers are the builder's alone.
    if (s_.multicast_bandwidth.enabled && s_.multicast_bandwidth.destinations == MulticastDestinations::downstream)
      doc_.fail(child(at, "mode"),
                "an in-band SM writes the same VLArb table on every switch port, and multicast_bandwidth with "
                "destinations: downstream weighs each port by the receivers behind it",
                "set multicast_bandwidth.destinations: group, or use mode: out_of_band");
    if (s_.switch_cfg.model == sw::SwitchModel::flit_wormhole)
      doc_.fail(child(at, "mode"), "the flit router (switch.model: flit_wormhole) has no subnet management agent",
                "use switch.model: iba, or mode: out_of_band");
    if (s_.routing == "file")
      doc_.fail(child(at, "mode"), "the in-band SM routes the fabric it discovers; an lfts_file names another's tables",
                "choose a routing engine, or use mode: out_of_band");
  }

  // Link events (docs/management.md, "A link that goes down"): each names a cable by one of
  // its ends, within the run; a cable goes down only while up and comes up only while down.
  // Fabric-only endpoints and the flit router have no link state to change.
  void link_events() const {
    const Path list = key("link_events");
    std::map<int, std::pair<bool, sc_core::sc_time>> state;  // cable -> (down, since)
    std::vector<size_t> order(s_.link_events.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return s_.link_events[a].at < s_.link_events[b].at; });
    for (size_t i : order) {
      const LinkEventConfig& e = s_.link_events[i];
      const Path at = item(list, i);
      if (e.at >= s_.duration)
        doc_.fail(child(at, "at"),
                  "at " + sim::format_time(e.at) + " is not before the end of the run (duration " +
                      sim::format_time(s_.duration) + ")",
                  "give a time before duration");
      const size_t slash = e.link.rfind('/');
      const std::string digits = slash == std::string::npos ? "" : e.link.substr(slash + 1);
      if (slash == std::string::npos || digits.empty() || digits.size() > 3 ||
          digits.find_first_not_of("0123456789") != std::string::npos)
        doc_.fail(child(at, "link"), quoted(e.link) + " is not node/port",
                  "write a cable's end as the node name, a slash and the port number, e.g. leaf1/3");
      const uint32_t n = node(e.link.substr(0, slash), child(at, "link"));
      const uint32_t port = static_cast<uint32_t>(std::stoul(digits));
      cabled(n, port, child(at, "link"));
      const int cable = t_.link_at(n, static_cast<uint16_t>(port));
      const topo::Link& c = t_.links[static_cast<size_t>(cable)];
      if (s_.endpoint_model != EndpointModel::hca)
        for (uint32_t end : {c.a.node, c.b.node})
          if (t_.nodes[end].kind != topo::NodeKind::switch_node)
            doc_.fail(child(at, "link"),
                      "the cable of " + e.link + " ends at " + t_.nodes[end].name +
                          ", a fabric-only endpoint, which has no port state to take down",
                      "name a cable between two switches, or use endpoint_model: hca");
      if (s_.switch_cfg.model == sw::SwitchModel::flit_wormhole)
        doc_.fail(child(at, "link"), "the flit router (switch.model: flit_wormhole) has no link state to take down",
                  "use switch.model: iba, or leave out link_events");
      auto& [down, since] = state[cable];
      if (down != e.up)
        doc_.fail(child(at, "state"),
                  "the cable of " + e.link + " is already " + (down ? "down" : "up") + " at " + sim::format_time(e.at) +
                      (down ? " (since " + sim::format_time(since) + ")" : ""),
                  down ? "bring it up before taking it down again, or remove this event"
                       : "take it down before bringing it up, or remove this event");
      down = !e.up;
      since = e.at;
    }
  }

  // The control section (docs/control.md): its senders and destination are endpoints, and
  // its packet fits every VL15 buffer (a larger one would be dropped at the first hop).
  void control() const {
    const ControlConfig& c = s_.control;
    const Path at = key("control");
    starts_in_run(c.start, child(at, "start"));
    uint32_t dst = topo::Topology::npos;
    if (!c.dst.empty()) dst = endpoint(c.dst, child(at, "dst"));
    std::map<uint32_t, size_t> seen;
    for (size_t i = 0; i < c.senders.size(); ++i) {
      const Path sat = item(child(at, "senders"), i);
      const uint32_t n = endpoint(c.senders[i], sat);
      if (!seen.emplace(n, i).second)
        doc_.fail(sat, c.senders[i] + " is listed twice", "list each sender once");
      if (n == dst)
        doc_.fail(sat, c.senders[i] + " is dst itself; its packets would never enter the fabric",
                  "remove it from senders (left out, senders are every endpoint but dst)");
    }
    if (c.dst.empty() && endpoints_.size() < 2)
      doc_.fail(at, "the topology has fewer than two endpoints to send control packets between",
                "use a topology with more endpoints");
    if (!c.dst.empty() && c.senders.empty() && endpoints_.size() < 2)
      doc_.fail(child(at, "dst"), "dst is the only endpoint: no other endpoint would send to it",
                "use a topology with more endpoints");
    ib::Packet p;  // a MAD: UD SEND Only to QP0 (workload/control_source.h)
    p.bth.opcode = ib::Opcode::ud_send_only;
    p.payload_bytes = c.payload_bytes;
    const uint32_t need = p.credit_blocks() * ib::kCreditBlockBytes;
    ib::Packet empty = p;
    empty.payload_bytes = 0;
    const uint32_t header = empty.wire_bytes();
    for (const auto& [port, bytes] : {std::pair<const char*, uint32_t>{"switch", s_.switch_cfg.vl15_buffer_bytes},
                                      {"endpoint", s_.endpoint_cfg.vl15_buffer_bytes}})
      if (bytes < need)
        doc_.fail(child(at, "payload_bytes"),
                  std::to_string(c.payload_bytes) + "-byte control packets (" + std::to_string(p.wire_bytes()) +
                      " bytes on the wire, " + std::to_string(need) + " in 64-byte blocks) do not fit " + port +
                      ".vl15_buffer_bytes (" + std::to_string(bytes) + "): every one would be dropped",
                  "send at most " + std::to_string((bytes - header) / 4 * 4) + "-byte payloads (256: one MAD), or raise " +
                      std::string(port) + ".vl15_buffer_bytes");
  }

  void buffers() const {
    // The largest packet any source sends; virtual cut-through needs room for all of it.
    uint32_t payload = 0;
    std::string who;
    // HCA hosts split a message into packets of at most hca.flow_mtu bytes.
    const uint32_t most = s_.endpoint_model == EndpointModel::hca ? s_.hca_host.flow_mtu : ~uint32_t{0};
    for (size_t i = 0; i < s_.flows.size(); ++i)
      if (who.empty() || std::min(s_.flows[i].payload_bytes, most) > payload) {
        payload = std::min(s_.flows[i].payload_bytes, most);
        who = "flow " + s_.flows[i].name;
      }
    if (s_.traffic.enabled && (who.empty() || s_.traffic.payload_bytes > payload)) {
      payload = s_.traffic.payload_bytes;
      who = "traffic";
    }
    if (s_.connections.enabled && (who.empty() || s_.connections.payload_bytes > payload)) {
      payload = s_.connections.payload_bytes;
      who = "connections";
    }
    if (who.empty()) return;
    ib::Packet p;  // the workload sends UD SEND-only packets (platform/builder)
    p.bth.opcode = ib::Opcode::ud_send_only;
    p.payload_bytes = payload;
    const uint32_t need = p.credit_blocks() * ib::kCreditBlockBytes;
    const struct {
      const char* name;
      uint32_t bytes;
    } ports[] = {{"switch", s_.switch_cfg.vl_buffer_bytes}, {"endpoint", s_.endpoint_cfg.vl_buffer_bytes}};
    for (const auto& port : ports) {
      if (port.bytes >= need) continue;
      doc_.fail(key(port.name, "vl_buffer_bytes"),
                std::to_string(port.bytes) + " bytes cannot hold the largest packet: " + who + " sends " +
                    std::to_string(payload) + "-byte payloads, " + std::to_string(p.wire_bytes()) +
                    " bytes on the wire, " + std::to_string(need) + " bytes in 64-byte credit blocks",
                "raise " + std::string(port.name) + ".vl_buffer_bytes to at least " + std::to_string(need) +
                    " (payload + LRH 8, BTH 12, DETH 8, pad, ICRC 4, VCRC 2, rounded up to 64-byte blocks), "
                    "or send smaller payloads");
    }
    if (s_.switch_cfg.multicast_replication == sw::Replication::central_buffer && !s_.multicast.empty() &&
        s_.switch_cfg.multicast_buffer_bytes < need)
      doc_.fail(key("switch", "multicast_buffer_bytes"),
                std::to_string(s_.switch_cfg.multicast_buffer_bytes) + " bytes cannot hold the largest packet: " + who +
                    " sends " + std::to_string(need) + " bytes in 64-byte credit blocks",
                "raise switch.multicast_buffer_bytes to at least " + std::to_string(need));
  }

  // A port that exists and has a cable: anything else would capture or measure nothing.
  void cabled(uint32_t node, uint32_t port, const Path& at) const {
    const topo::Node& n = t_.nodes[node];
    if (port < 1 || port > n.num_ports)
      doc_.fail(at, n.name + " has no port " + std::to_string(port) + " (its ports are 1.." + std::to_string(n.num_ports) + ")",
                "use a port in 1.." + std::to_string(n.num_ports));
    if (t_.link_at(node, static_cast<uint16_t>(port)) < 0)
      doc_.fail(at, "port " + std::to_string(port) + " of " + n.name + " has no cable, so nothing passes it",
                "choose a cabled port of " + n.name);
  }

  uint32_t node(const std::string& name, const Path& at) const {
    const uint32_t n = t_.find(name);
    if (n == topo::Topology::npos)
      doc_.fail(at, "no node named " + quoted(name) + " in the topology",
                "name a switch or endpoint: " + some_names(t_, all_nodes(t_)));
    return n;
  }

  void outputs() const {
    rate_grid();
    const Path rates = key("outputs", "rate_ports");
    for (size_t j = 0; j < s_.outputs.rate_ports.size(); ++j) {
      const std::string& rp = s_.outputs.rate_ports[j];
      const Path at = item(rates, j);
      const size_t slash = rp.rfind('/');
      const std::string digits = slash == std::string::npos ? "" : rp.substr(slash + 1);
      if (slash == std::string::npos || digits.empty() || digits.size() > 3 ||
          digits.find_first_not_of("0123456789") != std::string::npos)
        doc_.fail(at, quoted(rp) + " is not node/port", "write the node name, a slash and the port number, e.g. B/1");
      cabled(node(rp.substr(0, slash), at), static_cast<uint32_t>(std::stoul(digits)), at);
    }
    std::map<std::string, size_t> files;
    for (size_t j = 0; j < s_.outputs.pcaps.size(); ++j) {
      const PcapConfig& pc = s_.outputs.pcaps[j];
      const Path at = item(key("outputs", "pcaps"), j);
      cabled(node(pc.node, child(at, "node")), pc.port, child(at, "port"));
      const auto [prev, fresh] = files.emplace(pc.file, j);
      if (!fresh)
        doc_.fail(child(at, "file"), "pcaps[" + std::to_string(prev->second) + "] writes " + quoted(pc.file) + " too",
                  "give every capture its own file");
      inside_out_dir(pc.file, child(at, "file"), "e.g. captures/" + pc.node + "-" + std::to_string(pc.port) + ".pcap");
    }
    if (!s_.outputs.timeline.empty())
      inside_out_dir(s_.outputs.timeline, key("outputs", "timeline"), "e.g. timeline.json");
  }

  // Output files land inside the run's output directory (platform/scenario/output_paths.h).
  void inside_out_dir(const std::string& rel, const Path& at, const std::string& example) const {
    if (const std::string problem = output_path_problem(rel); !problem.empty())
      doc_.fail(at, problem, "give a path relative to the output directory, without \"..\", " + example);
  }

  // rates.csv holds one sample per rate_step over the run for every flow and rate port; a
  // million per series (a 10 s run at 10 us) is far past any plot, and 1 ns over 10 ms had
  // written 250 MB (1 ps ran out of memory after the whole run).
  static constexpr uint64_t kMaxRateSamples = 1'000'000;
  void rate_grid() const {
    const uint64_t step = s_.outputs.rate_step.value(), run = s_.duration.value();
    if (step == 0 || run / step <= kMaxRateSamples) return;
    const sc_core::sc_time least = sc_core::sc_time::from_value((run + kMaxRateSamples - 1) / kMaxRateSamples);
    doc_.fail(key("outputs", "rate_step"),
              "rate_step " + sim::format_time(s_.outputs.rate_step) + " over the run's duration " +
                  sim::format_time(s_.duration) + " makes " + std::to_string(run / step) +
                  " rate samples per series; at most " + std::to_string(kMaxRateSamples) + " are kept",
              "give a rate_step of at least " + sim::format_time(least) + ", or shorten duration");
  }

  const Scenario& s_;
  const topo::Topology& t_;
  const Document& doc_;
  std::vector<uint32_t> endpoints_;
};

std::string default_name(const std::string& source) {
  const std::string stem = std::filesystem::path(source).stem().string();
  return stem.empty() || stem[0] == '<' ? "scenario" : stem;
}

// The run's name, written or from the file name; front ends make directories of it
// (out/<name>), so it must be one path component (platform/scenario/output_paths.h).
void check_name(ScenarioDocument& sd, const Document& doc) {
  YAML::Node written;
  const bool given = doc.find(key("name"), written);
  if (!given) sd.name = default_name(doc.source());
  const std::string problem = name_problem(sd.name);
  if (problem.empty()) return;
  doc.fail(key("name"), (given ? "" : "the name taken from the file name: ") + problem,
           std::string(given ? "give" : "add") + " a name that is one file name, without '/', e.g. name: my-run");
}

// Parsing, --set overrides, flow_defaults and the declared keys: the part of loading that
// needs nothing but the document.
// Issue 11: switch.crossbar names the crossbar (non_multiplexed, multiplexed); the request
// order it used to name (fifo, fifo_bypass) is switch.request_order. A document written
// before is told where its value went, not only which values are allowed now.
void refuse_old_crossbar_value(const Document& doc) {
  YAML::Node value;
  if (!doc.find(key("switch", "crossbar"), value) || !value.IsScalar()) return;
  const std::string old = value.Scalar();
  if (old != "fifo" && old != "fifo_bypass") return;
  doc.fail(key("switch", "crossbar"),
           "crossbar: " + old + " is a request order, which moved to its own key; crossbar is now "
           "non_multiplexed (the switch as before) or multiplexed",
           "now `switch.request_order: " + old + "`; leave crossbar out for the non-multiplexed crossbar");
}

// hca.profile (docs/hca.md, "Hardware profiles"): the profile's values go into the hca
// section wherever the document (or --set) does not write the key itself, before validation,
// so a profile value is checked like a written one and a written value always wins.
void merge_hca_profile(const Document& doc) {
  YAML::Node name;
  const Path at = key("hca", "profile");
  if (!doc.find(at, name)) return;
  const HcaProfile* profile = name.IsScalar() ? find_hca_profile(name.Scalar()) : nullptr;
  if (profile == nullptr)
    doc.fail(at, "unknown HCA profile " + (name.IsScalar() ? quoted(name.Scalar()) : std::string("(not a name)")),
             "use one of: " + hca_profile_names() + " (docs/hca.md, Hardware profiles), or leave profile out");
  YAML::Node hca;
  doc.find(key("hca"), hca);
  for (const HcaProfileValue& v : profile->values) {
    YAML::Node node = hca;  // handles: assigning through them changes the document
    for (size_t i = 0; i + 1 < v.path.size(); ++i) {
      if (!node[v.path[i]]) node[v.path[i]] = YAML::Node(YAML::NodeType::Map);
      node.reset(node[v.path[i]]);  // re-point the handle (operator= would overwrite the node)
    }
    if (!node.IsMap()) break;  // a section written as something else: validation reports it
    if (!node[v.path.back()]) node[v.path.back()] = v.value;
  }
}

ScenarioDocument read_document(const Document& doc) {
  refuse_old_crossbar_value(doc);
  merge_flow_defaults(doc);
  merge_hca_profile(doc);
  ScenarioDocument sd;
  params::apply(scenario_params(), doc, {}, sd);
  check_name(sd, doc);
  return sd;
}

// The scenario file's text, read as every input file is (a regular file of bounded size).
std::string read_scenario_file(const std::string& path) {
  return read_input_file(path, "scenario file", "check the path of the scenario file");
}

// Reads trace.file: each row becomes one packet. Errors name the CSV file, the row's line
// and the column.
std::vector<TracePacket> load_trace(const Scenario& s, const Document& doc, const std::string& base_dir) {
  const std::string file = input_path(s.trace.file, base_dir);
  std::istringstream in(read_named_file(doc, key("trace", "file"), file, "trace file", base_dir));
  std::string line;
  int line_no = 1;
  if (!std::getline(in, line) || line.rfind("time_s,src,dst,payload_bytes,sl", 0) != 0)
    throw ConfigError(file, "header", 1, "the first line is not the header time_s,src,dst,payload_bytes,sl",
                      "start the file with that header line");
  // The largest packet must fit a receive buffer whole (virtual cut-through).
  const uint32_t buffer = std::min(s.switch_cfg.vl_buffer_bytes, s.endpoint_cfg.vl_buffer_bytes);
  std::vector<TracePacket> packets;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    std::vector<std::string> cols;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cols.push_back(c);
    auto bad = [&](const std::string& column, const std::string& problem, const std::string& fix) {
      throw ConfigError(file, column, line_no, problem, fix);
    };
    if (cols.size() != 5) bad("row", "expected 5 columns, got " + std::to_string(cols.size()), "write time_s,src,dst,payload_bytes,sl");
    TracePacket p;
    double t = 0;
    try {
      size_t used = 0;
      t = std::stod(cols[0], &used);
      if (used != cols[0].size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      bad("time_s", "\"" + cols[0] + "\" is not a number of seconds", "write e.g. 1.5e-6");
    }
    if (!(t >= 0) || t * 1e12 >= static_cast<double>(s.duration.value()))
      bad("time_s", cols[0] + " s is outside the run (0 .. duration " + sim::format_time(s.duration) + ")",
          "drop the row or lengthen duration");
    p.time_ps = static_cast<uint64_t>(std::llround(t * 1e12));
    for (int k : {1, 2}) {
      const uint32_t n = s.topology.find(cols[static_cast<size_t>(k)]);
      if (n == topo::Topology::npos || s.topology.nodes[n].kind != topo::NodeKind::endpoint)
        bad(k == 1 ? "src" : "dst", "\"" + cols[static_cast<size_t>(k)] + "\" is not an endpoint of the topology",
            "use an endpoint name");
      (k == 1 ? p.src : p.dst) = n;
    }
    if (p.src == p.dst) bad("dst", "dst is the source itself", "choose another endpoint");
    int64_t payload = -1, sl = -1;
    try {
      payload = std::stoll(cols[3]);
      sl = std::stoll(cols[4]);
    } catch (const std::exception&) {
    }
    if (payload < 0 || payload > 4096) bad("payload_bytes", "\"" + cols[3] + "\" is not 0..4096", "give a payload of 0..4096 bytes");
    if (sl < 0 || sl > 15) bad("sl", "\"" + cols[4] + "\" is not 0..15", "give an SL of 0..15");
    p.payload_bytes = static_cast<uint32_t>(payload);
    p.sl = static_cast<uint8_t>(sl);
    ib::Packet shape;
    shape.bth.opcode = ib::Opcode::ud_send_only;
    shape.payload_bytes = p.payload_bytes;
    if (shape.credit_blocks() * ib::kCreditBlockBytes > buffer)
      bad("payload_bytes", "a " + cols[3] + "-byte payload does not fit the " + std::to_string(buffer) + "-byte VL buffers",
          "raise switch.vl_buffer_bytes and endpoint.vl_buffer_bytes");
    packets.push_back(p);
  }
  std::stable_sort(packets.begin(), packets.end(),
                   [](const TracePacket& a, const TracePacket& b) { return a.time_ps < b.time_ps; });
  return packets;
}

// The qos section becomes the tables of every switch port (OpenSM's qos_swe_ set) and every
// endpoint (qos_ca_), as a subnet manager would program them.
void apply_qos(ScenarioDocument& sd, const Document& doc, const std::string& base_dir) {
  const QosSpec& q = sd.qos_spec;
  for (const char* section : {"switch", "endpoint"})
    for (const char* table : {"sl2vl", "vlarb"}) {
      YAML::Node written;
      if (doc.find(key(section, table), written))
        doc.fail(key(section, table), std::string(section) + "." + table + " and a qos section both set port tables",
                 "write the tables in one place: remove " + std::string(section) + "." + table +
                     " or the qos section");
    }
  sm::QosPolicy policy;
  if (q.given.count("options_file")) {
    const std::string path = input_path(q.options_file, base_dir);
    const std::string text = read_named_file(doc, key("qos", "options_file"), path, "OpenSM options file", base_dir);
    // A file without a single qos_ option is not an options file meant for this (a wrong
    // path); taking it as "no options" would run with tables the user did not ask for.
    if (policy.read_options(text, path) == 0)
      doc.fail(key("qos", "options_file"), path + " holds no qos_* option",
               "name an OpenSM options file with qos_ lines (e.g. qos_sl2vl 0,1,...), or write the options "
               "under qos: instead");
  }
  const std::pair<const char*, const std::string QosSpec::*> options[] = {
      {"max_vls", &QosSpec::max_vls},         {"sl2vl", &QosSpec::sl2vl},
      {"vlarb_high", &QosSpec::vlarb_high},   {"vlarb_low", &QosSpec::vlarb_low},
      {"high_limit", &QosSpec::high_limit},   {"ca_sl2vl", &QosSpec::ca_sl2vl},
      {"ca_vlarb_high", &QosSpec::ca_vlarb_high}, {"ca_vlarb_low", &QosSpec::ca_vlarb_low},
      {"ca_high_limit", &QosSpec::ca_high_limit}, {"swe_sl2vl", &QosSpec::swe_sl2vl},
      {"swe_vlarb_high", &QosSpec::swe_vlarb_high}, {"swe_vlarb_low", &QosSpec::swe_vlarb_low},
      {"swe_high_limit", &QosSpec::swe_high_limit}};
  try {
    for (const auto& [name, field] : options) {
      if (!q.given.count(name)) continue;
      const Path at = key("qos", name);
      policy.set(std::string("qos_") + name, q.*field,
                 sm::QosOptionSource{doc.overridden(at) ? "--set" : doc.source(), "qos." + std::string(name),
                                     doc.line_of(at)});
    }
    const sm::QosPortTables swe = policy.tables(sm::QosPortKind::swe, sd.switch_cfg.data_vls);
    sd.switch_cfg.sl2vl = swe.sl2vl;
    sd.switch_cfg.vlarb = swe.vlarb;
    const sm::QosPortTables ca = policy.tables(sm::QosPortKind::ca, sd.endpoint_cfg.data_vls);
    sd.endpoint_cfg.sl2vl = ca.sl2vl;
    sd.endpoint_cfg.vlarb = ca.vlarb;
  } catch (const ConfigError& e) {
    // An error about a table as a port sees it names the option but no line: point at the
    // qos section then.
    if (e.line() > 0 || (!e.file().empty() && e.file() != doc.source())) throw;
    doc.fail(key("qos"), e.problem(), e.fix());
  }
}

// perftest.sizes as written, or the powers of two from min_bytes to max_bytes (perftest -a
// runs 2 .. 8 MiB).
void perftest_sizes(ScenarioDocument& sd, const Document& doc) {
  PerftestConfig& p = sd.perftest;
  const Path at = key("perftest", "sizes");
  YAML::Node list;
  p.sizes.clear();
  if (doc.find(at, list)) {
    p.sizes_given = true;
    if (list.size() == 0) doc.fail(at, "the list of sizes is empty", "give at least one size, or leave sizes out");
    for (size_t i = 0; i < list.size(); ++i) {
      int64_t v = 0;
      if (!list[i].IsScalar() || !sim::parse_integer(list[i].Scalar(), v) || v < 1 || v > (int64_t{1} << 31))
        doc.fail(item(at, i), "a size is an integer number of bytes in 1..2147483648",
                 "write e.g. sizes: [2, 64, 4096]");
      if (!p.sizes.empty() && static_cast<uint64_t>(v) <= p.sizes.back())
        doc.fail(item(at, i), "sizes are not increasing", "list each size once, smallest first");
      p.sizes.push_back(static_cast<uint64_t>(v));
    }
    return;
  }
  for (uint64_t n = p.min_bytes; n <= p.max_bytes; n *= 2) p.sizes.push_back(n);
}

// mix.phases: a list of [real-time, best-effort] percent pairs summing to 100 (docs/mix.md).
void mix_phase_list(ScenarioDocument& sd, const Document& doc) {
  const Path at = key("mix", "phases");
  const std::string fix = "write each phase as [real-time %, best-effort %], e.g. phases: [[20, 80], [50, 50]]";
  YAML::Node list;
  sd.mix.phases.clear();
  if (!doc.find(at, list) || !list.IsSequence() || list.size() == 0)
    doc.fail(at, "the mix needs at least one phase", fix);
  if (list.size() > 10000) doc.fail(at, std::to_string(list.size()) + " phases", "give at most 10000 phases");
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node ph = list[i];
    int64_t v[2] = {-1, -1};
    if (!ph.IsSequence() || ph.size() != 2 || !ph[0].IsScalar() || !ph[1].IsScalar() ||
        !sim::parse_integer(ph[0].Scalar(), v[0]) || !sim::parse_integer(ph[1].Scalar(), v[1]) || v[0] < 0 ||
        v[1] < 0 || v[0] > 100 || v[1] > 100)
      doc.fail(item(at, i), "a phase is a pair of whole percentages in 0..100", fix);
    if (v[0] + v[1] != 100)
      doc.fail(item(at, i),
               "real-time " + std::to_string(v[0]) + " % and best-effort " + std::to_string(v[1]) + " % sum to " +
                   std::to_string(v[0] + v[1]) + " %, not 100",
               "give shares of total_load that sum to 100, e.g. [" + std::to_string(v[0]) + ", " +
                   std::to_string(100 - v[0]) + "]");
    sd.mix.phases.push_back({static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1])});
  }
}

// What the mix needs of the rest of the scenario; after the video traces are read (a
// stream's mean rate is its trace's).
void check_mix(const Scenario& s, const Document& doc) {
  if (!s.mix.enabled) return;
  YAML::Node written;
  if (doc.find(key("traffic"), written))
    doc.fail(key("traffic"), "with a mix, best-effort traffic is the poisson and constant flows",
             "write the best-effort streams as flows, or remove mix");
  const uint64_t n = s.mix.phases.size(), len = s.mix.phase_length.value(), duration = s.duration.value();
  if (len > 0 && len * n > duration)
    doc.fail(key("mix", "phase_length"),
             std::to_string(n) + " phases of " + sim::format_time(s.mix.phase_length) + " take longer than duration " +
                 sim::format_time(s.duration),
             "give phase_length at most duration / " + std::to_string(n) + ", or leave it out for duration / phases");
  if (len == 0 && duration / n == 0)
    doc.fail(key("mix", "phases"), std::to_string(n) + " phases do not fit in " + sim::format_time(s.duration),
             "give fewer phases or a longer duration");
  for (size_t i = 0; i < s.flows.size(); ++i) {
    const FlowConfig& f = s.flows[i];
    const Path at = item(key("flows"), i);
    if (f.generator == GeneratorKind::saturating)
      doc.fail(child(at, "generator"),
               "with a mix, a flow is real-time (generator video) or best-effort (poisson or constant)",
               "use generator video, poisson or constant, or remove mix");
    if (f.generator != GeneratorKind::video && doc.find(child(at, "load"), written))
      doc.fail(child(at, "load"), "with a mix, total_load and the phases set the best-effort flows' load",
               "remove load from the flow (mix.total_load sets it)");
  }
  std::vector<double> link;
  const topo::Topology& t = s.topology;
  for (const FlowConfig& f : s.flows)
    link.push_back(link::LinkRate(t.links.at(static_cast<size_t>(t.link_at(t.find(f.src), 1))).cfg).data_bits_per_s() /
                   8.0);
  try {
    workload::plan_mix(s.mix, s.flows, link, duration);
  } catch (const std::invalid_argument& e) {
    doc.fail(key("mix", "phases"), e.what(),
             "give every source enough video flows (each is one stream) and some poisson or constant flows, or "
             "lower mix.total_load");
  }
}

// hca.firmware_image relative to the scenario's directory; "" is the default image.
// The image is loaded here once (ELF header, dlopen, HAL version, entry points), so that a
// run and `ibvp validate` refuse a wrong file alike, before anything is built.
void firmware_path(ScenarioDocument& sd, const Document& doc, const std::string& base_dir) {
  namespace fs = std::filesystem;
  std::string& image = sd.hca_host.hca.firmware_image;
  // Left out: the default image, found by the rules of platform/driver/firmware_location.h;
  // a missing one is then reported with those rules, since the scenario named no path.
  const bool by_default = image.empty();
  if (by_default) image = driver::default_firmware_image();
  fs::path p(image);
  if (p.is_relative()) p = fs::path(base_dir) / p;
  std::error_code ec;
  // Absolute: the path must name the same file whatever directory the run starts in, and a
  // bare file name would make dlopen search the library path instead.
  p = fs::absolute(p, ec).lexically_normal();
  const std::string where = "relative to the scenario file's directory (" + base_dir + ") or absolute";
  if (!fs::is_regular_file(p, ec))
    doc.fail(key("hca", "firmware_image"),
             (fs::exists(p, ec) ? p.string() + " is not a regular file" : "no firmware image at " + p.string()),
             by_default ? "build the firmware (`make`), install the ibvp package with its images, or set "
                          "IBVP_FIRMWARE_DIR or hca.firmware_image; " + driver::default_firmware_rules()
                        : "give the path of an image (a shared library built from firmware/), " + where +
                              "; leave it out for the default image");
  image = p.string();
  try {
    const hca::FirmwareImage check(image);
  } catch (const hca::FirmwareError& e) {
    doc.fail(key("hca", "firmware_image"), e.what(),
             "set hca.firmware_image to an image built from firmware/ for this platform, " + where +
                 "; leave it out for the default image");
  }
}

}  // namespace

const char* perftest_kind_name(PerftestKind k) {
  switch (k) {
    case PerftestKind::send_bw: return "send_bw";
    case PerftestKind::write_bw: return "write_bw";
    case PerftestKind::read_bw: return "read_bw";
    case PerftestKind::send_lat: return "send_lat";
    case PerftestKind::write_lat: return "write_lat";
  }
  return "?";
}

// flow_defaults: keys every flow takes unless it writes its own, so that one key (one
// --set or sweep value) changes many flows, e.g. the mean ON time of seed 004 Fig. 8's
// dynamic flows. Merged into the flows before validation; an error in a merged value
// points at its line under flow_defaults.
void merge_flow_defaults(const Document& doc) {
  YAML::Node defaults, flows;
  if (!doc.find(key("flow_defaults"), defaults)) return;
  if (!defaults.IsMap())
    doc.fail(key("flow_defaults"), "flow_defaults is a mapping of flow keys to values",
             "write flow_defaults: {on_off_mean: 5ms, ...}");
  // Each default must be a flow key: an unknown one is reported as flow_defaults.<key>, not
  // under the first flow it would be merged into. (A bad value is reported at the flow
  // that takes it, with the line under flow_defaults.)
  const sim::ParamGroup& flow = *scenario_params().find("flows")->group;
  std::vector<std::string> names;
  for (const sim::ParamDecl& d : flow.params) names.push_back(d.name);
  for (const auto& kv : defaults) {
    const std::string k = kv.first.as<std::string>();
    const Path at = child(key("flow_defaults"), k);
    const sim::ParamDecl* d = flow.find(k);
    if (d == nullptr) {
      const std::string near = sim::closest_match(k, names);
      doc.fail(at, "unknown flow key", (near.empty() ? "" : "did you mean " + near + "? ") + "flow keys are " +
                                           flow.key_list());
    }
  }
  if (!doc.find(key("flows"), flows) || !flows.IsSequence()) return;
  for (size_t i = 0; i < flows.size(); ++i) {
    YAML::Node flow = flows[i];  // a handle: assigning through it changes the document
    if (!flow.IsMap()) continue;  // validation reports it
    for (const auto& kv : defaults) {
      const std::string k = kv.first.as<std::string>();
      if (!flow[k]) flow[k] = kv.second;
    }
  }
}

Scenario scenario_from_yaml(const std::string& yaml_text, const std::string& source,
                            const std::vector<std::string>& overrides, const std::string& base_dir) {
  Document doc = Document::parse(yaml_text, source);
  for (const std::string& o : overrides) doc.apply_override(o);
  ScenarioDocument sd = read_document(doc);

  // Defaults that depend on other values of the document.
  for (size_t i = 0; i < sd.flows.size(); ++i)
    if (sd.flows[i].name.empty()) sd.flows[i].name = "flow" + std::to_string(i);
  for (PcapConfig& pc : sd.outputs.pcaps)
    if (pc.file.empty()) {
      // Node names from real fabrics may hold '/' ("SX6036/U1"): a file name, not a path.
      std::string node = pc.node;
      for (char& c : node)
        if (c == '/' || c == '\\' || c == '\0') c = '_';
      pc.file = node + "-" + std::to_string(pc.port) + ".pcap";
    }

  if (sd.perftest.enabled) perftest_sizes(sd, doc);
  if (sd.mix.enabled) mix_phase_list(sd, doc);
  if (sd.endpoint_model == EndpointModel::hca) firmware_path(sd, doc, base_dir);

  topo::Topology topology = build_topology(sd, doc, base_dir);
  if (sd.qos_spec.present) apply_qos(sd, doc, base_dir);
  sd.routing_options = routing_options(sd, topology, doc, base_dir);
  Scenario s = sd;  // the Scenario part; the topology section became `topology`
  s.source = source;
  s.topology = std::move(topology);
  // Seed 003's flit routers run every cable at their link rate (docs/seed003.md); the checks
  // below (mix loads, the deadlock floor) see that rate.
  if (s.switch_cfg.model == sw::SwitchModel::flit_wormhole)
    for (topo::Link& l : s.topology.links) l.cfg.data_bps = static_cast<uint64_t>(std::llround(s.switch_cfg.flit.link_bps));
  ScenarioChecker(s, doc).run();
  if (!s.trace.file.empty()) s.trace.packets = load_trace(s, doc, base_dir);
  for (size_t i = 0; i < s.flows.size(); ++i) {
    FlowConfig& f = s.flows[i];
    if (f.generator != GeneratorKind::video || f.video_trace.empty()) continue;
    // A missing or unreadable file is reported at the key; a malformed line names the
    // trace file and its line (parse_video_frames).
    const std::string file = input_path(f.video_trace, base_dir);
    const std::string text =
        read_named_file(doc, child(item(key("flows"), i), "video_trace"), file, "video trace", base_dir);
    for (const workload::VideoFrame& v : workload::parse_video_frames(text, file))
    {
      f.video_frame_bytes.push_back(v.size_bytes);
      f.video_frame_types.push_back(static_cast<char>(v.type));
    }
  }
  check_mix(s, doc);
  // The floor and why: platform/scenario/deadlock_timeout.h.
  const uint64_t floor_ns = (deadlock_timeout_floor_ps(s) + 999) / 1000;
  if (s.deadlock_timeout < sc_core::sc_time(static_cast<double>(floor_ns), sc_core::SC_NS))
    doc.fail(key("deadlock_timeout"),
             sim::format_time(s.deadlock_timeout) + " is shorter than twice the time the largest packet (" +
                 std::to_string(largest_workload_packet_bytes(s)) +
                 " bytes) takes on the slowest link: outputs that are only busy would count as stuck",
             "give deadlock_timeout at least " + std::to_string(floor_ns) + "ns" +
                 (floor_ns <= 1'000'000 ? ", or leave it out (1ms)" : ""));
  return s;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  const std::string text = read_scenario_file(path);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return scenario_from_yaml(text, path, overrides, dir.empty() ? "." : dir);
}

std::string scenario_name(const std::string& yaml_text, const std::string& source,
                          const std::vector<std::string>& overrides) {
  Document doc = Document::parse(yaml_text, source);
  for (const std::string& o : overrides) doc.apply_override(o);
  return read_document(doc).name;
}

std::string scenario_file_name(const std::string& path, const std::vector<std::string>& overrides) {
  return scenario_name(read_scenario_file(path), path, overrides);
}

std::string scenario_json_schema() { return params::json_schema(scenario_params(), "ibvp scenario"); }

std::string parameter_reference_markdown() {
  const std::string intro =
      "Every key a scenario file may hold, generated from the parameter declarations next to the models\n"
      "(`models/*/*_params.cpp`) and `platform/scenario/scenario_params.cpp` by\n"
      "`ibvp-sim --reference docs/parameters.md`; `docs/scenario.schema.json` is the matching JSON Schema\n"
      "(`--schema`). Do not edit either by hand: a test fails when they differ from the code.\n"
      "\n"
      "- A key that is not listed, a value of the wrong type or out of range is refused with the file,\n"
      "  line, key path and the allowed values. A key may be left out to take its default; a key written\n"
      "  with no value is an error.\n"
      "- Times are a number and a unit (`ps`, `ns`, `us`, `ms`, `s`): `40ns`, `2 ms`, `1.5us`. Only `0`\n"
      "  may omit the unit.\n"
      "- `ibvp-sim --set key=value` replaces one value before validation, e.g. `--set switch.pipeline_delay=40ns`,\n"
      "  `--set flows[2].ipd=3`, `--set topology.local=10`; the value is YAML (`[0, 1]`, `{vl: 0, weight: 1}`).";
  return params::markdown_reference(scenario_params(), "Scenario parameters", intro);
}

}  // namespace ibvp
