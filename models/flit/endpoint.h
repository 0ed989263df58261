#pragma once
// A processor's network interface as the flit router sees it: a source that cuts queued
// messages into flits and sends one flit per cycle on its cable, and a sink that takes every
// flit at once and returns its credit. The source is the NIC of Sec. 3.3.1 (Fig. 3): doorbell
// queues hand messages to VC buffers, and a scheduler picks among the messages that hold a VC
// and have credits (FlitConfig::nic_scheduler): the QoS NIC's control first, then its
// VirtualClock over the connections' Vticks; the highest class then the oldest; or the
// traditional NIC's oldest first. It multiplexes the wire flit by flit, or a whole message at a time
// (FlitConfig::nic_multiplexing, Fig. 9).
#include <array>
#include <cstdint>
#include <deque>
#include <tuple>
#include <vector>

#include "models/flit/flit_config.h"
#include "models/flit/output_vc.h"
#include "models/flit/wire.h"
#include "models/sched/virtual_clock.h"

namespace ibvp::flit {

// Told when a source has sent a message's tail flit and when a sink has its tail flit.
class FlitListener {
 public:
  virtual ~FlitListener() = default;
  virtual void tail_injected(uint32_t msg, Cycle now) = 0;
  virtual void delivered(uint32_t msg, Cycle now) = 0;
};

class FlitEndpoint {
 public:
  FlitEndpoint(uint32_t node, const FlitConfig& cfg, std::vector<Message>& msgs);

  uint32_t node() const { return node_; }
  void set_listener(FlitListener* l) { listener_ = l; }
  // Queues message `msg` (created at msgs[msg].created).
  // The traditional NIC (fcfs) has one doorbell queue for every class.
  void queue(uint32_t msg) {
    waiting_[cfg_.nic_scheduler == NicScheduler::fcfs ? 0 : msgs_[msg].cls].push_back(msg);
    ++queued_;
  }
  void credit(uint16_t vc, Pool pool, uint8_t cls) { vcs_[vc].credit_back(pool, cls); }
  // The sink: a flit arrives at `now`.
  void receive(uint16_t vc, const Flit& f, Cycle now, Wire& wire);
  // The source: VC allocation for waiting messages, then one flit onto the cable.
  void step(Cycle now, Wire& wire);

  const OutputVc& output(uint16_t vc) const { return vcs_[vc]; }
  uint64_t payload_flits_sent() const { return payload_sent_; }
  uint64_t payload_flits_received() const { return payload_received_; }
  uint64_t dummy_flits_received() const { return dummies_received_; }
  // Messages a flit of which arrived before an earlier one of the same message (0 unless the
  // model is wrong).
  uint64_t messages_out_of_order() const { return messages_out_of_order_; }
  size_t messages_waiting() const { return queued_ + sending_.size(); }
  // The QoS NIC's VirtualClock (nic_scheduler virtual_clock): auxVC of a connection, in ps
  // (ns with FlitConfig::vc_bits).
  uint64_t aux_vc(uint32_t connection) const { return vclock_.aux_vc(connection); }
  // The stamp a message's next flit carries in the QoS NIC (its connection's auxVC + Vtick), in
  // the same unit.
  uint64_t stamp(uint32_t msg) const { return vclock_.stamp(msgs_[msg].connection, vtick(msgs_[msg])); }

 private:
  struct Sending {
    uint32_t msg;
    uint16_t vc;
    Pool pool;
    uint32_t next = 0;  // next flit index
  };
  // The order in which the scheduler serves: the smallest key first.
  std::tuple<uint8_t, uint64_t, uint8_t, Cycle, uint32_t> key(const Sending& s) const;
  void start_sending(uint32_t msg, uint16_t vc, Pool pool, Cycle now);
  void sent_flit(const Message& m);
  // The Vtick the QoS NIC charges a flit of `m`, in the counters' unit (FlitConfig::vc_units).
  uint64_t vtick(const Message& m) const { return cfg_.vc_units(m.nic_vtick_ps ? m.nic_vtick_ps : m.vtick_ps); }
  uint32_t node_;
  const FlitConfig& cfg_;
  std::vector<Message>& msgs_;
  std::vector<OutputVc> vcs_;
  std::array<std::deque<uint32_t>, kMaxClasses> waiting_;  // per class: messages without a VC, in creation order
  size_t queued_ = 0;
  std::vector<Sending> sending_;
  // nic_multiplexing message: the message on the wire (its tail not yet sent) and the first
  // cycle it may send (after the DMA overhead).
  uint32_t on_wire_ = kNone;
  Cycle on_wire_from_ = 0;
  // nic_scheduler virtual_clock: one VirtualClock over the source's connections (unbounded:
  // Zhang's real-time term in ps; FlitConfig::vc_bits: finite counters of ns), and per
  // connection the messages it has in VC buffers.
  sched::VirtualClock vclock_;
  std::vector<uint32_t> in_buffers_;
  FlitListener* listener_ = nullptr;
  uint64_t payload_sent_ = 0, payload_received_ = 0, dummies_received_ = 0, messages_out_of_order_ = 0;
};

}  // namespace ibvp::flit
