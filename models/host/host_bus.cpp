#include "models/host/host_bus.h"

#include <algorithm>

#include "models/sim/timed_queue.h"

namespace ibvp::host {

namespace {
// PCI Express Base Specification, Physical Layer: transfer rate per lane and line code of
// each generation (Gen1/2: 8b/10b; Gen3 onwards: 128b/130b).
const PcieGenInfo kGens[] = {
    {"gen1", 2'500'000'000ULL, 8, 10, "8b/10b"},
    {"gen2", 5'000'000'000ULL, 8, 10, "8b/10b"},
    {"gen3", 8'000'000'000ULL, 128, 130, "128b/130b"},
    {"gen4", 16'000'000'000ULL, 128, 130, "128b/130b"},
    {"gen5", 32'000'000'000ULL, 128, 130, "128b/130b"},
};

using u128 = unsigned __int128;
}  // namespace

const PcieGenInfo& pcie_gen_info(PcieGen g) { return kGens[static_cast<int>(g) - 1]; }
const char* pcie_gen_name(PcieGen g) { return pcie_gen_info(g).name; }

PcieRate::PcieRate(PcieGen generation, uint32_t lanes) : lanes_(lanes), info_(pcie_gen_info(generation)) {
  sc_assert(lanes > 0);
}

double PcieRate::data_bits_per_s() const {
  return static_cast<double>(lanes_) * static_cast<double>(info_.transfers_per_s) * info_.enc_payload /
         info_.enc_total;
}

uint64_t PcieRate::serialization_ps(uint64_t bytes) const {
  // ps = bytes * 8 * 1e12 * enc_total / (lanes * transfers_per_s * enc_payload), rounded up:
  // a transfer cannot finish before its last bit is on the wire.
  const u128 num = static_cast<u128>(bytes) * 8u * 1'000'000'000'000ULL * info_.enc_total;
  const u128 den = static_cast<u128>(lanes_) * info_.transfers_per_s * info_.enc_payload;
  return static_cast<uint64_t>((num + den - 1) / den);
}

sc_core::sc_time PcieRate::serialization(uint64_t bytes) const {
  // sc_time's default resolution is 1 ps; from_value counts in resolution units.
  return sc_core::sc_time::from_value(serialization_ps(bytes));
}

uint64_t tlp_count(uint64_t bytes, uint64_t max_bytes_per_tlp) {
  sc_assert(max_bytes_per_tlp > 0);
  return bytes == 0 ? 1 : (bytes + max_bytes_per_tlp - 1) / max_bytes_per_tlp;
}

HostBus::HostBus(sc_core::sc_module_name name, const HostBusConfig& cfg)
    : sc_core::sc_module(name),
      dma_in("dma_in"),
      mem_out("mem_out"),
      mmio_in("mmio_in"),
      mmio_out("mmio_out"),
      cfg_(cfg),
      rate_(cfg) {
  // Configs from files were checked by check_host_bus (host_params.h); these guard code
  // that builds a config by hand.
  sc_assert(cfg_.max_payload_bytes > 0 && cfg_.max_read_request_bytes > 0);
  dma_in.register_b_transport(this, &HostBus::dma_b_transport);
  dma_in.register_transport_dbg(this, &HostBus::dma_transport_dbg);
  mmio_in.register_b_transport(this, &HostBus::mmio_b_transport);
  mmio_in.register_transport_dbg(this, &HostBus::mmio_transport_dbg);
}

uint64_t HostBus::write_link_bytes(uint64_t bytes) const {
  return bytes + tlp_count(bytes, cfg_.max_payload_bytes) * cfg_.tlp_overhead_bytes;
}

uint64_t HostBus::read_request_link_bytes(uint64_t bytes) const {
  return tlp_count(bytes, cfg_.max_read_request_bytes) * cfg_.tlp_overhead_bytes;
}

uint64_t HostBus::completion_link_bytes(uint64_t bytes) const {
  return bytes + tlp_count(bytes, cfg_.max_payload_bytes) * cfg_.tlp_overhead_bytes;
}

namespace {
// An absolute time as a delay from now. A target that waited inside b_transport may have
// moved now past it; the delay is then zero.
// The models' time (sim::TimedQueue::now_ps).
sc_core::sc_time now() { return sc_core::sc_time::from_value(sim::TimedQueue::now_ps()); }

sc_core::sc_time from_now(const sc_core::sc_time& at) {
  const sc_core::sc_time now = host::now();
  return at > now ? at - now : sc_core::SC_ZERO_TIME;
}
}  // namespace

sc_core::sc_time HostBus::occupy(BusPipe& pipe, sc_core::sc_time ready, uint64_t tlps, uint64_t payload) {
  const uint64_t link_bytes = payload + tlps * cfg_.tlp_overhead_bytes;
  const sc_core::sc_time serialization = rate_.serialization(link_bytes);
  // FIFO per direction: a transfer starts when it is ready and everything booked before it
  // on this pipe has left.
  const sc_core::sc_time start = std::max(ready, pipe.busy_until);
  pipe.busy_until = start + serialization;
  pipe.busy_time += serialization;
  pipe.tlps += tlps;
  pipe.payload_bytes += payload;
  pipe.link_bytes += link_bytes;
  return pipe.busy_until;
}

void HostBus::posted_write(BusPipe& out, tlm_utils::simple_initiator_socket<HostBus>& target,
                           tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const uint64_t bytes = trans.get_data_length();
  const sc_core::sc_time sent =
      occupy(out, now() + delay, tlp_count(bytes, cfg_.max_payload_bytes), bytes);
  // The target sees the write when its last byte has arrived.
  sc_core::sc_time arrival = from_now(sent + cfg_.latency);
  target->b_transport(trans, arrival);
  // Posted: the initiator is free once its TLPs are on the wire, whatever the target's
  // own delay (a memory write completes in the background).
  delay = from_now(sent);
}

void HostBus::read(BusPipe& out, BusPipe& back, tlm_utils::simple_initiator_socket<HostBus>& target,
                   tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const uint64_t bytes = trans.get_data_length();
  const sc_core::sc_time requested =
      occupy(out, now() + delay, tlp_count(bytes, cfg_.max_read_request_bytes), 0);
  sc_core::sc_time at_target = from_now(requested + cfg_.latency);
  target->b_transport(trans, at_target);
  const sc_core::sc_time ready = now() + at_target;
  // A failed read is answered by one completion without data (PCIe: Completion with
  // Unsupported Request or Completer Abort status).
  const bool ok = trans.is_response_ok();
  const sc_core::sc_time completed =
      ok ? occupy(back, ready, tlp_count(bytes, cfg_.max_payload_bytes), bytes) : occupy(back, ready, 1, 0);
  delay = from_now(completed + cfg_.latency);
}

void HostBus::transfer(BusPipe& out, BusPipe& back, tlm_utils::simple_initiator_socket<HostBus>& target,
                       tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  switch (trans.get_command()) {
    case tlm::TLM_WRITE_COMMAND:
      posted_write(out, target, trans, delay);
      break;
    case tlm::TLM_READ_COMMAND:
      read(out, back, target, trans, delay);
      break;
    case tlm::TLM_IGNORE_COMMAND:
      // Carries extensions only, no TLP: passed through without bus time.
      target->b_transport(trans, delay);
      break;
  }
}

void HostBus::dma_b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  transfer(upstream_, downstream_, mem_out, trans, delay);
}

void HostBus::mmio_b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  transfer(downstream_, upstream_, mmio_out, trans, delay);
}

unsigned int HostBus::dma_transport_dbg(tlm::tlm_generic_payload& trans) { return mem_out->transport_dbg(trans); }

unsigned int HostBus::mmio_transport_dbg(tlm::tlm_generic_payload& trans) { return mmio_out->transport_dbg(trans); }

}  // namespace ibvp::host
