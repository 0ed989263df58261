// The ibvp HCA firmware: doorbell handling, QP contexts, send processing (UD, UC, RC SEND
// and SEND with immediate), receive matching and scatter, RC ACK/NAK with PSN checks,
// completion generation and CQ events. It talks to the hardware only through the HAL
// (firmware/hal/ibvp_hal.h) and holds all its state in one Firmware object per HCA.
//
// Images are built from this code with a doorbell policy (which waiting doorbell the core
// serves next); image.cpp is the default (seed 003 Sec. 3.3.1 prioritized doorbells),
// firmware/examples/ holds others.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "firmware/hal/ibvp_hal.h"

namespace ibvp::fw {

enum class DoorbellPolicy {
  // Seed 003 Sec. 3.3.1: one queue per priority class, FCFS within a class, higher class
  // first; a doorbell whose VL's tx buffer is full is skipped, not waited for.
  prioritized,
  // Arrival order across all classes (the classes are ignored); full VLs are still skipped.
  fcfs,
};

// Firmware work charged with consume_cycles, from the image's argument string
// ("wqe_cycles=40,rx_cycles=60,cmd_cycles=200"); all default to 0, so by default the
// firmware's cost is what the core charges per event and per HAL call.
struct StepCosts {
  uint64_t wqe_cycles = 0;  // per send WQE executed
  uint64_t rx_cycles = 0;   // per packet received
  uint64_t cmd_cycles = 0;  // per command
};

class Firmware {
 public:
  Firmware(const ibvp_hal* hal, DoorbellPolicy policy, const StepCosts& costs);
  // Parses the argument string; false (and `error`) on an unknown key or a bad number.
  static bool parse_args(const char* args, StepCosts& out, std::string& error);
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
  };
  struct SendRecord {       // a send WQE between tx_post and its completion
    uint64_t wr_id = 0;
    uint32_t first_psn = 0, last_psn = 0;
    uint32_t byte_len = 0;
    uint32_t wqe_counter = 0;  // send WQEs consumed up to and including this one
    bool signaled = false;
  };
  struct Qp {
    bool valid = false;
    uint32_t type = 0, state = IBVP_QPS_RESET, pdn = 0, send_cqn = 0, recv_cqn = 0;
    uint64_t sq_addr = 0, rq_addr = 0;
    uint32_t sq_entries = 0, rq_entries = 0;
    uint32_t sq_pi = 0, sq_ci = 0;       // producer (doorbell) and consumer (WQEs executed)
    uint32_t rq_pi = 0, rq_fetched = 0;  // receive WQEs posted and fetched into the cache
    std::deque<ibvp_recv_wqe> recv_cache;
    uint32_t db_class = 0, ipd = 0;
    uint32_t qkey = 0, dest_qpn = 0, access = 0;
    uint32_t sq_psn = 0;  // next PSN to send
    uint32_t epsn = 0;    // next PSN expected (responder)
    uint32_t msn = 0;     // messages completed as responder (AETH.MSN)
    uint16_t dlid = 0;
    uint8_t sl = 0;
    uint32_t mtu_bytes = 4096;
    // Responder: the receive WQE of a multi-packet message in progress.
    bool in_message = false;
    bool message_failed = false;
    ibvp_recv_wqe current{};
    uint32_t current_offset = 0;
    bool nak_sent = false;  // a PSN sequence NAK is outstanding (IBA 9.7.5.2.1: send one)
    std::deque<SendRecord> unacked;   // RC
    std::deque<SendRecord> tx_wait;   // UD, UC: completed at tx done
  };

  // Events.
  void on_doorbells();
  void on_command();
  void on_rx(const ibvp_rx_packet& rx);
  void on_tx_done(uint64_t cookie, uint32_t failed);

  // Doorbells.
  bool pick_doorbell(uint32_t& db_class, uint32_t& index);
  bool servable(const ibvp_doorbell& db);
  void serve(const ibvp_doorbell& db);
  void run_send_queue(uint32_t qpn);
  void fetch_recv_wqes(Qp& qp);
  void execute_send(uint32_t qpn, Qp& qp, const ibvp_send_wqe& wqe);

  // Commands.
  uint32_t create_cq(uint64_t mbox, uint32_t& out);
  uint32_t create_qp(uint64_t mbox, uint32_t& out);
  uint32_t modify_qp(uint64_t mbox);
  uint32_t reg_mr(uint64_t mbox, uint32_t& out);

  // Receive.
  void receive_ud(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx);
  void receive_rc_uc(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx);
  void receive_ack(uint32_t qpn, Qp& qp, const ibvp_rx_packet& rx);
  void send_ack(uint32_t qpn, const Qp& qp, uint32_t psn, uint8_t syndrome);

  // Completions.
  void complete(uint32_t cqn, const ibvp_cqe& cqe, bool solicited);
  void complete_send(uint32_t qpn, const Qp& qp, const SendRecord& r, uint8_t status, bool force);
  void enter_error(uint32_t qpn, Qp& qp);

  const Mr* find_mr(uint32_t key) const;
  bool mr_covers(uint32_t key, uint32_t pdn, uint64_t addr, uint64_t length, uint32_t access) const;
  uint8_t vl_of(uint8_t sl) const { return sl2vl_[sl & 15]; }

  const ibvp_hal* hal_;
  void* c_;
  DoorbellPolicy policy_;
  StepCosts costs_;
  uint32_t classes_ = 1;
  uint8_t sl2vl_[16] = {};
  std::vector<Qp> qps_;
  std::vector<Cq> cqs_;
  std::vector<Mr> mrs_;
};

// Shared by the images: the four entry points for a given policy.
void* init_firmware(const ibvp_hal* hal, const char* args, DoorbellPolicy policy);
void handle_firmware(void* fw, const ibvp_fw_event* ev);
void fini_firmware(void* fw);

}  // namespace ibvp::fw
