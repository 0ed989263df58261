#pragma once
// The IBA switch: input-buffered, virtual cut-through, with a non-multiplexed or a
// multiplexed crossbar (`switch.crossbar`).
//
// A packet's header arrives on an input port and takes its VL buffer space (the sender
// checked credits for the whole packet). After the pipeline delay (header decode, LFT
// lookup, SL2VL; seed 000 Sec. 2.2 pipelines it in 5 stages, seed 001 uses 100 ns) the packet
// requests its output. Each output keeps one request FIFO per output VL; the output's VL
// arbiter chooses the VL and the request order (`switch.request_order`) chooses the request
// within it. A request can go when the output is idle, the next hop has credits for the
// whole packet and, with the non-multiplexed crossbar, its input is not already feeding
// another output. With the multiplexed crossbar (seed 002 Sec. 4.1: "each switch has a
// multiplexed crossbar") an input is never busy: packets of one input buffer may leave
// through different outputs at the same time, each at its output's rate. The input buffer
// space is freed, and the credit returned upstream, packet by packet when its tail has left
// through the output.
//
// With `switch.output_buffer_bytes` above 0 (seed 001 Sec. 2: "Buffer size (input and
// output)"), each output port has a buffer per VL as well (switch_output_buffer.cpp): the
// crossbar moves a packet from its input buffer into the output buffer when that has room,
// which frees the input and returns its credit, and the link drains the output buffer under
// VL arbitration and link credits.
//
// What is abstracted: header decode and crossbar traversal are folded into the pipeline
// delay; the crossbar runs at the output link's rate; flow-control packets are
// instantaneous credit messages delayed by the cable (they take no link bandwidth).
#include <array>
#include <stdexcept>
#include <bitset>
#include <deque>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/passthrough_target_socket.h>
#include <vector>

#include "models/flit/flit_config.h"
#include "models/ib/packet.h"
#include "models/link/direct_port.h"
#include "models/link/fabric_payload.h"
#include "models/link/link_rate.h"
#include "models/link/port_state.h"
#include "models/link/vl_arbiter.h"
#include "models/sim/observer.h"
#include "models/sched/fair_queueing.h"
#include "models/sched/virtual_clock.h"
#include "models/sim/timed_queue.h"
#include "models/sim/vector_queue.h"
#include "models/switch/ecn_marker.h"
#include "models/switch/lft.h"
#include "models/switch/path_select.h"
#include "models/switch/mft.h"
#include "models/switch/replication.h"
#include "models/switch/lifetime.h"
#include "models/switch/sma.h"

