#include "platform/sm/file_routing.h"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "platform/params/config_error.h"
#include "platform/params/input_file.h"
#include "platform/sm/route_stats.h"

namespace ibvp::sm {

using topo::Topology;

namespace {

std::string hex(uint64_t v, int width = 0) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llx", width, static_cast<unsigned long long>(v));
  return buf;
}

// Hex digits at `i` (no 0x); false when there are none or more than 16.
bool read_hex(const std::string& s, size_t& i, uint64_t& out) {
  const size_t start = i;
  uint64_t v = 0;
  while (i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i]))) {
    if (i - start == 16) return false;
    const int c = std::tolower(static_cast<unsigned char>(s[i]));
    v = v * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    ++i;
  }
  out = v;
  return i > start;
}

bool read_dec(const std::string& s, size_t& i, uint64_t max, uint64_t& out) {
  const size_t start = i;
  uint64_t v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    v = v * 10 + static_cast<uint64_t>(s[i] - '0');
    if (v > max) return false;
    ++i;
  }
  out = v;
  return i > start;
}

bool space_or_end(const std::string& s, size_t i) { return i >= s.size() || std::isspace(static_cast<unsigned char>(s[i])); }

std::string excerpt(const std::string& line) {
  std::string out;
  for (char c : line) {
    if (out.size() >= 60) return out + "...";
    out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  }
  return out;
}

constexpr const char* kFormatFix =
    "give the opensm-lfts.dump OpenSM writes: 'Unicast lids [0-MAX] of switch Lid L guid 0xG ('desc'):' then "
    "'0xLLLL PPP # ...' lines";
constexpr const char* kSameFabricFix =
    "load the topology of the fabric the dump was taken from (ibnetdiscover on that fabric, or the topology ibvp "
    "exported with the dump), or remove this block";

}  // namespace

