#pragma once
// The in-band subnet manager (issue 16; IBA 14.4, the SM's job): host software on one HCA
// host that brings a fabric up over the fabric itself, as OpenSM does. Every step is an SMP
// on QP0 of its CA port (Hca::send_mad), answered by the SMAs of the switches and HCAs:
//
//   discover  directed-route Get NodeInfo / NodeDescription / SwitchInfo / PortInfo, breadth
//             first from the SM's own port; a node is known by its NodeGUID
//   route     LIDs from the SM's guid2lid map (OpenSM keeps one across restarts), fresh ones
//             for the rest; the scenario's routing engine on the discovered graph
//   program   Set PortInfo (LID, LMC, MasterSMLID) on every CA port and switch port 0,
//             SwitchInfo.LinearFDBTop and every LFT block of every switch
//   qos       Set SLtoVLMappingTable of every switch (all input/output pairs) and CA port,
//             VLArbitrationTable blocks 1-4 of every cabled switch port and CA port, from
//             the QoS tables the builder would load out of band (InbandQos)
//   multicast Set MulticastForwardingTable blocks of every switch for the scenario's groups,
//             their trees computed (sm/multicast) on the discovered graph
//   arm       Set PortInfo PortState = Armed (and VLHighLimit) on every port with a cable
//             (IBA 7.2)
//   activate  Set PortInfo PortState = Active on the same ports: the subnet is up
//
// Once the subnet is up it keeps serving (OpenSM's heavy sweep on a trap): a
// Trap 128 (a port changed state, IBA 14.3.7) is repressed at once (TrapRepress, IBA
// 13.4.9) and starts a sweep that rediscovers the fabric, routes the new graph with the same
// engine, Sets only the LFT (and MFT) blocks that differ from what it wrote before, gives a
// node it sees for the first time its SL2VL and VLArb tables, and arms and activates the
// ports that came up. traps() and sweeps() record them.
//
// Each phase starts when the previous one's last response is in. At most max_outstanding
// SMPs are on the wire at once (OpenSM's max_wire_smps); one that gets no answer within
// transaction_timeout is sent again, up to `retries` times (OpenSM's transaction_timeout
// and transaction_retries), and then the sweep fails with a report naming the node and the
// attribute. The SM's host spends mad_processing on every response it reads.
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <tuple>
#include <vector>

#include "models/ib/mad.h"
#include "models/link/vl_arbiter.h"
#include "models/switch/switch.h"
#include "platform/sm/discovered_subnet.h"
#include "platform/sm/routing.h"

namespace ibvp::hca {
class Hca;
}