namespace ibvp::sw {

enum class Crossbar : uint8_t {
  non_multiplexed,  // an input feeds one output at a time (seeds 001, 004)
  multiplexed,      // an input feeds any number of outputs at once (seed 002 Sec. 4.1)
};
const char* crossbar_name(Crossbar c);

// Which request of an output VL goes next. The two differ only when a head's input is busy,
// which only the non-multiplexed crossbar has.
enum class RequestOrder : uint8_t {
  fifo,         // per-output FIFO of requests; a head whose input is busy blocks the VL (seed 001)
  fifo_bypass,  // younger requests may pass a head whose input is busy, at most bypass_limit
                // times per head (seed 004 Table 1: max bypass 4)
};
const char* request_order_name(RequestOrder o);

// Rate-based scheduling of an output's requests (seed 003 Sec. 3.1, models/sched): which
// waiting packet crosses the crossbar to the output next. fifo keeps the request order
// above; the rate schedulers serve, among the requests whose input is free, the one whose
// connection (its CBR connection, else its flow) has the smallest stamp, each connection
// charged at its reserved rate (Packet::reserved_bps, unreserved_rate for packets without).
enum class Scheduling : uint8_t {
  fifo,           // request order (switch.request_order)
  virtual_clock,  // smallest auxVC + Vtick, auxVC += Vtick when sent (counters: vc_bits)
  fair_queueing,  // smallest weighted finish tag (Demers, Keshav, Shenker)
};
const char* scheduling_name(Scheduling s);
// Where the rate scheduler chooses: within each output VL, the IBA VL arbiter then choosing
// among VLs (per_vl); or among the candidates of all data VLs at once, in place of the
// VLArb tables, as seed 003's router schedules all VCs of a port (across_vls). VL15 goes
// first either way (IBA 7.6.9).
enum class SchedulingScope : uint8_t { per_vl, across_vls };
const char* scheduling_scope_name(SchedulingScope s);

// Which switch model the fabric's switches are (one choice for the whole fabric).
enum class SwitchModel : uint8_t {
  iba,            // this file: packets, virtual cut-through
  flit_wormhole,  // seed 003's flit router (models/flit/flit_fabric.h)
};
const char* switch_model_name(SwitchModel m);

using Sl2VlTable = std::array<uint8_t, 16>;  // SL -> VL

struct SwitchConfig {
  SwitchModel model = SwitchModel::iba;
  flit::FlitConfig flit;  // model flit_wormhole
  uint16_t num_ports = 8;
  sc_core::sc_time pipeline_delay = sc_core::sc_time(100, sc_core::SC_NS);
  uint32_t vl_buffer_bytes = 4 * 2112;  // per input port per data VL
  uint32_t vl15_buffer_bytes = 2 * 320; // two MADs (256-byte MAD + headers) per input port
  // Output buffer per output port and data VL (VL15's holds vl15_buffer_bytes); 0: none, the
  // crossbar feeds the link directly (switch_output_buffer.cpp).
  uint32_t output_buffer_bytes = 0;
  uint8_t data_vls = 1;                 // operational data VLs 1..15
  Crossbar crossbar = Crossbar::non_multiplexed;
  RequestOrder request_order = RequestOrder::fifo_bypass;
  uint32_t bypass_limit = 4;
  Scheduling scheduling = Scheduling::fifo;
  SchedulingScope scheduling_scope = SchedulingScope::per_vl;
  double unreserved_rate = 1e9;  // b/s; rate schedulers: the rate of packets that reserved none
  // virtual_clock: 0, unbounded counters with Zhang's real-time term; n, n-bit counters of ns
  // with seed 003 Sec. 3.1's overflow rule (models/sched/virtual_clock.h).
  uint32_t vc_bits = 0;
  link::VlArbConfig vlarb = link::VlArbConfig::round_robin(1);
  Sl2VlTable sl2vl = default_sl2vl(1);  // for every (input, output) pair unless set per pair
  EcnConfig ecn;                         // congestion marking (seed 004 Sec. 5)
  PathSelection path_selection = PathSelection::first;  // among a DLID's alternatives (path_select.h)
  // Multicast (seed 000 Sec. 3.6.1, models/switch/replication.h).
  Replication multicast_replication = Replication::asynchronous;
  MulticastOrder multicast_order = MulticastOrder::fcfs;  // synchronous: which multicast goes first
  uint32_t multicast_buffer_bytes = 4 * 2112;             // central_buffer: per output port
  // asynchronous: copies go ahead of unicast at their output VL (seed 000 Sec. 5.2, Fig. 10(f)'s
  // scheme 1); synchronous and central-buffer copies always do (Sec. 3.6.1).
  bool multicast_priority = false;
  // Lifetimes (lifetime.h, IBA 18.2.5.4): codes, 20 and above infinite. hoq_life is every
  // output VL's; the builder applies lifetime_overrides through the setters below.
  uint8_t hoq_life = kLifetimeInfinite;
  uint8_t switch_life = kLifetimeInfinite;
  DropPolicy drop_policy = DropPolicy::all;
  std::vector<LifetimeOverride> lifetime_overrides;  // read by the builder, not the switch
  // The subnet management agent's time per SMP (sma.h, docs/management.md): from an SMP's
  // tail at the switch, or the end of the SMP before it, to its answer (or, directed route,
  // its forwarding) requesting its output.
  sc_core::sc_time sma_delay = sc_core::sc_time(1, sc_core::SC_US);
  // SMPs the management processor holds while it serves them one at a time: an SMP leaves
  // its input buffer (VL15 space) once its tail is in and waits here; one that finds the
  // queue full is dropped, as VL15 packets are (IBA 7.9.4).
  uint32_t sma_queue_depth = 16;

  static Sl2VlTable default_sl2vl(uint8_t data_vls);
};

class Switch : public sc_core::sc_module, public link::DirectPort {
 public:
  // A passthrough socket spawns no thread (simple_target_socket spawns one per socket that
  // registers only nb_transport_fw: a stack and a guard mapping each, which large fabrics
  // run out of; ../shared/SYSTEMC_NOTES.md).
  using InSocket = tlm_utils::passthrough_target_socket_tagged<Switch>;
  using OutSocket = tlm_utils::simple_initiator_socket_tagged<Switch>;

  // A cabled port and the rate of its cable. Only cabled ports get sockets: SystemC requires
  // every socket to be bound, and sockets can only be made while the module is built.
  struct Cable {
    uint16_t port;
    link::LinkRate rate;
  };

  SC_HAS_PROCESS(Switch);
  Switch(sc_core::sc_module_name name, uint32_t node, const SwitchConfig& cfg, const std::vector<Cable>& cables,
         ib::PacketPool& packets, link::PayloadPool& payloads, sim::Probe& probe);

