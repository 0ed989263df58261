#include "platform/topology/ibnetdiscover.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "platform/params/config_error.h"
#include "platform/params/input_file.h"

namespace ibvp::topo {

namespace {

constexpr const char* kRecordFix =
    "a dump holds node records (switchguid=/caguid= line, then 'Switch N \"name\"' or 'Ca N \"name\"') and port "
    "lines '[port] \"peer\"[peer port]'; correct or remove this line";
constexpr const char* kRediscoverFix =
    "the two ends of a cable name each other in a dump taken from a quiet fabric: correct one of the lines, or rerun "
    "ibnetdiscover";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// A line quoted in a message: short, and without control characters that would garble it.
std::string excerpt(const std::string& line) {
  std::string out;
  for (char c : line) {
    if (out.size() >= 60) {
      out += "...";
      break;
    }
    out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  }
  return out;
}

std::string lower_x(std::string width) {
  for (char& c : width)
    if (c == 'X') c = 'x';
  return width;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Reads one line left to right. Every read checks its bounds, so a truncated or garbled line
// ends in a clear "expected ..." rather than a read past the end.
class Cursor {
 public:
  explicit Cursor(const std::string& s) : s_(s) {}
  void skip_space() {
    while (i_ < s_.size() && is_space(s_[i_])) ++i_;
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }
  bool eat(char c) {
    if (at_end() || s_[i_] != c) return false;
    ++i_;
    return true;
  }
  bool eat(const char* word) {
    if (s_.compare(i_, std::char_traits<char>::length(word), word) != 0) return false;
    i_ += std::char_traits<char>::length(word);
    return true;
  }
  // Decimal, at most `max`; false (position unchanged) if there are no digits or too many.
  bool number(uint64_t max, uint64_t& out) {
    size_t j = i_;
    uint64_t v = 0;
    while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) {
      v = v * 10 + static_cast<uint64_t>(s_[j] - '0');
      if (v > max) return false;
      ++j;
    }
    if (j == i_) return false;
    i_ = j;
    out = v;
    return true;
  }
  // Hexadecimal without 0x, 1..16 digits (a GUID is 64 bits).
  bool hex_number(uint64_t& out) {
    size_t j = i_;
    uint64_t v = 0;
    while (j < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[j]))) {
      if (j - i_ == 16) return false;
      const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s_[j])));
      v = v * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
      ++j;
    }
    if (j == i_) return false;
    i_ = j;
    out = v;
    return true;
  }
  // "text" -> text; false if there is no opening or no closing quote.
  bool quoted(std::string& out) {
    if (peek() != '"') return false;
    const size_t close = s_.find('"', i_ + 1);
    if (close == std::string::npos) return false;
    out = s_.substr(i_ + 1, close - i_ - 1);
    i_ = close + 1;
    return true;
  }
  std::string rest() const { return at_end() ? std::string() : s_.substr(i_); }

 private:
  const std::string& s_;
  size_t i_ = 0;
};

// What the comment after '#' says. ibnetdiscover writes "lid L lmc M" for the port (or
// switch port 0) the line describes, and "lid L" alone for the peer; the width and speed
// ("4xQDR") are the active values of the local port (PortInfo LinkWidthActive and
// LinkSpeedActive, IBA 14.2.5.6). Quoted node descriptions are skipped whole: they may hold
// '#' or the word "lid" ("Voltaire 4036 # 4036-8C5C").
struct CommentFacts {
  bool own_lid = false;
  uint16_t lid = 0;
  uint8_t lmc = 0;
  bool peer_lid_known = false;
  uint16_t peer_lid = 0;
  bool rate_known = false;
  link::Width width = link::Width::x4;
  link::Speed speed = link::Speed::sdr;
  // The first quoted text: on a header, the node's NodeDescription (IBA 14.2.5.2).
  std::string description;
};

// One `[p] "peer"[q]` line: half of a cable, as seen from the record it is in.
struct PortLine {
  size_t record = 0;
  uint16_t port = 0;
  uint64_t port_guid = 0;  // "(guid)" after the local port: a CA port's own GUID
  std::string peer;
  uint16_t peer_port = 0;
  uint64_t peer_port_guid = 0;  // "(guid)" after the peer's port, when the peer is a CA
  CommentFacts facts;
  int line = 0;
};

