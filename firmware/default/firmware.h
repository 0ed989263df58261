// The ibvp HCA firmware's shared state: one Firmware object per HCA holds every QP, CQ and
// MR context, the doorbell and QP scheduling state and the congestion control flows, and
// declares the handlers. It talks to the hardware only through the HAL
// (firmware/hal/ibvp_hal.h). The transport it implements (UD, UC, RC SEND and SEND with
// immediate, RDMA WRITE (with immediate), RC RDMA READ and atomics, RC reliability, completions) is
// split by concern over the .cpp files beside this header; firmware.cpp lists them.
//
// Images are built from this code with their policies (policies.h): which waiting doorbell
// the core serves next, which QP sends next, the response to congestion marks and the
// cycle costs. image.cpp is the default (seed 003 Sec. 3.3.1 prioritized doorbells, the
// policies firmware_args choose: "sched=vc", "cc=lipd"; docs/hca.md lists the arguments);
// firmware/examples/ holds images with policies of their own.
#pragma once

#include <cstdint>
#include <array>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "firmware/cc/cct.h"
#include "firmware/cc/response.h"
#include "firmware/default/pma.h"
#include "firmware/default/policies.h"
#include "firmware/default/sma.h"
#include "firmware/hal/ibvp_hal.h"
#include "models/sched/virtual_clock.h"  // pure C++, shared with the switch

namespace ibvp::fw {

enum class DoorbellPolicy {
  // Seed 003 Sec. 3.3.1: one queue per priority class, FCFS within a class, higher class
  // first. A QP whose VL's tx buffer is full is passed over by the QP scheduler, not
  // waited for.
  prioritized,
  // Arrival order across all classes (the classes are ignored).
  fcfs,
};

// The cycle-cost table: firmware work charged with consume_cycles, from the image's
// argument string ("wqe_cycles=40,rx_cycles=60,cmd_cycles=200") and an image's
// Policies::cycle_costs; all default to 0, so by default the firmware's cost is what the
// core charges per event and per HAL call.
struct StepCosts {
  uint64_t wqe_cycles = 0;  // per send WQE executed
  uint64_t rx_cycles = 0;   // per packet received
  uint64_t cmd_cycles = 0;  // per command
  uint64_t mad_cycles = 0;  // per MAD the SMA or PMA answers (IBVP_EV_MAD)
  // Per event kind (index IBVP_EV_*), charged when the handler starts.
  uint64_t event_cycles[8] = {};
};

// Which QP's next packet the tx engine gets when several QPs have work ("sched=...").
enum class QpSchedPolicy {
  fcfs,             // the oldest WQE first (fetch order), whole messages in turn
  strict_priority,  // seed 000 Sec. 2.3: one queue per SL, higher SL first, FCFS inside
  round_robin,      // one packet per QP in turn (QPN order)
  weighted_rr,      // `weight` packets per QP in turn (QpInitAttr::weight)
  virtual_clock,    // seed 003 Sec. 3.1: smallest auxVC first, auxVC += Vtick per packet
};

// Congestion control at the source (seed 004 Sec. 4 and 6), "cc=lipd,cc_rate=discrete".
// Per flow (sending QP, destination LID) a rate limit r in units of the port's rate R_max
// (R_min = R_max/256), starting at R_max: f_dec on each mark returned (an ACK with BECN, a
// CNP), f_inc on each unmarked ACK (UD and UC have no ACKs: each packet the flow sends
// counts as one). The port paces the flow's packets by it (ibvp_tx_desc::cc_ipd_q8).
// "cc=cct" is the CC annex's response instead (firmware/cc/cct.h): per flow an index into a
// table of IPDs, raised per mark returned and lowered by a timer; unmarked ACKs do nothing.
struct CcOptions {
  std::string response = "none";  // none, fimd, lipd, aimd (firmware/cc/response.h), cct (cct.h)
  bool discrete = true;            // IPD 0..255 whole packet times, or a gap of R_max/r - 1 packet times
  bool persist = true;             // keep a flow's rate when it goes idle, or start again at R_max
  // RC: at most `window` PSNs sent and not yet acknowledged per QP (every packet then asks
  // for an ACK); 0: no window. UD and UC have no ACKs: rate control only.
  uint32_t window = 0;
  // Packets beyond the window that may be fetched ahead and held in the tx buffer
  // (IBVP_TXF_HOLD) until an ACK opens the window: the next packet then leaves at once,
  // not after its WQE's scheduling and payload DMA. 0: fetch only when the window opens.
  uint32_t prefetch = 1;
  cc::CctOptions cct;  // cc=cct: the table and its CCTI_* settings
};

// How the tx engine's packets of several QPs' messages share the port ("mux=...", seed 003
// Sec. 3.3.1 and 5.3): one scheduling decision per packet, so messages interleave packet by
// packet (the flit-level multiplexing of the paper, at IBA's packet grain), or one decision
// per message, which then goes whole before the scheduler chooses again (the paper's
// message-level multiplexing: "transfer a complete message into the network").
enum class TxMultiplexing { packet, message };

struct SchedOptions {
  QpSchedPolicy policy = QpSchedPolicy::fcfs;
  TxMultiplexing mux = TxMultiplexing::packet;
  // VirtualClock counters: 0 = unbounded, auxVC <- max(auxVC, now) + Vtick (Zhang's
  // VirtualClock); n = finite n-bit counters with seed 003 Sec. 3.1's overflow rule.
  uint32_t vc_bits = 0;
  // Static rate per destination (IBA 9.11.2), "dlid_ipd=LID:IPD", repeatable.
  std::vector<std::pair<uint16_t, uint32_t>> dlid_ipd;
  CcOptions cc;
};

class Firmware {
 public:
  Firmware(const ibvp_hal* hal, DoorbellPolicy policy, const StepCosts& costs, const SchedOptions& sched,
           const Policies& plugins = Policies{});
  // Parses the argument string; false (and `error`) on an unknown key or a bad value.
  static bool parse_args(const char* args, StepCosts& out, SchedOptions& sched, std::string& error);
  void handle(const ibvp_fw_event& ev);