  InSocket& rx(uint16_t port) { return *ports_.at(port).rx; }
  OutSocket& tx(uint16_t port) { return *ports_.at(port).tx; }
  // Credits the next hop advertises on `port` (its receive buffer), per VL, in bytes.
  void set_peer_buffer(uint16_t port, uint8_t vl, uint32_t bytes);
  // A cable from `port` to `peer_port` of `peer` (a switch or an endpoint), `propagation_ps`
  // long, that nothing watches (no capture taps it): packets and credit updates cross it by
  // a direct call into the peer instead of through the TLM sockets and the Link between
  // them (link/direct_port.h; issue 17). The builder sets it on both ends of such a cable
  // and clears it when a tap is attached to that cable.
  void set_direct_peer(uint16_t port, link::DirectPort* peer, uint16_t peer_port, uint64_t propagation_ps);
  void clear_direct_peer(uint16_t port) { ports_.at(port).peer = nullptr; }
  bool direct_peer(uint16_t port) const { return ports_.at(port).peer != nullptr; }
  // Its agenda's id in the canonical event order (sim::Scheduler): the fabric builder's.
  void set_order_id(uint32_t id) { agenda_.set_source_id(id); }
  // Split runs (docs/parallel.md): the process that does not run this model marks it
  // remote; the one that does hands it the actions other processes send it.
  sim::TimedQueue& agenda() { return agenda_; }

  // Subnet manager programming, out of band. In band, SMPs to port 0 reach the switch's
  // SMA (sma.h), which reads and writes these same tables.
  void set_lft(const Lft& lft) { lft_ = lft; }
  const Lft& lft() const { return lft_; }
  // NodeInfo, NodeDescription and port 0's LID as the SMA reports them (from the topology).
  void set_identity(const SwitchIdentity& id) { sma_.set_identity(id); }
  const Sma& sma() const { return sma_; }
  // PortInfo:PortState of `port` (ib::mad::PortState). Ports start Active (out-of-band
  // programming); an SM moves them by PortInfo Sets. Data packets enter only through Armed
  // or Active ports and leave only through Active ones (IBA 7.2); SMPs pass any port not Down.
  uint8_t port_state(uint16_t port) const { return ports_.at(port).port_state; }
  // In-band bring-up: every cabled port in Init, where link training leaves it (IBA 7.2);
  // an SM arms and activates them by PortInfo Sets (Armed only from Init, IBA 14.2.5.6).
  void start_ports_in_init() {
    for (uint16_t p = 1; p < ports_.size(); ++p)
      if (attached(p)) ports_[p].port_state = ib::mad::kPortInit;
  }
  // A scenario link event (docs/management.md, "A link that goes down"): the cable at
  // `port` goes down or comes back. Down: PortState Down and PhysState Polling (IBA 7.2,
  // 14.2.5.6); the requests queued for the port are discarded (IBA 7.2: a port that leaves
  // Active discards its packets; counted as xmit_discards and dropped as link_down), and
  // whatever arrives on it or is routed to it from now on is dropped (the LFT keeps its
  // entries until an SM changes them). Up: the port trains to `state_when_up` (Init for an
  // SM in band to arm, Active out of band). Either way SwitchInfo:PortStateChange is set and
  // the SMA sends Trap 128 to the master SM, if an SM has told it one (MasterSMLID).
  void set_link(uint16_t port, bool up, uint8_t state_when_up);
  bool link_up(uint16_t port) const { return attached(port) && !ports_.at(port).link_down; }
  // The Trap 128s (IBA 14.3.7) the SMA sent: TID, the port whose change raised it, when
  // first sent, how many times sent (the SMA resends every 4.096 us x 2^SubnetTimeout until
  // the SM answers with TrapRepress, IBA 13.4.9), and when repressed (0: not yet).
  struct TrapRecord {
    uint64_t tid = 0;
    uint16_t port = 0;
    uint64_t first_sent_ps = 0;
    uint32_t sends = 0;
    uint64_t repressed_ps = 0;
  };
  const std::vector<TrapRecord>& traps() const { return traps_; }
  // The alternative outputs per DLID (seed 000 Sec. 3.3, path_select.h); the first of each is
  // the LFT's entry. Call after the ports exist (the constructor made them).
  void set_alternatives(const AltTable& alternatives) {
    alternatives_ = alternatives;
    selector_.configure(cfg_.path_selection, ports_.size(), alternatives_);
  }
  const AltTable& alternatives() const { return alternatives_; }
  const PathSelector& path_selector() const { return selector_; }
  void set_mft(const Mft& mft) { mft_ = mft; }
  const Mft& mft() const { return mft_; }
  void set_sl2vl(uint16_t in_port, uint16_t out_port, const Sl2VlTable& table);
  const Sl2VlTable& sl2vl(uint16_t in_port, uint16_t out_port) const {
    if (in_port > cfg_.num_ports || out_port > cfg_.num_ports) throw std::out_of_range("Switch::sl2vl: no such port");
    return sl2vl_at(in_port, out_port);
  }
  // Also mid-run (a subnet manager reprograms a port when connections end): the port's next
  // choice follows the new table from its first entry; nothing holds the old arbiter.
  void set_vlarb(uint16_t out_port, const link::VlArbConfig& cfg);
  const link::VlArbConfig& vlarb(uint16_t out_port) const { return ports_.at(out_port).arbiter->config(); }
  // PortInfo:HOQLife of output `port`, VL `vl` (kVl15 too), and SwitchInfo:LifeTimeValue, as
  // codes (lifetime.h). Set before the run.
  void set_hoq_life(uint16_t port, uint8_t vl, uint8_t code);
  void set_switch_life(uint8_t code);
  // Credits output `port` holds for `vl` or has been told are on their way (its limit when
  // nothing is in the next hop's buffer).
  uint32_t credits_held(uint16_t port, uint8_t vl) const {
    const link::TxCredits& c = ports_.at(port).credits;
    return c.available(vl) + c.announced(vl);
  }

