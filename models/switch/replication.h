#pragma once
// Multicast replication inside the switch (seed 000 Sec. 3.6.1; IBA 18.2.4.3.2): how the copies
// of a packet whose DLID is an MLID leave the outputs its MFT entry names. The switch's
// methods that do it live in replication.cpp; this header holds the choices and the state.
//
//  - synchronous: all copies leave together. Each copy is at the front of its output VL (ahead
//    of unicast); when an output's VL arbiter chooses that VL, the output is reserved for
//    multicast and sends nothing else. A packet starts when every output of its entry is
//    reserved, idle and has credits for it; among multicasts the one first in
//    multicast_order (FCFS by routing time, or round robin over input ports) goes first. The
//    order is one for the whole switch, so two multicasts never wait for each other.
//  - asynchronous: each copy is a request of its own output and leaves when that output can
//    (VL arbitration, request order, credits); the packet stays in its input buffer, counted
//    down per copy (the paper's per-VL counter), until the last copy's tail has left. With
//    multicast_priority the copies go ahead of the output VL's unicast requests (Sec. 5.2:
//    "we give multicast traffic higher priority over unicast traffic in reserving the
//    output VLs"), behind earlier copies; without it they queue as unicast does.
//  - central_buffer: each copy is written into a multicast buffer of its output
//    (multicast_buffer_bytes) when it has room; the input buffer frees (and its credit
//    returns) once every copy is written and the tail is in. Copies in a central buffer go
//    ahead of the output's unicast requests.
#include <cstdint>
#include <deque>
#include <vector>

namespace ibvp::ib { struct Packet; }

namespace ibvp::sw {

enum class Replication : uint8_t { synchronous, asynchronous, central_buffer };
const char* replication_name(Replication r);

enum class MulticastOrder : uint8_t { fcfs, round_robin };
const char* multicast_order_name(MulticastOrder o);

// What a request at an output is.
enum class McKind : uint8_t {
  unicast = 0,
  async_copy,    // asynchronous: one copy, its input held until the last copy leaves
  sync_copy,     // synchronous: leaves only with all its siblings
  central_copy,  // in the output's central multicast buffer; holds no input
};

constexpr uint32_t kNoHold = ~uint32_t{0};

// One multicast packet in an input buffer, while copies of it have not all left (or, with
// the central buffer, not all been written).
struct McHold {
  uint32_t remaining = 0;  // copies still to leave (to be written, with the central buffer)
  uint64_t latest_end_ps = 0;
  uint64_t seq = 0;        // routing order: FCFS among synchronous multicasts
  uint64_t tail_ps = 0;
  uint32_t blocks = 0;
  uint16_t in_port = 0;
  uint8_t in_vl = 0;
  std::vector<uint16_t> outs;  // synchronous: the outputs of its copies (capacity reused)
};

// A copy waiting for room in an output's central buffer.
struct McPending {
  ib::Packet* packet = nullptr;
  uint32_t hold = kNoHold;
  uint64_t arrived_ps = 0;  // its head's arrival in the switch (the switch lifetime)
};

// Per output port.
struct McPort {
  uint32_t sync_waiting = 0;         // synchronous copies queued here
  // Synchronous: the VL arbiter chose a multicast VL here, so the output is held for the
  // first multicast at it until that one starts (seed 000 Sec. 3.6.1's reservation).
  bool reserved = false;
  uint32_t central_used_blocks = 0;  // central multicast buffer in use
  std::deque<McPending> central_pending;
};

}  // namespace ibvp::sw
