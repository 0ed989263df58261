#pragma once
// Host memory: a TLM-2.0 target that the HCA reaches through the host bus (DMA) and the
// driver model reads and writes directly. Storage is sparse: a 4 KiB page is allocated on
// its first write, and bytes never written read as zero, so a 64 GiB address space costs
// only the pages a run touches.
//
// Timing: every b_transport adds `access_latency` to the annotated delay (the idle DRAM
// access behind the root complex); reads and writes cost the same and the memory has no
// bandwidth limit of its own, because the host bus in front of it is the bottleneck this
// platform studies. See models/host/README.md.
#include <cstdint>
#include <memory>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>
#include <unordered_map>
#include <vector>

namespace ibvp::host {

struct HostMemoryConfig {
  // Addresses 0 .. size_bytes-1 exist; anything beyond is TLM_ADDRESS_ERROR_RESPONSE.
  uint64_t size_bytes = uint64_t{64} << 30;
  // Idle DRAM load latency of a server socket (Intel's Memory Latency Checker reports about
  // 80 ns on Xeon Scalable parts).
  sc_core::sc_time access_latency = sc_core::sc_time(80, sc_core::SC_NS);
};

class HostMemory : public sc_core::sc_module {
 public:
  static constexpr uint64_t kPageBytes = 4096;

  // TLM_READ_COMMAND and TLM_WRITE_COMMAND with byte enables and streaming width;
  // TLM_IGNORE_COMMAND succeeds without touching memory. No DMI.
  tlm_utils::simple_target_socket<HostMemory> socket;

  HostMemory(sc_core::sc_module_name name, const HostMemoryConfig& cfg = HostMemoryConfig{});

  const HostMemoryConfig& config() const { return cfg_; }

  // Host-side access without simulated time, for the driver model and tests. An access that
  // does not fit in 0 .. size_bytes-1 throws std::out_of_range (a program error, not a
  // simulated fault).
  void read(uint64_t address, void* data, uint64_t bytes) const;
  std::vector<uint8_t> read(uint64_t address, uint64_t bytes) const;
  void write(uint64_t address, const void* data, uint64_t bytes);

  // Pages allocated so far (each kPageBytes).
  size_t pages_allocated() const { return pages_.size(); }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);

  bool fits(uint64_t address, uint64_t bytes) const;
  // Performs a read or write of a payload whose range fits; honours byte enables and
  // streaming width.
  void access(tlm::tlm_generic_payload& trans);
  void copy_out(uint64_t address, uint8_t* data, uint64_t bytes) const;
  void copy_in(uint64_t address, const uint8_t* data, uint64_t bytes);
  uint8_t* page_for_write(uint64_t page_number);
  const uint8_t* page_for_read(uint64_t page_number) const;  // nullptr: never written

  HostMemoryConfig cfg_;
  // Looked up by page number, never iterated: the map's order cannot reach results.
  std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;
};

}  // namespace ibvp::host
