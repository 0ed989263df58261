// The HCA's subnet management agent (IBA 14.2, 14.2.5): the firmware's answer to the
// SubnMgt class on QP0, LID-routed (0x01) and directed route (0x81). It serves Get and Set
// of NodeInfo, NodeDescription, PortInfo, P_KeyTable, SLtoVLMappingTable and
// VLArbitrationTable for the CA's one port, reading and setting the port through the HAL's
// registers (GUIDs, LID, LMC, PortState, SL2VL, VLArb); other attributes get GetResp with
// status UnsupportedAttribute. The MAD bytes are the codec's (models/ib/mad.h).
#pragma once

#include <cstdint>

#include "firmware/hal/ibvp_hal.h"
#include "models/ib/mad.h"

namespace ibvp::fw {

class Sma {
 public:
  // `sl2vl`: the firmware's copy of the port's SL to VL table, kept equal to the hardware's
  // when an SLtoVLMappingTable Set changes it.
  Sma(const ibvp_hal* hal, uint8_t (&sl2vl)[16]);

  // Whether the SMA answers this request (a Get or Set of the SubnMgt classes that is not
  // SMInfo, which is the SM's: IBA 14.4.1).
  static bool serves(const ib::mad::MadHeader& h);
  // The GetResp to `request` (IBA 14.2.2: the D bit and paths of a directed-route one are the
  // codec's make_response), with its data filled. The caller routes it.
  ib::mad::Smp answer(const ib::mad::Smp& request);

 private:
  uint16_t get(const ib::mad::Smp& req, ib::mad::SmpData& out);
  uint16_t set(const ib::mad::Smp& req, ib::mad::SmpData& out);
  ib::mad::PortInfo port_info();
  uint16_t set_port_info(const ib::mad::PortInfo& in);
  ib::mad::VlArbBlock vlarb_block(uint8_t block);
  uint32_t reg(uint32_t offset) { return hal_->reg_read(c_, offset); }
  void reg_write(uint32_t offset, uint32_t v) { hal_->reg_write(c_, offset, v); }

  const ibvp_hal* hal_;
  void* c_;
  uint8_t (&sl2vl_)[16];
  uint32_t data_vls_;
  // PortInfo fields the SM sets and the hardware does not use (IBA 14.2.5.6): kept here.
  uint64_t gid_prefix_ = 0xFE80000000000000ULL;  // the link-local prefix until the SM sets one
  uint16_t master_sm_lid_ = 0;
  uint8_t master_sm_sl_ = 0;
  uint16_t m_key_lease_period_ = 0;
  uint8_t subnet_timeout_ = 0;
  uint8_t neighbor_mtu_ = 5;  // 4096
  uint8_t operational_vls_ = 0;  // VLCap encoding; 0 here: set to the port's VLCap at start
  uint8_t hoq_life_ = 31;      // IBA 18.2.5.4: codes above 19 are infinite
  uint8_t vl_stall_count_ = 7;
  uint16_t p_keys_[ib::mad::PKeyBlock::kEntries] = {0xFFFF};  // the default partition, full member
};

}  // namespace ibvp::fw
