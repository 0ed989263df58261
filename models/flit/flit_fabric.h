#pragma once
// Every switch of a fabric as seed 003's flit router (switch.model: flit_wormhole), as one
// SystemC module at the fabric's edge: endpoints and HCAs keep their IBA ports and cables,
// and the routers, with the cables between them, are one FlitNetwork stepped a flit cycle
// at a time while it has work (and not at all while it is idle).
//
// At an edge port (a switch port cabled to a channel adapter):
//  - in: a packet whose header arrives becomes a message of ceil(wire bytes x 8 / flit
//    width) flits, queued at that cycle at the edge's flit source, which sends it into the
//    router as the packet streams in (the cable runs at the flit link rate, so the flits
//    are not serialized twice). Its class is switch.flit.vl_classes[VL] (VL15: class 0,
//    control); its VirtualClock connection is its CBR connection, else its flow, with the
//    Vtick of one flit at its reserved rate (switch.unreserved_rate without one). The
//    packet's IBA credit goes back to the channel adapter when its tail flit has left the
//    edge (the edge's input buffer is the IBA buffer the adapter's credits count).
//  - out: a message is delivered when its tail flit reaches the edge; the packet then goes
//    onto the cable to the channel adapter whole, its head and tail together (the flits
//    carried its serialization), when the adapter's IBA credits allow.
// So the recorder, the real-time metrics and the HCAs see the same packets as with the IBA
// switch, delivered when their tail flit arrives. What is not IBA: inside the flit fabric a
// cable interleaves flits of different packets (IBA links never interleave packets), VLs
// become traffic classes, and SL2VL, VLArb tables, lifetimes, ECN marking, multicast and
// multipath do not apply.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

#include "models/flit/network.h"
#include "models/ib/packet.h"
#include "models/link/fabric_payload.h"
#include "models/link/port_state.h"
#include "models/sim/observer.h"

namespace ibvp::flit {

class FlitFabric : public sc_core::sc_module, private FlitListener {
 public:
  using InSocket = tlm_utils::passthrough_target_socket_tagged<FlitFabric>;
  using OutSocket = tlm_utils::simple_initiator_socket_tagged<FlitFabric>;

  struct Router {
    uint32_t node;
    uint16_t ports;  // IBA ports 1..ports (port 0, the management port, carries no flits)
  };
  struct Edge {
    uint32_t sw_node;
    uint16_t sw_port;
    uint32_t ca_node;  // the channel adapter at the far end
  };
  struct Options {
    FlitConfig flit;
    std::vector<uint8_t> vl_classes = {2, 1};  // by data VL, the last repeating; VL15 is class 0
    std::array<uint8_t, 16> sl2vl{};             // the VL a packet leaves an edge on
    double unreserved_rate = 1e9;              // b/s: the Vtick rate of packets that reserved none
    // unreserved offered or last: by flow, its offered rate per phase, {end ps, b/s} in time
    // order (the last entry runs to the end); a flow with none, or a phase at 0 b/s, takes
    // unreserved_rate.
    std::vector<std::vector<std::pair<uint64_t, double>>> offered_bps;
    // nic_vtick or router_vtick frame: by flow, its frame period in ps (0: not a video flow).
    std::vector<uint64_t> frame_period_ps;
  };

  SC_HAS_PROCESS(FlitFabric);
  FlitFabric(sc_core::sc_module_name name, const Options& opt, const std::vector<Router>& routers,
             const std::vector<Edge>& edges, ib::PacketPool& packets, link::PayloadPool& payloads, sim::Probe& probe);

  // Cables between two routers (inside the flit network).
  void connect(uint32_t sw_a, uint16_t port_a, uint32_t sw_b, uint16_t port_b);
  // The route of stage 2: at switch `sw`, packets to channel adapter `ca` leave by `port`.
  void set_route(uint32_t sw, uint32_t ca, uint16_t port);
  // The channel adapter that LIDs lid .. lid + count - 1 name.
  void set_lids(uint32_t ca, uint16_t lid, uint16_t count);
  // Credits the channel adapter behind edge (sw, port) advertises for `vl`, in bytes.
  void set_peer_buffer(uint32_t sw, uint16_t port, uint8_t vl, uint32_t bytes);

