#pragma once
// Parameters of seed 003's flit router (Sec. 3, 3.2, 4.1) and what they mean.
#include <cstdint>
#include <string>
#include <vector>

#include "models/flit/flit.h"

namespace ibvp::flit {

// The three router designs of Sec. 3.2 and 4.1.
enum class Variant : uint8_t {
  traditional,     // TR: VCs split statically between classes, FCFS at the crossbar input
  non_preemptive,  // NP: VCs split statically, VirtualClock at the crossbar input (MediaWorm)
  preemptive,      // P: any VC for any class, higher priority preempts through the extra buffer
};
const char* variant_name(Variant v);

// How VirtualClock (NP, P) serves the flits of messages that reserved no rate (best effort).
enum class Unreserved : uint8_t {
  last,  // after every reserved connection's flit, among themselves by VirtualClock (Sec. 4.2:
         // only real-time messages carry "the bandwidth requirements (Vtick information)")
  rate,  // charged a Vtick at the fabric's unreserved rate, in one order with the reservations
  // charged a Vtick at its flow's offered rate in the current phase, in one order with the
  // reservations: VirtualClock's declared rate of a best-effort source is its injection rate
  // (Sec. 4.2: "generated with a given injection rate"); the fabric's unreserved rate for
  // packets whose flow has none (models/flit/flit_fabric.h)
  offered,
};
const char* unreserved_name(Unreserved u);

// How a source's NIC puts the flits of its messages onto the wire (Sec. 3.3.1, Fig. 9).
enum class NicMultiplexing : uint8_t {
  flit,     // flit by flit: each cycle any message with a VC and a credit may send
  message,  // a whole message, then the next: the send DMA moves one message at a time
};
const char* nic_multiplexing_name(NicMultiplexing m);

// Which message a source's NIC serves next, to a VC and onto the wire (Sec. 3.3.1, Fig. 3; Sec. 5:
// "two types of NIC architecture (traditional NIC without the VirtualClock algorithm and the
// QoS-aware NIC with the VirtualClock algorithm)").
enum class NicScheduler : uint8_t {
  virtual_clock,  // the QoS NIC: prioritized doorbells (a queue per class, the highest first) and a
                  // VirtualClock flit scheduler over the connections' Vticks (Sec. 3.3.1)
  priority,       // prioritized doorbells, then the highest class and the oldest message on the wire
  fcfs,           // the traditional VIA NIC: one doorbell queue in arrival order, the oldest message
                  // first on the wire, no classes and no rates
};
const char* nic_scheduler_name(NicScheduler s);

// The rate a stream's (a video flow's) messages are charged at by VirtualClock (Sec. 3.1, 4.2:
// each message carries "the bandwidth requirements (Vtick information ...)").
enum class StreamVtick : uint8_t {
  mean,   // the stream's reserved rate, its mean rate: an I frame's messages are stamped far ahead
  frame,  // its frame's own rate: the frame's flits over the stream's frame period (Sec. 3.1: the NI
          // injects "one frame every 33.3 msec"), the same for every message of the frame
};
const char* stream_vtick_name(StreamVtick v);

struct FlitConfig {
  uint32_t width_bits = 128;        // flit width (Sec. 4.1)
  double link_bps = 1.6e9;          // physical link bandwidth (Sec. 4.1)
  uint16_t vcs_per_channel = 16;    // VCs per physical channel (Sec. 4.1)
  uint32_t vc_buffer_flits = 40;    // flit buffer per VC (Sec. 4.1); the extra buffer too
  Variant variant = Variant::preemptive;
  bool acceleration = true;         // Sec. 3.2.2 (P only)
  Unreserved unreserved = Unreserved::rate;  // NP and P (docs/seed003.md: last starves best effort)
  uint32_t block_flits = 1;         // Sec. 5.1, Fig. 6: flits a VC keeps the crossbar input for
  uint32_t link_delay_cycles = 1;   // a flit's (and a credit's) time on the cable
  // The sources (FlitEndpoint): flit- or message-level multiplexing to the wire, and with
  // message, the cycles the wire idles before each message (Sec. 5.3: "The simulation model
  // includes the DMA overhead for injecting the messages"; the paper gives no number).
  NicMultiplexing nic_multiplexing = NicMultiplexing::flit;
  // The NIC's choice of message (priority: what the sources did before the key existed, and
  // what docs/seed003.md's Figs. 4-8 were run with).
  NicScheduler nic_scheduler = NicScheduler::priority;
  uint32_t nic_dma_cycles = 0;
  // The Vtick of a stream's messages in the QoS NIC (nic_scheduler virtual_clock) and in the
  // routers' VirtualClock (NP, P); mean keeps what every run before these keys did.
  StreamVtick nic_vtick = StreamVtick::mean;
  StreamVtick router_vtick = StreamVtick::mean;
  // VirtualClock's counters in the routers (NP, P) and the QoS NIC alike: 0, unbounded counters
  // of ps with Zhang's real-time term; n, n-bit counters of ns with Sec. 3.1's overflow rule
  // (models/sched/virtual_clock.h), as switch.vc_bits gives the IBA switch.
  uint32_t vc_bits = 0;
  // VCs per class, from VC 0 up (class 0 first): TR and NP use only their class's VCs; P
  // starts a message on its class's VCs when one is free and takes any free VC otherwise
  // (Sec. 4.2: "In the beginning the configuration is the same as the NP router").
  std::vector<uint16_t> class_vcs = {1, 3, 12};
  // Every class on every VC, class_vcs unused: the traditional best-effort router of Sec. 3
  // ("the scheduler can select one of the C VCs"), where a message of any class may wait
  // behind one of another class in the same VC. Not for NP, whose point is the split.
  bool shared_vcs = false;
  // In a fabric (models/flit/flit_fabric.h): the class of a packet on each data VL, from VL 0
  // up, the last entry for the VLs beyond; VL15 is always class 0 (control).
  std::vector<uint8_t> vl_classes = {2, 1};

  // One flit time on a link, in ps, rounded up: every stage of the router takes one.
  uint64_t flit_cycle_ps() const;
  // A Vtick of `vtick_ps` in the unit of the VirtualClock counters: ps when they are unbounded,
  // ns rounded up with vc_bits (the unit of switch.vc_bits; a flit is never charged less).
  uint64_t vc_units(uint64_t vtick_ps) const { return vc_bits == 0 ? vtick_ps : (vtick_ps + 999) / 1000; }
  // The first VC of class c and how many it has.
  uint16_t class_first_vc(uint8_t c) const;
  uint16_t class_vc_count(uint8_t c) const {
    return shared_vcs ? vcs_per_channel : c < class_vcs.size() ? class_vcs[c] : 0;
  }
  uint8_t classes() const { return shared_vcs ? kMaxClasses : static_cast<uint8_t>(class_vcs.size()); }
  // Empty when the parameters are consistent, else what is wrong (the loader names the key).
  std::string problem() const;
};

}  // namespace ibvp::flit
