#pragma once
// What an HCA host does to each message, reported to an observer (a timeline writer,
// platform/metrics/timeline.h). The HCA reports what its hardware sees: doorbells as they
// arrive, the firmware's DMA reads and writes (addresses and bytes), packets as they leave
// and arrive. The hardware does not know which DMA is a WQE fetch or a CQE (that is the
// firmware's business); the driver reports where its rings are, so an observer can tell.
// Models call through a pointer; a null pointer costs nothing. Observers never change the
// simulation.
#include <cstdint>

#include "firmware/hal/ibvp_hal.h"
#include "models/ib/packet.h"

namespace ibvp::hca {

class HcaObserver {
 public:
  virtual ~HcaObserver() = default;

  // ---- HCA hardware (models/hca/hca.cpp), `node` is the HCA's topology node.
  // A doorbell register write arrived (kind IBVP_DB_SQ / RQ / CQ_ARM, value as written).
  // `wqe_bytes`: a BlueFlame write's WQE came with it (its slot's bytes; 0 for a plain
  // doorbell), the WQE whose index is value - 1.
  virtual void on_doorbell(uint32_t /*node*/, uint32_t /*qpn*/, uint32_t /*kind*/, uint32_t /*value*/,
                           uint64_t /*t_ps*/, uint32_t /*wqe_bytes*/) {}
  // A firmware dma_read: issued at `issued_ps`, its last completion byte arrived at `done_ps`.
  virtual void on_dma_read(uint32_t /*node*/, uint64_t /*address*/, uint32_t /*bytes*/, uint64_t /*issued_ps*/,
                           uint64_t /*done_ps*/) {}
  // A firmware dma_write (posted): issued at `issued_ps`, its TLPs had left the HCA at `left_ps`.
  virtual void on_dma_write(uint32_t /*node*/, uint64_t /*address*/, const void* /*data*/, uint32_t /*bytes*/,
                            uint64_t /*issued_ps*/, uint64_t /*left_ps*/) {}
  // A packet of sending QP `qpn` occupies the HCA's port from start to end.
  virtual void on_packet_out(uint32_t /*node*/, uint32_t /*qpn*/, const ib::Packet& /*p*/, uint64_t /*start_ps*/,
                             uint64_t /*end_ps*/) {}
  // A packet passed the rx engine's checks and goes to the firmware (headers as it sees them).
  virtual void on_packet_in(uint32_t /*node*/, const ibvp_rx_packet& /*p*/, uint64_t /*t_ps*/) {}
  // The core handled one firmware event (`kind` IBVP_EV_*): taken at `start_ps`, the handler
  // returned at `end_ps`, having charged `cycles` core cycles (event_cycles, HAL calls,
  // consume_cycles; the rest of the span is the core stalled on dma_read).
  virtual void on_firmware_event(uint32_t /*node*/, uint32_t /*kind*/, uint64_t /*start_ps*/, uint64_t /*end_ps*/,
                                 uint64_t /*cycles*/) {}

  // ---- Driver (platform/driver/verbs.cpp), `node` is the host's topology node.
  // The send ring: `sq_entries` slots of `sq_stride` bytes (the WQE and its inline room).
  virtual void on_create_qp(uint32_t /*node*/, uint32_t /*qpn*/, uint64_t /*sq_addr*/, uint32_t /*sq_entries*/,
                            uint32_t /*sq_stride*/) {}
  virtual void on_create_cq(uint32_t /*node*/, uint32_t /*cqn*/, uint64_t /*ring*/, uint32_t /*entries*/) {}
  // post_send called (before its call cost) for the send WQE `wqe_index` (0 for the QP's
  // first WQE, counting on; the ring slot is wqe_index mod entries).
  virtual void on_post_send(uint32_t /*node*/, uint32_t /*qpn*/, uint32_t /*wqe_index*/, uint64_t /*wr_id*/,
                            uint64_t /*t_ps*/) {}
  // poll_cq returned a completion (at the end of the call). Send completions name their
  // WQE (`wqe_index`); receive completions have send = false and wqe_index 0.
  virtual void on_poll_return(uint32_t /*node*/, uint32_t /*qpn*/, bool /*send*/, uint32_t /*wqe_index*/,
                              uint64_t /*wr_id*/, uint64_t /*t_ps*/) {}
};

}  // namespace ibvp::hca
