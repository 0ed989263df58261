#pragma once
// A fabric of seed 003 flit routers and endpoints joined by cables, stepped one flit cycle at
// a time (deterministic: a fixed order within each cycle, no randomness). Each cable carries
// flits one way and credits the other, both `link_delay_cycles` long; a cable carries at most
// one flit per cycle, which the senders guarantee (one crossbar output or one source flit per
// cycle). This is the model the tests and seed 003's single-router and mesh studies run.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/flit/endpoint.h"
#include "models/flit/router.h"

namespace ibvp::flit {

class FlitNetwork : private Wire {
 public:
  explicit FlitNetwork(const FlitConfig& cfg);

  // Building: endpoints and routers are nodes; router ports count from 0.
  uint32_t add_endpoint();
  uint32_t add_router(uint16_t ports);
  void connect(uint32_t a, uint16_t port_a, uint32_t b, uint16_t port_b);
  void set_route(uint32_t router, uint32_t dst_endpoint, uint16_t out_port);
  // One router with an endpoint on each port, routed: endpoints 0..ports-1 on ports 0..ports-1.
  static std::unique_ptr<FlitNetwork> single_router(const FlitConfig& cfg, uint16_t ports);

  // Queues a message at `src`, created at cycle `at` (not before now). Returns its id.
  // vtick_ps: one flit's time at the connection's reserved rate (0: at the link rate).
  // unreserved: the message reserved no rate (Message::unreserved). nic_vtick_ps: the QoS
  // NIC's Vtick for it (Message::nic_vtick_ps; 0: vtick_ps).
  uint32_t send(uint32_t src, uint32_t dst, uint8_t cls, uint32_t flits, Cycle at, uint32_t connection = 0,
                uint64_t vtick_ps = 0, bool unreserved = false, uint64_t nic_vtick_ps = 0);
  // A delivered message's id may be reused (its flits are all consumed: dummies travel ahead
  // of its tail). The fabric adapter releases each one, so a run's memory does not grow with
  // its length; the tests keep theirs to read afterwards.
  void release(uint32_t msg) { free_.push_back(msg); }
  void step();
  void run_until(Cycle end) {
    while (now_ < end) step();
  }
  // Runs until every message is delivered or `limit` cycles have passed; true if delivered.
  bool drain(Cycle limit);

  // Every endpoint reports its tails to `l` (the fabric adapter, models/flit/flit_fabric.h).
  void set_listener(FlitListener* l);
  // Called with every flit a node puts on a cable (node, port, VC, flit, departure cycle):
  // a trace for tests (what a source's wire carried, cycle by cycle).
  using FlitTrace = std::function<void(uint32_t, uint16_t, uint16_t, const Flit&, Cycle)>;
  void set_flit_trace(FlitTrace t) { trace_ = std::move(t); }
  bool is_endpoint(uint32_t node) const { return node < endpoints_.size() && endpoints_[node] != nullptr; }
  // Nothing queued, buffered or on a cable: stepping would change nothing.
  bool idle() const;
  // An idle network skips to cycle `c` (the next cycle it steps is c).
  void skip_to(Cycle c);
  // Grows with every flit that a source sends, a router's crossbar passes or a sink takes.
  uint64_t activity() const;

  Cycle now() const { return now_; }
  const FlitConfig& config() const { return cfg_; }
  const std::vector<Message>& messages() const { return msgs_; }
  const Message& message(uint32_t id) const { return msgs_.at(id); }
  FlitRouter& router(uint32_t node) { return *routers_.at(node); }
  const FlitRouter& router(uint32_t node) const { return *routers_.at(node); }
  FlitEndpoint& endpoint(uint32_t node) { return *endpoints_.at(node); }

  // Conservation (the tests check them every cycle).
  uint64_t payload_flits_injected() const;
  uint64_t payload_flits_delivered() const;
  uint64_t payload_flits_buffered() const;   // in router input buffers
  uint64_t payload_flits_on_cables() const;
  uint64_t dummies_made() const;
  // Preemptions and accelerations of every router, per class (flit.h).
  ClassCounts class_counts(uint8_t cls) const;
  uint64_t dummies_delivered() const;
  // Messages whose flits reached their sink out of sequence (FlitEndpoint; 0 unless wrong).
  uint64_t messages_out_of_order() const;
  uint64_t dummies_buffered() const;
  uint64_t dummies_on_cables() const;
  // Per cable direction, VC and buffer: sender's credits + flits on the cable + flits in the
  // far buffer + credits on their way back = the buffer depth. Empty if it holds everywhere,
  // else where it does not.
  std::string credit_violation() const;

 private:
  struct InFlight {
    Cycle arrive;
    uint16_t vc;
    Flit flit;
  };
  struct CreditMsg {
    Cycle arrive;
    uint16_t vc;
    Pool pool;
    uint8_t cls;
  };
  // One direction of a cable: flits from (from, from_port) to (to, to_port), credits back.
  struct Channel {
    uint32_t from = 0, to = 0;
    uint16_t from_port = 0, to_port = 0;
    std::deque<InFlight> flits;
    std::deque<CreditMsg> credits;
  };
  void send_flit(uint32_t node, uint16_t port, uint16_t vc, const Flit& f, Cycle depart) override;
  void send_credit(uint32_t node, uint16_t port, uint16_t vc, Pool pool, uint8_t cls, Cycle depart) override;
  int& out_channel(uint32_t node, uint16_t port) { return out_[node].at(port); }
  int& in_channel(uint32_t node, uint16_t port) { return in_[node].at(port); }

  FlitConfig cfg_;
  std::vector<Message> msgs_;
  std::vector<uint32_t> free_;  // released message ids
  std::vector<std::unique_ptr<FlitRouter>> routers_;      // by node (null for endpoints)
  std::vector<std::unique_ptr<FlitEndpoint>> endpoints_;  // by node (null for routers)
  std::vector<std::vector<int>> out_, in_;                // [node][port] -> channel, -1 unconnected
  std::vector<Channel> channels_;
  Cycle now_ = 0;
  FlitTrace trace_;
};

}  // namespace ibvp::flit
