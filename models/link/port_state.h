#pragma once
// State a port keeps on either side of a cable, shared by switches and channel adapters:
// the receive buffers per VL (what the port advertised as credits) and, on the transmit
// side, the credits the far end advertised, plus the counters observers read at the end.
#include <array>
#include <cassert>
#include <cstdint>
#include <utility>
#include <vector>

#include "models/ib/packet.h"

namespace ibvp::link {

struct VlCounters {
  uint64_t packets_tx = 0;
  uint64_t bytes_tx = 0;
  uint64_t credit_blocked_ps = 0;  // head packet waited for credits while the port was idle
  uint32_t buffer_hwm_blocks = 0;  // receive buffer high-water mark
};

struct alignas(64) PortCounters {
  // Laid out for the packet path: a transmission's counters and VL 0's share the first
  // cache line (issue 17: lines touched per hop set the wall time on large fabrics).
  uint64_t packets_tx = 0;
  uint64_t bytes_tx = 0;
  uint64_t busy_ps = 0;            // time the port's transmitter was sending
  uint64_t packets_rx = 0;
  std::array<VlCounters, ib::kMaxVls> vl{};
  uint64_t bytes_rx = 0;
  uint64_t credit_blocked_ps = 0;  // idle with packets waiting, none sendable for lack of credits
  uint64_t vl15_dropped = 0;
  uint64_t xmit_discards = 0;  // IBA PortXmitDiscards: packets this output dropped (lifetimes expired)
  uint64_t fecn_marked = 0;  // packets this port's switch marked (FECN): at the input that
                             // filled (naive), at the output they left by (triggered policies)
};

// Receive side: buffer space per VL in 64-byte blocks. The sender tracks the same numbers as
// credits, so `admit` failing for a data VL means a sender broke flow control: a model bug.
class RxBuffers {
 public:
  void set_capacity(uint8_t vl, uint32_t bytes) { vl_[vl].cap = bytes / ib::kCreditBlockBytes; }
  uint32_t capacity_blocks(uint8_t vl) const { return vl_[vl].cap; }
  uint32_t used_blocks(uint8_t vl) const { return vl_[vl].used; }
  bool fits(uint8_t vl, uint32_t blocks) const { return vl_[vl].used + blocks <= vl_[vl].cap; }
  void admit(uint8_t vl, uint32_t blocks, PortCounters& c) {
    assert(fits(vl, blocks) && "packet exceeds the receive buffer: credit flow control violated");
    vl_[vl].used += blocks;
    if (vl_[vl].used > c.vl[vl].buffer_hwm_blocks) c.vl[vl].buffer_hwm_blocks = vl_[vl].used;
  }
  void release(uint8_t vl, uint32_t blocks) {
    assert(vl_[vl].used >= blocks);
    vl_[vl].used -= blocks;
  }
  // Space that frees at a known future time (a tail leaving through the crossbar): counted
  // as used until then. Through a non-multiplexed crossbar the releases of one input come in
  // time order (its connection carries one packet at a time) and the insertion below is a
  // push_back; through a multiplexed one a packet to a fast output may free before one to a
  // slower output that started earlier, so it is inserted from the back in time order.
  void release_at(uint8_t vl, uint32_t blocks, uint64_t at_ps) {
    pending_.push_back({at_ps, vl, blocks});
    for (size_t i = pending_.size() - 1; i > head_ && pending_[i - 1].at_ps > at_ps; --i)
      std::swap(pending_[i - 1], pending_[i]);
  }
  void absorb(uint64_t now_ps) {
    while (head_ < pending_.size() && pending_[head_].at_ps <= now_ps) {
      release(pending_[head_].vl, pending_[head_].blocks);
      ++head_;
    }
    if (head_ == pending_.size()) {
      pending_.clear();
      head_ = 0;
    }
  }
  // Blocks of `vl` whose release is due by now_ps but not yet absorbed; `later` is set when
  // some release of `vl` is due after now_ps. (For the deadlock watch, off the packet path.)
  uint32_t released_by(uint8_t vl, uint64_t now_ps, bool& later) const {
    uint32_t due = 0;
    later = false;
    for (size_t i = head_; i < pending_.size(); ++i) {
      if (pending_[i].vl != vl) continue;
      if (pending_[i].at_ps <= now_ps)
        due += pending_[i].blocks;
      else
        later = true;
    }
    return due;
  }
  uint32_t total_used() const {
    uint32_t s = 0;
    for (const Vl& v : vl_) s += v.used;
    return s;
  }

