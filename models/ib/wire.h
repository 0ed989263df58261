#pragma once
// Byte-exact InfiniBand packets: Packet <-> the bytes a link carries.
//
// Layout (IBA Vol. 1, ch. 5 data packet format; headers in 7.7, 8.3, 9.2, 9.3):
//   LRH(8) [GRH(40)] BTH(12) [DETH(8)] [RETH(16)] [AETH(4)] [ImmDt(4)] payload pad ICRC(4) VCRC(2)
// Header fields are big-endian (most significant byte first on the wire); the ICRC/VCRC
// are laid out as described in crc.h. Which extended headers appear follows
// opcode_layout() (IBA Table 39).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/ib/headers.h"
#include "models/ib/packet.h"

namespace ibvp::ib {

// Encoding derives the length fields from the headers present and payload_bytes, as
// Packet::finalize_lengths() does: LRH.PktLen, BTH.PadCnt and (global packets) GRH.PayLen
// are written with their correct values whatever the Packet holds, so the bytes are
// always self-consistent. Everything else is taken from the Packet; reserved bits are 0.
// The payload is packet.payload when non-empty (its size must equal payload_bytes),
// otherwise payload_bytes zero bytes; pad bytes are zero.
//
// Throws std::invalid_argument for packets that have no IBA wire form: raw LNH (0/1),
// an opcode outside the IBA tables, payload on an opcode that carries none, a payload
// vector whose size differs from payload_bytes, or a length PktLen (11 bits) cannot hold.
std::vector<uint8_t> encode(const Packet& packet);

// As encode(), into a caller buffer. Returns the bytes written (== packet.wire_bytes()),
// or 0 when `cap` is too small (nothing is written then).
size_t encode_into(const Packet& packet, uint8_t* out, size_t cap);
// As encode_into(), but the two VCRC bytes are not written: for a CA that needs only the
// ICRC of the bytes (the VCRC of bytes it has just written cannot disagree with them).
size_t encode_into_without_vcrc(const Packet& packet, uint8_t* out, size_t cap);

struct DecodeResult {
  bool ok = false;      // headers parsed and lengths consistent; `packet` is valid
  std::string error;    // why not, when !ok
  Packet packet;        // decoded headers; payload holds the payload bytes
  bool icrc_ok = false; // ICRC in the bytes matches the recomputed one
  bool vcrc_ok = false; // VCRC in the bytes matches the recomputed one
};

// Parses the bytes of one packet, LRH through VCRC. Rejects (ok=false, never throws or
// reads out of bounds): truncation, PktLen disagreeing with the byte count, raw LNH,
// GRH.NxtHdr other than IBA transport, GRH.PayLen mismatch, unknown opcode, payload on an
// opcode without one. A CRC mismatch leaves ok=true and reports icrc_ok/vcrc_ok=false:
// the packet is well formed but damaged, which is for the receiver to act on.
DecodeResult decode(const uint8_t* data, size_t len);
// decode() without the payload copy and the CRC checks (icrc_ok and vcrc_ok stay false):
// the headers and payload_bytes, with the same rejections, for a receiver that checks the
// CRCs itself or has just written the bytes.
DecodeResult decode_headers(const uint8_t* data, size_t len);

// Link-layer flow control packet (IBA 7.9.4): Op(4) FCTBS(12) VL(4) FCCL(12) LPCRC(16).
// Fields wider than their bit width are truncated to it.
std::array<uint8_t, kFlowControlPacketBytes> encode_fcp(const FlowControlPacket& fcp);
// False when len != 6, Op is reserved (not 0 or 1) or the LPCRC does not match; `out`
// is only written on success.
bool decode_fcp(const uint8_t* data, size_t len, FlowControlPacket& out);

}  // namespace ibvp::ib
