#pragma once
// `ibvp-sim SCENARIO --serve-umad`: elaborates the scenario's fabric and lets unmodified
// management software (OpenSM, infiniband-diags), run under Debian's libumad2sim.so, send
// its MADs through it (docs/management.md, "Real management software against ibvp").
//
// Time (the rule this module keeps):
// - The fabric is frozen while no client MAD is in flight: the server then waits on its
//   sockets, and a run with no clients costs no simulated time and no CPU.
// - A client's MAD enters the fabric at the simulated time the fabric stands at when the
//   server reads it (host software takes no simulated time). From then until the response
//   comes back, or `response_timeout` of simulated time has passed, the kernel advances from
//   event to event, so the MAD crosses links, switches and agents with their timing.
// - A request not answered within `response_timeout` goes back to its client with status
//   ETIMEDOUT (110), as the kernel's MAD layer returns an unanswered send; a MAD that asks
//   no response (a trap, a response the client sends) keeps the fabric moving for the same
//   span, so it reaches its destination.
// - When a MAD (or a timeout) is handed to a client while others are still in flight, the
//   fabric moves on only once every attached client has reacted: it has read what it was
//   handed (SIOCOUTQ on its data socket) and all its threads sleep again (Linux
//   /proc/<pid>/task/*/stat), twice in a row 200 us apart, so the MADs it sent in
//   reaction leave at the simulated time their trigger arrived, however long the software
//   took in wall time. That makes a run as deterministic as the software driving it. A
//   client that stays busy longer than `settle_ms` no longer holds the fabric; UDP clients,
//   whose processes the server cannot see, get 1 ms.
// Simulated time therefore runs ahead of wall time only while MADs travel, and stands
// still while software thinks: the simulated time of a MAD says what the fabric did, not
// how long the software took. The run ends after `serve_for` seconds of wall time or on
// SIGINT/SIGTERM, and writes umad_mads.csv and umad.json in the output directory.
#include <cstdint>
#include <functional>
#include <string>

#include "platform/scenario/scenario.h"
#include "platform/umad/umad_server.h"

namespace ibvp::umad {

struct ServeOptions {
  ServerConfig server;
  std::string host;          // the default host clients attach to; empty: the first endpoint
  double serve_for_s = 0;    // wall seconds; 0: until SIGINT or SIGTERM
  uint64_t response_timeout_ps = 1'000'000'000;  // 1 ms of simulated time
  int settle_ms = 1000;  // the longest the fabric waits for clients to react to a delivery
  std::string out_dir;       // empty: write nothing
  // Called once the sockets are bound, with the environment a client sets (see client_env).
  std::function<void(const std::string& env)> on_ready;
};

struct ServeResult {
  uint64_t to_fabric = 0, to_client = 0, timed_out = 0, refused = 0, unclaimed = 0;
  uint64_t attaches = 0;
  double sim_seconds = 0;
  double wall_seconds = 0;
  std::string stopped_by;  // "serve_for" or "signal"
};

// The environment assignments a client needs, e.g. "IBSIM_SOCKNAME=sim SIM_HOST=h1".
std::string client_env(const ServerConfig& cfg, const std::string& host);

// Throws ConfigError for a scenario without HCA hosts (endpoint_model), an unknown host or
// sockets another server holds.
ServeResult serve_umad(const Scenario& scenario, const ServeOptions& options);

}  // namespace ibvp::umad
