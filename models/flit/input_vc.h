#pragma once
// One input VC of a flit router: its flit buffer, the extra buffer of the preemptive router
// (Sec. 3.2.1), and what the VC is doing with the message at the front of each.
#include <cstdint>
#include <deque>
#include <vector>

#include "models/flit/flit.h"

namespace ibvp::flit {

struct BufferedFlit {
  Flit flit;
  Cycle arrived = 0;       // stage 1 (synchronise, demultiplex, decode)
  bool generated = false;  // a dummy this router made: it took no credit upstream
};

// Where a message at the front of a buffer goes: set by the header's VC allocation
// (stage 3), cleared when its tail (or dummy tail) crosses the crossbar.
struct VcRoute {
  bool allocated = false;
  bool head_crossed = false;
  uint16_t out_port = 0;
  uint16_t out_vc = 0;
  Pool pool = Pool::regular;  // the far buffer its flits go to
  Cycle allocated_at = 0;
  uint32_t msg = kNone;
};

// Where a message whose path a dummy tail closed here goes on (Sec. 3.2.1's history stack):
// its earlier flits wait in that output VC's far buffer, so its dummy header must reopen the
// path through the same output VC and buffer. Another VC would let the next router forward
// its later flits past its earlier ones (two VCs there, each a message of its own).
struct ResumeRoute {
  uint32_t msg = kNone;  // kNone: no preempted message of this buffer is in the middle
  uint16_t out_port = 0;
  uint16_t out_vc = 0;
  Pool pool = Pool::regular;
};

struct InputVc {
  std::deque<BufferedFlit> regular, extra;
  VcRoute regular_route, extra_route;
  // Messages of this input VC between a dummy tail and their real tail: several, when
  // another message took the output VC while one was preempted and was preempted in turn.
  std::vector<ResumeRoute> resumes;
  // Sec. 3.2.1: the extra buffer's message goes once the regular message has closed its path
  // (its real or dummy tail crossed); `serving_extra` from then until its tail crosses.
  bool preempt_pending = false;
  bool serving_extra = false;
  // Sec. 3.2.2: the flits of the message at the front go first at the crossbar input.
  bool accelerate = false;

  const ResumeRoute* resume_of(uint32_t msg) const {
    for (const ResumeRoute& r : resumes)
      if (r.msg == msg) return &r;
    return nullptr;
  }
  uint32_t flits() const { return static_cast<uint32_t>(regular.size() + extra.size()); }
};

}  // namespace ibvp::flit
