#include "models/flit/flit_params.h"

#include "models/flit/flit_config.h"

namespace ibvp::flit {

const sim::ParamGroup& flit_params() {
  static const sim::ParamGroup group = [] {
    sim::GroupBuilder<FlitConfig> b(
        "flit", "Seed 003's flit-level wormhole router (switch.model: flit_wormhole): five pipeline stages of one "
                "flit time each, VCs per physical channel with credit-based flow control per VC.");
    b.integer("width_bits", &FlitConfig::width_bits, "bits", "Flit width (seed 003 Sec. 4.1: 128).").range(8, 4096);
    b.real("link_rate", &FlitConfig::link_bps, "b/s",
           "Data rate of every cable of the fabric, endpoint cables too (seed 003 Sec. 4.1: 1.6 Gb/s); it "
           "replaces the topology's IBA widths and speeds.")
        .real_range(1e6, 1e13);
    b.integer("vcs_per_channel", &FlitConfig::vcs_per_channel, "VCs", "Virtual channels per physical channel (16).")
        .range(1, 64);
    b.integer("vc_buffer_flits", &FlitConfig::vc_buffer_flits, "flits",
              "Flit buffer per input VC, and of the preemptive router's extra buffer (40).")
        .range(1, 1 << 16);
    b.choice("variant", &FlitConfig::variant,
             {{variant_name(Variant::traditional), Variant::traditional},
              {variant_name(Variant::non_preemptive), Variant::non_preemptive},
              {variant_name(Variant::preemptive), Variant::preemptive}},
             "traditional (TR: VCs split between classes, FCFS at the crossbar input); non_preemptive (NP: VCs "
             "split, VirtualClock); preemptive (P: any VC for any class, a higher-priority header preempts through "
             "the extra buffer with dummy tail and header flits; Sec. 3.2).");
    b.boolean("acceleration", &FlitConfig::acceleration,
              "preemptive: flit acceleration (Sec. 3.2.2): the flits of a preempted or blocking lower-priority "
              "message go first at the crossbar input.");
    b.choice("unreserved", &FlitConfig::unreserved,
             {{unreserved_name(Unreserved::last), Unreserved::last},
              {unreserved_name(Unreserved::rate), Unreserved::rate},
              {unreserved_name(Unreserved::offered), Unreserved::offered}},
             "non_preemptive, preemptive and nic_scheduler virtual_clock: how VirtualClock serves flits of packets "
             "that reserved no rate (best effort): rate (charged at switch.unreserved_rate like a reservation), "
             "offered (charged at its flow's offered rate in the current phase, its injection rate; "
             "switch.unreserved_rate for packets of no such flow) or last (after every reserved flit, among "
             "themselves at their offered rate; seed 003 Sec. 4.2 gives only real-time messages a Vtick; "
             "docs/seed003.md says what each does to best effort).");
    b.integer("block_flits", &FlitConfig::block_flits, "flits",
              "Block-level multiplexing (Sec. 5.1, Fig. 6): a VC keeps its crossbar input for up to this many "
              "flits (1: flit-level).")
        .range(1, 1 << 16);
    b.integer("link_delay", &FlitConfig::link_delay_cycles, "cycles",
              "Cycles a flit or a credit takes on a cable between routers or to an edge.")
        .range(1, 1 << 16);
    b.choice("nic_multiplexing", &FlitConfig::nic_multiplexing,
             {{nic_multiplexing_name(NicMultiplexing::flit), NicMultiplexing::flit},
              {nic_multiplexing_name(NicMultiplexing::message), NicMultiplexing::message}},
             "How each source (the NIC at an edge) puts its messages' flits onto the wire (seed 003 Sec. 3.3.1, "
             "Fig. 9): flit (flit by flit among the messages that hold a VC, chosen by nic_scheduler) or message "
             "(a whole message, chosen the same way, then the next; the wire idles while that message lacks "
             "credits).");
    b.choice("nic_scheduler", &FlitConfig::nic_scheduler,
             {{nic_scheduler_name(NicScheduler::virtual_clock), NicScheduler::virtual_clock},
              {nic_scheduler_name(NicScheduler::priority), NicScheduler::priority},
              {nic_scheduler_name(NicScheduler::fcfs), NicScheduler::fcfs}},
             "Which message each source (the NIC at an edge) serves next (seed 003 Sec. 3.3.1, Fig. 9): "
             "virtual_clock (the QoS NIC: a doorbell queue per class, the highest first, and a VirtualClock "
             "scheduler over the connections' Vticks to the wire, best effort as switch.flit.unreserved says), "
             "priority (a doorbell queue per class, then the highest class and the oldest message to the wire) or "
             "fcfs (the traditional VIA NIC: one doorbell queue in arrival order, the oldest message first).");
    b.integer("nic_dma_cycles", &FlitConfig::nic_dma_cycles, "cycles",
              "nic_multiplexing message: flit cycles the wire idles before each message (the send DMA's overhead "
              "per message, Sec. 5.3; 0: none).")
        .range(0, 1 << 20);
    const std::vector<std::pair<std::string, StreamVtick>> vticks = {
        {stream_vtick_name(StreamVtick::mean), StreamVtick::mean},
        {stream_vtick_name(StreamVtick::frame), StreamVtick::frame}};
    b.choice("nic_vtick", &FlitConfig::nic_vtick, vticks,
             "nic_scheduler virtual_clock: the Vtick the QoS NIC charges a video stream's flits at: mean (its "
             "reserved rate, the stream's mean rate) or frame (its frame's own rate: the frame's flits over the "
             "flow's frame_period, the same for every message of the frame; docs/seed003.md, Fig. 9).");
    b.choice("router_vtick", &FlitConfig::router_vtick, vticks,
             "non_preemptive, preemptive: the Vtick the routers' VirtualClock charges a video stream's flits at, "
             "as nic_vtick says (the message header carries it, seed 003 Sec. 4.2).");
    b.integer("vc_bits", &FlitConfig::vc_bits, "bits",
              "VirtualClock's counters in the routers (non_preemptive, preemptive) and the QoS NIC "
              "(nic_scheduler virtual_clock), as switch.vc_bits for the IBA switch: 0 for unbounded counters of ps "
              "with Zhang's real-time term; n (16..63) for n-bit auxVC counters of ns with seed 003 Sec. 3.1's "
              "overflow rule (the overflowing auxVC_i restarts at 0, every other auxVC_j becomes auxVC_j - "
              "auxVC_i, 0 if negative; no real-time term). The counter must hold the largest Vtick: one flit at "
              "the lowest rate charged (with nic_vtick or router_vtick frame, a video flow's frame_period).")
        .range(0, 63);
    b.integer_list("class_vcs", &FlitConfig::class_vcs, "VCs",
                   "VCs per traffic class from VC 0 up, class 0 (control) first, then real time, then best effort; "
                   "TR and NP use only their class's VCs, P starts on them (Sec. 4.2).")
        .range(1, 64);
    b.boolean("shared_vcs", &FlitConfig::shared_vcs,
              "traditional or preemptive: every class may use every VC (class_vcs unused).");
    b.integer_list("vl_classes", &FlitConfig::vl_classes, "class",
                   "The class of a packet on each data VL, VL 0 first, the last entry for the VLs beyond; VL15 is "
                   "class 0.")
        .range(0, 3);
    b.rule("class_vcs sums to at most vcs_per_channel; vl_classes names classes class_vcs has.");
    b.on_complete([](FlitConfig& c, const std::set<std::string>&) {
      const std::string p = c.problem();
      if (!p.empty()) throw sim::ParamError("", p, "see docs/seed003.md's flit router section for the parameters");
    });
    return b.build();
  }();
  return group;
}

}  // namespace ibvp::flit
