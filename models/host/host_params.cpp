#include "models/host/host_params.h"

#include <string>
#include <utility>
#include <vector>

namespace ibvp::host {

// Where the defaults come from.
// - Rate: PCI Express Base Specification 3.0, Physical Layer: 8 GT/s per lane with
//   128b/130b encoding, so Gen3 x16 carries 16 * 8e9 * 128/130 = 126.0 Gb/s (15.75 GB/s) of
//   link bytes per direction.
// - TLP overhead, 24 bytes: a memory write or read request with 64-bit address has a 4-DW
//   header (16 B) and a 4-byte LCRC; framing adds 4 bytes in both encodings (Gen1/2: STP 1,
//   sequence number 2, END 1; Gen3 and later: the 4-byte STP token, which holds the length
//   and sequence number, and no END). Intel's AN 855 "Protocol Overhead" lists the same
//   fields (start/end framing, sequence ID, 3- or 4-DW header, LCRC). Completions have a
//   3-DW header (20 B); they are counted at 24 B as well, the 4 bytes standing for the
//   Ack and UpdateFC DLLPs (8 B each, one per few TLPs, in the opposite direction) that the
//   model does not send. ECRC is not counted (it is optional and rarely enabled).
// - Max payload 256 B: what server root complexes negotiate for NICs; max read request
//   512 B: the Device Control register's reset value.
// - Latency 200 ns one way: Neugebauer et al., "Understanding PCIe performance for end host
//   networking" (SIGCOMM 2018, pcie-bench) measure small DMA reads on Xeon hosts at about
//   0.5 us; two one-way latencies, the 80 ns memory access and the serialization of a
//   64-byte read make 0.49 us here.
// - Memory access latency 80 ns: idle DRAM latency of a Xeon server socket as Intel's
//   Memory Latency Checker reports it.

const sim::ParamGroup& host_memory_params() {
  static const sim::ParamGroup group = [] {
    sim::GroupBuilder<HostMemoryConfig> b(
        "host_memory", "Host DRAM behind the root complex: sparse, byte-addressable, with one access latency.");
    // Whole pages, so the last page of the address space is never partly outside it.
    b.integer("size_bytes", &HostMemoryConfig::size_bytes, "bytes",
              "Size of the physical address space; accesses at or beyond it are address errors.")
        .range(static_cast<int64_t>(HostMemory::kPageBytes), int64_t{1} << 52)
        .multiple_of(static_cast<int64_t>(HostMemory::kPageBytes));
    // DRAM takes about 100 ns; 1 ms bounds typos without limiting studies.
    b.time("access_latency", &HostMemoryConfig::access_latency,
           "Added to every read and write (idle DRAM latency); the memory has no bandwidth limit of its own.")
        .real_range(0, 1e9);
    return b.build();
  }();
  return group;
}

const sim::ParamGroup& host_bus_params() {
  static const sim::ParamGroup group = [] {
    sim::GroupBuilder<HostBusConfig> b(
        "host_bus", "The PCIe link between the HCA and the host: DMA to host memory and MMIO to the HCA's registers.");
    std::vector<std::pair<std::string, PcieGen>> gens;
    for (PcieGen g : {PcieGen::gen1, PcieGen::gen2, PcieGen::gen3, PcieGen::gen4, PcieGen::gen5})
      gens.emplace_back(pcie_gen_name(g), g);
    b.choice("generation", &HostBusConfig::generation, gens,
             "PCIe generation: 2.5, 5, 8, 16, 32 GT/s per lane; 8b/10b up to gen2, 128b/130b from gen3.");
    b.integer("lanes", &HostBusConfig::lanes, "lanes", "Link width: 1, 2, 4, 8, 12, 16 or 32.").range(1, 32);
    b.integer("max_payload_bytes", &HostBusConfig::max_payload_bytes, "bytes",
              "Max_Payload_Size: the largest payload of a write or completion TLP (128 .. 4096, a power of two).")
        .range(128, 4096);
    b.integer("max_read_request_bytes", &HostBusConfig::max_read_request_bytes, "bytes",
              "Max_Read_Request_Size: a longer read is split into this many bytes per request (128 .. 4096, a "
              "power of two).")
        .range(128, 4096);
    b.integer("tlp_overhead_bytes", &HostBusConfig::tlp_overhead_bytes, "bytes",
              "Link bytes per TLP besides its payload: 4-DW header 16, LCRC 4, framing and sequence number 4.")
        .range(0, 64);
    b.time("latency", &HostBusConfig::latency,
           "One-way delay from the end of a TLP's serialization to its delivery (PHY, link layer, root complex).")
        .real_range(0, 1e9);  // PCIe takes hundreds of ns; 1 ms bounds typos
    b.rule("lanes is a PCIe link width: 1, 2, 4, 8, 12, 16 or 32.");
    b.rule("max_payload_bytes and max_read_request_bytes are powers of two.");
    b.on_complete([](HostBusConfig& c, const std::set<std::string>&) { check_host_bus(c); });
    return b.build();
  }();
  return group;
}

void check_host_bus(const HostBusConfig& cfg) {
  const uint32_t l = cfg.lanes;
  if (l != 1 && l != 2 && l != 4 && l != 8 && l != 12 && l != 16 && l != 32)
    throw sim::ParamError("lanes", std::to_string(l) + " is not a PCIe link width", "use 1, 2, 4, 8, 12, 16 or 32");
  const auto power_of_two = [](uint32_t v) { return v != 0 && (v & (v - 1)) == 0; };
  // The Device Control register encodes both sizes as 128 << n (n = 0 .. 5).
  if (!power_of_two(cfg.max_payload_bytes) || cfg.max_payload_bytes < 128 || cfg.max_payload_bytes > 4096)
    throw sim::ParamError("max_payload_bytes", std::to_string(cfg.max_payload_bytes) + " is not a PCIe payload size",
                          "use 128, 256, 512, 1024, 2048 or 4096");
  if (!power_of_two(cfg.max_read_request_bytes) || cfg.max_read_request_bytes < 128 ||
      cfg.max_read_request_bytes > 4096)
    throw sim::ParamError("max_read_request_bytes",
                          std::to_string(cfg.max_read_request_bytes) + " is not a PCIe read request size",
                          "use 128, 256, 512, 1024, 2048 or 4096");
}

}  // namespace ibvp::host
