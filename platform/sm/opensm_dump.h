#pragma once
// The subnet manager's tables in OpenSM's dump formats, so a routing computed here can be
// compared line by line with what OpenSM writes for the same fabric (opensm -D 0x41 or
// `routing_engine ...` with dump_files_dir; osm_dump.c):
//   opensm-lfts.dump   one block per switch: "Unicast lids [0-MAX] of switch Lid L guid
//                      0xG ('desc'):", then "0xLLLL PPP # <type> portguid 0xG: 'desc'" for
//                      every LID with a route, then "MAX lids dumped".
//   opensm-sl2vl.dump  one block per port: "<type> 0xGUID, base LID L, "desc"", a header,
//                      then "in out : vl vl ..." rows (switches: every input port for each
//                      cabled output port; channel adapters: one row "0 0").
//   opensm-subnet.lst  one line per cabled port of every node: "{ SW Ports:.. NodeGUID:..
//                      PortGUID:.. {desc} LID:.. PN:.. } { <the peer's side> } PHY=4x
//                      LOG=ACT SPD=10" (dump_topology_node).
//   opensm.fdbs        per switch "dump_ucast_routes: Switch 0xG", then for every LID
//                      "0xLLLL : PPP  : HH   : yes" (port, hops through it, whether that is
//                      a least-hop port) or "UNREACHABLE" (dump_ucast_routes).
// Switches and nodes come in GUID order (opensm-sl2vl.dump: port GUID order), as OpenSM
// walks its GUID-keyed tables. GUIDs,
// port GUIDs and descriptions are topo::node_guid(), port_guid() and node_description():
// synthetic GUIDs where the topology has none, a CA port's own GUID where a dump gave it
// (else node GUID + 1), a switch's port GUID its node GUID (switch port 0). Vendor, device
// and revision are 0 and no node is marked "-SM" (the SM's place is not modelled).
#include <cstdint>
#include <functional>
#include <string>

#include "models/switch/switch.h"
#include "platform/sm/routing.h"

namespace ibvp::sm {

std::string opensm_lfts_dump(const topo::Topology& t, const RoutingTables& rt);
std::string opensm_subnet_lst(const topo::Topology& t);
// Hops are links from the switch to the destination (an endpoint's own cable counts) on the
// shortest path that leaves through the port, as OpenSM's min-hop matrix counts them; a
// route that is not least-hop reads "No N hop path possible via port P!" with the lowest
// port of a least-hop path.
std::string opensm_fdbs(const topo::Topology& t, const RoutingTables& rt);

// The SL-to-VL table a node uses from input port `in` to output port `out` (endpoints: 0, 0).
using Sl2VlOf = std::function<sw::Sl2VlTable(uint32_t node, uint16_t in, uint16_t out)>;
std::string opensm_sl2vl_dump(const topo::Topology& t, const Sl2VlOf& sl2vl);

}  // namespace ibvp::sm
