#pragma once
// What the ibsim control queries answer for an HCA host of the topology: the NodeInfo and
// PortInfo attributes (IBA 14.2.5.3, 14.2.5.6) as their 64-byte MAD data, the P_Key table
// (10.9.1.2) and the vendor record. libumad2sim turns them into the /sys/class/infiniband
// files that libibumad, OpenSM and infiniband-diags read before their first MAD, so the
// GUIDs and LID must be the ones the fabric's SMAs give (platform/topology node_guid and
// port_guid).
#include <array>
#include <cstdint>

#include "platform/topology/topology.h"
#include "platform/umad/sim_wire.h"

namespace ibvp::umad {

using AttributeBytes = std::array<uint8_t, kCtlDataBytes>;

// IBA 4.1.1: the default GID prefix of a subnet no SM has configured.
constexpr uint64_t kDefaultGidPrefix = 0xFE80000000000000ull;

// The port's state as the host's driver sees it (IBA 14.2.5.6 PortState, PortPhysicalState).
// ibvp's out-of-band subnet manager has already assigned LIDs and loaded the forwarding
// tables when a server starts, so a cabled port is Active and LinkUp until an in-band SMA
// tells otherwise.
struct PortStatus {
  uint16_t lid = 0;
  uint8_t lmc = 0;
  uint16_t sm_lid = 0;
  uint8_t state = 4;       // 1 Down, 2 Init, 3 Armed, 4 Active
  uint8_t phys_state = 5;  // 5 LinkUp, 3 Disabled, 2 Polling
  uint32_t capability_mask = 0;
};

// The status of endpoint `node`'s CA port 1 from the topology (LID, LMC; Active when cabled).
// A served fabric (serve.cpp) reads LID, LMC and PortState from the HCA's SMA instead.
PortStatus topology_port_status(const topo::Topology& t, uint32_t node);

// NodeInfo of endpoint `node` (a CA with one port, answering on port 1).
AttributeBytes node_info(const topo::Topology& t, uint32_t node);
// PortInfo of endpoint `node`'s port 1: LID, LMC, state, width and speed of its cable.
AttributeBytes port_info(const topo::Topology& t, uint32_t node, const PortStatus& status);
// The P_Key table's first 32 entries, big-endian: the default full-membership key 0xFFFF
// (IBA 10.9.1.2) and empty slots.
AttributeBytes pkey_table();
SimVendor vendor_record();

}  // namespace ibvp::umad
