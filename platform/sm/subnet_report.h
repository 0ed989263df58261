#pragma once
// What `ibvp topo` tells about a fabric under one routing engine: the graph, the routes
// (path lengths, link balance) and whether the tables can deadlock, from one computation.
#include <cstdint>
#include <string>

#include "platform/sm/channel_dependency.h"
#include "platform/sm/route_stats.h"
#include "platform/sm/routing.h"

namespace ibvp::sm {

struct SubnetReport {
  TopologyStats topology;
  RoutingTables tables;
  RouteStats routes;
  CdgReport deadlock;
  double routing_seconds = 0;  // wall time of the engine's compute()
  uint32_t vl_layers = 1;      // SLs (VL layers) the engine spreads paths over
};

// Gives every endpoint `lmc` path bits (2^lmc LIDs, IBA 7.11.1) and assigns all LIDs anew,
// aligned to the new ranges, in node order. Throws ConfigError for lmc > 7.
void set_endpoint_lmc(topo::Topology& t, uint8_t lmc);

// Routes `t` with `engine` and analyses the result. The deadlock analysis puts each route on
// the VL its SL maps to when the engine assigns SLs per path (VL = SL here: the tables an
// engine asks for are identity SL2VL tables), else every route on VL 0.
SubnetReport report_subnet(const topo::Topology& t, const std::string& engine, const RoutingOptions& opt = {});

}  // namespace ibvp::sm
