#pragma once
// Routing engine "file": the LFTs of a running fabric, read from the opensm-lfts.dump OpenSM
// writes (OpenSM's engine of the same name, osm_ucast_file.c, option lfts_file), so a user
// simulates the tables their fabric really runs rather than ones ibvp computes.
//
// The dump has a block per switch, "Unicast lids [0-MAX] of switch Lid L guid 0xG
// ('desc'):", then one line per routed LID, "0xLLLL PPP # <type> portguid 0xP: 'desc'", and
// "MAX lids dumped". Switches are matched by node GUID (topo::node_guid()), so the topology
// must be the same fabric: an ibnetdiscover dump taken from it, or a topology ibvp exported
// with the tables. As OpenSM does, a line whose port GUID names a port of the topology whose
// LIDs have moved is applied to that port's LID (its base LID plus the line's path bits).
#include <memory>
#include <string>

#include "platform/sm/routing.h"

namespace ibvp::sm {

// Reads a dump's text into tables for `t` (indexed). Refused with a ConfigError naming
// `source`, the line and a fix: a switch GUID the topology lacks, a switch listed twice, a
// port beyond the switch's ports, a LID no node of the topology has, an entry outside a
// switch block, a multicast dump, a line that is none of these; and, once read, tables that
// leave some endpoint without a route to another (naming the pair and the switch where the
// route ends).
RoutingTables parse_lfts_dump(const topo::Topology& t, const std::string& text, const std::string& source);
RoutingTables load_lfts_dump(const topo::Topology& t, const std::string& path);

class FileRouting : public RoutingEngine {
 public:
  explicit FileRouting(std::string path) : path_(std::move(path)) {}
  const char* name() const override { return "file"; }
  RoutingTables compute(const topo::Topology& topology) override { return load_lfts_dump(topology, path_); }

 private:
  std::string path_;
};

std::unique_ptr<RoutingEngine> make_file_routing_engine(std::string lfts_file);

}  // namespace ibvp::sm
