#pragma once
// The programmable HCA: a register space (BAR0) reached by MMIO, doorbell queues per
// priority class, a DMA engine, a tx engine that segments messages into MTU packets, an rx
// engine that checks packets, a CA port (VL buffers, credits, IBA VL arbitration, static
// IPD), and an embedded core that runs a firmware image through the HAL
// (firmware/hal/ibvp_hal.h). Everything the transport does (QP contexts, PSNs, ACKs,
// receive matching, completions) is the firmware's; the hardware moves bytes and packets.
//
//   host MMIO ─► registers ─► doorbell queues / command ─► core events ─► firmware
//   firmware ─► HAL: dma_read/dma_write, tx_post ─► tx engine: payload DMA ─► VL queues
//   VL queues ─► VL arbitration, credits, IPD ─► tx ─► Link ─► ... ─► rx ─► rx engine
//   rx engine: CRC and length checks ─► core event ─► firmware: rx_scatter, CQE dma_write
//
// Timing: a register write acts when it arrives (the bus's annotated delay); a register
// read waits for that time. The core charges event_cycles per event and hal_call_cycles
// per HAL call at core_clock_hz, and stalls on dma_read; posted writes do not stall it.
// The tx engine keeps up to dma_max_outstanding_reads payload reads in flight; a message's
// packets are ready tx_pipeline_delay after its last payload byte arrived. A packet reaches
// the firmware rx_pipeline_delay after its tail arrived and holds its rx buffer space (and
// the credit) until the firmware's handler returns. The HCA's agenda is on sim::Scheduler;
// the core's thread sleeps on it, or runs ahead of the kernel's time while nothing else can
// happen before the time it reaches (docs/hca.md, "Execution model"). See docs/hca.md.
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/passthrough_target_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "firmware/hal/ibvp_hal.h"
#include "models/hca/firmware_guard.h"
#include "models/hca/firmware_image.h"
#include "models/hca/hca_observer.h"
#include "models/ib/mad_datagram.h"
#include "models/ib/packet.h"
#include "models/link/fabric_payload.h"
#include "models/link/link_rate.h"
#include "models/link/port_state.h"
#include "models/link/vl_arbiter.h"
#include "models/sim/observer.h"
#include "models/sim/timed_queue.h"

namespace ibvp::hca {

struct HcaConfig {
  // CA port: the same names as EndpointConfig, so link::declare_port_params applies.
  uint8_t data_vls = 1;
  uint32_t vl_buffer_bytes = 4 * 4160;  // receive buffer per data VL: four 4 KiB-MTU packets
  uint32_t vl15_buffer_bytes = 2 * 320;
  link::VlArbConfig vlarb = link::VlArbConfig::round_robin(1);
  std::array<uint8_t, 16> sl2vl{};
  // Transmit buffer per data VL (packets built and waiting for the port); a doorbell whose
  // VL buffer is full can be skipped by the firmware (seed 003 Sec. 3.3.1).
  uint32_t tx_vl_buffer_bytes = 4 * 4160;

  // Embedded core.
  uint64_t core_clock_hz = 1'000'000'000;
  uint32_t event_cycles = 100;    // dispatching one event to the firmware
  uint32_t hal_call_cycles = 10;  // every HAL call

  // Engines.
  uint32_t dma_max_outstanding_reads = 8;  // tx engine payload reads in flight
  sc_core::sc_time tx_pipeline_delay = sc_core::sc_time(50, sc_core::SC_NS);  // header build, ICRC/VCRC
  sc_core::sc_time rx_pipeline_delay = sc_core::sc_time(50, sc_core::SC_NS);  // CRC check, header parse
  // BlueFlame buffer per QP (IBVP_REG_BF_SIZE): 0, none (every send WQE is fetched by DMA),
  // or 64..256 bytes: the driver writes a lone WQE there with its inline data, and the
  // firmware takes it from the doorbell (docs/hca.md, "Inline data and BlueFlame").
  uint32_t blueflame_bytes = 0;
  uint32_t max_qps = 1024;         // QPNs with doorbells
  uint32_t doorbell_classes = 4;   // priority classes of doorbell queues

