#pragma once
// Flits and messages of seed 003's wormhole router (Sec. 3, 4.1): a message is cut into
// flits of `width_bits` (128 in the paper); its header flit carries the routing information
// and the connection's Vtick, middle flits follow it through the path the header set up,
// and the tail flit releases that path. Sec. 3.2.1 adds dummy tail and header flits, made
// by a router that preempts a message: they carry no payload and only close and reopen
// the preempted message's path.
//
// Pure C++ and cycle-based: a cycle is one flit time on a link (FlitConfig::flit_cycle_ps).
#include <cstdint>

namespace ibvp::flit {

using Cycle = uint64_t;
constexpr uint32_t kNone = ~uint32_t{0};
// Traffic classes, 0 the highest priority (seed 003 Sec. 4.2: control, real time, best
// effort). A lower class number preempts a higher one.
constexpr uint8_t kMaxClasses = 4;

enum class FlitKind : uint8_t { head, body, tail, head_tail };
inline bool is_head(FlitKind k) { return k == FlitKind::head || k == FlitKind::head_tail; }
inline bool is_tail(FlitKind k) { return k == FlitKind::tail || k == FlitKind::head_tail; }

// Which buffer of an input VC a flit is written into (Sec. 3.2.1): the regular VC buffer or
// the extra buffer that diverts a higher-priority message while the regular one holds a
// lower-priority message.
enum class Pool : uint8_t { regular = 0, extra = 1 };

struct Flit {
  uint32_t msg = kNone;  // message id (FlitNetwork::message)
  uint32_t seq = 0;      // payload flits: index in the message; dummies: the next payload index
  FlitKind kind = FlitKind::body;
  bool dummy = false;    // Sec. 3.2.1 dummy tail or header: no payload
  Pool pool = Pool::regular;  // the buffer it is written into at the receiving input VC
  uint8_t cls = 0;       // traffic class (priority) of its message
};

// What a router's preemption and acceleration did, per class of the message they acted on
// (summary.json's flit_router block; docs/seed003.md uses them to read Fig. 7).
struct ClassCounts {
  uint64_t flits_crossed = 0;  // payload flits of the class through a crossbar (dummies not)
  // Sec. 3.2.1: a message of the class gave way to a higher-priority header in the extra
  // buffer (a dummy tail closed its path, or its header gave back an output VC it had not
  // yet crossed to); `preempting`: headers of the class that made a lower one give way.
  uint64_t preempted = 0, preempting = 0;
  // Sec. 3.2.2: a message of the class was accelerated (its Accelerate flag set) because a
  // higher-priority header waited for it in the extra buffer of its input VC (Fig. 2a: it
  // was preempted, or only its tail was left), or because it held the output VC such a
  // header wanted when that output had no free VC (Fig. 2b).
  uint64_t accelerated_preempted = 0, accelerated_blocking = 0;

  ClassCounts& operator+=(const ClassCounts& o) {
    flits_crossed += o.flits_crossed;
    preempted += o.preempted;
    preempting += o.preempting;
    accelerated_preempted += o.accelerated_preempted;
    accelerated_blocking += o.accelerated_blocking;
    return *this;
  }
};

// A message as the network sees it, with the times the tests and metrics read.
struct Message {
  uint32_t src = 0, dst = 0;  // endpoints
  uint8_t cls = 0;
  uint32_t flits = 0;         // payload flits, header and tail included
  uint32_t connection = 0;    // VirtualClock slot (a stream, or one per class for best effort)
  uint64_t vtick_ps = 1;      // VirtualClock Vtick: one flit's time at the reserved rate (Sec. 3.1)
  // The QoS NIC's Vtick for this message (FlitConfig::nic_vtick frame: its frame's rate), 0
  // when the NIC charges vtick_ps as the routers do.
  uint64_t nic_vtick_ps = 0;
  // No reserved rate (best effort): Sec. 4.2 gives only the real-time messages a Vtick, so
  // with FlitConfig::unreserved last its flits go after every reserved connection's.
  bool unreserved = false;
  Cycle created = 0;          // queued at its source
  Cycle tail_injected = kNone;   // its tail flit left the source
  Cycle head_injected = kNone;   // its header flit left the source
  Cycle head_delivered = kNone;  // its header flit reached the destination
  Cycle tail_delivered = kNone;  // its tail flit reached the destination: delivered
  uint32_t flits_delivered = 0;
  uint32_t preemptions = 0;   // dummy tails made for it (Sec. 3.2.1)
  bool out_of_order = false;  // a payload flit arrived before an earlier one of its message
};

}  // namespace ibvp::flit
