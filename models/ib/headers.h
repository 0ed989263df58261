#pragma once
// InfiniBand transport headers as the IBA specification (Vol. 1, ch. 5 and 9) lays them out.
// Fields hold decoded values; encode()/decode() in wire.h turn them into the big-endian
// bytes that travel on a link. Names follow the specification's spelling.
#include <cstdint>

namespace ibvp::ib {

// Link Next Header (LRH.LNH): what follows the LRH.
enum class Lnh : uint8_t {
  raw = 0,         // raw packet, no IBA transport
  ip_non_iba = 1,  // raw IPv6 (not modelled beyond the code point)
  iba_local = 2,   // LRH BTH ...   (no GRH)
  iba_global = 3,  // LRH GRH BTH ...
};

// Base Transport Header opcodes (IBA Table 38). The upper three bits select the transport
// (RC 000, UC 001, RD 010, UD 011), the lower five the operation.
enum class Opcode : uint8_t {
  rc_send_first = 0x00,
  rc_send_middle = 0x01,
  rc_send_last = 0x02,
  rc_send_last_imm = 0x03,
  rc_send_only = 0x04,
  rc_send_only_imm = 0x05,
  rc_rdma_write_first = 0x06,
  rc_rdma_write_middle = 0x07,
  rc_rdma_write_last = 0x08,
  rc_rdma_write_last_imm = 0x09,
  rc_rdma_write_only = 0x0A,
  rc_rdma_write_only_imm = 0x0B,
  rc_rdma_read_request = 0x0C,
  rc_rdma_read_response_first = 0x0D,
  rc_rdma_read_response_middle = 0x0E,
  rc_rdma_read_response_last = 0x0F,
  rc_rdma_read_response_only = 0x10,
  rc_acknowledge = 0x11,
  rc_atomic_acknowledge = 0x12,  // AETH + AtomicAckETH (IBA 9.4.5)
  rc_compare_swap = 0x13,        // AtomicETH
  rc_fetch_add = 0x14,           // AtomicETH

  uc_send_first = 0x20,
  uc_send_middle = 0x21,
  uc_send_last = 0x22,
  uc_send_last_imm = 0x23,
  uc_send_only = 0x24,
  uc_send_only_imm = 0x25,
  uc_rdma_write_first = 0x26,
  uc_rdma_write_middle = 0x27,
  uc_rdma_write_last = 0x28,
  uc_rdma_write_last_imm = 0x29,
  uc_rdma_write_only = 0x2A,
  uc_rdma_write_only_imm = 0x2B,

  ud_send_only = 0x64,
  ud_send_only_imm = 0x65,

