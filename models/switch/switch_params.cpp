#include "models/switch/switch_params.h"

#include "models/link/link_params.h"
#include "models/switch/switch.h"

namespace ibvp::sw {

const sim::ParamGroup& ecn_params() {
  static const sim::ParamGroup group = [] {
    sim::GroupBuilder<EcnConfig> b("ecn", "Congestion marking (FECN) of an input-buffered switch, seed 004 Sec. 5.");
    const MarkingPolicy all[] = {MarkingPolicy::none, MarkingPolicy::naive, MarkingPolicy::input_triggered,
                                 MarkingPolicy::input_output_triggered};
    std::vector<std::pair<std::string, MarkingPolicy>> names;
    for (MarkingPolicy p : all) names.emplace_back(marking_policy_name(p), p);
    b.choice("policy", &EcnConfig::policy, names,
             "none; naive (packets in a full input buffer); input_triggered (a full input buffer marks "
             "the packets leaving for its outputs, cnt1/cnt2); input_output_triggered (also when more "
             "than output_threshold packets wait for one output).");
    b.integer("output_threshold", &EcnConfig::output_threshold, "packets",
              "input_output_triggered: packets waiting for one output that trigger marking.")
        .range(1, 1 << 20);
    b.integer("max_packet_bytes", &EcnConfig::max_packet_bytes, "bytes",
              "A buffer is full when it has no room left for a packet of this size; 0: the largest packet "
              "of the run's flows.")
        .range(0, 1 << 20);
    return b.build();
  }();
  return group;
}

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
    b.object("ecn", &SwitchConfig::ecn, ecn_params(), "Congestion marking.").defaults_to("policy none");
    return b.build();
  }();
  return group;
}

}  // namespace ibvp::sw
