#include "platform/topology/topology_yaml.h"

#include "platform/params/input_file.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include "platform/params/config_error.h"
#include "platform/params/input_file.h"
#include "platform/params/input_text.h"

namespace ibvp::topo {

namespace {

const std::vector<std::string> kTopKeys = {"defaults", "switches", "hosts", "links"};
const std::vector<std::string> kLinkSettingKeys = {"width", "speed", "length_m", "propagation_ns_per_m"};
const std::vector<std::string> kLinkKeys = {"a", "b", "width", "speed", "length_m", "propagation_ns_per_m"};
const std::vector<std::string> kSwitchKeys = {"name", "ports", "lid", "lmc", "guid", "description"};
const std::vector<std::string> kHostKeys = {"name", "lid", "lmc", "ports", "guid", "port_guid", "description"};
constexpr const char* kWidths = "1X, 2X, 4X, 8X, 12X";
constexpr const char* kSpeeds = "SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR";

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : ", ") + w;
  return s;
}

// yaml-cpp marks are 0-based and null (-1) for nodes that did not come from text.
int line_of(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return m.is_null() ? 0 : m.line + 1;
}

bool parse_uint64_text(const std::string& text, uint64_t& out) {
  // Decimal or 0x-hexadecimal only: yaml-cpp's own conversion would read "010" as octal 8.
  if (text.empty()) return false;
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const std::string digits = hex ? text.substr(2) : text;
  if (digits.empty() || digits.size() > (hex ? 16u : 20u)) return false;
  for (char c : digits)
    if (!(hex ? std::isxdigit(static_cast<unsigned char>(c)) : std::isdigit(static_cast<unsigned char>(c)))) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtoull(digits.c_str(), &end, hex ? 16 : 10);
  return errno == 0 && *end == '\0';
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// Shortest text that reads back as the same double, so saved files stay readable ("1.5",
// not "1.5000000000000000") and still round-trip exactly.
std::string format_double(double v) {
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string text = buf;
  // "1.0" rather than "1": a length reads as a real number in the file.
  if (std::isfinite(v) && text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

bool same_link_settings(const link::LinkConfig& x, const link::LinkConfig& y) {
  return x.width == y.width && x.speed == y.speed && x.length_m == y.length_m &&
         x.propagation_ns_per_m == y.propagation_ns_per_m;
}

class Reader {
 public:
  Reader(std::string source, std::string prefix) : source_(std::move(source)), prefix_(std::move(prefix)) {}

  Topology read(const YAML::Node& root) {
    topo_.source = source_;
    if (!root || root.IsNull())
      fail("", root, "the topology is empty", "give at least switches: or hosts:, and links:");
    if (!root.IsMap()) fail("", root, "the topology must be a mapping", "use the keys " + join(kTopKeys));
    check_keys(root, "", kTopKeys);

    if (root["defaults"]) {
      const YAML::Node d = root["defaults"];
      if (!d.IsMap()) fail("defaults", d, "defaults must be a mapping", "write defaults: {width: 4X, speed: SDR}");
      check_keys(d, "defaults", kLinkSettingKeys);
      read_link_settings(d, "defaults", defaults_);
    }
    read_nodes(root["switches"], "switches", NodeKind::switch_node);
    read_nodes(root["hosts"], "hosts", NodeKind::endpoint);
    read_links(root["links"]);

    // Loader-independent rules live in Topology::validate(); it names items by node name and
    // link index, which this file maps back to lines.
    try {
      assign_lids(topo_);
      topo_.index();
      topo_.validate();
    } catch (const ConfigError& e) {
      throw ConfigError(e.file(), key(e.key()), line_for(e.key()), e.problem(), e.fix());
    }
    return std::move(topo_);
  }

 private:
  [[noreturn]] void fail(const std::string& path, const YAML::Node& at, const std::string& problem,
                         const std::string& fix) const {
    throw ConfigError(source_, key(path), at ? line_of(at) : 0, problem, fix);
  }
  std::string key(const std::string& path) const {
    if (prefix_.empty()) return path;
    return path.empty() ? prefix_ : prefix_ + "." + path;
  }
  static std::string sub(const std::string& path, const std::string& k) { return path.empty() ? k : path + "." + k; }
  static std::string item(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

  int line_for(std::string k) const {
    // "nodes.sw1.lid" falls back to "nodes.sw1" when the lid was assigned, not written.
    for (;;) {
      auto it = lines_.find(k);
      if (it != lines_.end()) return it->second;
      const size_t dot = k.rfind('.');
      if (dot == std::string::npos) return 0;
      k.resize(dot);
    }
  }

  void check_keys(const YAML::Node& map, const std::string& path, const std::vector<std::string>& allowed) const {
    std::set<std::string> seen;
    for (const auto& kv : map) {
      const std::string k = kv.first.Scalar();
      bool known = false;
      for (const std::string& a : allowed) known = known || a == k;
      if (!known) fail(sub(path, k), kv.first, "unknown key '" + k + "'", "use one of: " + join(allowed));
      if (!seen.insert(k).second) fail(sub(path, k), kv.first, "key '" + k + "' given twice", "keep one of them");
    }
  }

  std::string scalar(const YAML::Node& n, const std::string& path, const std::string& what) const {
    if (!n.IsScalar()) fail(path, n, what + " must be a single value", "write it as plain text, e.g. " + path + ": ...");
    return n.Scalar();
  }

  uint64_t number(const YAML::Node& n, const std::string& path, uint64_t lo, uint64_t hi, const std::string& what,
                  const std::string& fix) const {
    const std::string text = scalar(n, path, what);
    uint64_t v = 0;
    if (!parse_uint64_text(text, v) || v < lo || v > hi)
      fail(path, n, what + " is '" + text + "', not an integer " + std::to_string(lo) + ".." + std::to_string(hi), fix);
    return v;
  }

  double real(const YAML::Node& n, const std::string& path, const std::string& what) const {
    const std::string text = scalar(n, path, what);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(v) || v < 0)
      fail(path, n, what + " is '" + text + "', not a number >= 0", "write a decimal number, e.g. 1.5");
    return v;
  }

  void read_link_settings(const YAML::Node& map, const std::string& path, link::LinkConfig& cfg) const {
    if (const YAML::Node w = map["width"]) {
      if (!link::parse_width(scalar(w, sub(path, "width"), "width"), cfg.width))
        fail(sub(path, "width"), w, "unknown link width '" + w.Scalar() + "'", std::string("use one of ") + kWidths);
    }
    if (const YAML::Node s = map["speed"]) {
      if (!link::parse_speed(scalar(s, sub(path, "speed"), "speed"), cfg.speed))
        fail(sub(path, "speed"), s, "unknown link speed '" + s.Scalar() + "'", std::string("use one of ") + kSpeeds);
    }
    if (const YAML::Node l = map["length_m"]) cfg.length_m = real(l, sub(path, "length_m"), "cable length");
    if (const YAML::Node p = map["propagation_ns_per_m"])
      cfg.propagation_ns_per_m = real(p, sub(path, "propagation_ns_per_m"), "propagation delay");
  }

  void read_nodes(const YAML::Node& list, const std::string& path, NodeKind kind) {
    if (!list || list.IsNull()) return;
    if (!list.IsSequence())
      fail(path, list, path + " must be a list", "write one entry per line, each starting with '- '");
    const bool is_switch = kind == NodeKind::switch_node;
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node e = list[i];
      const std::string at = item(path, i);
      Node node;
      node.kind = kind;
      // "- h1" is a host with everything left to defaults. (yaml-cpp nodes are references:
      // assigning one Node to another would overwrite the document, so none is reassigned.)
      const bool short_host = e.IsScalar() && !is_switch;
      if (!short_host) {
        if (!e.IsMap())
          fail(at, e, "an entry must be a mapping",
               is_switch ? "write - {name: sw1, ports: 8}" : "write - {name: h1} or just - h1");
        check_keys(e, at, is_switch ? kSwitchKeys : kHostKeys);
        if (!e["name"]) fail(sub(at, "name"), e, "entry has no name", "add name: ...");
      }
      const YAML::Node name_node = short_host ? e : e["name"];
      node.name = scalar(name_node, sub(at, "name"), "name");
      if (node.name.empty()) fail(sub(at, "name"), name_node, "the name is empty", "give the node a name");
      auto [prev, fresh] = names_.emplace(node.name, static_cast<uint32_t>(topo_.nodes.size()));
      if (!fresh)
        fail(sub(at, "name"), name_node,
             "two nodes are named " + node.name + " (the first on line " +
                 std::to_string(lines_.at("nodes." + node.name)) + ")",
             "rename one of them; names identify nodes in links, flows and reports");
      (void)prev;
      const std::string nkey = "nodes." + node.name;
      lines_[nkey] = line_of(e);

      if (e.IsMap()) {
        if (const YAML::Node p = e["ports"]) {
          node.num_ports = static_cast<uint16_t>(number(p, sub(at, "ports"), 1, Topology::kMaxPorts, "ports",
                                                        "use 1.." + std::to_string(Topology::kMaxPorts) + " ports"));
          lines_[nkey + ".ports"] = line_of(p);
        } else if (is_switch) {
          fail(sub(at, "ports"), e, "switch " + node.name + " has no ports:", "add ports: <number of ports>");
        }
        if (const YAML::Node l = e["lid"]) {
          node.lid = static_cast<uint16_t>(number(l, sub(at, "lid"), 1, Topology::kMaxUnicastLid, "lid",
                                                  "use a unicast LID 1..49151 (0 is reserved), or leave lid out so "
                                                  "one is assigned"));
          lines_[nkey + ".lid"] = line_of(l);
        }
        if (const YAML::Node m = e["lmc"]) {
          node.lmc = static_cast<uint8_t>(number(m, sub(at, "lmc"), 0, Topology::kMaxLmc, "lmc",
                                                 "use lmc 0..7 (a port answers to 2^lmc LIDs)"));
          lines_[nkey + ".lmc"] = line_of(m);
        }
        if (const YAML::Node g = e["guid"]) {
          node.guid = number(g, sub(at, "guid"), 0, UINT64_MAX, "guid", "write a 64-bit number, e.g. 0x0002c90300001234");
          lines_[nkey + ".guid"] = line_of(g);
        }
        if (const YAML::Node g = e["port_guid"]) {
          node.port_guid =
              number(g, sub(at, "port_guid"), 0, UINT64_MAX, "port_guid", "write a 64-bit number, e.g. 0x0002c90300001235");
          lines_[nkey + ".port_guid"] = line_of(g);
        }
        if (const YAML::Node d = e["description"]) node.description = scalar(d, sub(at, "description"), "a description");
      }
      topo_.nodes.push_back(std::move(node));
    }
  }

  PortRef port_ref(const YAML::Node& n, const std::string& path) const {
    const std::string text = scalar(n, path, "a link end");
    // Split at the last '/': node names from discovered fabrics may themselves contain '/'.
    const size_t slash = text.rfind('/');
    if (slash != std::string::npos && all_digits(text.substr(slash + 1))) {
      const std::string name = text.substr(0, slash);
      const auto it = names_.find(name);
      if (it != names_.end()) {
        uint64_t port = 0;
        if (!parse_uint64_text(text.substr(slash + 1), port) || port > 0xFFFF)
          fail(path, n, "port number in '" + text + "' is too large", "use a port of " + name);
        return PortRef{it->second, static_cast<uint16_t>(port)};
      }
      if (names_.count(text) == 0)
        fail(path, n, "no node named " + name, "declare " + name + " under switches: or hosts:, or correct the name");
    }
    const auto it = names_.find(text);
    if (it == names_.end())
      fail(path, n, "no node named " + text, "declare " + text + " under switches: or hosts:, or correct the name");
    if (topo_.nodes[it->second].kind == NodeKind::switch_node)
      fail(path, n, "'" + text + "' is a switch and needs a port", "write " + text + "/<port>");
    return PortRef{it->second, 1};  // a host's one port
  }

  void read_links(const YAML::Node& list) {
    if (!list || list.IsNull()) return;
    if (!list.IsSequence()) fail("links", list, "links must be a list", "write one link per line: - [A/1, h1]");
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node e = list[i];
      const std::string at = item("links", i);
      Link link;
      link.cfg = defaults_;
      if (e.IsSequence()) {
        if (e.size() != 2) fail(at, e, "a link has two ends, this has " + std::to_string(e.size()), "write [A/1, B/2]");
      } else if (e.IsMap()) {
        check_keys(e, at, kLinkKeys);
        if (!e["a"] || !e["b"]) fail(at, e, "a link needs both ends a: and b:", "write {a: A/1, b: B/2}");
        read_link_settings(e, at, link.cfg);
        for (const std::string& k : kLinkSettingKeys)
          if (e[k]) lines_[sub(at, k)] = line_of(e[k]);
      } else {
        fail(at, e, "a link must be [a, b] or a mapping", "write [A/1, B/2] or {a: A/1, b: B/2, speed: QDR}");
      }
      const YAML::Node a = e.IsSequence() ? e[0] : e["a"];
      const YAML::Node b = e.IsSequence() ? e[1] : e["b"];
      lines_[at] = line_of(e);
      lines_[sub(at, "a")] = line_of(a);
      lines_[sub(at, "b")] = line_of(b);
      link.a = port_ref(a, sub(at, "a"));
      link.b = port_ref(b, sub(at, "b"));
      topo_.links.push_back(link);
    }
  }

  std::string source_, prefix_;
  Topology topo_;
  link::LinkConfig defaults_;
  std::map<std::string, uint32_t> names_;
  std::map<std::string, int> lines_;  // validate()'s item keys -> line
};

}  // namespace

