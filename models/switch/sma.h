#pragma once
// The switch's subnet management agent (IBA 14.2, 14.3): it answers the SMPs that reach
// management port 0 with a GetResp, reading and writing the switch's own tables. So an SM
// that programs the fabric in band (an LFT block Set) changes the same Lft, Mft, SL2VL and
// VLArb tables the builder loads out of band, and the data packets follow them.
//
// Attributes (IBA 14.2.5): NodeInfo, NodeDescription (Get); SwitchInfo, PortInfo,
// LinearForwardingTable, MulticastForwardingTable, SLtoVLMappingTable,
// VLArbitrationTable, P_KeyTable (Get, Set). Anything else is answered with status 0x000C,
// "method/attribute combination not supported" (IBA 13.4.7, Table 112).
//
// What is abstracted: M_Key checking (the M_Key is kept and reported, never enforced), P_Key
// enforcement (the tables are kept; SwitchInfo says PartitionEnforcementCap 0), and link
// training: a Set of PortState Down takes the port down and it trains back to Init at once
// (the response shows Down). The peer of a port does not see that change. A cable that a
// scenario link event takes down is seen at both ends, and raises Trap 128 (switch_sma.cpp).
// The transport side (which SMPs reach the agent, directed-route forwarding, timing) is
// the Switch's (switch_sma.cpp); this class only computes answers.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/ib/mad.h"

namespace ibvp::sw {

class Switch;

// What a switch tells an SM about itself, from the topology at build time
// (platform/topology: node_guid, port_guid, node_description, lid, lmc).
struct SwitchIdentity {
  uint64_t node_guid = 0;
  uint64_t system_image_guid = 0;  // 0: the node GUID
  std::string description;
  uint16_t lid = 0;  // of management port 0
  uint8_t lmc = 0;
};

class Sma {
 public:
  explicit Sma(Switch& sw);
  void set_identity(const SwitchIdentity& id);
  const SwitchIdentity& identity() const { return id_; }
  uint16_t lid() const { return port_info_[0].lid; }
  // Where traps go and how often they are resent (PortInfo of port 0 as the SM set it):
  // MasterSMLID (0: no SM has said, no trap is sent) and SubnetTimeout (IBA 14.2.5.6).
  uint16_t master_sm_lid() const { return port_info_[0].master_sm_lid; }
  uint8_t subnet_timeout() const { return port_info_[0].subnet_timeout; }
  // A port changed state by itself (a link event): SwitchInfo:PortStateChange (IBA 14.2.5.4).
  void note_port_state_change() { port_state_change_ = true; }

  // The GetResp to `request`, a Get or Set that arrived on `in_port`; nothing for a
  // response, a TrapRepress or a class this agent does not serve on QP0.
  std::optional<ib::mad::Smp> answer(const ib::mad::Smp& request, uint16_t in_port);

 private:
  using Data = ib::mad::SmpData;
  // Each returns the MAD status; a Get fills `d`, a Set reads it and fills it with the
  // attribute as it is afterwards.
  uint16_t node_info(Data& d, uint16_t in_port) const;
  uint16_t node_description(Data& d) const;
  uint16_t switch_info(bool set, Data& d);
  uint16_t port_info(bool set, uint32_t modifier, Data& d, uint16_t in_port);
  uint16_t lft(bool set, uint32_t modifier, Data& d);
  uint16_t mft(bool set, uint32_t modifier, Data& d);
  uint16_t sl2vl(bool set, uint32_t modifier, Data& d);
  uint16_t vlarb(bool set, uint32_t modifier, Data& d);
  uint16_t pkey(bool set, uint32_t modifier, Data& d);
  // PortInfo of `port` as now: the stored fields and the switch's live state.
  ib::mad::PortInfo current_port_info(uint16_t port, uint16_t in_port) const;
  uint16_t set_port_state(uint16_t port, uint8_t state);

  Switch& sw_;
  SwitchIdentity id_;
  std::vector<ib::mad::PortInfo> port_info_;  // [port]: the fields an SM sets and reads back
  std::vector<ib::mad::PKeyBlock> pkeys_;     // [port]: one block of 32 P_Keys
  std::optional<uint16_t> linear_fdb_top_;    // as an SM set it; else the LFT's size
  bool port_state_change_ = false;
};

}  // namespace ibvp::sw
