#pragma once
// The shortest deadlock_timeout a scenario accepts (docs/architecture.md, "Deadlock").
#include <cstdint>

#include "platform/scenario/scenario.h"

namespace ibvp {

// Twice the serialization time of the run's largest packet on its slowest link. An output VL
// with packets waiting and no transmission start for this long is doing more than sending
// one packet (on its own VL, or on another VL that the arbiter chose) and waiting for the tail
// of one packet that comes in from a slower link (cut-through). Below it, the deadlock watch
// would look at outputs that are merely busy, and the run would spend a kernel slice per
// packet time on looking. The watch reports a deadlock only for outputs that can never send
// again, so the floor guards the cost and the meaning of `stuck`, not the correctness of
// the report.
uint64_t deadlock_timeout_floor_ps(const Scenario& s);

// Wire bytes of the largest packet the scenario's workload sends: flows, traffic, trace
// (UD SENDs: LRH, BTH, DETH, payload, pad, ICRC, VCRC), a perftest's MTU packets (RC with
// RETH), HCA flows cut at hca.flow_mtu.
uint32_t largest_workload_packet_bytes(const Scenario& s);

}  // namespace ibvp
