#include "platform/parallel/split_check.h"

#include <cstdlib>
#include <string>

#include "platform/params/config_error.h"
#include "platform/sm/channel_dependency.h"
#include "platform/sm/routing.h"

namespace ibvp::parallel {

namespace {

[[noreturn]] void refuse(const Scenario& s, const std::string& key, const std::string& problem,
                         const std::string& fix) {
  throw ConfigError(s.source, key, 0, problem, fix);
}

}  // namespace

void check_splittable(const Scenario& s, const Partition& part) {
  const std::string split = "a run split across " + std::to_string(part.ranks) + " processes";
  if (s.event_order != EventOrder::canonical)
    refuse(s, "event_order",
           split + " needs the canonical order of simultaneous events (fifo's order depends on every push "
                   "of the whole fabric, which no process sees)",
           "set event_order: canonical (its results differ slightly from fifo's; a one-process run with it "
           "gives the split run's files; docs/parallel.md)");
  if (s.endpoint_model != EndpointModel::fabric)
    refuse(s, "endpoint_model", split + " supports fabric endpoints only (HCA hosts run host software in "
                                        "SystemC threads that cannot be cut)",
           "use endpoint_model: fabric, or run in one process");
  if (s.switch_cfg.model != sw::SwitchModel::iba)
    refuse(s, "switch.model", split + " supports the packet switch (iba) only", "use switch.model: iba, or run in one process");
  if (s.subnet_manager.mode == SmMode::in_band)
    refuse(s, "subnet_manager.mode", split + " supports the out-of-band subnet manager only",
           "remove subnet_manager (out of band), or run in one process");
  if (!s.link_events.empty())
    refuse(s, "link_events", split + " does not support link events yet", "remove link_events, or run in one process");
  if (!s.multicast.empty())
    refuse(s, "multicast", split + " does not support multicast yet", "remove multicast, or run in one process");
  if (s.connections.enabled)
    refuse(s, "connections", split + " does not support CBR connections yet", "remove connections, or run in one process");
  if (s.mix.enabled)
    refuse(s, "mix", split + " does not support traffic mixes yet", "remove mix, or run in one process");
  if (s.control.enabled)
    refuse(s, "control", split + " does not support control traffic yet", "remove control, or run in one process");
  if (!s.outputs.pcaps.empty())
    refuse(s, "outputs.pcaps", split + " does not write captures yet", "remove outputs.pcaps, or run in one process");
  for (size_t i = 0; i < s.flows.size(); ++i)
    if (s.flows[i].generator == GeneratorKind::video)
      refuse(s, "flows[" + std::to_string(i) + "].generator", split + " does not support video flows yet",
             "use another generator, or run in one process");
  for (uint32_t r = 0; r < part.ranks; ++r)
    if (part.ports[r] == 0)
      refuse(s, "topology", split + " leaves rank " + std::to_string(r) + " without any node",
             "run with fewer processes (at most one per leaf switch)");
  if (s.routing.rfind("multipath", 0) == 0)
    refuse(s, "routing", split + " does not merge the paths table of alternative outputs yet",
           "use a routing engine with one output per destination (minhop, updn, dfs, ...), or run in one process");
  if (part.lookahead_ps == 0)
    refuse(s, "topology.link.length_m",
           split + " cuts a cable without propagation delay: the processes could not run ahead of each other",
           "give every cable a length above 0 m");
  // The deadlock watch reads every switch, and a process of a split run holds only its own;
  // a split run runs only routings that cannot deadlock: no cycle in the channel dependency
  // graph (Dally and Seitz 1987; every route taken on VL 0, which can only add cycles). The
  // watch then has nothing to find, and the stuck outputs at the end are merged on rank 0.
  const sm::RoutingTables rt = sm::make_routing_engine(s.routing, s.routing_options)->compute(s.topology);
  const sm::CdgReport cdg = sm::analyze_deadlock(s.topology, rt);
  if (!cdg.acyclic) {
    std::string cycle;
    for (size_t i = 0; i < cdg.cycle.size() && i < 8; ++i) cycle += (i ? " -> " : "") + cdg.cycle[i];
    if (cdg.cycle.size() > 8) cycle += " -> ...";
    refuse(s, "routing",
           split + " needs routes that cannot deadlock, and routing " + s.routing +
               "'s channel dependencies close a cycle (" + cycle +
               "): the deadlock watch cannot see across processes yet",
           "use routing: updn or dfs (up*/down*: no cycle on any topology), or run in one process");
  }
}

Launch launched_ranks() {
  auto read = [](const char* name) -> long {
    const char* v = std::getenv(name);
    if (!v || !*v) return -1;
    char* end = nullptr;
    const long x = std::strtol(v, &end, 10);
    return *end ? -1 : x;
  };
  Launch l;
  for (const auto& [size_var, rank_var] : {std::pair{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
                                           std::pair{"PMI_SIZE", "PMI_RANK"}}) {
    const long size = read(size_var), rank = read(rank_var);
    if (size >= 1 && rank >= 0 && rank < size) {
      l.ranks = static_cast<uint32_t>(size);
      l.rank = static_cast<uint32_t>(rank);
      return l;
    }
  }
  return l;
}

}  // namespace ibvp::parallel
