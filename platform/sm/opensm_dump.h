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
// Node descriptions are the node names; GUIDs are the topology's (0 where a generator left
// them unset) and a switch's port GUID is its node GUID, as on switch port 0.
#include <cstdint>
#include <functional>
#include <string>

#include "models/switch/switch.h"
#include "platform/sm/routing.h"

namespace ibvp::sm {

std::string opensm_lfts_dump(const topo::Topology& t, const RoutingTables& rt);

// The SL-to-VL table a node uses from input port `in` to output port `out` (endpoints: 0, 0).
using Sl2VlOf = std::function<sw::Sl2VlTable(uint32_t node, uint16_t in, uint16_t out)>;
std::string opensm_sl2vl_dump(const topo::Topology& t, const Sl2VlOf& sl2vl);

}  // namespace ibvp::sm