  cnp = 0x81,  // congestion notification packet (IBA annex A10), BECN set
};

// Local Route Header, 8 bytes (IBA 7.7).
struct Lrh {
  uint8_t vl = 0;       // 4 bits, Virtual Lane
  uint8_t lver = 0;     // 4 bits, Link Version (0)
  uint8_t sl = 0;       // 4 bits, Service Level
  Lnh lnh = Lnh::iba_local;
  uint16_t dlid = 0;
  uint16_t pkt_len = 0;  // 11 bits, packet length in 4-byte words from LRH to ICRC inclusive
  uint16_t slid = 0;
};

// Global Route Header, 40 bytes (IBA 8.3).
struct Grh {
  uint8_t ip_ver = 6;
  uint8_t tclass = 0;
  uint32_t flow_label = 0;  // 20 bits
  uint16_t pay_len = 0;     // bytes from BTH to ICRC inclusive
  uint8_t nxt_hdr = 0x1B;   // 0x1B: IBA transport follows
  uint8_t hop_lmt = 0;
  uint8_t sgid[16] = {};
  uint8_t dgid[16] = {};
};

// Base Transport Header, 12 bytes (IBA 9.2).
struct Bth {
  Opcode opcode = Opcode::rc_send_only;
  bool se = false;        // solicited event
  bool mig_req = false;   // M bit
  uint8_t pad_cnt = 0;    // 2 bits: bytes added to make the payload a multiple of 4
  uint8_t tver = 0;       // 4 bits, transport header version (0)
  uint16_t p_key = 0xFFFF;
  bool fecn = false;      // forward explicit congestion notification (switch marks)
  bool becn = false;      // backward explicit congestion notification (destination returns)
  uint32_t dest_qp = 0;   // 24 bits
  bool ack_req = false;   // A bit
  uint32_t psn = 0;       // 24 bits
};

// Datagram Extended Transport Header, 8 bytes (UD).
struct Deth {
  uint32_t q_key = 0;
  uint32_t src_qp = 0;  // 24 bits
};

// RDMA Extended Transport Header, 16 bytes.
struct Reth {
  uint64_t va = 0;
  uint32_t r_key = 0;
  uint32_t dma_len = 0;
};

// ACK Extended Transport Header, 4 bytes.
struct Aeth {
  uint8_t syndrome = 0;  // bits 7..5 kind (000 ACK, 001 RNR NAK, 011 NAK), 4..0 credit/timer/NAK code
  uint32_t msn = 0;      // 24 bits
};

// Atomic Extended Transport Header, 28 bytes (IBA 9.3.4): an RC COMPARE SWAP or FETCH ADD
// request. VA must be 8-byte aligned (IBA 9.4.5).
struct AtomicEth {
  uint64_t va = 0;
  uint32_t r_key = 0;
  uint64_t swap_add = 0;  // Swap Data (CmpSwap) or Add Data (FetchAdd)
  uint64_t compare = 0;   // Compare Data (CmpSwap only)
};

// Atomic Acknowledge Extended Transport Header, 8 bytes (IBA 9.3.6): the value the target
// held before the atomic.
struct AtomicAckEth {
  uint64_t orig = 0;
};

// Link-layer flow control packet, 6 bytes on the wire including its 16-bit LPCRC (IBA 7.9.4).
struct FlowControlPacket {
  uint8_t op = 0;       // 4 bits: 0 normal, 1 initialization
  uint16_t fctbs = 0;   // 12 bits: flow control total blocks sent
  uint8_t vl = 0;       // 4 bits
  uint16_t fccl = 0;    // 12 bits: flow control credit limit
};

// Virtual lanes: data VLs 0..14, VL15 for subnet management (IBA 7.6).
constexpr uint8_t kMaxVls = 16;
constexpr uint8_t kVl15 = 15;

// Header sizes in bytes, as on the wire.
constexpr uint32_t kLrhBytes = 8;
constexpr uint32_t kGrhBytes = 40;
constexpr uint32_t kBthBytes = 12;
constexpr uint32_t kDethBytes = 8;
constexpr uint32_t kRethBytes = 16;
constexpr uint32_t kAethBytes = 4;
constexpr uint32_t kImmDtBytes = 4;
constexpr uint32_t kAtomicEthBytes = 28;
constexpr uint32_t kAtomicAckEthBytes = 8;
constexpr uint32_t kIcrcBytes = 4;
constexpr uint32_t kVcrcBytes = 2;
constexpr uint32_t kFlowControlPacketBytes = 6;

// Pad bytes after a payload: the packet ends on a 4-byte boundary (BTH PadCnt, IBA 9.2).
constexpr uint32_t pad_bytes(uint32_t payload) { return (4 - payload % 4) % 4; }

// Which extended headers an opcode carries (IBA Table 39).
struct OpcodeLayout {
  bool deth = false;
  bool reth = false;
  bool aeth = false;
  bool immdt = false;
  bool atomic_eth = false;      // RC COMPARE SWAP, FETCH ADD
  bool atomic_ack_eth = false;  // RC ATOMIC ACKNOWLEDGE (after its AETH)
  bool has_payload = false;  // whether a payload may follow
};
OpcodeLayout opcode_layout(Opcode op);
bool is_known_opcode(uint8_t code);
const char* opcode_name(Opcode op);

}  // namespace ibvp::ib
