#pragma once
// Management datagrams byte for byte (IBA Vol. 1 ch. 13.4, 14.2, 16.1): the common MAD
// header, subnet management packets (LID-routed and directed-route), performance management
// GMPs, and the attributes the switch and HCA agents answer. Every encode writes the exact
// big-endian bytes of the specification, every decode reads them; reserved bits are written
// as zero and ignored when read.
//
// Only the C++ standard library: the HCA firmware image compiles this file in, and the
// umad server reads the same bytes real OpenSM sends.
#include <array>
#include <cstdint>
#include <string>

#include "models/ib/mad_datagram.h"

namespace ibvp::ib::mad {

using Bytes = std::array<uint8_t, kMadBytes>;
constexpr size_t kSmpDataBytes = 64;   // IBA 14.2.1.1: SMP data field
constexpr size_t kGmpDataBytes = 192;  // IBA 16.1.1: PerfMgt data after 40 reserved bytes
constexpr size_t kMaxHops = 64;        // IBA 14.2.1.2: InitialPath/ReturnPath entries
using SmpData = std::array<uint8_t, kSmpDataBytes>;
using GmpData = std::array<uint8_t, kGmpDataBytes>;
using Path = std::array<uint8_t, kMaxHops>;

// ---- big-endian fields (also for agents that read single fields) -----------------------
inline void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8); p[1] = uint8_t(v); }
inline void put32(uint8_t* p, uint32_t v) { put16(p, uint16_t(v >> 16)); put16(p + 2, uint16_t(v)); }
inline void put64(uint8_t* p, uint64_t v) { put32(p, uint32_t(v >> 32)); put32(p + 4, uint32_t(v)); }
inline uint16_t get16(const uint8_t* p) { return uint16_t((p[0] << 8) | p[1]); }
inline uint32_t get32(const uint8_t* p) { return (uint32_t{get16(p)} << 16) | get16(p + 2); }
inline uint64_t get64(const uint8_t* p) { return (uint64_t{get32(p)} << 32) | get32(p + 4); }

// ---- common header (IBA 13.4.2, 13.4.5 to 13.4.7) ------------------------------------

constexpr uint8_t kBaseVersion = 1;
constexpr uint8_t kSmpClassVersion = 1;
constexpr uint8_t kPerfClassVersion = 1;

// MgmtClass (IBA 13.4.4, Table 110).
constexpr uint8_t kClassSubnLid = 0x01;       // SubnMgt, LID-routed
constexpr uint8_t kClassPerfMgt = 0x04;       // PerfMgt
constexpr uint8_t kClassSubnDirected = 0x81;  // SubnMgt, directed route

// Method (IBA 13.4.5, Table 111); the top bit is R, set in responses.
constexpr uint8_t kMethodGet = 0x01;
constexpr uint8_t kMethodSet = 0x02;
constexpr uint8_t kMethodSend = 0x03;
constexpr uint8_t kMethodTrap = 0x05;
constexpr uint8_t kMethodReport = 0x06;
constexpr uint8_t kMethodTrapRepress = 0x07;
constexpr uint8_t kMethodGetResp = 0x81;
constexpr uint8_t kMethodReportResp = 0x86;
constexpr uint8_t kMethodResponseBit = 0x80;

// Status (IBA 13.4.7, Table 112): bits 0 to 4 are common to all classes; bits 2..4 hold one
// InvalidField code. Directed-route SMPs carry the D bit in bit 15 (IBA 14.2.1.2).
constexpr uint16_t kStatusOk = 0x0000;
constexpr uint16_t kStatusBusy = 0x0001;
constexpr uint16_t kStatusRedirect = 0x0002;
constexpr uint16_t kStatusBadVersion = 0x0004;           // class or base version unsupported
constexpr uint16_t kStatusUnsupportedMethod = 0x0008;
constexpr uint16_t kStatusUnsupportedAttribute = 0x000C;  // method/attribute combination
constexpr uint16_t kStatusInvalidField = 0x001C;          // attribute or modifier value invalid
constexpr uint16_t kStatusDirection = 0x8000;            // D bit of a directed-route SMP

