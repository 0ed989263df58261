#pragma once
// Models report what happens to observers; they never print or write files. The platform
// attaches observers (packet records, counters over time, captures) through a Probe that
// every model of one simulation shares.
#include <cstdint>
#include <systemc>
#include <vector>

#include "models/ib/packet.h"

namespace ibvp::sim {

class FabricObserver {
 public:
  virtual ~FabricObserver() = default;
  // First bit of a packet leaves its source port.
  virtual void on_inject(const ib::Packet&, uint64_t /*t_ps*/) {}
  // Tail of a packet reached its destination port (or a switch's management port 0).
  virtual void on_deliver(const ib::Packet&, uint32_t /*node*/, uint64_t /*t_ps*/) {}
  virtual void on_drop(const ib::Packet&, uint32_t /*node*/, uint64_t /*t_ps*/) {}
  // A packet occupies output `port` of `node` from start to end (switch or endpoint).
  virtual void on_transmit(uint32_t /*node*/, uint16_t /*port*/, const ib::Packet&, uint64_t /*start_ps*/,
                           uint64_t /*end_ps*/) {}
  // A switch made `extra` copies of a multicast packet besides the one it forwards (seed 000
  // Sec. 3.6.1): each copy is delivered or dropped on its own, so conservation counts them.
  virtual void on_replicate(const ib::Packet&, uint32_t /*node*/, uint32_t /*extra*/, uint64_t /*t_ps*/) {}
};

class Probe {
 public:
  void attach(FabricObserver* o) { observers_.push_back(o); }
  bool active() const { return !observers_.empty(); }

  void inject(const ib::Packet& p, uint64_t t) { for (auto* o : observers_) o->on_inject(p, t); }
  void deliver(const ib::Packet& p, uint32_t node, uint64_t t) {
    for (auto* o : observers_) o->on_deliver(p, node, t);
  }
  void drop(const ib::Packet& p, uint32_t node, uint64_t t) { for (auto* o : observers_) o->on_drop(p, node, t); }
  void replicate(const ib::Packet& p, uint32_t node, uint32_t extra, uint64_t t) {
    for (auto* o : observers_) o->on_replicate(p, node, extra, t);
  }
  void transmit(uint32_t node, uint16_t port, const ib::Packet& p, uint64_t s, uint64_t e) {
    for (auto* o : observers_) o->on_transmit(node, port, p, s, e);
  }

 private:
  std::vector<FabricObserver*> observers_;
};

}  // namespace ibvp::sim