struct Record {
  std::string name;
  bool is_switch = false;
  uint16_t num_ports = 0;
  uint64_t guid = 0;  // from switchguid= / caguid=
  CommentFacts facts;  // of the header: a switch's port-0 LID and LMC
  int line = 0;
  std::vector<size_t> ports;  // indices into Parser::lines_
};

// A LID known from one line of the dump, to check that other lines agree.
struct LidNote {
  uint16_t lid = 0;
  int line = 0;
};

class Parser {
 public:
  Parser(std::string source, const NodeNameMap& names) : source_(std::move(source)), names_(names) {
    topo_.source = source_;
  }

  Topology parse(const std::string& text) {
    std::istringstream in(text);
    std::string raw;
    for (int n = 1; std::getline(in, raw); ++n) read_line(trim(raw), n);
    if (records_.empty())
      fail(0, "", "no Switch or Ca record in the file",
           "give an ibnetdiscover dump (ibnetdiscover > fabric.net), or a YAML topology to the YAML loader");
    index_records();
    pair_cables();
    build_nodes();
    build_links();
    // Rules shared by every loader live in Topology::validate(); its errors name nodes and
    // links, which are mapped back to the lines they came from.
    try {
      assign_lids(topo_);
      topo_.index();
      topo_.validate();
    } catch (const ConfigError& e) {
      throw ConfigError(e.file(), e.key(), line_for(e.key()), e.problem(), e.fix());
    }
    return std::move(topo_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& item, const std::string& problem, const std::string& fix) const {
    throw ConfigError(source_, item, line, problem, fix);
  }

  static std::string port_item(const std::string& node, uint16_t port) {
    return node + "[" + std::to_string(port) + "]";
  }

  // ---- reading lines ----

  void read_line(const std::string& line, int n) {
    if (line.empty() || line[0] == '#') return;
    if (line[0] == '[') {
      if (records_.empty())
        fail(n, "", "port line '" + excerpt(line) + "' comes before any Switch or Ca header",
             "put the port lines of a node after its 'Switch N \"name\"' or 'Ca N \"name\"' line");
      read_port_line(line, n);
      return;
    }
    // Node identity lines. Vendor, device and system image GUIDs do not change what the
    // fabric does, so they are read past.
    if (starts_with(line, "vendid=") || starts_with(line, "devid=") || starts_with(line, "sysimgguid=")) {
      in_body_ = true;
      return;
    }
    if (starts_with(line, "switchguid=") || starts_with(line, "caguid=")) {
      in_body_ = true;
      read_guid_line(line, n);
      return;
    }
    if (starts_with(line, "rtguid=")) refuse_router(n);
    // Grouped output (ibnetdiscover -g) adds chassis headings around the records.
    if (starts_with(line, "Chassis ") || starts_with(line, "Non-Chassis Nodes") || starts_with(line, "Hostname:"))
      return;
    std::string word;
    size_t w = 0;
    while (w < line.size() && std::isalpha(static_cast<unsigned char>(line[w]))) word += line[w++];
    if (w < line.size() && is_space(line[w])) {
      if (word == "Rt") refuse_router(n);
      // "Hca" is what ibsim's .net files call a CA; they otherwise follow this format.
      if (word == "Switch" || word == "Ca" || word == "Hca") {
        in_body_ = true;
        read_header(line, n, word == "Switch");
        return;
      }
    }
    // Text before the first record is a preamble: some dumps begin with messages of the
    // discovery run (real_ibtopotool_3.net starts with a query_smp timeout). Inside the
    // records, an unknown line means the file is damaged or not a dump.
    if (!in_body_) return;
    fail(n, "", "line not understood: '" + excerpt(line) + "'", kRecordFix);
  }

  [[noreturn]] void refuse_router(int n) const {
    fail(n, "", "the dump holds an IB router (Rt record); ibvp models one subnet, and a router joins subnets",
         "remove the router's record (rtguid= and Rt lines with its port lines) and the switch port lines that name "
         "it");
  }

  void read_guid_line(const std::string& line, int n) {
    Cursor c(line);
    c.eat(starts_with(line, "switchguid=") ? "switchguid=" : "caguid=");
    uint64_t guid = 0;
    if (!(c.eat("0x") || c.eat("0X")) || !c.hex_number(guid))
      fail(n, "", "'" + excerpt(line) + "' has no hexadecimal GUID",
           "write the node GUID as 0x followed by up to 16 hex digits, e.g. caguid=0x2c90300080e84");
    // The "(port GUID)" that may follow belongs to switch port 0 and is not needed.
    pending_guid_ = guid;
    pending_guid_line_ = n;
  }

  void read_header(const std::string& line, int n, bool is_switch) {
    Record r;
    r.is_switch = is_switch;
    r.line = n;
    Cursor c(line);
    while (std::isalpha(static_cast<unsigned char>(c.peek()))) c.eat(c.peek());
    c.skip_space();
    const char* kind = is_switch ? "Switch" : "Ca";
    uint64_t ports = 0;
    if (!c.number(0xFFFF, ports))
      fail(n, "", std::string(kind) + " header '" + excerpt(line) + "' has no port count",
           std::string("write ") + kind + " <number of ports> \"<name>\"");
    c.skip_space();
    if (!c.quoted(r.name))
      fail(n, "",
           std::string(kind) + " header '" + excerpt(line) + "' has no quoted name (or its closing quote is missing)",
           std::string("write ") + kind + " " + std::to_string(ports) + " \"<name>\"");
    const std::string item = "nodes." + r.name;
    if (r.name.empty()) fail(n, "", "the node name is empty", "give the node a name between the quotes");
    if (ports < 1 || ports > Topology::kMaxPorts)
      fail(n, item, std::string(kind) + " " + r.name + " has " + std::to_string(ports) + " ports",
           "use 1.." + std::to_string(Topology::kMaxPorts) + " ports (port numbers are 8 bits and 255 means no route)");
    r.num_ports = static_cast<uint16_t>(ports);
    read_comment(c, n, item, r.facts);
    // The id line, when there is one, comes just before its header (with vendid=, devid=,
    // sysimgguid= between): it belongs to this node if no other header came since.
    if (pending_guid_line_ > 0) r.guid = pending_guid_;
    pending_guid_line_ = 0;
    pending_guid_ = 0;
    records_.push_back(std::move(r));
  }

  void read_port_line(const std::string& line, int n) {
    PortLine p;
    p.record = records_.size() - 1;
    p.line = n;
    const Record& r = records_.back();
    Cursor c(line);
    uint64_t v = 0;
    c.eat('[');
    if (!c.number(0xFFFF, v) || !c.eat(']'))
      fail(n, "nodes." + r.name, "port line '" + excerpt(line) + "' does not start with [<port number>]", kRecordFix);
    p.port = static_cast<uint16_t>(v);
    const std::string item = port_item(r.name, p.port);
    skip_ext(c, n, item);
    c.skip_space();
    if (c.eat('(')) {
      if (!c.hex_number(p.port_guid) || !c.eat(')'))
        fail(n, item, "the port GUID in '" + excerpt(line) + "' is not (<hex digits>)", kRecordFix);
      c.skip_space();
    }
    if (!c.quoted(p.peer))
      fail(n, item,
           "port " + std::to_string(p.port) + " of " + r.name + " names no peer in quotes (or its closing quote is missing)",
           "write [" + std::to_string(p.port) + "] \"<peer name>\"[<peer port>]");
    if (!c.eat('[') || !c.number(0xFFFF, v) || !c.eat(']'))
      fail(n, item, "the peer \"" + p.peer + "\" has no [<port number>] after it",
           "write [" + std::to_string(p.port) + "] \"" + p.peer + "\"[<peer port>]");
    p.peer_port = static_cast<uint16_t>(v);
    skip_ext(c, n, item);
    c.skip_space();
    if (c.eat('(')) {
      if (!c.hex_number(p.peer_port_guid) || !c.eat(')'))
        fail(n, item, "the peer's port GUID in '" + excerpt(line) + "' is not (<hex digits>)", kRecordFix);
    }
    read_comment(c, n, item, p.facts);
    records_.back().ports.push_back(lines_.size());
    lines_.push_back(std::move(p));
  }

  // "[ext 3]": the external (front panel) port number in grouped output; not needed.
  void skip_ext(Cursor& c, int n, const std::string& item) const {
    if (!c.eat("[ext")) return;
    c.skip_space();
    uint64_t v = 0;
    if (!c.number(0xFFFF, v) || !c.eat(']')) fail(n, item, "'[ext' is not followed by <number>]", kRecordFix);
  }

  void read_comment(Cursor& c, int n, const std::string& item, CommentFacts& f) const {
    c.skip_space();
    if (c.at_end()) return;
    if (!c.eat('#'))
      fail(n, item, "unexpected text '" + excerpt(c.rest()) + "'",
           "end the line after the port (or name), or start a comment with #");
    // Split into words; a quoted description is one word and is not looked into.
    std::vector<std::string> words;
    const std::string text = c.rest();
    for (size_t i = 0; i < text.size();) {
      if (is_space(text[i])) {
        ++i;
      } else if (text[i] == '"') {
        const size_t close = text.find('"', i + 1);
        if (words.empty() && f.description.empty() && close != std::string::npos)
          f.description = text.substr(i + 1, close - i - 1);
        words.emplace_back("\"");  // stands for a description
        // An unclosed quote (a cut line) hides the rest of the comment; what it held is then
        // taken from the cable's other end, or left to assign_lids() and the defaults.
        i = close == std::string::npos ? text.size() : close + 1;
      } else {
        size_t j = i;
        while (j < text.size() && !is_space(text[j]) && text[j] != '"') ++j;
        words.push_back(text.substr(i, j - i));
        i = j;
      }
    }
    auto lid_number = [&](const std::string& word, const char* what, uint64_t max) {
      Cursor d(word);
      uint64_t v = 0;
      if (!d.number(max, v) || !d.at_end())
        fail(n, item,
             std::string(what) + " in the comment is '" + excerpt(word) + "', not a number 0.." + std::to_string(max),
             "correct the number, or rerun ibnetdiscover");
      return v;
    };
    for (size_t i = 0; i < words.size(); ++i) {
      if (words[i] == "lid" && i + 1 < words.size()) {
        const uint16_t lid = static_cast<uint16_t>(lid_number(words[i + 1], "lid", 0xFFFF));
        if (i + 3 < words.size() && words[i + 2] == "lmc") {
          f.own_lid = true;
          f.lid = lid;
          f.lmc = static_cast<uint8_t>(lid_number(words[i + 3], "lmc", Topology::kMaxLmc));
          i += 3;
        } else {
          f.peer_lid_known = true;
          f.peer_lid = lid;
          i += 1;
        }
        continue;
      }
      // "4xQDR": lanes, 'x', speed name. "4x???" (a speed this ibnetdiscover could not name)
      // or a name ibvp does not know leaves the rate unknown.
      const std::string& w = words[i];
      const size_t x = w.find_first_of("xX");
      if (x == std::string::npos || x == 0) continue;
      link::Width width = link::Width::x4;
      link::Speed speed = link::Speed::sdr;
      if (link::parse_width(w.substr(0, x + 1), width) && link::parse_speed(w.substr(x + 1), speed)) {
        f.rate_known = true;
        f.width = width;
        f.speed = speed;
      }
    }
  }

  // ---- checking records against each other ----

  void index_records() {
    for (size_t r = 0; r < records_.size(); ++r) {
      auto [it, fresh] = by_name_.emplace(records_[r].name, r);
      if (!fresh)
        fail(records_[r].line, "nodes." + records_[r].name,
             "a second record for " + records_[r].name + " (the first is on line " +
                 std::to_string(records_[it->second].line) + ")",
             "keep one record per node; node names identify nodes in links, flows and reports");
    }
    for (size_t i = 0; i < lines_.size(); ++i) {
      const PortLine& p = lines_[i];
      const Record& r = records_[p.record];
      const std::string item = port_item(r.name, p.port);
      if (p.port == 0)
        fail(p.line, item, "port 0 of " + r.name + " takes no cable (switch port 0 is the internal management port)",
             "number cable ports from 1");
      if (p.port > r.num_ports)
        fail(p.line, item,
             "port " + std::to_string(p.port) + " of " + r.name + " is beyond its " + std::to_string(r.num_ports) +
                 " port" + (r.num_ports == 1 ? "" : "s") + " (line " + std::to_string(r.line) + ")",
             "use a port 1.." + std::to_string(r.num_ports) + ", or correct the port count in the header");
      auto [it, fresh] = half_.emplace(std::make_pair(p.record, p.port), i);
      if (!fresh)
        fail(p.line, item, "port " + std::to_string(p.port) + " of " + r.name + " is listed twice (first on line " +
                               std::to_string(lines_[it->second].line) + ")",
             "a port takes one cable: keep one of the lines");
      const auto peer = by_name_.find(p.peer);
      if (peer == by_name_.end())
        fail(p.line, item, "the peer \"" + p.peer + "\" has no record in the file",
             "the dump is incomplete: rerun ibnetdiscover, or remove this line");
      const Record& q = records_[peer->second];
      if (p.peer_port == 0)
        fail(p.line, item, "the peer port of " + r.name + "[" + std::to_string(p.port) + "] is 0, which takes no cable",
             "correct the peer port; cable ports are numbered from 1");
      if (p.peer_port > q.num_ports)
        fail(p.line, item,
             "peer port " + std::to_string(p.peer_port) + " of " + q.name + " is beyond its " +
                 std::to_string(q.num_ports) + " port" + (q.num_ports == 1 ? "" : "s") + " (line " +
                 std::to_string(q.line) + ")",
             "correct the peer port, or the port count in " + q.name + "'s header");
    }
  }

  // Each cable is listed from both ends; both lines must name each other.
  void pair_cables() {
    std::vector<bool> done(lines_.size(), false);
    for (size_t i = 0; i < lines_.size(); ++i) {
      if (done[i]) continue;
      const PortLine& p = lines_[i];
      const Record& r = records_[p.record];
      const size_t peer_record = by_name_.at(p.peer);
      const auto other = half_.find(std::make_pair(peer_record, p.peer_port));
      if (other == half_.end())
        fail(p.line, port_item(r.name, p.port),
             "this line cables " + port_item(r.name, p.port) + " to " + port_item(p.peer, p.peer_port) + ", but " +
                 p.peer + "'s record (line " + std::to_string(records_[peer_record].line) + ") does not list port " +
                 std::to_string(p.peer_port),
             kRediscoverFix);
      const PortLine& q = lines_[other->second];
      if (q.peer != r.name || q.peer_port != p.port)
        fail(p.line, port_item(r.name, p.port),
             "this line cables " + port_item(r.name, p.port) + " to " + port_item(p.peer, p.peer_port) + ", but line " +
                 std::to_string(q.line) + " cables " + port_item(p.peer, p.peer_port) + " to " +
                 port_item(q.peer, q.peer_port),
             kRediscoverFix);
      done[i] = done[other->second] = true;
      // A port cabled to itself (a loopback plug) joins nothing to anything: left out. A
      // cable between two ports of one switch is kept (validate() allows it; routing
      // ignores it).
      if (other->second == i) continue;
      cables_.emplace_back(i, other->second);
    }
  }

  // ---- building the topology ----

  void build_nodes() {
    // An ibvp endpoint is one CA port (it owns one LID and one cable), so a CA becomes one
    // endpoint per cabled port: named as the CA when only one port is cabled (the usual
    // host), "<name>/p<port>" for each when several are. A CA port GUID is a port's own
    // identity (IBA 4.1.1), so split endpoints take their port GUIDs; a single one takes
    // the caguid. A CA with no cabled port could carry no traffic and is left out.
    std::vector<bool> cabled(lines_.size(), false);
    for (const auto& [a, b] : cables_) cabled[a] = cabled[b] = true;
    for (bool want_switch : {true, false}) {
      for (size_t r = 0; r < records_.size(); ++r) {
        const Record& rec = records_[r];
        if (rec.is_switch != want_switch) continue;
        if (rec.is_switch) {
          Node node;
          node.name = mapped_name(rec);
          node.description = rec.facts.description;
          node.kind = NodeKind::switch_node;
          node.num_ports = rec.num_ports;
          node.guid = rec.guid;
          if (rec.facts.own_lid) node.lmc = rec.facts.lmc;
          for (uint16_t port = 1; port <= rec.num_ports; ++port) place_[{r, port}] = {node_count(), port};
          add_node(std::move(node), rec.line);
          if (rec.facts.own_lid) note_lid(node_count() - 1, rec.facts.lid, rec.line);
          continue;
        }
        std::vector<size_t> ports;
        for (size_t i : rec.ports)
          if (cabled[i]) ports.push_back(i);
        std::sort(ports.begin(), ports.end(), [this](size_t x, size_t y) { return lines_[x].port < lines_[y].port; });
        for (size_t i : ports) {
          const PortLine& p = lines_[i];
          Node node;
          node.kind = NodeKind::endpoint;
          node.num_ports = 1;
          node.name = ports.size() == 1 ? mapped_name(rec) : mapped_name(rec) + "/p" + std::to_string(p.port);
          node.guid = ports.size() == 1 ? rec.guid : port_guid(i);
          node.port_guid = port_guid(i);
          node.description = rec.facts.description;
          if (p.facts.own_lid) node.lmc = p.facts.lmc;
          place_[{r, p.port}] = {node_count(), 1};
          add_node(std::move(node), p.line);
          if (p.facts.own_lid) note_lid(node_count() - 1, p.facts.lid, p.line);
        }
      }
    }
  }

  uint32_t node_count() const { return static_cast<uint32_t>(topo_.nodes.size()); }

  // A node-name map (ibnetdiscover --node-name-map) renames nodes by their node GUID, as
  // infiniband-diags replace a NodeDescription with the map's name.
  std::string mapped_name(const Record& rec) const {
    if (rec.guid == 0) return rec.name;
    const auto it = names_.find(rec.guid);
    return it == names_.end() ? rec.name : it->second;
  }

  void add_node(Node node, int line) {
    lines_by_key_["nodes." + node.name] = line;
    topo_.nodes.push_back(std::move(node));
  }

  // A CA port's GUID: in parentheses after its own port number, or after it where the peer
  // lists it; 0 (none) when the dump gives neither.
  uint64_t port_guid(size_t i) const {
    const PortLine& p = lines_[i];
    if (p.port_guid != 0) return p.port_guid;
    const auto other = half_.find(std::make_pair(by_name_.at(p.peer), p.peer_port));
    return other == half_.end() ? 0 : lines_[other->second].peer_port_guid;
  }

  // The same LID may be stated on several lines (a node's own line, and every line that
  // names it as a peer); LID 0 means "not assigned" (no SM ran) and says nothing.
  void note_lid(uint32_t node, uint16_t lid, int line) {
    if (lid == 0) return;
    LidNote& known = lids_[node];
    if (known.lid == 0) {
      known = {lid, line};
      topo_.nodes[node].lid = lid;
      return;
    }
    if (known.lid != lid)
      fail(line, "nodes." + topo_.nodes[node].name,
           "LID " + std::to_string(lid) + " of " + topo_.nodes[node].name + " here disagrees with LID " +
               std::to_string(known.lid) + " on line " + std::to_string(known.line),
           "LIDs change when the SM reassigns them: correct one of the lines, or rerun ibnetdiscover");
  }

  void build_links() {
    for (const auto& [a, b] : cables_) {
      const PortLine& p = lines_[a];
      const PortLine& q = lines_[b];
      Link link;
      link.a = place_.at({p.record, p.port});
      link.b = place_.at({q.record, q.port});
      // Both ends of a trained link report one width and speed. When a dump disagrees (a
      // stale record), the lower width and the lower speed are what both ends can carry.
      // Neither end known: the LinkConfig defaults (4X SDR).
      if (p.facts.rate_known && q.facts.rate_known) {
        link.cfg.width = std::min(p.facts.width, q.facts.width);
        link.cfg.speed = std::min(p.facts.speed, q.facts.speed);
      } else if (p.facts.rate_known || q.facts.rate_known) {
        const CommentFacts& f = p.facts.rate_known ? p.facts : q.facts;
        link.cfg.width = f.width;
        link.cfg.speed = f.speed;
      }
      const std::string key = "links[" + std::to_string(topo_.links.size()) + "]";
      lines_by_key_[key] = p.line;
      lines_by_key_[key + ".a"] = p.line;
      lines_by_key_[key + ".b"] = q.line;
      topo_.links.push_back(link);
      // The peer LID on each line belongs to the node at the other end.
      if (p.facts.peer_lid_known) note_lid(link.b.node, p.facts.peer_lid, p.line);
      if (q.facts.peer_lid_known) note_lid(link.a.node, q.facts.peer_lid, q.line);
    }
  }

  int line_for(std::string key) const {
    // "nodes.sw1.lid" falls back to "nodes.sw1"; names may contain dots, so cut from the end.
    for (;;) {
      const auto it = lines_by_key_.find(key);
      if (it != lines_by_key_.end()) return it->second;
      const size_t dot = key.rfind('.');
      if (dot == std::string::npos) return 0;
      key.resize(dot);
    }
  }

  std::string source_;
  const NodeNameMap& names_;
  std::vector<Record> records_;
  std::vector<PortLine> lines_;
  std::map<std::string, size_t> by_name_;
  std::map<std::pair<size_t, uint16_t>, size_t> half_;  // (record, port) -> its port line
  std::vector<std::pair<size_t, size_t>> cables_;       // the two port lines of each cable
  std::map<std::pair<size_t, uint16_t>, PortRef> place_;  // (record, port) -> ibvp node and port
  std::map<uint32_t, LidNote> lids_;
  std::map<std::string, int> lines_by_key_;
  uint64_t pending_guid_ = 0;
  int pending_guid_line_ = 0;
  bool in_body_ = false;
  Topology topo_;
};

void check_quotable(const Topology& t, const Node& n) {
  for (char c : n.name)
    if (c == '"' || c == '\n' || c == '\r')
      throw ConfigError(t.source, "nodes." + n.name, 0,
                        "node name " + excerpt(n.name) +
                            " holds a quote or a line break, which the ibnetdiscover format cannot carry",
                        "rename the node");
}

}  // namespace

