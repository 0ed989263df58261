#pragma once
// Seed 000 Sec. 5.2's baseline for multicast, "replicated unicast": the source sends one
// unicast packet per member for every packet its generator creates, all with the packet's
// creation time, so a member's latency counts the wait behind the copies before it.
#include <cstdint>
#include <memory>
#include <vector>

#include "models/endpoint/traffic_source.h"
#include "platform/workload/flow_source.h"

namespace ibvp::workload {

class ReplicatedUnicastSource : public ep::TrafficSource {
 public:
  // `inner` generates the group's packets (its destination is ignored); `members` receive.
  ReplicatedUnicastSource(std::unique_ptr<ep::TrafficSource> inner, std::vector<Destination> members)
      : inner_(std::move(inner)), members_(std::move(members)) {
    flow = inner_->flow;
    sl = inner_->sl;
    payload_bytes = inner_->payload_bytes;
    opcode = inner_->opcode;
    ipd = inner_->ipd;
  }

  uint64_t next_ready_ps(uint64_t now_ps) override {
    return next_ < members_.size() && next_ > 0 ? now_ps : inner_->next_ready_ps(now_ps);
  }
  void take(uint64_t now_ps, ep::PacketSpec& out) override {
    if (next_ == 0 || next_ >= members_.size()) {
      inner_->take(now_ps, current_);
      next_ = 0;
    }
    out = current_;
    out.dst_node = members_[next_].node;
    out.dlid = members_[next_].dlid;
    ++next_;
    if (next_ == members_.size()) next_ = 0;
  }
  uint32_t next_payload_bytes() const override { return inner_->next_payload_bytes(); }
  uint8_t next_sl() override { return inner_->next_sl(); }

 private:
  std::unique_ptr<ep::TrafficSource> inner_;
  std::vector<Destination> members_;
  size_t next_ = 0;  // the member the next packet goes to; 0: take a new packet from inner_
  ep::PacketSpec current_;
};

}  // namespace ibvp::workload
