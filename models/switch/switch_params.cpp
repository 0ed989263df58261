#include "models/switch/switch_params.h"

#include "models/link/link_params.h"
#include "models/switch/switch.h"

namespace ibvp::sw {

const sim::ParamGroup& switch_params() {
  static const sim::ParamGroup group = [] {
    // num_ports is not here: every switch has the ports its topology node declares.
    sim::GroupBuilder<SwitchConfig> b(
        "switch", "Every switch of the fabric: input-buffered, virtual cut-through, non-multiplexed crossbar.");
    b.time("pipeline_delay", &SwitchConfig::pipeline_delay,
           "From header arrival to the output request: header decode, LFT lookup, SL2VL.");
    link::declare_port_params(b, "Input buffer per port and data VL; credits advertise it upstream.",
                              &SwitchConfig::default_sl2vl);
    b.choice("crossbar", &SwitchConfig::crossbar,
             {{crossbar_policy_name(CrossbarPolicy::fifo), CrossbarPolicy::fifo},
              {crossbar_policy_name(CrossbarPolicy::fifo_bypass), CrossbarPolicy::fifo_bypass}},
             "Which request of an output VL goes next: fifo (head only) or fifo_bypass (younger may pass a blocked head).");
    // A request counts its bypasses in 8 bits (Switch::Request::bypassed).
    b.integer("bypass_limit", &SwitchConfig::bypass_limit, "requests",
              "fifo_bypass: how often younger requests may pass one head request.")
        .range(0, 255);
    return b.build();
  }();
  return group;
}

}  // namespace ibvp::sw
