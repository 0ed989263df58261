#pragma once
// Scenario documents in, a validated Scenario or a ConfigError out. The document is YAML
// (docs/parameters.md lists every key); `--set key=value` overrides replace parts of it
// before validation. Every key is checked against the declarations next to the models
// (models/*/..._params.cpp) and platform/scenario/scenario_params.cpp, then the checks that
// need the whole scenario (flow endpoints exist in the topology, buffers hold the largest
// packet, ...) run. Nothing invalid is accepted or silently replaced by a default.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "models/link/link_rate.h"
#include "models/sim/params.h"
#include "platform/scenario/scenario.h"

namespace ibvp {

// The `topology:` section as written, before it becomes a graph: exactly one of a file, a
// generator with its parameters, or an inline topology in the topology file format.
struct TopologySpec {
  std::string file;       // relative to the scenario file's directory
  std::string node_name_map;  // with an ibnetdiscover file: names by node GUID
  std::string generator;  // two_switch, random_irregular, single_switch, fat_tree, mesh, torus
  uint32_t local = 0;     // two_switch
  uint32_t remote = 0;
  uint32_t switches = 0;  // random_irregular
  uint32_t switch_ports = 4;
  uint32_t host_ports = 4;
  uint32_t seed = 0;      // random_irregular; the scenario's seed (low 32 bits) unless given
  uint32_t cycles = 0;    // random_irregular, when given: independent cycles of the switch graph
  uint32_t hosts = 0;     // single_switch
  uint32_t k = 0;         // fat_tree (k-ary n-tree)
  uint32_t n = 0;
  uint32_t x = 0;         // mesh, torus
  uint32_t y = 0;
  uint32_t hosts_per_switch = 1;
  link::LinkConfig link;  // every generated cable, when `link` is given
  std::set<std::string> given;  // keys the document wrote
};

// The `qos:` section: a subnet manager's QoS policy in OpenSM's option syntax (the values
// of qos_sl2vl, qos_vlarb_high, ... in opensm.conf; platform/sm/qos_policy.h), from an
// options file, from keys here, or both (keys here win). The loader turns it into the
// SL2VL and VL arbitration tables of every switch port (qos_swe_) and endpoint (qos_ca_).
struct QosSpec {
  std::string options_file;  // relative to the scenario file's directory
  std::string max_vls, sl2vl, vlarb_high, vlarb_low, high_limit;
  std::string ca_sl2vl, ca_vlarb_high, ca_vlarb_low, ca_high_limit;
  std::string swe_sl2vl, swe_vlarb_high, swe_vlarb_low, swe_high_limit;
  std::set<std::string> given;  // keys the document wrote
  bool present = false;         // the document has a qos section
};

// The `routing_options:` section as written: roots by name or GUID and files by path, which
// the loader resolves against the topology and the scenario's directory.
struct RoutingOptionsSpec {
  std::vector<std::string> roots;
  std::string root_guid_file;
  std::string lfts_file;
  std::set<std::string> given;
};

// What the top-level keys of a scenario document bind to: the Scenario and the topology and
// QoS sections that the loader turns into Scenario::topology and the port tables.
struct ScenarioDocument : Scenario {
  TopologySpec topology_spec;
  QosSpec qos_spec;
  RoutingOptionsSpec routing_options_spec;
};

// Declarations of the top-level keys (platform/scenario/scenario_params.cpp).
const sim::ParamGroup& scenario_params();

// Reads and validates the scenario file at `path`. Relative paths inside it (topology.file)
// are relative to its directory. `overrides` are "key.path=value" strings (ibvp-sim --set).
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});

// The same from YAML text; `source` names it in errors, `base_dir` resolves relative paths.
Scenario scenario_from_yaml(const std::string& yaml_text, const std::string& source,
                            const std::vector<std::string>& overrides = {}, const std::string& base_dir = ".");

// The run's name (`name`, or the file name without extension) after checking the document's
// keys, without building the topology: what a front end needs to make out/<name> before it
// loads the scenario. A name that is not one path component is a ConfigError at `name`,
// the same one load_scenario gives.
std::string scenario_name(const std::string& yaml_text, const std::string& source,
                          const std::vector<std::string>& overrides = {});
std::string scenario_file_name(const std::string& path, const std::vector<std::string>& overrides = {});

// Generated from the declarations; committed as docs/scenario.schema.json and
// docs/parameters.md (a test keeps them equal).
std::string scenario_json_schema();
std::string parameter_reference_markdown();

}  // namespace ibvp
