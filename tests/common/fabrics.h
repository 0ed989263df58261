#pragma once
// Small fabrics for tests, built in code: the smallest topology that shows a property.
#include <filesystem>
#include <string>
#include <vector>

#include <systemc>

#include "platform/scenario/scenario.h"

namespace ibvp::tb {

// One switch with `hosts` endpoints h1..hN on ports 1..N, all cables `cable`.
topo::Topology star(uint32_t hosts, const link::LinkConfig& cable = {});
// A chain h_src - s1 - s2 - ... - sK - h_dst (K switches), plus extra hosts on s1 named a1..aM.
topo::Topology chain(uint32_t switches, const link::LinkConfig& cable = {});
// `switches` switches s0..s(N-1) in a ring (port 1 of sk to port 2 of s(k+1)), one host hk
// on port 3 of each; with `bystanders`, two more hosts x and y on ports 4 and 5 of s0.
topo::Topology ring(uint32_t switches, bool bystanders = false, const link::LinkConfig& cable = {});

// A scenario over `topology` with 1 data VL, buffers for 4 maximal packets, no captures.
Scenario basic_scenario(topo::Topology topology);

FlowConfig saturating_flow(const std::string& name, const std::string& src, const std::string& dst,
                           uint32_t payload_bytes = 2048, uint8_t sl = 0);

// chain(3) under uniform Poisson load 0.8 of 256-byte payloads with buffers of two packets
// (switches and endpoints), in `order`, for `duration`: credits bind all the time, so a
// credit or packet that landed a picosecond late would change when packets leave.
Scenario congested_chain(EventOrder order, sc_core::sc_time duration);

// Runs `scenario` in a child process (one SystemC kernel per process) writing its files to
// `dir`; the child's exit status (0: the run finished, 3: it threw), -1 if it did not exit.
int run_in_child(const Scenario& scenario, const std::string& dir);

// A whole file's bytes ("" if it cannot be read).
std::string slurp(const std::filesystem::path& path);

}  // namespace ibvp::tb
