// ICRC / VCRC / LPCRC (IBA Vol. 1, 7.8.1, 7.8.2, 7.9.4) against independent references:
//  - the CRC-32 catalogue check value and the Linux rxe seed constant;
//  - a RoCEv2 CNP captured from a Mellanox ConnectX-4 Lx, with its hardware ICRC
//    (published in Scapy's test suite, test/contrib/roce.uts, "RoCE CNP captured on
//    ConnectX-4 Lx"), which fixes polynomial, bit order, masking style and wire byte order;
//  - a bit-serial implementation written from the spec's procedure (below), which shares
//    nothing with the table-driven code in models/ib/crc.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "models/ib/crc.h"
#include "models/ib/wire.h"

namespace ibvp::ib {
namespace {

std::vector<uint8_t> from_hex(const char* hex) {
  std::vector<uint8_t> out;
  for (const char* p = hex; *p;) {
    if (*p == ' ') {
      ++p;
      continue;
    }
    auto nib = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
    out.push_back(static_cast<uint8_t>(nib(p[0]) << 4 | nib(p[1])));
    p += 2;
  }
  return out;
}

// The CRC procedure of IBA 7.8.1 done one bit at a time with a non-reflected register:
// initial value all ones; bytes in transmission order, each byte least significant bit
// first; remainder complemented; the remainder's most significant bit is transmitted
// first, and since bytes go out bit 0 first it lands in bit 0 of the first CRC byte.
// Returns the CRC bytes in wire order. W is 32 (ICRC) or 16 (VCRC/LPCRC).
std::vector<uint8_t> serial_crc(const uint8_t* d, size_t n, int width, uint32_t poly) {
  const uint64_t mask = (uint64_t{1} << width) - 1;
  const uint64_t top = uint64_t{1} << (width - 1);
  uint64_t reg = mask;
  for (size_t i = 0; i < n; ++i) {
    for (int b = 0; b < 8; ++b) {
      const bool in = (d[i] >> b) & 1;
      const bool feedback = ((reg & top) != 0) != in;
      reg = (reg << 1) & mask;
      if (feedback) reg ^= poly;
    }
  }
  reg = ~reg & mask;
  std::vector<uint8_t> out(static_cast<size_t>(width / 8), 0);
  for (int k = 0; k < width; ++k) {
    const int bit = static_cast<int>((reg >> (width - 1 - k)) & 1);
    out[static_cast<size_t>(k / 8)] |= static_cast<uint8_t>(bit << (k % 8));
  }
  return out;
}

std::vector<uint8_t> wire32(uint32_t v) {
  std::vector<uint8_t> b(4);
  store_crc32(b.data(), v);
  return b;
}
std::vector<uint8_t> wire16(uint16_t v) {
  std::vector<uint8_t> b(2);
  store_crc16(b.data(), v);
  return b;
}

Packet sample_local_packet() {
  Packet p;
  p.lrh.vl = 3;
  p.lrh.sl = 5;
  p.lrh.lnh = Lnh::iba_local;
  p.lrh.dlid = 0x1234;
  p.lrh.slid = 0x0042;
  p.bth.opcode = Opcode::rc_rdma_write_only;
  p.bth.p_key = 0x8001;
  p.bth.dest_qp = 0x00ABCD;
  p.bth.psn = 0x123456;
  p.reth.va = 0x1122334455667788ull;
  p.reth.r_key = 0xCAFEF00D;
  p.reth.dma_len = 13;
  p.payload_bytes = 13;
  for (uint32_t i = 0; i < 13; ++i) p.payload.push_back(static_cast<uint8_t>(0x30 + i));
  p.finalize_lengths();
  return p;
}

Packet sample_global_packet() {
  Packet p = sample_local_packet();
  p.lrh.lnh = Lnh::iba_global;
  p.grh.tclass = 0x5A;
  p.grh.flow_label = 0xABCDE;
  p.grh.hop_lmt = 0x40;
  for (int i = 0; i < 16; ++i) {
    p.grh.sgid[i] = static_cast<uint8_t>(0xF0 + i);
    p.grh.dgid[i] = static_cast<uint8_t>(0x10 + i);
  }
  p.finalize_lengths();
  return p;
}

TEST(Crc, Crc32OfCheckStringIsTheCatalogueCheckValue) {
  // CRC-32/ISO-HDLC (= IEEE 802.3, the ICRC polynomial) check value over "123456789",
  // from the Williams/reveng CRC catalogue.
  const char* s = "123456789";
  EXPECT_EQ(crc32(reinterpret_cast<const uint8_t*>(s), 9), 0xCBF43926u);
}

TEST(Crc, RegisterAfterEightOnesBytesEqualsLinuxRxeMaskedLrhSeed) {
  // drivers/infiniband/sw/rxe/rxe_icrc.c seeds its ICRC with 0xdebb20e3, "the result of
  // computing a CRC with a seed of 0xffffffff and 8 bytes of 0xff representing a masked
  // LRH" - the same masked LRH our icrc() uses for global packets.
  const uint8_t ones[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  EXPECT_EQ(crc32_update(0xFFFFFFFFu, ones, 8), 0xDEBB20E3u);
}

TEST(Crc, IcrcAlgorithmReproducesConnectX4LxHardwareIcrcOfCapturedRoceCnp) {
  // Scapy test/contrib/roce.uts, "RoCE CNP captured on ConnectX-4 Lx" (Ethernet header
  // dropped): IPv4 | UDP(4791) | BTH(CNP, BECN=1) | 16 reserved bytes | ICRC 82 fd 00 2a.
  const std::vector<uint8_t> frame = from_hex(
      "45c2003c718c400040119161 0a001101 0a001201"  // IPv4
      "000012b700280000"                            // UDP
      "8100ffff 40000118 00000000"                  // BTH: opcode 0x81, resv8a=0x40 (BECN)
      "00000000000000000000000000000000"            // CNP reserved payload
      "82fd002a");                                  // ICRC as transmitted
  // RoCEv2 (IBA annex A17) computes the IBA ICRC with the LRH replaced by 64 one bits and
  // the IP/UDP variant fields (TOS, TTL, IP checksum, UDP checksum) and BTH.resv8a set to 1s.
  std::vector<uint8_t> masked(8 + frame.size() - 4, 0xFF);
  std::copy(frame.begin(), frame.end() - 4, masked.begin() + 8);
  uint8_t* ip = masked.data() + 8;
  ip[1] = 0xFF;                 // TOS
  ip[8] = 0xFF;                 // TTL
  ip[10] = ip[11] = 0xFF;       // header checksum
  ip[20 + 6] = ip[20 + 7] = 0xFF;  // UDP checksum
  ip[28 + 4] = 0xFF;            // BTH resv8a (FECN, BECN, resv6)
  const std::vector<uint8_t> on_wire(frame.end() - 4, frame.end());
  EXPECT_EQ(wire32(crc32(masked.data(), masked.size())), on_wire);
  EXPECT_EQ(serial_crc(masked.data(), masked.size(), 32, 0x04C11DB7u), on_wire);
}

TEST(Crc, TableDrivenCrc32EqualsBitSerialSpecProcedure) {
  std::mt19937 rng(7);
  for (size_t n : {0u, 1u, 2u, 3u, 4u, 7u, 64u, 4222u}) {
    std::vector<uint8_t> d(n);
    for (auto& b : d) b = static_cast<uint8_t>(rng());
    EXPECT_EQ(wire32(crc32(d.data(), d.size())), serial_crc(d.data(), d.size(), 32, 0x04C11DB7u))
        << n << " bytes";
  }
}

TEST(Crc, TableDrivenCrc16EqualsBitSerialSpecProcedureForPolynomial100B) {
  std::mt19937 rng(11);
  for (size_t n : {0u, 1u, 2u, 4u, 5u, 30u, 4224u}) {
    std::vector<uint8_t> d(n);
    for (auto& b : d) b = static_cast<uint8_t>(rng());
    EXPECT_EQ(wire16(crc16_ib(d.data(), d.size())), serial_crc(d.data(), d.size(), 16, 0x100Bu))
        << n << " bytes";
    EXPECT_EQ(vcrc(d.data(), d.size()), crc16_ib(d.data(), d.size()));
  }
}

// The engines fold 8 bytes per step (slicing-by-8) and finish byte by byte: every length
// around the block boundaries, every start alignment, and a chain split anywhere must give
// the spec procedure's result.
TEST(Crc, SlicedCrcsEqualBitSerialAtEveryLengthAlignmentAndSplit) {
  std::mt19937 rng(13);
  std::vector<uint8_t> buf(64 + 8);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t align = 0; align < 8; ++align) {
    for (size_t n = 0; n <= 64; ++n) {
      const uint8_t* d = buf.data() + align;
      const auto want32 = serial_crc(d, n, 32, 0x04C11DB7u);
      const auto want16 = serial_crc(d, n, 16, 0x100Bu);
      ASSERT_EQ(wire32(crc32(d, n)), want32) << n << " bytes at offset " << align;
      ASSERT_EQ(wire16(crc16_ib(d, n)), want16) << n << " bytes at offset " << align;
      for (size_t cut = 0; cut <= n; ++cut) {
        const uint32_t r32 = ~crc32_update(crc32_update(0xFFFFFFFFu, d, cut), d + cut, n - cut);
        const uint16_t r16 =
            static_cast<uint16_t>(~crc16_ib_update(crc16_ib_update(0xFFFFu, d, cut), d + cut, n - cut));
        ASSERT_EQ(wire32(r32), want32) << n << " bytes cut at " << cut;
        ASSERT_EQ(wire16(r16), want16) << n << " bytes cut at " << cut;
      }
    }
  }
}

TEST(Crc, IcrcOfLocalPacketEqualsCrc32WithVlAndResv8aSetToOnes) {
  const std::vector<uint8_t> w = encode(sample_local_packet());
  std::vector<uint8_t> m(w.begin(), w.end() - 6);
  m[0] |= 0xF0;   // LRH.VL
  m[8 + 4] = 0xFF;  // BTH.resv8a
  EXPECT_EQ(icrc(w.data(), w.size() - 6), crc32(m.data(), m.size()));
  EXPECT_EQ(wire32(icrc(w.data(), w.size() - 6)), std::vector<uint8_t>(w.end() - 6, w.end() - 2));
}

TEST(Crc, IcrcOfGlobalPacketMasksWholeLrhTclassFlowLabelHopLmtAndResv8a) {
  const std::vector<uint8_t> w = encode(sample_global_packet());
  std::vector<uint8_t> m(w.begin(), w.end() - 6);
  std::memset(m.data(), 0xFF, 8);  // LRH
  m[8] |= 0x0F;                    // GRH TClass high nibble (IPVer stays)
  m[9] = m[10] = m[11] = 0xFF;     // TClass low nibble + FlowLabel
  m[8 + 7] = 0xFF;                 // HopLmt
  m[48 + 4] = 0xFF;                // BTH.resv8a
  EXPECT_EQ(icrc(w.data(), w.size() - 6), crc32(m.data(), m.size()));
}

// Bits of a local packet the ICRC must ignore: LRH.VL (byte 0, bits 7..4) and BTH.resv8a.
bool local_variant_bit(size_t byte, int bit) {
  return (byte == 0 && bit >= 4) || byte == 8 + 4;
}
bool global_variant_bit(size_t byte, int bit) {
  if (byte < 8) return true;                       // whole LRH
  if (byte == 8) return bit < 4;                   // TClass[7:4]
  if (byte >= 9 && byte <= 11) return true;        // TClass[3:0], FlowLabel
  if (byte == 15) return true;                     // HopLmt
  return byte == 48 + 4;                           // BTH.resv8a
}

void check_every_bit(const Packet& p, bool (*variant)(size_t, int)) {
  const std::vector<uint8_t> w = encode(p);
  const size_t icrc_len = w.size() - 6;
  for (size_t byte = 0; byte < icrc_len; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> f = w;
      f[byte] ^= static_cast<uint8_t>(1u << bit);
      const DecodeResult r = decode(f.data(), f.size());
      // Flipping a length or opcode bit may make the packet unparseable; the CRCs are
      // still defined over the bytes, so check them directly.
      const bool icrc_same = icrc(f.data(), icrc_len) == load_crc32(f.data() + icrc_len);
      const bool vcrc_same = vcrc(f.data(), icrc_len + 4) == load_crc16(f.data() + icrc_len + 4);
      // LRH.LNH selects the masking itself, so a flipped LNH changes which fields are
      // masked; it is covered by the VCRC and by decode(), not meaningfully by the ICRC.
      if (!(byte == 1 && bit < 2)) {
        EXPECT_EQ(icrc_same, variant(byte, bit)) << "byte " << byte << " bit " << bit;
      }
      EXPECT_FALSE(vcrc_same) << "VCRC missed a flip at byte " << byte << " bit " << bit;
      if (r.ok) {
        EXPECT_EQ(r.icrc_ok, icrc_same);
        EXPECT_FALSE(r.vcrc_ok);
      }
    }
  }
}

TEST(Crc, IcrcIgnoresExactlyTheLocalVariantBitsAndVcrcCatchesEveryFlip) {
  check_every_bit(sample_local_packet(), local_variant_bit);
}

TEST(Crc, IcrcIgnoresExactlyTheGlobalVariantBitsAndVcrcCatchesEveryFlip) {
  check_every_bit(sample_global_packet(), global_variant_bit);
}

TEST(Crc, SwitchRewritingVlFecnBecnKeepsIcrcValidButBreaksVcrc) {
  Packet p = sample_local_packet();
  const std::vector<uint8_t> w = encode(p);
  // What a switch does in flight (SL-to-VL remapping, IBA 7.6; FECN marking, annex A10),
  // here without recomputing anything.
  for (int which = 0; which < 3; ++which) {
    std::vector<uint8_t> f = w;
    if (which == 0) f[0] = static_cast<uint8_t>((f[0] & 0x0F) | 0x70);  // VL 3 -> 7
    if (which == 1) f[8 + 4] |= 0x80;                                   // FECN
    if (which == 2) f[8 + 4] |= 0x40;                                   // BECN
    const DecodeResult r = decode(f.data(), f.size());
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_TRUE(r.icrc_ok) << "variant field " << which;
    EXPECT_FALSE(r.vcrc_ok) << "variant field " << which;
    // A switch that re-encodes the packet produces a valid VCRC again, same ICRC.
    Packet q = r.packet;
    const std::vector<uint8_t> re = encode(q);
    EXPECT_EQ(std::vector<uint8_t>(re.end() - 6, re.end() - 2),
              std::vector<uint8_t>(w.end() - 6, w.end() - 2));
    const DecodeResult rr = decode(re.data(), re.size());
    EXPECT_TRUE(rr.icrc_ok && rr.vcrc_ok);
  }
}

TEST(Crc, FlippedInvariantBitBreaksIcrc) {
  const std::vector<uint8_t> w = encode(sample_local_packet());
  for (size_t byte : {size_t{2}, size_t{7}, size_t{8 + 5}, size_t{20}, w.size() - 7}) {
    std::vector<uint8_t> f = w;
    f[byte] ^= 0x01;
    const DecodeResult r = decode(f.data(), f.size());
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_FALSE(r.icrc_ok) << "byte " << byte;
    EXPECT_FALSE(r.vcrc_ok) << "byte " << byte;
  }
}

TEST(Crc, LpcrcCoversTheFirstFourBytesOfAFlowControlPacket) {
  const uint8_t fcp[4] = {0x10, 0x23, 0x45, 0x67};
  EXPECT_EQ(lpcrc(fcp), crc16_ib(fcp, 4));
  EXPECT_EQ(wire16(lpcrc(fcp)), serial_crc(fcp, 4, 16, 0x100Bu));
}

}  // namespace
}  // namespace ibvp::ib