// AttributeID (IBA 14.2.5, Table 145; 16.1.3, Table 213).
constexpr uint16_t kAttrClassPortInfo = 0x0001;
constexpr uint16_t kAttrNotice = 0x0002;
constexpr uint16_t kAttrNodeDescription = 0x0010;
constexpr uint16_t kAttrNodeInfo = 0x0011;
constexpr uint16_t kAttrSwitchInfo = 0x0012;
constexpr uint16_t kAttrGuidInfo = 0x0014;
constexpr uint16_t kAttrPortInfo = 0x0015;
constexpr uint16_t kAttrPKeyTable = 0x0016;
constexpr uint16_t kAttrSlToVlMappingTable = 0x0017;
constexpr uint16_t kAttrVlArbitrationTable = 0x0018;
constexpr uint16_t kAttrLinearForwardingTable = 0x0019;
constexpr uint16_t kAttrRandomForwardingTable = 0x001A;
constexpr uint16_t kAttrMulticastForwardingTable = 0x001B;
constexpr uint16_t kAttrSmInfo = 0x0020;
constexpr uint16_t kAttrPortCounters = 0x0012;  // PerfMgt class (same number as SwitchInfo)

struct MadHeader {
  uint8_t base_version = kBaseVersion;
  uint8_t mgmt_class = 0;
  uint8_t class_version = 1;
  uint8_t method = 0;  // R bit (0x80) and the 7-bit method, as one byte on the wire
  uint16_t status = 0;
  uint16_t class_specific = 0;
  uint64_t transaction_id = 0;
  uint16_t attribute_id = 0;
  uint32_t attribute_modifier = 0;

  bool response() const { return (method & kMethodResponseBit) != 0; }
};
void encode(const MadHeader& h, Bytes& b);  // bytes 0..23; bytes 22..23 reserved
MadHeader decode_header(const Bytes& b);

// ---- SMPs (IBA 14.2.1) -----------------------------------------------------------------

// One struct for both layouts. LID-routed (class 0x01, 14.2.1.1): M_Key, 32 reserved bytes,
// data, 128 reserved bytes. Directed route (class 0x81, 14.2.1.2): M_Key, DrSLID, DrDLID,
// 28 reserved bytes, data, InitialPath, ReturnPath; Status bit 15 is D (0 outgoing,
// 1 returning), and ClassSpecific holds HopPointer (byte 6) and HopCount (byte 7).
struct Smp {
  MadHeader hdr;
  uint64_t m_key = 0;
  uint16_t dr_slid = kPermissiveLid;
  uint16_t dr_dlid = kPermissiveLid;
  SmpData data{};
  Path initial_path{};
  Path return_path{};

  bool directed() const { return hdr.mgmt_class == kClassSubnDirected; }
  bool returning() const { return directed() && (hdr.status & kStatusDirection) != 0; }
  // The status without the D bit of a directed-route SMP.
  uint16_t status_code() const { return directed() ? hdr.status & ~kStatusDirection : hdr.status; }
  uint8_t hop_pointer() const { return static_cast<uint8_t>(hdr.class_specific >> 8); }
  uint8_t hop_count() const { return static_cast<uint8_t>(hdr.class_specific & 0xFF); }
  void set_hop_pointer(uint8_t p) { hdr.class_specific = static_cast<uint16_t>((hdr.class_specific & 0x00FF) | (p << 8)); }
  void set_hop_count(uint8_t c) { hdr.class_specific = static_cast<uint16_t>((hdr.class_specific & 0xFF00) | c); }
};
void encode(const Smp& s, Bytes& b);
Smp decode_smp(const Bytes& b);

// A Get or Set SMP as a manager builds it. Directed route: `path` lists the output port at
// each hop, path[0] the sending CA's port (InitialPath[1..n], n = path size, up to 63);
// HopPointer starts at 0 and DrSLID/DrDLID are permissive (IBA 14.2.2.1).
Smp make_directed_smp(uint8_t method, uint16_t attribute_id, uint32_t attribute_modifier, uint64_t tid,
                      const uint8_t* path, size_t hops);
Smp make_lid_routed_smp(uint8_t method, uint16_t attribute_id, uint32_t attribute_modifier, uint64_t tid);

// The response to `request` (IBA 13.4.5, 14.2.2): GetResp with `status`; a directed-route
// one gets the D bit and keeps HopPointer, HopCount and both paths. The data is the
// request's until the agent writes its own.
Smp make_response(const Smp& request, uint16_t status);

// ---- directed-route forwarding (IBA 14.2.2) -----------------------------------------------

