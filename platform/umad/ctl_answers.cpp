#include "platform/umad/ctl_answers.h"

namespace ibvp::umad {

namespace {

void put8(AttributeBytes& a, size_t at, uint8_t v) { a[at] = v; }
void put16(AttributeBytes& a, size_t at, uint16_t v) {
  a[at] = static_cast<uint8_t>(v >> 8);
  a[at + 1] = static_cast<uint8_t>(v);
}
void put24(AttributeBytes& a, size_t at, uint32_t v) {
  a[at] = static_cast<uint8_t>(v >> 16);
  put16(a, at + 1, static_cast<uint16_t>(v));
}
void put32(AttributeBytes& a, size_t at, uint32_t v) {
  put16(a, at, static_cast<uint16_t>(v >> 16));
  put16(a, at + 2, static_cast<uint16_t>(v));
}
void put64(AttributeBytes& a, size_t at, uint64_t v) {
  put32(a, at, static_cast<uint32_t>(v >> 32));
  put32(a, at + 4, static_cast<uint32_t>(v));
}

constexpr uint32_t kIsExtendedSpeedsSupported = 1u << 14;  // CapabilityMask bit 14

}  // namespace

PortStatus topology_port_status(const topo::Topology& t, uint32_t node) {
  PortStatus s;
  const topo::Node& n = t.nodes.at(node);
  s.lid = n.lid;
  s.lmc = n.lmc;
  if (t.link_at(node, 1) < 0) {
    s.state = 1;
    s.phys_state = 2;
  }
  return s;
}

AttributeBytes node_info(const topo::Topology& t, uint32_t node) {
  AttributeBytes a{};
  put8(a, 0, 1);                                       // BaseVersion
  put8(a, 1, 1);                                       // ClassVersion (SMP)
  put8(a, 2, 1);                                       // NodeType: channel adapter
  put8(a, 3, 1);                                       // NumPorts
  put64(a, 4, topo::node_guid(t, node));               // SystemImageGUID
  put64(a, 12, topo::node_guid(t, node));              // NodeGUID
  put64(a, 20, topo::port_guid(t, node));              // PortGUID
  put16(a, 28, 32);                                    // PartitionCap: the table pkey_table fills
  put16(a, 30, 0);                                     // DeviceID
  put32(a, 32, 0);                                     // Revision
  put8(a, 36, 1);                                      // LocalPortNum: the port the query came in on
  put24(a, 37, 0);                                     // VendorID
  return a;
}

AttributeBytes port_info(const topo::Topology& t, uint32_t node, const PortStatus& s) {
  AttributeBytes a{};
  link::LinkConfig cable;
  if (const int l = t.link_at(node, 1); l >= 0) cable = t.links.at(static_cast<size_t>(l)).cfg;
  uint8_t speed = 0, speed_ext = 0;
  uint32_t capability = s.capability_mask;
  link::port_info_speed_codes(cable.speed, speed, speed_ext);  // FDR10 shows as QDR
  if (speed_ext) capability |= kIsExtendedSpeedsSupported;
  put64(a, 0, 0);                                // M_Key
  put64(a, 8, kDefaultGidPrefix);                // GidPrefix
  put16(a, 16, s.lid);                           // LID
  put16(a, 18, s.sm_lid);                        // MasterSMLID
  put32(a, 20, capability);                      // CapabilityMask
  put8(a, 28, 1);                                // LocalPortNum
  put8(a, 29, link::port_info_width_code(cable.width));          // LinkWidthEnabled
  put8(a, 30, link::port_info_width_code(cable.width));          // LinkWidthSupported
  put8(a, 31, link::port_info_width_code(cable.width));          // LinkWidthActive
  put8(a, 32, static_cast<uint8_t>(speed << 4 | (s.state & 0xF)));       // LinkSpeedSupported, PortState
  put8(a, 33, static_cast<uint8_t>((s.phys_state & 0xF) << 4 | 2));      // PortPhysicalState, LinkDownDefault: Polling
  put8(a, 34, static_cast<uint8_t>(s.lmc & 0x7));                        // M_KeyProtectBits 0, LMC
  put8(a, 35, static_cast<uint8_t>(speed << 4 | speed));                 // LinkSpeedActive, LinkSpeedEnabled
  put8(a, 36, static_cast<uint8_t>(5 << 4));     // NeighborMTU 4096, MasterSMSL 0
  put8(a, 37, static_cast<uint8_t>(4 << 4));     // VLCap: VL0-VL7
  put8(a, 41, 5);                                // MTUCap 4096
  put8(a, 43, static_cast<uint8_t>(4 << 4));     // OperationalVLs
  put8(a, 62, static_cast<uint8_t>(speed_ext << 4 | speed_ext));         // LinkSpeedExtActive, Supported
  put8(a, 63, speed_ext);                        // LinkSpeedExtEnabled
  return a;
}

AttributeBytes pkey_table() {
  AttributeBytes a{};
  put16(a, 0, 0xFFFF);
  return a;
}

SimVendor vendor_record() {
  SimVendor v{};
  v.fw_ver = 1;
  return v;
}

}  // namespace ibvp::umad