  // What the port's subnet management agent reports (IBA 14.2.5; the firmware's SMA reads
  // them from registers): GUIDs and NodeDescription from the topology, the link as cabled,
  // and the PortState the port starts in. Active: the subnet manager programmed the fabric
  // out of band before the run; an in-band SM starts the ports in Init (IBA 7.2).
  uint64_t node_guid = 0;
  uint64_t port_guid = 0;
  std::string node_description;
  uint8_t lmc = 0;  // the port takes DLIDs lid .. lid + 2^lmc - 1 (IBA 7.11.1)
  link::Width link_width = link::Width::x4;
  link::Speed link_speed = link::Speed::sdr;
  uint8_t port_state = IBVP_PORT_ACTIVE;

  std::string firmware_image;  // path of the image (.so)
  std::string firmware_args;   // passed to ibvp_fw_init
  // Wall-clock limit of one firmware call (an event's handler, init, fini) before the run is
  // ended as hung (models/hca/firmware_guard.h); zero: no limit.
  sc_core::sc_time firmware_watchdog = sc_core::sc_time(10, sc_core::SC_SEC);
  // Core cycles one event's handler may charge (event_cycles, HAL calls, consume_cycles)
  // before the run ends as hung (models/hca/firmware_guard.h); zero: no budget. Simulated,
  // so a handler that loops through HAL calls is stopped at the same point on every run.
  uint64_t firmware_cycle_budget = 1'000'000'000;
};

struct RxItem;     // a received packet on its way to the firmware (hca.cpp)

// Objects made per packet and reused once freed: the hot path allocates nothing after the
// first packets (issue 15 part 2). Owns everything it ever made, so what is still in use
// when the model goes (queued, on the wire) is freed with it.
template <class T>
class FreeList {
 public:
  template <class... A>
  T* make(A&&... a) {
    if (free_.empty()) {
      all_.push_back(std::make_unique<T>(T{std::forward<A>(a)...}));
      return all_.back().get();
    }
    T* t = free_.back();
    free_.pop_back();
    *t = T{std::forward<A>(a)...};
    return t;
  }
  void put(T* t) { free_.push_back(t); }

 private:
  std::vector<std::unique_ptr<T>> all_;
  std::vector<T*> free_;
};
struct HalBridge;  // the C entry points of the HAL (hca.cpp)

class Hca : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Hca> registers;  // BAR0, from the host bus's mmio_out
  tlm_utils::simple_initiator_socket<Hca> dma;     // to the host bus's dma_in
  tlm_utils::simple_initiator_socket<Hca> tx;      // to a Link, as ep::Endpoint
  tlm_utils::passthrough_target_socket<Hca> rx;  // spawns no thread (SYSTEMC_NOTES.md)

  SC_HAS_PROCESS(Hca);
  // Loads and starts the firmware image (throws FirmwareError).
  Hca(sc_core::sc_module_name name, uint32_t node, uint16_t lid, const HcaConfig& cfg, const link::LinkRate& rate,
      ib::PacketPool& packets, link::PayloadPool& payloads, sim::Probe& probe);
  ~Hca() override;

  // Credits the far end advertises (its receive buffer) per data VL.
  void set_peer_buffer(uint8_t vl, uint32_t bytes) { credits_.set_limit(vl, bytes / ib::kCreditBlockBytes); }
  // The CA port's VL arbitration tables (IBA 7.6.9), as the subnet manager sets them with a
  // VLArbitrationTable Set (IBA 14.2.5.9): seed 002's connection manager writes its admitted
  // high-priority table here, and again when a connection ends mid-run. The new table
  // starts from its first entry; the arbiter is consulted only inside the port's events.
  void set_vlarb(const link::VlArbConfig& cfg) { arbiter_ = link::VlArbiter(cfg); }
  const link::VlArbConfig& vlarb() const { return arbiter_.config(); }

