#pragma once
// A cable between two ports: full duplex, each direction delaying what crosses it by the
// propagation time. Serialization is the sender's business (its port knows the rate and is
// busy while it sends); the cable only carries heads, tails and credit updates, and shows
// every packet to its taps (captures, traces) as it leaves the sender.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/passthrough_target_socket.h>
#include <vector>

#include "models/ib/packet.h"
#include "models/link/link_rate.h"

namespace ibvp::link {

// Sees each packet that starts crossing a cable. `direction` 0 is a->b, 1 is b->a.
class LinkTap {
 public:
  virtual ~LinkTap() = default;
  virtual void on_packet(int direction, const sc_core::sc_time& head_leaves, const ib::Packet& p) = 0;
};

class Link : public sc_core::sc_module {
 public:
  // in[d] receives from the sender of direction d; out[d] delivers to its receiver.
  // A passthrough socket spawns no thread (simple_target_socket spawns one per socket that
  // registers only nb_transport_fw: a stack and a guard mapping each, which large fabrics
  // run out of; ../shared/SYSTEMC_NOTES.md).
  tlm_utils::passthrough_target_socket_tagged<Link> in[2];
  tlm_utils::simple_initiator_socket_tagged<Link> out[2];

  Link(sc_core::sc_module_name name, const LinkConfig& cfg);

  const LinkConfig& config() const { return cfg_; }
  const LinkRate& rate() const { return rate_; }
  void add_tap(LinkTap* tap) {
    taps_.push_back(tap);
    if (on_tap_) std::exchange(on_tap_, nullptr)();
  }
  // Called once, when the first tap is added: the builder lets two switches cross a cable
  // nothing watches by direct calls (sw::Switch::set_direct_peer) and turns that off here,
  // so a tap sees every packet.
  void on_first_tap(std::function<void()> f) { on_tap_ = std::move(f); }

 private:
  tlm::tlm_sync_enum forward(int direction, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                             sc_core::sc_time& delay);
  tlm::tlm_sync_enum backward(int direction, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                              sc_core::sc_time& delay);

  LinkConfig cfg_;
  LinkRate rate_;
  std::vector<LinkTap*> taps_;
  std::function<void()> on_tap_;
};

}  // namespace ibvp::link