  InSocket& rx(uint32_t sw, uint16_t port) { return *edge(sw, port).rx; }
  OutSocket& tx(uint32_t sw, uint16_t port) { return *edge(sw, port).tx; }
  bool is_edge(uint32_t sw, uint16_t port) const { return edge_of_.count({sw, port}) != 0; }
  // Counters of a switch port: packets in and out at edges; flits are not counted per port.
  const link::PortCounters& counters(uint32_t sw, uint16_t port) const;

  const FlitNetwork& network() const { return net_; }
  uint64_t packets_held() const { return held_; }
  // The deadlock watch: when the flit network last moved a flit, and whether it holds any.
  uint64_t last_progress_ps() const { return progress_ps_; }
  bool holds_flits() const { return !net_.idle(); }
  // Where flits wait: "switch/port VCn: k flits", for a report.
  std::vector<std::string> occupied_vcs(const std::vector<std::string>& node_names, size_t most) const;

 private:
  struct EdgePort {
    uint32_t sw_node, ca_node;
    uint16_t sw_port;
    uint32_t flit_node;  // its flit source and sink in net_
    std::unique_ptr<InSocket> rx;
    std::unique_ptr<OutSocket> tx;
    link::TxCredits credits;           // the channel adapter's receive buffer
    std::deque<ib::Packet*> out;       // delivered, waiting for credits
    std::deque<uint64_t> out_head_ps;  // when each one's header flit arrived
  };
  EdgePort& edge(uint32_t sw, uint16_t port) { return edges_.at(edge_of_.at({sw, port})); }
  tlm::tlm_sync_enum on_rx(int e, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum on_tx_bw(int e, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void tick();
  void send_out(EdgePort& e, uint64_t now_ps);
  void tail_injected(uint32_t msg, Cycle now) override;
  void delivered(uint32_t msg, Cycle now) override;
  uint8_t class_of(const ib::Packet& p) const;
  static uint32_t connection_of(const ib::Packet& p);
  // The rate a packet's flits are charged at (b/s): its reservation, else its flow's offered
  // rate (unreserved offered or last), else unreserved_rate.
  double vtick_rate(const ib::Packet& p, uint64_t now_ps) const;
  // A video packet's Vtick at its frame's own rate (StreamVtick::frame), in ps; 0 when the
  // packet carries no frame of a flow with a frame period or reserved no rate.
  uint64_t frame_vtick_ps(const ib::Packet& p, uint32_t flits);

  Options opt_;
  uint64_t cycle_ps_;
  ib::PacketPool& packets_;
  link::PayloadPool& payloads_;
  sim::Probe& probe_;
  FlitNetwork net_;
  std::map<uint32_t, uint32_t> router_of_;                     // switch node -> flit node
  std::map<std::pair<uint32_t, uint16_t>, size_t> edge_of_;    // (switch, port) -> edges_
  std::map<uint32_t, size_t> edge_of_ca_;                      // channel adapter -> edges_
  std::map<uint16_t, std::pair<uint32_t, uint16_t>> lids_;     // first LID -> (channel adapter, count)
  std::vector<uint32_t> switch_of_flit_node_;                  // flit node -> switch node (edges: ~0)
  std::vector<EdgePort> edges_;
  std::vector<size_t> edge_of_flit_node_;                      // flit node -> edges_ (routers: ~0)
  std::map<std::pair<uint32_t, uint16_t>, link::PortCounters> counters_;
  std::vector<ib::Packet*> packet_of_;                         // by message id
  // By flow: the frame whose Vtick was computed last, and that Vtick (a frame's packets reach
  // the edge in order, its first one, full-sized, first).
  std::vector<std::pair<uint32_t, uint64_t>> frame_vtick_;
  uint64_t held_ = 0;
  sc_core::sc_event wake_;
  uint64_t progress_ps_ = 0;
  uint64_t activity_ = 0;
};

}  // namespace ibvp::flit
