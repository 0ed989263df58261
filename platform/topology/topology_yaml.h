#pragma once
// The project's own topology format (docs/topology.md): switches, hosts and links in YAML,
// written by hand or saved from a generated or discovered fabric.
#include <string>

#include <yaml-cpp/yaml.h>

#include "platform/topology/topology.h"

namespace ibvp::topo {

// Reads a topology file, assigns LIDs to nodes without one, indexes and validates it.
// Every error is a ConfigError naming `path`, the key path and the YAML line.
Topology load_topology_yaml(const std::string& path);
// The same from text; `source` names it in errors.
Topology parse_topology_yaml(const std::string& text, const std::string& source);

// The same from a parsed YAML node, e.g. the `topology:` section of a scenario. `source`
// names the file in errors; `key_prefix` (e.g. "topology") is put before every key path.
Topology topology_from_yaml(const YAML::Node& root, const std::string& source, const std::string& key_prefix = "");

// Writes `t` so that load_topology_yaml gives it back equal (names, ports, LIDs, LMCs, GUIDs, port GUIDs, descriptions,
// cables and their width, speed, length and propagation). The most common link settings
// become `defaults:`; only links that differ carry their own.
std::string topology_to_yaml(const Topology& t);
void save_topology_yaml(const Topology& t, const std::string& path);

}  // namespace ibvp::topo