static std::string read_file(const std::string& path, const char* what) {
  return read_input_file(path, what, "check the path");
}

Topology parse_ibnetdiscover(const std::string& text, const std::string& source_name, const NodeNameMap& names) {
  return Parser(source_name, names).parse(text);
}

Topology load_ibnetdiscover(const std::string& path, const NodeNameMap& names) {
  return parse_ibnetdiscover(read_file(path, "topology file"), path, names);
}

NodeNameMap parse_node_name_map(const std::string& text, const std::string& source_name) {
  NodeNameMap out;
  std::map<uint64_t, int> first_line;
  std::istringstream in(text);
  std::string raw;
  constexpr const char* kFix = "write one node per line: 0x<node GUID> \"<name>\" (a # starts a comment)";
  for (int n = 1; std::getline(in, raw); ++n) {
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    Cursor c(line);
    uint64_t guid = 0;
    const bool hex_guid = c.eat("0x") || c.eat("0X");
    if (!(hex_guid ? c.hex_number(guid) : c.number(UINT64_MAX / 10, guid)) || !(c.at_end() || is_space(c.peek()) || c.peek() == '#'))
      throw ConfigError(source_name, "", n, "'" + excerpt(line) + "' does not start with a node GUID", kFix);
    // The name: the first run of text without '"' or '#', as infiniband-diags read it.
    std::string rest = c.rest();
    const size_t b = rest.find_first_not_of(" \t\"#");
    std::string name;
    if (b != std::string::npos && rest.find('#') >= b) {
      const size_t e = rest.find_first_of("\"#", b);
      name = trim(rest.substr(b, e == std::string::npos ? std::string::npos : e - b));
    }
    if (name.empty())
      throw ConfigError(source_name, "", n, "node GUID 0x" + hex(guid) + " has no name", kFix);
    auto [it, fresh] = first_line.emplace(guid, n);
    if (!fresh)
      throw ConfigError(source_name, "", n,
                        "node GUID 0x" + hex(guid) + " is named a second time (first on line " +
                            std::to_string(it->second) + ")",
                        "keep one line per GUID");
    out.emplace(guid, name);
  }
  return out;
}