Topology topology_from_yaml(const YAML::Node& root, const std::string& source, const std::string& key_prefix) {
  return Reader(source, key_prefix).read(root);
}

Topology parse_topology_yaml(const std::string& text, const std::string& source) {
  // Size, UTF-8, nesting and alias limits before yaml-cpp builds a tree (input_text.h).
  params::check_text(text, source);
  params::check_yaml_limits(text, source);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(source, "", e.mark.is_null() ? 0 : e.mark.line + 1, "YAML syntax: " + e.msg,
                      "correct the YAML at this line");
  }
  return topology_from_yaml(root, source);
}

Topology load_topology_yaml(const std::string& path) {
  return parse_topology_yaml(read_input_file(path, "topology file", "check the path"), path);
}

std::string topology_to_yaml(const Topology& t) {
  // The most common link settings become the defaults, so a file lists only exceptions.
  link::LinkConfig defaults;
  size_t best = 0;
  for (size_t i = 0; i < t.links.size(); ++i) {
    size_t count = 0;
    for (const Link& l : t.links) count += same_link_settings(l.cfg, t.links[i].cfg);
    if (count > best) {
      best = count;
      defaults = t.links[i].cfg;
    }
  }
  const link::LinkConfig factory;
  auto ref = [&t](const PortRef& p) { return t.nodes[p.node].name + "/" + std::to_string(p.port); };
  auto guid_text = [](uint64_t g) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(g));
    return std::string(buf);
  };
  auto settings = [&](YAML::Emitter& out, const link::LinkConfig& cfg, const link::LinkConfig& base, bool all) {
    if (all || cfg.width != base.width) out << YAML::Key << "width" << YAML::Value << link::width_name(cfg.width);
    if (all || cfg.speed != base.speed) out << YAML::Key << "speed" << YAML::Value << link::speed_name(cfg.speed);
    if (all || cfg.length_m != base.length_m)
      out << YAML::Key << "length_m" << YAML::Value << format_double(cfg.length_m);
    if (cfg.propagation_ns_per_m != base.propagation_ns_per_m)
      out << YAML::Key << "propagation_ns_per_m" << YAML::Value << format_double(cfg.propagation_ns_per_m);
  };

  YAML::Emitter out;
  out << YAML::Comment("ibvp topology (format: docs/topology.md)");
  out << YAML::BeginMap;
  out << YAML::Key << "defaults" << YAML::Value << YAML::Flow << YAML::BeginMap;
  settings(out, defaults, factory, true);
  out << YAML::EndMap;
  for (NodeKind kind : {NodeKind::switch_node, NodeKind::endpoint}) {
    const bool is_switch = kind == NodeKind::switch_node;
    out << YAML::Key << (is_switch ? "switches" : "hosts") << YAML::Value << YAML::BeginSeq;
    for (const Node& n : t.nodes) {
      if (n.kind != kind) continue;
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << n.name;
      if (is_switch || n.num_ports != 1) out << YAML::Key << "ports" << YAML::Value << n.num_ports;
      if (n.lid != 0) out << YAML::Key << "lid" << YAML::Value << n.lid;
      if (n.lmc != 0) out << YAML::Key << "lmc" << YAML::Value << static_cast<int>(n.lmc);
      if (n.guid != 0) out << YAML::Key << "guid" << YAML::Value << guid_text(n.guid);
      if (n.port_guid != 0) out << YAML::Key << "port_guid" << YAML::Value << guid_text(n.port_guid);
      if (!n.description.empty()) out << YAML::Key << "description" << YAML::Value << YAML::DoubleQuoted << n.description;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::Key << "links" << YAML::Value << YAML::BeginSeq;
  for (const Link& l : t.links) {
    if (same_link_settings(l.cfg, defaults)) {
      out << YAML::Flow << YAML::BeginSeq << ref(l.a) << ref(l.b) << YAML::EndSeq;
    } else {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "a" << YAML::Value << ref(l.a) << YAML::Key << "b"
          << YAML::Value << ref(l.b);
      settings(out, l.cfg, defaults, false);
      out << YAML::EndMap;
    }
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

void save_topology_yaml(const Topology& t, const std::string& path) {
  std::ofstream f(path);
  if (!f) throw ConfigError(path, "", 0, "cannot write the topology file", "check that the directory exists and is writable");
  f << topology_to_yaml(t);
  if (!f) throw ConfigError(path, "", 0, "writing the topology file failed", "check free space and permissions");
}

}  // namespace ibvp::topo