// Where a node's SMI sends a directed-route SMP next.
enum class DrRoute : uint8_t {
  discard,  // the SMP breaks a rule of 14.2.2 (bad hop pointer, a CA asked to forward)
  local,    // to this node's SMA (outgoing) or SM (returning)
  port,     // out of `port` of this switch (the directed-route part)
  lid,      // routed by LID `lid`: the last LID-routed part (DrDLID outgoing, DrSLID returning)
};
struct DrHop {
  DrRoute route = DrRoute::discard;
  uint8_t port = 0;
  uint16_t lid = 0;
};

// A directed-route SMP received on `in_port` of a node with `num_ports` ports (a switch
// counts its external ports): updates HopPointer and ReturnPath as the receiving and the
// sending SMI do (outgoing IBA 14.2.2.2 C14-9, returning 14.2.2.4 C14-13) and says where it
// goes. Outgoing at the end of the path (HopPointer = HopCount) it records the port,
// steps HopPointer to HopCount + 1 and is for this node when DrDLID is permissive.
DrHop dr_receive(Smp& s, bool is_switch, uint8_t in_port, uint8_t num_ports);
// The first hop of a directed-route SMP this node sends: a request (D clear, HopPointer 0:
// out of InitialPath[1]) or a response its agent made (D set, HopPointer = HopCount + 1:
// out of ReturnPath[HopCount]). HopCount 0 addresses the sending node itself (local).
DrHop dr_originate(Smp& s);

// ---- PerfMgt GMPs (IBA 16.1.1) ----------------------------------------------------------

// Common header, 40 reserved bytes, 192 data bytes.
struct PerfMad {
  MadHeader hdr;
  GmpData data{};
};
void encode(const PerfMad& m, Bytes& b);
PerfMad decode_perf(const Bytes& b);

// ---- attributes (IBA 14.2.5; 16.1.3; 13.4.8.1) ------------------------------------------
// Each: encode into / decode from its class's data field. Field names follow the spec.

enum NodeType : uint8_t { kNodeCa = 1, kNodeSwitch = 2, kNodeRouter = 3 };

struct NodeInfo {  // IBA 14.2.5.3, 40 bytes
  uint8_t base_version = kBaseVersion;
  uint8_t class_version = kSmpClassVersion;
  uint8_t node_type = 0;
  uint8_t num_ports = 0;
  uint64_t system_image_guid = 0;
  uint64_t node_guid = 0;
  uint64_t port_guid = 0;
  uint16_t partition_cap = 0;
  uint16_t device_id = 0;
  uint32_t revision = 0;
  uint8_t local_port_num = 0;
  uint32_t vendor_id = 0;  // 24 bits

  void encode(SmpData& d) const;
  static NodeInfo decode(const SmpData& d);
};

struct NodeDescription {  // IBA 14.2.5.2: 64 bytes of UTF-8, NUL padded
  std::string text;       // at most 64 bytes are carried

  void encode(SmpData& d) const;
  static NodeDescription decode(const SmpData& d);
};

struct SwitchInfo {  // IBA 14.2.5.4, 20 bytes
  uint16_t linear_fdb_cap = 0;
  uint16_t random_fdb_cap = 0;
  uint16_t multicast_fdb_cap = 0;
  uint16_t linear_fdb_top = 0;
  uint8_t default_port = 0;
  uint8_t default_multicast_primary_port = 0;
  uint8_t default_multicast_not_primary_port = 0;
  uint8_t life_time_value = 0;          // 5 bits
  bool port_state_change = false;       // 1 bit; a Set with 1 clears it (IBA 14.2.5.4)
  uint8_t optimized_sl2vl_programming = 0;  // 2 bits
  uint16_t lids_per_port = 0;
  uint16_t partition_enforcement_cap = 0;
  bool inbound_enforcement_cap = false;
  bool outbound_enforcement_cap = false;
  bool filter_raw_inbound_cap = false;
  bool filter_raw_outbound_cap = false;
  bool enhanced_port0 = false;
  uint16_t multicast_fdb_top = 0;

  void encode(SmpData& d) const;
  static SwitchInfo decode(const SmpData& d);
};