  uint32_t node() const { return node_; }
  // The port's base LID, LMC and PortState: the builder's until the SM sets them in band
  // (the firmware's SMA writes IBVP_REG_PORT_LID, _LMC, _STATE).
  uint16_t lid() const { return lid_; }
  uint8_t lmc() const { return lmc_; }
  uint8_t port_state() const { return port_state_; }
  // A scenario link event (docs/management.md): the CA port's cable goes down (PortState
  // Down; everything queued to send is discarded, everything arriving dropped, as link_down)
  // or comes back, training to `state_when_up` (Init for an SM in band, Active out of band).
  void set_link(bool up, uint8_t state_when_up);
  bool link_up() const { return !link_down_; }
  const std::array<uint8_t, 16>& sl2vl() const { return cfg_.sl2vl; }
  const HcaConfig& config() const { return cfg_; }
  const FirmwareImage& firmware() const { return *image_; }
  const link::PortCounters& counters() const { return counters_; }
  uint64_t fw_counter(uint32_t counter) const { return counter < fw_counters_.size() ? fw_counters_[counter] : 0; }
  uint64_t firmware_events() const { return fw_events_; }
  uint64_t rx_dropped() const { return rx_dropped_; }
  // Payload bytes the tx engine has read from host memory by DMA (inline data is not read).
  uint64_t tx_payload_read_bytes() const { return tx_payload_read_bytes_; }  // by the rx engine (CRC, length, DLID, VL15)
  // Packets of the fabric's pool this HCA holds that are not in flight: built and not yet
  // handed to the wire (the transmit VL queues), and delivered but still in the rx buffer
  // until the firmware's handler returns. The Fabric subtracts them from the pool's live
  // packets, so in_flight counts the packets injected and neither delivered nor dropped.
  uint64_t packets_held() const { return tx_built_ + rx_held_; }
  // Time of `cycles` core cycles: ceil(cycles * 1e12 / core_clock_hz) ps.
  sc_core::sc_time cycles(uint64_t n) const;
  uint64_t cycles_ps(uint64_t n) const;
  // Firmware log lines (hal->log), kept for tests and the run's firmware.log; models never print.
  struct LogLine {
    uint64_t time_ps;  // simulated time of the call
    int level;         // IBVP_LOG_*
    std::string text;
  };
  const std::vector<LogLine>& firmware_log() const { return log_; }
  // Core cycles charged to firmware events so far (event_cycles, HAL calls, consume_cycles).
  uint64_t firmware_cycles() const { return fw_cycles_; }

  // Test hook: the rx engine offers every packet that passed its checks to `drop` (decoded
  // headers as the firmware would see them) and discards those for which it returns true,
  // as if they had been lost on the wire; counted in test_rx_dropped(). Tests use it to
  // lose chosen data packets, ACKs or READ responses (tests/hca/test_reliability.cpp).
  void set_test_rx_drop(std::function<bool(const ibvp_rx_packet&)> drop) { test_rx_drop_ = std::move(drop); }
  uint64_t test_rx_dropped() const { return test_rx_dropped_; }
  // Test hook: packets for which `mark` returns true reach the firmware with FECN set, as if
  // a switch had marked them (tests/hca/test_congestion.cpp).
  void set_test_rx_mark(std::function<bool(const ibvp_rx_packet&)> mark) { test_rx_mark_ = std::move(mark); }

  // The CA port's VL15 queue (issue 11; docs/hca.md, Management packets): a subnet
  // management packet (a MAD: a UD SEND Only to QP0, IBA 13.5.1) handed to the port as the
  // HCA's subnet management interface would, without host, driver or firmware. It leaves
  // before every data VL (IBA 7.6.9), without credits (7.9.4). `flow` and `dst_node` tag it
  // for the recorder; `created_ps` is when its sender made it (latency counts from then).
  void send_management(uint16_t dlid, uint32_t dst_node, uint32_t payload_bytes, uint32_t flow, uint64_t created_ps);
  // Management packets received on VL15 and consumed by the port's management agent.
  uint64_t management_received() const { return management_received_; }

