#pragma once
// How packets and credits cross a cable as TLM-2.0 transactions.
//
// A packet: nb_transport_fw(BEGIN_REQ) on the sender's port, annotated with the delay until
// its header is on the receiver's side of the cable. The tail follows `duration` later; the
// duration travels in the extension, so one call per packet per hop carries both ends (a
// separate END_REQ call would double the kernel work without adding information).
// A credit update: nb_transport_bw(BEGIN_RESP) back along the same cable, telling the sender
// that `blocks` 64-byte blocks of VL `vl` were freed in the receiver's buffer. It stands for
// the IBA flow-control packet (FCCL update), whose bytes models/ib/wire.h can produce.
//
// Payloads are pooled (PayloadPool) and never copied per hop.
#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "models/ib/packet.h"

namespace ibvp::link {

struct FabricExt : tlm::tlm_extension<FabricExt> {
  enum class Kind : uint8_t { packet, credit } kind = Kind::packet;
  ib::Packet* packet = nullptr;
  sc_core::sc_time duration;  // head-to-tail time on this cable
  uint8_t vl = 0;             // credit update: which VL
  uint32_t blocks = 0;        // credit update: blocks freed

  tlm::tlm_extension_base* clone() const override { return new FabricExt(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const FabricExt&>(other);
  }
};

class PayloadPool : public tlm::tlm_mm_interface {
 public:
  PayloadPool() = default;
  PayloadPool(const PayloadPool&) = delete;
  PayloadPool& operator=(const PayloadPool&) = delete;
  ~PayloadPool() override;

  // A payload with reference count 1 and its FabricExt attached.
  tlm::tlm_generic_payload* acquire();
  void free(tlm::tlm_generic_payload* gp) override;

  static FabricExt& ext(tlm::tlm_generic_payload& gp);

  // A packet onto a cable through the sender's initiator socket: BEGIN_REQ, its head on the
  // receiver's side of the cable at the annotated delay (0: the cable adds it), its tail
  // `duration_ps` later.
  template <class InitiatorSocket>
  void send_packet(InitiatorSocket& tx, ib::Packet* p, uint64_t duration_ps) {
    tlm::tlm_generic_payload* gp = acquire();
    FabricExt& e = ext(*gp);
    e.kind = FabricExt::Kind::packet;
    e.packet = p;
    e.duration = sc_core::sc_time::from_value(duration_ps);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    tx->nb_transport_fw(*gp, phase, delay);
    gp->release();
  }

  // A credit update back along a cable through the receiver's target socket: BEGIN_RESP,
  // `blocks` freed on VL `vl`, counted by the sender from `delay_ps` from now (annotated
  // timing) plus the cable's delay.
  template <class TargetSocket>
  void send_credit(TargetSocket& rx, uint8_t vl, uint32_t blocks, uint64_t delay_ps) {
    tlm::tlm_generic_payload* gp = acquire();
    FabricExt& e = ext(*gp);
    e.kind = FabricExt::Kind::credit;
    e.vl = vl;
    e.blocks = blocks;
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time delay = sc_core::sc_time::from_value(delay_ps);
    rx->nb_transport_bw(*gp, phase, delay);
    gp->release();
  }

 private:
  std::vector<tlm::tlm_generic_payload*> free_;
  std::vector<tlm::tlm_generic_payload*> all_;
};

}  // namespace ibvp::link
