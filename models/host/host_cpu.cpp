#include "models/host/host_cpu.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "models/sim/sleep.h"

namespace ibvp::host {

namespace {
enum ActionKind : uint16_t { kLand };
}  // namespace

HostCpu::HostCpu(sc_core::sc_module_name name, HostMemory& memory, const HostCpuConfig& cfg)
    : sc_core::sc_module(name),
      dma_in("dma_in"),
      mem_out("mem_out"),
      mmio("mmio"),
      memory_(memory),
      cfg_(cfg),
      agenda_("agenda", [this](const sim::Action& a) { land(a); }) {
  sim::prepare_sleep();
  dma_in.register_b_transport(this, &HostCpu::dma_b_transport);
  dma_in.register_transport_dbg(this, &HostCpu::dma_transport_dbg);
}

void HostCpu::run(std::function<void()> program) {
  sc_core::sc_spawn_options opts;
  opts.set_stack_size(static_cast<int>(cfg_.thread_stack_bytes));
  // Spawned from outside the module (the test bench or builder), so the thread lives at the
  // top of the hierarchy: the CPU's own name keeps it unique.
  std::string name = std::string(this->name()) + "_program" + std::to_string(programs_++);
  for (char& c : name)
    if (c == '.') c = '_';
  sc_core::sc_spawn(std::move(program), name.c_str(), &opts);
}

// The program runs ahead of the kernel when nothing else is pending before the time it
// reaches (models/sim/sleep.h): no thread switch per verbs call or posted store (issue 15
// part 2).
void HostCpu::spend(const sc_core::sc_time& t) { sim::advance_for_ps(t.value()); }

void HostCpu::mmio_write32(uint64_t offset, uint32_t value) {
  uint8_t bytes[4];
  std::memcpy(bytes, &value, 4);  // little-endian register access, as PCIe carries it
  mmio_write_wc(offset, bytes, 4);
}

uint32_t HostCpu::mmio_read32(uint64_t offset) {
  tlm::tlm_generic_payload t;
  uint8_t bytes[4] = {};
  t.set_command(tlm::TLM_READ_COMMAND);
  t.set_address(offset);
  t.set_data_ptr(bytes);
  t.set_data_length(4);
  t.set_streaming_width(4);
  t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  mmio->b_transport(t, delay);
  sc_assert(t.is_response_ok() && "MMIO read from an address the device refuses");
  spend(delay);  // a load waits for its completion
  uint32_t v;
  std::memcpy(&v, bytes, 4);
  return v;
}

void HostCpu::mmio_write_wc(uint64_t offset, const void* data, uint32_t bytes) {
  tlm::tlm_generic_payload t;
  t.set_command(tlm::TLM_WRITE_COMMAND);
  t.set_address(offset);
  t.set_data_ptr(static_cast<uint8_t*>(const_cast<void*>(data)));
  t.set_data_length(bytes);
  t.set_streaming_width(bytes);
  t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  mmio->b_transport(t, delay);
  sc_assert(t.is_response_ok() && "MMIO store to an address the device refuses");
  // Posted: the core's store buffer drains when the TLP has left.
  spend(delay);
}

uint32_t HostCpu::mmio_read32_dbg(uint64_t offset) {
  tlm::tlm_generic_payload t;
  uint8_t bytes[4] = {};
  t.set_command(tlm::TLM_READ_COMMAND);
  t.set_address(offset);
  t.set_data_ptr(bytes);
  t.set_data_length(4);
  t.set_streaming_width(4);
  if (mmio->transport_dbg(t) != 4) return 0;
  uint32_t v;
  std::memcpy(&v, bytes, 4);
  return v;
}

std::shared_ptr<HostCpu::Monitor> HostCpu::arm_monitor(uint64_t address, uint64_t bytes) {
  auto m = std::make_shared<Monitor>();
  m->address_ = address;
  m->bytes_ = bytes;
  monitors_.push_back(m);
  return m;
}

void HostCpu::wait_monitor(const std::shared_ptr<Monitor>& m) {
  if (!m->fired_) {
    sim::release_ahead();  // the landing that wakes it comes at or after the program's time
    sc_core::wait(m->event_);
  }
  disarm_monitor(m);
}

void HostCpu::disarm_monitor(const std::shared_ptr<Monitor>& m) {
  monitors_.erase(std::remove(monitors_.begin(), monitors_.end(), m), monitors_.end());
}

void HostCpu::dma_b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const bool plain = trans.get_byte_enable_ptr() == nullptr &&
                     (trans.get_streaming_width() == 0 || trans.get_streaming_width() >= trans.get_data_length());
  if (!trans.is_write() || !plain) {
    // Reads (and writes with byte enables or streaming, which the HCA never issues: those
    // become visible at once) go straight to memory.
    mem_out->b_transport(trans, delay);
    if (!trans.is_read() || !trans.is_response_ok()) return;
    // The read samples memory when its access completes: writes landed by then count.
    const uint64_t at = sim::TimedQueue::now_ps() + delay.value();
    const uint64_t a0 = trans.get_address(), a1 = a0 + trans.get_data_length();
    for (const auto& w : pending_) {
      if (w->land_ps > at) break;
      const uint64_t w0 = w->address, w1 = w0 + w->data.size();
      const uint64_t lo = std::max(a0, w0), hi = std::min(a1, w1);
      if (lo < hi) std::memcpy(trans.get_data_ptr() + (lo - a0), w->data.data() + (lo - w0), hi - lo);
    }
    return;
  }
  const uint64_t address = trans.get_address();
  const uint64_t length = trans.get_data_length();
  const uint64_t size = memory_.config().size_bytes;
  if (length > size || address > size - length) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  delay += memory_.config().access_latency;
  // A landed write's record is reused (its data keeps its capacity): nothing is allocated
  // per DMA write once the CPU has seen its deepest queue (issue 15 part 2).
  std::unique_ptr<PendingWrite> w;
  if (free_writes_.empty()) {
    w = std::make_unique<PendingWrite>();
  } else {
    w = std::move(free_writes_.back());
    free_writes_.pop_back();
  }
  w->land_ps = sim::TimedQueue::now_ps() + delay.value();
  w->address = address;
  w->data.assign(trans.get_data_ptr(), trans.get_data_ptr() + length);
  agenda_.push_at(w->land_ps, kLand, 0, 0, w.get());
  // Kept in landing order; the bus delivers its writes in order, so this is an append.
  auto pos = pending_.end();
  while (pos != pending_.begin() && (*(pos - 1))->land_ps > w->land_ps) --pos;
  pending_.insert(pos, std::move(w));
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned int HostCpu::dma_transport_dbg(tlm::tlm_generic_payload& trans) { return mem_out->transport_dbg(trans); }

void HostCpu::land(const sim::Action& a) {
  auto it = std::find_if(pending_.begin(), pending_.end(), [&](const auto& w) { return w.get() == a.ptr; });
  sc_assert(it != pending_.end());
  const PendingWrite& w = **it;
  memory_.write(w.address, w.data.data(), w.data.size());
  ++landed_;
  for (const auto& m : monitors_) {
    if (w.address < m->address_ + m->bytes_ && m->address_ < w.address + w.data.size() && !m->fired_) {
      m->fired_ = true;
      // At once: the waiter runs when the Scheduler's step ends, in the order of landings.
      m->event_.notify();
    }
  }
  free_writes_.push_back(std::move(*it));
  pending_.erase(it);
}

}  // namespace ibvp::host
