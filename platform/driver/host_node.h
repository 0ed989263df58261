#pragma once
// A host with an HCA, assembled: host memory, the host CPU (cores and uncore), the PCIe
// host bus and the HCA, bound as models/host/README.md and models/hca/hca.h describe:
//
//   hca.dma ─► bus.dma_in   bus.mem_out ─► cpu.dma_in   cpu.mem_out ─► memory.socket
//   cpu.mmio ─► bus.mmio_in   bus.mmio_out ─► hca.registers
//
// The HCA's fabric sockets (hca.tx, hca.rx) are left for the builder to cable.
#include <cstdint>
#include <string>
#include <systemc>

#include "models/hca/hca.h"
#include "models/host/host_bus.h"
#include "models/host/host_cpu.h"
#include "models/host/host_memory.h"

namespace ibvp::driver {

// The default firmware image: $IBVP_FIRMWARE_DIR's, the installed package's, or this
// build's (firmware/CMakeLists.txt), in that order (firmware_location.h); "" if none.
std::string default_firmware_image();

struct HostNodeConfig {
  host::HostMemoryConfig memory;
  host::HostBusConfig bus;
  host::HostCpuConfig cpu;
  hca::HcaConfig hca = default_hca();

  // HcaConfig defaults with this build's default firmware image.
  static hca::HcaConfig default_hca();
};

class HostNode : public sc_core::sc_module {
 public:
  HostNode(sc_core::sc_module_name name, uint32_t node, uint16_t lid, const HostNodeConfig& cfg,
           const link::LinkRate& rate, ib::PacketPool& packets, link::PayloadPool& payloads, sim::Probe& probe);

  host::HostMemory memory;
  host::HostCpu cpu;
  host::HostBus bus;
  hca::Hca hca;
};

}  // namespace ibvp::driver
