#pragma once
// Which VC of an output channel a header takes (stage 3 of Fig. 1, and a source's choice),
// for the three designs of Sec. 3.2:
//  - TR and NP: a free VC of the message's class (VCs split statically between classes);
//  - P: a free VC of its class, else any free VC (Sec. 4.2: "any type of traffic can use
//    any VC"). The far buffer is the extra one when the far regular buffer still holds
//    lower-priority flits and the extra buffer is free (Sec. 3.2.1).
//  - P with no free VC: a VC held by a lower-priority message. A source may then send into
//    that VC's extra buffer at once (its flits interleave on the cable, where Sec. 3.2.1's
//    extra buffer sorts them). A router output may not (Fig. 2b: m2's and m3's flits must
//    not interleave in the output buffer): it names the holder, whose input VC is
//    accelerated (Sec. 3.2.2), and the header retries.
#include <cstdint>
#include <vector>

#include "models/flit/flit_config.h"
#include "models/flit/output_vc.h"

namespace ibvp::flit {

struct VcChoice {
  uint16_t vc = 0;
  Pool pool = Pool::regular;
  bool found = false;
  uint16_t blocker = 0;      // !found: a VC held by a lower-priority message (P)
  bool has_blocker = false;
};

inline VcChoice choose_vc(const FlitConfig& cfg, const std::vector<OutputVc>& vcs, uint8_t cls,
                          const std::vector<Message>& msgs, bool source) {
  VcChoice c;
  const bool p = cfg.variant == Variant::preemptive;
  auto take = [&](uint16_t v) {
    c.vc = v;
    c.found = true;
    c.pool = p && vcs[v].regular_holds_below(cls) && vcs[v].extra_free() ? Pool::extra : Pool::regular;
  };
  const uint16_t first = cfg.class_first_vc(cls);
  const uint16_t end = static_cast<uint16_t>(first + cfg.class_vc_count(cls));
  const uint32_t depth = cfg.vc_buffer_flits;
  // An empty VC first, so that a message does not queue behind another one's flits in the
  // far buffer (head-of-line blocking inside a VC); then any free one.
  for (bool want_empty : {true, false}) {
    for (uint16_t v = first; v < end && v < vcs.size(); ++v)
      if (want_empty ? vcs[v].empty(depth) : vcs[v].free()) {
        take(v);
        return c;
      }
    if (!p) continue;
    for (uint16_t v = 0; v < vcs.size(); ++v)
      if (want_empty ? vcs[v].empty(depth) : vcs[v].free()) {
        take(v);
        return c;
      }
  }
  if (!p) return c;
  for (uint16_t v = 0; v < vcs.size(); ++v) {
    const OutputVc& o = vcs[v];
    if (o.owner == kNone || msgs[o.owner].cls <= cls) continue;
    if (source && o.extra_owner == kNone && o.extra_free()) {
      c.vc = v;
      c.pool = Pool::extra;
      c.found = true;
      return c;
    }
    if (!c.has_blocker) {
      c.blocker = v;
      c.has_blocker = true;
    }
  }
  return c;
}

}  // namespace ibvp::flit
