#pragma once
// Seed 003's router (Sec. 3, Fig. 1): pipelined, wormhole-switched, C virtual channels per
// physical channel, a flit buffer per input VC, a crossbar with a scheduler at each of its
// inputs. Five stages, one cycle each:
//   1. synchronise, demultiplex to the VC, decode (every flit, as it arrives);
//   2. routing (header flits only: a table from destination to output port);
//   3. arbitration for an output VC (header flits only; vc_allocator.h);
//   4. crossbar: at each crossbar input the scheduler picks one VC (TR: FCFS; NP and P:
//      control flits first, then VirtualClock over the connections' Vticks, models/sched);
//      each output takes one flit per cycle; middle and tail flits bypass stages 2-3;
//   5. output buffer and the physical channel, then the cable.
// The preemptive router (P) adds the extra buffer per input VC, dummy tail and header flits
// (Sec. 3.2.1, Fig. 2a) and flit acceleration (Sec. 3.2.2, Fig. 2b). Block-level multiplexing
// (Sec. 5.1, Fig. 6) keeps a crossbar input on one VC for up to block_flits flits.
//
// What is abstracted: stage 5 is a one-cycle register (the crossbar already gives each output
// one flit per cycle, which is the physical channel's rate); the paper's history stack is the
// dummy header kept in the regular buffer; one extra buffer per input VC (Sec. 3.2.1 has
// s - 1 of them for s priority levels), so a preempting message cannot itself be preempted.
#include <array>
#include <cstdint>
#include <vector>

#include "models/flit/flit_config.h"
#include "models/flit/input_vc.h"
#include "models/flit/output_vc.h"
#include "models/flit/vc_allocator.h"
#include "models/flit/wire.h"
#include "models/sched/virtual_clock.h"

namespace ibvp::flit {

class FlitRouter {
 public:
  FlitRouter(uint32_t node, uint16_t ports, const FlitConfig& cfg, std::vector<Message>& msgs);

  uint32_t node() const { return node_; }
  uint16_t ports() const { return static_cast<uint16_t>(inputs_.size()); }
  // Destination endpoint -> output port (the routing of stage 2).
  void set_route(uint32_t dst, uint16_t out_port);

  // Stage 1: a flit arrives on input `port`, VC `vc`, at cycle `now`.
  void receive(uint16_t port, uint16_t vc, const Flit& f, Cycle now);
  // A credit for output `port`, VC `vc`.
  void credit(uint16_t port, uint16_t vc, Pool pool, uint8_t cls) { outputs_[port][vc].credit_back(pool, cls); }
  // One cycle: preemption decisions, stage 3 allocations, stage 4 crossbar.
  void step(Cycle now, Wire& wire);

  // Observation (tests, invariants).
  const InputVc& input(uint16_t port, uint16_t vc) const { return inputs_[port][vc]; }
  const OutputVc& output(uint16_t port, uint16_t vc) const { return outputs_[port][vc]; }
  // Flits received and not yet through the crossbar (payload and dummy), and dummies made here
  // and still waiting.
  uint64_t payload_flits_held() const;
  uint64_t dummy_flits_held() const;
  uint64_t flits_held() const { return held_; }  // the two above together, kept as a count
  uint64_t dummies_made() const { return dummies_made_; }
  uint64_t flits_crossed() const { return crossed_; }
  // The VirtualClock of crossbar input `port` (NP, P): auxVC of a connection, in ps (ns with
  // FlitConfig::vc_bits).
  uint64_t aux_vc(uint16_t port, uint32_t connection) const { return vclock_.at(port).aux_vc(connection); }
  // Preemptions and accelerations per class (flit.h).
  const ClassCounts& counts(uint8_t cls) const { return counts_.at(cls); }

 private:
  struct Candidate {
    // Sec. 4.2: control "has the highest priority in our model": a control flit (class 0)
    // goes ahead of every VirtualClock stamp and of acceleration (NP, P); 0 control, 1 the others.
    uint8_t tier;
    uint64_t key;
    Cycle arrived;  // equal keys (one connection's flits in several VCs): the older first
    uint32_t tie;
    uint16_t in_port, vc, out_port;
  };
  InputVc& in(uint16_t p, uint16_t v) { return inputs_[p][v]; }
  static std::deque<BufferedFlit>& active(InputVc& v) { return v.serving_extra ? v.extra : v.regular; }
  static VcRoute& active_route(InputVc& v) { return v.serving_extra ? v.extra_route : v.regular_route; }
  void start_preemption(uint16_t p, InputVc& v, Cycle now);
  void allocate(Cycle now);
  VcChoice resume_vc(const ResumeRoute& back, uint8_t cls) const;
  void crossbar(Cycle now, Wire& wire);
  void cross(uint16_t p, uint16_t v, Cycle now, Wire& wire);
  void enqueue_sched(uint16_t p, uint32_t connection, Cycle now);

  uint32_t node_;
  const FlitConfig& cfg_;
  uint64_t cycle_ps_;
  std::vector<Message>& msgs_;
  std::vector<uint16_t> route_;                  // by destination endpoint
  std::vector<std::vector<InputVc>> inputs_;     // [port][vc]
  std::vector<std::vector<OutputVc>> outputs_;   // [port][vc]: the far input VCs' credits
  std::vector<std::vector<uint32_t>> holder_in_; // [port][vc]: in_port * vcs + in_vc of the owner
  std::vector<sched::VirtualClock> vclock_;      // per crossbar input (Sec. 3.1, stage 4; FlitConfig::vc_bits)
  std::vector<std::vector<uint32_t>> queued_;    // [port][connection]: flits waiting at that input
  std::vector<uint16_t> block_vc_;               // per crossbar input: the VC of its current block
  std::vector<uint32_t> block_left_;             // flits the block may still send
  std::vector<Candidate> cands_;                 // reused each cycle
  uint16_t rr_ = 0;                              // round robin among equal keys
  uint64_t dummies_made_ = 0;
  uint64_t held_ = 0;
  uint64_t crossed_ = 0;
  std::array<ClassCounts, kMaxClasses> counts_{};
};

}  // namespace ibvp::flit
