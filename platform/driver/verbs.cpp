#include "platform/driver/verbs.h"

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "models/sim/timed_queue.h"

namespace ibvp::verbs {

namespace {
uint32_t round_up_pow2(uint32_t v) {
  uint32_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// Attributes each transition requires and allows (libibverbs / kernel qp_state_table;
// IBA 10.3 Table 90 ff.).
bool transition(QpType type, QpState cur, QpState next, uint32_t& required, uint32_t& optional) {
  const bool ud = type == QpType::ud, rc = type == QpType::rc;
  required = QP_STATE;
  optional = QP_CUR_STATE;
  if (next == QpState::reset || next == QpState::err) return true;
  if (cur == QpState::reset && next == QpState::init) {
    required |= QP_PKEY_INDEX | QP_PORT | (ud ? QP_QKEY : QP_ACCESS_FLAGS);
    return true;
  }
  if (cur == QpState::init && next == QpState::init) {
    optional |= QP_PKEY_INDEX | QP_PORT | (ud ? QP_QKEY : QP_ACCESS_FLAGS);
    return true;
  }
  if (cur == QpState::init && next == QpState::rtr) {
    if (!ud) required |= QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN;
    if (rc) required |= QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER;
    optional |= QP_PKEY_INDEX | (ud ? QP_QKEY : QP_ACCESS_FLAGS);
    return true;
  }
  if (cur == QpState::rtr && next == QpState::rts) {
    required |= QP_SQ_PSN;
    if (rc) required |= QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC;
    optional |= ud ? QP_QKEY : QP_ACCESS_FLAGS;
    return true;
  }
  if (cur == QpState::rts && next == QpState::rts) {
    optional |= ud ? QP_QKEY : QP_ACCESS_FLAGS;
    return true;
  }
  return false;
}
}  // namespace

const char* wc_status_str(WcStatus s) {
  static const char* const names[] = {"SUCCESS",       "LOC_LEN_ERR",     "LOC_QP_OP_ERR",  "LOC_EEC_OP_ERR",
                                      "LOC_PROT_ERR",  "WR_FLUSH_ERR",    "MW_BIND_ERR",    "BAD_RESP_ERR",
                                      "LOC_ACCESS_ERR", "REM_INV_REQ_ERR", "REM_ACCESS_ERR", "REM_OP_ERR",
                                      "RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR"};
  const auto i = static_cast<size_t>(s);
  return i < sizeof names / sizeof names[0] ? names[i] : "unknown status";
}

Mtu mtu_from_bytes(uint32_t bytes) {
  switch (bytes) {
    case 256: return Mtu::mtu_256;
    case 512: return Mtu::mtu_512;
    case 1024: return Mtu::mtu_1024;
    case 2048: return Mtu::mtu_2048;
    default: return Mtu::mtu_4096;
  }
}

bool modify_qp_is_ok(QpType type, QpState cur, QpState next, uint32_t mask) {
  uint32_t required, optional;
  if (!transition(type, cur, next, required, optional)) return false;
  return (mask & required) == required && (mask & ~(required | optional)) == 0;
}

namespace {
constexpr uint64_t kMailboxBytes = 256;

constexpr uint64_t kRingAlign = 4096;
constexpr uint64_t kEventAlign = 64;
uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

HostMemoryPlan::HostMemoryPlan() { alloc(kMailboxBytes, kMailboxBytes); }

void HostMemoryPlan::alloc(uint64_t bytes, uint64_t align) { next_ = align_up(next_, align) + bytes; }

void HostMemoryPlan::cq(int cqe) {
  alloc(uint64_t{round_up_pow2(static_cast<uint32_t>(std::max(cqe, 1)))} * IBVP_CQE_BYTES, kRingAlign);
  alloc(4, kEventAlign);
}

void HostMemoryPlan::qp(const QpCap& cap) {
  alloc(uint64_t{round_up_pow2(cap.max_send_wr)} * ibvp_send_stride_sge(cap.max_inline_data, cap.max_send_sge),
        kRingAlign);
  alloc(uint64_t{round_up_pow2(cap.max_recv_wr)} * ibvp_recv_stride(cap.max_recv_sge), kRingAlign);
}

uint64_t HostMemoryPlan::driver_bytes() const { return align_up(next_, kPageBytes); }

uint64_t HostMemoryPlan::end() const { return buffer_address() + align_up(buffer_bytes_, kPageBytes); }

Context::Context(host::HostCpu& cpu, uint64_t dma_base, uint64_t dma_bytes)
    : cpu_(cpu), next_(dma_base), end_(dma_base + dma_bytes) {
  mailbox_ = alloc(kMailboxBytes, kMailboxBytes);
}

Context::~Context() = default;

uint64_t Context::alloc(uint64_t bytes, uint64_t align) {
  const uint64_t at = (next_ + align - 1) / align * align;
  if (at + bytes > end_ || at + bytes < at || at + bytes > memory().config().size_bytes) throw std::bad_alloc();
  next_ = at + bytes;
  const std::vector<uint8_t> zeros(bytes, 0);
  memory().write(at, zeros.data(), bytes);
  return at;
}

uint32_t Context::command(uint32_t opcode, const void* mailbox, uint32_t bytes, uint32_t& out) {
  if (bytes > 0) memory().write(mailbox_, mailbox, bytes);
  cpu_.mmio_write32(IBVP_REG_CMD_MAILBOX_LO, static_cast<uint32_t>(mailbox_));
  cpu_.mmio_write32(IBVP_REG_CMD_MAILBOX_HI, static_cast<uint32_t>(mailbox_ >> 32));
  cpu_.mmio_write32(IBVP_REG_CMD_OPCODE, opcode);
  cpu_.mmio_write32(IBVP_REG_CMD_GO, 1);
  // Commands are rare (setup): the driver polls the go bit, as mlx4's HCR interface does.
  while (cpu_.mmio_read32(IBVP_REG_CMD_GO) != 0) {
  }
  out = cpu_.mmio_read32(IBVP_REG_CMD_OUT);
  return cpu_.mmio_read32(IBVP_REG_CMD_STATUS);
}

QueuePair* Context::qp_by_number(uint32_t qpn) {
  for (auto& q : qps)
    if (q->qp_num == qpn) return q.get();
  return nullptr;
}

std::unique_ptr<Context> open_device(host::HostCpu& cpu, uint64_t dma_base, uint64_t dma_bytes) {
  cpu.spend_call();
  if (cpu.mmio_read32(IBVP_REG_DEVICE_ID) != IBVP_DEVICE_ID) return nullptr;
  if (cpu.mmio_read32(IBVP_REG_HAL_VERSION) != IBVP_HAL_VERSION) return nullptr;
  try {
    auto ctx = std::make_unique<Context>(cpu, dma_base, dma_bytes);
    ctx->bf_bytes = cpu.mmio_read32_dbg(IBVP_REG_BF_SIZE);
    return ctx;
  } catch (const std::bad_alloc&) {
    return nullptr;  // the driver area does not hold the mailbox
  }
}

int query_port(Context& ctx, uint8_t port_num, PortAttr& out) {
  ctx.cpu().spend_call();
  if (port_num != 1) return EINVAL;
  out.lid = static_cast<uint16_t>(ctx.cpu().mmio_read32(IBVP_REG_PORT_LID));
  out.data_vls = ctx.cpu().mmio_read32(IBVP_REG_DATA_VLS);
  out.active_mtu = Mtu::mtu_4096;
  return 0;
}

ProtectionDomain* alloc_pd(Context& ctx) {
  ctx.cpu().spend_call();
  // A PD is a number the firmware compares between QPs and MRs.
  ctx.pds.push_back(std::make_unique<ProtectionDomain>(ProtectionDomain{&ctx, static_cast<uint32_t>(ctx.pds.size() + 1)}));
  return ctx.pds.back().get();
}

MemoryRegion* reg_mr(ProtectionDomain* pd, uint64_t addr, uint64_t length, uint32_t access) {
  if (pd == nullptr) return nullptr;
  Context& ctx = *pd->context;
  ctx.cpu().spend_call();
  if (length == 0) return nullptr;
  // ibv_reg_mr fails (EFAULT) on memory the process does not have: here, bytes beyond host
  // memory, which every DMA to the region would find as an address error.
  const uint64_t size = ctx.memory().config().size_bytes;
  if (addr >= size || length > size - addr) return nullptr;
  ibvp_mbox_mr m{};
  m.addr = addr;
  m.length = length;
  m.pdn = pd->handle;
  m.access = access;
  uint32_t key = 0;
  if (ctx.command(IBVP_CMD_REG_MR, &m, sizeof m, key) != IBVP_CMD_STATUS_OK) return nullptr;
  ctx.mrs.push_back(std::make_unique<MemoryRegion>(MemoryRegion{&ctx, pd, addr, length, key, key}));
  return ctx.mrs.back().get();
}

CompletionQueue* create_cq(Context& ctx, int cqe) {
  ctx.cpu().spend_call();
  if (cqe <= 0 || cqe > (1 << 22)) return nullptr;
  const uint32_t entries = round_up_pow2(static_cast<uint32_t>(cqe));
  auto cq = std::make_unique<CompletionQueue>();
  cq->context = &ctx;
  cq->entries = entries;
  try {
    cq->ring = ctx.alloc(uint64_t{entries} * IBVP_CQE_BYTES, kRingAlign);
    cq->event_addr = ctx.alloc(4, kEventAlign);
  } catch (const std::bad_alloc&) {
    return nullptr;  // ENOMEM
  }
  ibvp_mbox_cq m{};
  m.ring_addr = cq->ring;
  m.entries = entries;
  m.event_addr = cq->event_addr;
  uint32_t cqn = 0;
  if (ctx.command(IBVP_CMD_CREATE_CQ, &m, sizeof m, cqn) != IBVP_CMD_STATUS_OK) return nullptr;
  cq->cqn = cqn;
  if (ctx.observer()) ctx.observer()->on_create_cq(ctx.node(), cqn, cq->ring, entries);
  ctx.cqs.push_back(std::move(cq));
  return ctx.cqs.back().get();
}

QueuePair* create_qp(ProtectionDomain* pd, const QpInitAttr& attr) {
  if (pd == nullptr) return nullptr;
  Context& ctx = *pd->context;
  ctx.cpu().spend_call();
  if (attr.send_cq == nullptr || attr.recv_cq == nullptr || attr.cap.max_send_sge > IBVP_MAX_SGE ||
      attr.cap.max_recv_sge > IBVP_MAX_SGE || (attr.srq != nullptr && attr.cap.max_recv_sge > 1) ||
      attr.cap.max_send_wr == 0 || attr.cap.max_recv_wr == 0 || attr.cap.max_inline_data > IBVP_MAX_INLINE_DATA ||
      attr.doorbell_class > 0xFFFF)  // the mailbox's 16-bit field; the firmware refuses any class it lacks
    return nullptr;
  auto qp = std::make_unique<QueuePair>();
  qp->context = &ctx;
  qp->pd = pd;
  qp->qp_type = attr.qp_type;
  qp->send_cq = attr.send_cq;
  qp->recv_cq = attr.recv_cq;
  qp->sq_sig_all = attr.sq_sig_all;
  qp->sq_entries = round_up_pow2(attr.cap.max_send_wr);
  qp->rq_entries = round_up_pow2(attr.cap.max_recv_wr);
  qp->max_inline = attr.cap.max_inline_data;
  qp->max_send_sge = std::max<uint32_t>(1, attr.cap.max_send_sge);
  qp->max_recv_sge = std::max<uint32_t>(1, attr.cap.max_recv_sge);
  qp->sq_stride = ibvp_send_stride_sge(qp->max_inline, qp->max_send_sge);
  qp->rq_stride = ibvp_recv_stride(qp->max_recv_sge);
  try {
    qp->sq_addr = ctx.alloc(uint64_t{qp->sq_entries} * qp->sq_stride, kRingAlign);
    qp->rq_addr = ctx.alloc(uint64_t{qp->rq_entries} * qp->rq_stride, kRingAlign);
  } catch (const std::bad_alloc&) {
    return nullptr;  // ENOMEM
  }
  ibvp_mbox_qp m{};
  m.qp_type = static_cast<uint8_t>(attr.qp_type);
  m.max_send_sge = static_cast<uint8_t>(qp->max_send_sge);
  m.max_recv_sge = static_cast<uint8_t>(qp->max_recv_sge);
  m.pdn = pd->handle;
  m.send_cqn = attr.send_cq->cqn;
  m.recv_cqn = attr.recv_cq->cqn;
  m.sq_addr = qp->sq_addr;
  m.rq_addr = qp->rq_addr;
  m.sq_entries = qp->sq_entries;
  m.rq_entries = qp->rq_entries;
  m.db_class = static_cast<uint16_t>(attr.doorbell_class);
  m.ipd = attr.ipd;
  m.weight = attr.weight;
  m.rate_mbps = attr.reserved_rate_mbps;
  m.max_inline = static_cast<uint16_t>(qp->max_inline);
  if (attr.srq != nullptr) {
    if (attr.srq->context != &ctx) return nullptr;
    m.rq_entries = 0;  // no receive queue of its own: the SRQ's number instead (ibvp_hal.h)
    m.rq_addr = attr.srq->srqn;
    qp->srq = attr.srq;
  }
  uint32_t qpn = 0;
  if (ctx.command(IBVP_CMD_CREATE_QP, &m, sizeof m, qpn) != IBVP_CMD_STATUS_OK) return nullptr;
  qp->qp_num = qpn;
  if (ctx.observer()) ctx.observer()->on_create_qp(ctx.node(), qpn, qp->sq_addr, qp->sq_entries, qp->sq_stride);
  ctx.qps.push_back(std::move(qp));
  return ctx.qps.back().get();
}

AddressHandle* create_ah(ProtectionDomain* pd, const AhAttr& attr) {
  if (pd == nullptr) return nullptr;
  pd->context->cpu().spend_call();
  if (attr.dlid == 0 || attr.sl > 15) return nullptr;
  pd->context->ahs.push_back(std::make_unique<AddressHandle>(AddressHandle{pd, attr}));
  return pd->context->ahs.back().get();
}

namespace {
int mcast_command(QueuePair* qp, uint16_t mlid, uint32_t opcode) {
  if (qp == nullptr) return EINVAL;
  Context& ctx = *qp->context;
  ctx.cpu().spend_call();
  if (qp->qp_type != QpType::ud || mlid < IBVP_MLID_FIRST || mlid > IBVP_MLID_LAST) return EINVAL;
  ibvp_mbox_mcast m{};
  m.qpn = qp->qp_num;
  m.mlid = mlid;
  uint32_t out = 0;
  const uint32_t status = ctx.command(opcode, &m, sizeof m, out);
  if (status == IBVP_CMD_STATUS_BAD_PARAM) return EINVAL;
  return status == IBVP_CMD_STATUS_OK ? 0 : EIO;
}
}  // namespace

int attach_mcast(QueuePair* qp, uint16_t mlid) { return mcast_command(qp, mlid, IBVP_CMD_ATTACH_MCAST); }
int detach_mcast(QueuePair* qp, uint16_t mlid) { return mcast_command(qp, mlid, IBVP_CMD_DETACH_MCAST); }

int modify_qp(QueuePair* qp, const QpAttr& attr, uint32_t attr_mask) {
  if (qp == nullptr) return EINVAL;
  Context& ctx = *qp->context;
  ctx.cpu().spend_call();
  const QpState next = (attr_mask & QP_STATE) ? attr.qp_state : qp->state;
  if ((attr_mask & QP_CUR_STATE) && attr.cur_qp_state != qp->state) return EINVAL;
  if (!modify_qp_is_ok(qp->qp_type, qp->state, next, attr_mask)) return EINVAL;
  ibvp_mbox_modify_qp m{};
  m.qpn = qp->qp_num;
  m.attr_mask = attr_mask;
  m.qp_state = static_cast<uint32_t>(next);
  m.cur_state = static_cast<uint8_t>(qp->state);
  m.max_rd_atomic = attr.max_rd_atomic;
  m.max_dest_rd_atomic = attr.max_dest_rd_atomic;
  m.qkey = attr.qkey;
  m.dest_qpn = attr.dest_qp_num;
  m.rq_psn = attr.rq_psn;
  m.sq_psn = attr.sq_psn;
  m.dlid = attr.ah_attr.dlid;
  m.sl = attr.ah_attr.sl;
  m.path_mtu = static_cast<uint8_t>(attr.path_mtu);
  m.pkey_index = attr.pkey_index;
  m.port_num = attr.port_num;
  m.timeout = attr.timeout;
  m.retry_cnt = attr.retry_cnt;
  m.rnr_retry = attr.rnr_retry;
  m.min_rnr_timer = attr.min_rnr_timer;
  m.access = attr.qp_access_flags;
  uint32_t out = 0;
  const uint32_t status = ctx.command(IBVP_CMD_MODIFY_QP, &m, sizeof m, out);
  if (status == IBVP_CMD_STATUS_BAD_STATE || status == IBVP_CMD_STATUS_BAD_PARAM) return EINVAL;
  if (status != IBVP_CMD_STATUS_OK) return EIO;
  if (next == QpState::reset) qp->sq_head = qp->sq_tail = qp->rq_head = qp->rq_tail = 0;
  qp->state = next;
  return 0;
}

int post_send(QueuePair* qp, SendWr* wr, SendWr** bad_wr) {
  if (qp == nullptr) return EINVAL;
  Context& ctx = *qp->context;
  const uint64_t called_ps = sim::TimedQueue::now_ps();  // the program's time (it may run ahead)
  ctx.cpu().spend_call();
  // IBA 10.3: sends are posted in RTS (and flushed in error); before RTS they are refused.
  const bool state_ok = qp->state == QpState::rts || qp->state == QpState::err || qp->state == QpState::sqd;
  int err = 0;
  uint32_t posted = 0;
  // The slot of the last WQE written: a lone WQE goes by BlueFlame when the device has it.
  static_assert(IBVP_MAX_INLINE_DATA >= (IBVP_MAX_SGE - 1) * IBVP_SGE_BYTES, "a slot's SGEs fit the buffer");
  uint8_t slot[IBVP_SEND_WQE_BYTES + IBVP_MAX_INLINE_DATA];
  uint32_t slot_bytes = 0;
  for (SendWr* w = wr; w != nullptr; w = w->next) {
    const bool inl = (w->send_flags & SEND_INLINE) != 0;
    const bool atomic = w->opcode == WrOpcode::atomic_cmp_and_swp || w->opcode == WrOpcode::atomic_fetch_and_add;
    const Sge* sges = w->sg_list ? w->sg_list : &w->sg;
    const uint32_t num_sge = w->num_sge > 0 ? static_cast<uint32_t>(w->num_sge) : 0;
    // Inline data: the CPU gathers every SGE, whose total counts against max_inline_data.
    uint64_t inline_len = 0;
    for (uint32_t k = 0; inl && k < num_sge && k < qp->max_send_sge; ++k) inline_len += sges[k].length;
    if (!state_ok || w->num_sge < 0 || num_sge > qp->max_send_sge) err = EINVAL;
    else if (qp->qp_type == QpType::ud && w->ud.ah == nullptr) err = EINVAL;
    // Atomics are RC only and never inline (IBA 9.4.5; libibverbs returns EINVAL).
    else if (atomic && (qp->qp_type != QpType::rc || inl)) err = EINVAL;
    // libibverbs (mlx5): inline data beyond the QP's max_inline_data, or on a READ, is EINVAL.
    else if (inl && (inline_len > qp->max_inline || w->opcode == WrOpcode::rdma_read)) err = EINVAL;
    else if (qp->sq_head - qp->sq_tail >= qp->sq_entries) err = ENOMEM;
    if (err != 0) {
      if (bad_wr) *bad_wr = w;
      break;
    }
    ibvp_send_wqe e{};
    e.opcode = static_cast<uint8_t>(w->opcode);
    e.flags = static_cast<uint8_t>(w->send_flags | (qp->sq_sig_all ? uint32_t{SEND_SIGNALED} : 0u));
    e.imm_data = w->imm_data;
    e.wr_id = w->wr_id;
    if (num_sge >= 1) {
      e.sge_addr = sges[0].addr;
      e.sge_length = inl ? static_cast<uint32_t>(inline_len) : sges[0].length;
      e.sge_lkey = sges[0].lkey;
    }
    // SGEs 2.. follow the WQE in its slot (ibvp_hal.h, v8); inline data has none.
    if (num_sge > 1 && !inl) e.num_sge = static_cast<uint8_t>(num_sge);
    e.remote_addr = atomic ? w->atomic.remote_addr : w->rdma.remote_addr;
    e.rkey = atomic ? w->atomic.rkey : w->rdma.rkey;
    if (atomic) {
      e.compare_add = w->atomic.compare_add;
      e.swap = w->atomic.swap;
    }
    if (qp->qp_type == QpType::ud) {
      e.remote_qpn = w->ud.remote_qpn;
      e.remote_qkey = w->ud.remote_qkey;
      e.dlid = w->ud.ah->attr.dlid;
      e.sl = w->ud.ah->attr.sl;
    }
    const uint32_t idx = qp->sq_head & (qp->sq_entries - 1);
    qp->sq_head++;
    e.bf_pi = qp->sq_head;  // BlueFlame: the doorbell inside the WQE
    std::memcpy(slot, &e, sizeof e);
    slot_bytes = IBVP_SEND_WQE_BYTES;
    if (inl) {
      // The CPU copies the data into the WQE: the HCA reads no payload (IBV_SEND_INLINE).
      e.sge_addr = 0;
      e.sge_lkey = 0;
      std::memcpy(slot, &e, sizeof e);
      uint32_t at = IBVP_SEND_WQE_BYTES;
      for (uint32_t k = 0; k < num_sge; ++k) {
        if (sges[k].length > 0) ctx.memory().read(sges[k].addr, slot + at, sges[k].length);
        at += sges[k].length;
      }
      slot_bytes += static_cast<uint32_t>((inline_len + 7) / 8 * 8);
    } else if (num_sge > 1) {
      for (uint32_t k = 1; k < num_sge; ++k) {
        const ibvp_sge s{sges[k].addr, sges[k].length, sges[k].lkey};
        std::memcpy(slot + IBVP_SEND_WQE_BYTES + (k - 1) * IBVP_SGE_BYTES, &s, sizeof s);
      }
      slot_bytes += (num_sge - 1) * IBVP_SGE_BYTES;
    }
    ctx.memory().write(qp->sq_addr + uint64_t{idx} * qp->sq_stride, slot, slot_bytes);
    if (ctx.observer()) ctx.observer()->on_post_send(ctx.node(), qp->qp_num, qp->sq_head - 1, w->wr_id, called_ps);
    posted++;
  }
  if (posted == 1 && slot_bytes <= ctx.bf_bytes) {
    // BlueFlame (mlx5_bf_copy): a lone WQE is written, with its inline data, through the
    // write-combining buffer; the HCA gets the WQE and the doorbell in one posted TLP.
    ctx.cpu().mmio_write_wc(IBVP_REG_BF_BASE + uint64_t{qp->qp_num} * IBVP_BF_STRIDE, slot, slot_bytes);
    ctx.bf_posts++;
  } else if (posted > 0) {
    // One doorbell for the chain: the new producer index.
    ctx.cpu().mmio_write32(IBVP_REG_QP_DB_BASE + qp->qp_num * IBVP_QP_DB_STRIDE, qp->sq_head);
    ctx.doorbell_posts++;
  }
  return err;
}

namespace {
// A receive WR as the HAL's receive WQE and its SGEs 2.. after it (a QP's receive queue and
// an SRQ hold the same; an SRQ's WRs have one SGE). Returns the bytes of `slot` written.
uint32_t recv_wqe(const RecvWr& w, uint8_t* slot) {
  ibvp_recv_wqe e{};
  e.wr_id = w.wr_id;
  const Sge* sges = w.sg_list ? w.sg_list : &w.sg;
  if (w.num_sge >= 1) {
    e.addr = sges[0].addr;
    e.length = sges[0].length;
    e.lkey = sges[0].lkey;
  }
  uint32_t bytes = sizeof e;
  if (w.num_sge > 1) {
    e.num_sge = static_cast<uint32_t>(w.num_sge);
    for (int k = 1; k < w.num_sge; ++k) {
      const ibvp_sge s{sges[k].addr, sges[k].length, sges[k].lkey};
      std::memcpy(slot + bytes, &s, sizeof s);
      bytes += IBVP_SGE_BYTES;
    }
  }
  std::memcpy(slot, &e, sizeof e);
  return bytes;
}
}  // namespace

int post_recv(QueuePair* qp, RecvWr* wr, RecvWr** bad_wr) {
  if (qp == nullptr) return EINVAL;
  Context& ctx = *qp->context;
  ctx.cpu().spend_call();
  int err = 0;
  uint32_t posted = 0;
  for (RecvWr* w = wr; w != nullptr; w = w->next) {
    if (qp->state == QpState::reset || qp->srq != nullptr || w->num_sge < 0 ||
        static_cast<uint32_t>(w->num_sge) > qp->max_recv_sge)
      err = EINVAL;
    else if (qp->rq_head - qp->rq_tail >= qp->rq_entries) err = ENOMEM;
    if (err != 0) {
      if (bad_wr) *bad_wr = w;
      break;
    }
    uint8_t slot[IBVP_RECV_WQE_BYTES + IBVP_MAX_SGE * IBVP_SGE_BYTES];
    const uint32_t bytes = recv_wqe(*w, slot);
    const uint32_t idx = qp->rq_head & (qp->rq_entries - 1);
    ctx.memory().write(qp->rq_addr + uint64_t{idx} * qp->rq_stride, slot, bytes);
    qp->rq_head++;
    posted++;
  }
  if (posted > 0)
    ctx.cpu().mmio_write32(IBVP_REG_QP_DB_BASE + qp->qp_num * IBVP_QP_DB_STRIDE + 4, qp->rq_head);
  return err;
}

SharedReceiveQueue* create_srq(ProtectionDomain* pd, uint32_t max_wr) {
  if (pd == nullptr) return nullptr;
  Context& ctx = *pd->context;
  ctx.cpu().spend_call();
  if (max_wr == 0 || max_wr > (1u << 16)) return nullptr;
  auto srq = std::make_unique<SharedReceiveQueue>();
  srq->context = &ctx;
  srq->pd = pd;
  srq->entries = round_up_pow2(max_wr);
  try {
    srq->ring = ctx.alloc(uint64_t{srq->entries} * IBVP_RECV_WQE_BYTES, kRingAlign);
    srq->db_record = ctx.alloc(4, kEventAlign);
  } catch (const std::bad_alloc&) {
    return nullptr;  // ENOMEM
  }
  ibvp_mbox_srq m{};
  m.ring_addr = srq->ring;
  m.db_record = srq->db_record;
  m.entries = srq->entries;
  m.pdn = pd->handle;
  uint32_t srqn = 0;
  if (ctx.command(IBVP_CMD_CREATE_SRQ, &m, sizeof m, srqn) != IBVP_CMD_STATUS_OK) return nullptr;
  srq->srqn = srqn;
  ctx.srqs.push_back(std::move(srq));
  return ctx.srqs.back().get();
}

int post_srq_recv(SharedReceiveQueue* srq, RecvWr* wr, RecvWr** bad_wr) {
  if (srq == nullptr) return EINVAL;
  Context& ctx = *srq->context;
  ctx.cpu().spend_call();
  int err = 0;
  uint32_t posted = 0;
  for (RecvWr* w = wr; w != nullptr; w = w->next) {
    if (w->num_sge < 0 || w->num_sge > 1) err = EINVAL;
    else if (srq->head - srq->tail >= srq->entries) err = ENOMEM;
    if (err != 0) {
      if (bad_wr) *bad_wr = w;
      break;
    }
    uint8_t slot[IBVP_RECV_WQE_BYTES + IBVP_MAX_SGE * IBVP_SGE_BYTES];
    recv_wqe(*w, slot);
    ctx.memory().write(srq->ring + uint64_t{srq->head & (srq->entries - 1)} * IBVP_RECV_WQE_BYTES, slot,
                       IBVP_RECV_WQE_BYTES);
    srq->head++;
    posted++;
  }
  // The WQEs are in memory before the producer index that shows them (a plain store: the HCA
  // reads it by DMA, no MMIO).
  if (posted > 0) ctx.memory().write(srq->db_record, &srq->head, sizeof srq->head);
  return err;
}

namespace {
uint64_t cqe_address(const CompletionQueue& cq) {
  return cq.ring + uint64_t{cq.consumer & (cq.entries - 1)} * IBVP_CQE_BYTES;
}
}  // namespace

int poll_cq(CompletionQueue* cq, int num_entries, Wc* wc) {
  if (cq == nullptr || num_entries < 0) return -EINVAL;
  Context& ctx = *cq->context;
  // The CQ is read when the call starts; the call's cost follows.
  int n = 0;
  // What the observer hears of each completion returned (send: the WQE it completes).
  struct Returned {
    uint32_t qpn;
    bool send;
    uint32_t wqe_index;
  };
  std::vector<Returned> returned(ctx.observer() ? static_cast<size_t>(num_entries) : 0);
  while (n < num_entries) {
    ibvp_cqe e;
    ctx.memory().read(cqe_address(*cq), &e, sizeof e);
    const uint8_t expected = static_cast<uint8_t>(((cq->consumer / cq->entries) & 1) ^ 1);
    if ((e.owner & 1) != expected) break;
    Wc& w = wc[n++];
    w.wr_id = e.wr_id;
    w.status = static_cast<WcStatus>(e.status);
    w.opcode = static_cast<WcOpcode>(e.opcode);
    w.byte_len = e.byte_len;
    w.imm_data = e.imm_data;
    w.qp_num = e.qp_num;
    // Requester completions (SEND, RDMA WRITE, RDMA READ) have opcodes below IBVP_WC_RECV.
    const bool send_side = e.opcode < IBVP_WC_RECV;
    w.src_qp = send_side ? 0 : e.src_qp;
    w.wc_flags = e.wc_flags;
    w.slid = e.slid;
    w.sl = e.sl;
    cq->consumer++;
    if (ctx.observer()) returned[n - 1] = {e.qp_num, send_side, send_side ? e.src_qp - 1 : 0u};
    if (QueuePair* qp = ctx.qp_by_number(e.qp_num)) {
      // Send completions carry the WQE counter: every WQE before it is done, signaled or not.
      if (send_side) qp->sq_tail = e.src_qp;
      else if (qp->srq != nullptr) qp->srq->tail++;
      else qp->rq_tail++;
    }
  }
  ctx.cpu().spend_call();
  if (hca::HcaObserver* o = ctx.observer()) {
    const uint64_t t = sim::TimedQueue::now_ps();
    for (int i = 0; i < n; ++i)
      o->on_poll_return(ctx.node(), returned[i].qpn, returned[i].send, returned[i].wqe_index, wc[i].wr_id, t);
  }
  return n;
}

int poll_cq_wait(CompletionQueue* cq, Wc& wc) {
  host::HostCpu& cpu = cq->context->cpu();
  for (;;) {
    // Arm first, then look: a CQE landing during the poll wakes the wait at once.
    const auto monitor = cpu.arm_monitor(cqe_address(*cq), IBVP_CQE_BYTES);
    const int n = poll_cq(cq, 1, &wc);
    if (n != 0) {
      cpu.disarm_monitor(monitor);
      return n;
    }
    cpu.wait_monitor(monitor);
  }
}

int req_notify_cq(CompletionQueue* cq, int solicited_only) {
  if (cq == nullptr) return EINVAL;
  cq->context->cpu().spend_call();
  cq->context->cpu().mmio_write32(IBVP_REG_CQ_DB_BASE + cq->cqn * IBVP_CQ_DB_STRIDE, solicited_only ? 2 : 1);
  return 0;
}

int modify_cq(CompletionQueue* cq, const CqModeration& moderation) {
  if (cq == nullptr) return EINVAL;
  Context& ctx = *cq->context;
  ctx.cpu().spend_call();
  ibvp_mbox_modify_cq m{};
  m.cqn = cq->cqn;
  m.cq_count = moderation.cq_count;
  m.cq_period = moderation.cq_period;
  uint32_t out = 0;
  const uint32_t status = ctx.command(IBVP_CMD_MODIFY_CQ, &m, sizeof m, out);
  if (status == IBVP_CMD_STATUS_BAD_PARAM) return EINVAL;
  return status == IBVP_CMD_STATUS_OK ? 0 : EIO;
}

int get_cq_event(CompletionQueue* cq) {
  if (cq == nullptr) return EINVAL;
  Context& ctx = *cq->context;
  host::HostCpu& cpu = ctx.cpu();
  for (;;) {
    const auto monitor = cpu.arm_monitor(cq->event_addr, 4);
    uint32_t count;
    ctx.memory().read(cq->event_addr, &count, sizeof count);
    if (count != cq->events_seen) {
      cpu.disarm_monitor(monitor);
      cq->events_seen = count;
      cpu.spend_call();
      return 0;
    }
    cpu.wait_monitor(monitor);
  }
}

}  // namespace ibvp::verbs
