#include "models/ib/packet.h"

#include <cassert>

namespace ibvp::ib {

const char* drop_reason_name(DropReason r) {
  switch (r) {
    case DropReason::none: return "none";
    case DropReason::no_route: return "no_route";
    case DropReason::vl15_overflow: return "vl15_overflow";
    case DropReason::bad_port: return "bad_port";
    case DropReason::sl2vl: return "sl2vl";
    case DropReason::ca_discard: return "ca_discard";
    case DropReason::hoq_lifetime: return "hoq_lifetime";
    case DropReason::switch_lifetime: return "switch_lifetime";
    case DropReason::port_state: return "port_state";
    case DropReason::smp_discard: return "smp_discard";
    case DropReason::link_down: return "link_down";
  }
  return "unknown";
}

namespace {
// Bytes from the start of the BTH up to (excluding) the payload.
uint32_t transport_header_bytes(const Bth& bth) {
  const OpcodeLayout l = opcode_layout(bth.opcode);
  return kBthBytes + (l.deth ? kDethBytes : 0) + (l.reth ? kRethBytes : 0) +
         (l.aeth ? kAethBytes : 0) + (l.immdt ? kImmDtBytes : 0) + (l.atomic_eth ? kAtomicEthBytes : 0) +
         (l.atomic_ack_eth ? kAtomicAckEthBytes : 0);
}
}  // namespace

uint32_t Packet::wire_bytes() const {
  uint32_t bytes = kLrhBytes;
  if (lrh.lnh == Lnh::iba_global) bytes += kGrhBytes;
  bytes += transport_header_bytes(bth) + payload_bytes + pad_bytes(payload_bytes) + kIcrcBytes;
  return bytes + kVcrcBytes;
}

uint32_t Packet::credit_blocks() const { return blocks_for(wire_bytes()); }

void Packet::finalize_lengths() {
  bth.pad_cnt = static_cast<uint8_t>(pad_bytes(payload_bytes));
  // PktLen counts LRH through ICRC (VCRC excluded) in 4-byte words (IBA 7.7.8).
  const uint32_t words = (wire_bytes() - kVcrcBytes) / 4;
  assert(words < 2048 && "PktLen is 11 bits: packet exceeds the IBA maximum");
  lrh.pkt_len = static_cast<uint16_t>(words);
  size = wire_bytes();
  if (lrh.lnh == Lnh::iba_global)
    grh.pay_len = static_cast<uint16_t>(wire_bytes() - kVcrcBytes - kLrhBytes - kGrhBytes);
}

PacketPool::~PacketPool() {
  for (Packet* p : all_) delete p;
}

Packet* PacketPool::acquire() {
  Packet* p;
  if (free_.empty()) {
    p = new Packet();
    all_.push_back(p);
  } else {
    p = free_.back();
    free_.pop_back();
    *p = Packet();
  }
  p->id = next_id_++;
  ++live_;
  return p;
}

void PacketPool::release(Packet* p) {
  assert(live_ > 0);
  --live_;
  free_.push_back(p);
}

}  // namespace ibvp::ib
