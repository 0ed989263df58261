#include "platform/sm/qos_policy.h"

#include <algorithm>
#include <stdexcept>

#include "models/ib/headers.h"
#include "platform/params/config_error.h"

namespace ibvp::sm {

namespace {

constexpr size_t kVlArbTableEntries = 64;  // IBA 7.6.9: up to 64 entries per priority table
constexpr uint32_t kMaxWeight = 255;       // seed 002 Sec. 2: "in the range from 0 to 255"
constexpr uint32_t kMaxDataVl = 14;        // VL15 is management only and never in these tables

const char* const kFields[] = {"max_vls", "high_limit", "vlarb_high", "vlarb_low", "sl2vl"};

[[noreturn]] void fail(const QosOptionSource& at, const std::string& option, const std::string& problem,
                       const std::string& fix) {
  throw ConfigError(at.file, at.key.empty() ? option : at.key, at.line, problem, fix);
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t from = 0;
  for (;;) {
    const size_t at = s.find(sep, from);
    out.push_back(trim(s.substr(from, at == std::string::npos ? std::string::npos : at - from)));
    if (at == std::string::npos) return out;
    from = at + 1;
  }
}

// Decimal or 0x-hexadecimal, as OpenSM's strtoul(..., 0), but the whole text must be the
// number. Values above 0xFFFF are refused early (no option takes one), so no overflow.
bool parse_number(const std::string& text, uint32_t& out) {
  std::string s = trim(text);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s = s.substr(2);
  }
  if (s.empty()) return false;
  uint32_t v = 0;
  for (char c : s) {
    uint32_t digit;
    if (c >= '0' && c <= '9') digit = static_cast<uint32_t>(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f') digit = static_cast<uint32_t>(c - 'a' + 10);
    else if (base == 16 && c >= 'A' && c <= 'F') digit = static_cast<uint32_t>(c - 'A' + 10);
    else return false;
    v = v * static_cast<uint32_t>(base) + digit;
    if (v > 0xFFFF) return false;
  }
  out = v;
  return true;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string entry_name(size_t i, const std::string& text) {
  return "entry " + std::to_string(i + 1) + " " + quoted(text);
}

std::string vl_range(uint8_t vls) { return "VL0..VL" + std::to_string(vls - 1); }

}  // namespace

const char* qos_prefix(QosPortKind kind) {
  switch (kind) {
    case QosPortKind::ca: return "qos_ca_";
    case QosPortKind::swe: return "qos_swe_";
    case QosPortKind::sw0: return "qos_sw0_";
    case QosPortKind::rtr: return "qos_rtr_";
  }
  return "qos_";
}

sw::Sl2VlTable parse_qos_sl2vl(const std::string& value, const QosOptionSource& at, const std::string& option) {
  const std::vector<std::string> items = split(value, ',');
  // IBA 7.6.6: the SLtoVLMappingTable has one VL for each of the 16 SLs.
  if (items.size() != 16)
    fail(at, option,
         "has " + std::to_string(trim(value).empty() ? 0 : items.size()) +
             " value(s); the SL to VL map needs one VL for each of the 16 SLs",
         "write 16 comma-separated VLs, entry i being the VL of SL i, e.g. 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7");
  sw::Sl2VlTable t{};
  for (size_t sl = 0; sl < items.size(); ++sl) {
    uint32_t vl = 0;
    if (!parse_number(items[sl], vl))
      fail(at, option, entry_name(sl, items[sl]) + " (SL " + std::to_string(sl) + ") is not a VL number",
           "write a data VL 0..14 for every SL");
    if (vl == ib::kVl15)
      fail(at, option,
           entry_name(sl, items[sl]) + " maps SL " + std::to_string(sl) +
               " to VL15; OpenSM reads that as 'drop this SL', which this simulator does not model "
               "(VL15 is the management lane)",
           "map SL " + std::to_string(sl) + " to a data VL 0..14 and send no flow on it");
    if (vl > kMaxDataVl)
      fail(at, option, entry_name(sl, items[sl]) + " maps SL " + std::to_string(sl) + " to VL " +
                           std::to_string(vl) + ", but IBA has VLs 0..15 only",
           "map SL " + std::to_string(sl) + " to a data VL 0..14");
    t[sl] = static_cast<uint8_t>(vl);
  }
  return t;
}

std::vector<link::VlArbEntry> parse_qos_vlarb(const std::string& value, const QosOptionSource& at,
                                              const std::string& option) {
  std::vector<link::VlArbEntry> table;
  if (trim(value).empty()) return table;  // an empty table: every VL of it is served elsewhere
  const std::vector<std::string> items = split(value, ',');
  // seed 002 Sec. 2: "Up to 64 table entries are cycled through".
  if (items.size() > kVlArbTableEntries)
    fail(at, option,
         "has " + std::to_string(items.size()) + " entries; a VL arbitration table holds at most 64 (IBA 7.6.9)",
         "remove entries until 64 or fewer remain (repeat a VL with a larger weight instead)");
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& item = items[i];
    if (item.empty())
      fail(at, option, "entry " + std::to_string(i + 1) + " is empty",
           "remove the extra comma; entries are VL:weight separated by single commas");
    const size_t colon = item.find(':');
    if (colon == std::string::npos || item.find(':', colon + 1) != std::string::npos)
      fail(at, option, entry_name(i, item) + " is not of the form VL:weight",
           "write each entry as VL:weight, e.g. 1:64");
    uint32_t vl = 0, weight = 0;
    const std::string vl_text = trim(item.substr(0, colon)), weight_text = trim(item.substr(colon + 1));
    if (!parse_number(vl_text, vl))
      fail(at, option, entry_name(i, item) + ": VL " + quoted(vl_text) + " is not a number",
           "write a data VL 0..14 before the colon");
    if (!parse_number(weight_text, weight))
      fail(at, option, entry_name(i, item) + ": weight " + quoted(weight_text) + " is not a number",
           "write a weight 0..255 (64-byte units) after the colon");
    // IBA 7.6.9: VL15 is above every data VL and has no entry in these tables.
    if (vl > kMaxDataVl)
      fail(at, option,
           entry_name(i, item) + " names VL " + std::to_string(vl) +
               "; the arbitration tables order data VLs 0..14 only (VL15 always goes first)",
           "use a data VL 0..14");
    // seed 002 Sec. 2: the weight "must be in the range from 0 to 255".
    if (weight > kMaxWeight)
      fail(at, option, entry_name(i, item) + " has weight " + std::to_string(weight) + ", above 255",
           "use a weight 0..255 in 64-byte units (0 disables the entry); repeat the VL for more");
    table.push_back({static_cast<uint8_t>(vl), static_cast<uint8_t>(weight)});
  }
  return table;
}

uint8_t parse_qos_high_limit(const std::string& value, const QosOptionSource& at, const std::string& option) {
  uint32_t v = 0;
  // seed 002 Sec. 2: LimitOfHighPriority x 4096 bytes may go before a low-priority packet;
  // IBA 7.6.9 makes 255 unbounded and 0 one packet.
  if (!parse_number(value, v) || v > 255)
    fail(at, option, quoted(trim(value)) + " is not a LimitOfHighPriority 0..255",
         "write 0..255 (units of 4096 bytes; 0 lets one high-priority packet through, 255 is unbounded)");
  return static_cast<uint8_t>(v);
}

uint8_t parse_qos_max_vls(const std::string& value, const QosOptionSource& at, const std::string& option) {
  uint32_t v = 0;
  if (!parse_number(value, v) || v < 1 || v > 15)
    fail(at, option, quoted(trim(value)) + " is not a number of data VLs 1..15",
         "write 1..15 (IBA ports operate at most 15 data VLs)");
  return static_cast<uint8_t>(v);
}

namespace {

// Splits "qos_swe_vlarb_high" into ("qos_swe_", "vlarb_high"); false when not a table option.
bool split_option(const std::string& name, std::string& prefix, std::string& field) {
  if (name.rfind("qos_", 0) != 0) return false;
  prefix = "qos_";
  for (QosPortKind k : {QosPortKind::ca, QosPortKind::swe, QosPortKind::sw0, QosPortKind::rtr})
    if (name.rfind(qos_prefix(k), 0) == 0) prefix = qos_prefix(k);
  field = name.substr(prefix.size());
  return std::find(std::begin(kFields), std::end(kFields), field) != std::end(kFields);
}

}  // namespace

bool QosPolicy::is_qos_option(const std::string& name) {
  std::string prefix, field;
  return split_option(name, prefix, field);
}

void QosPolicy::set(const std::string& name, const std::string& value, const QosOptionSource& at) {
  std::string prefix, field;
  if (!split_option(name, prefix, field))
    fail(at, name, "is not a QoS table option",
         "use qos_[ca_|swe_|sw0_|rtr_] followed by max_vls, high_limit, vlarb_high, vlarb_low or sl2vl");
  const std::string v = trim(value);
  const bool unset = (v == "(null)" && (field == "vlarb_high" || field == "vlarb_low" || field == "sl2vl")) ||
                     (v == "-1" && field == "high_limit") || (v == "0" && field == "max_vls");
  if (unset) {
    sets_[prefix].erase(field);
    return;
  }
  // Checked now, so a bad value is reported where it was written even if no port uses it.
  if (field == "sl2vl") parse_qos_sl2vl(v, at, name);
  else if (field == "vlarb_high" || field == "vlarb_low") parse_qos_vlarb(v, at, name);
  else if (field == "high_limit") parse_qos_high_limit(v, at, name);
  else parse_qos_max_vls(v, at, name);
  sets_[prefix][field] = Value{v, at, name};
}

size_t QosPolicy::read_options(const std::string& text, const std::string& file) {
  int line_no = 0;
  size_t read = 0;
  size_t from = 0;
  while (from <= text.size()) {
    const size_t nl = text.find('\n', from);
    std::string line = text.substr(from, nl == std::string::npos ? std::string::npos : nl - from);
    from = nl == std::string::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty()) continue;
    const size_t gap = line.find_first_of(" \t");
    const std::string name = line.substr(0, gap);
    const std::string value = gap == std::string::npos ? "" : trim(line.substr(gap));
    // Everything else in an OpenSM options file belongs to other managers.
    if (name.rfind("qos_", 0) != 0 || name == "qos_policy_file") continue;
    set(name, value, QosOptionSource{file, "", line_no});
    ++read;
  }
  return read;
}

