// Constants and small helpers the default firmware's files share: its table sizes, the
// AETH syndromes it sends (IBA 9.7.5.2, Tables 43-45), tx descriptor cookies and timer ids,
// and 24-bit PSN arithmetic (IBA 9.7.1). Inside the transport only.
#pragma once

#include <cstdint>

#include "firmware/hal/ibvp_hal.h"

namespace ibvp::fw {

inline constexpr uint32_t kMaxCqs = 1024;
inline constexpr uint32_t kMaxMrs = 4096;
inline constexpr uint32_t kMaxSrqs = 256;
inline constexpr uint32_t kFirstQpn = 2;       // QP0 and QP1 are the SMI and GSI (IBA 3.5.1)
inline constexpr uint32_t kMrKeyBase = 0x100;  // key = base + index: key 0 is never valid
inline constexpr uint32_t kPortMtu = 4096;     // UD messages and the port's active MTU
inline constexpr uint8_t kAckSyndrome = 0x1F;  // ACK, credit count "invalid" (no end-to-end credits)
inline constexpr uint8_t kRnrNak = 0x20;       // RNR NAK; the low 5 bits are the timer code (IBA Table 45)
inline constexpr uint8_t kNakPsnSeq = 0x60;    // NAK codes (IBA 9.7.5.2.2, Table 44)
inline constexpr uint8_t kNakInvalidRequest = 0x61;
inline constexpr uint8_t kNakRemoteAccess = 0x62;
inline constexpr uint8_t kNakRemoteOperational = 0x63;
inline constexpr uint32_t kFetchBatch = 16;     // WQEs per DMA read of a ring
inline constexpr uint32_t kHeaderRoom = 64;     // wire bytes of a packet besides its payload, at most
inline constexpr uint32_t kDefaultVcRateMbps = 1000;  // VirtualClock rate of a QP that reserved none
// Cookies of tx descriptors: the QPN, whether this is a message's last packet, and the WQE
// counter of its WQE (UD/UC completions are matched by it).
inline constexpr uint64_t kCookieLast = uint64_t{1} << 63;
inline constexpr uint8_t kCnpOpcode = 0x81;    // IBA annex A10 congestion notification packet
inline constexpr uint32_t kMaxCcPrefetch = 64;    // cc_prefetch: packets held ahead of the window
inline constexpr uint32_t kMaxCcWindow = 1024;  // cc_window: packets unacknowledged per RC QP
// Timer ids: the RC local ACK timer of a QP has its QPN (24 bits); the CCTI_Timer is above.
inline constexpr uint32_t kCctTimerId = 0x8000'0000;
// A QP's RNR timer (IBA 9.7.5.2.8): this bit and the QPN.
inline constexpr uint32_t kRnrTimerFlag = 0x4000'0000;
// A CQ's moderation period (IBVP_CMD_MODIFY_CQ): this bit and the CQN.
inline constexpr uint32_t kCqTimerFlag = 0x2000'0000;
inline uint64_t make_cookie(uint32_t qpn, uint32_t wqe_counter, bool last) {
  return qpn | (uint64_t{wqe_counter & 0x3FFFFFFF} << 32) | (last ? kCookieLast : 0);
}

inline bool power_of_two(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }
inline uint32_t psn_add(uint32_t psn, uint32_t n) { return (psn + n) & 0xFFFFFF; }
// 24-bit serial arithmetic: a is before b when b - a lies in the forward half.
inline bool psn_before(uint32_t a, uint32_t b) {
  const uint32_t d = (b - a) & 0xFFFFFF;
  return d != 0 && d < 0x800000;
}
// IBA Table 45 (libibverbs min_rnr_timer): the RNR NAK timer field's delay in us; code 0
// is the longest, 655.36 ms.
inline uint64_t rnr_timer_ps(uint8_t code) {
  static constexpr uint32_t kUs[32] = {655360, 10,    20,    30,    40,     60,     80,     120,
                                       160,    240,   320,   480,   640,    960,    1280,   1920,
                                       2560,   3840,  5120,  7680,  10240,  15360,  20480,  30720,
                                       40960,  61440, 81920, 122880, 163840, 245760, 327680, 491520};
  return uint64_t{kUs[code & 31]} * 1'000'000;
}
// RDMA READs and atomics (IBA 9.4.5) wait for their data in a response, not for an ACK.
inline bool is_atomic(uint8_t wr_opcode) {
  return wr_opcode == IBVP_WR_ATOMIC_CMP_AND_SWP || wr_opcode == IBVP_WR_ATOMIC_FETCH_AND_ADD;
}
inline bool is_rd_atomic(uint8_t wr_opcode) { return wr_opcode == IBVP_WR_RDMA_READ || is_atomic(wr_opcode); }
inline uint32_t mtu_bytes(uint8_t code) { return code >= IBVP_MTU_256 && code <= IBVP_MTU_4096 ? 128u << code : 0; }

}  // namespace ibvp::fw
