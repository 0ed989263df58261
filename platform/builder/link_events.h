#pragma once
// The scenario's link events (issue 16, docs/management.md "A link that goes down"): one job,
// to take cables down and bring them back at their times, and to say afterwards what each
// event cost. At an event both ends of the cable change at once (Switch::set_link,
// Hca::set_link); the switches' SMAs then send Trap 128, and an in-band SM sweeps and
// reroutes (platform/sm/inband_sm.h). This module watches the drops (a FabricObserver) and
// joins, per event, the traps the switches sent, the traps the SM read and the sweeps they
// started into one report row.
//
// Times: an event's `at` counts like the flows' times, from time 0 out of band and from the
// moment the subnet is up in band (events wait for it; none fire if it never comes up).
//
// Out of band with subnet_manager.reroute_delay, `reroute_delay` after each event the
// scenario's routing engine routes the topology without the cables down at that moment and
// the tables go straight into the switches, as the builder loads them at time 0.
#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "models/sim/observer.h"
#include "platform/scenario/scenario.h"

namespace ibvp {

class Fabric;

// One event, as reported (summary.json subnet_manager.link_events, link_events.csv).
struct LinkEventReport {
  std::string link;          // as the scenario names it
  std::string end_a, end_b;  // node/port of both ends
  bool up = false;
  bool fired = false;        // false: the run ended (or the subnet never came up) first
  uint64_t at_ps = 0;        // simulated time it happened
  // In band (0 where it did not happen): the first Trap 128 of either end's switch, how
  // many times the switches sent traps for it, when the SM read the first, when the last of
  // them was repressed (0 while one is not: lost on the way, it waits for its resend).
  uint64_t trap_sent_ps = 0;
  uint32_t trap_sends = 0;
  uint64_t trap_received_ps = 0;
  uint64_t trap_repressed_ps = 0;
  // The sweeps it started: how many, their SMPs, the LFT blocks they Set (of those they
  // compared), and when the fabric was routed again: the last LFT Set answered (for a link
  // that came up, the ports activated: the sweep's end).
  uint32_t sweeps = 0;
  uint64_t sweep_smps = 0;
  uint64_t lft_blocks_set = 0;
  uint64_t lft_blocks_compared = 0;
  uint64_t recovered_ps = 0;
  std::vector<std::string> unreachable;  // nodes the sweep lost (the fabric is partitioned)
  std::string sweep_error;
  // Packets dropped for the down cable (reason link_down, at its ends) from the event to
  // recovery, and from the event to the next event on any cable (or the end of the run);
  // packets dropped for want of a route (no_route: a partition) in that second span.
  uint64_t lost_to_recovery = 0;
  uint64_t lost = 0;
  uint64_t unroutable = 0;
};

class LinkEvents : public sc_core::sc_module, public sim::FabricObserver {
 public:
  LinkEvents(sc_core::sc_module_name name, Fabric& fabric, std::vector<LinkEventConfig> events);

  void on_drop(const ib::Packet& p, uint32_t node, uint64_t t_ps) override;
  // The rows, joined with what the switches and the SM recorded (call after the run).
  std::vector<LinkEventReport> report() const;
  // One line per event, for the command line.
  static std::string text(const std::vector<LinkEventReport>& rows);

 private:
  struct Event {
    LinkEventConfig cfg;
    uint32_t node_a = 0, node_b = 0;
    uint16_t port_a = 0, port_b = 0;
    uint64_t at_ps = 0;
    bool fired = false;
    std::vector<uint64_t> lost_ps;        // link_down drops attributed to it
    std::vector<uint64_t> unroutable_ps;  // no_route drops while it was the latest event
    // Out-of-band reroute (subnet_manager.reroute_delay): when the tables were loaded, the
    // LFT blocks that changed of those compared, or why routing failed.
    uint64_t rerouted_ps = 0;
    uint64_t blocks_changed = 0, blocks_compared = 0;
    std::string reroute_error;
  };
  void run();  // SC_THREAD
  void apply(Event& e);
  void reroute(Event& e);

  Fabric& fabric_;
  std::vector<Event> events_;  // in time order (stable: the scenario's order at equal times)
  int latest_ = -1;            // the last event fired
};

}  // namespace ibvp
