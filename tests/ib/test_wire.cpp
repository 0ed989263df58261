// Packet <-> bytes (models/ib/wire.h): round trips over every IBA opcode the model knows,
// length fields, rejection of malformed input, flow-control packets, and the committed
// vectors in tests/ib/vectors.txt that tests/python/test_wire_reference.py re-checks with
// an independent Python decoder and bit-serial CRCs.
//
// To regenerate vectors.txt after an intentional format change (then re-run the Python
// test, which must agree without being changed):
//   IBVP_WRITE_VECTORS=$PWD/tests/ib/vectors.txt build/test_ib --gtest_filter='Vectors.*Committed*'
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/testing.h"
#include "models/ib/crc.h"
#include "models/ib/wire.h"

namespace ibvp::ib {
namespace {

std::string to_hex(const uint8_t* d, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    s.push_back(digits[d[i] >> 4]);
    s.push_back(digits[d[i] & 0xF]);
  }
  return s;
}
std::string to_hex(const std::vector<uint8_t>& v) { return to_hex(v.data(), v.size()); }

std::vector<uint8_t> from_hex(const std::string& s) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
  return out;
}

std::vector<uint8_t> pattern(uint32_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  std::mt19937 rng(seed);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

void fill_gids(Packet& p, uint8_t s, uint8_t d) {
  for (int i = 0; i < 16; ++i) {
    p.grh.sgid[i] = static_cast<uint8_t>(s + i);
    p.grh.dgid[i] = static_cast<uint8_t>(d + 3 * i);
  }
}

// A packet with every header field set to something distinguishable.
Packet make_packet(Opcode op, bool global, uint32_t payload, uint32_t seed) {
  Packet p;
  p.lrh.vl = static_cast<uint8_t>(seed % 15);
  p.lrh.sl = static_cast<uint8_t>((seed * 7) % 16);
  p.lrh.lnh = global ? Lnh::iba_global : Lnh::iba_local;
  p.lrh.dlid = static_cast<uint16_t>(0x0100 + seed);
  p.lrh.slid = static_cast<uint16_t>(0xC000 + seed * 3);
  if (global) {
    p.grh.tclass = static_cast<uint8_t>(0xA0 + seed % 16);
    p.grh.flow_label = 0x12345 + seed;
    p.grh.hop_lmt = static_cast<uint8_t>(64 - seed % 32);
    fill_gids(p, static_cast<uint8_t>(seed), 0x80);
  }
  p.bth.opcode = op;
  p.bth.se = seed & 1;
  p.bth.mig_req = seed & 2;
  p.bth.p_key = static_cast<uint16_t>(0x8000 | seed);
  p.bth.fecn = seed & 4;
  p.bth.becn = seed & 8;
  p.bth.dest_qp = 0xABC000 + seed;
  p.bth.ack_req = seed & 16;
  p.bth.psn = 0xFFFFFF - seed;
  p.deth.q_key = 0x80010000u + seed;
  p.deth.src_qp = 0x000100 + seed;
  p.reth.va = 0x00007F0012345000ull + seed;
  p.reth.r_key = 0x1000 + seed;
  p.reth.dma_len = payload + 4096;
  p.aeth.syndrome = static_cast<uint8_t>(0x1F - seed % 8);
  p.aeth.msn = 0x00ABCD + seed;
  p.immdt = 0xDEADBEEF ^ seed;
  p.atomic_eth.va = 0x00007F00ABCD0008ull + 8 * seed;
  p.atomic_eth.r_key = 0x2000 + seed;
  p.atomic_eth.swap_add = 0x0102030405060708ull ^ seed;
  p.atomic_eth.compare = 0x1112131415161718ull + seed;
  p.atomic_ack_eth.orig = 0xF1F2F3F4F5F6F7F8ull - seed;
  p.payload_bytes = payload;
  p.payload = pattern(payload, seed);
  p.finalize_lengths();
  // Fields the decoder cannot restore are those not on the wire for this opcode: clear
  // them so a decoded packet compares equal field by field.
  const OpcodeLayout l = opcode_layout(op);
  if (!l.deth) p.deth = Deth{};
  if (!l.reth) p.reth = Reth{};
  if (!l.atomic_eth) p.atomic_eth = AtomicEth{};
  if (!l.atomic_ack_eth) p.atomic_ack_eth = AtomicAckEth{};
  if (!l.aeth) p.aeth = Aeth{};
  if (!l.immdt) p.immdt = 0;
  if (!global) p.grh = Grh{};
  return p;
}

void expect_same_wire_fields(const Packet& a, const Packet& b) {
  EXPECT_EQ(a.lrh.vl, b.lrh.vl);
  EXPECT_EQ(a.lrh.lver, b.lrh.lver);
  EXPECT_EQ(a.lrh.sl, b.lrh.sl);
  EXPECT_EQ(a.lrh.lnh, b.lrh.lnh);
  EXPECT_EQ(a.lrh.dlid, b.lrh.dlid);
  EXPECT_EQ(a.lrh.pkt_len, b.lrh.pkt_len);
  EXPECT_EQ(a.lrh.slid, b.lrh.slid);
  if (a.lrh.lnh == Lnh::iba_global) {
    EXPECT_EQ(a.grh.ip_ver, b.grh.ip_ver);
    EXPECT_EQ(a.grh.tclass, b.grh.tclass);
    EXPECT_EQ(a.grh.flow_label, b.grh.flow_label);
    EXPECT_EQ(a.grh.pay_len, b.grh.pay_len);
    EXPECT_EQ(a.grh.nxt_hdr, b.grh.nxt_hdr);
    EXPECT_EQ(a.grh.hop_lmt, b.grh.hop_lmt);
    EXPECT_TRUE(std::equal(a.grh.sgid, a.grh.sgid + 16, b.grh.sgid));
    EXPECT_TRUE(std::equal(a.grh.dgid, a.grh.dgid + 16, b.grh.dgid));
  }
  EXPECT_EQ(a.bth.opcode, b.bth.opcode);
  EXPECT_EQ(a.bth.se, b.bth.se);
  EXPECT_EQ(a.bth.mig_req, b.bth.mig_req);
  EXPECT_EQ(a.bth.pad_cnt, b.bth.pad_cnt);
  EXPECT_EQ(a.bth.tver, b.bth.tver);
  EXPECT_EQ(a.bth.p_key, b.bth.p_key);
  EXPECT_EQ(a.bth.fecn, b.bth.fecn);
  EXPECT_EQ(a.bth.becn, b.bth.becn);
  EXPECT_EQ(a.bth.dest_qp, b.bth.dest_qp);
  EXPECT_EQ(a.bth.ack_req, b.bth.ack_req);
  EXPECT_EQ(a.bth.psn, b.bth.psn);
  EXPECT_EQ(a.deth.q_key, b.deth.q_key);
  EXPECT_EQ(a.deth.src_qp, b.deth.src_qp);
  EXPECT_EQ(a.reth.va, b.reth.va);
  EXPECT_EQ(a.reth.r_key, b.reth.r_key);
  EXPECT_EQ(a.reth.dma_len, b.reth.dma_len);
  EXPECT_EQ(a.aeth.syndrome, b.aeth.syndrome);
  EXPECT_EQ(a.aeth.msn, b.aeth.msn);
  EXPECT_EQ(a.immdt, b.immdt);
  EXPECT_EQ(a.atomic_eth.va, b.atomic_eth.va);
  EXPECT_EQ(a.atomic_eth.r_key, b.atomic_eth.r_key);
  EXPECT_EQ(a.atomic_eth.swap_add, b.atomic_eth.swap_add);
  EXPECT_EQ(a.atomic_eth.compare, b.atomic_eth.compare);
  EXPECT_EQ(a.atomic_ack_eth.orig, b.atomic_ack_eth.orig);
  EXPECT_EQ(a.payload_bytes, b.payload_bytes);
  auto bytes = [](const Packet& p) {
    return p.payload.empty() ? std::vector<uint8_t>(p.payload_bytes) : p.payload;
  };
  EXPECT_EQ(bytes(a), bytes(b));
}

std::vector<Opcode> all_opcodes() {
  std::vector<Opcode> ops;
  for (int c = 0; c < 256; ++c)
    if (is_known_opcode(static_cast<uint8_t>(c))) ops.push_back(static_cast<Opcode>(c));
  return ops;
}

// ---------------------------------------------------------------------------------------
// Round trips and lengths

TEST(Wire, RoundTripPreservesEveryFieldForEveryOpcodeWithAndWithoutGrhAndAllPadCounts) {
  const std::vector<uint32_t> sizes = {0, 1, 2, 3, 4, 5, 6, 7, 8, 255, 256, 1023, 1024,
                                       2048, 4093, 4094, 4095, 4096};
  uint32_t seed = 1;
  for (Opcode op : all_opcodes()) {
    const bool has_payload = opcode_layout(op).has_payload;
    for (bool global : {false, true}) {
      for (uint32_t n : sizes) {
        if (!has_payload && n > 0) continue;
        SCOPED_TRACE(std::string(opcode_name(op)) + (global ? " GRH " : " ") +
                     std::to_string(n) + " payload bytes");
        const Packet p = make_packet(op, global, n, seed++);
        const std::vector<uint8_t> w = encode(p);
        ASSERT_EQ(w.size(), p.wire_bytes());
        EXPECT_EQ(w.size() % 4, 2u);  // whole words plus the 2-byte VCRC
        const DecodeResult r = decode(w.data(), w.size());
        ASSERT_TRUE(r.ok) << r.error;
        EXPECT_TRUE(r.icrc_ok);
        EXPECT_TRUE(r.vcrc_ok);
        EXPECT_EQ(r.packet.bth.pad_cnt, (4 - n % 4) % 4);
        expect_same_wire_fields(p, r.packet);
        EXPECT_EQ(encode(r.packet), w);  // decode is the exact inverse
      }
    }
  }
}

TEST(Wire, PktLenCountsWordsFromLrhThroughIcrcAndPayLenBytesFromBthThroughIcrc) {
  for (bool global : {false, true}) {
    for (uint32_t n = 0; n <= 4096; n += (n < 16 ? 1 : 509)) {
      const Packet p = make_packet(Opcode::ud_send_only, global, n, n);
      const std::vector<uint8_t> w = encode(p);
      const uint32_t pkt_len = static_cast<uint32_t>((w[4] & 0x07) << 8 | w[5]);
      EXPECT_EQ(pkt_len, (w.size() - 2) / 4) << n;
      EXPECT_EQ((w.size() - 2) % 4, 0u);
      EXPECT_EQ(pkt_len, p.lrh.pkt_len);
      EXPECT_EQ(w[1] & 0x3, global ? 3 : 2);  // LNH
      if (global) {
        EXPECT_EQ(static_cast<size_t>(w[12] << 8 | w[13]), w.size() - 2 - 8 - 40);
      }
      // PadCnt in BTH byte 1, bits 5..4.
      const size_t bth = global ? 48 : 8;
      EXPECT_EQ((w[bth + 1] >> 4) & 3, static_cast<int>((4 - n % 4) % 4));
    }
  }
}

TEST(Wire, EncodeWritesBigEndianFieldsAtTheSpecifiedOffsets) {
  Packet p;
  p.lrh.vl = 0xA;
  p.lrh.sl = 0x6;
  p.lrh.lnh = Lnh::iba_local;
  p.lrh.dlid = 0x1234;
  p.lrh.slid = 0xBEEF;
  p.bth.opcode = Opcode::ud_send_only_imm;
  p.bth.se = true;
  p.bth.mig_req = true;
  p.bth.p_key = 0x7FFF;
  p.bth.fecn = true;
  p.bth.dest_qp = 0x123456;
  p.bth.ack_req = true;
  p.bth.psn = 0xABCDEF;
  p.deth.q_key = 0x11223344;
  p.deth.src_qp = 0x00C0FFEE & 0xFFFFFF;
  p.immdt = 0xCAFEBABE;
  p.payload_bytes = 1;
  p.payload = {0x5A};
  const std::vector<uint8_t> w = encode(p);
  ASSERT_EQ(w.size(), 8u + 12 + 8 + 4 + 4 + 4 + 2);
  const std::vector<uint8_t> head(w.begin(), w.begin() + 36);
  const std::vector<uint8_t> expect = {
      0xA0, 0x62, 0x12, 0x34, 0x00, 0x0A, 0xBE, 0xEF,              // LRH, PktLen 10 words
      0x65, 0xF0, 0x7F, 0xFF, 0x80, 0x12, 0x34, 0x56,              // BTH: SE M PadCnt=3
      0x80, 0xAB, 0xCD, 0xEF,                                      //      A, PSN
      0x11, 0x22, 0x33, 0x44, 0x00, 0xC0, 0xFF, 0xEE,              // DETH
      0xCA, 0xFE, 0xBA, 0xBE,                                      // ImmDt
      0x5A, 0x00, 0x00, 0x00};                                     // payload + 3 pad
  EXPECT_EQ(head, expect);
}

// IBA 9.3.4 and 9.3.6: AtomicETH is VA(8) R_Key(4) SwapAdd(8) Compare(8), 28 bytes after
// the BTH; AtomicAckETH is the 8-byte original data after the AETH.
TEST(Wire, AtomicEthIs28BytesAndAtomicAckEthFollowsTheAethBigEndian) {
  Packet req;
  req.bth.opcode = Opcode::rc_compare_swap;
  req.atomic_eth = {0x0011223344556678ull, 0xA1B2C3D4, 0x0102030405060708ull, 0x1112131415161718ull};
  const std::vector<uint8_t> w = encode(req);
  ASSERT_EQ(w.size(), 8u + 12 + 28 + 4 + 2);
  const std::vector<uint8_t> eth(w.begin() + 20, w.begin() + 48);
  const std::vector<uint8_t> expect_eth = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x78,   // VA
                                           0xA1, 0xB2, 0xC3, 0xD4,                           // R_Key
                                           0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,   // Swap
                                           0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18};  // Compare
  EXPECT_EQ(eth, expect_eth);
  EXPECT_EQ(w[8], 0x13);
  Packet ack;
  ack.bth.opcode = Opcode::rc_atomic_acknowledge;
  ack.aeth = {0x1F, 0x000102};
  ack.atomic_ack_eth.orig = 0x8899AABBCCDDEEFFull;
  const std::vector<uint8_t> a = encode(ack);
  ASSERT_EQ(a.size(), 8u + 12 + 4 + 8 + 4 + 2);
  const std::vector<uint8_t> tail(a.begin() + 20, a.begin() + 32);
  const std::vector<uint8_t> expect_tail = {0x1F, 0x00, 0x01, 0x02,                            // AETH
                                            0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF};  // orig
  EXPECT_EQ(tail, expect_tail);
  EXPECT_FALSE(opcode_layout(Opcode::rc_fetch_add).has_payload) << "an atomic carries no payload";
}

