#pragma once
// What a router or an endpoint hands to the cables (FlitNetwork implements it): a flit onto
// one VC of an output channel, and a credit back to the sender of an input channel.
#include <cstdint>

#include "models/flit/flit.h"

namespace ibvp::flit {

class Wire {
 public:
  virtual ~Wire() = default;
  // A flit leaves `node`'s `port` on `vc` at cycle `depart` (it arrives a cable delay later).
  virtual void send_flit(uint32_t node, uint16_t port, uint16_t vc, const Flit& f, Cycle depart) = 0;
  // Input VC `vc` of `node`'s `port` freed one slot of `pool`, taken by a flit of class `cls`.
  virtual void send_credit(uint32_t node, uint16_t port, uint16_t vc, Pool pool, uint8_t cls, Cycle depart) = 0;
};

}  // namespace ibvp::flit
