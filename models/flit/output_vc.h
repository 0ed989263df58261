#pragma once
// A sender's view of one VC of its output channel, that is of one input VC at the far end
// of the cable (a router's output VC or a source's): which message holds it, and the
// credits of that VC's two buffers (credit-based flow control per VC; Sec. 3.2.1's extra
// buffer has credits of its own). Credits come back tagged with the class of the flit that
// freed them, so the sender knows which classes still sit in the far regular buffer: that is
// how it decides that a higher-priority header goes to the extra buffer ("if the input
// buffer is used by a lower priority message, a higher priority message is sent to the
// extra buffer").
#include <array>
#include <cstdint>

#include "models/flit/flit.h"

namespace ibvp::flit {

struct OutputVc {
  uint32_t owner = kNone;        // message sending into the regular buffer (head sent .. tail sent)
  uint32_t extra_owner = kNone;  // message sending into the extra buffer
  std::array<uint32_t, 2> credits{};  // [Pool]: free slots of the far buffers
  std::array<uint32_t, kMaxClasses> in_regular{};  // flits per class sent to the far regular buffer, credit not back
  uint32_t in_extra = 0;         // flits sent to the far extra buffer, credit not back

  void init(uint32_t buffer_flits) {
    credits = {buffer_flits, buffer_flits};
  }
  bool free() const { return owner == kNone && extra_owner == kNone; }
  // Free and its far buffers empty: a message taking it queues behind nothing.
  bool empty(uint32_t buffer_flits) const {
    return free() && credits[0] == buffer_flits && credits[1] == buffer_flits;
  }
  // Whether the far regular buffer holds a flit of a lower priority than class c.
  bool regular_holds_below(uint8_t c) const {
    for (uint32_t k = c + 1u; k < kMaxClasses; ++k)
      if (in_regular[k]) return true;
    return false;
  }
  // The far extra buffer takes one message at a time, and only once it is empty.
  bool extra_free() const { return extra_owner == kNone && in_extra == 0; }

  void sent(const Flit& f) {
    --credits[static_cast<size_t>(f.pool)];
    if (f.pool == Pool::extra) ++in_extra;
    else ++in_regular[f.cls];
  }
  void credit_back(Pool pool, uint8_t cls) {
    ++credits[static_cast<size_t>(pool)];
    if (pool == Pool::extra) --in_extra;
    else --in_regular[cls];
  }
};

}  // namespace ibvp::flit