TEST(Wire, EncodeDerivesLengthFieldsEvenWhenThePacketWasNotFinalized) {
  Packet p = make_packet(Opcode::rc_send_only, true, 10, 3);
  Packet stale = p;
  stale.lrh.pkt_len = 1;
  stale.bth.pad_cnt = 0;
  stale.grh.pay_len = 7;
  EXPECT_EQ(encode(stale), encode(p));
}

TEST(Wire, EmptyPayloadVectorMeansZeroFilledPayload) {
  Packet p = make_packet(Opcode::rc_send_only, false, 9, 5);
  p.payload.clear();
  const std::vector<uint8_t> w = encode(p);
  const DecodeResult r = decode(w.data(), w.size());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.packet.payload, std::vector<uint8_t>(9, 0));
  EXPECT_TRUE(r.icrc_ok && r.vcrc_ok);
}

TEST(Wire, EncodeIntoWritesWireBytesOrReturnsZeroWhenTheBufferIsTooSmall) {
  const Packet p = make_packet(Opcode::rc_rdma_write_first, false, 33, 9);
  const std::vector<uint8_t> w = encode(p);
  std::vector<uint8_t> buf(w.size() + 8, 0xEE);
  EXPECT_EQ(encode_into(p, buf.data(), buf.size()), w.size());
  EXPECT_TRUE(std::equal(w.begin(), w.end(), buf.begin()));
  EXPECT_EQ(buf[w.size()], 0xEE);  // nothing written past the packet
  std::vector<uint8_t> small(w.size() - 1, 0xEE);
  EXPECT_EQ(encode_into(p, small.data(), small.size()), 0u);
  EXPECT_EQ(small, std::vector<uint8_t>(w.size() - 1, 0xEE));
  EXPECT_EQ(encode_into(p, nullptr, 0), 0u);
}

