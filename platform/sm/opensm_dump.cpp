#include "platform/sm/opensm_dump.h"

#include <cinttypes>
#include <cstdio>

namespace ibvp::sm {

namespace {

// ib_get_node_type_str() of OpenSM's ib_types.h.
const char* node_type(const topo::Node& n) {
  return n.kind == topo::NodeKind::switch_node ? "Switch" : "Channel Adapter";
}

template <class... Args>
void append(std::string& out, const char* fmt, Args... args) {
  char buf[512];
  const int n = std::snprintf(buf, sizeof buf, fmt, args...);
  if (n > 0) out.append(buf, static_cast<size_t>(std::min<int>(n, sizeof buf - 1)));
}

}  // namespace

std::string opensm_lfts_dump(const topo::Topology& t, const RoutingTables& rt) {
  std::string out;
  const unsigned max_lid = t.max_lid();
  for (uint32_t s : t.switches()) {
    const topo::Node& sw = t.nodes[s];
    append(out, "Unicast lids [0-%u] of switch Lid %u guid 0x%016" PRIx64 " ('%s'):\n", max_lid, sw.lid, sw.guid,
           sw.name.c_str());
    const Lft& lft = rt.lft.at(s);
    for (unsigned lid = 0; lid <= max_lid; ++lid) {
      const uint8_t port = lft.lookup(static_cast<uint16_t>(lid));
      // OpenSM skips entries beyond the switch's ports: "no route" (255) among them.
      if (port > sw.num_ports) continue;
      append(out, "0x%04x %03u # ", lid, port);
      const uint32_t owner = t.node_of_lid(static_cast<uint16_t>(lid));
      if (owner == topo::Topology::npos) {
        out += "unknown node and type\n";
        continue;
      }
      const topo::Node& n = t.nodes[owner];
      append(out, "%s portguid 0x%016" PRIx64 ": '%s'\n", node_type(n), n.guid, n.name.c_str());
    }
    append(out, "%u lids dumped\n", max_lid);
  }
  return out;
}

std::string opensm_sl2vl_dump(const topo::Topology& t, const Sl2VlOf& sl2vl) {
  static const char* kHeader = "#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15";
  static const char* kSeparator = "#--------------------------------------------------------";
  std::string out;
  auto row = [&](uint16_t in, uint16_t o, const sw::Sl2VlTable& tbl) {
    append(out, "%-3d %-3d :", in, o);
    for (uint8_t vl : tbl) append(out, " %-2d", vl);
    out += "\n";
  };
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    const topo::Node& node = t.nodes[n];
    append(out, "%s 0x%016" PRIx64 ", base LID %d, \"%s\"\n%s\n%s\n", node_type(node), node.guid, node.lid,
           node.name.c_str(), kHeader, kSeparator);
    if (node.kind == topo::NodeKind::switch_node) {
      // Port 0 has no cable, so OpenSM prints no table for it as an output.
      for (uint16_t o = 1; o <= node.num_ports; ++o) {
        if (t.link_at(n, o) < 0) continue;
        for (uint16_t in = 0; in <= node.num_ports; ++in) row(in, o, sl2vl(n, in, o));
      }
    } else {
      row(0, 0, sl2vl(n, 0, 0));
    }
    append(out, "%s\n\n", kSeparator);
  }
  return out;
}

}  // namespace ibvp::sm
