#include "models/link/link.h"

#include "models/link/fabric_payload.h"

namespace ibvp::link {

Link::Link(sc_core::sc_module_name name, const LinkConfig& cfg)
    : sc_module(name),
      in{tlm_utils::passthrough_target_socket_tagged<Link>("in_ab"),
         tlm_utils::passthrough_target_socket_tagged<Link>("in_ba")},
      out{tlm_utils::simple_initiator_socket_tagged<Link>("out_ab"),
          tlm_utils::simple_initiator_socket_tagged<Link>("out_ba")},
      cfg_(cfg),
      rate_(cfg) {
  for (int d = 0; d < 2; ++d) {
    in[d].register_nb_transport_fw(this, &Link::forward, d);
    out[d].register_nb_transport_bw(this, &Link::backward, d);
  }
}

tlm::tlm_sync_enum Link::forward(int direction, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                 sc_core::sc_time& delay) {
  const FabricExt& e = PayloadPool::ext(gp);
  if (e.kind == FabricExt::Kind::packet && !taps_.empty()) {
    const sc_core::sc_time leaves = sc_core::sc_time_stamp() + delay;
    for (LinkTap* t : taps_) t->on_packet(direction, leaves, *e.packet);
  }
  sc_core::sc_time arrive = delay + rate_.propagation();
  return out[direction]->nb_transport_fw(gp, phase, arrive);
}

tlm::tlm_sync_enum Link::backward(int direction, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                  sc_core::sc_time& delay) {
  sc_core::sc_time arrive = delay + rate_.propagation();
  return in[direction]->nb_transport_bw(gp, phase, arrive);
}

}  // namespace ibvp::link