  // Host management software on QP0 and QP1 (issue 16): an SM or an external umad client
  // sends a MAD from this port (the port writes its LID as SLID, the permissive LID while it
  // has none) and receives the MADs the firmware passes up: responses, traps, reports and
  // the requests its SMA and PMA do not serve (docs/hca.md, Management datagrams). The port
  // carries the 256 bytes in the packet's payload, so captures and the receiver see the MAD
  // byte for byte. QP0 goes on VL15 without credits, QP1 (the GSI) on the VL of m.sl, credited
  // like data. A directed-route SMP with HopPointer 0 passes through the firmware's SMI
  // (which steps it, IBA 14.2.2; one the host stepped itself, as Linux's kernel SMI does,
  // leaves at once), one with HopCount 0 and a MAD to the port's own LID are answered by the
  // firmware without the wire. Any other dest_qp, or an SL the port maps to no data VL,
  // throws std::invalid_argument.
  void send_mad(const ib::MadDatagram& m, uint64_t created_ps);
  // `at_ps`: simulated time the firmware handed the MAD to the host.
  using MadReceiver = std::function<void(const ib::MadDatagram& m, uint64_t at_ps)>;
  void set_mad_receiver(MadReceiver r) { mad_receiver_ = std::move(r); }

  // Observers' bookkeeping, invisible to the firmware: the packets QP `qpn` sends belong to
  // scenario flow `flow` (Packet::flow), so results read per flow as with fabric-only
  // endpoints. Packets of other QPs (ACKs, CNPs, perftest) carry ib::kNoFlow.
  // `reserved_bps` (0: none) is the rate the flow reserved, which its packets carry to the
  // switches' rate schedulers (Packet::reserved_bps; seed 003 Sec. 4.2 puts it in the header).
  void tag_flow(uint32_t qpn, uint32_t flow, uint64_t reserved_bps = 0) {
    flow_of_qp_[qpn] = flow;
    if (reserved_bps) reserved_of_qp_[qpn] = reserved_bps;
  }
  // The doorbell priority class of QP `qpn` (what the firmware set at CREATE_QP).
  uint32_t qp_class(uint32_t qpn) const { return qpn < qp_class_.size() ? qp_class_[qpn] : 0; }
  // Observers' bookkeeping for video flows (issue 11): the packet QP `qpn` sends with PSN
  // `psn` carries a piece of video frame `frame` (Packet::frame, frame_packets), created at
  // `created_ps` (Packet::created, so the recorder measures the frame from its creation, as
  // for fabric-only sources). A retransmission has the same PSN and gets the same tag; the
  // host program removes it when the message has completed (untag_frame).
  struct FrameTag {
    uint32_t frame;
    uint32_t frame_packets;
    uint64_t created_ps;
    uint32_t piece = 0;  // position in the frame, from 0
    char type = 0;       // 'I', 'P', 'B' (0: not known); selective dropping reads it
  };
  void tag_frame(uint32_t qpn, uint32_t psn, const FrameTag& tag) { frame_tags_[frame_key(qpn, psn)] = tag; }
  void untag_frame(uint32_t qpn, uint32_t psn) { frame_tags_.erase(frame_key(qpn, psn)); }
  // Observers' bookkeeping for seed 002's CBR connections on HCA hosts (apps::CbrStreams):
  // the packet QP `qpn` sends with PSN `psn` belongs to connection `connection`
  // (Packet::connection) and was due at `created_ps` (Packet::created, its nominal time, so
  // host and HCA delays count against the connection's deadline). Tags of a QP form a FIFO
  // in PSN order and each is used once, when its packet is built: the programs that use it
  // post one-packet UD SENDs, which a QP numbers with consecutive PSNs and never resends.
  // A tag whose PSN the QP has passed (its WQE failed) is discarded. `reserved_bps` is
  // what the connection reserved, carried to the switches' rate schedulers
  // (Packet::reserved_bps).
  void tag_connection(uint32_t qpn, uint32_t psn, uint32_t connection, uint64_t created_ps,
                      uint64_t reserved_bps = 0) {
    connection_tags_[qpn].push_back({psn & 0xFFFFFF, connection, created_ps, reserved_bps});
  }
  // Tags posted and not yet used, over every QP (tests: none may be left behind).
  size_t connection_tags_pending() const {
    size_t n = 0;
    for (const auto& [qpn, q] : connection_tags_) n += q.size();
    return n;
  }

