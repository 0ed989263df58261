#pragma once
// Fabrics made by rule instead of by hand: the topologies of the reference papers and the
// regular families routing engines are tested on. Hosts are counted from 1 in every
// generator (h1, h2, ...; on a switch with coordinates, h<coordinates>_1, _2, ...), switch
// numbers and coordinates from 0. Every generator lists switches before
// hosts (so LIDs go to switches first and save/load keeps node order), assigns LIDs with
// assign_lids(), indexes and validates the result; bad parameters throw ConfigError.
#include <cstdint>

#include "models/link/link_rate.h"
#include "platform/topology/topology.h"

namespace ibvp::topo {

struct RandomIrregularOptions {
  uint16_t switch_ports = 4;  // ports per switch cabled to other switches (seed 001: 4)
  uint16_t host_ports = 4;    // ports per switch cabled to hosts (seed 001: 4)
  // Independent cycles of the switch graph (cables - switches + 1), or -1: as many cables as
  // the ports allow (seed 001). Seed 000 Sec. 5.1's 15-node fabric has nine.
  int64_t cycles = -1;
  // Seed 001 Sec. 3 uses 1X links.
  link::LinkConfig cfg{link::Width::x1, link::Speed::sdr, 1.0, 5.0};
};

// Seed 001 Sec. 3: `switches` switches with switch_ports + host_ports ports each, joined by
// a random connected graph without self-links or parallel links. Free switch ports are
// rewired until none is left where possible: a few stay free with fewer than switch_ports + 1
// switches (the graph is then complete) or an odd port total; 8..64 switches with 4 switch
// ports use all of them (docs/topology.md has the method). Switch i is "sw<i>"; its switch cables take ports
// 1..switch_ports, host h is "h<i>_<h>" on port switch_ports + 1 + h. The same seed gives the
// same fabric on every platform (std::mt19937_64 and an own uniform draw).
// With opt.cycles >= 0 (seed 000 Sec. 3.2, 5.1): the same random spanning tree, then exactly
// `cycles` extra random cables between switches that have a free port and are not yet
// neighbours (rewiring a cable when no such pair is left); a ConfigError (key "cycles")
// when the ports or the switch count cannot hold that many.
Topology random_irregular(uint32_t switches, uint32_t seed, const RandomIrregularOptions& opt = {});

// Seed 004 Fig. 1: switches A and B joined by one cable (A/1 - B/1). On A: remote sources
// A_R1..A_R<remote> (ports 2..remote+1) and the victim source A_V; on B: local sources
// B_L1..B_L<local> (ports 2..local+1), the congested destination B_C and the victim's
// destination B_V. Each switch has just enough ports. Links 4X SDR (1 GB/s, seed 004 Table 1).
Topology two_switch_congestion(uint32_t local, uint32_t remote, const link::LinkConfig& cfg = {});

// One switch "sw" with hosts h1..h<hosts> on ports 1..hosts.
Topology single_switch(uint32_t hosts, const link::LinkConfig& cfg = {});

// k-ary n-tree (Petrini and Vanneschi): k^n hosts, n levels of k^(n-1) switches. Switch
// "s<l>_<w>" is at level l (0: leaves, n-1: roots) with w = 0..k^(n-1)-1 read as n-1 base-k
// digits; <w,l> and <w',l+1> are cabled when w and w' differ at most in digit l (digit 0 is
// the least significant). Down ports 1..k (port 1 + digit l of the neighbour below), up ports
// k+1..2k; roots have k ports. Host "h<p>" (p = 1..k^n) is on leaf (p-1) / k, port 1 + (p-1) % k.
Topology kary_ntree(uint32_t k, uint32_t n, const link::LinkConfig& cfg = {});

// x by y grid of switches "s<i>_<j>"; ports 1..4 go to +x, -x, +y, -y (unused at the edges),
// hosts "h<i>_<j>_<h>" (h = 1..hosts_per_switch) on ports 4 + h.
Topology mesh2d(uint32_t x, uint32_t y, uint32_t hosts_per_switch, const link::LinkConfig& cfg = {});

// As mesh2d, plus wrap-around cables in each dimension of 3 or more switches (with 2 the wrap
// cable would only double the existing one).
Topology torus2d(uint32_t x, uint32_t y, uint32_t hosts_per_switch, const link::LinkConfig& cfg = {});

}  // namespace ibvp::topo
