#pragma once
// Test bench for the HCA: two hosts (memory, CPU, PCIe bus, HCA with a firmware image)
// cabled through one switch or back to back, and helpers that set up verbs objects from a
// program thread.
#include <memory>
#include <vector>

#include "models/ib/packet.h"
#include "models/link/fabric_payload.h"
#include "models/link/link.h"
#include "models/sim/observer.h"
#include "models/switch/switch.h"
#include "platform/driver/host_node.h"
#include "platform/driver/verbs.h"

namespace ibvp::tb {

struct HcaBenchOptions {
  bool switched = true;  // h1 - switch - h2, or h1 - h2
  // A 4X EDR cable: 4 lanes x 25.78125 Gb/s x 64/66 = 100 Gb/s of data, 2 m at 5 ns/m.
  link::LinkConfig cable{link::Width::x4, link::Speed::edr, 2.0, 5.0};
  sw::SwitchConfig switch_cfg = default_switch();
  driver::HostNodeConfig h1, h2;

  static sw::SwitchConfig default_switch();
};

class HcaBench {
 public:
  static constexpr uint16_t kLid1 = 1, kLid2 = 2;
  explicit HcaBench(const HcaBenchOptions& o = HcaBenchOptions{});

  ib::PacketPool packets;
  link::PayloadPool payloads;
  sim::Probe probe;
  std::unique_ptr<driver::HostNode> h1, h2;
  std::unique_ptr<sw::Switch> sw;
  std::vector<std::unique_ptr<link::Link>> links;
};

// One side of a test: a device context with a PD, one registered buffer, CQs and a QP.
struct Side {
  std::unique_ptr<verbs::Context> ctx;
  verbs::ProtectionDomain* pd = nullptr;
  verbs::MemoryRegion* mr = nullptr;
  verbs::CompletionQueue* send_cq = nullptr;
  verbs::CompletionQueue* recv_cq = nullptr;
  verbs::QueuePair* qp = nullptr;
  uint16_t lid = 0;
  // The application buffer, registered as `mr`.
  static constexpr uint64_t kBuffer = 0x1000'0000;
  static constexpr uint64_t kBufferBytes = 1 << 20;
  // Driver memory (rings, mailbox).
  static constexpr uint64_t kDriverArea = 0x0100'0000;
  static constexpr uint64_t kDriverBytes = 16 << 20;
};

// Opens the device of `host` and creates PD, MR (with `access`), CQs of `cq_entries` and
// one QP of `type` (program thread).
void open_side(Side& s, driver::HostNode& host, verbs::QpType type, uint32_t doorbell_class = 0,
               uint32_t access = verbs::ACCESS_LOCAL_WRITE, int cq_entries = 64);
// Adds one more QP of `type` on the same PD and CQs.
verbs::QueuePair* add_qp(Side& s, verbs::QpType type, uint32_t doorbell_class);
// Brings `qp` to RTS: UD with Q_Key `qkey`; RC/UC connected to (dlid, dest_qpn).
void bring_up(verbs::QueuePair* qp, uint16_t dlid, uint32_t dest_qpn, uint32_t qkey = 0x11111111);
// RC/UC attributes of bring_up_connected.
struct ConnectedAttrs {
  uint32_t access = verbs::ACCESS_LOCAL_WRITE;
  uint8_t timeout = 14;   // local ACK timeout 4.096 us * 2^timeout
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;       // IBA 9.7.5.2.8: 7 is infinite
  uint8_t min_rnr_timer = 12;  // the RNR NAK timer code this QP's responder sends (0.64 ms)
  uint8_t sl = 0;
  verbs::Mtu mtu = verbs::Mtu::mtu_1024;
  uint8_t max_rd_atomic = 1;       // READs and atomics outstanding as requester
  uint8_t max_dest_rd_atomic = 1;  // responder resources (atomic results kept)
};
// Brings an RC or UC `qp` to RTS connected to (dlid, dest_qpn), PSNs 0x100 both ways.
void bring_up_connected(verbs::QueuePair* qp, uint16_t dlid, uint32_t dest_qpn, const ConnectedAttrs& c);

constexpr uint32_t kQkey = 0x11111111;

// Expects h1's firmware to refuse `firmware_args` at elaboration with `message` in the
// error. One elaboration per test process: each bad argument string is its own test.
void expect_firmware_refused(const char* firmware_args, const char* message);

}  // namespace ibvp::tb