TEST(Wire, EncodeRejectsPacketsWithoutAnIbaWireForm) {
  Packet raw = make_packet(Opcode::rc_send_only, false, 4, 1);
  raw.lrh.lnh = Lnh::raw;
  EXPECT_THROW(encode(raw), std::invalid_argument);

  Packet ack = make_packet(Opcode::rc_acknowledge, false, 0, 1);
  ack.payload_bytes = 4;
  EXPECT_THROW(encode(ack), std::invalid_argument);

  Packet mismatch = make_packet(Opcode::rc_send_only, false, 8, 1);
  mismatch.payload.resize(7);
  EXPECT_THROW(encode(mismatch), std::invalid_argument);

  Packet unknown = make_packet(Opcode::rc_send_only, false, 0, 1);
  unknown.bth.opcode = static_cast<Opcode>(0x1F);
  EXPECT_THROW(encode(unknown), std::invalid_argument);

  Packet huge = make_packet(Opcode::rc_send_only, false, 0, 1);
  huge.payload.clear();
  huge.payload_bytes = 8200;  // beyond PktLen's 2047 words
  EXPECT_THROW(encode(huge), std::invalid_argument);
  uint8_t buf[16];
  EXPECT_THROW(encode_into(huge, buf, sizeof buf), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------
// Decoding malformed input

// Rewrites PktLen (and GRH PayLen) and recomputes both CRCs, so only the tested defect
// remains.
void refresh(std::vector<uint8_t>& w) {
  const size_t words = (w.size() - 2) / 4;
  w[4] = static_cast<uint8_t>((w[4] & 0xF8) | (words >> 8));
  w[5] = static_cast<uint8_t>(words);
  if ((w[1] & 3) == 3) {
    const size_t pay = w.size() - 2 - 48;
    w[12] = static_cast<uint8_t>(pay >> 8);
    w[13] = static_cast<uint8_t>(pay);
  }
  store_crc32(w.data() + w.size() - 6, icrc(w.data(), w.size() - 6));
  store_crc16(w.data() + w.size() - 2, vcrc(w.data(), w.size() - 2));
}

TEST(Wire, DecodeRejectsEveryTruncationWithAMessage) {
  for (bool global : {false, true}) {
    const std::vector<uint8_t> w =
        encode(make_packet(Opcode::uc_rdma_write_only_imm, global, 17, 4));
    for (size_t n = 0; n < w.size(); ++n) {
      // A copy of exactly n bytes, so a sanitizer build sees any read past the end.
      const std::vector<uint8_t> cut(w.begin(), w.begin() + static_cast<long>(n));
      const DecodeResult r = decode(cut.data(), cut.size());
      EXPECT_FALSE(r.ok) << n;
      EXPECT_FALSE(r.error.empty()) << n;
    }
  }
  const DecodeResult r = decode(nullptr, 0);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("truncated"), std::string::npos) << r.error;
}

TEST(Wire, DecodeRejectsPktLenThatDisagreesWithTheByteCount) {
  std::vector<uint8_t> w = encode(make_packet(Opcode::rc_send_only, false, 12, 2));
  for (int delta : {-1, +1}) {
    std::vector<uint8_t> f = w;
    f[5] = static_cast<uint8_t>(f[5] + delta);
    const DecodeResult r = decode(f.data(), f.size());
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("bad PktLen"), std::string::npos) << r.error;
  }
  // Extra bytes after the VCRC are as wrong as missing ones.
  w.push_back(0);
  const DecodeResult r = decode(w.data(), w.size());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("bad PktLen"), std::string::npos) << r.error;
}