  const SwitchConfig& config() const { return cfg_; }
  uint32_t node() const { return node_; }
  bool attached(uint16_t port) const { return port < ports_.size() && ports_[port].tx != nullptr; }
  const link::PortCounters& counters(uint16_t port) const { return ports_.at(port).counters; }
  uint64_t dropped() const { return dropped_; }
  // scheduling virtual_clock: the output's VirtualClock (its auxVCs, counter_bits), or null.
  const sched::VirtualClock* virtual_clock(uint16_t port) const {
    const auto& s = ports_.at(port).sched;
    return s && cfg_.scheduling == Scheduling::virtual_clock ? &s->vc : nullptr;
  }
  // Packets held in input and output buffers now (for conservation checks and deadlock reports).
  uint64_t buffered_packets() const { return buffered_ + obuf_held_; }
  // What the deadlock watch (platform/builder/deadlock_watch) reads between kernel slices;
  // nothing here is on the packet path. An output buffer is part of its output's channel:
  // its packets wait at that output VL like requests.
  // Bit v set when output `port` has requests (or packets in its output buffer) on VL v.
  uint16_t requested_vls(uint16_t port) const {
    const Port& p = ports_.at(port);
    return p.ob ? static_cast<uint16_t>(p.requested_vls | p.ob->vls) : p.requested_vls;
  }
  // Requests and output-buffered packets waiting at output `port` on VL `vl`.
  uint32_t requests_waiting(uint16_t port, uint8_t vl) const {
    return static_cast<uint32_t>(ports_.at(port).vls[vl].requests.size()) + output_buffered(port, vl);
  }
  // Output buffers: packets in output `port`'s buffer of `vl` now, and the most 64-byte
  // blocks that buffer ever held (reserved from a crossbar transfer's start to the tail's
  // departure on the link).
  uint32_t output_buffered(uint16_t port, uint8_t vl) const {
    const Port& p = ports_.at(port);
    return p.ob ? static_cast<uint32_t>(p.ob->q[vl].size()) : 0;
  }
  uint32_t output_buffer_hwm_blocks(uint16_t port, uint8_t vl) const {
    const Port& p = ports_.at(port);
    return p.ob ? p.ob->counters.vl[vl].buffer_hwm_blocks : 0;
  }
  // When VL `vl` of output `port` last made progress: its last transmission start, or when
  // requests came to it while it had none, whichever is later.
  uint64_t vl_progress_ps(uint16_t port, uint8_t vl) const { return ports_.at(port).vls[vl].progress_ps; }
  // Whether VL `vl` of output `port` can send nothing until credits come that are not on
  // their way: its head needs more credits than the output holds and has been announced,
  // and (with bypass) so does every request behind it. With output buffers: the buffer's
  // head lacks those credits and no request can enter the room left (ob_vl_stuck).
  bool vl_waits_for_credits(uint16_t port, uint8_t vl) const;
  // Blocks of input (`in_port`, `vl`) held by packets at `now_ps`, those on the cable into
  // it included; `releasing` is set when some of them are on their way out (a tail leaving
  // through the crossbar after now).
  uint32_t input_held_blocks(uint16_t in_port, uint8_t vl, uint64_t now_ps, bool& releasing) const;
  // Calls f(out_port, out_vl, blocks, hold) for every request of a packet held in input
  // (`in_port`, `in_vl`), at whichever output it waits. `hold` names the multicast packet a
  // copy belongs to (its copies share one input space: count its blocks once), kNoHold for
  // a unicast packet.
  template <class F>
  void for_each_request_from(uint16_t in_port, uint8_t in_vl, F&& f) const {
    const size_t n = ports_.size();
    for (uint16_t o = 1; o < n; ++o) {
      if (requests_from_[in_port * n + o] == 0) continue;
      for (uint32_t pending = ports_[o].requested_vls; pending; pending &= pending - 1) {
        const uint8_t vl = static_cast<uint8_t>(__builtin_ctz(pending));
        for (const Request& r : ports_[o].vls[vl].requests)
          if (r.in_port == in_port && r.in_vl == in_vl) f(o, vl, r.blocks, r.hold);
      }
    }
  }
  // Synchronous multicast, for the deadlock watch: whether output `port` is reserved for
  // multicast (it sends nothing else until the multicast it serves starts), and which held
  // packet that is (kNoHold if no synchronous copy waits there).
  bool mc_reserved(uint16_t port) const { return ports_.at(port).mc.reserved; }
  uint32_t sync_first(uint16_t port) const { return first_sync_at(ports_.at(port)); }
  // Calls f(out_port, out_vl, dlid) for every copy of held multicast packet `hold` still
  // waiting at an output (dlid: its MLID).
  template <class F>
  void for_each_copy(uint32_t hold, F&& f) const {
    for (uint16_t o = 1; o < ports_.size(); ++o)
      for (uint32_t pending = ports_[o].requested_vls; pending; pending &= pending - 1) {
        const uint8_t vl = static_cast<uint8_t>(__builtin_ctz(pending));
        for (const Request& r : ports_[o].vls[vl].requests)
          if (r.hold == hold) f(o, vl, r.packet->lrh.dlid);
      }
  }
  // Whether some request at output `port` may still go by a lifetime drop.
  bool port_drains_by_lifetime(uint16_t port) const {
    if (!lifetimes_) return false;
    for (uint8_t vl = 0; vl < ib::kMaxVls; ++vl)
      if (vl_drains_by_lifetime(port, vl)) return true;
    return false;
  }
  // Closes time accumulators at the end of a run.
  void finish();

