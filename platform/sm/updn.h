#pragma once
// Up*/Down* routing (Schroeder et al., "Autonet: a high-speed, self-configuring local area
// network using point-to-point links", IEEE JSAC 9(8), 1991; seed paper 001 refs [3,4]), as
// OpenSM's engine "updn" (opensm/osm_ucast_updn.c).
//
// The switches are ranked by breadth-first distance from a root switch and every cable
// between two switches gets a direction: "up" toward the lower rank, on equal ranks toward
// the lower GUID (as OpenSM's __updn_get_dir: a move from the bigger GUID to the smaller is
// UP) and, with equal GUIDs (generated fabrics leave them 0), toward the lower node index.
// As OpenSM (root_guid_file), several roots may be given, all of rank 0; otherwise one root
// per connected set of switches is chosen. Every switch pair stays connected by a legal
// path: each switch has an up path to a root, and roots of one set reach each other
// through it. (OpenSM orients a cable between two roots "up" from both ends; here the
// GUID, then the index, orient it like any cable of equal ranks.) Going up
// always decreases (rank, GUID, index), so the up channels cannot form a cycle, nor can the
// down channels; a route that never takes an up cable after a down cable therefore has a
// channel dependency graph without cycles, i.e. it cannot deadlock (Dally and Seitz 1987;
// analyze_deadlock() in channel_dependency.h checks exactly that).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "platform/sm/routing.h"

namespace ibvp::sm {

struct UpDownOptions {
  // The root switch, by name; or, when `root` is empty, by node index. Neither given: in each
  // connected set of switches the switch with the smallest eccentricity (largest switch-hop
  // distance to another switch of the set), ties to the lowest node index. A centre root
  // keeps the ranks, and so the detours up*/down* forces, small.
  std::string root;
  uint32_t root_node = topo::Topology::npos;
  // Several roots (node indices of switches), all of rank 0; wins over root and root_node.
  // A connected set of switches without one of them gets its root chosen as above.
  std::vector<uint32_t> roots;
};

// A switch of `t` by its name or its node GUID ("0x..." hexadecimal, or decimal, as
// topo::node_guid() gives it): its node index, or Topology::npos.
uint32_t find_switch(const topo::Topology& t, const std::string& name_or_guid);

// OpenSM's root_guid_file: one switch node GUID per line (0x hexadecimal or decimal, the
// first word; '#' comments and blank lines skipped). ConfigError naming `source` and the
// line for a GUID that is not a switch of `t`, a line without a GUID, or no GUID at all.
std::vector<uint32_t> parse_root_guids(const topo::Topology& t, const std::string& text, const std::string& source);
std::vector<uint32_t> load_root_guid_file(const topo::Topology& t, const std::string& path);

// The orientation up*/down* routes follow.
struct UpDownRanking {
  std::vector<uint32_t> roots;  // root switches (node indices): the given ones, or one per connected set
  std::vector<uint32_t> rank;   // [node] switch hops from its root; Topology::npos for endpoints
  // True when the cable from switch `from` to switch `to` leads up: (rank, GUID, node index)
  // of `to` is below that of `from`.
  bool is_up(const topo::Topology& t, uint32_t from, uint32_t to) const;
};

// Ranks the switches of an indexed topology. Throws ConfigError when the requested root is
// not a switch of the fabric.
UpDownRanking rank_switches(const topo::Topology& t, const UpDownOptions& opt = {});

class UpDownEngine : public RoutingEngine {
 public:
  explicit UpDownEngine(UpDownOptions opt = {}) : opt_(std::move(opt)) {}
  const char* name() const override { return "updn"; }
  // Every LID (the 2^LMC LIDs of each endpoint, each switch's LID at its port 0) is routed on
  // a legal up*/down* path; among the legal next hops of a switch, as minhop does, an
  // endpoint's other LIDs are spread first (other neighbour switch, then other port), then
  // the port carrying the fewest endpoint LIDs so far, then the lowest port. LIDs of another
  // connected set of switches get Lft::kNoRoute. Needs an indexed topology; throws
  // ConfigError for a bad root.
  RoutingTables compute(const topo::Topology& topology) override;
  // The orientation used by the last compute().
  const UpDownRanking& ranking() const { return ranking_; }

 private:
  UpDownOptions opt_;
  UpDownRanking ranking_;
};

std::unique_ptr<RoutingEngine> make_updn_engine(UpDownOptions opt = {});

}  // namespace ibvp::sm