NodeNameMap load_node_name_map(const std::string& path) {
  return parse_node_name_map(read_file(path, "node-name map"), path);
}

std::string write_node_name_map(const Topology& t) {
  for (const Node& n : t.nodes) check_quotable(t, n);
  std::ostringstream out;
  out << "# node-name map (ibnetdiscover --node-name-map) written by ibvp from " << t.source << "\n";
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    // Split CA ports ("<name>/p<port>") carry their port GUID as node GUID (see the loader),
    // so each has its own line.
    out << "0x" << std::setw(16) << std::setfill('0') << hex(node_guid(t, n)) << std::setfill(' ') << " \""
        << t.nodes[n].name << "\"\n";
  }
  return out.str();
}

std::string write_ibnetdiscover(const Topology& t, const IbnetdiscoverWriteOptions& opt) {
  for (const Node& n : t.nodes) check_quotable(t, n);
  // The quoted id of a node: its name, or as ibnetdiscover prints ids (S-/H- and the node
  // GUID in 16 hex digits), the name then going into the description.
  auto id = [&](uint32_t n) {
    if (!opt.guid_names) return t.nodes[n].name;
    char buf[24];
    std::snprintf(buf, sizeof buf, "%s-%016llx", t.nodes[n].kind == NodeKind::switch_node ? "S" : "H",
                  static_cast<unsigned long long>(node_guid(t, n)));
    return std::string(buf);
  };
  auto desc = [&](uint32_t n) { return opt.guid_names ? t.nodes[n].name : node_description(t.nodes[n]); };
  for (uint32_t n = 0; n < t.nodes.size(); ++n)
    for (char c : desc(n))
      if (c == '"' || c == '\n' || c == '\r')
        throw ConfigError(t.source, "nodes." + t.nodes[n].name, 0,
                          "the description of " + excerpt(t.nodes[n].name) +
                              " holds a quote or a line break, which the ibnetdiscover format cannot carry",
                          "change the description");
  // Cables at each port, found here rather than through t.index() so that an unindexed
  // topology writes too.
  struct End {
    PortRef peer;
    const link::LinkConfig* cfg;
  };
  std::vector<std::map<uint16_t, End>> at(t.nodes.size());
  for (const Link& l : t.links) {
    if (l.a.node >= t.nodes.size() || l.b.node >= t.nodes.size()) continue;
    at[l.a.node].emplace(l.a.port, End{l.b, &l.cfg});
    at[l.b.node].emplace(l.b.port, End{l.a, &l.cfg});
  }
  auto rate = [](const link::LinkConfig& cfg) {
    return lower_x(link::width_name(cfg.width)) + link::speed_name(cfg.speed);
  };
  std::ostringstream out;
  out << "#\n# Topology file: written by ibvp from " << t.source << "\n#\n";
  // Switches first, then endpoints, as ibnetdiscover orders them (and as the reader gives
  // them back).
  for (uint32_t self = 0; self < t.nodes.size(); ++self) {
    const Node& n = t.nodes[self];
    if (n.kind != NodeKind::switch_node) continue;
    out << "\n";
    const uint64_t guid = node_guid(t, self);
    out << "switchguid=0x" << hex(guid) << "(" << hex(guid) << ")\n";
    out << "Switch\t" << n.num_ports << " \"" << id(self) << "\"\t\t# \"" << desc(self) << "\" base port 0 lid "
        << n.lid << " lmc " << int(n.lmc) << "\n";
    for (const auto& [port, end] : at[self]) {
      const uint32_t p = end.peer.node;
      out << "[" << port << "]\t\"" << id(p) << "\"[" << end.peer.port << "]";
      if (t.nodes[p].kind == NodeKind::endpoint) out << "(" << hex(port_guid(t, p)) << ") ";
      out << "\t\t# \"" << desc(p) << "\" lid " << t.nodes[p].lid << " " << rate(*end.cfg) << "\n";
    }
  }
  for (uint32_t self = 0; self < t.nodes.size(); ++self) {
    const Node& n = t.nodes[self];
    if (n.kind != NodeKind::endpoint) continue;
    out << "\n";
    out << "caguid=0x" << hex(node_guid(t, self)) << "\n";
    out << "Ca\t1 \"" << id(self) << "\"\t\t# \"" << desc(self) << "\"\n";
    // An endpoint is one CA port; only its port 1 takes a cable (validate() says so).
    for (const auto& [port, end] : at[self]) {
      if (port != 1) continue;
      const uint32_t p = end.peer.node;
      out << "[1](" << hex(port_guid(t, self)) << ") \t\"" << id(p) << "\"[" << end.peer.port << "]";
      if (t.nodes[p].kind == NodeKind::endpoint) out << " (" << hex(port_guid(t, p)) << ") ";
      out << "\t\t# lid " << n.lid << " lmc " << int(n.lmc) << " \"" << desc(p) << "\" lid " << t.nodes[p].lid << " "
          << rate(*end.cfg) << "\n";
    }
  }
  return out.str();
}

bool looks_like_ibnetdiscover(const std::string& text) {
  std::istringstream in(text);
  std::string raw;
  // A dump's first record begins within a few lines of the top; a preamble of messages is
  // short. YAML never starts a line with these words followed by '=' or a count and a quote.
  for (int n = 0; n < 200 && std::getline(in, raw); ++n) {
    const std::string line = trim(raw);
    for (const char* id : {"switchguid=0x", "caguid=0x", "rtguid=0x", "sysimgguid=0x", "vendid=0x"})
      if (starts_with(line, id)) return true;
    Cursor c(line);
    if (!(c.eat("Switch") || c.eat("Ca") || c.eat("Hca") || c.eat("Rt"))) continue;
    if (!is_space(c.peek())) continue;
    c.skip_space();
    uint64_t ports = 0;
    if (!c.number(0xFFFF, ports)) continue;
    c.skip_space();
    if (c.peek() == '"') return true;
  }
  return false;
}

}  // namespace ibvp::topo
