#include "platform/sm/routing.h"

#include "platform/params/config_error.h"
#include "platform/sm/dfs.h"
#include "platform/sm/dfsssp.h"
#include "platform/sm/minhop.h"
#include "platform/sm/multipath.h"
#include "platform/sm/smart.h"
#include "platform/sm/updn.h"

namespace ibvp::sm {

namespace {

struct EngineEntry {
  const char* name;
  std::unique_ptr<RoutingEngine> (*make)();
};

// The registry: one line per engine.
const EngineEntry kEngines[] = {
    {"minhop", [] { return std::unique_ptr<RoutingEngine>(new MinHopRouting()); }},
    {"updn", [] { return make_updn_engine(); }},
    {"dfs", [] { return make_dfs_engine(); }},
    {"smart", [] { return make_smart_engine(); }},
    {"multipath", [] { return make_multipath_engine(); }},
    {"multipath_disjoint",
     [] {
       MultipathOptions o;
       o.mode = MultipathMode::disjoint;
       return make_multipath_engine(o);
     }},
    {"dfsssp", [] { return make_dfsssp_engine(); }},
};

}  // namespace

std::vector<std::string> routing_engine_names() {
  std::vector<std::string> names;
  for (const EngineEntry& e : kEngines) names.emplace_back(e.name);
  return names;
}

std::unique_ptr<RoutingEngine> make_routing_engine(const std::string& name) {
  for (const EngineEntry& e : kEngines)
    if (name == e.name) return e.make();
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
