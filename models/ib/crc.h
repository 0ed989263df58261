#pragma once
// The three CRCs of an InfiniBand link (IBA Vol. 1, 7.8 and 7.9.4):
//   ICRC  - 32-bit invariant CRC, end to end, over LRH..pad with variant fields set to 1s;
//   VCRC  - 16-bit variant CRC, per hop, over LRH..ICRC exactly as transmitted;
//   LPCRC - 16-bit CRC of a link (flow control) packet, over its first 4 bytes.
//
// Both polynomials are processed the way IB transmits bits: bytes in wire order, bit 0
// of each byte first (the CRC procedure of IBA 7.8.1, which 7.8.2 reuses for the VCRC).
// That is the "reflected" formulation, so the
// ICRC is bit-for-bit the IEEE 802.3 / zlib CRC-32 of the masked bytes, and the VCRC is
// the reflected CRC-16 of polynomial 0x100B (reversed form 0xD008), init 0xFFFF, output
// complemented. The complemented register is transmitted low byte first (same convention
// as the Ethernet FCS), which is what ConnectX hardware puts on the wire (verified in
// tests/ib/test_crc.cpp against a captured RoCE CNP) and what Linux rxe writes (it stores
// ~crc32_le() as a little-endian word).
//
// Values returned here are the complemented register as an integer; store_crc32() /
// store_crc16() lay it out on the wire and load_crc32() / load_crc16() read it back.
#include <cstddef>
#include <cstdint>

namespace ibvp::ib {

// Generic engines. `state` is the raw shift register (no initial value / final complement
// applied), so a CRC over several buffers can be chained:
//   r = ~crc32_update(crc32_update(0xFFFFFFFF, a, na), b, nb).
uint32_t crc32_update(uint32_t state, const uint8_t* data, size_t len);
uint16_t crc16_ib_update(uint16_t state, const uint8_t* data, size_t len);

// One-shot: init all ones, final complement. crc32() equals zlib's crc32().
uint32_t crc32(const uint8_t* data, size_t len);
uint16_t crc16_ib(const uint8_t* data, size_t len);

// ICRC of an IBA packet (IBA 7.8.1). `pkt` starts at the first LRH byte; `len` counts
// LRH through the last pad byte (the ICRC itself and the VCRC are excluded). The LRH.LNH
// field selects the masking:
//   LNH = IBA local  (2): LRH.VL and BTH.resv8a (FECN, BECN, resv6) are taken as 1s;
//   LNH = IBA global (3): the whole LRH (a router rewrites it), GRH.TClass,
//                         GRH.FlowLabel, GRH.HopLmt and BTH.resv8a are taken as 1s.
// Raw packets (LNH 0/1) carry no ICRC; for them the local masking is applied to whatever
// bytes are there (callers should not ask). Never reads beyond pkt[len-1].
uint32_t icrc(const uint8_t* pkt, size_t len);

// VCRC (IBA 7.8.2): CRC-16 over LRH through ICRC inclusive, nothing masked because it is
// recomputed on every hop. `len` = bytes from the LRH through the end of the ICRC.
uint16_t vcrc(const uint8_t* pkt, size_t len);

// LPCRC of a flow-control packet (IBA 7.9.4): the same CRC-16 over its first 4 bytes.
uint16_t lpcrc(const uint8_t* fcp4);

// Wire layout of a CRC value: low byte first (see the header comment).
inline void store_crc32(uint8_t* out, uint32_t v) {
  out[0] = static_cast<uint8_t>(v);
  out[1] = static_cast<uint8_t>(v >> 8);
  out[2] = static_cast<uint8_t>(v >> 16);
  out[3] = static_cast<uint8_t>(v >> 24);
}
inline uint32_t load_crc32(const uint8_t* in) {
  return static_cast<uint32_t>(in[0]) | static_cast<uint32_t>(in[1]) << 8 |
         static_cast<uint32_t>(in[2]) << 16 | static_cast<uint32_t>(in[3]) << 24;
}
inline void store_crc16(uint8_t* out, uint16_t v) {
  out[0] = static_cast<uint8_t>(v);
  out[1] = static_cast<uint8_t>(v >> 8);
}
inline uint16_t load_crc16(const uint8_t* in) {
  return static_cast<uint16_t>(in[0] | in[1] << 8);
}

}  // namespace ibvp::ib