 private:
  struct Mr {
    bool valid = false;
    uint64_t addr = 0, length = 0;
    uint32_t pdn = 0, access = 0;
  };
  struct Cq {
    bool valid = false;
    uint64_t ring = 0;
    uint32_t entries = 0;
    uint32_t produced = 0;  // CQEs written; index = produced % entries, pass = produced / entries
    uint64_t event_addr = 0;
    uint32_t armed = 0;     // 0, 1 next completion, 2 next solicited completion
    uint32_t events = 0;
    // Moderation (IBVP_CMD_MODIFY_CQ): CQEs per event and the period in us (0: off), the
    // CQEs written since the CQ was armed, and whether the period's timer runs.
    uint32_t moderation_count = 0, moderation_period_us = 0;
    uint32_t since_armed = 0;
    bool period_timer = false;
  };
  // A receive WQE as the responder uses it (v8): the WQE with `length` the total of its SGEs,
  // and the SGEs (IBA 10.7.2.1), sge[0] the WQE's own.
  struct RecvWork : ibvp_recv_wqe {
    std::array<ibvp_sge, IBVP_MAX_SGE> sge{};
  };
  // A shared receive queue (IBA 10.2.9): its ring, the doorbell record the driver writes its
  // producer index to, and the WQEs fetched and not yet taken.
  struct Srq {
    bool valid = false;
    uint64_t ring = 0, db_record = 0;
    uint32_t entries = 0, pdn = 0;
    uint32_t fetched = 0;  // WQEs read from the ring
    std::deque<RecvWork> cache;
  };
  // A send WQE from its fetch to its completion.
  struct SendWork {
    ibvp_send_wqe wqe{};
    uint32_t wqe_counter = 0;  // send WQEs consumed up to and including this one
    uint64_t seq = 0;          // fetch order across all QPs (FCFS)
    uint32_t first_psn = 0;
    uint32_t psns = 1;         // PSNs it occupies (READ: one per response packet)
    uint32_t packets = 1;      // request packets on the wire (READ: the request only)
    uint32_t read_done = 0;    // READ: response packets received in order
    bool started = false;      // checked and given its PSNs
    // Fetched while nothing of its QP was queued or in flight: the start of a new flow for
    // cc_persist=0 (a saturated window-limited QP is never idle between its messages).
    bool new_flow = false;
    // IBVP_SEND_INLINE: the payload came with the WQE (its slot, or a BlueFlame doorbell).
    std::array<uint8_t, IBVP_MAX_INLINE_DATA> inline_data{};
    // v8: the gather list (wqe.sge_length is then its total); sge[0] is the WQE's own SGE.
    // A list the QP cannot take (over max_send_sge, or past the slot) fails at start_wqe.
    uint32_t num_sge = 1;
    bool bad_sge_list = false;
    std::array<ibvp_sge, IBVP_MAX_SGE> sge{};
  };
  struct Qp {
    bool valid = false;
    uint32_t type = 0, state = IBVP_QPS_RESET, pdn = 0, send_cqn = 0, recv_cqn = 0;
    uint64_t sq_addr = 0, rq_addr = 0;
    uint32_t sq_entries = 0, rq_entries = 0;
    uint32_t sq_stride = IBVP_SEND_WQE_BYTES, max_inline = 0;  // v6: send slot bytes, inline limit
    uint32_t rq_stride = IBVP_RECV_WQE_BYTES;                  // v8: receive slot bytes
    uint32_t max_send_sge = 1, max_recv_sge = 1;               // v8: SGEs per WQE
    uint32_t sq_pi = 0, sq_ci = 0;       // producer (doorbell) and consumer (WQEs fetched)
    uint32_t rq_pi = 0, rq_fetched = 0;  // receive WQEs posted and fetched into the cache
    std::deque<RecvWork> recv_cache;
    uint32_t srqn = 0;  // 1 + the SRQ it receives from; 0: its own receive queue
    uint32_t db_class = 0, ipd = 0;
    uint32_t qkey = 0, dest_qpn = 0, access = 0;
    uint32_t sq_psn = 0;  // next PSN to send
    uint32_t acked_psn = 0;  // RC requester: the PSNs before it are acknowledged (cc_window)
    uint32_t cc_held = 0;    // packets posted with IBVP_TXF_HOLD and not yet released (cc_prefetch)
    uint32_t epsn = 0;    // next PSN expected (responder)
    uint32_t msn = 0;     // messages completed as responder (AETH.MSN)
    uint16_t dlid = 0;
    uint8_t sl = 0;
    uint32_t mtu_bytes = 4096;
    // RDMA READs and atomics (IBA 9.4.5, 10.2.4): outstanding at once as requester, and the
    // responder resources that keep executed atomics' results for their duplicates. A QP
    // whose next WQE is over max_rd_atomic waits (rd_atomic_wait) until a response comes.
    uint8_t max_rd_atomic = 1, max_dest_rd_atomic = 1;
    bool rd_atomic_wait = false;
    struct AtomicResult {
      uint32_t psn = 0, msn = 0;
      uint64_t orig = 0;
    };
    std::deque<AtomicResult> atomic_results;  // newest last, at most max_dest_rd_atomic
    // Responder: the message in progress (a SEND into `current`, or an RDMA WRITE).
    bool in_message = false;
    bool in_write = false;
    bool message_failed = false;
    RecvWork current{};
    uint32_t current_offset = 0;
    uint64_t write_va = 0;
    uint32_t write_len = 0;
    bool nak_sent = false;  // a PSN sequence NAK is outstanding (IBA 9.7.5.2.1: send one)
    bool becn_pending = false;  // RC responder: a packet the next ACK covers arrived with FECN
    // Requester: fetched WQEs until they complete. sq[0, send_idx) have all their packets
    // posted (RC: waiting for the ACK); sq[send_idx] sends packet next_packet next.
    std::deque<SendWork> sq;
    uint32_t send_idx = 0, next_packet = 0;
    std::deque<SendWork> tx_wait;  // UD, UC: all packets posted, completed at TX_DONE
    // RC reliability (IBA 9.7.6.1): local ACK timeout 4.096 us * 2^timeout (0: infinite),
    // retries left of retry_cnt, reset when an ACK makes progress.
    uint8_t timeout = 14, retry_cnt = 7, retries_left = 7;
    bool timer_armed = false;
    // RNR (IBA 9.7.5.2.8). Responder: the timer code of its RNR NAKs, and whether one is
    // outstanding (later packets of the stream are dropped without a sequence NAK until the
    // refused PSN comes again). Requester: RNR retries (7: infinite) and left, and whether
    // it is waiting out an RNR NAK's timer before it sends again.
    uint8_t min_rnr_timer = 0, rnr_retry = 7, rnr_retries_left = 7;
    bool rnr_nak_sent = false;
    bool rnr_wait = false;
    // Scheduling.
    bool active = false;   // in active_ (has packets to send)
    uint32_t weight = 1;   // WRR packets per turn
    uint32_t rate_mbps = 0;  // VirtualClock reserved rate (its auxVC is in vc_)
  };