  // Reports doorbells, firmware DMA, packets out and in (hca_observer.h); null: none.
  void set_observer(HcaObserver* o) { observer_ = o; }
  HcaObserver* observer() const { return observer_; }

 private:
  struct CoreEvent {
    uint32_t kind;
    uint32_t arg;
    uint64_t cookie;
    uint64_t time_ps;
    RxItem* rx;
  };
  struct TxJob {
    ibvp_tx_desc desc;
    uint32_t wire_bytes;  // all its packets, reserved in the VL's tx buffer
    bool inline_data = false;  // tx_post_inline: the payload is here, no DMA read
    std::array<uint8_t, IBVP_MAX_INLINE_DATA> payload{};
    // tx_post_gather (v8): the payload's SGEs, read in order; 0: one buffer at payload_addr.
    uint32_t num_sge = 0;
    std::array<ibvp_sge, IBVP_MAX_SGE> sge{};
  };
  // A doorbell as filed, with the WQE a BlueFlame write carried (db.wqe_bytes of it).
  // `seen`: the firmware has peeked it, so a later write no longer changes it.
  struct FiledDoorbell {
    ibvp_doorbell db;
    std::array<uint8_t, IBVP_BF_STRIDE> wqe;
    bool seen = false;
  };
  struct BfWrite {  // a BlueFlame write on its way to being filed (kBfWrite)
    uint32_t qpn;
    uint32_t bytes;
    std::array<uint8_t, IBVP_BF_STRIDE> wqe;
  };
  // A built packet in a VL queue. Its own copies of the VL and size: once sent, the
  // Packet belongs to the fabric.
  struct TxPacket {
    ib::Packet* packet;
    uint32_t src_qp;
    uint32_t ipd;
    uint16_t dlid;
    uint32_t dlid_ipd;  // static rate per destination
    uint32_t cc_ipd_q8;  // congestion control gap of the flow (src_qp, dlid), 1/256 packet times
    uint32_t bytes;
    uint8_t vl;
    bool notify;  // the last packet of a descriptor posted with notify_done
    uint64_t cookie;
    bool held;    // IBVP_TXF_HOLD: waits for a tx_release of src_qp
  };
  enum ActionKind : uint16_t { kRegWrite, kTxEnqueue, kWake, kTxEnd, kRxHead, kRxReady, kTimer, kBfWrite, kTxWake, kTimerAlarm, kTxResume };

  // Register interface.
  void reg_b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int reg_transport_dbg(tlm::tlm_generic_payload& trans);  // register reads without time
  bool reg_writable_by_host(uint32_t offset) const;
  uint32_t reg_value(uint32_t offset) const;
  void apply_reg_write(uint32_t offset, uint32_t value);
  void file_doorbell(uint32_t db_class, uint32_t qpn, uint32_t kind, uint32_t value, const BfWrite* bf = nullptr);
  // A BlueFlame write: a whole send WQE at IBVP_REG_BF_BASE + qpn * IBVP_BF_STRIDE.
  bool accept_bf_write(uint64_t off, tlm::tlm_generic_payload& trans, const sc_core::sc_time& delay);
  void raise(uint32_t kind, uint32_t arg = 0, uint64_t cookie = 0, RxItem* rx = nullptr);

