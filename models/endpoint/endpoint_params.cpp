#include "models/endpoint/endpoint_params.h"

#include "models/endpoint/endpoint.h"
#include "models/link/link_params.h"
#include "models/switch/switch.h"

namespace ibvp::ep {

const sim::ParamGroup& endpoint_params() {
  static const sim::ParamGroup group = [] {
    sim::GroupBuilder<EndpointConfig> b(
        "endpoint", "Every channel-adapter port: injects the flows' packets and sinks what arrives.");
    // The CA port maps SLs to VLs like a switch port; one default for both keeps a fabric
    // that sets only data_vls consistent end to end.
    link::declare_port_params(b, "Receive buffer per data VL; credits advertise it to the switch.",
                              &sw::SwitchConfig::default_sl2vl);
    return b.build();
  }();
  return group;
}

}  // namespace ibvp::ep