  // Events (firmware.cpp dispatches them).
  void on_doorbells();
  void on_command();
  void on_rx(const ibvp_rx_packet& rx);
  void on_tx_done(uint64_t cookie, uint32_t failed);
  // management.cpp. QP0 and QP1 (IBA 13.5): the SMA and PMA answer the requests they serve; the rest goes to
  // the host's management software.
  void on_mad(const ibvp_fw_event& ev);
  // Sends `resp` back to the requester of `rx`: through the port, or to the host when the
  // host asked its own port.
  void reply_mad(const ibvp_rx_packet& rx, bool from_host, uint16_t dlid, const ib::mad::Bytes& resp);

  void on_timer(uint32_t qpn);

  // Doorbells (doorbells.cpp).
  bool pick_doorbell(uint32_t& db_class, uint32_t& index);
  void serve(const ibvp_doorbell& db);
  void fetch_send_wqes(uint32_t qpn, Qp& qp);
  // One send WQE (its slot's or a BlueFlame doorbell's `bytes`) into the QP's send queue.
  void accept_send_wqe(uint32_t qpn, Qp& qp, const uint8_t* slot, uint32_t bytes);
  void fetch_recv_wqes(Qp& qp);
  // The receive WQE the next message takes: the QP's own, or its SRQ's (fetched on demand).
  bool recv_wqe_available(Qp& qp);
  RecvWork take_recv_wqe(Qp& qp);
  void return_recv_wqe(Qp& qp, const RecvWork& w);  // UC: an abandoned message's WQE
  // v8: a receive slot's WQE and SGEs (`bytes` of it) as the responder uses them.
  static RecvWork recv_work(const uint8_t* slot, uint32_t bytes);
  // Payload bytes [payload_offset, +len) of the packet being handled into bytes
  // [msg_offset, +len) of a message laid over `n` SGEs in order (IBA 10.7.2.1); with
  // `pdn`, each piece's region checked for local write (0 without). False: a piece outside
  // its region or a failed DMA write.
  bool scatter(const ibvp_sge* sge, uint32_t n, uint64_t msg_offset, uint32_t payload_offset, uint32_t len,
               const uint32_t* pdn);