const QosPolicy::Value* QosPolicy::find(QosPortKind kind, const std::string& field) const {
  // OpenSM's qos_build_config: the port type's option, else the plain qos_ option.
  for (const std::string& prefix : {std::string(qos_prefix(kind)), std::string("qos_")}) {
    const auto set = sets_.find(prefix);
    if (set == sets_.end()) continue;
    const auto v = set->second.find(field);
    if (v != set->second.end()) return &v->second;
  }
  return nullptr;
}

bool QosPolicy::given(QosPortKind kind, const std::string& field) const { return find(kind, field) != nullptr; }

QosPortTables QosPolicy::tables(QosPortKind kind, uint8_t data_vls) const {
  if (data_vls < 1 || data_vls > 15) throw std::invalid_argument("QosPolicy::tables: data_vls must be 1..15");
  uint8_t vls = data_vls;
  std::string why_vls = "the port operates " + std::to_string(data_vls) + " data VL(s)";
  const std::string raise = "or raise the port's data_vls";
  if (const Value* m = find(kind, "max_vls")) {
    const uint8_t max_vls = parse_qos_max_vls(m->text, m->at, m->option);
    if (max_vls < vls) {
      vls = max_vls;
      why_vls = m->option + " is " + std::to_string(max_vls);
    }
  }
  const std::string fix_vl = "use a VL in " + vl_range(vls) + ", " + raise;

  QosPortTables t;
  if (const Value* v = find(kind, "sl2vl")) {
    t.sl2vl = parse_qos_sl2vl(v->text, v->at, v->option);
    for (size_t sl = 0; sl < t.sl2vl.size(); ++sl)
      if (t.sl2vl[sl] >= vls)
        fail(v->at, v->option,
             "SL " + std::to_string(sl) + " maps to VL " + std::to_string(t.sl2vl[sl]) + ", but " + why_vls +
                 " (" + vl_range(vls) + ")",
             fix_vl);
  } else {
    t.sl2vl = sw::SwitchConfig::default_sl2vl(vls);
  }

  const auto table = [&](const char* field, std::vector<link::VlArbEntry> fallback) {
    const Value* v = find(kind, field);
    if (!v) return fallback;
    std::vector<link::VlArbEntry> entries = parse_qos_vlarb(v->text, v->at, v->option);
    for (size_t i = 0; i < entries.size(); ++i)
      if (entries[i].vl >= vls)
        fail(v->at, v->option,
             "entry " + std::to_string(i + 1) + " names VL " + std::to_string(entries[i].vl) + ", but " + why_vls +
                 " (" + vl_range(vls) + ")",
             fix_vl);
    return entries;
  };
  t.vlarb.high = table("vlarb_high", {});
  t.vlarb.low = table("vlarb_low", link::VlArbConfig::round_robin(vls).low);
  if (const Value* v = find(kind, "high_limit")) t.vlarb.high_limit = parse_qos_high_limit(v->text, v->at, v->option);

  // A port whose tables give no VL a weight would never send a data packet.
  bool any = false;
  for (const auto* entries : {&t.vlarb.high, &t.vlarb.low})
    for (const link::VlArbEntry& e : *entries) any = any || e.weight > 0;
  if (!any) {
    const Value* v = find(kind, "vlarb_low");
    if (!v) v = find(kind, "vlarb_high");
    fail(v->at, v->option, "no entry of " + std::string(qos_prefix(kind)) +
                               "vlarb_high or _low has a weight above 0, so the port could never send",
         "give at least one entry a weight 1..255");
  }
  return t;
}

}  // namespace ibvp::sm
