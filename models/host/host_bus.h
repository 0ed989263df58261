#pragma once
// The host bus: a PCIe link between one device (the HCA) and the host's root complex, with
// host memory behind it. It carries the device's DMA to memory and the CPU's MMIO to the
// device's registers.
//
// Each direction is a pipe with its own busy-until time: upstream (device to host: DMA
// write data, DMA read requests, MMIO read completions) and downstream (host to device:
// DMA read completions, MMIO writes, MMIO read requests). A transfer occupies its pipe for
// the serialization of its TLPs (payload split at max_payload_bytes, or its requests at
// max_read_request_bytes, plus tlp_overhead_bytes per TLP) at the link's data rate; it
// starts when its pipe is free, so transfers in one direction queue in call order and
// share the bandwidth, while the two directions are independent. `latency` is the one-way
// time from the end of serialization to delivery (PHY, link layer, root complex).
//
// Transport is b_transport with annotated delays (loosely timed, exact accounting); the
// request time of a call is sc_time_stamp() + the annotated delay on entry.
//   posted write (DMA write, MMIO write): the target receives the call with the delay at
//     which the last byte arrives, end of serialization + latency; the initiator gets back
//     the delay at which its TLPs have left, the end of serialization: the earliest time
//     it may issue its next request. The response status is the target's (in PCIe a
//     posted write has no completion; reporting it catches a wrong address at once).
//   read (DMA read, MMIO read): request TLP(s) on the outbound pipe, latency, the target's
//     own annotated delay, completion TLPs on the return pipe, latency; the initiator gets
//     back the delay at which the last completion byte has arrived.
// Addresses pass unchanged (the MMIO path carries the device's register offsets).
// See models/host/README.md for the formulas and what is abstracted.
#include <cstdint>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

namespace ibvp::host {

enum class PcieGen : uint8_t { gen1 = 1, gen2, gen3, gen4, gen5 };

struct PcieGenInfo {
  const char* name;              // "gen3", as configs spell it
  uint64_t transfers_per_s;      // per lane
  uint32_t enc_payload;          // line encoding: enc_payload data bits per enc_total bits
  uint32_t enc_total;
  const char* encoding;          // for reports
};
const PcieGenInfo& pcie_gen_info(PcieGen g);
const char* pcie_gen_name(PcieGen g);

struct HostBusConfig {
  PcieGen generation = PcieGen::gen3;
  uint32_t lanes = 16;
  // Max_Payload_Size of the Device Control register; 256 B is what current servers
  // negotiate for NICs.
  uint32_t max_payload_bytes = 256;
  // Max_Read_Request_Size; 512 B is the reset value of the Device Control register.
  uint32_t max_read_request_bytes = 512;
  // Link bytes of a TLP besides its payload: a 4-DW (64-bit address) header 16, LCRC 4,
  // and framing with sequence number 4 (Gen1/2: STP 1 + sequence 2 + END 1; Gen3 and later:
  // the 4-byte STP token, which carries the sequence number). See host_params.cpp.
  uint32_t tlp_overhead_bytes = 24;
  // One way, end of serialization to delivery at the far side.
  sc_core::sc_time latency = sc_core::sc_time(200, sc_core::SC_NS);
};

// Data rate of a PCIe link and the time a number of link bytes occupies it.
class PcieRate {
 public:
  PcieRate(PcieGen generation, uint32_t lanes);
  explicit PcieRate(const HostBusConfig& cfg) : PcieRate(cfg.generation, cfg.lanes) {}
  // lanes * transfers per second * enc_payload / enc_total.
  double data_bits_per_s() const;
  // Time `bytes` link bytes take, rounded up to the picosecond (exact integer arithmetic:
  // no drift over millions of transfers).
  uint64_t serialization_ps(uint64_t bytes) const;
  sc_core::sc_time serialization(uint64_t bytes) const;

 private:
  uint64_t lanes_;
  PcieGenInfo info_;
};

// TLPs needed to move `bytes` when one TLP carries at most `max_bytes_per_tlp`: at least one
// (a zero-length read is still a request and a completion).
uint64_t tlp_count(uint64_t bytes, uint64_t max_bytes_per_tlp);

// One direction of the link.
struct BusPipe {
  sc_core::sc_time busy_until;  // end of the last serialization booked on this pipe
  sc_core::sc_time busy_time;   // sum of serialization times (utilisation = busy_time / elapsed)
  uint64_t tlps = 0;
  uint64_t payload_bytes = 0;
  uint64_t link_bytes = 0;      // payload + overhead
};

class HostBus : public sc_core::sc_module {
 public:
  // Device-initiated DMA: reads and writes of host memory (address = host physical address).
  tlm_utils::simple_target_socket<HostBus> dma_in;
  // To HostMemory::socket.
  tlm_utils::simple_initiator_socket<HostBus> mem_out;
  // CPU-initiated MMIO: loads and stores to the device's registers.
  tlm_utils::simple_target_socket<HostBus> mmio_in;
  // To the device's register target.
  tlm_utils::simple_initiator_socket<HostBus> mmio_out;

  HostBus(sc_core::sc_module_name name, const HostBusConfig& cfg = HostBusConfig{});

  const HostBusConfig& config() const { return cfg_; }
  const PcieRate& rate() const { return rate_; }
  const BusPipe& upstream() const { return upstream_; }
  const BusPipe& downstream() const { return downstream_; }

  // Link bytes of a write of `bytes` (payload split at max_payload_bytes), of the requests of
  // a read of `bytes` (split at max_read_request_bytes, no payload), and of its completions
  // (split at max_payload_bytes).
  uint64_t write_link_bytes(uint64_t bytes) const;
  uint64_t read_request_link_bytes(uint64_t bytes) const;
  uint64_t completion_link_bytes(uint64_t bytes) const;

 private:
  void dma_b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void mmio_b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int dma_transport_dbg(tlm::tlm_generic_payload& trans);
  unsigned int mmio_transport_dbg(tlm::tlm_generic_payload& trans);

  // One transaction from `out` (the pipe towards the target) with replies on `back`.
  void transfer(BusPipe& out, BusPipe& back, tlm_utils::simple_initiator_socket<HostBus>& target,
                tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void posted_write(BusPipe& out, tlm_utils::simple_initiator_socket<HostBus>& target,
                    tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void read(BusPipe& out, BusPipe& back, tlm_utils::simple_initiator_socket<HostBus>& target,
            tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  // Books `tlps` TLPs carrying `payload` bytes on `pipe`, ready at absolute time `ready`;
  // returns the absolute end of their serialization.
  sc_core::sc_time occupy(BusPipe& pipe, sc_core::sc_time ready, uint64_t tlps, uint64_t payload);

  HostBusConfig cfg_;
  PcieRate rate_;
  BusPipe upstream_, downstream_;
};

}  // namespace ibvp::host
