#pragma once
// A subnet manager's QoS policy for port tables: the SLtoVLMappingTable (IBA 7.6.6) and the
// VLArbitrationTable with its LimitOfHighPriority (IBA 7.6.9; seed 002 Sec. 2), written with
// the options of OpenSM's options file (doc/QoS_management_in_OpenSM.txt, Sec. 7):
//
//   qos_max_vls     1..15                    operational data VLs the tables may name
//   qos_high_limit  0..255                   LimitOfHighPriority, 4096-byte units, 255 unbounded
//   qos_vlarb_high  VL:weight,VL:weight,...  up to 64 entries, VL 0..14, weight 0..255
//   qos_vlarb_low   VL:weight,...            same
//   qos_sl2vl       VL,VL,... (16 values)    entry i is the VL of SL i
//
// OpenSM keeps one set per port type, named with an extra prefix: qos_ca_ (channel adapters),
// qos_swe_ (switch external ports), qos_sw0_ (switch enhanced port 0), qos_rtr_ (routers).
// A port type's option wins over the plain qos_ option, which wins over the default. The
// default here is the switch model's (round robin over the data VLs in the low table, an empty
// high table, LimitOfHighPriority 0, SL mod data VLs), not OpenSM's built-in 15-VL strings:
// those name VLs a port with fewer data VLs does not operate, and OpenSM silently masks them.
//
// The parse is stricter than OpenSM's (which reads with strtoul and folds a VL with `% 15`):
// a malformed entry is a ConfigError naming the option, the entry and the fix, never a
// silently different table.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/link/vl_arbiter.h"
#include "models/switch/switch.h"

namespace ibvp::sm {

// The port types OpenSM keeps separate QoS option sets for.
enum class QosPortKind : uint8_t { ca, swe, sw0, rtr };
// "qos_ca_", "qos_swe_", "qos_sw0_", "qos_rtr_".
const char* qos_prefix(QosPortKind kind);

// Where an option value was written, for the ConfigError it may raise. `key` is what the
// message names (e.g. "qos.vlarb_high" when it comes from a YAML scenario); empty means the
// OpenSM option name itself.
struct QosOptionSource {
  std::string file;
  std::string key;
  int line = 0;  // 1-based; 0 when unknown
};

// Parsers of single option values. Numbers are decimal or 0x-hexadecimal (OpenSM reads them
// with strtoul base 0); spaces around entries are allowed. `option` is the OpenSM name used in
// messages when `at.key` is empty.

// qos_sl2vl: exactly 16 VLs in 0..14. OpenSM's "15 means drop this SL" is refused: the switch
// model would carry such packets on VL15, the uncredited management lane.
sw::Sl2VlTable parse_qos_sl2vl(const std::string& value, const QosOptionSource& at = {},
                               const std::string& option = "qos_sl2vl");
// qos_vlarb_high / qos_vlarb_low: 0..64 "VL:weight" entries; an empty value is an empty table.
std::vector<link::VlArbEntry> parse_qos_vlarb(const std::string& value, const QosOptionSource& at = {},
                                              const std::string& option = "qos_vlarb_high");
// qos_high_limit: 0..255.
uint8_t parse_qos_high_limit(const std::string& value, const QosOptionSource& at = {},
                             const std::string& option = "qos_high_limit");
// qos_max_vls: 1..15.
uint8_t parse_qos_max_vls(const std::string& value, const QosOptionSource& at = {},
                          const std::string& option = "qos_max_vls");

// What one port is programmed with: the switch model's own table types.
struct QosPortTables {
  sw::Sl2VlTable sl2vl{};
  link::VlArbConfig vlarb;
};

class QosPolicy {
 public:
  // Whether `name` is one of the options above, with or without a port-type prefix.
  static bool is_qos_option(const std::string& name);

  // Records option `name` ("qos_vlarb_high", "qos_swe_sl2vl", ...) with its value, checked
  // now for syntax and ranges. OpenSM's "unset" spellings are accepted and clear the option:
  // "(null)" for the tables, -1 for qos_high_limit, 0 for qos_max_vls (as opensm.opts writes
  // them). Throws ConfigError for a name that is not a QoS table option or a bad value.
  void set(const std::string& name, const std::string& value, const QosOptionSource& at = {});

  // Reads OpenSM options-file text: one "name value" per line, '#' starts a comment. Lines
  // whose name does not start with "qos_" are other OpenSM options and are skipped, as is
  // qos_policy_file; any other "qos_" name must be known (a misspelt option would otherwise
  // leave the default in place unnoticed). Returns how many qos_ options it read.
  size_t read_options(const std::string& text, const std::string& file = "");

  // The tables for a port of `kind` that operates `data_vls` data VLs (1..15). Checks what
  // only the port can tell: every VL is below min(data_vls, qos_max_vls) and the
  // arbitration tables serve at least one VL. Throws ConfigError naming the option.
  QosPortTables tables(QosPortKind kind, uint8_t data_vls) const;

  // Whether an option was given for `kind` (directly or through the plain qos_ set).
  bool given(QosPortKind kind, const std::string& field) const;

 private:
  struct Value {
    std::string text;
    QosOptionSource at;
    std::string option;  // the full OpenSM name it was given under
  };
  // Field ("sl2vl", "vlarb_high", ...) -> value, for the plain set ("") and each prefix.
  const Value* find(QosPortKind kind, const std::string& field) const;
  std::map<std::string, std::map<std::string, Value>> sets_;
};

}  // namespace ibvp::sm