 private:
  // A routed packet waiting for its output.
  struct Request {
    ib::Packet* packet = nullptr;
    uint64_t tail_ps = 0;  // when its tail is (or will be) in this switch
    uint64_t arrived_ps = 0;  // when its head came in (the switch lifetime counts from it)
    uint32_t blocks = 0;
    uint16_t in_port = 0;
    uint8_t in_vl = 0;
    uint8_t bypassed = 0;
    McKind mc = McKind::unicast;  // a multicast copy (replication.h)
    uint32_t hold = kNoHold;      // its packet's McHold while the input holds it
    // Rate schedulers: its connection (rate_slot), Vtick (virtual_clock) or finish tag
    // (fair_queueing).
    uint32_t slot = 0;
    uint64_t vtick_ns = 0;
    double finish = 0.0;
  };
  // An output VL's requests in arrival order (empty ones own no memory: vector_queue.h).
  using RequestQueue = sim::VectorQueue<Request>;
  // A packet in an output buffer: its tail is in the buffer at tail_ps (the end of its
  // crossbar transfer).
  struct OutputBuffered {
    ib::Packet* packet = nullptr;
    uint64_t tail_ps = 0;
    uint32_t blocks = 0;
  };
  // An output port's buffer: per VL, the packets the crossbar moved here, oldest first; their
  // space is taken when the crossbar transfer starts and frees when the tail has left on the
  // link.
  struct OutputBuffer {
    std::array<std::deque<OutputBuffered>, ib::kMaxVls> q;
    link::RxBuffers space;
    link::PortCounters counters;  // only its per-VL high-water marks are kept
    std::array<uint32_t, ib::kMaxVls> queued_blocks{};  // blocks of the packets in q
    uint16_t vls = 0;             // bit v set when q[v] is not empty
    uint64_t xbar_until = 0;      // the crossbar writes into this buffer until then
  };
  // A rate scheduler's state at one output (seed 003 Sec. 3.1).
  struct RateState {
    sched::VirtualClock vc;
    std::unique_ptr<sched::FairQueueing> fq;
    std::vector<uint32_t> queued;  // per connection slot: its requests waiting here
  };
  // An output VL's per-packet state in one cache line: a hop touches its VL's line, not
  // one line of each of six arrays of 16 (issue 17: at 1,024 hosts the fabric's state is
  // far beyond the L2 cache, and wall time per hop follows the lines a hop touches).
  struct alignas(64) VlState {
    RequestQueue requests;        // this output VL's requests in arrival order
    uint32_t waiting_blocks = 0;  // blocks of those requests
    // Input side, per VL: blocks admitted (a data packet takes its space as it is sent) whose
    // tail is not in yet: the buffer's content as a receiver sees it is used - arriving.
    uint32_t arriving_blocks = 0;
    // The last transmission start, or when requests came to it empty. One store per
    // packet; the deadlock watch reads it (vl_progress_ps).
    uint64_t progress_ps = 0;
    // HOQLife in ps (kNoLifetime: infinite) and since when its head request has been the
    // head (seed 000 Sec. 3.5's HQLifetime register).
    uint64_t hoq_life_ps = kNoLifetime;
    uint64_t head_since_ps = 0;
  };
  struct Port {
    // Read or written by every packet through the port: kept together at the front.
    uint64_t busy_until = 0;     // the transmitter sends until then
    uint64_t retry_at = ~uint64_t{0};  // a pending kRetry for this output, if any
    // The crossbar connects this input to an output until then (non-multiplexed; stays 0
    // with the multiplexed crossbar, whose inputs are never busy).
    uint64_t feeding_until = 0;
    uint64_t offer_at = ~uint64_t{0};  // a pending offer of this input to its outputs
    uint32_t queued = 0;   // requests of packets from this input, at any output
    uint16_t requested_vls = 0;  // bit v set when vls[v].requests is not empty
    uint8_t port_state = ib::mad::kPortActive;  // PortInfo:PortState (sma.h)
    bool link_down = false;  // a link event took the cable down (set_link)
    bool credit_blocked = false;  // idle with requests that wait for credits
    bool credit_starved = false;  // credit_blocked at some time since the last transmission
    // The port at the other end of the cable when the cable is crossed by direct calls
    // (set_direct_peer), else null: packets and credits go through tx and rx.
    uint16_t peer_port = 0;
    // One data VL, and the VL arbiter serves VL 0: with VL 0 alone ready the arbiter can
    // only choose it, and its state can never choose otherwise, so arbitrate() skips it
    // (its objects are lines a hop need not touch; IBA 7.6.9).
    bool vl0_alone = false;
    link::DirectPort* peer = nullptr;
    uint64_t peer_propagation_ps = 0;  // (the first line ends here)
    std::unique_ptr<OutSocket> tx;
    std::unique_ptr<InSocket> rx;
    std::unique_ptr<link::VlArbiter> arbiter;
    link::LinkRate rate{link::LinkConfig{}};
    // Input side.
    link::RxBuffers buffers;
    // Output side.
    link::TxCredits credits;
    link::CreditWaitClock credit_wait;
    std::array<VlState, ib::kMaxVls> vls;
    link::PortCounters counters;
    McPort mc;  // multicast replication state of this output (replication.cpp)
    std::unique_ptr<RateState> sched;  // switch.scheduling other than fifo
    // Output buffer (switch.output_buffer_bytes; switch_output_buffer.cpp), null without:
    // allocated only when used, so ports without one keep their size.
    std::unique_ptr<OutputBuffer> ob;
    // Canonical event order: credit blocks per VL on the cable to this output, pushed as
    // kCredit actions and not landed yet. Only the deadlock watch reads them
    // (vl_waits_for_credits): fifo's TxCredits announce such credits, canonical's do not.
    std::array<uint32_t, ib::kMaxVls> credits_on_cable{};
    // Canonical event order: blocks per VL of data packets on the cable into this input,
    // pushed as kArrive and not arrived yet (fifo admits them at the send). Watch-only too
    // (input_held_blocks).
    std::array<uint32_t, ib::kMaxVls> blocks_on_cable{};
  };
  // kCredit's arg: (blocks << 4) | vl, and this bit when credits_on_cable counted it (not
  // for an agenda another process runs: its own process keeps the count).
  static constexpr uint32_t kCreditCounted = 1u << 31;