TEST(Wire, DecodeRejectsUnknownOpcodes) {
  // 0x15 follows FETCH ADD (0x14), the last RC opcode modelled (IBA Table 38).
  for (uint8_t code : {uint8_t{0x15}, uint8_t{0x1F}, uint8_t{0x2C}, uint8_t{0x40}, uint8_t{0x60},
                       uint8_t{0xFF}}) {
    std::vector<uint8_t> w = encode(make_packet(Opcode::rc_send_only, false, 8, 2));
    w[8] = code;
    refresh(w);
    const DecodeResult r = decode(w.data(), w.size());
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("unknown BTH opcode"), std::string::npos) << r.error;
  }
}

TEST(Wire, DecodeRejectsRawLnhAndForeignGrhNextHeader) {
  std::vector<uint8_t> w = encode(make_packet(Opcode::rc_send_only, false, 8, 2));
  w[1] &= 0xFC;  // LNH raw
  refresh(w);
  DecodeResult r = decode(w.data(), w.size());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("raw"), std::string::npos) << r.error;

  std::vector<uint8_t> g = encode(make_packet(Opcode::rc_send_only, true, 8, 2));
  g[8 + 6] = 0x11;  // NxtHdr: UDP, not IBA transport
  refresh(g);
  r = decode(g.data(), g.size());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("NxtHdr"), std::string::npos) << r.error;
}

