#include "platform/sm/routing.h"

#include "platform/params/config_error.h"
#include "platform/sm/dfs.h"
#include "platform/sm/dfsssp.h"
#include "platform/sm/file_routing.h"
#include "platform/sm/minhop.h"
#include "platform/sm/multipath.h"
#include "platform/sm/smart.h"
#include "platform/sm/updn.h"

namespace ibvp::sm {

namespace {

struct EngineEntry {
  const char* name;
  std::unique_ptr<RoutingEngine> (*make)(const RoutingOptions&);
};

// The registry: one line per engine.
const EngineEntry kEngines[] = {
    {"minhop", [](const RoutingOptions&) { return std::unique_ptr<RoutingEngine>(new MinHopRouting()); }},
    {"updn",
     [](const RoutingOptions& o) {
       UpDownOptions u;
       u.roots = o.roots;
       return make_updn_engine(u);
     }},
    {"dfs", [](const RoutingOptions&) { return make_dfs_engine(); }},
    {"smart", [](const RoutingOptions&) { return make_smart_engine(); }},
    {"multipath", [](const RoutingOptions&) { return make_multipath_engine(); }},
    {"multipath_disjoint",
     [](const RoutingOptions&) {
       MultipathOptions o;
       o.mode = MultipathMode::disjoint;
       return make_multipath_engine(o);
     }},
    {"multipath_adaptive",
     [](const RoutingOptions&) {
       MultipathOptions o;
       o.mode = MultipathMode::adaptive;
       return make_multipath_engine(o);
     }},
    {"dfsssp", [](const RoutingOptions&) { return make_dfsssp_engine(); }},
    {"file", [](const RoutingOptions& o) { return make_file_routing_engine(o.lfts_file); }},
};

}  // namespace

std::vector<std::string> routing_engine_names() {
  std::vector<std::string> names;
  for (const EngineEntry& e : kEngines) names.emplace_back(e.name);
  return names;
}

std::unique_ptr<RoutingEngine> make_routing_engine(const std::string& name, const RoutingOptions& opt) {
  if (!opt.roots.empty() && name != "updn")
    throw ConfigError("", "routing_options.roots", 0,
                      "root switches are an option of up*/down* (updn), not of routing engine '" + name + "'",
                      "use routing: updn, or leave the roots out");
  if (!opt.lfts_file.empty() && name != "file")
    throw ConfigError("", "routing_options.lfts_file", 0,
                      "an LFT dump is read by routing engine 'file', not by '" + name + "'",
                      "use routing: file, or leave lfts_file out");
  for (const EngineEntry& e : kEngines)
    if (name == e.name) return e.make(opt);
  std::string known;
  for (const std::string& n : routing_engine_names()) known += (known.empty() ? "" : ", ") + n;
  throw ConfigError("", "routing", 0, "unknown routing engine '" + name + "'", "use one of: " + known);
}

std::vector<uint32_t> trace_route(const topo::Topology& t, const RoutingTables& rt, uint32_t src, uint16_t dlid) {
  const uint32_t dst = t.node_of_lid(dlid);
  if (src >= t.nodes.size() || dst == topo::Topology::npos) return {};
  uint32_t at = src;
  if (t.nodes[src].kind == topo::NodeKind::endpoint) {
    if (t.link_at(src, 1) < 0) return {};
    at = t.peer(src, 1).node;
  }
  std::vector<uint32_t> path;
  // A walk longer than the number of nodes has visited a switch twice: a loop. (A bound, not
  // the count of switches, which would cost a pass over the nodes per walk.)
  const size_t max_hops = t.nodes.size();
  while (t.nodes[at].kind == topo::NodeKind::switch_node) {
    if (path.size() == max_hops || at >= rt.lft.size()) return {};
    path.push_back(at);
    const uint8_t port = rt.lft[at].lookup(dlid);
    if (port == Lft::kNoRoute) return {};
    if (port == 0) return at == dst ? path : std::vector<uint32_t>{};
    if (t.link_at(at, port) < 0) return {};
    at = t.peer(at, port).node;
  }
  return at == dst ? path : std::vector<uint32_t>{};
}

}  // namespace ibvp::sm