RoutingTables parse_lfts_dump(const Topology& t, const std::string& text, const std::string& source) {
  auto fail = [&](int line, const std::string& problem, const std::string& fix) {
    throw ConfigError(source, "", line, problem, fix);
  };
  std::map<uint64_t, uint32_t> switch_by_guid;
  for (uint32_t s : t.switches()) switch_by_guid.emplace(topo::node_guid(t, s), s);
  // Port GUID -> node; GUIDs two nodes share are left out (no remapping through them).
  std::map<uint64_t, uint32_t> node_by_port_guid;
  std::map<uint64_t, int> port_guid_count;
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    const uint64_t g = topo::port_guid(t, n);
    if (++port_guid_count[g] == 1) node_by_port_guid[g] = n;
    else node_by_port_guid.erase(g);
  }

  RoutingTables rt;
  rt.engine = "file";
  rt.lft.resize(t.nodes.size());
  const size_t lft_size = static_cast<size_t>(t.max_lid()) + 1;
  for (uint32_t s : t.switches()) rt.lft[s].port.assign(lft_size, Lft::kNoRoute);
  std::map<uint32_t, int> block_line;  // switch -> line of its block header

  std::istringstream in(text);
  std::string raw;
  uint32_t sw = Topology::npos;
  for (int n = 1; std::getline(in, raw); ++n) {
    size_t b = 0;
    while (b < raw.size() && std::isspace(static_cast<unsigned char>(raw[b]))) ++b;
    const std::string line = raw.substr(b);
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("Multicast mlids", 0) == 0)
      fail(n, "this is a multicast forwarding table dump (opensm.mcfdbs), not an LFT dump",
           "give opensm-lfts.dump, the unicast tables");
    if (line.rfind("Unicast lids", 0) == 0) {
      const size_t g = line.find(" guid 0x");
      uint64_t guid = 0;
      size_t i = g == std::string::npos ? 0 : g + 8;
      if (g == std::string::npos || !read_hex(line, i, guid) || !space_or_end(line, i))
        fail(n, "switch header '" + excerpt(line) + "' has no 'guid 0x<GUID>'", kFormatFix);
      const auto it = switch_by_guid.find(guid);
      if (it == switch_by_guid.end())
        fail(n, "switch GUID " + hex(guid, 16) + " is not a switch of the topology " + t.source, kSameFabricFix);
      sw = it->second;
      const auto [prev, fresh] = block_line.emplace(sw, n);
      if (!fresh)
        fail(n, "switch " + t.nodes[sw].name + " (GUID " + hex(guid, 16) + ") has a second block (the first is on line " +
                    std::to_string(prev->second) + ")",
             "keep one block per switch");
      continue;
    }
    if (line.rfind("0x", 0) == 0) {
      if (sw == Topology::npos)
        fail(n, "LFT entry '" + excerpt(line) + "' comes before any 'Unicast lids ... of switch' header", kFormatFix);
      size_t i = 2;
      uint64_t lid = 0, port = 0;
      if (!read_hex(line, i, lid) || lid > 0xFFFF || !space_or_end(line, i))
        fail(n, "'" + excerpt(line) + "' does not start with a LID 0x0000..0xffff", kFormatFix);
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      if (!read_dec(line, i, 999, port) || !space_or_end(line, i))
        fail(n, "'" + excerpt(line) + "' has no output port after the LID", "write '0xLLLL PPP', the port in decimal");
      const topo::Node& s = t.nodes[sw];
      if (port > s.num_ports)
        fail(n,
             "port " + std::to_string(port) + " is beyond the " + std::to_string(s.num_ports) + " ports of switch " +
                 s.name,
             "the dump is from another fabric or the topology lost ports: " + std::string(kSameFabricFix));
      // OpenSM's remap_lid: the port GUID tells whose entry this is; if that port's LIDs
      // moved, the entry follows it (base LID + the entry's path bits).
      const size_t pg = line.find(" portguid 0x", i);
      if (pg != std::string::npos) {
        size_t j = pg + 12;
        uint64_t guid = 0;
        const auto owner = read_hex(line, j, guid) ? node_by_port_guid.find(guid) : node_by_port_guid.end();
        if (owner != node_by_port_guid.end()) {
          const topo::Node& o = t.nodes[owner->second];
          const uint32_t count = 1u << o.lmc;
          if (lid < o.lid || lid >= o.lid + count) lid = o.lid + (lid & (count - 1));
        }
      }
      if (lid == 0 || lid >= lft_size || t.node_of_lid(static_cast<uint16_t>(lid)) == Topology::npos)
        fail(n, "LID " + hex(lid, 4) + " is no LID of a node of the topology " + t.source,
             "the LIDs moved since the dump was taken: take the topology (ibnetdiscover) and the dump at the same "
             "time, or remove this line");
      rt.lft[sw].port[lid] = static_cast<uint8_t>(port);
      continue;
    }
    unsigned count = 0;
    char rest[16] = {0};
    if (std::sscanf(line.c_str(), "%u lids dumpe%15s", &count, rest) == 2 && std::string(rest) == "d") continue;
    fail(n, "line not understood: '" + excerpt(line) + "'", kFormatFix);
  }
  if (block_line.empty()) fail(0, "the file holds no switch block", kFormatFix);

  // Tables with holes would drop packets as "no route": name a pair and where its route ends.
  if (const std::optional<UnroutedPair> hole = first_unrouted(t, rt)) {
    const uint32_t dst = t.node_of_lid(hole->dlid);
    uint32_t at = t.peer(hole->src, 1).node;
    std::string where;
    for (size_t hops = 0; hops <= t.nodes.size(); ++hops) {
      if (t.nodes[at].kind != topo::NodeKind::switch_node) break;
      const uint8_t p = rt.lft[at].lookup(hole->dlid);
      const bool listed = block_line.count(at) != 0;
      if (p == Lft::kNoRoute || !listed || t.link_at(at, p) < 0) {
        where = "switch " + t.nodes[at].name + " (GUID " + hex(topo::node_guid(t, at), 16) + ") " +
                (!listed ? "has no block in the dump"
                         : p == Lft::kNoRoute ? "has no entry for it" : "sends it to uncabled port " + std::to_string(p));
        break;
      }
      at = t.peer(at, p).node;
    }
    if (where.empty()) where = "the route loops or ends at the wrong node";
    fail(0,
         "the tables leave " + t.nodes[hole->src].name + " without a route to " + t.nodes[dst].name + " (DLID " +
             std::to_string(hole->dlid) + "): " + where,
         "dump the tables and take the topology from the same fabric at the same time, or route it with another "
         "engine");
  }
  return rt;
}

RoutingTables load_lfts_dump(const Topology& t, const std::string& path) {
  if (path.empty())
    throw ConfigError("", "routing_options.lfts_file", 0, "routing engine 'file' needs the LFT dump it loads",
                      "give routing_options.lfts_file (ibvp topo: --lfts-file), an opensm-lfts.dump");
  // A regular file of bounded size (platform/params/input_file.h), never a FIFO or device.
  std::string text;
  try {
    text = read_input_file(path, "LFT dump", "check the path (relative to the scenario file)");
  } catch (const ConfigError& e) {
    throw ConfigError(path, "routing_options.lfts_file", 0, e.problem(), e.fix());
  }
  return parse_lfts_dump(t, text, path);
}

std::unique_ptr<RoutingEngine> make_file_routing_engine(std::string lfts_file) {
  return std::make_unique<FileRouting>(std::move(lfts_file));
}

}  // namespace ibvp::sm