  // kTxEnd: a transmission ends while its output or its input has requests waiting;
  // kRetry: arbitrate an output again (it frees, or credits land); kOffer: an input's
  // crossbar connection frees while requests of it wait at other outputs.
  // kTailIn: a data packet's tail is in (only with seed 004's marking on: it decides
  // whether the input buffer is full).
  // kSmaIn: an SMP's tail is in: it moves to the management processor's queue. kSmi: the
  // SMP at the head of that queue has had its sma_delay (switch_sma.cpp).
  // kArrive, kCredit (canonical event order only): a data packet's head has arrived from the
  // cable and passed the pipeline (it is admitted and routed), or a credit update arrives
  // (on_rx / on_tx_bw act at once in fifo order).
  enum ActionKind : uint16_t { kHead, kRouted, kTxEnd, kRetry, kOffer, kFreeInput, kDeliverLocal, kTailIn,
                                 kCentralFree, kSmi, kSmaIn, kTrap, kArrive, kCredit };
  friend class Sma;  // the switch's own management agent reads and writes its tables
  // SMPs waiting for the management processor, with the port each came in by.
  std::deque<std::pair<uint16_t, ib::Packet*>> sma_queue_;

  tlm::tlm_sync_enum on_rx(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                           sc_core::sc_time& delay);
  tlm::tlm_sync_enum on_tx_bw(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                              sc_core::sc_time& delay);
  // What on_rx and on_tx_bw do with what a cable brings, reached from them or directly from
  // the peer (link::DirectPort, set_direct_peer): a packet whose head is `delay_ps` from
  // now and whose tail follows `duration_ps` later; a credit update landing `delay_ps` from now.
  void receive(uint16_t port, ib::Packet* p, uint64_t delay_ps, uint64_t duration_ps) override;
  void credit_in(uint16_t port, uint8_t vl, uint32_t blocks, uint64_t delay_ps) override;
  void attach_port(uint16_t port, const link::LinkRate& rate);
  void dispatch(const sim::Action& a);

