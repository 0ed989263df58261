#pragma once
// The scenario's flows on HCA hosts (endpoint_model: hca): each flow is one QP at its source
// and one at its destination, driven by programs in the hosts' CPUs through the verbs
// driver, so the HCA's firmware (its QP scheduling, static rates, congestion response)
// decides when the flow's packets leave.
//
// - The source's program posts SENDs of payload_bytes: a saturating flow keeps
//   hca.flow_depth messages posted while it is on (its ON periods, Sec. 6.3.2 of seed 004,
//   are those a fabric-only source draws: workload/on_off.h); constant and Poisson flows post
//   one message per generation time, waiting for a free send slot if the QP is full.
// - A video flow (generator video) posts each frame at its creation time as SENDs of at most
//   payload_bytes (<= hca.flow_mtu, so each is one packet), the way RTP cuts a frame into
//   datagrams (RFC 2250, RFC 3550); each packet is tagged with its frame (Hca::tag_frame)
//   so the recorder reassembles frames and judges their deadlines as on fabric-only
//   endpoints. A full send queue delays the rest of the frame (docs/video.md).
// - With a phased mix (scenario key mix, docs/mix.md) open-loop flows change their rate and
//   video flows turn on and off at the phase boundaries, as fabric-only sources do.
// - The destination's program keeps receives posted on every incoming QP and reposts each
//   one as it completes (it must never run dry: an RNR NAK would stall the flow for its timer).
// - Packets carry their flow (Hca::tag_flow), so flows.csv and the rate series are read as
//   with fabric-only endpoints.
// - A flow to a multicast group (seed 000 Sec. 3.6, docs/multicast.md) is one UD QP at the
//   source, sending to the group's MLID with DestQP 0xFFFFFF, and one UD QP at each member,
//   attached to the MLID (verbs::attach_mcast, IBA 10.5); the switches make the copies.
//
// QP set-up happens at time zero with the perftest's zero-time out-of-band exchange: every
// host creates its QPs, then all connect, then the flows start.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <functional>
#include <systemc>
#include <vector>

#include "models/sim/rng.h"
#include "platform/driver/host_node.h"
#include "platform/driver/verbs.h"
#include "platform/scenario/scenario.h"
#include "platform/workload/mix.h"

namespace ibvp::apps {

class FlowStreams {
 public:
  // `host_of_node`: the HCA host of each topology node (null for switches). Registers the
  // programs on the hosts' CPUs (before sc_start).
  FlowStreams(const Scenario& scenario, const std::vector<driver::HostNode*>& host_of_node);
  ~FlowStreams();

  // Issue 16, in-band SM: every flow waits for `opened` until `open()` holds, and its times
  // (start, stop) then count from `epoch_ps()`, the moment the subnet came up.
  struct StartGate {
    const sc_core::sc_event* opened = nullptr;
    std::function<bool()> open;
    std::function<uint64_t()> epoch_ps;
  };
  void set_start_gate(StartGate gate) { gate_ = std::move(gate); }

  // Why a flow stopped early ("" if none did): a completion in error, a set-up failure.
  const std::string& error() const { return error_; }
  // Messages of flow `f` whose send completed at its source.
  uint64_t completed(size_t f) const { return flows_.at(f).completed; }
  // Messages of flow `f` received (completions at the destination; for a multicast flow at
  // every member, so copies).
  uint64_t received(size_t f) const { return flows_.at(f).received; }
  // The QPN of flow `f`'s send QP at its source (0 before set-up).
  uint32_t send_qpn(size_t f) const { return flows_.at(f).send_qp ? flows_.at(f).send_qp->qp_num : 0; }

  // The host memory the flows need on their busiest host (verbs::HostMemoryPlan: driver
  // rings, then the message buffer), which the scenario loader checks against
  // hca.host_memory.size_bytes before the run.
  static uint64_t host_memory_bytes(const Scenario& scenario);