namespace ibvp::sm {

// The port tables the SM programs in its qos phase: one set for switch ports (OpenSM's
// qos_swe_), one for CA ports (qos_ca_); VLArbConfig::high_limit is PortInfo:VLHighLimit.
struct InbandQos {
  sw::Sl2VlTable switch_sl2vl{};
  link::VlArbConfig switch_vlarb;
  sw::Sl2VlTable ca_sl2vl{};
  link::VlArbConfig ca_vlarb;
};

// A multicast group the SM gives an MFT entry (platform/sm/multicast.h), its nodes by
// NodeGUID so the SM finds them in what it discovered.
struct InbandMulticastGroup {
  uint16_t mlid = 0;
  uint64_t source_guid = 0;
  std::vector<uint64_t> member_guids;
  bool shared_tree = false;  // else a source-based tree
};

struct InbandSmOptions {
  std::string routing = "minhop";
  // Root switches for updn, by NodeGUID (the loaded topology's nodes map to these).
  std::vector<uint64_t> root_guids;
  // Port GUID -> base LID and LMC the SM gives (OpenSM's guid2lid); other ports get the
  // lowest free LIDs.
  std::map<uint64_t, uint16_t> guid2lid;
  std::map<uint64_t, uint8_t> lmc;
  uint32_t max_outstanding = 4;                        // OpenSM max_wire_smps default
  uint64_t mad_processing_ps = 1'000'000;              // host time per response read, 1 us
  uint64_t transaction_timeout_ps = 200'000'000'000;   // OpenSM's default, 200 ms
  uint32_t retries = 3;                                // OpenSM's transaction_retries
  // PortInfo:SubnetTimeout the SM sets on every port (OpenSM's subnet_timeout, 18: 4.096 us
  // x 2^18 = 1.07 s); a switch's SMA resends an unrepressed trap at that interval.
  uint8_t subnet_timeout = 18;
  std::string source = "<subnet_manager>";             // for errors about the map
  InbandQos qos;
  std::vector<InbandMulticastGroup> multicast;
};

// Indices of InbandSmReport::phase_smps.
enum InbandPhase : size_t { kPhaseDiscover, kPhaseProgram, kPhaseQos, kPhaseMulticast, kPhaseArm, kPhaseActivate,
                            kInbandPhases };

struct InbandSmReport {
  bool up = false;
  std::string error;           // why the sweep stopped, when it did
  uint64_t discovered_ps = 0;  // simulated time each phase ended
  uint64_t routed_ps = 0;
  uint64_t programmed_ps = 0;  // LIDs and LFTs
  uint64_t qos_ps = 0;         // SL2VL and VLArb tables
  uint64_t multicast_ps = 0;   // MFTs
  uint64_t armed_ps = 0;
  uint64_t up_ps = 0;          // the subnet is up: every port Active
  uint64_t smps_sent = 0;      // including resends
  uint64_t smps_received = 0;  // responses the SM read
  uint64_t resends = 0;
  uint64_t directed_route = 0; // of smps_sent, how many were directed-route
  uint32_t switches = 0, cas = 0, links = 0;
  // SMPs sent per phase (InbandPhase): discover, program, qos, multicast, arm, activate.
  std::array<uint64_t, kInbandPhases> phase_smps{};
  uint64_t sl2vl_sets = 0, vlarb_sets = 0, mft_sets = 0;  // of those, by table
};

// A trap the SM received once the subnet was up (IBA 14.2.5.1, 13.4.9).
struct InbandTrap {
  uint64_t received_ps = 0;  // read by the SM (its mad_processing done); the TrapRepress leaves then
  uint16_t issuer_lid = 0;
  uint16_t trap_number = 0;
  uint64_t tid = 0;
};

// A sweep after the subnet was up, started by a trap (OpenSM's heavy sweep on a port state
// change): rediscover by directed route, route the new graph with the same engine, Set only
// the LFT blocks that changed, arm and activate the ports that came up (Init).
struct InbandSweep {
  uint64_t started_ps = 0;
  uint64_t discovered_ps = 0;
  uint64_t ended_ps = 0;               // last response in (0: still running)
  uint64_t last_lft_answer_ps = 0;     // the last LFT block Set answered (0: none changed)
  uint64_t smps = 0;                   // sent, resends included
  uint64_t lft_blocks_set = 0;
  uint64_t lft_blocks_total = 0;       // blocks of every switch up to LinearFDBTop
  uint64_t mft_blocks_set = 0;         // MFT blocks that changed (trees recomputed)
  uint32_t switches = 0, cas = 0, links = 0;
  uint32_t ports_activated = 0;
  std::vector<std::string> lost;       // nodes of the last sweep not found now (a partition)
  std::string error;                   // why the sweep stopped, when it did
};

class InbandSm : public sc_core::sc_module {
 public:
  InbandSm(sc_core::sc_module_name name, hca::Hca& port, InbandSmOptions options);

  const InbandSmReport& report() const { return report_; }
  // What the SM found and the tables it computed (valid once routed_ps is set).
  const DiscoveredSubnet& discovered() const { return subnet_; }
  const topo::Topology& topology() const { return topology_; }
  const RoutingTables& tables() const { return tables_; }
  // Notified when the subnet is up (or the sweep failed: report().error).
  const sc_core::sc_event& done_event() const { return done_; }
  bool done() const { return report_.up || !report_.error.empty(); }
  // After the subnet is up: the traps it received and the sweeps they started.
  const std::vector<InbandTrap>& traps() const { return traps_; }
  const std::vector<InbandSweep>& sweeps() const { return sweeps_; }
  // Pause the kernel (sc_pause) when done, so a runner advancing in slices sees the exact
  // moment: the traffic's clock starts there.
  void pause_when_done() { pause_when_done_ = true; }