// PortInfo:PortState (IBA 14.2.5.6, Table 155); 0 in a Set means no change.
enum PortState : uint8_t { kPortNoChange = 0, kPortDown = 1, kPortInit = 2, kPortArmed = 3, kPortActive = 4 };
// PortInfo:PortPhysicalState; 0 in a Set means no change.
enum PortPhysState : uint8_t {
  kPhysNoChange = 0, kPhysSleep = 1, kPhysPolling = 2, kPhysDisabled = 3,
  kPhysConfigurationTraining = 4, kPhysLinkUp = 5, kPhysLinkErrorRecovery = 6, kPhysPhyTest = 7,
};

// PortInfo:VLCap and OperationalVLs for a port with `data_vls` data VLs (IBA 14.2.5.6):
// 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7, 5 VL0-14. Every SMA reports its port with it.
constexpr uint8_t vl_cap_code(uint32_t data_vls) {
  return data_vls <= 1 ? 1 : data_vls <= 2 ? 2 : data_vls <= 4 ? 3 : data_vls <= 8 ? 4 : 5;
}

struct PortInfo {  // IBA 14.2.5.6, 64 bytes
  uint64_t m_key = 0;
  uint64_t gid_prefix = 0;
  uint16_t lid = 0;
  uint16_t master_sm_lid = 0;
  uint32_t capability_mask = 0;
  uint16_t diag_code = 0;
  uint16_t m_key_lease_period = 0;
  uint8_t local_port_num = 0;
  uint8_t link_width_enabled = 0;    // bit mask: 1 1x, 2 4x, 4 8x, 8 12x
  uint8_t link_width_supported = 0;
  uint8_t link_width_active = 0;
  uint8_t link_speed_supported = 0;  // 4 bits: 1 SDR, 2 DDR, 4 QDR
  uint8_t port_state = 0;            // 4 bits, PortState
  uint8_t port_phys_state = 0;       // 4 bits, PortPhysState
  uint8_t link_down_default_state = 0;  // 4 bits
  uint8_t m_key_protect_bits = 0;    // 2 bits
  uint8_t lmc = 0;                   // 3 bits
  uint8_t link_speed_active = 0;     // 4 bits
  uint8_t link_speed_enabled = 0;    // 4 bits
  uint8_t neighbor_mtu = 0;          // 4 bits: 1 256, 2 512, 3 1024, 4 2048, 5 4096
  uint8_t master_sm_sl = 0;          // 4 bits
  uint8_t vl_cap = 0;                // 4 bits: 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7, 5 VL0-14
  uint8_t init_type = 0;             // 4 bits
  uint8_t vl_high_limit = 0;
  uint8_t vl_arbitration_high_cap = 0;
  uint8_t vl_arbitration_low_cap = 0;
  uint8_t init_type_reply = 0;       // 4 bits
  uint8_t mtu_cap = 0;               // 4 bits
  uint8_t vl_stall_count = 0;        // 3 bits
  uint8_t hoq_life = 0;              // 5 bits, lifetime code (IBA 18.2.5.4)
  uint8_t operational_vls = 0;       // 4 bits, VLCap encoding
  bool partition_enforcement_inbound = false;
  bool partition_enforcement_outbound = false;
  bool filter_raw_inbound = false;
  bool filter_raw_outbound = false;
  uint16_t m_key_violations = 0;
  uint16_t p_key_violations = 0;
  uint16_t q_key_violations = 0;
  uint8_t guid_cap = 0;
  bool client_reregister = false;
  uint8_t multicast_pkey_trap_suppression = 0;  // 2 bits
  uint8_t subnet_timeout = 0;        // 5 bits
  uint8_t resp_time_value = 0;       // 5 bits
  uint8_t local_phy_errors = 0;      // 4 bits
  uint8_t overrun_errors = 0;        // 4 bits
  uint16_t max_credit_hint = 0;
  uint32_t link_round_trip_latency = 0;  // 24 bits
  uint16_t capability_mask2 = 0;
  uint8_t link_speed_ext_active = 0;     // 4 bits
  uint8_t link_speed_ext_supported = 0;  // 4 bits
  uint8_t link_speed_ext_enabled = 0;    // 5 bits

  void encode(SmpData& d) const;
  static PortInfo decode(const SmpData& d);
};

// LinearForwardingTable (IBA 14.2.5.10): 64 ports per block, AttributeModifier = block
// number; entry i is LID 64 * block + i.
struct LftBlock {
  static constexpr uint32_t kEntries = 64;
  std::array<uint8_t, kEntries> port{};