 private:
  struct Host;
  StartGate gate_;
  struct Flow {
    size_t index = 0;
    FlowConfig cfg;
    Host* src = nullptr;
    Host* dst = nullptr;               // unicast: the one receiver
    std::vector<Host*> dsts;           // every receiver (a multicast group's members)
    bool multicast = false;            // dlid is the group's MLID
    uint16_t dlid = 0;
    // The source's LID, which the receivers' QPs answer to: the topology's, as dlid is (an
    // in-band SM gives the same ones, but only after the QPs are connected at time 0).
    uint16_t src_lid = 0;
    uint64_t packet_time_ps = 0;  // one message's packets on the source link (open-loop loads)
    uint64_t seed = 0;            // the scenario's (video frame sizes)
    // The phased mix (workload/mix.h): a best-effort flow's load per phase, a stream's
    // phases on; empty without a mix.
    std::vector<workload::LoadPhase> load_phases;
    std::vector<uint64_t> phase_end_ps;
    std::vector<bool> active;
    bool active_at(uint64_t t_ps) const;
    sim::Rng rng{0, ""};  // the flow's stream (set by the constructor)
    verbs::CompletionQueue* send_cq = nullptr;
    verbs::QueuePair* send_qp = nullptr;
    verbs::QueuePair* recv_qp = nullptr;  // unicast: the receiver's QP
    verbs::AddressHandle* ah = nullptr;  // UD
    uint64_t completed = 0, received = 0;
    uint32_t outstanding = 0;
  };
  struct Host {
    driver::HostNode* node = nullptr;
    std::unique_ptr<verbs::Context> ctx;
    verbs::ProtectionDomain* pd = nullptr;
    verbs::MemoryRegion* mr = nullptr;
    verbs::CompletionQueue* recv_cq = nullptr;
    uint16_t lid = 0;
    std::vector<Flow*> out, in;
    std::vector<verbs::QueuePair*> in_qp;  // this host's receive QP of each flow of `in`
    // The receive loop's state: here, not on its thread's stack, which never unwinds (the
    // loop waits for the next completion when the run ends).
    std::map<uint32_t, size_t> in_by_qpn;  // receive QPN -> index into `in`
    std::map<size_t, uint32_t> repost;
    verbs::HostMemoryPlan plan;  // where its driver area and buffer go
  };
  // The objects create() makes on a host with `out` outgoing and `in` incoming flows.
  static verbs::HostMemoryPlan plan(const HcaHostConfig& hca, size_t out, size_t in, uint32_t buffer_bytes);
  static uint32_t recv_depth(const HcaHostConfig& hca);
  static uint32_t buffer_bytes(const Scenario& s);

  void host_program(Host& h);
  void flow_program(Flow& f);
  bool create(Host& h);
  bool connect(Flow& f, verbs::QueuePair* qp, uint16_t dlid, uint32_t dest_qpn);
  bool post_receives(Host& h, size_t k, uint32_t count);  // on h.in_qp[k]
  // The hosts that receive flow `fc`: its dst, or the members of the group it names.
  static std::vector<std::string> receivers(const Scenario& s, const FlowConfig& fc);
  void receive_loop(Host& h);
  void run_saturating(Flow& f);
  void run_open_loop(Flow& f);
  void run_video(Flow& f);
  // A SEND of `bytes` (0: the flow's payload_bytes).
  bool post_message(Flow& f, uint32_t bytes = 0);
  bool reap(Flow& f, bool wait);  // false on a completion in error
  // Every host reaches `phase` (0: QPs created, 1: connected and receives posted).
  void barrier(int phase);
  void fail(const std::string& why);

  static constexpr uint32_t kQkey = 0x11111111;

  const HcaHostConfig hca_;
  verbs::QpType transport_;
  uint32_t recv_depth_ = 0;
  uint32_t buffer_bytes_ = 0;
  std::vector<Flow> flows_;
  std::vector<std::unique_ptr<Host>> hosts_;
  uint32_t arrived_[2] = {0, 0};
  sc_core::sc_event barrier_event_;
  std::string error_;
};

}  // namespace ibvp::apps
