#pragma once
// A timeline of each send message's life on HCA hosts (outputs.timeline), written as a
// Chrome trace (JSON, {"traceEvents": [...]}) that chrome://tracing and Perfetto open.
//
// A message is a send WQE, keyed by (host, QPN, WQE index); its stages, in order:
//   post        post_send called (driver)
//   doorbell    the SQ doorbell that covers the WQE reached the HCA
//   wqe_fetch   the WQE reached the HCA: the firmware's DMA read of its slot completed (a
//               read inside the QP's send ring, as the driver registered it; an inline
//               WQE's slot holds its data too), or, posted by BlueFlame, the MMIO write
//               that carried it arrived (no read)
//   first_out   the message's first packet started to leave the port
//   last_out    its last packet had left (end of serialization; a retransmission moves it)
//   ack         RC: the ACK (or last READ response) that covers the last PSN was handed to
//               the firmware
//   cqe         the firmware's DMA write of the send CQE had left the HCA (signaled WQEs)
//   poll        poll_cq returned the completion (driver)
// Each stage is an instant ("ph":"i", args: qpn, wqe, wr_id); the time between consecutive
// stages a message reached is a slice ("ph":"X", cat "message") named by the stage it ends
// in. Timestamps are in microseconds with picosecond digits.
//
// Tracks (Perfetto and chrome://tracing need the X slices of one track to nest, and the
// messages of one QP overlap while the send queue is pipelined): pid = host node, and in it
// named threads
//   "firmware core"      each firmware event the core handled, a slice named by its kind
//                        (doorbell, command, rx_packet, tx_done, timer; cat "firmware",
//                        args: cycles charged); the core handles one event at a time;
//   "QP n slot k"        the messages of QP n, each on the lowest slot free for its whole
//                        life (post to its last stage), so no two slices of a track overlap;
//   "QP n receive"       receive completions: instants "recv_cqe" and "recv_poll".
//
// Messages of one QP leave in WQE order (IBA 10.8.3: a send queue is processed in order),
// so the n-th new message on the wire (by first PSN) is the n-th WQE.
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "models/hca/hca_observer.h"

namespace ibvp::metrics {

class Timeline : public hca::HcaObserver {
 public:
  enum Stage : uint8_t { post, doorbell, wqe_fetch, first_out, last_out, ack, cqe, poll, kStages };
  static const char* stage_name(Stage s);
  static constexpr uint64_t kUnset = ~uint64_t{0};

  struct Message {
    uint64_t wr_id = 0;
    uint64_t t[kStages];
    Message() {
      for (uint64_t& x : t) x = kUnset;
    }
  };
  using Key = std::tuple<uint32_t, uint32_t, uint32_t>;  // node, qpn, wqe index

  // node_names: process names by topology node.
  explicit Timeline(std::vector<std::string> node_names) : names_(std::move(node_names)) {}

  void on_doorbell(uint32_t node, uint32_t qpn, uint32_t kind, uint32_t value, uint64_t t_ps,
                   uint32_t wqe_bytes) override;
  void on_dma_read(uint32_t node, uint64_t address, uint32_t bytes, uint64_t issued_ps, uint64_t done_ps) override;
  void on_dma_write(uint32_t node, uint64_t address, const void* data, uint32_t bytes, uint64_t issued_ps,
                    uint64_t left_ps) override;
  void on_packet_out(uint32_t node, uint32_t qpn, const ib::Packet& p, uint64_t start_ps, uint64_t end_ps) override;
  void on_packet_in(uint32_t node, const ibvp_rx_packet& p, uint64_t t_ps) override;
  void on_create_qp(uint32_t node, uint32_t qpn, uint64_t sq_addr, uint32_t sq_entries, uint32_t sq_stride) override;
  void on_create_cq(uint32_t node, uint32_t cqn, uint64_t ring, uint32_t entries) override;
  void on_post_send(uint32_t node, uint32_t qpn, uint32_t wqe_index, uint64_t wr_id, uint64_t t_ps) override;
  void on_poll_return(uint32_t node, uint32_t qpn, bool send, uint32_t wqe_index, uint64_t wr_id,
                      uint64_t t_ps) override;
  void on_firmware_event(uint32_t node, uint32_t kind, uint64_t start_ps, uint64_t end_ps, uint64_t cycles) override;

  const std::map<Key, Message>& messages() const { return messages_; }
  // The Chrome trace JSON, one event per line.
  void write(std::ostream& out) const;

 private:
  struct SendQueue {
    uint64_t sq_addr = 0;
    uint32_t entries = 0;
    uint32_t stride = IBVP_SEND_WQE_BYTES;  // bytes per slot
    uint32_t doorbell = 0;  // producer index of the last SQ doorbell
    uint32_t fetched = 0;   // WQEs read from the ring: the next read starts at or after this one
    uint32_t started = 0;   // messages seen on the wire
    std::map<uint32_t, uint32_t> first_psn;  // first PSN -> WQE index (retransmissions find theirs)
    uint32_t current = 0;                    // WQE index of the message whose packets leave now
    std::vector<std::pair<uint32_t, uint32_t>> unacked;  // (last PSN, WQE index), RC
  };
  struct CompletionRing {
    uint32_t node, cqn;
    uint64_t ring, bytes;
  };
  struct Instant {
    uint32_t node, qpn;
    const char* name;
    uint64_t t_ps;
    uint64_t wr_id;
  };
  void mark(uint32_t node, uint32_t qpn, uint32_t index, Stage s, uint64_t t_ps, bool first_only = true);

  std::vector<std::string> names_;
  std::map<std::pair<uint32_t, uint32_t>, SendQueue> sqs_;  // (node, qpn)
  std::vector<CompletionRing> cqs_;
  std::map<Key, Message> messages_;
  std::vector<Instant> instants_;  // receive side
  struct FirmwareEvent {
    uint32_t node, kind;
    uint64_t start_ps, end_ps, cycles;
  };
  std::vector<FirmwareEvent> fw_events_;
};

}  // namespace ibvp::metrics
