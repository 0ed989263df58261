#include "platform/driver/host_node.h"

#include "platform/driver/firmware_location.h"

namespace ibvp::driver {

std::string default_firmware_image() {
#ifdef IBVP_FW_DEFAULT_IMAGE
  return locate_default_firmware(IBVP_FW_DEFAULT_IMAGE).path;
#else
  return locate_default_firmware("").path;
#endif
}

hca::HcaConfig HostNodeConfig::default_hca() {
  hca::HcaConfig c;
  c.firmware_image = default_firmware_image();
  return c;
}

HostNode::HostNode(sc_core::sc_module_name name, uint32_t node, uint16_t lid, const HostNodeConfig& cfg,
                   const link::LinkRate& rate, ib::PacketPool& packets, link::PayloadPool& payloads,
                   sim::Probe& probe)
    : sc_core::sc_module(name),
      memory("memory", cfg.memory),
      cpu("cpu", memory, cfg.cpu),
      bus("bus", cfg.bus),
      hca("hca", node, lid, cfg.hca, rate, packets, payloads, probe) {
  hca.dma.bind(bus.dma_in);
  bus.mem_out.bind(cpu.dma_in);
  cpu.mem_out.bind(memory.socket);
  cpu.mmio.bind(bus.mmio_in);
  bus.mmio_out.bind(hca.registers);
}

}  // namespace ibvp::driver
