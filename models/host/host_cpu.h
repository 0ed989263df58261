#pragma once
// The host CPU socket: cores that run driver code in SC_THREADs, and the uncore between the
// root complex and DRAM, where DMA writes become visible to the cores.
//
//   HCA DMA ─► bus.dma_in ... bus.mem_out ─► cpu.dma_in ─► cpu.mem_out ─► memory.socket
//   driver (SC_THREAD) ─► cpu.mmio ─► bus.mmio_in ... bus.mmio_out ─► HCA registers
//
// Why the uncore is here: a device's DMA write travels for a while (the bus returns at once
// with the time it arrives). If it were stored in memory when the bus is called, a polling
// driver would see a completion before it could exist. So a DMA write arriving at the
// memory controller at time a is applied to memory at a + access_latency ("lands"), and
// reads see exactly the writes landed by their own access time. Cores read and write host
// memory directly (their caches; no bus time), and can wait for a landing on an address
// range the way x86 UMONITOR/UMWAIT waits on a cache line, so a polling loop costs one
// event instead of a spin.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "models/host/host_memory.h"
#include "models/sim/timed_queue.h"

namespace ibvp::host {

struct HostCpuConfig {
  // CPU time of one driver (verbs) call: building a WQE, bookkeeping, the store that rings a
  // doorbell is extra (it goes through the bus). See docs/hca.md for the source.
  sc_core::sc_time verbs_call_cost = sc_core::sc_time(50, sc_core::SC_NS);
  // Stack of each program thread (driver code, possibly deep).
  uint32_t thread_stack_bytes = 1u << 20;
};

class HostCpu : public sc_core::sc_module {
 public:
  // From the bus's memory side (bus.mem_out).
  tlm_utils::simple_target_socket<HostCpu> dma_in;
  // To HostMemory::socket.
  tlm_utils::simple_initiator_socket<HostCpu> mem_out;
  // The cores' MMIO to device registers (to bus.mmio_in).
  tlm_utils::simple_initiator_socket<HostCpu> mmio;

  SC_HAS_PROCESS(HostCpu);
  HostCpu(sc_core::sc_module_name name, HostMemory& memory, const HostCpuConfig& cfg = HostCpuConfig{});

  const HostCpuConfig& config() const { return cfg_; }
  HostMemory& memory() { return memory_; }

  // Runs `program` in its own SC_THREAD from the start of simulation (call before sc_start).
  // The program's time may run ahead of the kernel's between fabric events (spend,
  // models/sim/sleep.h): it reads its time through sim::TimedQueue::now_ps(), not
  // sc_time_stamp(), and calls sim::catch_up() before it notifies an event another thread
  // waits on, sim::release_ahead() before it waits on one itself (docs/hca.md, "Execution model").
  void run(std::function<void()> program);

  // ---- For code running in a program thread. ----
  // The core is busy for `t` (no-op for zero): the program runs ahead when it may.
  void spend(const sc_core::sc_time& t);
  void spend_call() { spend(cfg_.verbs_call_cost); }
  // A 32-bit store to a device register: the core goes on once the write has left (posted).
  void mmio_write32(uint64_t offset, uint32_t value);
  // A 32-bit load from a device register: waits for the completion.
  uint32_t mmio_read32(uint64_t offset);
  // A store of `bytes` through a write-combining mapping (BlueFlame, docs/hca.md): one posted
  // write of all the bytes; the core goes on once it has left.
  void mmio_write_wc(uint64_t offset, const void* data, uint32_t bytes);
  // A device register read without time (transport_dbg): what a driver learns from the kernel
  // at open time (mlx5's BlueFlame size comes in the alloc_ucontext answer), outside any run's timing.
  uint32_t mmio_read32_dbg(uint64_t offset);

  // Monitor/wait on host memory: arm before checking the condition, then wait; a DMA write
  // overlapping [address, address+bytes) that lands after arming wakes the waiter.
  class Monitor {
   public:
    bool fired() const { return fired_; }

   private:
    friend class HostCpu;
    uint64_t address_ = 0, bytes_ = 0;
    bool fired_ = false;
    sc_core::sc_event event_;
  };
  std::shared_ptr<Monitor> arm_monitor(uint64_t address, uint64_t bytes);
  void wait_monitor(const std::shared_ptr<Monitor>& m);  // returns at once if already fired
  void disarm_monitor(const std::shared_ptr<Monitor>& m);

  // DMA writes received but not yet landed (for tests and end-of-run checks).
  size_t writes_in_flight() const { return pending_.size(); }
  uint64_t writes_landed() const { return landed_; }

 private:
  struct PendingWrite {
    uint64_t land_ps;
    uint64_t address;
    std::vector<uint8_t> data;
  };
  void dma_b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int dma_transport_dbg(tlm::tlm_generic_payload& trans);
  void land(const sim::Action& a);  // on the Scheduler: applies a write whose time has come

  HostMemory& memory_;
  HostCpuConfig cfg_;
  sim::TimedQueue agenda_;
  std::deque<std::unique_ptr<PendingWrite>> pending_;  // in arrival order (the bus is FIFO)
  std::vector<std::unique_ptr<PendingWrite>> free_writes_;  // landed, for reuse
  std::vector<std::shared_ptr<Monitor>> monitors_;
  uint64_t landed_ = 0;
  uint32_t programs_ = 0;
};

}  // namespace ibvp::host
