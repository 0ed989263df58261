#pragma once
// The latency of one small UD SEND between two HCA hosts through one switch, post_send to
// the poll that returns its receive completion, computed from the default parameters (4X EDR
// 2 m cables, PCIe Gen3 x16, firmware costs zero). Shared by the HCA latency test and the
// perftest test, which must agree with it to the picosecond.
#include <cstdint>

#include "firmware/hal/ibvp_hal.h"

namespace ibvp::tb {

struct UdLatencyParts {
  static constexpr uint64_t kNs = 1000;  // ps
  uint64_t call = 50 * kNs;              // HostCpuConfig::verbs_call_cost
  uint64_t bus = 200 * kNs;              // HostBusConfig::latency
  uint64_t mem = 80 * kNs;               // HostMemoryConfig::access_latency
  uint64_t tx_pipe = 50 * kNs;           // HcaConfig::tx_pipeline_delay
  uint64_t rx_pipe = 50 * kNs;           // HcaConfig::rx_pipeline_delay
  uint64_t sw_pipe = 100 * kNs;          // SwitchConfig::pipeline_delay
  uint64_t prop = 10 * kNs;              // 2 m at 5 ns/m
  uint64_t tlp_overhead = 24;            // HostBusConfig::tlp_overhead_bytes
  uint64_t lanes = 16;                   // HostBusConfig::lanes (Gen3)
};

// PCIe Gen3 over `lanes` lanes: bytes * 8 bits / (lanes * 8 GT/s * 128/130), rounded up.
inline uint64_t pcie_gen3_ps(uint64_t bytes, uint64_t lanes) {
  using u128 = unsigned __int128;
  const u128 num = static_cast<u128>(bytes) * 8 * 130 * 1'000'000'000'000ULL;
  const u128 den = static_cast<u128>(lanes) * 8'000'000'000ULL * 128;
  return static_cast<uint64_t>((num + den - 1) / den);
}

// 4X EDR: 4 x 25.78125 Gb/s x 64/66 = 100 Gb/s exactly: 80 ps per byte.
inline uint64_t edr4x_ps(uint64_t bytes) { return bytes * 80; }

inline uint64_t ud_send_latency_ps(const UdLatencyParts& p, uint64_t payload) {
  const uint64_t o = p.tlp_overhead;
  const uint64_t wire = 8 + 12 + 8 + payload + (4 - payload % 4) % 4 + 4 + 2;  // LRH BTH DETH payload pad ICRC VCRC
  const uint64_t doorbell = p.call + pcie_gen3_ps(4 + o, p.lanes) + p.bus;              // post_send, 32-bit MMIO store
  // A DMA read: request TLP, bus latency, memory access, completion TLP(s), bus latency.
  const auto dma_read = [&](uint64_t n) { return pcie_gen3_ps(o, p.lanes) + p.bus + p.mem + pcie_gen3_ps(n + o, p.lanes) + p.bus; };
  const uint64_t wqe = dma_read(IBVP_SEND_WQE_BYTES);
  const uint64_t data = dma_read(payload);
  const uint64_t fabric = edr4x_ps(wire) + p.prop + p.sw_pipe + p.prop;  // cut-through: one serialization
  // Payload then CQE, back to back on the upstream pipe; the CQE lands one bus latency and
  // one memory access after its TLP has left.
  const uint64_t writes = pcie_gen3_ps(payload + o, p.lanes) + pcie_gen3_ps(IBVP_CQE_BYTES + o, p.lanes) + p.bus + p.mem;
  const uint64_t poll = p.call;  // the poll that finds the CQE
  return doorbell + wqe + data + p.tx_pipe + fabric + p.rx_pipe + writes + poll;
}

}  // namespace ibvp::tb
