#include "models/switch/switch_params.h"

#include <set>
#include <string>

#include "models/flit/flit_params.h"
#include "models/link/link_params.h"
#include "models/switch/switch.h"

namespace ibvp::sw {

const sim::ParamGroup& ecn_params() {
  static const sim::ParamGroup group = [] {
    sim::GroupBuilder<EcnConfig> b("ecn", "Congestion marking (FECN) of an input-buffered switch, seed 004 Sec. 5.");
    const MarkingPolicy all[] = {MarkingPolicy::none, MarkingPolicy::naive, MarkingPolicy::input_triggered,
                                 MarkingPolicy::input_output_triggered, MarkingPolicy::cc_annex};
    std::vector<std::pair<std::string, MarkingPolicy>> names;
    for (MarkingPolicy p : all) names.emplace_back(marking_policy_name(p), p);
    b.choice("policy", &EcnConfig::policy, names,
             "none; naive (packets in a full input buffer); input_triggered (a full input buffer marks "
             "the packets leaving for its outputs, cnt1/cnt2); input_output_triggered (also when more "
             "than output_threshold packets wait for one output); cc_annex (IBA Annex A10: an output "
             "whose queue is over threshold marks at marking_rate, as a victim only if in victim_mask).");
    b.integer("output_threshold", &EcnConfig::output_threshold, "packets",
              "input_output_triggered: packets waiting for one output that trigger marking.")
        .range(1, 1 << 20);
    b.integer("max_packet_bytes", &EcnConfig::max_packet_bytes, "bytes",
              "A buffer is full when it has no room left for a packet of this size; 0: the largest packet "
              "of the run's flows.")
        .range(0, 1 << 20);
    // The annex's Congestion Control Switch Settings, with its field widths.
    b.integer("threshold", &EcnConfig::threshold, "",
              "cc_annex: 0 marks nothing; t = 1..15 marks when more than (16 - t)/16 of one input VL buffer "
              "(vl_buffer_bytes) waits for the output VL behind the packet leaving (15: the most aggressive).")
        .range(0, 15);
    b.integer("marking_rate", &EcnConfig::marking_rate, "packets",
              "cc_annex: eligible packets left unmarked between two marked ones (0: mark every eligible "
              "packet); a countdown per output, not a random draw.");
    b.integer("packet_size", &EcnConfig::packet_size, "credits",
              "cc_annex: packets smaller than this many 64-byte credits are never marked (0: any size).");
    b.integer_list("victim_mask", &EcnConfig::victim_mask, "ports",
                   "cc_annex: ports that mark also as victims (over threshold only for lack of credits; ports a "
                   "switch does not have are ignored); "
                   "the others mark only as roots of congestion.")
        .range(1, 254);
    b.rule("threshold, marking_rate, packet_size and victim_mask are only used with policy cc_annex; "
           "victim_mask names each port once.");
    b.on_complete([](EcnConfig& c, const std::set<std::string>& given) {
      if (c.policy != MarkingPolicy::cc_annex)
        for (const char* k : {"threshold", "marking_rate", "packet_size", "victim_mask"})
          if (given.count(k))
            throw sim::ParamError(k, std::string(k) + " is only used with policy cc_annex",
                                  "remove it or set policy: cc_annex");
      std::set<uint16_t> seen;
      for (size_t i = 0; i < c.victim_mask.size(); ++i)
        if (!seen.insert(c.victim_mask[i]).second)
          throw sim::ParamError("victim_mask[" + std::to_string(i) + "]",
                                "port " + std::to_string(c.victim_mask[i]) + " is listed twice",
                                "list each port once");
    });
    return b.build();
  }();
  return group;
}

const sim::ParamGroup& lifetime_override_params() {
  static const sim::ParamGroup group = [] {
    sim::GroupBuilder<LifetimeOverride> b(
        "lifetime_override", "Lifetimes of one switch, or of one of its ports, instead of switch.hoq_life and "
                             "switch.switch_life (what the subnet manager writes to PortInfo and SwitchInfo).");
    b.string("switch", &LifetimeOverride::switch_name, "The switch, by its topology name.").require();
    b.integer("port", &LifetimeOverride::port, "", "hoq_life: only this output port (0: every port).")
        .range(0, 254);
    b.integer("vl", &LifetimeOverride::vl, "", "hoq_life: only this VL (0..15, 15 for VL15).")
        .range(0, 15)
        .defaults_to("every VL");
    b.integer("hoq_life", &LifetimeOverride::hoq_life, "code",
              "HOQLife code: 4.096 us x 2^code for 0..19, 20 and above infinite.")
        .range(0, kLifetimeCodeMax)
        .defaults_to("switch.hoq_life");
    b.integer("switch_life", &LifetimeOverride::switch_life, "code",
              "LifeTimeValue code of the whole switch: 4.096 us x 2^code for 0..19, 20 and above infinite.")
        .range(0, kLifetimeCodeMax)
        .defaults_to("switch.switch_life");
    b.rule("give hoq_life or switch_life; port and vl only with hoq_life.");
    b.on_complete([](LifetimeOverride& o, const std::set<std::string>& given) {
      if (!given.count("hoq_life") && !given.count("switch_life"))
        throw sim::ParamError("hoq_life", "an override changes nothing", "give hoq_life or switch_life");
      if (!given.count("hoq_life"))
        for (const char* k : {"port", "vl"})
          if (given.count(k))
            throw sim::ParamError(k, std::string(k) + " only selects where hoq_life applies",
                                  "give hoq_life too, or remove " + std::string(k));
      (void)o;
    });
    return b.build();
  }();
  return group;
}

const sim::ParamGroup& switch_params() {
  static const sim::ParamGroup group = [] {
    // num_ports is not here: every switch has the ports its topology node declares.
    sim::GroupBuilder<SwitchConfig> b(
        "switch", "Every switch of the fabric: input-buffered, virtual cut-through, with a non-multiplexed or "
                  "multiplexed crossbar.");
    // Real switches take 100-200 ns; 1 ms (10^4 times that) bounds typos without limiting studies.
    b.time("pipeline_delay", &SwitchConfig::pipeline_delay,
           "From header arrival to the output request: header decode, LFT lookup, SL2VL (at most 1 ms).")
        .real_range(0, 1e9);
    link::declare_port_params(b, "Input buffer per port and data VL; credits advertise it upstream.",
                              &SwitchConfig::default_sl2vl);
    // Seed 001 Sec. 2: "Buffer size (input and output)"; switch_output_buffer.cpp.
    b.integer("output_buffer_bytes", &SwitchConfig::output_buffer_bytes, "bytes",
              "Output buffer per output port and data VL (VL15's holds vl15_buffer_bytes): the crossbar moves a "
              "packet from its input buffer into it when it has room, freeing the input and returning its credit; "
              "the link drains it under VL arbitration and credits. 0: no output buffers, the crossbar feeds the "
              "link directly.")
        .range(0, 1 << 24);
    b.rule("output_buffer_bytes is 0 or at least vl_buffer_bytes (every packet an input takes must fit), and goes "
           "with scheduling fifo, ecn policy none, infinite lifetimes, multicast_replication asynchronous and "
           "model iba.");
    b.choice("crossbar", &SwitchConfig::crossbar,
             {{crossbar_name(Crossbar::non_multiplexed), Crossbar::non_multiplexed},
              {crossbar_name(Crossbar::multiplexed), Crossbar::multiplexed}},
             "non_multiplexed: an input feeds one output at a time; multiplexed (seed 002 Sec. 4.1): an input's "
             "packets may leave through several outputs at once, each at its output's rate.");
    b.choice("request_order", &SwitchConfig::request_order,
             {{request_order_name(RequestOrder::fifo), RequestOrder::fifo},
              {request_order_name(RequestOrder::fifo_bypass), RequestOrder::fifo_bypass}},
             "Which request of an output VL goes next: fifo (head only) or fifo_bypass (younger may pass a head "
             "whose input feeds another output; the same as fifo with the multiplexed crossbar).");
    // A request counts its bypasses in 8 bits (Switch::Request::bypassed).
    b.integer("bypass_limit", &SwitchConfig::bypass_limit, "requests",
              "fifo_bypass: how often younger requests may pass one head request.")
        .range(0, 255);
    // Seed 003 Sec. 3.1 (models/sched, docs/qos.md).
    b.choice("scheduling", &SwitchConfig::scheduling,
             {{scheduling_name(Scheduling::fifo), Scheduling::fifo},
              {scheduling_name(Scheduling::virtual_clock), Scheduling::virtual_clock},
              {scheduling_name(Scheduling::fair_queueing), Scheduling::fair_queueing}},
             "Which waiting packet an output serves next (seed 003 Sec. 3.1): fifo (request_order); "
             "virtual_clock (the connection with the smallest auxVC + Vtick, Vtick the packet's time at its "
             "reserved rate); fair_queueing (the smallest weighted finish tag of the bit-by-bit round robin). "
             "A connection is a CBR connection or a flow; its rate is its reserved_rate (a video flow's mean "
             "rate, a CBR connection's reservation), unreserved_rate for packets without one.");
    b.choice("scheduling_scope", &SwitchConfig::scheduling_scope,
             {{scheduling_scope_name(SchedulingScope::per_vl), SchedulingScope::per_vl},
              {scheduling_scope_name(SchedulingScope::across_vls), SchedulingScope::across_vls}},
             "virtual_clock, fair_queueing: choose within each output VL, the VLArb tables then choosing the VL "
             "(per_vl); or among all data VLs' packets at once, in place of the VLArb tables (across_vls, as "
             "seed 003's router schedules all VCs of a port). VL15 goes first either way.");
    b.real("unreserved_rate", &SwitchConfig::unreserved_rate, "b/s",
           "virtual_clock, fair_queueing, and model flit_wormhole's VirtualClock: the rate packets that reserved "
           "none are charged at (ACKs, flows without reserved_rate).")
        .real_range(1.0, 1e13);
    b.integer("vc_bits", &SwitchConfig::vc_bits, "bits",
              "virtual_clock: 0 for unbounded counters with Zhang's real-time term; n (16..63) for n-bit auxVC "
              "counters of ns with seed 003 Sec. 3.1's overflow rule (the overflowing auxVC_i restarts at 0, every "
              "other auxVC_j becomes auxVC_j - auxVC_i, 0 if negative; no real-time term). The counter must hold "
              "the largest Vtick: a 4,224-byte packet at the lowest rate charged.")
        .range(0, 63);
    b.rule("scheduling_scope goes with scheduling virtual_clock or fair_queueing, unreserved_rate with those or "
           "model flit_wormhole; "
           "request_order and bypass_limit with scheduling fifo; vc_bits with scheduling virtual_clock.");
    b.on_complete([](SwitchConfig& c, const std::set<std::string>& given) {
      if (c.model != SwitchModel::flit_wormhole && given.count("flit"))
        throw sim::ParamError("flit", "flit describes the flit router", "remove it or set model: flit_wormhole");
      const bool rate = c.scheduling != Scheduling::fifo;
      for (const char* k : {"scheduling_scope", "unreserved_rate"})
        if (!rate && given.count(k) && !(c.model == SwitchModel::flit_wormhole && k == std::string("unreserved_rate")))
          throw sim::ParamError(k, std::string(k) + " is only used by a rate scheduler",
                                "remove it or set scheduling: virtual_clock (or fair_queueing)");
      if (given.count("vc_bits") && c.scheduling != Scheduling::virtual_clock)
        throw sim::ParamError("vc_bits", "vc_bits sizes VirtualClock's counters",
                              "remove it or set scheduling: virtual_clock");
      if (c.vc_bits != 0 && c.vc_bits < 16)
        throw sim::ParamError("vc_bits", "vc_bits " + std::to_string(c.vc_bits) + " cannot hold a Vtick in ns",
                              "give 0 (unbounded) or 16..63 (seed 003 Sec. 3.1 used 16-bit counters)");
      for (const char* k : {"request_order", "bypass_limit"})
        if (rate && given.count(k))
          throw sim::ParamError(k, std::string(k) + " orders FIFO requests; the rate scheduler orders them by "
                                   "stamp (it passes over requests whose input is busy)",
                                "remove it or set scheduling: fifo");
    });
    b.on_complete([](SwitchConfig& c, const std::set<std::string>&) {
      if (c.output_buffer_bytes == 0) return;
      auto refuse = [](const std::string& problem, const std::string& fix) {
        throw sim::ParamError("output_buffer_bytes", problem, fix);
      };
      if (c.output_buffer_bytes < c.vl_buffer_bytes)
        refuse(std::to_string(c.output_buffer_bytes) + " bytes is less than the input buffer (vl_buffer_bytes " +
                   std::to_string(c.vl_buffer_bytes) + "): a packet the input holds might never fit the output",
               "set output_buffer_bytes to at least " + std::to_string(c.vl_buffer_bytes) + ", or 0");
      if (c.model == SwitchModel::flit_wormhole)
        refuse("output buffers belong to the iba switch model", "remove output_buffer_bytes or set model: iba");
      if (c.scheduling != Scheduling::fifo)
        refuse("the rate schedulers order an output's requests as one queue; output buffers split it in two",
               "remove output_buffer_bytes or set scheduling: fifo");
      if (c.ecn.policy != MarkingPolicy::none)
        refuse("congestion marking watches input buffers and output queues without output buffers",
               "remove output_buffer_bytes or set ecn.policy: none");
      if (c.hoq_life < kLifetimeInfinite || c.switch_life < kLifetimeInfinite || !c.lifetime_overrides.empty())
        refuse("lifetimes drop requests at an output's queue; output-buffered packets have none",
               "remove output_buffer_bytes, or leave hoq_life and switch_life infinite without lifetime_overrides");
      if (c.multicast_replication != Replication::asynchronous)
        refuse(std::string(replication_name(c.multicast_replication)) +
                   " replication gates copies at the link, which output buffers decouple from the crossbar",
               "remove output_buffer_bytes or set multicast_replication: asynchronous");
    });
    b.choice("path_selection", &SwitchConfig::path_selection,
             {{path_selection_name(PathSelection::first), PathSelection::first},
              {path_selection_name(PathSelection::lfu), PathSelection::lfu},
              {path_selection_name(PathSelection::max_credit), PathSelection::max_credit}},
             "Among a destination's alternative outputs (routing: multipath_adaptive), which one an unreliable "
             "datagram takes (seed 000 Sec. 3.4): first (the shortest path, as the LFT); lfu (the output least "
             "used since the start, ties to the lowest port); max_credit (the most credits for the packet's VL, "
             "less queued requests; ties to the lowest port). Video packets, VL15 and other transports take "
             "the first.");
    b.object("ecn", &SwitchConfig::ecn, ecn_params(), "Congestion marking.").defaults_to("policy none");
    // Seed 000 Sec. 3.6.1 (models/switch/replication.h, docs/multicast.md).
    b.choice("multicast_replication", &SwitchConfig::multicast_replication,
             {{replication_name(Replication::synchronous), Replication::synchronous},
              {replication_name(Replication::asynchronous), Replication::asynchronous},
              {replication_name(Replication::central_buffer), Replication::central_buffer}},
             "How a packet to an MLID is copied to its MFT ports (seed 000 Sec. 3.6.1): synchronous (all copies "
             "leave together, ahead of unicast); asynchronous (each copy when its output can, the input held until "
             "the last has left); central_buffer (copies written into a multicast buffer per output, freeing the "
             "input).");
    b.choice("multicast_order", &SwitchConfig::multicast_order,
             {{multicast_order_name(MulticastOrder::fcfs), MulticastOrder::fcfs},
              {multicast_order_name(MulticastOrder::round_robin), MulticastOrder::round_robin}},
             "synchronous: which waiting multicast goes first, fcfs (routing order) or round_robin (over input "
             "ports).");
    b.integer("multicast_buffer_bytes", &SwitchConfig::multicast_buffer_bytes, "bytes",
              "central_buffer: the multicast buffer of each output port; holds the largest packet.")
        .range(64, 1 << 24);
    b.boolean("multicast_priority", &SwitchConfig::multicast_priority,
              "asynchronous: each copy goes ahead of the unicast requests of its output VL, behind earlier "
              "copies (seed 000 Sec. 5.2, Fig. 10(f)'s scheme 1). Synchronous and central-buffer copies always "
              "do (Sec. 3.6.1).");
    b.rule("multicast_priority goes with multicast_replication asynchronous.");
    b.on_complete([](SwitchConfig& c, const std::set<std::string>& given) {
      if (given.count("multicast_priority") && c.multicast_replication != Replication::asynchronous)
        throw sim::ParamError("multicast_priority",
                              std::string(replication_name(c.multicast_replication)) +
                                  " copies always go ahead of unicast (seed 000 Sec. 3.6.1)",
                              "remove multicast_priority or set multicast_replication: asynchronous");
    });
    // IBA 18.2.5.4; docs/switch_lifetimes.md.
    b.integer("hoq_life", &SwitchConfig::hoq_life, "code",
              "Head-of-queue lifetime of every output VL (PortInfo:HOQLife): a packet waiting longer at the head "
              "of its output VL is dropped. 4.096 us x 2^code for 0..19; 20 and above: infinite.")
        .range(0, kLifetimeCodeMax);
    b.integer("switch_life", &SwitchConfig::switch_life, "code",
              "Switch lifetime (SwitchInfo:LifeTimeValue, seed 000's SLL): a packet staying longer in one switch "
              "is dropped. 4.096 us x 2^code for 0..19; 20 and above: infinite.")
        .range(0, kLifetimeCodeMax);
    b.choice("drop_policy", &SwitchConfig::drop_policy,
             {{drop_policy_name(DropPolicy::all), DropPolicy::all},
              {drop_policy_name(DropPolicy::selective), DropPolicy::selective}},
             "Which expired packets go: all, or selective (seed 000 Sec. 3.5: never VL15, never a packet of an "
             "I frame, never the first or last packet of a P or B frame).");
    // IBA gives no processing time for an SMA (13.4.6.2 only bounds responses by
    // RespTimeValue, 4.096 us x 2^v); 1 us is the order of a switch's management processor.
    b.time("sma_delay", &SwitchConfig::sma_delay,
           "The subnet management agent's time (docs/management.md): an SMP for the switch is answered, and a "
           "directed-route SMP passing through is forwarded, this long after its tail is in (at most 1 s).")
        .real_range(0, 1e12);
    b.integer("sma_queue_depth", &SwitchConfig::sma_queue_depth, "SMPs",
              "SMPs the management processor holds while it serves them one per sma_delay; an SMP that finds it "
              "full is dropped (VL15 is not flow controlled).")
        .range(1, 4096);
    b.objects("lifetime_overrides", &SwitchConfig::lifetime_overrides, lifetime_override_params(),
              "Per switch or port lifetimes, applied in order after hoq_life and switch_life.");
    // Seed 003's flit router instead (models/flit, docs/seed003.md).
    b.choice("model", &SwitchConfig::model,
             {{switch_model_name(SwitchModel::iba), SwitchModel::iba},
              {switch_model_name(SwitchModel::flit_wormhole), SwitchModel::flit_wormhole}},
             "Every switch of the fabric: iba (packets, virtual cut-through; the keys below) or flit_wormhole "
             "(seed 003's flit router, the flit block; docs/seed003.md).");
    b.object("flit", &SwitchConfig::flit, flit::flit_params(), "model flit_wormhole: the flit router.")
        .defaults_to("128-bit flits, 1.6 Gb/s, 16 VCs of 40 flits, preemptive with acceleration");
    return b.build();
  }();
  return group;
}

}  // namespace ibvp::sw