  // Send scheduling (qp_scheduler.cpp: the eligible QPs, the QpScheduler picks) and
  // transmission (requester.cpp).
  void set_active(uint32_t qpn, Qp& qp);
  void schedule();
  uint32_t next_packet_bytes(const Qp& qp) const;
  uint8_t next_sl(const Qp& qp) const;
  bool start_wqe(uint32_t qpn, Qp& qp, SendWork& w);
  void post_next_packet(uint32_t qpn, Qp& qp);

  // RC requester reliability (reliability.cpp).
  bool rc_outstanding(const Qp& qp) const { return qp.send_idx > 0 || qp.next_packet > 0; }
  void arm_timer(uint32_t qpn, Qp& qp);
  void update_timer(uint32_t qpn, Qp& qp);
  bool rewind(uint32_t qpn, Qp& qp, uint32_t psn, bool count_retransmission = true);
  void retry(uint32_t qpn, Qp& qp, uint32_t psn);
  void complete_acked(uint32_t qpn, Qp& qp, uint32_t psn, bool inclusive);
  // RNR (IBA 9.7.5.2.8): the responder refuses `psn`; the requester waits and retries.
  void send_rnr_nak(uint32_t qpn, Qp& qp, uint32_t psn);
  void receive_rnr_nak(uint32_t qpn, Qp& qp, uint32_t psn, uint8_t timer_code);
  void on_rnr_timer(uint32_t qpn);

  // Commands (commands.cpp).
  uint32_t create_cq(uint64_t mbox, uint32_t& out);
  uint32_t create_qp(uint64_t mbox, uint32_t& out);
  uint32_t modify_qp(uint64_t mbox);
  uint32_t reg_mr(uint64_t mbox, uint32_t& out);
  uint32_t attach_mcast(uint64_t mbox, bool attach);
  uint32_t modify_cq(uint64_t mbox);
  uint32_t create_srq(uint64_t mbox, uint32_t& out);

  // Receive (responder.cpp; READ responses requester.cpp, ACKs reliability.cpp).
  void receive_ud(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx);
  void receive_multicast(const ibvp_rx_packet& rx);
  void receive_rc_uc(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx);
  void receive_read_request(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx, bool duplicate);
  void receive_ack(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx);
  void receive_read_response(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx);
  // Atomics (atomics.cpp): the responder executes a request once and answers a duplicate
  // from its saved results; the requester writes the original value to its SGE.
  void receive_atomic(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx, bool duplicate);
  void send_atomic_ack(uint32_t qpn, const Qp& qp, uint32_t psn, uint32_t msn, uint64_t orig);
  void receive_atomic_ack(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx);
  // IBA 9.4.5 / 10.2.4: the WQE at send_idx is a READ or atomic and max_rd_atomic are out.
  bool rd_atomic_blocked(const Qp& qp) const;
  void responder_error(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx, uint8_t nak, uint8_t status);
  void send_ack(uint32_t qpn, Qp& qp, uint32_t psn, uint8_t syndrome);
  // A responder's packet to its RC peer (ACK, NAK, READ response): the QP's path, `psn`.
  ibvp_tx_desc rc_response(uint32_t qpn, const Qp& qp, uint8_t op, uint32_t psn) const;
  void send_cnp(uint32_t qpn, const Qp& qp, const ibvp_rx_packet& rx, uint32_t to_qp);

