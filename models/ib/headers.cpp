#include "models/ib/headers.h"

namespace ibvp::ib {

OpcodeLayout opcode_layout(Opcode op) {
  OpcodeLayout l;
  const auto code = static_cast<uint8_t>(op);
  const uint8_t transport = code >> 5;  // 0 RC, 1 UC, 2 RD, 3 UD, 4 CNP
  const uint8_t kind = code & 0x1F;
  if (op == Opcode::cnp) return l;  // annex A10: BTH only, no payload
  if (transport == 3) {             // UD: DETH on every packet
    l.deth = true;
    l.has_payload = true;
    l.immdt = (kind == 0x05);
    return l;
  }
  switch (kind) {
    case 0x00: case 0x01: case 0x02: case 0x04: l.has_payload = true; break;
    case 0x03: case 0x05: l.has_payload = true; l.immdt = true; break;
    case 0x06: case 0x0A: l.reth = true; l.has_payload = true; break;
    case 0x07: case 0x08: l.has_payload = true; break;
    case 0x09: l.has_payload = true; l.immdt = true; break;
    case 0x0B: l.reth = true; l.has_payload = true; l.immdt = true; break;
    case 0x0C: l.reth = true; break;                                  // RDMA READ request
    case 0x0D: case 0x0F: case 0x10: l.aeth = true; l.has_payload = true; break;
    case 0x0E: l.has_payload = true; break;
    case 0x11: l.aeth = true; break;                                  // ACK
    case 0x12: l.aeth = true; l.atomic_ack_eth = true; break;         // ATOMIC ACKNOWLEDGE
    case 0x13: case 0x14: l.atomic_eth = true; break;                 // CmpSwap, FetchAdd
    default: break;
  }
  return l;
}

bool is_known_opcode(uint8_t code) {
  if (code == static_cast<uint8_t>(Opcode::cnp)) return true;
  const uint8_t transport = code >> 5;
  const uint8_t kind = code & 0x1F;
  if (transport == 0) return kind <= 0x14;  // through FETCH ADD (IBA Table 38)
  if (transport == 1) return kind <= 0x0B;
  if (transport == 3) return kind == 0x04 || kind == 0x05;
  return false;
}

const char* opcode_name(Opcode op) {
  switch (op) {
    case Opcode::rc_send_first: return "RC SEND First";
    case Opcode::rc_send_middle: return "RC SEND Middle";
    case Opcode::rc_send_last: return "RC SEND Last";
    case Opcode::rc_send_last_imm: return "RC SEND Last with Immediate";
    case Opcode::rc_send_only: return "RC SEND Only";
    case Opcode::rc_send_only_imm: return "RC SEND Only with Immediate";
    case Opcode::rc_rdma_write_first: return "RC RDMA WRITE First";
    case Opcode::rc_rdma_write_middle: return "RC RDMA WRITE Middle";
    case Opcode::rc_rdma_write_last: return "RC RDMA WRITE Last";
    case Opcode::rc_rdma_write_last_imm: return "RC RDMA WRITE Last with Immediate";
    case Opcode::rc_rdma_write_only: return "RC RDMA WRITE Only";
    case Opcode::rc_rdma_write_only_imm: return "RC RDMA WRITE Only with Immediate";
    case Opcode::rc_rdma_read_request: return "RC RDMA READ Request";
    case Opcode::rc_rdma_read_response_first: return "RC RDMA READ response First";
    case Opcode::rc_rdma_read_response_middle: return "RC RDMA READ response Middle";
    case Opcode::rc_rdma_read_response_last: return "RC RDMA READ response Last";
    case Opcode::rc_rdma_read_response_only: return "RC RDMA READ response Only";
    case Opcode::rc_acknowledge: return "RC Acknowledge";
    case Opcode::rc_atomic_acknowledge: return "RC ATOMIC Acknowledge";
    case Opcode::rc_compare_swap: return "RC CmpSwap";
    case Opcode::rc_fetch_add: return "RC FetchAdd";
    case Opcode::uc_send_first: return "UC SEND First";
    case Opcode::uc_send_middle: return "UC SEND Middle";
    case Opcode::uc_send_last: return "UC SEND Last";
    case Opcode::uc_send_last_imm: return "UC SEND Last with Immediate";
    case Opcode::uc_send_only: return "UC SEND Only";
    case Opcode::uc_send_only_imm: return "UC SEND Only with Immediate";
    case Opcode::uc_rdma_write_first: return "UC RDMA WRITE First";
    case Opcode::uc_rdma_write_middle: return "UC RDMA WRITE Middle";
    case Opcode::uc_rdma_write_last: return "UC RDMA WRITE Last";
    case Opcode::uc_rdma_write_last_imm: return "UC RDMA WRITE Last with Immediate";
    case Opcode::uc_rdma_write_only: return "UC RDMA WRITE Only";
    case Opcode::uc_rdma_write_only_imm: return "UC RDMA WRITE Only with Immediate";
    case Opcode::ud_send_only: return "UD SEND Only";
    case Opcode::ud_send_only_imm: return "UD SEND Only with Immediate";
    case Opcode::cnp: return "CNP";
  }
  return "unknown";
}

}  // namespace ibvp::ib
