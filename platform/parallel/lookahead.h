#pragma once
// How far the ranks of a split run may run ahead of each other (docs/parallel.md, "Why no
// rank receives a message in its past"): the smallest delay, over the cut cables only,
// between a rank's action and the action of another rank it causes (event_order:
// canonical).
#include <cstdint>

#include "platform/parallel/partition.h"
#include "platform/scenario/scenario.h"

namespace ibvp::parallel {

// Per direction of every cut cable, from switch S to switch R:
//  - a data packet S sends is R's action when its head has passed R's pipeline: propagation
//    + pipeline_delay (a VL15 packet is R's action at its head: propagation only);
//  - a credit R returns to S for it is announced when R starts sending the packet on (or
//    across its crossbar into an output buffer) and lands when the tail has left plus the
//    propagation: at least propagation + the serialization of the smallest credited packet
//    the scenario makes, at R's fastest port. A packet dropped at R frees its space at
//    once, so with any finite lifetime (which drops at any time) the credit's lead is the
//    propagation only.
// Partition::kNoCut when nothing is cut.
uint64_t lookahead_ps(const Scenario& s, const Partition& part);

// The smallest data packet (bytes on the wire, LRH through VCRC) any flow, the traffic
// section or the trace of `s` makes: the smallest payload plus LRH, BTH, ICRC and VCRC. 0
// when nothing makes credited packets.
uint32_t smallest_credited_packet(const Scenario& s);

}  // namespace ibvp::parallel