  // Congestion control (CcOptions; congestion.cpp): the window here, the response to marks
  // in the CongestionResponse (cc_response_).
  // A mark (or an unmarked ACK) about the flow's packet of PSN `psn`.
  void cc_feedback(uint32_t qpn, uint16_t dlid, bool marked, uint32_t psn);
  uint32_t cc_gap_q8(uint32_t qpn, uint16_t dlid);
  bool cc_window_open(const Qp& qp) const;
  // RC requester: PSNs sent (or held) and not yet acknowledged.
  uint32_t cc_outstanding(const Qp& qp) const;
  // Releases the held packets the window now has room for (all of them with `all`).
  void cc_release_held(uint32_t qpn, Qp& qp, bool all);

  // Completions (completions.cpp).
  void complete(uint32_t cqn, const ibvp_cqe& cqe, bool solicited);
  void raise_cq_event(uint32_t cqn, Cq& cq);
  void on_cq_timer(uint32_t cqn);
  void complete_send(uint32_t qpn, const Qp& qp, const SendWork& w, uint8_t status, bool force);
  void enter_error(uint32_t qpn, Qp& qp);

  const Mr* find_mr(uint32_t key) const;
  bool mr_covers(uint32_t key, uint32_t pdn, uint64_t addr, uint64_t length, uint32_t access) const;
  uint8_t vl_of(uint8_t sl) const { return sl2vl_[sl & 15]; }

  const ibvp_hal* hal_;
  void* c_;
  std::unique_ptr<Sma> sma_;
  std::unique_ptr<Pma> pma_;
  StepCosts costs_;
  SchedOptions sched_;
  uint32_t classes_ = 1;
  uint32_t data_vls_ = 1;
  uint64_t fetch_seq_ = 0;
  // The WQE of the BlueFlame doorbell being served (v6): bf_bytes_ of it, 0 for a plain doorbell.
  std::array<uint8_t, IBVP_SEND_WQE_BYTES + IBVP_MAX_INLINE_DATA> bf_wqe_{};
  uint32_t bf_bytes_ = 0;
  std::vector<uint32_t> active_;  // QPNs with packets to send, ascending
  std::vector<QpCandidate> candidates_;  // the eligible ones, for the scheduler's pick
  // mux=message: the QP whose message is part sent and goes on alone (kNoQp: none).
  static constexpr uint32_t kNoQp = ~0u;
  uint32_t message_qp_ = kNoQp;
  std::vector<uint8_t> dlid_ipd_;  // per DLID, from SchedOptions::dlid_ipd
  uint8_t sl2vl_[16] = {};
  // The policies (policies.h): the image's, or the transport's own.
  std::unique_ptr<DoorbellArbiter> doorbells_;
  std::unique_ptr<QpScheduler> scheduler_;
  std::unique_ptr<CongestionResponse> cc_response_;  // null: cc=none and none plugged in
  std::vector<Qp> qps_;
  std::vector<Cq> cqs_;
  std::vector<Mr> mrs_;
  std::vector<Srq> srqs_;
  // The UD QPs attached to each MLID (IBVP_CMD_ATTACH_MCAST), in attach order.
  std::unordered_map<uint16_t, std::vector<uint32_t>> mcast_;
};

// The transport's own policies (doorbells.cpp, qp_scheduler.cpp, congestion.cpp), as
// firmware_args choose them; an image's policy may wrap one. The congestion response is
// null for cc=none.
std::unique_ptr<DoorbellArbiter> make_doorbell_arbiter(const PolicyContext& p, DoorbellPolicy policy);
std::unique_ptr<QpScheduler> make_qp_scheduler(const PolicyContext& p);
std::unique_ptr<CongestionResponse> make_congestion_response(const PolicyContext& p);

// Shared by the images: the four entry points for a given doorbell policy, or with an
// image's own policies (policies.h; a null member keeps the transport's).
void* init_firmware(const ibvp_hal* hal, const char* args, DoorbellPolicy policy);
void* init_firmware(const ibvp_hal* hal, const char* args, const Policies& policies);
void handle_firmware(void* fw, const ibvp_fw_event* ev);
void fini_firmware(void* fw);

}  // namespace ibvp::fw
