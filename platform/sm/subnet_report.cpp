#include "platform/sm/subnet_report.h"

#include <algorithm>
#include <chrono>

#include "platform/params/config_error.h"

namespace ibvp::sm {

void set_endpoint_lmc(topo::Topology& t, uint8_t lmc) {
  if (lmc > topo::Topology::kMaxLmc)
    throw ConfigError(t.source, "lmc", 0, "LMC " + std::to_string(lmc) + " is out of range",
                      "use 0..7 (an endpoint answers to 2^LMC LIDs)");
  for (topo::Node& n : t.nodes) {
    if (n.kind == topo::NodeKind::endpoint) n.lmc = lmc;
    n.lid = 0;
  }
  topo::assign_lids(t);
  t.index();
}

SubnetReport report_subnet(const topo::Topology& t, const std::string& engine, const RoutingOptions& options) {
  SubnetReport r;
  r.topology = topology_stats(t);
  const auto start = std::chrono::steady_clock::now();
  r.tables = make_routing_engine(engine, options)->compute(t);
  r.routing_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.routes = route_stats(t, r.tables);
  CdgOptions opt;
  if (!r.tables.path_sl.empty()) {
    const RoutingTables& rt = r.tables;
    opt.vl = [&rt](uint32_t src, uint16_t dlid) { return rt.sl(src, dlid); };
    for (const std::vector<uint8_t>& row : rt.path_sl)
      for (uint8_t sl : row) r.vl_layers = std::max<uint32_t>(r.vl_layers, sl + 1u);
  }
  r.deadlock = analyze_deadlock(t, r.tables, opt);
  return r;
}

}  // namespace ibvp::sm
