#include "common/fabrics.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "platform/builder/runner.h"

namespace ibvp::tb {

namespace {
uint32_t add_node(topo::Topology& t, const std::string& name, topo::NodeKind kind, uint16_t ports, uint16_t lid) {
  topo::Node n;
  n.name = name;
  n.kind = kind;
  n.num_ports = ports;
  n.lid = lid;
  t.nodes.push_back(n);
  return static_cast<uint32_t>(t.nodes.size() - 1);
}
void cable(topo::Topology& t, uint32_t a, uint16_t pa, uint32_t b, uint16_t pb, const link::LinkConfig& c) {
  t.links.push_back(topo::Link{{a, pa}, {b, pb}, c});
}
}  // namespace

topo::Topology star(uint32_t hosts, const link::LinkConfig& c) {
  topo::Topology t;
  t.source = "test:star";
  const uint32_t s = add_node(t, "s1", topo::NodeKind::switch_node, static_cast<uint16_t>(hosts), 1);
  for (uint32_t h = 1; h <= hosts; ++h) {
    const uint32_t e = add_node(t, "h" + std::to_string(h), topo::NodeKind::endpoint, 1, static_cast<uint16_t>(10 + h));
    cable(t, e, 1, s, static_cast<uint16_t>(h), c);
  }
  t.index();
  return t;
}

topo::Topology chain(uint32_t switches, const link::LinkConfig& c) {
  topo::Topology t;
  t.source = "test:chain";
  std::vector<uint32_t> sw;
  for (uint32_t k = 1; k <= switches; ++k)
    sw.push_back(add_node(t, "s" + std::to_string(k), topo::NodeKind::switch_node, 4, static_cast<uint16_t>(k)));
  const uint32_t src = add_node(t, "h_src", topo::NodeKind::endpoint, 1, 100);
  const uint32_t dst = add_node(t, "h_dst", topo::NodeKind::endpoint, 1, 101);
  const uint32_t a1 = add_node(t, "a1", topo::NodeKind::endpoint, 1, 102);
  cable(t, src, 1, sw.front(), 1, c);
  cable(t, a1, 1, sw.front(), 3, c);
  for (size_t k = 0; k + 1 < sw.size(); ++k) cable(t, sw[k], 2, sw[k + 1], 4, c);
  cable(t, dst, 1, sw.back(), 2, c);
  t.index();
  return t;
}

topo::Topology ring(uint32_t switches, bool bystanders, const link::LinkConfig& c) {
  topo::Topology t;
  t.source = "test:ring";
  for (uint32_t k = 0; k < switches; ++k)
    add_node(t, "s" + std::to_string(k), topo::NodeKind::switch_node, 5, static_cast<uint16_t>(1 + k));
  for (uint32_t k = 0; k < switches; ++k) {
    const uint32_t h = add_node(t, "h" + std::to_string(k), topo::NodeKind::endpoint, 1, static_cast<uint16_t>(100 + k));
    cable(t, h, 1, k, 3, c);
    cable(t, k, 1, (k + 1) % switches, 2, c);
  }
  if (bystanders) {
    cable(t, add_node(t, "x", topo::NodeKind::endpoint, 1, 200), 1, 0, 4, c);
    cable(t, add_node(t, "y", topo::NodeKind::endpoint, 1, 201), 1, 0, 5, c);
  }
  t.index();
  return t;
}

Scenario basic_scenario(topo::Topology topology) {
  Scenario s;
  s.source = topology.source;
  s.name = "test";
  s.topology = std::move(topology);
  s.switch_cfg.vl_buffer_bytes = 4 * 2112;
  s.endpoint_cfg.vl_buffer_bytes = 4 * 2112;
  s.endpoint_cfg.sl2vl = sw::SwitchConfig::default_sl2vl(1);
  s.outputs.packets_csv = true;
  s.outputs.rate_window = sc_core::SC_ZERO_TIME;
  return s;
}

FlowConfig saturating_flow(const std::string& name, const std::string& src, const std::string& dst,
                           uint32_t payload_bytes, uint8_t sl) {
  FlowConfig f;
  f.name = name;
  f.src = src;
  f.dst = dst;
  f.generator = GeneratorKind::saturating;
  f.payload_bytes = payload_bytes;
  f.sl = sl;
  return f;
}

Scenario congested_chain(EventOrder order, sc_core::sc_time duration) {
  Scenario s = basic_scenario(chain(3));
  s.event_order = order;
  s.traffic.enabled = true;
  s.traffic.generator = GeneratorKind::poisson;
  s.traffic.pattern = DestinationPattern::uniform;
  s.traffic.load = 0.8;
  s.traffic.payload_bytes = 256;
  s.switch_cfg.vl_buffer_bytes = s.endpoint_cfg.vl_buffer_bytes = 2 * 320;
  s.duration = duration;
  return s;
}

int run_in_child(const Scenario& scenario, const std::string& dir) {
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      RunOptions o;
      o.out_dir = dir;
      run_scenario(scenario, o);
      std::_Exit(0);
    } catch (...) {
      std::_Exit(3);
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace ibvp::tb
