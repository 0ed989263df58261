#pragma once
// What a fabric-only endpoint sends: a source hands out packet descriptions when they are
// due. Generators (constant rate, Poisson, saturating; destination patterns) implement it in
// platform/workload; the endpoint paces them (credits, VL arbitration, static IPD).
#include <cstdint>

#include "models/ib/headers.h"

namespace ibvp::ep {

struct PacketSpec {
  uint32_t dst_node = 0;
  uint16_t dlid = 0;
  uint32_t dest_qp = 0x100;  // QPs 0 and 1 are the SMI and GSI (IBA 3.5.1): not for data
  uint64_t created_ps = 0;  // when the generator produced it (queueing at the source counts)
  uint32_t frame = ~uint32_t{0};  // video sources: frame index within the flow (ib::kNoFrame: none)
  uint32_t frame_packets = 0;     // video sources: packets of that frame
  uint32_t frame_piece = 0;       // video sources: position in that frame, from 0
  char frame_type = 0;            // video sources: 'I', 'P' or 'B' (0: not known)
  uint32_t connection = ~uint32_t{0};  // CBR connection sources: the connection's index (none: ~0)
  uint64_t reserved_bps = 0;  // the packet's reserved rate, b/s, when not the source's (CBR)
  // seed 000 Sec. 3.4 reliable datagrams: the source chose the path (ib::Packet::path_bits).
  bool source_path = false;
  uint32_t path_bits = 0;
};

class TrafficSource {
 public:
  static constexpr uint64_t kNever = ~uint64_t{0};
  virtual ~TrafficSource() = default;
  // Earliest time at or after now_ps when a packet is ready, or kNever.
  virtual uint64_t next_ready_ps(uint64_t now_ps) = 0;
  // Takes the packet that is ready (only called when next_ready_ps(now) <= now).
  virtual void take(uint64_t now_ps, PacketSpec& out) = 0;
  // Payload of the packet take() would hand out next; sources of one size keep the default.
  virtual uint32_t next_payload_bytes() const { return payload_bytes; }
  // SL of the packet take() would hand out next. A source whose SL depends on the
  // destination (the subnet manager put paths on several SLs, as dfsssp's VL layers) says
  // so here, so the port queues the packet on that SL's VL before taking it.
  virtual uint8_t next_sl() { return sl; }

  // Fixed per source: what every packet of it looks like on the wire (payload_bytes unless
  // next_payload_bytes() says otherwise).
  uint32_t flow = 0;
  uint8_t sl = 0;
  uint32_t payload_bytes = 2048;
  ib::Opcode opcode = ib::Opcode::ud_send_only;
  // IBA static rate control: after a packet, the flow waits ipd packet times (0 = full rate).
  uint32_t ipd = 0;
  // Subnet-management traffic: sent on VL15 whatever the SL, uncredited, before data VLs.
  bool vl15 = false;
  // The rate the flow reserved, b/s (0: none), carried by each packet (ib::Packet::reserved_bps).
  uint64_t reserved_bps = 0;
};

}  // namespace ibvp::ep