 private:
  struct Release {
    uint64_t at_ps;
    uint8_t vl;
    uint32_t blocks;
  };
  // A VL's capacity and use side by side: a packet reads both (one cache line for VL 0).
  struct Vl {
    uint32_t cap = 0;
    uint32_t used = 0;
  };
  // The pending list's header before the VLs: it and VL 0 share a cache line.
  std::vector<Release> pending_;
  size_t head_ = 0;
  std::array<Vl, ib::kMaxVls> vl_{};
};

// Transmit side: credits per data VL, never below zero nor above what the receiver
// advertised. VL15 is not credited (IBA 7.9.4).
//
// Credit updates are announced when the receiver frees space, with the time they reach
// this port (a cable's delay later), and count from that time on. Keeping them here in
// arrival order, instead of waking the port for each, costs the simulation an event only
// when the port is idle and might use them; the numbers a sender sees are the same.
class TxCredits {
 public:
  void arrive(uint8_t vl, uint32_t blocks, uint64_t at_ps) {
    // Updates come nearly in time order (a switch announces a credit when a tail starts to
    // leave, and a dropped packet's when its tail is in): insert from the back.
    pending_.push_back({at_ps, vl, blocks});
    for (size_t i = pending_.size() - 1; i > head_ && pending_[i - 1].at_ps > at_ps; --i)
      std::swap(pending_[i - 1], pending_[i]);
  }
  // When the next announced update arrives; ~0 if none is on its way.
  uint64_t next_arrival_ps() const { return head_ < pending_.size() ? pending_[head_].at_ps : ~uint64_t{0}; }
  // Counts every update that has arrived by now_ps.
  void absorb(uint64_t now_ps) {
    while (head_ < pending_.size() && pending_[head_].at_ps <= now_ps) {
      restore(pending_[head_].vl, pending_[head_].blocks);
      ++head_;
    }
    if (head_ == pending_.size()) {
      pending_.clear();  // keeps capacity: no allocation once warm
      head_ = 0;
    }
  }
  void set_limit(uint8_t vl, uint32_t blocks) { vl_[vl].limit = vl_[vl].credits = blocks; }
  bool can_send(uint8_t vl, uint32_t blocks) const { return vl == ib::kVl15 || vl_[vl].credits >= blocks; }
  void consume(uint8_t vl, uint32_t blocks) {
    if (vl == ib::kVl15) return;
    assert(vl_[vl].credits >= blocks && "credits would go negative");
    vl_[vl].credits -= blocks;
  }
  void restore(uint8_t vl, uint32_t blocks) {
    vl_[vl].credits += blocks;
    assert(vl_[vl].credits <= vl_[vl].limit && "credits above the receiver's buffer size");
  }
  uint32_t available(uint8_t vl) const { return vl_[vl].credits; }
  // Blocks of `vl` announced and not yet absorbed, whether arrived or still on their way.
  uint32_t announced(uint8_t vl) const {
    uint32_t n = 0;
    for (size_t i = head_; i < pending_.size(); ++i)
      if (pending_[i].vl == vl) n += pending_[i].blocks;
    return n;
  }
  uint32_t limit(uint8_t vl) const { return vl_[vl].limit; }

 private:
  struct Update {
    uint64_t at_ps;
    uint8_t vl;
    uint32_t blocks;
  };
  // A VL's limit and credits side by side (one cache line for VL 0).
  struct Vl {
    uint32_t limit = 0;
    uint32_t credits = 0;
  };
  // The pending list's header before the VLs: it and VL 0 share a cache line.
  std::vector<Update> pending_;
  size_t head_ = 0;
  std::array<Vl, ib::kMaxVls> vl_{};
};

// Accumulates "waiting for credits" time per VL and per port from state samples.
class CreditWaitClock {
 public:
  static constexpr uint64_t kIdle = ~uint64_t{0};
  void sample(uint8_t vl, bool waiting, uint64_t now, PortCounters& c) {
    if (waiting && since_[vl] == kIdle) since_[vl] = now;
    if (!waiting && since_[vl] != kIdle) {
      c.vl[vl].credit_blocked_ps += now - since_[vl];
      since_[vl] = kIdle;
    }
  }
  void sample_port(bool waiting, uint64_t now, PortCounters& c) {
    if (waiting && port_since_ == kIdle) port_since_ = now;
    if (!waiting && port_since_ != kIdle) {
      c.credit_blocked_ps += now - port_since_;
      port_since_ = kIdle;
    }
  }
  // The port's wait still open at `now` (not yet in credit_blocked_ps): what a counter read
  // mid-wait adds (the PMA's PortXmitWait, IBA 16.1.3.5).
  uint64_t port_open_ps(uint64_t now) const { return port_since_ == kIdle ? 0 : now - port_since_; }
  void close_all(uint64_t now, PortCounters& c) {
    for (uint8_t vl = 0; vl < ib::kMaxVls; ++vl) sample(vl, false, now, c);
    sample_port(false, now, c);
  }

 private:
  // The port's clock first: it and the first VLs' share a cache line (every transmission
  // samples both; issue 17).
  uint64_t port_since_ = kIdle;
  std::array<uint64_t, ib::kMaxVls> since_ = filled();
  static std::array<uint64_t, ib::kMaxVls> filled() {
    std::array<uint64_t, ib::kMaxVls> a{};
    a.fill(kIdle);
    return a;
  }
};

}  // namespace ibvp::link
