#pragma once
// Parameter declarations of the host side: host memory (HostMemoryConfig) and the host bus
// (HostBusConfig), with defaults for a PCIe Gen3 x16 slot, where current 4X HCAs sit.
#include "models/host/host_bus.h"
#include "models/host/host_memory.h"
#include "models/sim/params.h"

namespace ibvp::host {

const sim::ParamGroup& host_memory_params();  // HostMemoryConfig
const sim::ParamGroup& host_bus_params();     // HostBusConfig

// The combinations a range cannot express: a PCIe link width (x1, x2, x4, x8, x12, x16,
// x32) and power-of-two payload and read request sizes (the Device Control register
// encodes 128 << n). Throws sim::ParamError keyed relative to the bus's group.
void check_host_bus(const HostBusConfig& cfg);

}  // namespace ibvp::host