  // Agenda (served by sim::Scheduler).
  void dispatch(const sim::Action& a);

  // Embedded core.
  void core_thread();
  void charge(uint64_t n);
  void finish_rx(RxItem* item);

  // Tx engine and port.
  void run_tx();
  bool read_tx_window();  // false: waiting for a payload read slot (kTxResume)
  uint32_t queue_tx_packet(uint32_t index, uint64_t ready_ps);
  uint32_t message_wire_bytes(const ibvp_tx_desc& d) const;
  ib::Packet* build_packet(const ibvp_tx_desc& d, uint32_t index, uint32_t count, const uint8_t* payload,
                           uint32_t bytes);
  void try_send();
  void send(uint8_t vl);
  void tx_end(TxPacket* t);
  void schedule_wake(uint64_t when_ps);
  tlm::tlm_sync_enum on_tx_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);

  // Rx engine.
  tlm::tlm_sync_enum on_rx(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void rx_head(ib::Packet* p);
  void rx_ready(ib::Packet* p);
  void rx_discard(ib::Packet* p);  // frees buffer space, returns the credit
  // The packet's wire bytes up to its ICRC (encode_into_without_vcrc) in a buffer reused
  // for every packet: the tx and rx engines allocate nothing per packet.
  const uint8_t* encode_scratch(const ib::Packet& p);
  std::vector<uint8_t> wire_scratch_;

  // HAL services (the C trampolines in hca.cpp call these).
  friend struct HalBridge;
  uint32_t hal_reg_read(uint32_t offset);
  void hal_reg_write(uint32_t offset, uint32_t value);
  int hal_dma_read(uint64_t address, void* buf, uint32_t len);
  int hal_dma_write(uint64_t address, const void* buf, uint32_t len);
  uint32_t hal_doorbell_count(uint32_t db_class);
  int hal_doorbell_peek(uint32_t db_class, uint32_t index, ibvp_doorbell* out);
  int hal_doorbell_take(uint32_t db_class, uint32_t index);
  int hal_doorbell_set_class(uint32_t qpn, uint32_t db_class);
  uint32_t hal_tx_space(uint32_t vl);
  int hal_tx_post(const ibvp_tx_desc* d);
  // tx_post's checks and the job queued (with its inline payload or gather list), and the
  // tx engine started.
  int post_tx(const ibvp_tx_desc* d, const void* inline_payload, const ibvp_sge* sges, uint32_t num_sge);
  int hal_tx_post_inline(const ibvp_tx_desc* d, const void* payload);
  int hal_tx_post_gather(const ibvp_tx_desc* d, const ibvp_sge* sges, uint32_t num_sge);
  int hal_doorbell_wqe(uint32_t db_class, uint32_t index, void* buf, uint32_t len);
  int hal_tx_release(uint32_t src_qp, uint32_t packets);
  int hal_rx_read(uint32_t offset, void* buf, uint32_t len);
  int hal_mad_send(const ibvp_mad* m);
  int hal_mad_to_host(const ibvp_mad* m);
  // A MAD's UD SEND Only into the port's VL15 queue (QP0) or its SL's data VL queue (QP1);
  // false when the SL maps to no data VL.
  bool queue_mad(const ib::MadDatagram& m, uint64_t created_ps);
  ib::Packet* mad_packet(const ib::MadDatagram& m, uint8_t vl, uint64_t created_ps);
  // A MAD the host sends to its own port goes to the firmware without the wire.
  void loop_back_mad(const ib::MadDatagram& m, uint8_t vl, uint64_t created_ps);
  bool takes_dlid(uint16_t dlid) const { return lid_ != 0 && dlid >= lid_ && uint32_t{dlid} - lid_ < (1u << lmc_); }
  uint64_t port_counter(uint32_t which) const;  // IBVP_PC_*
  void discard_tx_head(uint8_t vl);             // a data packet given to a port that is not Active
  int hal_rx_scatter(uint32_t offset, uint64_t address, uint32_t len);
  int hal_timer_set(uint32_t id, uint64_t delay_ps);
  int hal_timer_cancel(uint32_t id);
  void hal_counter_add(uint32_t counter, uint64_t delta);
  void hal_consume(uint64_t n);
  void hal_log(int level, const char* message);
  void hal_call();  // charges one HAL call
  // What the firmware guard reports if the call into the image about to start faults or hangs.
  FirmwareCallInfo call_info(const char* event) const;

  uint32_t node_;
  uint16_t lid_;
  HcaConfig cfg_;
  uint8_t lmc_ = 0;
  uint8_t port_state_ = IBVP_PORT_ACTIVE;
  bool link_down_ = false;  // set_link
  std::array<uint32_t, IBVP_VLARB_ENTRIES> vlarb_high_reg_{}, vlarb_low_reg_{};  // staged (VLARB_COMMIT)
  uint32_t vlarb_high_limit_reg_ = 0;
  uint32_t pc_latched_hi_ = 0;  // IBVP_REG_PC_*: the high half latched by the low half's read
  uint64_t rcv_errors_ = 0;     // IBVP_PC_RCV_ERRORS
  link::LinkRate rate_;
  ib::PacketPool& packets_;
  link::PayloadPool& payloads_;
  sim::Probe& probe_;
  sim::TimedQueue agenda_;
  std::unique_ptr<FirmwareImage> image_;
  ibvp_hal hal_{};
  void* fw_ = nullptr;

  // Registers.
  uint32_t cmd_mailbox_lo_ = 0, cmd_mailbox_hi_ = 0, cmd_opcode_ = 0, cmd_go_ = 0, cmd_status_ = 0, cmd_out_ = 0;
  std::deque<std::pair<uint32_t, uint32_t>> reg_writes_;  // (offset, value) in arrival order
  std::vector<std::deque<FiledDoorbell>> doorbells_;       // per class
  std::deque<BfWrite> bf_writes_;                          // BlueFlame writes in arrival order
  std::vector<uint8_t> qp_class_;

  // Core.
  std::deque<CoreEvent> events_;
  sc_core::sc_event core_wake_;
  bool core_idle_ = false;  // the core waits on core_wake_ for an event
  uint64_t ps_per_cycle_ = 0;  // the core's clock period when a whole number of ps, else 0
  bool in_core_ = false;  // HAL calls charge time only from the core's thread
  RxItem* rx_current_ = nullptr;
  uint64_t fw_events_ = 0;
  std::vector<uint64_t> fw_counters_;
  std::vector<LogLine> log_;
  uint64_t fw_cycles_ = 0;     // firmware_cycles()
  uint64_t event_charged_ = 0;  // cycles charged to the event being handled
  const char* event_name_ = "";  // the event being handled (cycle budget report)
  std::string last_log_;         // the text of log_.back(), for fault reports (FirmwareCallInfo)
  std::unordered_map<uint32_t, uint64_t> timers_;  // id -> generation armed
  uint64_t timer_generation_ = 0;
  // Firmware timers wait here until they are due within kTimerHorizonPs, then go to the
  // agenda: nearly all are cancelled long before they are due (an RC QP's ACK timer, set per
  // message for 4.096 us * 2^timeout and cancelled by the ACK), and the Scheduler's heap,
  // which every fabric action goes through, would hold them all (issue 15 part 2). Each takes
  // its place among equal times when it is set (TimedQueue::reserve_seq), so the order is
  // that of pushing it at once; a kTimerAlarm action pushes those that near.
  struct FwTimer {
    uint64_t when_ps;
    uint64_t seq;  // reserved at hal_timer_set
    uint32_t id;
    uint64_t gen;
  };
  static constexpr uint64_t kTimerHorizonPs = 1'000'000;  // 1 us
  std::vector<FwTimer> fw_timers_;                 // set, not yet on the agenda
  uint64_t timer_alarm_ps_ = ~uint64_t{0};         // the earliest kTimerAlarm pending
  void push_near_timers();
  void forget_fw_timer(uint32_t id);

  // Tx engine: a state machine run by the agenda's actions (kTxWake at a tx_post, kTxResume
  // when a payload read slot frees), not a thread: no thread switch per message (issue 15
  // part 2). The job being read and the packet it reads next.
  std::deque<TxJob> tx_jobs_;
  TxJob tx_job_{};
  bool tx_in_job_ = false;   // tx_job_ has packets left to read
  bool tx_waiting_ = false;  // all payload reads in flight: a kTxResume is pending
  uint32_t tx_next_ = 0;     // the packet of tx_job_ read next
  uint32_t tx_queued_bytes_ = 0;  // its packets' bytes queued so far
  std::deque<uint64_t> dma_reads_done_ps_;  // completion times of payload reads in flight
  std::vector<uint8_t> tx_data_;            // the payload of the job being read
  uint64_t tx_last_ready_ps_ = 0;  // payload of the last job ready: an inline job's packets follow it
  std::array<uint32_t, ib::kMaxVls> tx_reserved_{};  // bytes in each VL's tx buffer
  uint64_t tx_dma_errors_ = 0;
  uint64_t tx_payload_read_bytes_ = 0;

  // Port.
  std::array<std::deque<TxPacket*>, ib::kMaxVls> txq_;
  link::VlArbiter arbiter_;
  link::TxCredits credits_;
  link::RxBuffers buffers_;
  link::CreditWaitClock credit_wait_;
  link::PortCounters counters_;
  std::unordered_map<uint32_t, uint64_t> next_allowed_ps_;  // static IPD per sending QP
  std::unordered_map<uint16_t, uint64_t> dlid_next_allowed_ps_;  // static IPD per DLID
  static uint64_t flow_key(uint32_t src_qp, uint16_t dlid) { return uint64_t{src_qp} << 16 | dlid; }
  std::unordered_map<uint64_t, uint64_t> flow_next_allowed_ps_;  // congestion control per (QP, DLID)
  std::unordered_map<uint32_t, uint32_t> flow_of_qp_;  // tag_flow
  std::unordered_map<uint32_t, uint64_t> reserved_of_qp_;  // tag_flow's reserved rates
  static uint64_t frame_key(uint32_t qpn, uint32_t psn) { return uint64_t{qpn} << 24 | (psn & 0xFFFFFF); }
  std::unordered_map<uint64_t, FrameTag> frame_tags_;  // tag_frame, by (QPN, PSN)
  struct ConnectionTag {
    uint32_t psn;
    uint32_t connection;
    uint64_t created_ps;
    uint64_t reserved_bps;
  };
  std::unordered_map<uint32_t, std::deque<ConnectionTag>> connection_tags_;  // tag_connection, by QPN
  void apply_connection_tag(uint32_t src_qp, ib::Packet& p);
  FreeList<TxPacket> tx_packets_;  // every TxPacket built
  FreeList<RxItem> rx_items_;      // every RxItem made
  std::unordered_map<uint32_t, uint32_t> releases_;    // tx_release: held packets of a QP that may go
  uint64_t busy_until_ = 0;
  uint64_t wake_ps_ = ~uint64_t{0};
  uint64_t rx_dropped_ = 0;
  uint64_t management_received_ = 0;
  MadReceiver mad_receiver_;
  uint64_t tx_built_ = 0, rx_held_ = 0;  // packets_held()
  std::function<bool(const ibvp_rx_packet&)> test_rx_drop_;
  uint64_t test_rx_dropped_ = 0;
  std::function<bool(const ibvp_rx_packet&)> test_rx_mark_;
  HcaObserver* observer_ = nullptr;
};

}  // namespace ibvp::hca
