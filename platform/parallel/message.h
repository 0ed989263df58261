#pragma once
// What crosses a cut between processes of a split run (docs/parallel.md): one action of a
// remote agenda (a packet's head or a credit update arriving), with its canonical key and,
// for a packet, the packet itself. Fixed size and trivially copyable, so a window's messages
// go as one byte buffer per peer.
#include <array>
#include <cstdint>
#include <type_traits>

#include "models/ib/packet.h"
#include "models/sim/timed_queue.h"

namespace ibvp::parallel {

// Every field of ib::Packet but its payload bytes (fabric-only runs carry none).
struct WirePacket {
  ib::Lrh lrh;
  ib::Grh grh;
  ib::Bth bth;
  ib::Deth deth;
  ib::Reth reth;
  ib::Aeth aeth;
  uint32_t immdt, payload_bytes, size, icrc;
  bool has_icrc;
  uint64_t id;
  uint32_t flow, frame, frame_packets, frame_piece;
  char frame_type;
  uint32_t connection;
  uint64_t reserved_bps;
  uint32_t src_node, dst_node;
  uint64_t created_ps, injected_ps, entered_ps;
  uint16_t hops;
  uint64_t hop_tail_ps;
  std::array<uint8_t, ib::kRouteHops> route;
  bool source_path;
  uint32_t path_bits;
  ib::DropReason drop;
};
static_assert(std::is_trivially_copyable_v<WirePacket>);

struct Message {
  sim::Action action;   // when, canonical key, kind, port, arg; ptr is meaningless here
  uint32_t target = 0;  // the receiving agenda's id (its node index)
  uint64_t sent_ps = 0;  // when the sender made it (diagnostics)
  bool has_packet = false;
  WirePacket packet{};
};
static_assert(std::is_trivially_copyable_v<Message>);

inline WirePacket to_wire(const ib::Packet& p) {
  WirePacket w{};
  w.lrh = p.lrh; w.grh = p.grh; w.bth = p.bth; w.deth = p.deth; w.reth = p.reth; w.aeth = p.aeth;
  w.immdt = p.immdt; w.payload_bytes = p.payload_bytes; w.size = p.size; w.icrc = p.icrc; w.has_icrc = p.has_icrc;
  w.id = p.id; w.flow = p.flow; w.frame = p.frame; w.frame_packets = p.frame_packets; w.frame_piece = p.frame_piece;
  w.frame_type = p.frame_type; w.connection = p.connection; w.reserved_bps = p.reserved_bps;
  w.src_node = p.src_node; w.dst_node = p.dst_node;
  w.created_ps = p.created.value(); w.injected_ps = p.injected.value(); w.entered_ps = p.entered_ps;
  w.hops = p.hops; w.hop_tail_ps = p.hop_tail_ps; w.route = p.route; w.source_path = p.source_path;
  w.path_bits = p.path_bits; w.drop = p.drop;
  return w;
}

inline void from_wire(const WirePacket& w, ib::Packet& p) {
  p.lrh = w.lrh; p.grh = w.grh; p.bth = w.bth; p.deth = w.deth; p.reth = w.reth; p.aeth = w.aeth;
  p.immdt = w.immdt; p.payload_bytes = w.payload_bytes; p.size = w.size; p.icrc = w.icrc; p.has_icrc = w.has_icrc;
  p.payload.clear();
  p.id = w.id; p.flow = w.flow; p.frame = w.frame; p.frame_packets = w.frame_packets; p.frame_piece = w.frame_piece;
  p.frame_type = w.frame_type; p.connection = w.connection; p.reserved_bps = w.reserved_bps;
  p.src_node = w.src_node; p.dst_node = w.dst_node;
  p.created = sc_core::sc_time::from_value(w.created_ps); p.injected = sc_core::sc_time::from_value(w.injected_ps);
  p.entered_ps = w.entered_ps; p.hops = w.hops; p.hop_tail_ps = w.hop_tail_ps; p.route = w.route;
  p.source_path = w.source_path; p.path_bits = w.path_bits; p.drop = w.drop;
}

}  // namespace ibvp::parallel