TEST(Wire, DecodeRejectsGrhPayLenThatDisagreesWithPktLen) {
  std::vector<uint8_t> g = encode(make_packet(Opcode::rc_send_only, true, 8, 2));
  g[13] ^= 0x04;
  store_crc16(g.data() + g.size() - 2, vcrc(g.data(), g.size() - 2));
  const DecodeResult r = decode(g.data(), g.size());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("PayLen"), std::string::npos) << r.error;
}

TEST(Wire, DecodeRejectsPayloadOnOpcodesThatCarryNone) {
  std::vector<uint8_t> w = encode(make_packet(Opcode::rc_acknowledge, false, 0, 2));
  w.insert(w.end() - 6, {1, 2, 3, 4});
  refresh(w);
  const DecodeResult r = decode(w.data(), w.size());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("carries no payload"), std::string::npos) << r.error;
}

TEST(Wire, DecodeRejectsPadCountLargerThanTheBody) {
  std::vector<uint8_t> w = encode(make_packet(Opcode::rc_rdma_write_middle, false, 0, 2));
  w[9] |= 0x30;  // PadCnt 3 with no payload bytes at all
  refresh(w);
  const DecodeResult r = decode(w.data(), w.size());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("PadCnt"), std::string::npos) << r.error;
}

TEST(Wire, DecodeReportsDamagedCrcsButStillParses) {
  std::vector<uint8_t> w = encode(make_packet(Opcode::rc_send_only, false, 64, 2));
  w[30] ^= 0x10;  // payload bit
  DecodeResult r = decode(w.data(), w.size());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(r.icrc_ok);
  EXPECT_FALSE(r.vcrc_ok);
  w[30] ^= 0x10;
  w[w.size() - 1] ^= 0x01;  // only the VCRC itself
  r = decode(w.data(), w.size());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.icrc_ok);
  EXPECT_FALSE(r.vcrc_ok);
}

// The HCA's rx and tx engines (issue 15 part 2) use the cheaper pair: they must see the
// same bytes up to the ICRC and the same headers as encode() and decode() give.
TEST(Wire, EncodeWithoutVcrcWritesEveryByteButTheVcrcAndDecodeHeadersParsesAsDecode) {
  uint32_t seed = 100;
  for (Opcode op : all_opcodes()) {
    for (bool global : {false, true}) {
      for (uint32_t n : {0u, 3u, 256u, 4096u}) {
        if (!opcode_layout(op).has_payload && n > 0) continue;
        SCOPED_TRACE(std::string(opcode_name(op)) + (global ? " GRH " : " ") + std::to_string(n));
        const Packet p = make_packet(op, global, n, seed++);
        const std::vector<uint8_t> w = encode(p);
        std::vector<uint8_t> buf(w.size(), 0xEE);
        ASSERT_EQ(encode_into_without_vcrc(p, buf.data(), buf.size()), w.size());
        EXPECT_TRUE(std::equal(w.begin(), w.end() - 2, buf.begin()));
        EXPECT_EQ(buf[w.size() - 2], 0xEE);  // the VCRC bytes are not written
        EXPECT_EQ(buf[w.size() - 1], 0xEE);
        const DecodeResult full = decode(w.data(), w.size());
        const DecodeResult head = decode_headers(buf.data(), buf.size());
        ASSERT_TRUE(head.ok) << head.error;
        EXPECT_TRUE(head.packet.payload.empty());  // no copy
        Packet headers = head.packet;
        headers.payload = full.packet.payload;  // every other field as decode() gives it
        expect_same_wire_fields(full.packet, headers);
        EXPECT_EQ(head.packet.payload_bytes, n);
        EXPECT_FALSE(head.icrc_ok);                 // not checked
        EXPECT_FALSE(head.vcrc_ok);
      }
    }
  }
  std::vector<uint8_t> bad = encode(make_packet(Opcode::rc_send_only, false, 8, 1));
  bad[4] ^= 0x01;  // PktLen disagrees with the byte count: rejected as decode() does
  const DecodeResult r = decode_headers(bad.data(), bad.size());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, decode(bad.data(), bad.size()).error);
}

