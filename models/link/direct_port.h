#pragma once
// A port that the model at a cable's other end may call directly, instead of through its
// TLM socket, the Link and this port's socket (issue 17: on large fabrics a hop's wall time
// follows the objects it touches, and the sockets and the Link were some 12 % of a hop's
// cache misses). The calls carry what the TLM transactions carry (fabric_payload.h), with
// the cable's propagation already added, as Link::forward and Link::backward add it, so a
// direct cable gives the results of a linked one. The builder makes a cable direct when
// both ends are such ports and turns it back to the Link when a tap is attached
// (Link::on_first_tap).
#include <cstdint>

#include "models/ib/packet.h"

namespace ibvp::link {

class DirectPort {
 public:
  // A packet on `port` whose head arrives `delay_ps` from now and whose tail follows
  // `duration_ps` later (nb_transport_fw, BEGIN_REQ).
  virtual void receive(uint16_t port, ib::Packet* p, uint64_t delay_ps, uint64_t duration_ps) = 0;
  // A credit update for transmitter `port` that lands `delay_ps` from now (nb_transport_bw).
  virtual void credit_in(uint16_t port, uint8_t vl, uint32_t blocks, uint64_t delay_ps) = 0;

 protected:
  ~DirectPort() = default;
};

}  // namespace ibvp::link
