#include "models/ib/wire.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "models/ib/crc.h"

namespace ibvp::ib {

namespace {

// GRH.NxtHdr value announcing an IBA transport header (IBA 8.3: 0x1B).
constexpr uint8_t kNxtHdrIbaTransport = 0x1B;
// LRH.PktLen is 11 bits (IBA 7.7.8).
constexpr uint32_t kMaxPktLenWords = 0x7FF;

// Big-endian field writer/reader: IBA header fields are transmitted most significant byte
// first.
struct Out {
  uint8_t* p;
  void u8(uint32_t v) { *p++ = static_cast<uint8_t>(v); }
  void be16(uint32_t v) { u8(v >> 8); u8(v); }
  void be24(uint32_t v) { u8(v >> 16); u8(v >> 8); u8(v); }
  void be32(uint32_t v) { u8(v >> 24); u8(v >> 16); u8(v >> 8); u8(v); }
  void be64(uint64_t v) { be32(static_cast<uint32_t>(v >> 32)); be32(static_cast<uint32_t>(v)); }
  void bytes(const uint8_t* src, size_t n) {
    if (n) std::memcpy(p, src, n);
    p += n;
  }
  void zeros(size_t n) {
    if (n) std::memset(p, 0, n);
    p += n;
  }
};

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t be24(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 16 | static_cast<uint32_t>(p[1]) << 8 | p[2];
}
uint32_t be32(const uint8_t* p) { return static_cast<uint32_t>(p[0]) << 24 | be24(p + 1); }
uint64_t be64(const uint8_t* p) { return static_cast<uint64_t>(be32(p)) << 32 | be32(p + 4); }

uint32_t extended_header_bytes(const OpcodeLayout& l) {
  return (l.deth ? kDethBytes : 0) + (l.reth ? kRethBytes : 0) + (l.aeth ? kAethBytes : 0) +
         (l.immdt ? kImmDtBytes : 0) + (l.atomic_eth ? kAtomicEthBytes : 0) +
         (l.atomic_ack_eth ? kAtomicAckEthBytes : 0);
}

std::string hex8(uint32_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", v & 0xFFu);
  return buf;
}

// Throws std::invalid_argument when the packet has no IBA wire form (see wire.h).
void check_encodable(const Packet& p) {
  if (p.lrh.lnh != Lnh::iba_local && p.lrh.lnh != Lnh::iba_global)
    throw std::invalid_argument("ib::encode: raw packets (LNH " +
                                std::to_string(static_cast<int>(p.lrh.lnh)) +
                                ") have no IBA transport headers to encode");
  const auto code = static_cast<uint8_t>(p.bth.opcode);
  if (!is_known_opcode(code))
    throw std::invalid_argument("ib::encode: BTH opcode " + hex8(code) + " is not an IBA opcode");
  if (p.payload_bytes > 0 && !opcode_layout(p.bth.opcode).has_payload)
    throw std::invalid_argument(std::string("ib::encode: ") + opcode_name(p.bth.opcode) +
                                " carries no payload but payload_bytes=" +
                                std::to_string(p.payload_bytes));
  if (!p.payload.empty() && p.payload.size() != p.payload_bytes)
    throw std::invalid_argument("ib::encode: payload vector holds " +
                                std::to_string(p.payload.size()) + " bytes, payload_bytes=" +
                                std::to_string(p.payload_bytes));
  if ((p.wire_bytes() - kVcrcBytes) / 4 > kMaxPktLenWords)
    throw std::invalid_argument("ib::encode: " + std::to_string(p.wire_bytes()) +
                                " bytes exceed what the 11-bit LRH.PktLen can describe");
}

// Writes p (already checked) at out, which has room for p.wire_bytes(); without the VCRC
// bytes (left as they are) when `with_vcrc` is false.
void write_packet(const Packet& p, uint8_t* out, bool with_vcrc = true) {
  const uint32_t total = p.wire_bytes();
  const OpcodeLayout layout = opcode_layout(p.bth.opcode);
  const bool global = p.lrh.lnh == Lnh::iba_global;
  const uint32_t pad = pad_bytes(p.payload_bytes);
  Out w{out};

  // LRH (IBA 7.7): VL(4) LVer(4) | SL(4) resv(2) LNH(2) | DLID(16) | resv(5) PktLen(11) | SLID(16)
  w.u8((p.lrh.vl & 0xFu) << 4 | (p.lrh.lver & 0xFu));
  w.u8((p.lrh.sl & 0xFu) << 4 | (static_cast<uint32_t>(p.lrh.lnh) & 0x3u));
  w.be16(p.lrh.dlid);
  w.be16(((total - kVcrcBytes) / 4) & kMaxPktLenWords);  // PktLen: LRH..ICRC in words
  w.be16(p.lrh.slid);

  if (global) {
    // GRH (IBA 8.3): IPVer(4) TClass(8) FlowLabel(20) | PayLen(16) NxtHdr(8) HopLmt(8)
    //                | SGID(128) | DGID(128)
    w.be32((p.grh.ip_ver & 0xFu) << 28 | static_cast<uint32_t>(p.grh.tclass) << 20 |
           (p.grh.flow_label & 0xFFFFFu));
    w.be16(total - kVcrcBytes - kLrhBytes - kGrhBytes);  // PayLen: BTH..ICRC in bytes
    w.u8(p.grh.nxt_hdr);
    w.u8(p.grh.hop_lmt);
    w.bytes(p.grh.sgid, sizeof p.grh.sgid);
    w.bytes(p.grh.dgid, sizeof p.grh.dgid);
  }

  // BTH (IBA 9.2): OpCode | SE M PadCnt(2) TVer(4) | P_Key | FECN BECN resv6 | DestQP(24)
  //                | A resv7 | PSN(24)
  w.u8(static_cast<uint8_t>(p.bth.opcode));
  w.u8((p.bth.se ? 0x80u : 0u) | (p.bth.mig_req ? 0x40u : 0u) | pad << 4 | (p.bth.tver & 0xFu));
  w.be16(p.bth.p_key);
  w.u8((p.bth.fecn ? 0x80u : 0u) | (p.bth.becn ? 0x40u : 0u));
  w.be24(p.bth.dest_qp & 0xFFFFFFu);
  w.u8(p.bth.ack_req ? 0x80u : 0u);
  w.be24(p.bth.psn & 0xFFFFFFu);

  // Extended headers in the order IBA 9.3 / Table 39 fixes: DETH, RETH, AtomicETH, AETH,
  // AtomicAckETH, ImmDt.
  if (layout.deth) {  // DETH: Q_Key(32) | resv8 SrcQP(24)
    w.be32(p.deth.q_key);
    w.be32(p.deth.src_qp & 0xFFFFFFu);
  }
  if (layout.reth) {  // RETH: VA(64) | R_Key(32) | DMALen(32)
    w.be64(p.reth.va);
    w.be32(p.reth.r_key);
    w.be32(p.reth.dma_len);
  }
  if (layout.atomic_eth) {  // AtomicETH (IBA 9.3.4): VA(64) | R_Key(32) | SwapAddData(64) | CmpData(64)
    w.be64(p.atomic_eth.va);
    w.be32(p.atomic_eth.r_key);
    w.be64(p.atomic_eth.swap_add);
    w.be64(p.atomic_eth.compare);
  }
  if (layout.aeth) {  // AETH: Syndrome(8) | MSN(24)
    w.u8(p.aeth.syndrome);
    w.be24(p.aeth.msn & 0xFFFFFFu);
  }
  if (layout.atomic_ack_eth) w.be64(p.atomic_ack_eth.orig);  // AtomicAckETH (IBA 9.3.6): OrigRemData(64)
  if (layout.immdt) w.be32(p.immdt);  // ImmDt: 32 bits

  if (p.payload.empty()) w.zeros(p.payload_bytes);
  else w.bytes(p.payload.data(), p.payload_bytes);
  w.zeros(pad);  // pad bytes (count in BTH.PadCnt) are sent as zeros

  const size_t icrc_at = total - kVcrcBytes - kIcrcBytes;
  store_crc32(out + icrc_at, icrc(out, icrc_at));
  if (with_vcrc) store_crc16(out + icrc_at + kIcrcBytes, vcrc(out, icrc_at + kIcrcBytes));
}

}  // namespace

std::vector<uint8_t> encode(const Packet& packet) {
  check_encodable(packet);
  std::vector<uint8_t> bytes(packet.wire_bytes());
  write_packet(packet, bytes.data());
  return bytes;
}

size_t encode_into(const Packet& packet, uint8_t* out, size_t cap) {
  check_encodable(packet);
  const size_t need = packet.wire_bytes();
  if (out == nullptr || cap < need) return 0;
  write_packet(packet, out);
  return need;
}

size_t encode_into_without_vcrc(const Packet& packet, uint8_t* out, size_t cap) {
  check_encodable(packet);
  const size_t need = packet.wire_bytes();
  if (out == nullptr || cap < need) return 0;
  write_packet(packet, out, false);
  return need;
}

DecodeResult decode(const uint8_t* d, size_t len) {
  DecodeResult r = decode_headers(d, len);
  if (!r.ok) return r;
  const size_t icrc_at = len - kVcrcBytes - kIcrcBytes;
  const size_t body_at = icrc_at - r.packet.bth.pad_cnt - r.packet.payload_bytes;
  r.packet.payload.assign(d + body_at, d + body_at + r.packet.payload_bytes);
  r.icrc_ok = icrc(d, icrc_at) == load_crc32(d + icrc_at);
  r.vcrc_ok = vcrc(d, icrc_at + kIcrcBytes) == load_crc16(d + icrc_at + kIcrcBytes);
  return r;
}

DecodeResult decode_headers(const uint8_t* d, size_t len) {
  DecodeResult r;
  auto fail = [&r](std::string why) {
    r.ok = false;
    r.error = std::move(why);
    return std::move(r);
  };
  if (d == nullptr && len > 0) return fail("decode: null buffer");
  if (len < kLrhBytes)
    return fail("truncated: " + std::to_string(len) + " bytes, the LRH alone needs 8");

  Packet& p = r.packet;
  p.lrh.vl = d[0] >> 4;
  p.lrh.lver = d[0] & 0xF;
  p.lrh.sl = d[1] >> 4;
  p.lrh.lnh = static_cast<Lnh>(d[1] & 0x3);
  p.lrh.dlid = be16(d + 2);
  p.lrh.pkt_len = be16(d + 4) & kMaxPktLenWords;
  p.lrh.slid = be16(d + 6);

  if (p.lrh.lnh != Lnh::iba_local && p.lrh.lnh != Lnh::iba_global)
    return fail("LNH " + std::to_string(d[1] & 0x3) +
                " marks a raw packet; only IBA local/global transport packets are decoded");
  const size_t expected = size_t{p.lrh.pkt_len} * 4 + kVcrcBytes;
  if (expected != len)
    return fail("bad PktLen: " + std::to_string(p.lrh.pkt_len) + " words means " +
                std::to_string(expected) + " bytes with the VCRC, but " + std::to_string(len) +
                (len < expected ? " bytes were given (truncated)" : " bytes were given"));

  const bool global = p.lrh.lnh == Lnh::iba_global;
  size_t off = kLrhBytes;
  const size_t fixed = kLrhBytes + (global ? kGrhBytes : 0) + kBthBytes + kIcrcBytes + kVcrcBytes;
  if (len < fixed)
    return fail("truncated: " + std::to_string(len) + " bytes cannot hold LRH" +
                (global ? " GRH" : "") + " BTH ICRC VCRC (" + std::to_string(fixed) + " bytes)");

  if (global) {
    const uint8_t* g = d + off;
    const uint32_t w0 = be32(g);
    p.grh.ip_ver = static_cast<uint8_t>(w0 >> 28);
    p.grh.tclass = static_cast<uint8_t>(w0 >> 20);
    p.grh.flow_label = w0 & 0xFFFFF;
    p.grh.pay_len = be16(g + 4);
    p.grh.nxt_hdr = g[6];
    p.grh.hop_lmt = g[7];
    std::memcpy(p.grh.sgid, g + 8, 16);
    std::memcpy(p.grh.dgid, g + 24, 16);
    if (p.grh.nxt_hdr != kNxtHdrIbaTransport)
      return fail("GRH NxtHdr " + hex8(p.grh.nxt_hdr) + " is not an IBA transport header (0x1B)");
    const size_t pay_len = len - kVcrcBytes - kLrhBytes - kGrhBytes;
    if (p.grh.pay_len != pay_len)
      return fail("bad GRH PayLen: " + std::to_string(p.grh.pay_len) + ", packet has " +
                  std::to_string(pay_len) + " bytes from BTH through ICRC");
    off += kGrhBytes;
  }

  const uint8_t* b = d + off;
  if (!is_known_opcode(b[0])) return fail("unknown BTH opcode " + hex8(b[0]));
  p.bth.opcode = static_cast<Opcode>(b[0]);
  p.bth.se = (b[1] & 0x80) != 0;
  p.bth.mig_req = (b[1] & 0x40) != 0;
  p.bth.pad_cnt = (b[1] >> 4) & 0x3;
  p.bth.tver = b[1] & 0xF;
  p.bth.p_key = be16(b + 2);
  p.bth.fecn = (b[4] & 0x80) != 0;
  p.bth.becn = (b[4] & 0x40) != 0;
  p.bth.dest_qp = be24(b + 5);
  p.bth.ack_req = (b[8] & 0x80) != 0;
  p.bth.psn = be24(b + 9);
  off += kBthBytes;

  const OpcodeLayout layout = opcode_layout(p.bth.opcode);
  const size_t ext = extended_header_bytes(layout);
  if (off + ext + kIcrcBytes + kVcrcBytes > len)
    return fail(std::string("truncated: ") + opcode_name(p.bth.opcode) + " needs " +
                std::to_string(ext) + " extended header bytes after the BTH, only " +
                std::to_string(len - off - kIcrcBytes - kVcrcBytes) + " precede the ICRC");
  if (layout.deth) {
    p.deth.q_key = be32(d + off);
    p.deth.src_qp = be24(d + off + 5);
    off += kDethBytes;
  }
  if (layout.reth) {
    p.reth.va = be64(d + off);
    p.reth.r_key = be32(d + off + 8);
    p.reth.dma_len = be32(d + off + 12);
    off += kRethBytes;
  }
  if (layout.atomic_eth) {
    p.atomic_eth.va = be64(d + off);
    p.atomic_eth.r_key = be32(d + off + 8);
    p.atomic_eth.swap_add = be64(d + off + 12);
    p.atomic_eth.compare = be64(d + off + 20);
    off += kAtomicEthBytes;
  }
  if (layout.aeth) {
    p.aeth.syndrome = d[off];
    p.aeth.msn = be24(d + off + 1);
    off += kAethBytes;
  }
  if (layout.atomic_ack_eth) {
    p.atomic_ack_eth.orig = be64(d + off);
    off += kAtomicAckEthBytes;
  }
  if (layout.immdt) {
    p.immdt = be32(d + off);
    off += kImmDtBytes;
  }

  const size_t icrc_at = len - kVcrcBytes - kIcrcBytes;
  const size_t body = icrc_at - off;  // payload + pad
  if (p.bth.pad_cnt > body)
    return fail("bad PadCnt: " + std::to_string(p.bth.pad_cnt) + " pad bytes but only " +
                std::to_string(body) + " bytes between the headers and the ICRC");
  if (!layout.has_payload && body > 0)
    return fail(std::string(opcode_name(p.bth.opcode)) + " carries no payload but " +
                std::to_string(body) + " bytes precede the ICRC");
  p.payload_bytes = static_cast<uint32_t>(body - p.bth.pad_cnt);
  r.ok = true;
  return r;
}

std::array<uint8_t, kFlowControlPacketBytes> encode_fcp(const FlowControlPacket& fcp) {
  std::array<uint8_t, kFlowControlPacketBytes> out{};
  Out w{out.data()};
  w.be16((fcp.op & 0xFu) << 12 | (fcp.fctbs & 0xFFFu));
  w.be16((fcp.vl & 0xFu) << 12 | (fcp.fccl & 0xFFFu));
  store_crc16(out.data() + 4, lpcrc(out.data()));
  return out;
}

bool decode_fcp(const uint8_t* d, size_t len, FlowControlPacket& out) {
  if (d == nullptr || len != kFlowControlPacketBytes) return false;
  const uint8_t op = d[0] >> 4;
  if (op > 1) return false;  // IBA 7.9.4: only 0 (normal) and 1 (init) are defined
  if (lpcrc(d) != load_crc16(d + 4)) return false;
  out.op = op;
  out.fctbs = be16(d) & 0xFFF;
  out.vl = d[2] >> 4;
  out.fccl = be16(d + 2) & 0xFFF;
  return true;
}

}  // namespace ibvp::ib