TEST(Wire, DecodeNeverCrashesOnRandomBytesWithPlausibleLengths) {
  std::mt19937 rng(1234);
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    const size_t n = rng() % 200;
    std::vector<uint8_t> d(n);
    for (auto& b : d) b = static_cast<uint8_t>(rng());
    if (n >= 8 && (rng() & 1)) {  // often make LNH and PktLen agree, to get further in
      d[1] = static_cast<uint8_t>((d[1] & 0xFC) | (2 + (rng() & 1)));
      const size_t words = (n - 2) / 4;
      d[4] = static_cast<uint8_t>(words >> 8);
      d[5] = static_cast<uint8_t>(words);
      const size_t bth = (d[1] & 3) == 3 ? 48 : 8;  // often a known opcode, too
      if (bth < n && (rng() & 1)) d[bth] = static_cast<uint8_t>(rng() % 0x12);
    }
    const DecodeResult r = decode(d.data(), d.size());
    if (r.ok) {
      ++parsed;
      EXPECT_EQ(r.packet.wire_bytes(), n);
    } else {
      EXPECT_FALSE(r.error.empty());
    }
  }
  EXPECT_GT(parsed, 0);  // the generator does reach the full parser
}

// ---------------------------------------------------------------------------------------
// Flow control packets

TEST(Wire, FlowControlPacketRoundTripsAndPacksFieldsPerIba794) {
  for (uint8_t op : {uint8_t{0}, uint8_t{1}}) {
    for (uint8_t vl : {uint8_t{0}, uint8_t{7}, uint8_t{15}}) {
      FlowControlPacket f;
      f.op = op;
      f.vl = vl;
      f.fctbs = static_cast<uint16_t>(0xABC - vl);
      f.fccl = static_cast<uint16_t>(0x123 + vl);
      const auto w = encode_fcp(f);
      EXPECT_EQ(w[0], (op << 4) | (f.fctbs >> 8));
      EXPECT_EQ(w[1], f.fctbs & 0xFF);
      EXPECT_EQ(w[2], (vl << 4) | (f.fccl >> 8));
      EXPECT_EQ(w[3], f.fccl & 0xFF);
      EXPECT_EQ(load_crc16(w.data() + 4), lpcrc(w.data()));
      FlowControlPacket g;
      ASSERT_TRUE(decode_fcp(w.data(), w.size(), g));
      EXPECT_EQ(g.op, f.op);
      EXPECT_EQ(g.vl, f.vl);
      EXPECT_EQ(g.fctbs, f.fctbs);
      EXPECT_EQ(g.fccl, f.fccl);
    }
  }
}

TEST(Wire, FlowControlPacketDecodeRejectsBadLpcrcReservedOpAndWrongLength) {
  FlowControlPacket f;
  f.fctbs = 100;
  f.fccl = 200;
  f.vl = 2;
  auto w = encode_fcp(f);
  FlowControlPacket g;
  g.fccl = 777;
  for (size_t byte = 0; byte < 6; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      auto c = w;
      c[byte] ^= static_cast<uint8_t>(1 << bit);
      EXPECT_FALSE(decode_fcp(c.data(), c.size(), g)) << byte << ":" << bit;
    }
  }
  EXPECT_EQ(g.fccl, 777);  // untouched on failure
  auto reserved = w;
  reserved[0] = static_cast<uint8_t>(0x20 | (reserved[0] & 0x0F));
  store_crc16(reserved.data() + 4, lpcrc(reserved.data()));
  EXPECT_FALSE(decode_fcp(reserved.data(), reserved.size(), g));
  EXPECT_FALSE(decode_fcp(w.data(), 5, g));
  EXPECT_FALSE(decode_fcp(nullptr, 6, g));
  EXPECT_TRUE(decode_fcp(w.data(), 6, g));
}

// ---------------------------------------------------------------------------------------
// Committed vectors (tests/ib/vectors.txt), shared with tests/python/test_wire_reference.py

struct Vector {
  std::string name;
  std::vector<uint8_t> bytes;
  std::string fields;
};

std::string hex_field(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llX", static_cast<unsigned long long>(v));
  return buf;
}

// The decoded fields, in the key=value form vectors.txt uses (names as in the IBA spec).
std::string describe(const Packet& p) {
  std::ostringstream s;
  const OpcodeLayout l = opcode_layout(p.bth.opcode);
  s << "lnh=" << int(p.lrh.lnh) << " vl=" << int(p.lrh.vl) << " lver=" << int(p.lrh.lver)
    << " sl=" << int(p.lrh.sl) << " dlid=" << hex_field(p.lrh.dlid) << " pktlen=" << p.lrh.pkt_len
    << " slid=" << hex_field(p.lrh.slid);
  if (p.lrh.lnh == Lnh::iba_global) {
    s << " ipver=" << int(p.grh.ip_ver) << " tclass=" << hex_field(p.grh.tclass)
      << " flowlabel=" << hex_field(p.grh.flow_label) << " paylen=" << p.grh.pay_len
      << " nxthdr=" << hex_field(p.grh.nxt_hdr) << " hoplmt=" << int(p.grh.hop_lmt)
      << " sgid=" << to_hex(p.grh.sgid, 16) << " dgid=" << to_hex(p.grh.dgid, 16);
  }
  s << " opcode=" << hex_field(static_cast<uint8_t>(p.bth.opcode)) << " se=" << p.bth.se
    << " m=" << p.bth.mig_req << " padcnt=" << int(p.bth.pad_cnt) << " tver=" << int(p.bth.tver)
    << " pkey=" << hex_field(p.bth.p_key) << " fecn=" << p.bth.fecn << " becn=" << p.bth.becn
    << " destqp=" << hex_field(p.bth.dest_qp) << " a=" << p.bth.ack_req
    << " psn=" << hex_field(p.bth.psn);
  if (l.deth) s << " qkey=" << hex_field(p.deth.q_key) << " srcqp=" << hex_field(p.deth.src_qp);
  if (l.reth)
    s << " va=" << hex_field(p.reth.va) << " rkey=" << hex_field(p.reth.r_key)
      << " dmalen=" << p.reth.dma_len;
  if (l.aeth) s << " syndrome=" << hex_field(p.aeth.syndrome) << " msn=" << hex_field(p.aeth.msn);
  if (l.immdt) s << " immdt=" << hex_field(p.immdt);
  s << " payload=" << p.payload_bytes;
  return s.str();
}

