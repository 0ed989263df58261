#pragma once
// The ibnetdiscover topology format (infiniband-diags): what `ibnetdiscover > fabric.net`
// prints for a running subnet. Reading it lets a dump of a real cluster load as it is;
// writing it lets ibvp fabrics go to tools that read dumps. What is mapped and what is left
// out is in docs/topology.md, "ibnetdiscover dumps".
//
// A dump lists every node once, as a record: id lines (vendid=, devid=, sysimgguid=,
// switchguid= or caguid=), a header (`Switch 36 "S-0008f10500200b50" # "desc" base port 0
// lid 9 lmc 0`, `Ca 2 "H-0002c9030002847c" # "desc"`) and one line per cabled port
// (`[4] "H-003048c749cd0000"[1](3048c749cd0001) # "desc" lid 72 4xDDR`). Each cable is
// therefore listed twice, once from each end.
#include <cstdint>
#include <map>
#include <string>

#include "platform/topology/topology.h"

namespace ibvp::topo {

// A node-name map as infiniband-diags read it (ibnetdiscover --node-name-map): one node per
// line, "0x<node GUID> \"<name>\"", '#' starting a comment. Node GUID -> name.
using NodeNameMap = std::map<uint64_t, std::string>;
// Errors (a line without a GUID or a name, a GUID named twice) name the file and the line.
NodeNameMap parse_node_name_map(const std::string& text, const std::string& source_name);
NodeNameMap load_node_name_map(const std::string& path);
// A line per node of `t`: its node GUID (node_guid(), synthetic where it has none) and name.
std::string write_node_name_map(const Topology& t);

// Reads a dump file. Every error is a ConfigError naming `path`, the line, the item and a fix.
// With a node-name map, a node whose GUID the map lists takes the map's name (a CA split
// into ports: "<name>/p<port>"); GUIDs the map lists but the dump lacks are ignored.
Topology load_ibnetdiscover(const std::string& path, const NodeNameMap& names = {});

// The same from text; `source_name` names the file in errors. The result is indexed and has
// passed validate(): nodes without a LID in the dump got one from assign_lids().
Topology parse_ibnetdiscover(const std::string& text, const std::string& source_name,
                             const NodeNameMap& names = {});

struct IbnetdiscoverWriteOptions {
  // Quote nodes by ids as ibnetdiscover prints them ("S-<node GUID>", "H-<node GUID>") and
  // put the names into the descriptions; loading with write_node_name_map()'s map gives the
  // names back. Off: the names are the quoted ids and the descriptions node_description().
  bool guid_names = false;
};

// Writes `t` in the format, one record per switch and one `Ca 1` record per endpoint (an
// ibvp endpoint is one CA port), with LIDs, LMCs, GUIDs (node_guid(), port_guid(): synthetic
// where `t` has none), descriptions, width and speed in the places ibnetdiscover puts them,
// so that parse_ibnetdiscover gives back the same nodes, cables and LIDs. Cable length and
// propagation are not part of the format (the defaults come back). Throws ConfigError for a
// node name or description the format cannot quote.
std::string write_ibnetdiscover(const Topology& t, const IbnetdiscoverWriteOptions& opt = {});

// True when `text` reads as an ibnetdiscover dump rather than the project's YAML: one of its
// first lines is an id line (switchguid=, caguid=, ...) or a node header (Switch/Ca/Rt N
// "name"). For callers that pick a loader by content.
bool looks_like_ibnetdiscover(const std::string& text);

}  // namespace ibvp::topo
