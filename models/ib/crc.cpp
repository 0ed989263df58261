#include "models/ib/crc.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "models/ib/headers.h"

namespace ibvp::ib {

namespace {

// Reflected polynomials: bit i of the register holds the coefficient of x^(W-1-i), which
// is what processing each byte LSB-first requires (IBA 7.8.1 bit order).
constexpr uint32_t kCrc32PolyReflected = 0xEDB88320u;  // 0x04C11DB7 reversed (IBA 7.8.1)
constexpr uint16_t kCrc16PolyReflected = 0xD008u;      // 0x100B reversed (IBA 7.8.2)

// Slicing-by-8 tables (Kounavis and Berry, "A Systematic Approach to Building High
// Performance Software-based CRC Generators", ISCC 2005), built at compile time from the
// bitwise definition. Row 0 is the classic byte-at-a-time table: the register after one
// byte n. Row k is the register after byte n followed by k zero bytes, so eight bytes are
// folded in with eight independent lookups instead of eight dependent ones. The same
// construction serves the 16-bit register: the state only overlaps the block's first two
// bytes, the other six enter as data.
template <typename Reg, Reg kPoly>
constexpr std::array<std::array<Reg, 256>, 8> make_slicing_tables() {
  std::array<std::array<Reg, 256>, 8> t{};
  for (uint32_t n = 0; n < 256; ++n) {
    Reg c = static_cast<Reg>(n);
    for (int k = 0; k < 8; ++k) c = static_cast<Reg>((c & 1u) ? (c >> 1) ^ kPoly : c >> 1);
    t[0][n] = c;
  }
  for (size_t k = 1; k < 8; ++k)
    for (uint32_t n = 0; n < 256; ++n)
      t[k][n] = static_cast<Reg>((t[k - 1][n] >> 8) ^ t[0][t[k - 1][n] & 0xFFu]);
  return t;
}
constexpr auto kCrc32Tables = make_slicing_tables<uint32_t, kCrc32PolyReflected>();
constexpr auto kCrc16Tables = make_slicing_tables<uint16_t, kCrc16PolyReflected>();

// Eight bytes as a little-endian word, whatever the host's byte order: one unaligned load
// on a little-endian machine (a byte-assembly loop is not merged into a load by GCC 12 and
// would cost more instructions than the byte-at-a-time CRC it replaces).
inline uint64_t load_le64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

// One slicing step over 8 bytes: the register is XORed into the block's low bytes (bytes
// go in wire order, bit 0 first: the reflected formulation), then each byte is looked up
// in the row for the number of bytes that follow it.
template <typename Reg>
inline Reg slice8(const std::array<std::array<Reg, 256>, 8>& t, Reg state, const uint8_t* p) {
  const uint64_t x = load_le64(p) ^ state;
  return static_cast<Reg>(t[7][x & 0xFF] ^ t[6][(x >> 8) & 0xFF] ^ t[5][(x >> 16) & 0xFF] ^
                          t[4][(x >> 24) & 0xFF] ^ t[3][(x >> 32) & 0xFF] ^ t[2][(x >> 40) & 0xFF] ^
                          t[1][(x >> 48) & 0xFF] ^ t[0][x >> 56]);
}

// Byte offsets inside the headers of the fields the ICRC treats as variant.
constexpr size_t kLrhVlByte = 0;         // LRH byte 0 = VL(7:4) | LVer(3:0)
constexpr size_t kLrhLnhByte = 1;        // LRH byte 1 = SL(7:4) | resv(3:2) | LNH(1:0)
constexpr size_t kBthResv8aByte = 4;     // BTH byte 4 = FECN | BECN | resv6 (IBA 9.2, A10)
constexpr size_t kGrhTclassFlowBytes = 4;  // GRH bytes 0..3 = IPVer | TClass | FlowLabel
constexpr size_t kGrhHopLmtByte = 7;

}  // namespace

uint32_t crc32_update(uint32_t state, const uint8_t* data, size_t len) {
  for (; len >= 8; data += 8, len -= 8) state = slice8(kCrc32Tables, state, data);
  for (; len > 0; ++data, --len) state = kCrc32Tables[0][(state ^ *data) & 0xFFu] ^ (state >> 8);
  return state;
}

uint16_t crc16_ib_update(uint16_t state, const uint8_t* data, size_t len) {
  for (; len >= 8; data += 8, len -= 8) state = slice8(kCrc16Tables, state, data);
  for (; len > 0; ++data, --len)
    state = static_cast<uint16_t>(kCrc16Tables[0][(state ^ *data) & 0xFFu] ^ (state >> 8));
  return state;
}

uint32_t crc32(const uint8_t* data, size_t len) { return ~crc32_update(0xFFFFFFFFu, data, len); }

uint16_t crc16_ib(const uint8_t* data, size_t len) {
  return static_cast<uint16_t>(~crc16_ib_update(0xFFFFu, data, len));
}

uint32_t icrc(const uint8_t* pkt, size_t len) {
  // The variant fields all sit in the first LRH+GRH+BTH bytes; copy that prefix, overwrite
  // the variant bits with 1s (IBA 7.8.1: variant fields count as ones for the ICRC),
  // then run the CRC over the masked prefix followed by the untouched rest.
  uint8_t head[kLrhBytes + kGrhBytes + kBthBytes];
  const bool global = len > kLrhLnhByte &&
                      (pkt[kLrhLnhByte] & 0x3u) == static_cast<uint8_t>(Lnh::iba_global);
  const size_t head_len = std::min(len, global ? sizeof(head) : size_t{kLrhBytes + kBthBytes});
  if (head_len) std::memcpy(head, pkt, head_len);

  size_t bth;
  if (global) {
    // A router rebuilds the whole LRH, so all 64 bits are variant for a global packet
    // (the same 8 bytes of 1s RoCE prepends in place of the absent LRH, IBA annex A16/A17).
    std::memset(head, 0xFF, std::min(head_len, size_t{kLrhBytes}));
    // GRH: the low nibble of byte 0 and bytes 1..3 are TClass + FlowLabel; IPVer (high
    // nibble of byte 0) stays invariant. HopLmt is decremented by routers.
    for (size_t i = 0; i < kGrhTclassFlowBytes; ++i) {
      const size_t at = kLrhBytes + i;
      if (at < head_len) head[at] = (i == 0) ? static_cast<uint8_t>(head[at] | 0x0Fu) : 0xFF;
    }
    if (kLrhBytes + kGrhHopLmtByte < head_len) head[kLrhBytes + kGrhHopLmtByte] = 0xFF;
    bth = kLrhBytes + kGrhBytes;
  } else {
    // Local packet: only the VL (switches remap SL->VL per hop) is variant in the LRH.
    if (head_len > kLrhVlByte) head[kLrhVlByte] |= 0xF0u;
    bth = kLrhBytes;
  }
  // BTH.resv8a holds FECN/BECN, which switches and the destination may set in flight.
  if (bth + kBthResv8aByte < head_len) head[bth + kBthResv8aByte] = 0xFF;

  uint32_t state = crc32_update(0xFFFFFFFFu, head, head_len);
  state = crc32_update(state, pkt + head_len, len - head_len);
  return ~state;
}

uint16_t vcrc(const uint8_t* pkt, size_t len) { return crc16_ib(pkt, len); }

uint16_t lpcrc(const uint8_t* fcp4) { return crc16_ib(fcp4, 4); }

}  // namespace ibvp::ib
