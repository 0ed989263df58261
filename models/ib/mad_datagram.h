#pragma once
// A management datagram as QP0/QP1 software hands it to a CA port and gets it back
// (IBA 13.5.1): a UD SEND Only that carries one 256-byte MAD. QP0 (the SMI) travels on
// VL15 without credits (IBA 7.9.4); QP1 (the GSI) on the VL its SL maps to. The MAD's own
// layout (common header, SMP and GMP classes, attributes) is for the agents and managers
// that read it; the port only moves the 256 bytes.
#include <array>
#include <cstdint>

namespace ibvp::ib {

constexpr uint32_t kMadBytes = 256;
constexpr uint16_t kPermissiveLid = 0xFFFF;  // directed-route SMPs (IBA 14.2.2)
constexpr uint32_t kQp1QKey = 0x80010000;     // the well-known GSI Q_Key (IBA 13.5.3)

struct MadDatagram {
  uint16_t dlid = 0;         // LRH.DLID
  uint16_t slid = 0;         // LRH.SLID (the sending port fills its own LID)
  uint8_t sl = 0;            // LRH.SL (QP1; QP0 packets are SL 0 on VL15)
  uint32_t dest_qp = 0;      // BTH.DestQP: 0 (SMI) or 1 (GSI)
  uint32_t src_qp = 0;       // DETH.SrcQP
  uint32_t q_key = 0;        // DETH.Q_Key (QP1: kQp1QKey; QP0: 0, IBA 13.5.3)
  uint16_t p_key = 0xFFFF;   // BTH.P_Key
  std::array<uint8_t, kMadBytes> mad{};
};

}  // namespace ibvp::ib