  void encode(SmpData& d) const;
  static LftBlock decode(const SmpData& d);
};

// MulticastForwardingTable (IBA 14.2.5.12): 32 16-bit PortMask words, one per MLID of the
// block, for ports 16 * position .. 16 * position + 15.
struct MftBlock {
  static constexpr uint32_t kEntries = 32;
  std::array<uint16_t, kEntries> port_mask{};

  void encode(SmpData& d) const;
  static MftBlock decode(const SmpData& d);
};
// AttributeModifier of MulticastForwardingTable: bits 31..28 position, 8..0 block (MLIDs
// 0xC000 + 32 * block onwards).
constexpr uint32_t mft_modifier(uint8_t position, uint16_t block) {
  return (uint32_t{position} << 28) | (block & 0x1FFu);
}
constexpr uint8_t mft_position(uint32_t modifier) { return static_cast<uint8_t>(modifier >> 28); }
constexpr uint16_t mft_block(uint32_t modifier) { return static_cast<uint16_t>(modifier & 0x1FF); }

// SLtoVLMappingTable (IBA 14.2.5.8): VL of SL 0..15, two per byte, SL 0 in the high nibble
// of byte 0. A switch's AttributeModifier names input port (bits 15..8) and output port
// (bits 7..0).
struct SlToVlTable {
  std::array<uint8_t, 16> vl{};

  void encode(SmpData& d) const;
  static SlToVlTable decode(const SmpData& d);
};
constexpr uint32_t sl2vl_modifier(uint8_t in_port, uint8_t out_port) {
  return (uint32_t{in_port} << 8) | out_port;
}
// Optimized SLtoVL programming (IBA 1.2.1+, SwitchInfo:OptimizedSLtoVLMappingProgramming):
// bit 17 applies the Set to every input port, bit 16 to every output port (OpenSM's
// osm_qos.c sends 0x30000 for both, 0x20000 | out for one output).
constexpr uint32_t kSl2VlAllInputs = 1u << 17;
constexpr uint32_t kSl2VlAllOutputs = 1u << 16;

// VLArbitrationTable (IBA 14.2.5.9): 32 entries of (VL in the low nibble of the first byte,
// Weight). AttributeModifier: output port in bits 31..16 (switches), block in 15..0:
// 1 low-priority entries 0..31, 2 low 32..63, 3 high 0..31, 4 high 32..63.
struct VlArbEntry {
  uint8_t vl = 0;
  uint8_t weight = 0;
};
struct VlArbBlock {
  static constexpr uint32_t kEntries = 32;
  std::array<VlArbEntry, kEntries> entry{};

  void encode(SmpData& d) const;
  static VlArbBlock decode(const SmpData& d);
};
enum VlArbBlockId : uint8_t { kVlArbLow0 = 1, kVlArbLow32 = 2, kVlArbHigh0 = 3, kVlArbHigh32 = 4 };
constexpr uint32_t vlarb_modifier(uint16_t port, uint8_t block) { return (uint32_t{port} << 16) | block; }

// P_KeyTable (IBA 14.2.5.7): 32 P_Keys per block. AttributeModifier: port in bits 31..16
// (switches), block in 15..0.
struct PKeyBlock {
  static constexpr uint32_t kEntries = 32;
  std::array<uint16_t, kEntries> p_key{};

  void encode(SmpData& d) const;
  static PKeyBlock decode(const SmpData& d);
};
constexpr uint32_t pkey_modifier(uint16_t port, uint16_t block) { return (uint32_t{port} << 16) | block; }

// PerfMgt PortCounters (IBA 16.1.3.5, Table 226), 44 bytes; counters saturate at their
// width. PortXmitWait is the 32-bit word at byte 40 (IBA 1.2.1).
struct PortCounters {
  uint8_t port_select = 0;
  uint16_t counter_select = 0;
  uint16_t symbol_error_counter = 0;
  uint8_t link_error_recovery_counter = 0;
  uint8_t link_downed_counter = 0;
  uint16_t port_rcv_errors = 0;
  uint16_t port_rcv_remote_physical_errors = 0;
  uint16_t port_rcv_switch_relay_errors = 0;
  uint16_t port_xmit_discards = 0;
  uint8_t port_xmit_constraint_errors = 0;
  uint8_t port_rcv_constraint_errors = 0;
  uint8_t counter_select2 = 0;
  uint8_t local_link_integrity_errors = 0;   // 4 bits
  uint8_t excessive_buffer_overrun_errors = 0;  // 4 bits
  uint16_t qp1_dropped = 0;
  uint16_t vl15_dropped = 0;
  uint32_t port_xmit_data = 0;  // in 4-byte words
  uint32_t port_rcv_data = 0;   // in 4-byte words
  uint32_t port_xmit_pkts = 0;
  uint32_t port_rcv_pkts = 0;
  uint32_t port_xmit_wait = 0;

