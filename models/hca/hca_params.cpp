#include "models/hca/hca_params.h"

#include <string>

#include "models/link/link_params.h"
#include "models/switch/switch.h"

namespace ibvp::hca {

// Where the defaults come from (see docs/hca.md for the whole list).
// - Port: the CA port of a 4X HCA has the same structure as a switch port; buffers hold four
//   packets of the largest MTU (4096 B payload + headers = 4160 B in 64-byte blocks), one
//   data VL unless the subnet manager enables more, as in the fabric-only endpoint.
// - Core clock 1 GHz, 100 cycles per event, 10 per HAL call: vendors do not publish their
//   HCA processors' clocks or firmware path lengths. These are assumptions of the order of
//   embedded RISC cores in NICs; they are parameters so that studies sweep them.
// - tx/rx pipeline 50 ns each: assumed; header build with CRC and header parse with CRC
//   check are pipelined at line rate in hardware and take tens of cycles at ~1 GHz.
// - 8 outstanding payload reads: PCIe devices keep several non-posted reads in flight to
//   cover the read round trip (about 0.5 us at Gen3, models/host/README.md); 8 x 512 B
//   requests cover 4 KiB, one MTU.
// - 4 doorbell classes: seed 003 Sec. 3.3.1 has one doorbell queue per traffic class; four
//   matches the IBA's minimum of VLs on a QoS-capable port (data VLs 0..3).
const sim::ParamGroup& hca_params() {
  static const sim::ParamGroup group = [] {
    sim::GroupBuilder<HcaConfig> b(
        "hca", "The programmable HCA: registers, doorbell queues, DMA, tx/rx engines, CA port, embedded core.");
    link::declare_port_params(b, "Receive buffer per data VL; credits advertise it to the switch.",
                              &sw::SwitchConfig::default_sl2vl);
    b.integer("tx_vl_buffer_bytes", &HcaConfig::tx_vl_buffer_bytes, "bytes",
              "Transmit buffer per data VL; firmware may skip a doorbell whose VL buffer is full.")
        .range(ib::kCreditBlockBytes, int64_t{1} << 30);
    b.integer("core_clock_hz", &HcaConfig::core_clock_hz, "Hz", "Clock of the embedded core that runs the firmware.")
        .range(1'000'000, 100'000'000'000);
    // At most a million cycles (1 ms at 1 GHz): firmware paths are hundreds of cycles, and
    // 2^32 cycles at the slowest clock would be an hour per event.
    b.integer("event_cycles", &HcaConfig::event_cycles, "cycles", "Core cycles to dispatch one event to the firmware.")
        .range(0, 1'000'000);
    b.integer("hal_call_cycles", &HcaConfig::hal_call_cycles, "cycles", "Core cycles charged at every HAL call.")
        .range(0, 1'000'000);
    b.integer("dma_max_outstanding_reads", &HcaConfig::dma_max_outstanding_reads, "reads",
              "Payload DMA reads the tx engine keeps in flight.")
        .range(1, 1024);
    // Hardware takes tens of ns; 1 ms bounds typos (days were accepted) without limiting studies.
    b.time("tx_pipeline_delay", &HcaConfig::tx_pipeline_delay,
           "From the last payload byte's arrival to the message's packets being ready at the port (at most 1 ms).")
        .real_range(0, 1e9);
    b.time("rx_pipeline_delay", &HcaConfig::rx_pipeline_delay,
           "From a packet's tail arrival to the firmware's rx event (CRC check, header parse; at most 1 ms).")
        .real_range(0, 1e9);
    b.integer("blueflame_bytes", &HcaConfig::blueflame_bytes, "bytes",
              "BlueFlame buffer per QP: the driver writes a lone send WQE with its inline data there by MMIO "
              "(no DMA read of the WQE); 0: none, else 64..256, a multiple of 64.")
        .range(0, IBVP_BF_STRIDE);
    b.integer("max_qps", &HcaConfig::max_qps, "QPs", "QP numbers with doorbells (0 .. max_qps-1).")
        .range(2, (IBVP_REG_CQ_DB_BASE - IBVP_REG_QP_DB_BASE) / IBVP_QP_DB_STRIDE);
    b.integer("doorbell_classes", &HcaConfig::doorbell_classes, "classes",
              "Doorbell queues, one per priority class (seed 003 Sec. 3.3.1).")
        .range(1, 16);
    b.string("firmware_image", &HcaConfig::firmware_image, "Path of the firmware image (a shared library).");
    b.string("firmware_args", &HcaConfig::firmware_args, "Text passed to the image's ibvp_fw_init.");
    // Wall-clock, not simulated, time: an image stuck in an endless loop never advances the
    // simulated clock. The default image's longest call takes microseconds; 10 s is far above
    // any honest call and short enough that a hung run ends soon.
    b.time("firmware_watchdog", &HcaConfig::firmware_watchdog,
           "Wall-clock time one firmware call (an event's handler, init, fini) may run before the run ends as hung "
           "(exit status 4); 0 turns the watchdog off.")
        .real_range(0, 3600e12);
    // Simulated, not wall-clock. The default image's handlers charge thousands of cycles; one
    // doorbell fetching a whole send queue charges wqe_cycles per WQE, so 1e9 (1 s of a 1 GHz
    // core on one event) leaves room for 32 Ki WQEs at 30,000 cycles each, and a loop of
    // consume_cycles(1000) still ends within about a second of wall-clock time.
    b.integer("firmware_cycle_budget", &HcaConfig::firmware_cycle_budget, "cycles",
              "Core cycles one event's handler may charge (event_cycles, HAL calls, consume_cycles) before the run "
              "ends as hung (exit status 4); 0: no budget.")
        .range(0, 1'000'000'000'000);
    return b.build();
  }();
  return group;
}

void check_hca(const HcaConfig& cfg) {
  if (cfg.data_vls < 1 || cfg.data_vls > ib::kMaxVls - 1)
    throw sim::ParamError("data_vls", std::to_string(cfg.data_vls) + " data VLs", "use 1..15");
  if (cfg.core_clock_hz == 0) throw sim::ParamError("core_clock_hz", "the core has no clock", "give a frequency in Hz");
  if (cfg.doorbell_classes < 1 || cfg.doorbell_classes > 16)
    throw sim::ParamError("doorbell_classes", std::to_string(cfg.doorbell_classes) + " classes", "use 1..16");
  if (cfg.max_qps < 2 || cfg.max_qps > (IBVP_REG_CQ_DB_BASE - IBVP_REG_QP_DB_BASE) / IBVP_QP_DB_STRIDE)
    throw sim::ParamError("max_qps", std::to_string(cfg.max_qps) + " QPs do not fit the doorbell space",
                          "use 2.." + std::to_string((IBVP_REG_CQ_DB_BASE - IBVP_REG_QP_DB_BASE) / IBVP_QP_DB_STRIDE));
  if (cfg.blueflame_bytes % 64 != 0 || cfg.blueflame_bytes > IBVP_BF_STRIDE)
    throw sim::ParamError("blueflame_bytes", std::to_string(cfg.blueflame_bytes) + " bytes",
                          "use 0 (no BlueFlame) or 64, 128, 192, 256");
  if (cfg.dma_max_outstanding_reads < 1)
    throw sim::ParamError("dma_max_outstanding_reads", "no payload read could be issued", "use 1 or more");
  link::check_vlarb(cfg.vlarb, cfg.data_vls);
  link::check_sl2vl(cfg.sl2vl, cfg.data_vls);
}

}  // namespace ibvp::hca
