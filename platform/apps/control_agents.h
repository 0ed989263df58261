#pragma once
// The control section's senders on HCA hosts (endpoint_model: hca; issue 11, docs/hca.md,
// Management packets): at each of a sender's periods its workload::ControlSource makes one
// packet, which goes straight to that host's HCA VL15 queue (Hca::send_management), as a
// subnet management interface would send a MAD. Host CPU, driver and firmware take no part.
// One SC_METHOD serves every sender: it wakes at the next packet of any of them.
#include <cstdint>
#include <systemc>
#include <vector>

#include "models/hca/hca.h"
#include "platform/workload/control_source.h"

namespace ibvp::apps {

class ControlAgents : public sc_core::sc_module {
 public:
  struct Sender {
    workload::ControlSource* source;
    hca::Hca* hca;
  };

  SC_HAS_PROCESS(ControlAgents);
  ControlAgents(sc_core::sc_module_name name, std::vector<Sender> senders);

  uint64_t sent() const { return sent_; }

 private:
  void wake();

  std::vector<Sender> senders_;
  sc_core::sc_event next_;
  uint64_t sent_ = 0;
};

}  // namespace ibvp::apps
