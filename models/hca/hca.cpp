#include "models/hca/hca.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <stdexcept>

#include "models/hca/hca_params.h"
#include "models/ib/crc.h"
#include "models/ib/wire.h"
#include "models/sim/sleep.h"

namespace ibvp::hca {

// A received packet that passed the rx engine's checks, with its decoded headers as the
// firmware sees them.
struct RxItem {
  ib::Packet* packet;
  ibvp_rx_packet info;
  bool loopback = false;  // a MAD from this host to its own port: no rx buffer space held
};

// The C entry points of the HAL: each forwards to the Hca the context names. HalCall: the
// platform's code, not the firmware's, runs until the call returns (firmware_guard.h).
struct HalBridge {
  static Hca& h(void* c) { return *static_cast<Hca*>(c); }
  static uint32_t reg_read(void* c, uint32_t o) {
    HalCall g;
    return h(c).hal_reg_read(o);
  }
  static void reg_write(void* c, uint32_t o, uint32_t v) {
    HalCall g;
    h(c).hal_reg_write(o, v);
  }
  static int dma_read(void* c, uint64_t a, void* b, uint32_t n) {
    HalCall g;
    return h(c).hal_dma_read(a, b, n);
  }
  static int dma_write(void* c, uint64_t a, const void* b, uint32_t n) {
    HalCall g;
    return h(c).hal_dma_write(a, b, n);
  }
  static uint32_t doorbell_count(void* c, uint32_t k) {
    HalCall g;
    return h(c).hal_doorbell_count(k);
  }
  static int doorbell_peek(void* c, uint32_t k, uint32_t i, ibvp_doorbell* o) {
    HalCall g;
    return h(c).hal_doorbell_peek(k, i, o);
  }
  static int doorbell_take(void* c, uint32_t k, uint32_t i) {
    HalCall g;
    return h(c).hal_doorbell_take(k, i);
  }
  static int doorbell_set_class(void* c, uint32_t q, uint32_t k) {
    HalCall g;
    return h(c).hal_doorbell_set_class(q, k);
  }
  static uint32_t tx_space(void* c, uint32_t vl) {
    HalCall g;
    return h(c).hal_tx_space(vl);
  }
  static int tx_post(void* c, const ibvp_tx_desc* d) {
    HalCall g;
    return h(c).hal_tx_post(d);
  }
  static int rx_scatter(void* c, uint32_t o, uint64_t a, uint32_t n) {
    HalCall g;
    return h(c).hal_rx_scatter(o, a, n);
  }
  static int timer_set(void* c, uint32_t id, uint64_t d) {
    HalCall g;
    return h(c).hal_timer_set(id, d);
  }
  static int timer_cancel(void* c, uint32_t id) {
    HalCall g;
    return h(c).hal_timer_cancel(id);
  }
  static uint64_t now_ps(void* c) {
    HalCall g;
    h(c).hal_call();
    return sim::TimedQueue::now_ps();  // the core's time, which may run ahead (advance_core)
  }
  static void counter_add(void* c, uint32_t k, uint64_t d) {
    HalCall g;
    h(c).hal_counter_add(k, d);
  }
  static void consume_cycles(void* c, uint64_t n) {
    HalCall g;
    h(c).hal_consume(n);
  }
  static void log(void* c, int level, const char* m) {
    HalCall g;
    h(c).hal_log(level, m);
  }
  static int tx_release(void* c, uint32_t q, uint32_t n) {
    HalCall g;
    return h(c).hal_tx_release(q, n);
  }
  static int rx_read(void* c, uint32_t o, void* b, uint32_t n) {
    HalCall g;
    return h(c).hal_rx_read(o, b, n);
  }
  static int mad_send(void* c, const ibvp_mad* m) {
    HalCall g;
    return h(c).hal_mad_send(m);
  }
  static int mad_to_host(void* c, const ibvp_mad* m) {
    HalCall g;
    return h(c).hal_mad_to_host(m);
  }
  static int doorbell_wqe(void* c, uint32_t k, uint32_t i, void* b, uint32_t n) {
    HalCall g;
    return h(c).hal_doorbell_wqe(k, i, b, n);
  }
  static int tx_post_inline(void* c, const ibvp_tx_desc* d, const void* p) {
    HalCall g;
    return h(c).hal_tx_post_inline(d, p);
  }
  static int tx_post_gather(void* c, const ibvp_tx_desc* d, const ibvp_sge* s, uint32_t n) {
    HalCall g;
    return h(c).hal_tx_post_gather(d, s, n);
  }
};

namespace {
// The core's time moves on by `ps`: it runs ahead of the kernel when nothing else is pending
// before the time it reaches, otherwise it sleeps on the Scheduler (models/sim/sleep.h).
// Results are the same either way, bit for bit; a core between two fabric events makes no
// thread switch per HAL call (issue 15 part 2).
void advance_core(uint64_t ps) { sim::advance_for_ps(ps); }

bool is_mtu(uint32_t b) { return b == 256 || b == 512 || b == 1024 || b == 2048 || b == 4096; }

uint32_t packet_count(const ibvp_tx_desc& d) {
  if (d.payload_len == 0) return 1;
  return (d.payload_len + d.mtu_bytes - 1) / d.mtu_bytes;
}

// BTH opcode of packet `index` of `count` (IBA Table 38): RC and UC messages are first /
// middle / last or only; the immediate rides on the last packet.
ib::Opcode opcode_for(const ibvp_tx_desc& d, uint32_t index, uint32_t count) {
  if (d.op == IBVP_TX_ACK) return ib::Opcode::rc_acknowledge;
  if (d.op == IBVP_TX_CNP) return ib::Opcode::cnp;
  if (d.op == IBVP_TX_ATOMIC_CMP_SWAP) return ib::Opcode::rc_compare_swap;
  if (d.op == IBVP_TX_ATOMIC_FETCH_ADD) return ib::Opcode::rc_fetch_add;
  if (d.op == IBVP_TX_ATOMIC_ACK) return ib::Opcode::rc_atomic_acknowledge;
  if (d.op == IBVP_TX_RDMA_READ_REQ) return ib::Opcode::rc_rdma_read_request;
  if (d.op == IBVP_TX_READ_RESP) {
    if (count == 1) return ib::Opcode::rc_rdma_read_response_only;
    if (index == 0) return ib::Opcode::rc_rdma_read_response_first;
    return index + 1 < count ? ib::Opcode::rc_rdma_read_response_middle : ib::Opcode::rc_rdma_read_response_last;
  }
  const bool imm = d.op == IBVP_TX_SEND_IMM || d.op == IBVP_TX_RDMA_WRITE_IMM;
  if (d.qp_type == IBVP_QPT_UD) return imm ? ib::Opcode::ud_send_only_imm : ib::Opcode::ud_send_only;
  const uint8_t base = d.qp_type == IBVP_QPT_UC ? 0x20 : 0x00;
  // SEND First 0x00, Middle 0x01, Last 0x02, Last Imm 0x03, Only 0x04, Only Imm 0x05;
  // RDMA WRITE the same sequence from 0x06.
  const uint8_t o = (d.op == IBVP_TX_RDMA_WRITE || d.op == IBVP_TX_RDMA_WRITE_IMM) ? 0x06 : 0x00;
  uint8_t op;
  if (count == 1) op = imm ? 0x05 : 0x04;
  else if (index == 0) op = 0x00;
  else if (index + 1 < count) op = 0x01;
  else op = imm ? 0x03 : 0x02;
  return static_cast<ib::Opcode>(base | (o + op));
}

// The packets of the descriptor's window: [first, end).
uint32_t window_end(const ibvp_tx_desc& d) {
  const uint32_t count = packet_count(d);
  return d.num_packets == 0 ? count : std::min(count, d.first_packet + d.num_packets);
}

uint32_t segment_bytes(const ibvp_tx_desc& d, uint32_t index) {
  const uint32_t start = index * d.mtu_bytes;
  return std::min(d.mtu_bytes, d.payload_len - std::min(d.payload_len, start));
}

ib::MadDatagram datagram_of(const ibvp_mad& m) {
  ib::MadDatagram d;
  d.dlid = m.dlid;
  d.slid = m.slid;
  d.sl = m.sl;
  d.dest_qp = m.dest_qp;
  d.src_qp = m.src_qp;
  d.q_key = m.q_key;
  d.p_key = m.p_key;
  std::memcpy(d.mad.data(), m.mad, ib::kMadBytes);
  return d;
}

// A MAD is a UD SEND Only to QP0 or QP1 that carries exactly one 256-byte MAD (IBA 13.5.1).
bool carries_mad(const ib::Packet& p) {
  return p.bth.opcode == ib::Opcode::ud_send_only && p.payload.size() == ib::kMadBytes &&
         p.payload_bytes == ib::kMadBytes && (p.bth.dest_qp == 0 || p.bth.dest_qp == 1);
}
}  // namespace

Hca::Hca(sc_core::sc_module_name name, uint32_t node, uint16_t lid, const HcaConfig& cfg, const link::LinkRate& rate,
         ib::PacketPool& packets, link::PayloadPool& payloads, sim::Probe& probe)
    : sc_core::sc_module(name),
      registers("registers"),
      dma("dma"),
      tx("tx"),
      rx("rx"),
      node_(node),
      lid_(lid),
      cfg_(cfg),
      rate_(rate),
      packets_(packets),
      payloads_(payloads),
      probe_(probe),
      agenda_("agenda", [this](const sim::Action& a) { dispatch(a); }),
      arbiter_(cfg.vlarb) {
  check_hca(cfg_);
  if (1'000'000'000'000ULL % cfg_.core_clock_hz == 0) ps_per_cycle_ = 1'000'000'000'000ULL / cfg_.core_clock_hz;
  sim::prepare_sleep();
  registers.register_b_transport(this, &Hca::reg_b_transport);
  registers.register_transport_dbg(this, &Hca::reg_transport_dbg);
  tx.register_nb_transport_bw(this, &Hca::on_tx_bw);
  rx.register_nb_transport_fw(this, &Hca::on_rx);
  for (uint8_t vl = 0; vl < cfg_.data_vls; ++vl) buffers_.set_capacity(vl, cfg_.vl_buffer_bytes);
  buffers_.set_capacity(ib::kVl15, cfg_.vl15_buffer_bytes);
  doorbells_.resize(cfg_.doorbell_classes);
  qp_class_.assign(cfg_.max_qps, 0);
  fw_counters_.assign(IBVP_CNT_COUNT, 0);

  SC_THREAD(core_thread);
  set_stack_size(1u << 20);  // firmware handlers run on this stack

  hal_.version = IBVP_HAL_VERSION;
  hal_.ctx = this;
  hal_.reg_read = &HalBridge::reg_read;
  hal_.reg_write = &HalBridge::reg_write;
  hal_.dma_read = &HalBridge::dma_read;
  hal_.dma_write = &HalBridge::dma_write;
  hal_.doorbell_count = &HalBridge::doorbell_count;
  hal_.doorbell_peek = &HalBridge::doorbell_peek;
  hal_.doorbell_take = &HalBridge::doorbell_take;
  hal_.doorbell_set_class = &HalBridge::doorbell_set_class;
  hal_.tx_space = &HalBridge::tx_space;
  hal_.tx_post = &HalBridge::tx_post;
  hal_.rx_scatter = &HalBridge::rx_scatter;
  hal_.timer_set = &HalBridge::timer_set;
  hal_.timer_cancel = &HalBridge::timer_cancel;
  hal_.now_ps = &HalBridge::now_ps;
  hal_.counter_add = &HalBridge::counter_add;
  hal_.consume_cycles = &HalBridge::consume_cycles;
  hal_.log = &HalBridge::log;
  hal_.tx_release = &HalBridge::tx_release;
  hal_.rx_read = &HalBridge::rx_read;
  hal_.mad_send = &HalBridge::mad_send;
  hal_.mad_to_host = &HalBridge::mad_to_host;
  hal_.doorbell_wqe = &HalBridge::doorbell_wqe;
  hal_.tx_post_inline = &HalBridge::tx_post_inline;
  hal_.tx_post_gather = &HalBridge::tx_post_gather;
  lmc_ = cfg_.lmc;
  port_state_ = cfg_.port_state;
  for (size_t i = 0; i < cfg_.vlarb.high.size() && i < IBVP_VLARB_ENTRIES; ++i)
    vlarb_high_reg_[i] = uint32_t{cfg_.vlarb.high[i].vl} << 8 | cfg_.vlarb.high[i].weight;
  for (size_t i = 0; i < cfg_.vlarb.low.size() && i < IBVP_VLARB_ENTRIES; ++i)
    vlarb_low_reg_[i] = uint32_t{cfg_.vlarb.low[i].vl} << 8 | cfg_.vlarb.low[i].weight;
  vlarb_high_limit_reg_ = cfg_.vlarb.high_limit;

  image_ = std::make_unique<FirmwareImage>(cfg_.firmware_image);
  install_firmware_guard(cfg_.firmware_watchdog != sc_core::SC_ZERO_TIME);
  {
    const FirmwareCall call(call_info("init"));
    fw_ = image_->init(&hal_, cfg_.firmware_args.c_str());
  }
  if (fw_ == nullptr)
    throw FirmwareInitRefused("firmware image '" + image_->path() + "' refused to start (ibvp_fw_init returned NULL" +
                        (cfg_.firmware_args.empty() ? "" : " for arguments '" + cfg_.firmware_args + "'") + ")" +
                        (log_.empty() ? "" : ": " + log_.back().text));
}

Hca::~Hca() {
  if (fw_ != nullptr) {
    const FirmwareCall call(call_info("fini"));
    image_->fini(fw_);
  }
  // TxPackets and RxItems still in use (queued, on the wire, waiting for the firmware) go
  // with their free lists.
}

sc_core::sc_time Hca::cycles(uint64_t n) const { return sc_core::sc_time::from_value(cycles_ps(n)); }

uint64_t Hca::cycles_ps(uint64_t n) const {
  // A clock whose period is a whole number of ps (1 GHz: 1000) needs no 128-bit division
  // per HAL call; the product is the same ceiling.
  uint64_t ps;
  if (ps_per_cycle_ != 0 && !__builtin_mul_overflow(n, ps_per_cycle_, &ps)) return ps;
  using u128 = unsigned __int128;
  const u128 num = static_cast<u128>(n) * 1'000'000'000'000ULL;
  return static_cast<uint64_t>((num + cfg_.core_clock_hz - 1) / cfg_.core_clock_hz);
}

// ---------------------------------------------------------------------------------------
// Registers
// ---------------------------------------------------------------------------------------

bool Hca::reg_writable_by_host(uint32_t off) const {
  if (off == IBVP_REG_CMD_MAILBOX_LO || off == IBVP_REG_CMD_MAILBOX_HI || off == IBVP_REG_CMD_OPCODE ||
      off == IBVP_REG_CMD_GO)
    return true;
  if (off >= IBVP_REG_QP_DB_BASE && off < IBVP_REG_QP_DB_BASE + cfg_.max_qps * IBVP_QP_DB_STRIDE) return true;
  return off >= IBVP_REG_CQ_DB_BASE && off < IBVP_REG_BF_BASE;
}

uint32_t Hca::reg_value(uint32_t off) const {
  switch (off) {
    case IBVP_REG_DEVICE_ID: return IBVP_DEVICE_ID;
    case IBVP_REG_HAL_VERSION: return image_ ? image_->hal_version() : 0;
    case IBVP_REG_PORT_LID: return lid_;
    case IBVP_REG_DATA_VLS: return cfg_.data_vls;
    case IBVP_REG_DB_CLASSES: return cfg_.doorbell_classes;
    case IBVP_REG_MAX_QPS: return cfg_.max_qps;
    case IBVP_REG_BF_SIZE: return cfg_.blueflame_bytes;
    case IBVP_REG_CMD_MAILBOX_LO: return cmd_mailbox_lo_;
    case IBVP_REG_CMD_MAILBOX_HI: return cmd_mailbox_hi_;
    case IBVP_REG_CMD_OPCODE: return cmd_opcode_;
    case IBVP_REG_CMD_GO: return cmd_go_;
    case IBVP_REG_CMD_STATUS: return cmd_status_;
    case IBVP_REG_CMD_OUT: return cmd_out_;
    case IBVP_REG_PORT_LMC: return lmc_;
    case IBVP_REG_PORT_STATE: return port_state_;
    // PortInfo's codes for the cable (IBA 14.2.5.6; link::port_info_*).
    case IBVP_REG_LINK_WIDTH: return link::port_info_width_code(cfg_.link_width);
    case IBVP_REG_LINK_SPEED:
    case IBVP_REG_LINK_SPEED_EXT: {
      uint8_t speed = 0, ext = 0;
      link::port_info_speed_codes(cfg_.link_speed, speed, ext);
      return off == IBVP_REG_LINK_SPEED ? speed : ext;
    }
    case IBVP_REG_NODE_GUID_LO: return static_cast<uint32_t>(cfg_.node_guid);
    case IBVP_REG_NODE_GUID_HI: return static_cast<uint32_t>(cfg_.node_guid >> 32);
    case IBVP_REG_PORT_GUID_LO: return static_cast<uint32_t>(cfg_.port_guid);
    case IBVP_REG_PORT_GUID_HI: return static_cast<uint32_t>(cfg_.port_guid >> 32);
    case IBVP_REG_VLARB_HIGH_LIMIT: return vlarb_high_limit_reg_;
    default: break;
  }
  if (off >= IBVP_REG_SL2VL_BASE && off < IBVP_REG_SL2VL_BASE + 16 * 4) return cfg_.sl2vl[(off - IBVP_REG_SL2VL_BASE) / 4];
  if (off >= IBVP_REG_NODE_DESC_BASE && off < IBVP_REG_NODE_DESC_BASE + 64) {
    uint32_t v = 0;
    const std::string& d = cfg_.node_description;
    for (uint32_t b = 0; b < 4; ++b) {
      const size_t i = off - IBVP_REG_NODE_DESC_BASE + b;
      if (i < d.size() && i < 64) v |= uint32_t{static_cast<uint8_t>(d[i])} << (8 * b);
    }
    return v;
  }
  if (off >= IBVP_REG_VLARB_HIGH_BASE && off < IBVP_REG_VLARB_HIGH_BASE + 4 * IBVP_VLARB_ENTRIES)
    return vlarb_high_reg_[(off - IBVP_REG_VLARB_HIGH_BASE) / 4];
  if (off >= IBVP_REG_VLARB_LOW_BASE && off < IBVP_REG_VLARB_LOW_BASE + 4 * IBVP_VLARB_ENTRIES)
    return vlarb_low_reg_[(off - IBVP_REG_VLARB_LOW_BASE) / 4];
  if (off >= IBVP_REG_PC_BASE && off < IBVP_REG_PC_BASE + 8 * IBVP_PC_COUNT) {
    // A read of the low half latches the high half, so the firmware reads one 64-bit value
    // although the counter moves between its two reads (the core waits at each HAL call).
    if ((off - IBVP_REG_PC_BASE) % 8 != 0) return pc_latched_hi_;
    const uint64_t v = port_counter((off - IBVP_REG_PC_BASE) / 8);
    const_cast<Hca*>(this)->pc_latched_hi_ = static_cast<uint32_t>(v >> 32);
    return static_cast<uint32_t>(v);
  }
  return 0;
}

uint64_t Hca::port_counter(uint32_t which) const {
  const uint64_t now = agenda_.now_ps();
  switch (which) {
    case IBVP_PC_XMIT_BYTES: return counters_.bytes_tx;
    case IBVP_PC_RCV_BYTES: return counters_.bytes_rx;
    case IBVP_PC_XMIT_PKTS: return counters_.packets_tx;
    case IBVP_PC_RCV_PKTS: return counters_.packets_rx;
    case IBVP_PC_XMIT_WAIT_PS: return counters_.credit_blocked_ps + credit_wait_.port_open_ps(now);
    case IBVP_PC_VL15_DROPPED: return counters_.vl15_dropped;
    case IBVP_PC_RCV_ERRORS: return rcv_errors_;
    case IBVP_PC_XMIT_DISCARDS: return counters_.xmit_discards;
  }
  return 0;
}

unsigned int Hca::reg_transport_dbg(tlm::tlm_generic_payload& trans) {
  const uint64_t off = trans.get_address();
  if (!trans.is_read() || trans.get_data_length() != 4 || (off & 3) != 0 || off >= IBVP_REG_QP_DB_BASE) return 0;
  const uint32_t v = reg_value(static_cast<uint32_t>(off));
  std::memcpy(trans.get_data_ptr(), &v, 4);
  return 4;
}

bool Hca::accept_bf_write(uint64_t off, tlm::tlm_generic_payload& trans, const sc_core::sc_time& delay) {
  // A WQE of 64 bytes and its inline data in whole 8-byte words, at the start of the QP's
  // buffer, no larger than the buffer the device advertises.
  const uint32_t len = trans.get_data_length();
  const uint64_t qpn = (off - IBVP_REG_BF_BASE) / IBVP_BF_STRIDE;
  if (cfg_.blueflame_bytes == 0 || !trans.is_write() || trans.get_byte_enable_ptr() != nullptr ||
      (off - IBVP_REG_BF_BASE) % IBVP_BF_STRIDE != 0 || qpn >= cfg_.max_qps || len < IBVP_SEND_WQE_BYTES ||
      len > cfg_.blueflame_bytes || len % 8 != 0)
    return false;
  BfWrite w{static_cast<uint32_t>(qpn), len, {}};
  std::memcpy(w.wqe.data(), trans.get_data_ptr(), len);
  bf_writes_.push_back(w);
  agenda_.push_at(agenda_.now_ps() + delay.value(), kBfWrite);
  return true;
}

void Hca::reg_b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const uint64_t off = trans.get_address();
  if (off >= IBVP_REG_BF_BASE && off < IBVP_BAR_BYTES) {
    trans.set_response_status(accept_bf_write(off, trans, delay) ? tlm::TLM_OK_RESPONSE
                                                                 : tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  // 32-bit registers, 32-bit aligned accesses only (what the driver issues).
  if (trans.get_data_length() != 4 || (off & 3) != 0 || off >= IBVP_BAR_BYTES ||
      trans.get_byte_enable_ptr() != nullptr) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  const uint32_t o = static_cast<uint32_t>(off);
  if (trans.is_read()) {
    const bool readable = o < IBVP_REG_QP_DB_BASE;  // doorbells are write-only
    if (!readable) {
      trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
      return;
    }
    // The read samples the register when the request arrives.
    sim::advance_for_ps(delay.value());  // the host's thread, which may run ahead
    delay = sc_core::SC_ZERO_TIME;
    const uint32_t v = reg_value(o);
    std::memcpy(trans.get_data_ptr(), &v, 4);
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (trans.is_write()) {
    if (!reg_writable_by_host(o)) {
      trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
      return;
    }
    uint32_t v;
    std::memcpy(&v, trans.get_data_ptr(), 4);
    // A write acts when it arrives; the bus delivers MMIO in order, so a FIFO keeps them.
    reg_writes_.emplace_back(o, v);
    agenda_.push_at(agenda_.now_ps() + delay.value(), kRegWrite);
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

void Hca::apply_reg_write(uint32_t off, uint32_t value) {
  switch (off) {
    case IBVP_REG_CMD_MAILBOX_LO: cmd_mailbox_lo_ = value; return;
    case IBVP_REG_CMD_MAILBOX_HI: cmd_mailbox_hi_ = value; return;
    case IBVP_REG_CMD_OPCODE: cmd_opcode_ = value; return;
    case IBVP_REG_CMD_GO:
      if ((value & 1) != 0 && cmd_go_ == 0) {
        cmd_go_ = 1;
        raise(IBVP_EV_COMMAND);
      }
      return;
    default: break;
  }
  if (off >= IBVP_REG_QP_DB_BASE && off < IBVP_REG_CQ_DB_BASE) {
    const uint32_t qpn = (off - IBVP_REG_QP_DB_BASE) / IBVP_QP_DB_STRIDE;
    const uint32_t kind = (off - IBVP_REG_QP_DB_BASE) % IBVP_QP_DB_STRIDE == 0 ? IBVP_DB_SQ : IBVP_DB_RQ;
    file_doorbell(qp_class_[qpn], qpn, kind, value);
  } else {
    // CQ arm doorbells go to the highest class, ahead of every QP doorbell (file_doorbell).
    file_doorbell(cfg_.doorbell_classes - 1, (off - IBVP_REG_CQ_DB_BASE) / IBVP_CQ_DB_STRIDE, IBVP_DB_CQ_ARM, value);
  }
}

void Hca::file_doorbell(uint32_t db_class, uint32_t qpn, uint32_t kind, uint32_t value, const BfWrite* bf) {
  FiledDoorbell f;
  ibvp_doorbell& d = f.db;
  d = ibvp_doorbell{};
  d.qpn = qpn;
  d.kind = kind;
  d.value = value;
  d.arrival_ps = agenda_.now_ps();
  if (bf != nullptr) {
    d.wqe_bytes = bf->bytes;
    std::memcpy(f.wqe.data(), bf->wqe.data(), bf->bytes);
  }
  if (observer_) observer_->on_doorbell(node_, qpn, kind, value, d.arrival_ps, d.wqe_bytes);
  std::deque<FiledDoorbell>& q = doorbells_[db_class];
  if (kind == IBVP_DB_RQ) {
    // A doorbell is a register that holds the QP's receive producer index, not a FIFO of
    // writes: a write while the QP's last RQ doorbell waits unseen by the firmware updates
    // it (what the firmware reads is the latest index, mlx4/mlx5's RQ doorbell record is
    // one word too). So 64 post_recvs cost the firmware one fetch per doorbell it finds,
    // each of every WQE posted by then, not 64 fetches of one WQE and 64 events.
    for (auto it = q.rbegin(); it != q.rend(); ++it) {
      if (it->seen || it->db.qpn != qpn || it->db.kind != IBVP_DB_RQ) continue;
      it->db.value = value;
      return;
    }
  }
  if (kind == IBVP_DB_CQ_ARM) {
    // The CQ doorbell is a register of its own (mlx5: the UAR's CQ doorbell, apart from the
    // QP's send doorbell and BlueFlame buffer; the RQ has only its doorbell record): an arm
    // never waits behind a QP's doorbells, whatever their class. It goes behind the arms
    // already waiting and behind every doorbell the firmware has peeked (their indices,
    // which the firmware takes them by, stay as they were).
    size_t at = 0;
    for (size_t i = 0; i < q.size(); ++i)
      if (q[i].seen) at = i + 1;
    while (at < q.size() && q[at].db.kind == IBVP_DB_CQ_ARM) ++at;
    q.insert(q.begin() + static_cast<std::ptrdiff_t>(at), f);
  } else {
    q.push_back(f);
  }
  raise(IBVP_EV_DOORBELL);
}

void Hca::raise(uint32_t kind, uint32_t arg, uint64_t cookie, RxItem* rx) {
  const CoreEvent e{kind, arg, cookie, agenda_.now_ps(), rx};
  if (kind == IBVP_EV_MAD) {
    // A MAD goes ahead of the data work waiting for the core, behind the MADs already
    // there. VL15 is not flow controlled (IBA 7.9.4): a VL15 packet that finds the
    // receive buffer (vl15_buffer_bytes, two MADs) full is dropped, and a MAD holds its
    // space until the firmware has handled it. Queued behind a loaded core's doorbells and
    // packets (40 events on the in-band SM's host with saturating flows), responses to the
    // SM's four outstanding SMPs were dropped until a request ran out of retries.
    events_.insert(std::find_if(events_.begin(), events_.end(), [](const CoreEvent& q) { return q.kind != IBVP_EV_MAD; }), e);
  } else {
    events_.push_back(e);
  }
  // Only an idle core is woken: a busy one takes the event when its handler returns. (A
  // notification nobody waits for still cost a delta cycle, and a wake that found nothing.)
  if (core_idle_) core_wake_.notify(sc_core::SC_ZERO_TIME);
}

// ---------------------------------------------------------------------------------------
// Agenda
// ---------------------------------------------------------------------------------------

void Hca::dispatch(const sim::Action& a) {
  switch (a.kind) {
    case kRegWrite: {
      const auto [off, value] = reg_writes_.front();
      reg_writes_.pop_front();
      apply_reg_write(off, value);
      break;
    }
    case kBfWrite: {
      // BlueFlame: the WQE arrived with its doorbell, the producer index inside it.
      const BfWrite w = bf_writes_.front();
      bf_writes_.pop_front();
      ibvp_send_wqe wqe;
      std::memcpy(&wqe, w.wqe.data(), sizeof wqe);
      file_doorbell(qp_class_[w.qpn], w.qpn, IBVP_DB_SQ, wqe.bf_pi, &w);
      break;
    }
    case kTxEnqueue: {
      TxPacket* t = static_cast<TxPacket*>(a.ptr);
      txq_[t->vl].push_back(t);
      try_send();
      break;
    }
    case kWake:
      if (a.when_ps == wake_ps_) wake_ps_ = ~uint64_t{0};
      try_send();
      break;
    case kTxEnd: tx_end(static_cast<TxPacket*>(a.ptr)); break;
    case kRxHead: rx_head(static_cast<ib::Packet*>(a.ptr)); break;
    case kRxReady: rx_ready(static_cast<ib::Packet*>(a.ptr)); break;
    case kTxWake:
      if (!tx_waiting_) run_tx();  // a waiting engine takes the new job when it resumes
      break;
    case kTxResume:
      tx_waiting_ = false;
      run_tx();
      break;
    case kTimerAlarm:
      if (a.when_ps == timer_alarm_ps_) timer_alarm_ps_ = ~uint64_t{0};
      push_near_timers();
      break;
    case kTimer: {
      const auto it = timers_.find(a.arg);
      if (it != timers_.end() && it->second == reinterpret_cast<uintptr_t>(a.ptr)) {
        timers_.erase(it);
        raise(IBVP_EV_TIMER, a.arg);
      }
      break;
    }
    default: assert(false && "unknown HCA action");
  }
}

// ---------------------------------------------------------------------------------------
// Embedded core
// ---------------------------------------------------------------------------------------

void Hca::charge(uint64_t n) {
  if (!in_core_ || n == 0) return;
  fw_cycles_ += n;
  event_charged_ += n;
  // Checked before the wait: a handler looping through HAL calls is stopped at the first
  // charge past its budget, at the same simulated time on every run.
  if (cfg_.firmware_cycle_budget != 0 && event_charged_ > cfg_.firmware_cycle_budget)
    report_cycle_budget(call_info(event_name_), event_charged_, cfg_.firmware_cycle_budget);
  advance_core(cycles_ps(n));
}

void Hca::core_thread() {
  in_core_ = true;
  for (;;) {
    if (events_.empty()) {
      sim::release_ahead();  // the core waits: the models' time is the kernel's again
      core_idle_ = true;
      while (events_.empty()) sc_core::wait(core_wake_);
      core_idle_ = false;
    }
    const CoreEvent e = events_.front();
    events_.pop_front();
    const uint64_t start_ps = agenda_.now_ps();
    event_name_ = firmware_event_name(e.kind);
    event_charged_ = 0;
    // Dispatch cost first: the firmware sees the event after the core has taken it.
    charge(cfg_.event_cycles);
    ibvp_fw_event ev{};
    ev.kind = e.kind;
    ev.arg = e.arg;
    ev.cookie = e.cookie;
    ev.time_ps = e.time_ps;
    ev.rx = e.rx ? &e.rx->info : nullptr;
    rx_current_ = e.rx;
    {
      const FirmwareCall call(call_info(firmware_event_name(e.kind)));
      image_->handle(fw_, &ev);
    }
    rx_current_ = nullptr;
    ++fw_events_;
    if (observer_) observer_->on_firmware_event(node_, e.kind, start_ps, agenda_.now_ps(), event_charged_);
    if (e.rx) finish_rx(e.rx);
  }
}

FirmwareCallInfo Hca::call_info(const char* event) const {
  FirmwareCallInfo i;
  i.image = image_->path().c_str();
  i.hca = name();
  i.event = event;
  i.time_ps = agenda_.now_ps();
  // Picoseconds to nanoseconds: the watchdog counts wall-clock time.
  i.watchdog_ns = cfg_.firmware_watchdog.value() / 1000;
  i.last_log = &last_log_;
  return i;
}

void Hca::hal_call() { charge(cfg_.hal_call_cycles); }

uint32_t Hca::hal_reg_read(uint32_t offset) {
  hal_call();
  return reg_value(offset);
}

void Hca::hal_reg_write(uint32_t offset, uint32_t value) {
  hal_call();
  switch (offset) {
    case IBVP_REG_CMD_GO: cmd_go_ = value & 1; break;
    case IBVP_REG_CMD_STATUS: cmd_status_ = value; break;
    case IBVP_REG_CMD_OUT: cmd_out_ = value; break;
    case IBVP_REG_PORT_LID: lid_ = static_cast<uint16_t>(value); break;
    case IBVP_REG_PORT_LMC: lmc_ = static_cast<uint8_t>(value & 7); break;
    case IBVP_REG_PORT_STATE:
      // A port whose cable is down stays Down whatever the SMA is asked (IBA 7.2).
      if (value >= IBVP_PORT_DOWN && value <= IBVP_PORT_ACTIVE && !(link_down_ && value > IBVP_PORT_DOWN)) {
        port_state_ = static_cast<uint8_t>(value);
        schedule_wake(agenda_.now_ps());  // data packets waiting may go (or be discarded)
      }
      break;
    case IBVP_REG_VLARB_HIGH_LIMIT: vlarb_high_limit_reg_ = value & 0xFF; break;
    case IBVP_REG_VLARB_COMMIT: {
      // The tables as PortInfo and VLArbitrationTable give them: entries of weight 0 are
      // unused (IBA 7.6.9), and the arbiter takes the used ones.
      link::VlArbConfig c;
      for (uint32_t r : vlarb_high_reg_)
        if ((r & 0xFF) != 0) c.high.push_back({static_cast<uint8_t>(r >> 8 & 0xF), static_cast<uint8_t>(r & 0xFF)});
      for (uint32_t r : vlarb_low_reg_)
        if ((r & 0xFF) != 0) c.low.push_back({static_cast<uint8_t>(r >> 8 & 0xF), static_cast<uint8_t>(r & 0xFF)});
      c.high_limit = static_cast<uint8_t>(vlarb_high_limit_reg_);
      set_vlarb(c);
      break;
    }
    default:
      if (offset >= IBVP_REG_SL2VL_BASE && offset < IBVP_REG_SL2VL_BASE + 16 * 4) {
        cfg_.sl2vl[(offset - IBVP_REG_SL2VL_BASE) / 4] = static_cast<uint8_t>(value & 0xF);
        break;
      }
      if (offset >= IBVP_REG_VLARB_HIGH_BASE && offset < IBVP_REG_VLARB_HIGH_BASE + 4 * IBVP_VLARB_ENTRIES) {
        vlarb_high_reg_[(offset - IBVP_REG_VLARB_HIGH_BASE) / 4] = value & 0xFFFF;
        break;
      }
      if (offset >= IBVP_REG_VLARB_LOW_BASE && offset < IBVP_REG_VLARB_LOW_BASE + 4 * IBVP_VLARB_ENTRIES) {
        vlarb_low_reg_[(offset - IBVP_REG_VLARB_LOW_BASE) / 4] = value & 0xFFFF;
        break;
      }
      log_.push_back({agenda_.now_ps(), IBVP_LOG_WARN,
                      "firmware wrote read-only register " + std::to_string(offset)});
      break;
  }
}

int Hca::hal_dma_read(uint64_t address, void* buf, uint32_t len) {
  hal_call();
  if (!in_core_) return -1;  // a DMA takes time: only an event handler may issue one
  tlm::tlm_generic_payload t;
  t.set_command(tlm::TLM_READ_COMMAND);
  t.set_address(address);
  t.set_data_ptr(static_cast<uint8_t*>(buf));
  t.set_data_length(len);
  t.set_streaming_width(len);
  t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  dma->b_transport(t, delay);
  if (observer_ && t.is_response_ok())
    observer_->on_dma_read(node_, address, len, agenda_.now_ps(), agenda_.now_ps() + delay.value());
  // The core stalls until the completion has arrived.
  advance_core(delay.value());
  return t.is_response_ok() ? 0 : -1;
}

int Hca::hal_dma_write(uint64_t address, const void* buf, uint32_t len) {
  hal_call();
  if (!in_core_) return -1;
  tlm::tlm_generic_payload t;
  t.set_command(tlm::TLM_WRITE_COMMAND);
  t.set_address(address);
  // The target copies the bytes during the call (the write is posted, the buffer is the
  // firmware's).
  t.set_data_ptr(const_cast<uint8_t*>(static_cast<const uint8_t*>(buf)));
  t.set_data_length(len);
  t.set_streaming_width(len);
  t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  dma->b_transport(t, delay);
  if (observer_ && t.is_response_ok())
    observer_->on_dma_write(node_, address, buf, len, agenda_.now_ps(), agenda_.now_ps() + delay.value());
  return t.is_response_ok() ? 0 : -1;
}

uint32_t Hca::hal_doorbell_count(uint32_t db_class) {
  hal_call();
  return db_class < doorbells_.size() ? static_cast<uint32_t>(doorbells_[db_class].size()) : 0;
}

int Hca::hal_doorbell_peek(uint32_t db_class, uint32_t index, ibvp_doorbell* out) {
  hal_call();
  if (db_class >= doorbells_.size() || index >= doorbells_[db_class].size() || out == nullptr) return -1;
  doorbells_[db_class][index].seen = true;  // what the firmware read stays what it takes
  *out = doorbells_[db_class][index].db;
  return 0;
}

int Hca::hal_doorbell_wqe(uint32_t db_class, uint32_t index, void* buf, uint32_t len) {
  hal_call();
  if (db_class >= doorbells_.size() || index >= doorbells_[db_class].size() || buf == nullptr) return -1;
  const FiledDoorbell& f = doorbells_[db_class][index];
  if (f.db.wqe_bytes == 0) return -1;
  std::memcpy(buf, f.wqe.data(), std::min(len, f.db.wqe_bytes));
  return 0;
}

int Hca::hal_doorbell_take(uint32_t db_class, uint32_t index) {
  hal_call();
  if (db_class >= doorbells_.size() || index >= doorbells_[db_class].size()) return -1;
  doorbells_[db_class].erase(doorbells_[db_class].begin() + index);
  return 0;
}

int Hca::hal_doorbell_set_class(uint32_t qpn, uint32_t db_class) {
  hal_call();
  if (qpn >= cfg_.max_qps || db_class >= cfg_.doorbell_classes) return -1;
  qp_class_[qpn] = static_cast<uint8_t>(db_class);
  return 0;
}

uint32_t Hca::hal_tx_space(uint32_t vl) {
  hal_call();
  if (vl >= cfg_.data_vls) return 0;
  return tx_reserved_[vl] >= cfg_.tx_vl_buffer_bytes ? 0 : cfg_.tx_vl_buffer_bytes - tx_reserved_[vl];
}

uint32_t Hca::message_wire_bytes(const ibvp_tx_desc& d) const {
  const uint32_t count = packet_count(d);
  uint32_t bytes = 0;
  for (uint32_t i = d.first_packet; i < window_end(d); ++i) {
    ib::Packet shape;
    shape.bth.opcode = opcode_for(d, i, count);
    shape.payload_bytes = segment_bytes(d, i);
    bytes += shape.wire_bytes();
  }
  return bytes;
}

int Hca::hal_tx_post(const ibvp_tx_desc* d) {
  hal_call();
  return post_tx(d, nullptr, nullptr, 0);
}

int Hca::post_tx(const ibvp_tx_desc* d, const void* inline_payload, const ibvp_sge* sges, uint32_t num_sge) {
  if (d == nullptr || d->vl >= cfg_.data_vls || !is_mtu(d->mtu_bytes) || d->dlid == 0) return -1;
  if (d->qp_type != IBVP_QPT_RC && d->qp_type != IBVP_QPT_UC && d->qp_type != IBVP_QPT_UD) return -1;
  if (d->op > IBVP_TX_ATOMIC_ACK) return -1;
  if (d->op == IBVP_TX_CNP && d->payload_len != 0) return -1;
  // Atomic requests and their acknowledgements (IBA 9.4.5) are RC packets without payload.
  const bool atomic = d->op >= IBVP_TX_ATOMIC_CMP_SWAP && d->op <= IBVP_TX_ATOMIC_ACK;
  if (atomic && d->payload_len != 0) return -1;
  const bool rc_only =
      d->op == IBVP_TX_ACK || d->op == IBVP_TX_RDMA_READ_REQ || d->op == IBVP_TX_READ_RESP || atomic;
  if (rc_only && d->qp_type != IBVP_QPT_RC) return -1;
  const bool rdma_write = d->op == IBVP_TX_RDMA_WRITE || d->op == IBVP_TX_RDMA_WRITE_IMM;
  if (rdma_write && d->qp_type == IBVP_QPT_UD) return -1;  // IBA Table 38: no UD RDMA
  if ((d->op == IBVP_TX_ACK || d->op == IBVP_TX_RDMA_READ_REQ) && d->payload_len != 0) return -1;
  if (d->qp_type == IBVP_QPT_UD && d->payload_len > d->mtu_bytes) return -1;
  if (d->first_packet >= packet_count(*d)) return -1;  // an empty window
  TxJob job{*d, message_wire_bytes(*d)};
  if (inline_payload != nullptr) {
    job.inline_data = true;
    std::memcpy(job.payload.data(), inline_payload, d->payload_len);
  }
  if (sges != nullptr) {
    job.num_sge = num_sge;
    std::copy(sges, sges + num_sge, job.sge.begin());
  }
  // Reserved now, so the firmware's next look at tx_space already counts this message.
  tx_reserved_[d->vl] += job.wire_bytes;
  tx_jobs_.push_back(job);
  // The tx engine starts on it at the time of the post, in the model's order of same-time
  // actions. When nothing else is pending up to that time, it does so at once (issue 15
  // part 2): the core's next HAL call charges cycles (hal_call_cycles > 0), and a core that
  // pushed a kTxWake would sleep there until the engine had run, as the first and only thing
  // of its time. Otherwise through the agenda.
  const uint64_t now = agenda_.now_ps();
  if (in_core_ && cfg_.hal_call_cycles > 0 && sim::nothing_pending_through(now)) {
    if (!tx_waiting_) run_tx();  // a waiting engine takes the job when it resumes
  } else {
    agenda_.push_at(now, kTxWake);
  }
  return 0;
}

int Hca::hal_tx_post_inline(const ibvp_tx_desc* d, const void* payload) {
  hal_call();
  // The checks of tx_post, and a payload that fits.
  if (d == nullptr || payload == nullptr || d->payload_len > IBVP_MAX_INLINE_DATA) return -1;
  return post_tx(d, payload, nullptr, 0);
}

int Hca::hal_tx_post_gather(const ibvp_tx_desc* d, const ibvp_sge* sges, uint32_t num_sge) {
  hal_call();
  // The checks of tx_post, and a list that holds the payload.
  uint64_t total = 0;
  for (uint32_t i = 0; sges != nullptr && i < num_sge && i < IBVP_MAX_SGE; ++i) total += sges[i].length;
  if (d == nullptr || sges == nullptr || num_sge == 0 || num_sge > IBVP_MAX_SGE || total != d->payload_len) return -1;
  return post_tx(d, nullptr, sges, num_sge);
}

int Hca::hal_rx_scatter(uint32_t offset, uint64_t address, uint32_t len) {
  hal_call();
  if (rx_current_ == nullptr || !in_core_) return -1;
  const ib::Packet& p = *rx_current_->packet;
  if (offset > p.payload_bytes || len > p.payload_bytes - offset) return -1;
  if (len == 0) return 0;
  std::vector<uint8_t> zeros;
  const uint8_t* src;
  if (p.payload.empty()) {  // a packet from a model that carries no content: zero bytes
    zeros.assign(len, 0);
    src = zeros.data();
  } else {
    src = p.payload.data() + offset;
  }
  tlm::tlm_generic_payload t;
  t.set_command(tlm::TLM_WRITE_COMMAND);
  t.set_address(address);
  t.set_data_ptr(const_cast<uint8_t*>(src));
  t.set_data_length(len);
  t.set_streaming_width(len);
  t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  dma->b_transport(t, delay);
  return t.is_response_ok() ? 0 : -1;
}

int Hca::hal_tx_release(uint32_t src_qp, uint32_t packets) {
  hal_call();
  if (packets == 0) return 0;
  releases_[src_qp] += packets;
  schedule_wake(agenda_.now_ps());
  return 0;
}

int Hca::hal_rx_read(uint32_t offset, void* buf, uint32_t len) {
  hal_call();
  if (rx_current_ == nullptr || !in_core_ || buf == nullptr) return -1;
  const ib::Packet& p = *rx_current_->packet;
  if (offset > p.payload_bytes || len > p.payload_bytes - offset) return -1;
  if (p.payload.empty()) std::memset(buf, 0, len);  // a packet from a model that carries no content
  else std::memcpy(buf, p.payload.data() + offset, len);
  return 0;
}

int Hca::hal_mad_send(const ibvp_mad* m) {
  hal_call();
  if (m == nullptr || (m->dest_qp != 0 && m->dest_qp != 1)) return -1;
  return queue_mad(datagram_of(*m), agenda_.now_ps()) ? 0 : -1;
}

int Hca::hal_mad_to_host(const ibvp_mad* m) {
  hal_call();
  if (m == nullptr || !mad_receiver_) return -1;
  sim::catch_up();  // host software runs at the kernel's time
  mad_receiver_(datagram_of(*m), agenda_.now_ps());
  return 0;
}

int Hca::hal_timer_set(uint32_t id, uint64_t delay_ps) {
  hal_call();
  const uint64_t gen = ++timer_generation_;
  timers_[id] = gen;
  forget_fw_timer(id);  // superseded (on the agenda already, it fires as nothing: its gen is old)
  fw_timers_.push_back({agenda_.now_ps() + delay_ps, agenda_.reserve_seq(), id, gen});
  push_near_timers();
  return 0;
}

int Hca::hal_timer_cancel(uint32_t id) {
  hal_call();
  forget_fw_timer(id);
  return timers_.erase(id) ? 0 : -1;
}

void Hca::forget_fw_timer(uint32_t id) {
  for (size_t i = 0; i < fw_timers_.size(); ++i) {
    if (fw_timers_[i].id != id) continue;
    fw_timers_[i] = fw_timers_.back();
    fw_timers_.pop_back();
    return;  // at most one per id
  }
}

void Hca::push_near_timers() {
  const uint64_t horizon = agenda_.now_ps() + kTimerHorizonPs;
  uint64_t next = ~uint64_t{0};
  for (size_t i = 0; i < fw_timers_.size();) {
    const FwTimer& t = fw_timers_[i];
    if (t.when_ps > horizon) {
      next = std::min(next, t.when_ps);
      ++i;
      continue;
    }
    agenda_.push_reserved(t.when_ps, t.seq, kTimer, 0, t.id, reinterpret_cast<void*>(static_cast<uintptr_t>(t.gen)));
    fw_timers_[i] = fw_timers_.back();
    fw_timers_.pop_back();
  }
  // Woken before the next one is due (strictly: pushed before anything of its time is served).
  if (next != ~uint64_t{0} && next - kTimerHorizonPs < timer_alarm_ps_) {
    timer_alarm_ps_ = next - kTimerHorizonPs;
    agenda_.push_at(timer_alarm_ps_, kTimerAlarm);
  }
}

void Hca::hal_counter_add(uint32_t counter, uint64_t delta) {
  hal_call();
  if (counter < fw_counters_.size()) fw_counters_[counter] += delta;
}

void Hca::hal_consume(uint64_t n) {
  hal_call();
  charge(n);
}

void Hca::hal_log(int level, const char* message) {
  hal_call();
  log_.push_back({agenda_.now_ps(), level, message ? message : ""});
  last_log_ = log_.back().text;
}

// ---------------------------------------------------------------------------------------
// Tx engine and port
// ---------------------------------------------------------------------------------------

ib::Packet* Hca::build_packet(const ibvp_tx_desc& d, uint32_t index, uint32_t count, const uint8_t* payload,
                              uint32_t bytes) {
  ib::Packet* p = packets_.acquire();
  ++tx_built_;
  const bool last = index + 1 == count;
  p->lrh.vl = d.vl;
  p->lrh.sl = d.sl;
  p->lrh.lnh = ib::Lnh::iba_local;
  p->lrh.dlid = d.dlid;
  p->lrh.slid = lid_;
  p->bth.opcode = opcode_for(d, index, count);
  p->bth.se = last && d.solicited != 0 && d.op != IBVP_TX_ACK;
  p->bth.p_key = d.p_key;
  p->bth.dest_qp = d.dest_qp & 0xFFFFFF;
  // RC asks for an ACK on the last packet of a message (IBA 9.7.6.1.2 lets the requester
  // choose; one per message is what current HCAs do for short messages).
  p->bth.ack_req = d.qp_type == IBVP_QPT_RC && d.op != IBVP_TX_ACK && d.op != IBVP_TX_READ_RESP &&
                   d.op != IBVP_TX_CNP && d.op != IBVP_TX_ATOMIC_ACK && (last || (d.cc_flags & IBVP_TXF_ACKREQ) != 0);
  p->bth.psn = (d.psn + index) & 0xFFFFFF;
  // Congestion: an ACK returning a mark, or a CNP (IBA annex A10), carries BECN.
  p->bth.becn = (d.cc_flags & IBVP_TXF_BECN) != 0 || d.op == IBVP_TX_CNP;
  p->deth.q_key = d.q_key;
  p->deth.src_qp = d.src_qp & 0xFFFFFF;
  p->immdt = d.imm_data;
  p->aeth.syndrome = d.aeth_syndrome;
  p->aeth.msn = d.msn & 0xFFFFFF;
  // RETH on the first packet of an RDMA WRITE and on a READ request (IBA Table 39).
  p->reth.va = d.remote_addr;
  p->reth.r_key = d.rkey;
  p->reth.dma_len = d.op == IBVP_TX_RDMA_READ_REQ ? d.dma_len : d.payload_len;
  // AtomicETH on an atomic request, AtomicAckETH on its acknowledgement (IBA 9.3.4, 9.3.6).
  p->atomic_eth.va = d.remote_addr;
  p->atomic_eth.r_key = d.rkey;
  p->atomic_eth.swap_add = d.atomic_data;
  p->atomic_eth.compare = d.atomic_compare;
  p->atomic_ack_eth.orig = d.atomic_data;
  p->payload_bytes = bytes;
  if (bytes > 0) p->payload.assign(payload, payload + bytes);
  p->finalize_lengths();
  // The ICRC as this CA sends it: 4 bytes before the 2-byte VCRC (which the port
  // recomputes per hop; nothing here needs it).
  const uint8_t* wire = encode_scratch(*p);
  p->icrc = ib::load_crc32(wire + p->wire_bytes() - 6);
  p->has_icrc = true;
  p->src_node = node_;
  p->created = sc_core::sc_time::from_value(agenda_.now_ps());  // the engine may run at a core's time ahead
  const auto tag = flow_of_qp_.find(d.src_qp);
  p->flow = tag == flow_of_qp_.end() || d.op == IBVP_TX_ACK || d.op == IBVP_TX_CNP || d.op == IBVP_TX_ATOMIC_ACK
                ? ib::kNoFlow
                : tag->second;
  if (p->flow != ib::kNoFlow && !reserved_of_qp_.empty()) {
    const auto r = reserved_of_qp_.find(d.src_qp);
    if (r != reserved_of_qp_.end()) p->reserved_bps = r->second;
  }
  if (!frame_tags_.empty() && p->flow != ib::kNoFlow) {
    const auto f = frame_tags_.find(frame_key(d.src_qp, p->bth.psn));
    if (f != frame_tags_.end()) {
      p->frame = f->second.frame;
      p->frame_packets = f->second.frame_packets;
      p->frame_piece = f->second.piece;
      p->frame_type = f->second.type;
      p->created = sc_core::sc_time::from_value(f->second.created_ps);
    }
  }
  if (!connection_tags_.empty() && d.op == IBVP_TX_SEND) apply_connection_tag(d.src_qp, *p);
  return p;
}

void Hca::apply_connection_tag(uint32_t src_qp, ib::Packet& p) {
  const auto it = connection_tags_.find(src_qp);
  if (it == connection_tags_.end()) return;
  std::deque<ConnectionTag>& q = it->second;
  const uint32_t psn = p.bth.psn;
  // Tags of PSNs before this one (24-bit serial arithmetic, IBA 9.7.1) belong to WQEs that
  // sent nothing: dropped.
  while (!q.empty() && q.front().psn != psn && ((psn - q.front().psn) & 0xFFFFFF) < 0x800000) q.pop_front();
  if (q.empty() || q.front().psn != psn) return;
  p.connection = q.front().connection;
  p.reserved_bps = q.front().reserved_bps;
  p.created = sc_core::sc_time::from_value(q.front().created_ps);
  q.pop_front();
}

// The tx engine takes the jobs in order. A job's payload is read packet by packet, at most
// dma_max_outstanding_reads reads in flight; with all of them in flight it waits for the
// oldest (kTxResume) and goes on from the packet it stopped at. It runs inside the agenda's
// actions, so what it does (bus reads, pushes) happens at the action's place in the model's
// order of same-time events (docs/hca.md, "Execution model").
void Hca::run_tx() {
  for (;;) {
    if (!tx_in_job_) {
      if (tx_jobs_.empty()) return;
      tx_job_ = tx_jobs_.front();
      tx_jobs_.pop_front();
      const ibvp_tx_desc& d = tx_job_.desc;
      // Only the window's bytes are read (a retransmission or one scheduled packet).
      const uint32_t end = window_end(d);
      const uint64_t offset = uint64_t{d.first_packet} * d.mtu_bytes;
      uint32_t len = 0;
      for (uint32_t i = d.first_packet; i < end; ++i) len += segment_bytes(d, i);
      // One buffer for every job, grown to the largest window.
      if (tx_data_.size() < len) tx_data_.resize(len);
      if (tx_job_.inline_data || len == 0) {
        // Inline data came with the WQE: nothing to read. Its packets follow those of the
        // jobs before it (a QP's packets leave in PSN order).
        if (tx_job_.inline_data) std::memcpy(tx_data_.data(), tx_job_.payload.data() + offset, len);
        const uint64_t ready =
            tx_job_.inline_data ? std::max(agenda_.now_ps(), tx_last_ready_ps_) : agenda_.now_ps();
        for (uint32_t i = d.first_packet; i < end; ++i) queue_tx_packet(i, ready);
        continue;
      }
      tx_in_job_ = true;
      tx_next_ = d.first_packet;
      tx_queued_bytes_ = 0;
    }
    if (!read_tx_window()) return;
  }
}

// A packet is built and queued tx_pipeline_delay after its own payload arrived: a DMA
// engine streams a long message (a READ response, a go-back-N window) packet by packet,
// one read per packet. Reading a whole READ response before its first packet left cost
// one message time per run: read_bw came out 1/iterations short (4.5 % with perftest's
// 20 iterations, at every size; docs/hca.md).
uint32_t Hca::queue_tx_packet(uint32_t i, uint64_t ready) {
  const ibvp_tx_desc& d = tx_job_.desc;
  const uint32_t bytes = segment_bytes(d, i);
  const size_t at_byte = static_cast<size_t>(i - d.first_packet) * d.mtu_bytes;
  tx_last_ready_ps_ = std::max(tx_last_ready_ps_, ready);
  ib::Packet* p = build_packet(d, i, packet_count(d), tx_data_.data() + at_byte, bytes);
  const bool last = i + 1 == window_end(d);
  TxPacket* t = tx_packets_.make(p, d.src_qp, d.ipd, d.dlid, d.dlid_ipd, d.cc_ipd_q8, p->size, d.vl,
                                 last && d.notify_done != 0, d.cookie, (d.cc_flags & IBVP_TXF_HOLD) != 0);
  agenda_.push_at(ready + cfg_.tx_pipeline_delay.value(), kTxEnqueue, 0, 0, t);
  return p->size;
}

bool Hca::read_tx_window() {
  const TxJob& job = tx_job_;
  const ibvp_tx_desc& d = job.desc;
  const uint32_t end = window_end(d);
  const uint64_t offset = uint64_t{d.first_packet} * d.mtu_bytes;
  uint8_t* const data = tx_data_.data();
  for (; tx_next_ < end; ++tx_next_) {
    const uint32_t i = tx_next_;
    const uint32_t bytes = segment_bytes(d, i);
    const size_t at_byte = static_cast<size_t>(i - d.first_packet) * d.mtu_bytes;
    // At most dma_max_outstanding_reads payload reads in flight: wait for the oldest.
    const uint64_t now = agenda_.now_ps();
    while (!dma_reads_done_ps_.empty() && dma_reads_done_ps_.front() <= now) dma_reads_done_ps_.pop_front();
    if (dma_reads_done_ps_.size() >= cfg_.dma_max_outstanding_reads) {
      tx_waiting_ = true;
      agenda_.push_at(dma_reads_done_ps_.front(), kTxResume);
      return false;
    }
    // One read of the packet's bytes, or (tx_post_gather) one per SGE piece they span,
    // in order (IBA 10.7.2.1: the gather list is the message's byte order).
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    bool read_ok = true;
    const auto read = [&](uint64_t address, uint8_t* into, uint32_t n) {
      tlm::tlm_generic_payload t;
      t.set_command(tlm::TLM_READ_COMMAND);
      t.set_address(address);
      t.set_data_ptr(into);
      t.set_data_length(n);
      t.set_streaming_width(n);
      t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time piece_delay = sc_core::SC_ZERO_TIME;
      dma->b_transport(t, piece_delay);
      delay = std::max(delay, piece_delay);
      read_ok = read_ok && t.is_response_ok();
    };
    if (job.num_sge == 0) {
      read(d.payload_addr + offset + at_byte, data + at_byte, bytes);
    } else {
      uint64_t at = offset + at_byte, sge_start = 0;  // message offset of the piece, of SGE k
      uint32_t left = bytes;
      uint8_t* into = data + at_byte;
      for (uint32_t k = 0; k < job.num_sge && left > 0; sge_start += job.sge[k].length, ++k) {
        const ibvp_sge& s = job.sge[k];
        if (at >= sge_start + s.length) continue;
        const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(left, sge_start + s.length - at));
        read(s.addr + (at - sge_start), into, n);
        at += n;
        into += n;
        left -= n;
      }
    }
    tx_payload_read_bytes_ += bytes;
    if (!read_ok) {
      // The firmware checked the key and bounds; a failure here is an address outside
      // host memory. The rest of the window is not sent; the firmware hears of it if it
      // asked to.
      ++tx_dma_errors_;
      tx_reserved_[d.vl] -= job.wire_bytes - tx_queued_bytes_;
      if (d.notify_done) raise(IBVP_EV_TX_DONE, 1, d.cookie);
      break;
    }
    const uint64_t ready = now + delay.value();
    dma_reads_done_ps_.push_back(ready);
    tx_queued_bytes_ += queue_tx_packet(i, ready);
  }
  tx_in_job_ = false;
  return true;
}

void Hca::schedule_wake(uint64_t when_ps) {
  if (when_ps >= wake_ps_) return;
  wake_ps_ = when_ps;
  agenda_.push_at(when_ps, kWake);
}

void Hca::try_send() {
  const uint64_t now = agenda_.now_ps();
  if (busy_until_ > now) {
    schedule_wake(busy_until_);
    return;
  }
  credits_.absorb(now);
  constexpr uint64_t kNever = ~uint64_t{0};
  uint64_t earliest = kNever;
  uint16_t ready = 0;
  bool any_blocked = false;
  for (uint8_t vl = 0; vl < cfg_.data_vls; ++vl) {
    // IBA 7.2: outside Active a port sends only SMPs; the data packets given to it go.
    while (port_state_ != IBVP_PORT_ACTIVE && !txq_[vl].empty()) discard_tx_head(vl);
    if (txq_[vl].empty()) continue;
    const TxPacket& head = *txq_[vl].front();
    // A held packet (IBVP_TXF_HOLD) waits at the head of its VL for its release.
    if (head.held) {
      const auto r = releases_.find(head.src_qp);
      if (r == releases_.end() || r->second == 0) continue;  // tx_release wakes the port
      if (--r->second == 0) releases_.erase(r);
      txq_[vl].front()->held = false;
    }
    // Static rate (IBA 9.11.2): a paced QP's packet waits at the head of its VL.
    const auto it = next_allowed_ps_.find(head.src_qp);
    if (it != next_allowed_ps_.end() && it->second > now) {
      earliest = std::min(earliest, it->second);
      continue;
    }
    const auto dt = dlid_next_allowed_ps_.find(head.dlid);
    if (dt != dlid_next_allowed_ps_.end() && dt->second > now) {
      earliest = std::min(earliest, dt->second);
      continue;
    }
    // Congestion control rate of the flow (sending QP, DLID), set by the firmware.
    if (!flow_next_allowed_ps_.empty()) {
      const auto ft = flow_next_allowed_ps_.find(flow_key(head.src_qp, head.dlid));
      if (ft != flow_next_allowed_ps_.end() && ft->second > now) {
        earliest = std::min(earliest, ft->second);
        continue;
      }
    }
    const bool blocked = !credits_.can_send(vl, ib::blocks_for(head.bytes));
    credit_wait_.sample(vl, blocked, now, counters_);
    any_blocked |= blocked;
    if (!blocked) ready |= static_cast<uint16_t>(1u << vl);
  }
  // A down link carries no SMP either.
  while (link_down_ && !txq_[ib::kVl15].empty()) discard_tx_head(ib::kVl15);
  // VL15 needs no credits and no pacing (IBA 7.9.4); the arbiter serves it first (7.6.9).
  if (!txq_[ib::kVl15].empty()) ready |= static_cast<uint16_t>(1u << ib::kVl15);
  credit_wait_.sample_port(ready == 0 && any_blocked, now, counters_);
  if (ready == 0) {
    if (any_blocked) earliest = std::min(earliest, credits_.next_arrival_ps());
    if (earliest != kNever) schedule_wake(earliest);
    return;
  }
  const int vl = arbiter_.choose(ready, [&](uint8_t v) { return txq_[v].front()->bytes; });
  assert(vl >= 0);
  send(static_cast<uint8_t>(vl));
}

void Hca::send(uint8_t vl) {
  TxPacket* t = txq_[vl].front();
  txq_[vl].pop_front();
  ib::Packet* p = t->packet;
  const uint64_t now = agenda_.now_ps();
  const uint64_t duration = rate_.serialization_ps(t->bytes);
  const uint64_t end = now + duration;
  if (t->ipd > 0) next_allowed_ps_[t->src_qp] = end + uint64_t{t->ipd} * duration;
  else next_allowed_ps_.erase(t->src_qp);
  // Static rate per destination (IBA 9.11.2): the same rule keyed by the DLID.
  if (t->dlid_ipd > 0) dlid_next_allowed_ps_[t->dlid] = end + uint64_t{t->dlid_ipd} * duration;
  else dlid_next_allowed_ps_.erase(t->dlid);
  // Congestion control: a gap of cc_ipd_q8/256 packet times after the tail, per flow.
  if (t->cc_ipd_q8 > 0)
    flow_next_allowed_ps_[flow_key(t->src_qp, t->dlid)] = end + (uint64_t{t->cc_ipd_q8} * duration + 128) / 256;
  else if (!flow_next_allowed_ps_.empty())
    flow_next_allowed_ps_.erase(flow_key(t->src_qp, t->dlid));
  credits_.consume(vl, ib::blocks_for(t->bytes));
  credit_wait_.sample(vl, false, now, counters_);
  credit_wait_.sample_port(false, now, counters_);
  busy_until_ = end;
  counters_.packets_tx++;
  counters_.bytes_tx += t->bytes;
  counters_.busy_ps += duration;
  counters_.vl[vl].packets_tx++;
  counters_.vl[vl].bytes_tx += t->bytes;
  p->injected = sc_core::sc_time::from_value(now);
  probe_.inject(*p, now);
  probe_.transmit(node_, 1, *p, now, end);
  if (observer_) observer_->on_packet_out(node_, t->src_qp, *p, now, end);
  t->packet = nullptr;  // the fabric owns it from here
  --tx_built_;

  payloads_.send_packet(tx, p, duration);
  agenda_.push_at(end, kTxEnd, 0, 0, t);
  schedule_wake(end);
}

void Hca::send_management(uint16_t dlid, uint32_t dst_node, uint32_t payload_bytes, uint32_t flow,
                          uint64_t created_ps) {
  ib::Packet* p = packets_.acquire();
  ++tx_built_;
  p->lrh.vl = ib::kVl15;
  p->lrh.sl = 0;
  p->lrh.lnh = ib::Lnh::iba_local;
  p->lrh.dlid = dlid;
  p->lrh.slid = lid_;
  p->bth.opcode = ib::Opcode::ud_send_only;
  p->bth.dest_qp = 0;   // the SMI (IBA 3.5.1)
  p->deth.src_qp = 0;
  p->payload_bytes = payload_bytes;
  p->finalize_lengths();
  p->flow = flow;
  p->src_node = node_;
  p->dst_node = dst_node;
  p->created = sc_core::sc_time::from_value(created_ps);
  TxPacket* t = tx_packets_.make(p, 0u, 0u, dlid, 0u, 0u, p->size, ib::kVl15, false, uint64_t{0}, false);
  txq_[ib::kVl15].push_back(t);
  schedule_wake(agenda_.now_ps());
}

void Hca::send_mad(const ib::MadDatagram& m, uint64_t created_ps) {
  if (m.dest_qp != 0 && m.dest_qp != 1)
    throw std::invalid_argument("Hca::send_mad: a MAD goes to QP0 (the SMI) or QP1 (the GSI), not dest_qp " +
                                std::to_string(m.dest_qp));
  const uint8_t vl = m.dest_qp == 0 ? ib::kVl15 : cfg_.sl2vl[m.sl & 15];
  if (m.dest_qp == 1 && vl >= cfg_.data_vls)
    throw std::invalid_argument("Hca::send_mad: SL " + std::to_string(m.sl) + " maps to no data VL of the port");
  // Through the firmware's SMI (IBA 14.2.2): an outgoing directed-route SMP (MgmtClass 0x81
  // at byte 1, D bit clear in byte 4) whose HopPointer (byte 6) the host's software left at
  // 0, or whose HopCount (byte 7) is 0: this node's SMA. One the host already stepped, as
  // Linux's kernel SMI does, leaves by the port at once. A MAD to the port's own LID never
  // goes on the wire either.
  const bool directed = m.dest_qp == 0 && m.mad[1] == 0x81;
  const bool smi = directed && (m.mad[4] & 0x80) == 0 && (m.mad[6] == 0 || m.mad[7] == 0);
  if (smi || (!directed && takes_dlid(m.dlid))) {
    loop_back_mad(m, vl, created_ps);
    return;
  }
  queue_mad(m, created_ps);
}

void Hca::loop_back_mad(const ib::MadDatagram& m, uint8_t vl, uint64_t created_ps) {
  ib::Packet* p = mad_packet(m, vl, created_ps);
  --tx_built_;  // held as received from here (rx_held_)
  RxItem* item = rx_items_.make(p, ibvp_rx_packet{}, true);
  ibvp_rx_packet& i = item->info;
  i.opcode = static_cast<uint8_t>(p->bth.opcode);
  i.sl = p->lrh.sl;
  i.vl = p->lrh.vl;
  i.slid = p->lrh.slid;
  i.dlid = p->lrh.dlid;
  i.p_key = p->bth.p_key;
  i.dest_qp = p->bth.dest_qp;
  i.src_qp = p->deth.src_qp;
  i.q_key = p->deth.q_key;
  i.icrc_ok = 1;
  i.vcrc_ok = 1;
  i.payload_len = ib::kMadBytes;
  ++rx_held_;
  raise(IBVP_EV_MAD, IBVP_MAD_FROM_HOST, 0, item);
}

bool Hca::queue_mad(const ib::MadDatagram& m, uint64_t created_ps) {
  const bool smi = m.dest_qp == 0;
  // QP0 travels on VL15 (IBA 13.5.3); QP1 on the VL of its SL, like any UD datagram.
  const uint8_t vl = smi ? ib::kVl15 : cfg_.sl2vl[m.sl & 15];
  if (!smi && vl >= cfg_.data_vls) return false;
  ib::Packet* p = mad_packet(m, vl, created_ps);
  TxPacket* t = tx_packets_.make(p, uint32_t{m.dest_qp}, 0u, m.dlid, 0u, 0u, p->size, vl, false, uint64_t{0}, false);
  // A GMP takes room in its VL's tx buffer like data (tx_end gives it back).
  if (!smi) tx_reserved_[vl] += t->bytes;
  txq_[vl].push_back(t);
  schedule_wake(agenda_.now_ps());
  return true;
}

ib::Packet* Hca::mad_packet(const ib::MadDatagram& m, uint8_t vl, uint64_t created_ps) {
  const bool smi = m.dest_qp == 0;
  ib::Packet* p = packets_.acquire();
  ++tx_built_;
  p->lrh.vl = vl;
  p->lrh.sl = smi ? 0 : m.sl & 15;
  p->lrh.lnh = ib::Lnh::iba_local;
  p->lrh.dlid = m.dlid;
  // A port without a LID sends from the permissive LID (IBA 14.2.2: directed route before
  // the SM assigned LIDs).
  p->lrh.slid = lid_ == 0 ? ib::kPermissiveLid : lid_;
  p->bth.opcode = ib::Opcode::ud_send_only;
  p->bth.p_key = m.p_key;
  p->bth.dest_qp = m.dest_qp;
  p->deth.q_key = m.q_key;
  // QP0's packets always name QP0 as source, QP1's QP1 (IBA 13.5.3).
  p->deth.src_qp = m.dest_qp;
  p->payload.assign(m.mad.begin(), m.mad.end());
  p->payload_bytes = ib::kMadBytes;
  p->finalize_lengths();
  p->flow = ib::kNoFlow;
  p->src_node = node_;
  p->dst_node = node_;  // not known to the port: a directed-route SMP names no destination
  p->created = sc_core::sc_time::from_value(created_ps);
  return p;
}

void Hca::discard_tx_head(uint8_t vl) {
  TxPacket* t = txq_[vl].front();
  txq_[vl].pop_front();
  counters_.xmit_discards++;
  t->packet->drop = link_down_ ? ib::DropReason::link_down : ib::DropReason::ca_discard;
  probe_.drop(*t->packet, node_, agenda_.now_ps());
  packets_.release(t->packet);
  t->packet = nullptr;
  --tx_built_;
  tx_end(t);  // its tx buffer room, and TX_DONE when the firmware asked for it
}

void Hca::tx_end(TxPacket* t) {
  if (t->vl == ib::kVl15) {
    // A management packet took no room of the data VLs' tx buffers.
    tx_packets_.put(t);
    return;
  }
  // The tail has left: its bytes leave the tx buffer.
  const bool was_full = tx_reserved_[t->vl] >= cfg_.tx_vl_buffer_bytes;
  tx_reserved_[t->vl] -= t->bytes;
  if (t->notify) raise(IBVP_EV_TX_DONE, 0, t->cookie);
  if (was_full && tx_reserved_[t->vl] < cfg_.tx_vl_buffer_bytes) {
    // Seed 003 Sec. 3.3.1: a doorbell skipped for a full VL is picked up once it drains.
    bool waiting = false;
    for (const auto& q : doorbells_) waiting = waiting || !q.empty();
    if (waiting) raise(IBVP_EV_DOORBELL, 1);
  }
  tx_packets_.put(t);
}

tlm::tlm_sync_enum Hca::on_tx_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase&, sc_core::sc_time& delay) {
  const link::FabricExt& e = link::PayloadPool::ext(gp);
  assert(e.kind == link::FabricExt::Kind::credit);
  const uint64_t at = agenda_.now_ps() + delay.value();
  credits_.arrive(e.vl, e.blocks, at);
  bool queued = false;
  for (const auto& q : txq_) queued = queued || !q.empty();
  if (queued) schedule_wake(at);
  return tlm::TLM_COMPLETED;
}

void Hca::set_link(bool up, uint8_t state_when_up) {
  if (link_down_ == !up) return;
  link_down_ = !up;
  port_state_ = up ? state_when_up : static_cast<uint8_t>(IBVP_PORT_DOWN);
  schedule_wake(agenda_.now_ps());  // what waits to be sent goes, or is discarded
}

// ---------------------------------------------------------------------------------------
// Rx engine
// ---------------------------------------------------------------------------------------

tlm::tlm_sync_enum Hca::on_rx(tlm::tlm_generic_payload& gp, tlm::tlm_phase&, sc_core::sc_time& delay) {
  link::FabricExt& e = link::PayloadPool::ext(gp);
  assert(e.kind == link::FabricExt::Kind::packet);
  const uint64_t head_ps = agenda_.now_ps() + delay.value();
  e.packet->hop_tail_ps = head_ps + e.duration.value();
  agenda_.push_at(head_ps, kRxHead, 0, 0, e.packet);
  return tlm::TLM_COMPLETED;
}

void Hca::rx_head(ib::Packet* p) {
  const uint8_t vl = p->lrh.vl;
  if (link_down_) {
    // On a cable that went down while it was on the wire: dropped, and a data packet's
    // credit goes back (the sender spent it; flow control stays balanced for the link's return).
    ++rx_dropped_;
    p->drop = ib::DropReason::link_down;
    probe_.drop(*p, node_, agenda_.now_ps());
    if (vl == ib::kVl15) {
      packets_.release(p);
    } else {
      buffers_.admit(vl, ib::blocks_for(p->size), counters_);
      rx_discard(p);
    }
    return;
  }
  counters_.packets_rx++;
  counters_.bytes_rx += p->size;
  if (vl == ib::kVl15 && !buffers_.fits(vl, ib::blocks_for(p->size))) {
    // IBA 7.9.4: VL15 is not flow controlled; a packet that does not fit is dropped (and
    // no credit is returned).
    counters_.vl15_dropped++;
    ++rx_dropped_;
    p->drop = ib::DropReason::vl15_overflow;
    probe_.drop(*p, node_, agenda_.now_ps());
    packets_.release(p);
    return;
  }
  buffers_.admit(vl, ib::blocks_for(p->size), counters_);
  agenda_.push_at(p->hop_tail_ps + cfg_.rx_pipeline_delay.value(), kRxReady, 0, 0, p);
}

void Hca::rx_ready(ib::Packet* p) {
  const bool vl15 = p->lrh.vl == ib::kVl15;
  if (vl15) ++management_received_;
  if (vl15 && !(carries_mad(*p) && p->bth.dest_qp == 0)) {
    // A VL15 packet without MAD bytes (the control section's, docs/control.md): the port's
    // management agent counts it after the rx pipeline. Its VL15 space frees then; VL15
    // returns no credit.
    probe_.deliver(*p, node_, p->hop_tail_ps);
    buffers_.release(ib::kVl15, ib::blocks_for(p->size));
    packets_.release(p);
    return;
  }
  // The fabric carries decoded packets; the rx engine rebuilds the bytes of this one (as
  // the last hop sent them) and checks them as hardware does: lengths, header layout,
  // VCRC, and the ICRC against the one the source CA sent (Packet::icrc).
  // The bytes are written here, so their VCRC and the ICRC they carry agree with them by
  // construction: only the ICRC against the source's is a real check, and neither CRC is
  // computed twice (issue 15 part 2).
  ib::DecodeResult r;
  try {
    const uint8_t* bytes = encode_scratch(*p);
    const size_t len = p->wire_bytes();
    r = ib::decode_headers(bytes, len);
    r.icrc_ok = r.vcrc_ok = r.ok;
    if (r.ok && p->has_icrc && ib::load_crc32(bytes + len - 6) != p->icrc) r.icrc_ok = false;
  } catch (const std::invalid_argument&) {
    r.ok = false;
  }
  // A CA port takes packets to its LID and to any MLID (IBA 10.5): which of its QPs
  // joined the group is the firmware's to know (IBVP_CMD_ATTACH_MCAST); it drops the rest.
  // A directed-route SMP arrives with the permissive DLID (IBA 14.2.2), also before the
  // port has a LID.
  const uint16_t dlid = r.packet.lrh.dlid;
  const bool to_port = takes_dlid(dlid) || (dlid >= IBVP_MLID_FIRST && dlid <= IBVP_MLID_LAST) ||
                       (vl15 && dlid == ib::kPermissiveLid);
  // IBA 7.2: in Down and Init a port takes only SMPs.
  const bool port_takes = vl15 || port_state_ >= IBVP_PORT_ARMED;
  if (!r.ok || !r.icrc_ok || !r.vcrc_ok || !to_port || !port_takes) {
    ++rx_dropped_;
    ++rcv_errors_;
    p->drop = ib::DropReason::ca_discard;
    probe_.drop(*p, node_, agenda_.now_ps());
    rx_discard(p);
    return;
  }
  const ib::Packet& h = r.packet;
  RxItem* item = rx_items_.make(p, ibvp_rx_packet{}, false);
  ibvp_rx_packet& i = item->info;
  i.opcode = static_cast<uint8_t>(h.bth.opcode);
  i.sl = h.lrh.sl;
  i.vl = h.lrh.vl;
  i.se = h.bth.se;
  i.slid = h.lrh.slid;
  i.dlid = h.lrh.dlid;
  i.p_key = h.bth.p_key;
  i.ack_req = h.bth.ack_req;
  const ib::OpcodeLayout layout = ib::opcode_layout(h.bth.opcode);
  i.has_immdt = layout.immdt;
  i.dest_qp = h.bth.dest_qp;
  i.psn = h.bth.psn;
  i.src_qp = h.deth.src_qp;
  i.q_key = h.deth.q_key;
  i.immdt = h.immdt;
  i.aeth_syndrome = h.aeth.syndrome;
  i.aeth_msn = h.aeth.msn;
  i.icrc_ok = r.icrc_ok;
  i.vcrc_ok = r.vcrc_ok;
  i.ecn = static_cast<uint8_t>((h.bth.fecn ? IBVP_RX_FECN : 0) | (h.bth.becn ? IBVP_RX_BECN : 0));
  if (test_rx_mark_ && test_rx_mark_(i)) i.ecn |= IBVP_RX_FECN;
  i.payload_len = h.payload_bytes;
  i.reth_va = h.reth.va;
  i.reth_rkey = h.reth.r_key;
  i.reth_dma_len = h.reth.dma_len;
  if (layout.atomic_eth) {  // the atomic's target in the RETH's fields (ibvp_hal.h, v8)
    i.reth_va = h.atomic_eth.va;
    i.reth_rkey = h.atomic_eth.r_key;
    i.reth_dma_len = 8;
    i.atomic_swap_add = h.atomic_eth.swap_add;
    i.atomic_compare = h.atomic_eth.compare;
  }
  i.atomic_orig = h.atomic_ack_eth.orig;
  if (test_rx_drop_ && test_rx_drop_(i)) {
    ++test_rx_dropped_;
    rx_items_.put(item);
    p->drop = ib::DropReason::ca_discard;
    probe_.drop(*p, node_, agenda_.now_ps());
    rx_discard(p);
    return;
  }
  probe_.deliver(*p, node_, p->hop_tail_ps);
  if (observer_) observer_->on_packet_in(node_, i, agenda_.now_ps());
  ++rx_held_;
  // QP0 and QP1 are the firmware's (IBA 13.5): their MADs come as IBVP_EV_MAD.
  raise(vl15 || (carries_mad(*p) && p->bth.dest_qp == 1) ? IBVP_EV_MAD : IBVP_EV_RX_PACKET, 0, 0, item);
}

const uint8_t* Hca::encode_scratch(const ib::Packet& p) {
  const size_t need = p.wire_bytes();
  if (wire_scratch_.size() < need) wire_scratch_.resize(need);
  ib::encode_into_without_vcrc(p, wire_scratch_.data(), wire_scratch_.size());
  return wire_scratch_.data();
}

void Hca::finish_rx(RxItem* item) {
  --rx_held_;
  if (item->loopback) packets_.release(item->packet);
  else rx_discard(item->packet);
  rx_items_.put(item);
}

void Hca::rx_discard(ib::Packet* p) {
  const uint8_t vl = p->lrh.vl;
  const uint32_t blocks = ib::blocks_for(p->size);
  buffers_.release(vl, blocks);
  packets_.release(p);
  if (vl == ib::kVl15) return;  // VL15 is not flow controlled: no credit (IBA 7.9.4)
  payloads_.send_credit(rx, vl, blocks, 0);
}

}  // namespace ibvp::hca