  void encode(GmpData& d) const;
  static PortCounters decode(const GmpData& d);
};

// Notice (IBA 14.2.5.1, Table 119 of 1.2.1 / 1.3's Notice table), the data of a Trap and of
// its TrapRepress: 64 bytes in an SMP (the 16-byte IssuerGID that follows in the SA's
// 80-byte form does not fit the SMP data field). A generic notice (IsGeneric 1) carries
// ProducerType and TrapNumber; a vendor one VendorID and DeviceID in the same bits.
enum NoticeType : uint8_t {
  kNoticeFatal = 0, kNoticeUrgent = 1, kNoticeSecurity = 2, kNoticeSubnMgmt = 3, kNoticeInfo = 4
};
// ProducerType of a generic notice: the NodeType of the node that sends it, 4 for a class
// manager (IBA 14.2.5.1).
constexpr uint32_t kProducerCa = 1, kProducerSwitch = 2, kProducerRouter = 3, kProducerClassManager = 4;
// Trap 128 (IBA 14.3.7 traps table): "Link state of at least one port of switch at
// <LIDADDR> has changed"; Urgent, produced by a switch; DataDetails bytes 0-1: LIDADDR.
constexpr uint16_t kTrapLinkStateChange = 128;
struct Notice {
  bool is_generic = true;
  uint8_t type = 0;              // 7 bits (NoticeType)
  uint32_t producer_type = 0;    // 24 bits; VendorID when !is_generic
  uint16_t trap_number = 0;      // DeviceID when !is_generic
  uint16_t issuer_lid = 0;
  bool notice_toggle = false;
  uint16_t notice_count = 0;     // 15 bits
  std::array<uint8_t, 54> data_details{};

  // Trap 128's DataDetails: LIDADDR, the switch's LID.
  uint16_t lidaddr() const { return get16(&data_details[0]); }
  void set_lidaddr(uint16_t lid) { put16(&data_details[0], lid); }

  void encode(SmpData& d) const;
  static Notice decode(const SmpData& d);
};
// The Trap 128 a switch's SMA sends (IBA 14.2.5.1, 14.3.7): generic, Urgent, ProducerType
// switch, IssuerLID and LIDADDR its LID; LID-routed, method Trap, attribute Notice.
Smp make_link_state_change_trap(uint16_t switch_lid, uint64_t tid);

// ClassPortInfo (IBA 13.4.8.1, Table 117), 72 bytes, for any class's data field.
struct ClassPortInfo {
  uint8_t base_version = kBaseVersion;
  uint8_t class_version = 1;
  uint16_t capability_mask = 0;
  uint32_t capability_mask2 = 0;  // 27 bits
  uint8_t resp_time_value = 0;    // 5 bits
  std::array<uint8_t, 16> redirect_gid{};
  uint8_t redirect_tc = 0;
  uint8_t redirect_sl = 0;         // 4 bits
  uint32_t redirect_fl = 0;        // 20 bits
  uint16_t redirect_lid = 0;
  uint16_t redirect_p_key = 0;
  uint32_t redirect_qp = 0;        // 24 bits
  uint32_t redirect_q_key = 0;
  std::array<uint8_t, 16> trap_gid{};
  uint8_t trap_tc = 0;
  uint8_t trap_sl = 0;             // 4 bits
  uint32_t trap_fl = 0;            // 20 bits
  uint16_t trap_lid = 0;
  uint16_t trap_p_key = 0;
  uint8_t trap_hop_limit = 0;
  uint32_t trap_qp = 0;            // 24 bits
  uint32_t trap_q_key = 0;

  void encode(uint8_t* d) const;  // 72 bytes
  static ClassPortInfo decode(const uint8_t* d);
};

}  // namespace ibvp::ib::mad