 private:
  // In InbandPhase order (phase_smps is indexed by it).
  enum class Phase : uint8_t { discover, program, qos, multicast, arm, activate, done };
  using Handler = std::function<void(const ib::mad::Smp&)>;
  struct Request {
    ib::mad::Smp smp;
    Handler on_response;
    std::string what;  // "NodeInfo at path 1,3" for the failure report
    uint64_t deadline_ps = 0;
    uint32_t tries = 0;
  };

  void serve();  // SC_METHOD: read responses, send what the window allows, time out
  void on_mad(const ib::MadDatagram& m, uint64_t at_ps);
  void send(Request r);
  void transmit(Request& r);
  void phase_ended();
  void fail(const std::string& why);

  // Requests by kind.
  void get(uint16_t attr, uint32_t modifier, const std::vector<uint8_t>& path, const std::string& what, Handler h);
  void set(uint16_t attr, uint32_t modifier, const std::vector<uint8_t>& path, const ib::mad::SmpData& data,
           const std::string& what, Handler h = nullptr);

  // discover
  void discover_node(const std::vector<uint8_t>& path, uint32_t from, uint8_t from_port);
  void on_node_info(const ib::mad::NodeInfo& info, const std::vector<uint8_t>& path, uint32_t from, uint8_t from_port);
  // route, program, arm, activate
  void route();
  void program();
  // Node n's LID (PortInfo) and, for a switch, SwitchInfo and its LFT blocks up to `top`;
  // with `changed_only`, only the blocks that differ from what this SM wrote before.
  void program_node(uint32_t n, uint16_t top, bool changed_only);
  // Node n's SL2VL and VLArb tables (qos phase); its ports' stored VLHighLimit, which the
  // arm phase's PortInfo Set carries.
  void program_qos(uint32_t n);
  // Every switch's MFT blocks for opt_.multicast (multicast phase); with `changed_only` (a
  // resweep), only the blocks that differ from what this SM wrote before, and a member or
  // source the sweep no longer finds leaves its group's tree instead of failing the sweep.
  void program_multicast(bool changed_only);
  void set_port_state(uint8_t state);
  // Traps (after the subnet is up): repress, then sweep (or sweep again after this one).
  void on_trap(const ib::MadDatagram& m, const ib::mad::Smp& s, uint64_t ready_ps);
  void start_sweep();
  void reprogram();
  void end_sweep();

  static std::string path_text(const std::vector<uint8_t>& path);

  hca::Hca& port_;
  InbandSmOptions opt_;
  InbandSmReport report_;
  Phase phase_ = Phase::discover;
  bool pause_when_done_ = false;
  DiscoveredSubnet subnet_;
  topo::Topology topology_;
  RoutingTables tables_;

  std::deque<Request> queue_;                 // not yet sent (window full)
  std::map<uint64_t, Request> in_flight_;     // by TransactionID
  std::deque<std::pair<uint64_t, ib::mad::Smp>> inbox_;  // responses, by when they are read
  std::deque<std::pair<uint64_t, ib::MadDatagram>> trap_inbox_;  // traps, by when they are read
  std::vector<InbandTrap> traps_;
  std::vector<InbandSweep> sweeps_;
  bool resweep_ = false;      // the current sweep is one after the subnet was up
  bool sweep_again_ = false;  // a trap came during a sweep: sweep once more after it
  // What this SM wrote: each switch's LFT and LinearFDBTop, by NodeGUID; the nodes it knows.
  std::map<uint64_t, sw::Lft> programmed_;
  std::map<uint64_t, uint16_t> programmed_top_;
  std::map<uint64_t, sw::Mft> programmed_mft_;  // by NodeGUID
  // SwitchInfo:OptimizedSLtoVLMappingProgramming as read in the program phase, by NodeGUID.
  std::map<uint64_t, bool> optimized_sl2vl_;
  std::vector<uint32_t> fresh_;  // resweep: nodes seen for the first time (they get QoS tables)
  std::map<uint64_t, std::string> known_;  // NodeGUID -> NodeDescription, of the last sweep
  // Resweep: the ports in Init to arm, then activate (path, port, PortInfo as read).
  std::vector<std::tuple<std::vector<uint8_t>, uint8_t, ib::mad::PortInfo>> to_activate_;
  uint64_t busy_until_ps_ = 0;                // the SM host's processing of responses
  uint64_t next_tid_ = 1;
  sc_core::sc_event wake_;
  sc_core::sc_event done_;
};

}  // namespace ibvp::sm