  void head_arrived(uint16_t in_port, ib::Packet* p);  // VL15 only
  void arrived(uint16_t in_port, ib::Packet* p, uint64_t head_ps);  // a data packet from the cable
  void credit_arrived(uint16_t out_port, uint8_t vl, uint32_t blocks, uint64_t at_ps);
  void admit(uint16_t in_port, ib::Packet* p);
  void routed(uint16_t in_port, ib::Packet* p);
  // The output for `p`: the LFT's, or one of the DLID's alternatives (path_select.h).
  uint8_t select_output(uint16_t in_port, ib::Packet& p);
  // Queues `p`, held in input `in_port` (0: made by the SMA), at `out_port`.
  void request_output(uint16_t in_port, ib::Packet* p, uint8_t out_port);
  void drop(uint16_t in_port, ib::Packet* p, ib::DropReason why);
  // Management (switch_sma.cpp): whether a VL15 packet routed to this switch is an SMP for
  // port 0; the SMI's step for it (IBA 14.2.2: forward a directed-route SMP, or have the
  // SMA answer); the packet consumed at port 0; the SMA's response sent out of port 0.
  static bool is_smp(const ib::Packet& p);
  void sma_in(uint16_t in_port, ib::Packet* p);
  void sma_next();
  void smi(uint16_t in_port, ib::Packet* p);
  void consume(ib::Packet* p);
  void discard_smp(ib::Packet* p);
  void send_response(const ib::mad::Smp& resp, uint16_t dlid, uint8_t out_port);
  // Trap 128 (switch_sma.cpp): raised by a port state change; sent, and resent on a timer
  // (kTrap, arg = the trap's generation) until the SM represses it.
  void raise_trap(uint16_t port);
  void send_trap(uint64_t generation);
  void trap_repressed(uint64_t tid);
  // The drop reason for a packet refused by a port's state: link_down when a cable is down.
  ib::DropReason state_drop_reason(uint16_t in_port, uint16_t out_port) const {
    return ports_[in_port].link_down || ports_[out_port].link_down ? ib::DropReason::link_down
                                                                   : ib::DropReason::port_state;
  }
  void arbitrate(uint16_t out_port);
  void offer_input(uint16_t in_port);
  // Index into requests[vl] of the request the request order would serve, or -1.
  // Requests whose input feeds another output are passed over; `on_busy_input(in, until)` is
  // told about each.
  // `fits(blocks)`: whether a request of that size may go (the next hop's credits, or with
  // output buffers the room in the output buffer).
  template <class OnBusyInput, class Fits>
  int candidate(const Port& out, uint8_t vl, bool& credit_blocked, OnBusyInput&& on_busy_input, Fits&& fits) const;
  void start_transmit(uint16_t out_port, uint8_t vl, int index);
  void put_on_wire(uint16_t out_port, uint8_t vl, ib::Packet* p, uint32_t bytes, uint64_t start, uint64_t end);
  // Rate schedulers (seed 003 Sec. 3.1): the connection slot of a packet; a request joins
  // or leaves an output's scheduler (charged when `sent`); the request the scheduler serves
  // among requests[vl] (inputs that feed another output passed over, unless
  // `ignore_busy`); whether request a goes before b; the VL to serve across VLs.
  static uint32_t rate_slot(const ib::Packet& p);
  void rate_enqueue(Port& out, Request& r);
  void rate_dequeue(Port& out, const Request& r, bool sent);
  template <class OnBusyInput>
  int rate_candidate(const Port& out, uint8_t vl, bool ignore_busy, OnBusyInput&& on_busy_input) const;
  bool rate_before(const Port& out, const Request& a, const Request& b) const;
  int rate_choose_vl(const Port& out, uint16_t ready, const std::array<int, ib::kMaxVls>& pick) const;
  void schedule_retry(uint16_t out_port, uint64_t at_ps);
  void schedule_offer(uint16_t in_port, uint64_t at_ps);
  void free_input(uint16_t in_port, uint8_t vl, uint32_t blocks);
  void tail_in(uint16_t in_port, uint8_t vl, uint32_t blocks);
  // Multicast (replication.cpp): copies to the ports of the packet's MFT entry.
  void replicate(uint16_t in_port, ib::Packet* p);
  void enqueue_copy(uint16_t out_port, const Request& r);
  void place_central(uint16_t out_port, ib::Packet* c, uint32_t hold, uint64_t arrived_ps);
  // A copy's transmission started (start_transmit): the input frees after the last one.
  void copy_left(uint16_t out_port, const Request& r, uint64_t end_ps);
  void central_freed(uint16_t out_port, uint32_t blocks);
  // A lifetime dropped copy `r` at `out_port` (discard): it counts as gone for its packet's
  // hold, which frees the input after the last copy has left or been dropped.
  void drop_copy(uint16_t out_port, const Request& r, ib::DropReason why);
  // Synchronous, at an output reserved for multicast: starts the multicast first in order at
  // `out_port` if all its outputs are reserved, idle and credited; true (the output is held).
  bool sync_gate(uint16_t out_port);
  // Synchronous: whether held packet a goes before b (multicast_order), and the first
  // multicast waiting at an output in that order (kNoHold if none).
  bool mc_before(uint32_t a, uint32_t b) const;
  uint32_t first_sync_at(const Port& po) const;
  void release_input(uint16_t in_port, uint8_t vl, uint32_t blocks, uint64_t at_ps);
  uint32_t new_hold();
  // Lifetimes (switch_lifetime.cpp): drops the expired requests of `out_port` and asks for
  // a retry when the next one would expire; discard removes one request.
  void expire(uint16_t out_port);
  void discard(uint16_t out_port, uint8_t vl, size_t index, ib::DropReason why);
  // A multicast copy is a request of its output like any other (IBA 18.2.5.4 drops the head
  // of an output queue): it may be dropped alone, and its packet's hold counts it gone.
  bool eligible(const Request& r) const { return drop_eligible(*r.packet, cfg_.drop_policy); }
  // Whether requests of VL `vl` at `port` can still go by expiring (the deadlock watch).
  bool vl_drains_by_lifetime(uint16_t port, uint8_t vl) const;
  // Output buffers (switch_output_buffer.cpp): both stages of an output; the crossbar moves
  // one request into the output buffer (true if it did); the link sends the output buffer's
  // packet the VL arbiter chooses; the deadlock watch's test of a stuck output VL.
  void ob_arbitrate(uint16_t out_port);
  bool ob_cross(uint16_t out_port);
  // The request the crossbar would move into output `out_port`'s buffer of `vl` by the
  // request order, among those that fit the room there (-1: none); in switch.cpp, beside
  // candidate().
  int ob_candidate(uint16_t out_port, uint8_t vl);
  void ob_enter(uint16_t out_port, uint8_t vl, int index);
  void ob_send(uint16_t out_port);
  bool ob_vl_stuck(uint16_t port, uint8_t vl) const;
  // Tells the sender on `in_port` that `blocks` of `vl` free `after_ps` from now.
  void return_credit(uint16_t in_port, uint8_t vl, uint32_t blocks, uint64_t after_ps);

