#pragma once
// A packet as it travels through the simulated fabric: decoded headers (what a switch
// reads), the payload length, and bookkeeping that observers report (flow, times, hops).
// Payload bytes are not materialised on the fabric's hot path; wire.h builds the exact
// bytes (headers, pad, ICRC, VCRC) when a capture or a CRC check asks for them.
#include <array>
#include <cstdint>
#include <systemc>
#include <vector>

#include "models/ib/headers.h"

namespace ibvp::ib {

enum class DropReason : uint8_t {
  none = 0,
  no_route,        // DLID has no LFT entry
  vl15_overflow,   // VL15 packet arrived at a full VL15 buffer (IBA: dropped, not credited)
  bad_port,        // LFT entry names the input port or a port without a cable
  sl2vl,           // SL2VL maps the packet's SL to a VL the output does not operate
  ca_discard,      // the receiving CA discarded it: CRC, length or DLID check (IBA 7.8, 9.6), or a test's loss
  hoq_lifetime,    // waited at the head of its output VL longer than HOQLife (IBA 18.2.5.4)
  switch_lifetime, // stayed in one switch longer than the switch lifetime (IBA 18.2.5.4, seed 000 SLL)
  port_state,      // data through a port not Armed/Active in or not Active out, an SMP through a Down one (IBA 7.2)
  smp_discard,     // a directed-route SMP a switch's SMI discards (IBA 14.2.2), or an SMP nothing answers
  link_down,       // on a cable that is down, queued for it, or routed to it (a scenario link event)
};
const char* drop_reason_name(DropReason r);

// Packet::flow of packets no scenario flow created: observers count them in totals only.
constexpr uint32_t kNoFlow = ~uint32_t{0};
// Packet::frame of packets that carry no video frame.
constexpr uint32_t kNoFrame = ~uint32_t{0};
// Switch hops whose output port a packet records (Packet::route).
constexpr size_t kRouteHops = 16;

struct alignas(64) Packet {
  // Headers in the order they appear on the wire; which are present follows lrh.lnh and
  // the BTH opcode (opcode_layout()). The LRH and what every hop reads or writes besides
  // it come first, in one cache line (issue 17: on large fabrics a hop's wall time follows
  // the lines it touches; a packet's hot fields were spread over three).
  Lrh lrh;
  // wire_bytes() as of finalize_lengths(): what links and buffers charge, read per hop
  // without recomputing the header layout.
  uint32_t size = 0;
  uint64_t hop_tail_ps = 0;   // when its tail reaches the port now receiving it (ps)
  uint16_t hops = 0;          // switches traversed
  // The output port taken at each switch, the first kRouteHops of them (the packets table's
  // route column: which of a destination's alternatives it took, seed 000 Sec. 3.4).
  std::array<uint8_t, kRouteHops> route{};
  DropReason drop = DropReason::none;
  // seed 000 Sec. 3.4, reliable datagrams: the source chose the path (random path bits that
  // each switch with alternatives reads; sw::source_choice), so switches do not adapt it.
  bool source_path = false;
  uint32_t path_bits = 0;
  Grh grh;
  Bth bth;
  Deth deth;
  Reth reth;
  Aeth aeth;
  AtomicEth atomic_eth;
  AtomicAckEth atomic_ack_eth;
  uint32_t immdt = 0;
  uint32_t payload_bytes = 0;
  // Payload content, when a model carries real data (HCA DMA, captures). Empty means
  // zero-filled bytes of payload_bytes length.
  std::vector<uint8_t> payload;
  // The ICRC its source CA put on the wire (IBA 7.8.1), when a model carries it. The
  // fabric passes decoded packets, so the receiving CA checks the packet as it arrives
  // against this value: what changed on the way (a bit error, a bug) shows as a mismatch,
  // while what switches may change (VL, FECN, BECN) is masked out of the ICRC.
  uint32_t icrc = 0;
  bool has_icrc = false;

  // Bookkeeping, not on the wire.
  uint64_t id = 0;            // unique per simulation
  uint32_t flow = 0;          // index of the flow that created it; kNoFlow: none (ACKs, perftest)
  uint32_t frame = kNoFrame;  // video flows: index of the frame it carries a piece of, within the flow
  uint32_t frame_packets = 0; // video flows: packets of that frame
  uint32_t frame_piece = 0;   // video flows: its position in that frame, 0 .. frame_packets - 1
  char frame_type = 0;        // video flows: 'I', 'P' or 'B' (0: not known); selective dropping reads it
  uint32_t connection = ~uint32_t{0};  // CBR connections: index in the run's list (workload/cbr_connection.h)
  // The rate its connection reserved, b/s (0: none): seed 003 Sec. 4.2's messages carry
  // their Vtick in the header flit; a switch's rate scheduler reads it (switch.scheduling).
  uint64_t reserved_bps = 0;
  uint32_t src_node = 0;      // topology node indices of the source and destination endpoints
  uint32_t dst_node = 0;
  sc_core::sc_time created;   // when the generator produced it
  sc_core::sc_time injected;  // when its first bit left the source port
  // Seed 003 Fig. 5(a): when its header entered the network of routers (the flit model: its
  // header flit left the edge into the first router), ps; 0: not known, take `injected`.
  uint64_t entered_ps = 0;

  // Bytes between LRH and ICRC that depend on the opcode: extended headers + payload + pad.
  uint32_t wire_bytes() const;            // LRH .. VCRC inclusive, byte-exact
  uint32_t credit_blocks() const;         // 64-byte flow-control blocks it occupies
  // Sets bth.pad_cnt and lrh.pkt_len from the headers present and payload_bytes.
  void finalize_lengths();
};

// Packet ids that do not depend on how a run is split across processes (event_order:
// canonical, docs/parallel.md): the source node above the source's own count of packets it
// created. No process numbers another's packets, so one process and a split run give every
// packet the same id; the packets table renumbers them densely at the end.
constexpr unsigned kIdCountBits = 40;
inline uint64_t canonical_packet_id(uint32_t src_node, uint64_t count) {
  return (uint64_t{src_node} << kIdCountBits) | count;
}

constexpr uint32_t kCreditBlockBytes = 64;
inline uint32_t blocks_for(uint32_t bytes) { return (bytes + kCreditBlockBytes - 1) / kCreditBlockBytes; }

// Packets are pooled: a fabric run allocates each Packet once and reuses it, so the
// per-hop path never touches the heap (STYLE: the hot path allocates nothing).
class PacketPool {
 public:
  PacketPool() = default;
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;
  ~PacketPool();

  Packet* acquire();
  void release(Packet* p);
  uint64_t live() const { return live_; }
  uint64_t allocated() const { return all_.size(); }

 private:
  std::vector<Packet*> free_;
  std::vector<Packet*> all_;
  uint64_t live_ = 0;
  uint64_t next_id_ = 0;
};

}  // namespace ibvp::ib
