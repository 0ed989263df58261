#include "platform/sm/opensm_dump.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "platform/sm/switch_graph.h"

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

// OpenSM walks its node and switch tables (cl_qmap, keyed by GUID) in GUID order.
std::vector<uint32_t> by_guid(const topo::Topology& t, std::vector<uint32_t> nodes) {
  std::stable_sort(nodes.begin(), nodes.end(),
                   [&t](uint32_t a, uint32_t b) { return topo::node_guid(t, a) < topo::node_guid(t, b); });
  return nodes;
}

std::vector<uint32_t> all_nodes(const topo::Topology& t) {
  std::vector<uint32_t> n(t.nodes.size());
  for (uint32_t i = 0; i < n.size(); ++i) n[i] = i;
  return n;
}

const char* desc(const topo::Node& n) { return topo::node_description(n).c_str(); }

}  // namespace

std::string opensm_lfts_dump(const topo::Topology& t, const RoutingTables& rt) {
  std::string out;
  const unsigned max_lid = t.max_lid();
  for (uint32_t s : by_guid(t, t.switches())) {
    const topo::Node& sw = t.nodes[s];
    append(out, "Unicast lids [0-%u] of switch Lid %u guid 0x%016" PRIx64 " ('%s'):\n", max_lid, sw.lid,
           topo::node_guid(t, s), desc(sw));
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
      append(out, "%s portguid 0x%016" PRIx64 ": '%s'\n", node_type(n), topo::port_guid(t, owner), desc(n));
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
  // OpenSM walks its port table, keyed by port GUID.
  std::vector<uint32_t> order = all_nodes(t);
  std::stable_sort(order.begin(), order.end(),
                   [&t](uint32_t a, uint32_t b) { return topo::port_guid(t, a) < topo::port_guid(t, b); });
  for (uint32_t n : order) {
    const topo::Node& node = t.nodes[n];
    append(out, "%s 0x%016" PRIx64 ", base LID %d, \"%s\"\n%s\n%s\n", node_type(node), topo::port_guid(t, n), node.lid,
           desc(node), kHeader, kSeparator);
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

namespace {

// PortInfo LinkSpeedActive / LinkSpeedExtActive as osm_dump.c prints them (Gb/s per lane of
// the signalling rate; FDR10 by name; speeds it does not know as "??").
const char* speed_text(link::Speed s) {
  switch (s) {
    case link::Speed::sdr: return "2.5";
    case link::Speed::ddr: return "5";
    case link::Speed::qdr: return "10";
    case link::Speed::fdr10: return "FDR10";
    case link::Speed::fdr: return "14";
    case link::Speed::edr: return "25";
    case link::Speed::hdr: return "50";
    default: return "??";
  }
}

const char* width_text(link::Width w) {
  switch (w) {
    case link::Width::x1: return "1x";
    case link::Width::x2: return "2x";
    case link::Width::x4: return "4x";
    case link::Width::x8: return "8x";
    case link::Width::x12: return "12x";
  }
  return "??";
}

// One side of a cable: "{ SW Ports:.. ... LID:.. PN:.. } ". `vendor_format` is the printf
// conversion osm_dump.c uses for VenID, which differs between the two sides (%06X, %08X).
void subnet_side(std::string& out, const topo::Topology& t, uint32_t n, uint16_t port, const char* vendor_format) {
  const topo::Node& node = t.nodes[n];
  const bool sw = node.kind == topo::NodeKind::switch_node;
  const uint64_t guid = topo::node_guid(t, n);
  append(out, "{ %s Ports:%02X SystemGUID:%016" PRIx64 " NodeGUID:%016" PRIx64 " PortGUID:%016" PRIx64 " VenID:",
         sw ? "SW" : "CA", node.num_ports, guid, guid, topo::port_guid(t, n));
  append(out, vendor_format, 0u);
  append(out, " DevID:%04X Rev:%08X {%s} LID:%04X PN:%02X } ", 0u, 0u, desc(node), node.lid, port);
}

}  // namespace

std::string opensm_subnet_lst(const topo::Topology& t) {
  std::string out;
  for (uint32_t n : by_guid(t, all_nodes(t))) {
    const topo::Node& node = t.nodes[n];
    for (uint16_t port = 1; port <= node.num_ports; ++port) {
      const int l = t.link_at(n, port);
      if (l < 0) continue;
      const topo::PortRef peer = t.peer(n, port);
      subnet_side(out, t, n, port, "%06X");
      subnet_side(out, t, peer.node, peer.port, "%08X");
      const link::LinkConfig& cfg = t.links[static_cast<size_t>(l)].cfg;
      append(out, "PHY=%s LOG=ACT SPD=%s\n", width_text(cfg.width), speed_text(cfg.speed));
    }
  }
  return out;
}

std::string opensm_fdbs(const topo::Topology& t, const RoutingTables& rt) {
  const SwitchGraph g = switch_graph(t);
  // Switch hops between every two switches (BFS per switch; fine for the fabrics a dump is
  // read from: the X5 cluster has 11 switches).
  std::vector<std::vector<uint32_t>> dist(g.node.size());
  for (uint32_t s = 0; s < g.node.size(); ++s) dist[s] = bfs(g, s);
  constexpr uint32_t kFar = topo::Topology::npos;
  // Links from the switch at dense index `from` to node `dst`: switch hops to the switch the
  // destination is (or hangs) on, plus its own cable for an endpoint.
  auto hops_to = [&](uint32_t from, uint32_t dst) -> uint32_t {
    uint32_t at = dst, extra = 0;
    if (t.nodes[dst].kind == topo::NodeKind::endpoint) {
      if (t.link_at(dst, 1) < 0) return kFar;
      at = t.peer(dst, 1).node;
      extra = 1;
      if (g.sw_of_node[at] == kFar) return kFar;
    }
    const uint32_t d = dist[from][g.sw_of_node[at]];
    return d == kFar ? kFar : d + extra;
  };
  std::string out;
  const unsigned max_lid = t.max_lid();
  for (uint32_t s : by_guid(t, t.switches())) {
    const topo::Node& sw = t.nodes[s];
    append(out, "dump_ucast_routes: Switch 0x%016" PRIx64 "\nLID    : Port : Hops : Optimal\n", topo::node_guid(t, s));
    for (unsigned lid = 1; lid <= max_lid; ++lid) {
      append(out, "0x%04X : ", lid);
      const uint32_t dst = t.node_of_lid(static_cast<uint16_t>(lid));
      const uint8_t port = rt.lft.at(s).lookup(static_cast<uint16_t>(lid));
      if (dst == topo::Topology::npos || port == Lft::kNoRoute) {
        out += "UNREACHABLE\n";
        continue;
      }
      // Hops through a port: the least number of links from this switch to the destination
      // that start with that port (OpenSM's min-hop matrix, whatever the engine routed).
      auto via = [&](uint16_t p) -> uint32_t {
        if (p == 0) return dst == s ? 0 : kFar;
        if (t.link_at(s, p) < 0) return kFar;
        const topo::PortRef next = t.peer(s, p);
        if (next.node == dst) return 1;
        if (g.sw_of_node[next.node] == kFar || next.node == s) return kFar;
        const uint32_t rest = hops_to(g.sw_of_node[next.node], dst);
        return rest == kFar ? kFar : rest + 1;
      };
      const uint32_t hops = via(port);
      if (hops == kFar) {
        append(out, "%03u  : HOPS UNKNOWN\n", port);
        continue;
      }
      uint32_t best = hops;
      uint16_t best_port = port;
      for (uint16_t p = 0; p <= sw.num_ports; ++p) {
        const uint32_t h = via(p);
        if (h < best) best = h, best_port = p;
      }
      append(out, "%03u  : %02u   : ", port, hops);
      if (best == hops)
        out += "yes\n";
      else
        append(out, "No %u hop path possible via port %u!\n", best, best_port);
    }
  }
  return out;
}

}  // namespace ibvp::sm