  uint32_t node_;
  SwitchConfig cfg_;
  ib::PacketPool& packets_;
  link::PayloadPool& payloads_;
  sim::Probe& probe_;
  sim::TimedQueue agenda_;
  Lft lft_;
  AltTable alternatives_;
  PathSelector selector_;
  Mft mft_;
  std::vector<McHold> holds_;        // multicast packets held in input buffers
  std::vector<uint32_t> free_holds_;
  uint64_t mc_seq_ = 0;
  uint16_t mc_rr_ = 1;               // synchronous round robin: the input port served first
  std::vector<Port> ports_;                 // index = port number; 0 is the management port
  // [in * (num_ports + 1) + out]: one flat table, read once per packet (a vector of vectors
  // cost a second cache line per lookup).
  std::vector<Sl2VlTable> sl2vl_;
  Sl2VlTable& sl2vl_at(uint16_t in, uint16_t out) { return sl2vl_[in * (cfg_.num_ports + 1u) + out]; }
  const Sl2VlTable& sl2vl_at(uint16_t in, uint16_t out) const { return sl2vl_[in * (cfg_.num_ports + 1u) + out]; }
  std::vector<uint32_t> requests_from_;     // [in * (ports + 1) + out]: requests queued
  uint16_t rr_start_ = 1;                   // rotates which output is offered a freed input first
  bool multiplexed_;                        // cfg_.crossbar == Crossbar::multiplexed
  EcnMarker ecn_;
  uint64_t dropped_ = 0;
  uint64_t buffered_ = 0;
  uint64_t switch_life_ps_ = kNoLifetime;
  bool lifetimes_ = false;  // some lifetime is finite: arbitrate() calls expire()
  bool rate_ = false;       // cfg_.scheduling != fifo
  bool obuf_ = false;       // cfg_.output_buffer_bytes > 0
  uint64_t obuf_held_ = 0;  // packets in output buffers
  uint64_t unreserved_bps_ = 0;  // cfg_.unreserved_rate, whole b/s
  // rate_candidate: which connections it has met in this pass (== seen_epoch_).
  mutable std::vector<uint32_t> seen_;
  mutable uint32_t seen_epoch_ = 0;
  std::vector<TrapRecord> traps_;
  uint64_t trap_generation_ = 0;  // the outstanding trap's; 0: none outstanding
  Sma sma_;  // last: it reads the configuration and ports above
};

}  // namespace ibvp::sw
