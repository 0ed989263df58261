#pragma once
// A channel-adapter port for fabric-only studies: it injects packets from traffic sources
// and sinks what arrives. The transmit side is a real CA port: SL2VL, per-VL credits from
// the switch it is cabled to, IBA VL arbitration, static IPD per flow. The receive side
// consumes each packet when its tail arrives and returns the credit at once (an ideal sink:
// host memory is never the bottleneck here). The programmable HCA attaches at the same
// sockets and replaces this model when firmware matters.
#include <array>
#include <memory>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/passthrough_target_socket.h>
#include <vector>

#include "models/endpoint/traffic_source.h"
#include "models/ib/packet.h"
#include "models/link/direct_port.h"
#include "models/link/fabric_payload.h"
#include "models/link/link_rate.h"
#include "models/link/port_state.h"
#include "models/link/vl_arbiter.h"
#include "models/sim/observer.h"
#include "models/sim/timed_queue.h"

namespace ibvp::ep {

struct EndpointConfig {
  uint8_t data_vls = 1;
  uint32_t vl_buffer_bytes = 4 * 2112;   // receive buffer per data VL
  uint32_t vl15_buffer_bytes = 2 * 320;
  link::VlArbConfig vlarb = link::VlArbConfig::round_robin(1);
  std::array<uint8_t, 16> sl2vl{};       // SL -> VL on the CA port
};

class Endpoint : public sc_core::sc_module, public link::DirectPort {
 public:
  tlm_utils::simple_initiator_socket<Endpoint> tx;
  // A passthrough socket spawns no thread (simple_target_socket spawns one per socket that
  // registers only nb_transport_fw: a stack and a guard mapping each, which large fabrics
  // run out of; ../shared/SYSTEMC_NOTES.md).
  tlm_utils::passthrough_target_socket<Endpoint> rx;

  SC_HAS_PROCESS(Endpoint);
  Endpoint(sc_core::sc_module_name name, uint32_t node, uint16_t lid, const EndpointConfig& cfg,
           const link::LinkRate& rate, ib::PacketPool& packets, link::PayloadPool& payloads, sim::Probe& probe);

  void set_peer_buffer(uint8_t vl, uint32_t bytes) { credits_.set_limit(vl, bytes / ib::kCreditBlockBytes); }
  // The cable to `peer_port` of `peer` (its switch), `propagation_ps` long, crossed by direct
  // calls instead of through the sockets and the Link while nothing taps it
  // (link/direct_port.h; the builder sets and clears it).
  void set_direct_peer(link::DirectPort* peer, uint16_t peer_port, uint64_t propagation_ps) {
    peer_ = peer;
    peer_port_ = peer_port;
    peer_propagation_ps_ = propagation_ps;
  }
  void clear_direct_peer() { peer_ = nullptr; }
  bool direct_peer() const { return peer_ != nullptr; }
  // Its agenda's id in the canonical event order (sim::Scheduler): the fabric builder's.
  void set_order_id(uint32_t id) { agenda_.set_source_id(id); }
  // Split runs (docs/parallel.md): the process that does not run this model marks it
  // remote; the one that does hands it the actions other processes send it.
  sim::TimedQueue& agenda() { return agenda_; }
  // Reprograms the CA port's VL arbitration table (IBA 7.6.9; the subnet manager may do so
  // at any time): the next choice follows the new table, from its first entry.
  void set_vlarb(const link::VlArbConfig& cfg) { arbiter_ = link::VlArbiter(cfg); }
  const link::VlArbConfig& vlarb() const { return arbiter_.config(); }
  // The endpoint does not own sources; the workload that made them outlives the simulation.
  void add_source(TrafficSource* s);

  uint32_t node() const { return node_; }
  uint16_t lid() const { return lid_; }
  const link::PortCounters& counters() const { return counters_; }
  uint64_t injected() const { return injected_; }
  uint64_t delivered() const { return delivered_; }
  void finish();

 private:
  struct SourceState {
    TrafficSource* source;
    uint8_t sl;  // of its next packet
    uint8_t vl;  // the VL that SL maps to: the list of by_vl_ it is in
    uint32_t header_bytes;  // wire bytes of its packets less payload and pad
    uint64_t next_allowed_ps = 0;  // static rate: earliest start of its next packet
    uint32_t psn = 0;
  };
  // kCredit (canonical event order only): a credit update arrives from the cable.
  enum ActionKind : uint16_t { kWake, kHead, kDeliver, kCredit };

  tlm::tlm_sync_enum on_rx(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum on_tx_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  // What on_rx and on_tx_bw do, reached from them or directly from the switch (DirectPort).
  void receive(uint16_t port, ib::Packet* p, uint64_t delay_ps, uint64_t duration_ps) override;
  void credit_in(uint16_t port, uint8_t vl, uint32_t blocks, uint64_t delay_ps) override;
  void dispatch(const sim::Action& a);
  void try_send();
  // The source that VL `vl` would send next (round robin among ready ones), or -1.
  int ready_source(uint8_t vl, uint64_t now, uint64_t& earliest) const;
  void send(size_t source_index, uint32_t payload_bytes);
  static uint32_t wire_bytes(const SourceState& s, uint32_t payload) { return s.header_bytes + payload + (4 - payload % 4) % 4; }
  void head_arrived(ib::Packet* p);
  void credit_arrived(uint8_t vl, uint32_t blocks, uint64_t at_ps);
  void deliver(ib::Packet* p);
  void schedule_wake(uint64_t when_ps);
  uint8_t vl_of(const TrafficSource& s, uint8_t sl) const;
  void requeue(size_t source_index);

  uint32_t node_;
  uint16_t lid_;
  EndpointConfig cfg_;
  link::LinkRate rate_;
  ib::PacketPool& packets_;
  link::PayloadPool& payloads_;
  sim::Probe& probe_;
  sim::TimedQueue agenda_;
  link::VlArbiter arbiter_;
  link::TxCredits credits_;
  link::RxBuffers buffers_;
  link::CreditWaitClock credit_wait_;
  link::PortCounters counters_;
  std::vector<SourceState> sources_;
  std::array<std::vector<uint32_t>, ib::kMaxVls> by_vl_;  // source indices per VL
  std::array<uint32_t, ib::kMaxVls> rr_{};               // round-robin position per VL
  uint64_t busy_until_ = 0;      // the transmitter sends until then
  bool credit_blocked_ = false;  // a ready source waits for credits
  uint64_t wake_ps_ = ~uint64_t{0};  // earliest pending kWake
  uint64_t injected_ = 0;
  uint64_t delivered_ = 0;
  uint64_t created_ = 0;  // packets made here: the count in a canonical packet id
  // The switch port at the other end when the cable is crossed by direct calls, else null.
  link::DirectPort* peer_ = nullptr;
  uint16_t peer_port_ = 0;
  uint64_t peer_propagation_ps_ = 0;
};

}  // namespace ibvp::ep