std::string describe(const FlowControlPacket& f) {
  std::ostringstream s;
  s << "op=" << int(f.op) << " fctbs=" << f.fctbs << " vl=" << int(f.vl) << " fccl=" << f.fccl;
  return s.str();
}

// The packets behind vectors.txt: one per header combination, all pad counts, both LNHs,
// variant bits set in some so the ICRC masking matters.
std::vector<std::pair<std::string, Packet>> vector_packets() {
  std::vector<std::pair<std::string, Packet>> v;
  auto add = [&v](const std::string& name, Packet p) {
    p.finalize_lengths();
    v.emplace_back(name, std::move(p));
  };
  auto base = [](Opcode op, uint8_t vl, uint8_t sl, uint16_t dlid, uint16_t slid, uint32_t qp,
                 uint32_t psn) {
    Packet p;
    p.lrh.vl = vl;
    p.lrh.sl = sl;
    p.lrh.dlid = dlid;
    p.lrh.slid = slid;
    p.bth.opcode = op;
    p.bth.dest_qp = qp;
    p.bth.psn = psn;
    return p;
  };
  auto text = [](const char* s) { return std::vector<uint8_t>(s, s + std::string(s).size()); };

  Packet p = base(Opcode::rc_send_only, 0, 0, 0x0002, 0x0001, 0x000012, 0x000000);
  p.payload = text("hello");  // 5 bytes: PadCnt 3
  p.payload_bytes = 5;
  add("rc_send_only_local_pad3", p);

  p = base(Opcode::rc_send_first, 2, 2, 0x0010, 0x0020, 0x00A1B2, 0x000100);
  p.bth.ack_req = true;
  p.payload = pattern(16, 1);
  p.payload_bytes = 16;
  add("rc_send_first_pad0_ackreq", p);

  p = base(Opcode::rc_rdma_write_only, 5, 9, 0xBEEF, 0x0C01, 0x000777, 0xFFFFFF);
  p.reth = {0x00007F00DEAD1000ull, 0x12345678, 7};
  p.payload = pattern(7, 2);  // PadCnt 1
  p.payload_bytes = 7;
  add("rc_rdma_write_only_reth_pad1", p);

  p = base(Opcode::rc_rdma_read_request, 1, 1, 0x0003, 0x0004, 0x000099, 0x00ABCD);
  p.bth.p_key = 0x8001;
  p.reth = {0x0000000100000000ull, 0xCAFEF00D, 65536};
  add("rc_rdma_read_request_reth", p);

  p = base(Opcode::rc_rdma_read_response_only, 1, 1, 0x0004, 0x0003, 0x000098, 0x00ABCD);
  p.aeth = {0x1F, 0x000042};
  p.payload = pattern(6, 3);  // PadCnt 2
  p.payload_bytes = 6;
  add("rc_rdma_read_response_only_aeth_pad2", p);

  p = base(Opcode::rc_acknowledge, 3, 3, 0x0101, 0x0202, 0x123456, 0x654321);
  p.aeth = {0x00, 0x00FFFE};
  p.bth.becn = true;  // variant: the ICRC does not see it
  add("rc_ack_aeth_becn", p);

  p = base(Opcode::rc_send_only_imm, 4, 4, 0x0005, 0x0006, 0x000200, 0x000001);
  p.bth.se = true;
  p.immdt = 0x01020304;
  p.payload = {0xFF};
  p.payload_bytes = 1;
  add("rc_send_only_imm_se", p);

  p = base(Opcode::uc_rdma_write_only_imm, 6, 6, 0x0007, 0x0008, 0x000301, 0x000302);
  p.reth = {0xFFFFFFFFFFFFF000ull, 0x0000BEEF, 9};
  p.immdt = 0xA5A5A5A5;
  p.payload = pattern(9, 4);
  p.payload_bytes = 9;
  add("uc_rdma_write_only_imm_reth", p);

  p = base(Opcode::ud_send_only, 0, 0, 0xC000, 0x0009, 0x000400, 0x000010);
  p.deth = {0x80010000u, 0x000401};
  p.payload = pattern(12, 5);
  p.payload_bytes = 12;
  add("ud_send_only_deth", p);

  p = base(Opcode::ud_send_only_imm, 7, 12, 0x000A, 0x000B, 0x000500, 0x000011);
  p.lrh.lnh = Lnh::iba_global;
  p.grh.tclass = 0xB8;
  p.grh.flow_label = 0xFEDCB;
  p.grh.hop_lmt = 0xFF;
  fill_gids(p, 0xE0, 0x20);
  p.deth = {0x00000001u, 0x000501};
  p.immdt = 0x0BADF00D;
  p.payload = pattern(3, 6);
  p.payload_bytes = 3;
  add("ud_send_only_imm_grh_deth", p);

  p = base(Opcode::rc_send_only, 14, 15, 0xFFFE, 0x0001, 0xFFFFFF, 0x800000);
  p.lrh.lnh = Lnh::iba_global;
  p.grh.tclass = 0x00;
  p.grh.flow_label = 0x00001;
  p.grh.hop_lmt = 1;
  fill_gids(p, 0x00, 0x90);
  p.bth.se = p.bth.mig_req = p.bth.fecn = p.bth.becn = p.bth.ack_req = true;
  p.bth.p_key = 0x7FFF;
  p.payload = pattern(30, 7);
  p.payload_bytes = 30;
  add("rc_send_only_grh_all_flags", p);

  p = base(Opcode::rc_rdma_write_middle, 8, 8, 0x0030, 0x0031, 0x000600, 0x000601);
  add("rc_rdma_write_middle_empty", p);

  p = base(Opcode::uc_send_last_imm, 9, 10, 0x0040, 0x0041, 0x000700, 0x000701);
  p.immdt = 0xFFFFFFFF;
  p.payload = pattern(256, 8);
  p.payload_bytes = 256;
  add("uc_send_last_imm_256", p);
  return v;
}

std::vector<std::pair<std::string, FlowControlPacket>> vector_fcps() {
  FlowControlPacket normal;
  normal.op = 0;
  normal.fctbs = 0x123;
  normal.vl = 3;
  normal.fccl = 0xABC;
  FlowControlPacket init;
  init.op = 1;
  init.fctbs = 0xFFF;
  init.vl = 15;
  init.fccl = 0;
  return {{"fcp_normal_vl3", normal}, {"fcp_init_vl15", init}};
}

std::string vectors_path() { return ibvp::testing::source_path("tests/ib/vectors.txt"); }

std::string generate_vectors_text() {
  std::ostringstream s;
  s << "# InfiniBand wire vectors: <name> <hex bytes LRH..VCRC> <field>=<value>...\n"
       "# Produced by tests/ib/test_wire.cpp (Vectors.*) from packets defined there; checked\n"
       "# byte for byte by that test and independently by tests/python/test_wire_reference.py\n"
       "# (pure-Python header decode and bit-serial ICRC/VCRC/LPCRC). fcp_* lines are 6-byte\n"
       "# flow control packets (IBA 7.9.4). payload=<n> is the payload length in bytes.\n";
  for (const auto& [name, p] : vector_packets())
    s << name << ' ' << to_hex(encode(p)) << ' ' << describe(p) << '\n';
  for (const auto& [name, f] : vector_fcps()) {
    const auto w = encode_fcp(f);
    s << name << ' ' << to_hex(w.data(), w.size()) << ' ' << describe(f) << '\n';
  }
  return s.str();
}

std::vector<Vector> read_vectors() {
  std::ifstream in(vectors_path());
  if (!in) throw std::runtime_error("cannot open " + vectors_path());
  std::vector<Vector> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    Vector v;
    std::string hex;
    ls >> v.name >> hex;
    std::getline(ls, v.fields);
    v.fields.erase(0, v.fields.find_first_not_of(' '));
    v.bytes = from_hex(hex);
    out.push_back(std::move(v));
  }
  return out;
}

TEST(Vectors, EncodedPacketsMatchTheCommittedVectorsFileByteForByte) {
  const std::string generated = generate_vectors_text();
  if (const char* out = std::getenv("IBVP_WRITE_VECTORS")) {
    std::ofstream(out) << generated;
    GTEST_SKIP() << "wrote " << out;
  }
  std::ifstream in(vectors_path());
  ASSERT_TRUE(in) << "cannot open " << vectors_path();
  std::stringstream committed;
  committed << in.rdbuf();
  // Line by line first, for a readable failure.
  std::istringstream a(generated), b(committed.str());
  std::string la, lb;
  int line = 0;
  while (std::getline(a, la)) {
    ++line;
    ASSERT_TRUE(std::getline(b, lb)) << "vectors.txt ends before line " << line;
    EXPECT_EQ(la, lb) << "line " << line;
  }
  EXPECT_FALSE(std::getline(b, lb)) << "vectors.txt has extra lines from " << line + 1;
}

TEST(Vectors, DecodingEachCommittedVectorGivesItsListedFieldsAndValidCrcs) {
  const std::vector<Vector> vectors = read_vectors();
  ASSERT_EQ(vectors.size(), vector_packets().size() + vector_fcps().size());
  for (const Vector& v : vectors) {
    SCOPED_TRACE(v.name);
    if (v.name.rfind("fcp_", 0) == 0) {
      FlowControlPacket f;
      ASSERT_TRUE(decode_fcp(v.bytes.data(), v.bytes.size(), f));
      EXPECT_EQ(describe(f), v.fields);
      continue;
    }
    const DecodeResult r = decode(v.bytes.data(), v.bytes.size());
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_TRUE(r.icrc_ok);
    EXPECT_TRUE(r.vcrc_ok);
    EXPECT_EQ(describe(r.packet), v.fields);
  }
}

}  // namespace
}  // namespace ibvp::ib
