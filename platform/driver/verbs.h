#pragma once
// A verbs driver for the ibvp HCA, with libibverbs' names and semantics (ibv_open_device,
// ibv_alloc_pd, ibv_reg_mr, ibv_create_cq, ibv_create_qp, ibv_modify_qp, ibv_post_send,
// ibv_post_recv, ibv_poll_cq, ibv_req_notify_cq, ibv_get_cq_event) in namespace
// ibvp::verbs without the ibv_ prefix. Invalid calls return errno values (EINVAL, ENOMEM)
// or nullptr, as libibverbs does.
//
// Every call runs in a program thread of the host CPU (host::HostCpu::run) and costs the
// CPU's verbs_call_cost; doorbells and commands are MMIO through the host bus. WQEs, CQEs
// and mailboxes are written and read in host memory with the layouts of
// firmware/hal/ibvp_hal.h (docs/hca.md). Host memory has no address translation: buffer
// addresses are host physical addresses.
#include <cstdint>
#include <memory>
#include <vector>

#include "firmware/hal/ibvp_hal.h"
#include "models/hca/hca_observer.h"
#include "models/host/host_cpu.h"

namespace ibvp::verbs {

// libibverbs enumerations (same values).
enum class QpType : uint32_t { rc = IBVP_QPT_RC, uc = IBVP_QPT_UC, ud = IBVP_QPT_UD };
enum class QpState : uint32_t { reset = 0, init, rtr, rts, sqd, sqe, err };
enum class Mtu : uint8_t { mtu_256 = 1, mtu_512, mtu_1024, mtu_2048, mtu_4096 };
enum class WrOpcode : uint8_t {
  rdma_write = 0, rdma_write_with_imm, send, send_with_imm, rdma_read, atomic_cmp_and_swp, atomic_fetch_and_add
};
enum class WcStatus : uint8_t {
  success = 0, loc_len_err, loc_qp_op_err, loc_eec_op_err, loc_prot_err, wr_flush_err, mw_bind_err,
  bad_resp_err, loc_access_err, rem_inv_req_err, rem_access_err, rem_op_err, retry_exc_err, rnr_retry_exc_err
};
enum class WcOpcode : uint8_t {
  send = 0, rdma_write = 1, rdma_read = 2, comp_swap = 3, fetch_add = 4, recv = 128, recv_rdma_with_imm = 129
};
// ibv_qp_attr_mask
enum QpAttrMask : uint32_t {
  QP_STATE = IBVP_QP_STATE, QP_CUR_STATE = IBVP_QP_CUR_STATE, QP_ACCESS_FLAGS = IBVP_QP_ACCESS_FLAGS,
  QP_PKEY_INDEX = IBVP_QP_PKEY_INDEX, QP_PORT = IBVP_QP_PORT, QP_QKEY = IBVP_QP_QKEY, QP_AV = IBVP_QP_AV,
  QP_PATH_MTU = IBVP_QP_PATH_MTU, QP_TIMEOUT = IBVP_QP_TIMEOUT, QP_RETRY_CNT = IBVP_QP_RETRY_CNT,
  QP_RNR_RETRY = IBVP_QP_RNR_RETRY, QP_RQ_PSN = IBVP_QP_RQ_PSN, QP_MAX_QP_RD_ATOMIC = IBVP_QP_MAX_QP_RD_ATOMIC,
  QP_MIN_RNR_TIMER = IBVP_QP_MIN_RNR_TIMER, QP_SQ_PSN = IBVP_QP_SQ_PSN,
  QP_MAX_DEST_RD_ATOMIC = IBVP_QP_MAX_DEST_RD_ATOMIC, QP_DEST_QPN = IBVP_QP_DEST_QPN
};
enum AccessFlags : uint32_t {
  ACCESS_LOCAL_WRITE = IBVP_ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE = IBVP_ACCESS_REMOTE_WRITE,
  ACCESS_REMOTE_READ = IBVP_ACCESS_REMOTE_READ, ACCESS_REMOTE_ATOMIC = IBVP_ACCESS_REMOTE_ATOMIC
};
enum SendFlags : uint32_t {
  SEND_FENCE = IBVP_SEND_FENCE, SEND_SIGNALED = IBVP_SEND_SIGNALED, SEND_SOLICITED = IBVP_SEND_SOLICITED,
  SEND_INLINE = IBVP_SEND_INLINE
};
enum WcFlags : uint32_t { WC_GRH = IBVP_WC_GRH, WC_WITH_IMM = IBVP_WC_WITH_IMM };

class Context;
struct CompletionQueue;
struct QueuePair;
struct SharedReceiveQueue;

struct ProtectionDomain {
  Context* context;
  uint32_t handle;
};
struct MemoryRegion {
  Context* context;
  ProtectionDomain* pd;
  uint64_t addr;
  uint64_t length;
  uint32_t lkey;
  uint32_t rkey;
};
struct AhAttr {
  uint16_t dlid = 0;
  uint8_t sl = 0;
  uint8_t port_num = 1;
};
struct AddressHandle {
  ProtectionDomain* pd;
  AhAttr attr;
};
struct Sge {
  uint64_t addr = 0;
  uint32_t length = 0;
  uint32_t lkey = 0;
};
struct SendWr {
  uint64_t wr_id = 0;
  SendWr* next = nullptr;
  Sge sg;               // the scatter/gather list of one element (num_sge 0 or 1, sg_list null)
  int num_sge = 1;
  // libibverbs' sg_list: num_sge elements (at most the QP's max_send_sge), gathered in order
  // (IBA 10.7.2.1); null: `sg`.
  Sge* sg_list = nullptr;
  WrOpcode opcode = WrOpcode::send;
  uint32_t send_flags = 0;
  uint32_t imm_data = 0;
  struct {
    uint64_t remote_addr = 0;
    uint32_t rkey = 0;
  } rdma;
  // IBV_WR_ATOMIC_*: 8 bytes at remote_addr (8-byte aligned); the original value comes back
  // into the 8-byte SGE (IBA 9.4.5).
  struct {
    uint64_t remote_addr = 0;
    uint64_t compare_add = 0;  // CMP_AND_SWP: compare; FETCH_AND_ADD: the addend
    uint64_t swap = 0;         // CMP_AND_SWP: written when the target equals compare_add
    uint32_t rkey = 0;
  } atomic;
  struct {
    AddressHandle* ah = nullptr;
    uint32_t remote_qpn = 0;
    uint32_t remote_qkey = 0;
  } ud;
};
struct RecvWr {
  uint64_t wr_id = 0;
  RecvWr* next = nullptr;
  Sge sg;
  int num_sge = 1;
  Sge* sg_list = nullptr;  // num_sge elements (at most max_recv_sge; an SRQ's: 1), scattered in order; null: `sg`
};
struct Wc {
  uint64_t wr_id = 0;
  WcStatus status = WcStatus::success;
  WcOpcode opcode = WcOpcode::send;
  uint32_t byte_len = 0;
  uint32_t imm_data = 0;
  uint32_t qp_num = 0;
  uint32_t src_qp = 0;
  uint32_t wc_flags = 0;
  uint16_t slid = 0;
  uint8_t sl = 0;
};
struct QpCap {
  uint32_t max_send_wr = 64;
  uint32_t max_recv_wr = 64;
  uint32_t max_send_sge = 1;  // at most IBVP_MAX_SGE; SGEs 2.. take 16 bytes of the send slot each
  uint32_t max_recv_sge = 1;  // at most IBVP_MAX_SGE (1 with an SRQ)
  // Bytes a send WQE may carry inline (IBV_SEND_INLINE); at most IBVP_MAX_INLINE_DATA. Each
  // send slot grows by this, rounded up to 64 bytes (the data follows the WQE, as in mlx5).
  uint32_t max_inline_data = 0;
};
struct QpInitAttr {
  CompletionQueue* send_cq = nullptr;
  CompletionQueue* recv_cq = nullptr;
  QpCap cap;
  QpType qp_type = QpType::rc;
  bool sq_sig_all = false;
  // ibvp extensions (as mlx5dv extends libibverbs): the doorbell priority class of the QP
  // (seed 003 Sec. 3.3.1) and its static inter-packet delay (IBA 9.11.2) in packet times.
  uint32_t doorbell_class = 0;
  uint32_t ipd = 0;
  // QP scheduling in the HCA (docs/hca.md, "QP scheduling"): packets per turn under
  // weighted round robin, and the reserved rate (Mb/s) VirtualClock derives Vtick from.
  uint32_t weight = 1;
  uint32_t reserved_rate_mbps = 0;
  // IBA 10.2.9: receive from this shared receive queue instead of the QP's own (null).
  SharedReceiveQueue* srq = nullptr;
};
struct QpAttr {
  QpState qp_state = QpState::reset;
  QpState cur_qp_state = QpState::reset;
  Mtu path_mtu = Mtu::mtu_4096;
  uint32_t qkey = 0;
  uint32_t rq_psn = 0;
  uint32_t sq_psn = 0;
  uint32_t dest_qp_num = 0;
  uint32_t qp_access_flags = 0;
  AhAttr ah_attr;
  uint16_t pkey_index = 0;
  uint8_t port_num = 1;
  uint8_t timeout = 14;
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 12;
  uint8_t max_rd_atomic = 1;
  uint8_t max_dest_rd_atomic = 1;
};
struct PortAttr {
  uint16_t lid = 0;
  Mtu active_mtu = Mtu::mtu_4096;
  uint32_t data_vls = 1;
};

struct CompletionQueue {
  Context* context;
  uint32_t cqn;
  uint32_t entries;      // ring entries (a power of two, at least the cqe asked for)
  uint64_t ring;         // host address of the CQE ring
  uint64_t event_addr;   // host address of the CQ's event counter
  uint32_t consumer = 0; // CQEs consumed
  uint32_t events_seen = 0;
};
struct QueuePair {
  Context* context;
  ProtectionDomain* pd;
  uint32_t qp_num;
  QpType qp_type;
  QpState state = QpState::reset;
  CompletionQueue* send_cq;
  CompletionQueue* recv_cq;
  bool sq_sig_all;
  uint64_t sq_addr, rq_addr;
  uint32_t sq_entries, rq_entries;
  uint32_t sq_head = 0, sq_tail = 0;  // WQEs posted; WQEs known completed (CQE wqe counter)
  uint32_t max_inline = 0;            // QpCap::max_inline_data
  uint32_t sq_stride = IBVP_SEND_WQE_BYTES;  // bytes per send slot: the WQE and its inline room
  uint32_t rq_stride = IBVP_RECV_WQE_BYTES;  // bytes per receive slot: the WQE and its SGEs
  uint32_t max_send_sge = 1, max_recv_sge = 1;
  uint32_t rq_head = 0, rq_tail = 0;  // receive WQEs posted; completed
  SharedReceiveQueue* srq = nullptr;  // QpInitAttr::srq
};
// ibv_srq: a ring of receive WQEs several QPs take from (IBA 10.2.9). No doorbell: post_srq_recv
// writes the producer index to a doorbell record in host memory that the HCA reads when a
// message needs a WQE.
struct SharedReceiveQueue {
  Context* context;
  ProtectionDomain* pd;
  uint32_t srqn;
  uint64_t ring, db_record;
  uint32_t entries;
  uint32_t head = 0, tail = 0;  // WQEs posted; completed (receive CQEs of its QPs)
};

// Host memory of one host's driver and application, planned before the run (the host
// memory has no allocator of its own; addresses are host physical): the driver area first,
// from kDriverBase, then the application buffer, each page-aligned. A program asks for the
// objects it will create (cq, qp, as Context allocates them) and its buffer; end() is the
// host memory it needs. Page 0 stays unused, so address 0 is never a valid buffer.
class HostMemoryPlan {
 public:
  static constexpr uint64_t kPageBytes = 4096;
  static constexpr uint64_t kDriverBase = kPageBytes;

  HostMemoryPlan();  // the mailbox every Context has
  void cq(int cqe);                 // create_cq(cqe): CQE ring and event counter
  void qp(const QpCap& cap);        // create_qp: send and receive rings
  void buffer(uint64_t bytes) { buffer_bytes_ = bytes; }

  uint64_t driver_bytes() const;    // whole pages
  uint64_t buffer_address() const { return kDriverBase + driver_bytes(); }
  uint64_t end() const;             // first address past the buffer, whole pages

 private:
  void alloc(uint64_t bytes, uint64_t align);  // Context::alloc's arithmetic
  uint64_t next_ = 0;  // offset from kDriverBase
  uint64_t buffer_bytes_ = 0;
};

class Context {
 public:
  // The device behind `cpu`'s MMIO path. Driver memory (rings, mailbox, CQ event counters)
  // comes from [dma_base, dma_base + dma_bytes) of host memory.
  Context(host::HostCpu& cpu, uint64_t dma_base, uint64_t dma_bytes);
  ~Context();

  host::HostCpu& cpu() { return cpu_; }
  host::HostMemory& memory() { return cpu_.memory(); }
  // Driver memory, zeroed; throws std::bad_alloc when the area or the host memory is
  // exhausted (create_cq and create_qp then return nullptr, as libibverbs does on ENOMEM).
  uint64_t alloc(uint64_t bytes, uint64_t align = 64);
  // One command through the mailbox (program thread). Returns the IBVP_CMD_STATUS_*.
  uint32_t command(uint32_t opcode, const void* mailbox, uint32_t bytes, uint32_t& out);
  QueuePair* qp_by_number(uint32_t qpn);
  // Reports ring layouts, posts and poll returns of this host (`node`) to `o`; null: none.
  void set_observer(hca::HcaObserver* o, uint32_t node) {
    observer_ = o;
    node_ = node;
  }
  hca::HcaObserver* observer() const { return observer_; }
  uint32_t node() const { return node_; }
  // The device's BlueFlame buffer per QP (IBVP_REG_BF_SIZE, read at open); 0: none.
  uint32_t bf_bytes = 0;
  // Posts of one WQE that went by BlueFlame, and posts that rang the SQ doorbell.
  uint64_t bf_posts = 0, doorbell_posts = 0;

  std::vector<std::unique_ptr<ProtectionDomain>> pds;
  std::vector<std::unique_ptr<MemoryRegion>> mrs;
  std::vector<std::unique_ptr<CompletionQueue>> cqs;
  std::vector<std::unique_ptr<QueuePair>> qps;
  std::vector<std::unique_ptr<SharedReceiveQueue>> srqs;
  std::vector<std::unique_ptr<AddressHandle>> ahs;

 private:
  host::HostCpu& cpu_;
  uint64_t next_, end_;
  uint64_t mailbox_;
  hca::HcaObserver* observer_ = nullptr;
  uint32_t node_ = 0;
};

// ibv_open_device: checks the device ID and that the firmware speaks this driver's HAL
// version (MMIO reads). nullptr if not.
std::unique_ptr<Context> open_device(host::HostCpu& cpu, uint64_t dma_base, uint64_t dma_bytes);
int query_port(Context& ctx, uint8_t port_num, PortAttr& out);
ProtectionDomain* alloc_pd(Context& ctx);
MemoryRegion* reg_mr(ProtectionDomain* pd, uint64_t addr, uint64_t length, uint32_t access);
CompletionQueue* create_cq(Context& ctx, int cqe);
QueuePair* create_qp(ProtectionDomain* pd, const QpInitAttr& attr);
AddressHandle* create_ah(ProtectionDomain* pd, const AhAttr& attr);
// EINVAL for an illegal transition, missing or unexpected attributes (libibverbs /
// IBA 10.3 state machine), EIO if the device refuses.
int modify_qp(QueuePair* qp, const QpAttr& attr, uint32_t attr_mask);
// ibv_attach_mcast / ibv_detach_mcast: a UD QP joins (leaves) the multicast group of `mlid`
// (0xC000..0xFFFE), so the HCA hands it every packet sent to that MLID with DestQP 0xFFFFFF
// (IBA 10.5). The group is named by its MLID: there is no GRH, so no MGID. EINVAL for a QP
// that is not UD, an MLID outside the range, or attaching twice; EIO if the device refuses.
int attach_mcast(QueuePair* qp, uint16_t mlid);
int detach_mcast(QueuePair* qp, uint16_t mlid);
// A chain of work requests (next); one doorbell for the chain. On failure *bad_wr (if
// given) points at the first request not posted.
int post_send(QueuePair* qp, SendWr* wr, SendWr** bad_wr = nullptr);
int post_recv(QueuePair* qp, RecvWr* wr, RecvWr** bad_wr = nullptr);  // EINVAL on a QP with an SRQ
// ibv_create_srq (max_wr WQEs, rounded up to a power of two) and ibv_post_srq_recv.
SharedReceiveQueue* create_srq(ProtectionDomain* pd, uint32_t max_wr);
int post_srq_recv(SharedReceiveQueue* srq, RecvWr* wr, RecvWr** bad_wr = nullptr);
// Returns the number of completions written to wc (0 .. num_entries), never waits.
int poll_cq(CompletionQueue* cq, int num_entries, Wc* wc);
int req_notify_cq(CompletionQueue* cq, int solicited_only);
// ibv_modify_cq with IBV_CQ_ATTR_MODERATE: an armed CQ raises its event after `cq_count`
// completions, or `cq_period` microseconds after the first of them (0 turns either off;
// both 0, the default, raise it at the first). EINVAL for an unknown CQ.
struct CqModeration {
  uint16_t cq_count = 0;
  uint16_t cq_period = 0;  // us
};
int modify_cq(CompletionQueue* cq, const CqModeration& moderation);
// ibv_get_cq_event for this driver: waits until the HCA signals an event of an armed CQ.
int get_cq_event(CompletionQueue* cq);

// ibvp addition for polling programs: poll until one completion arrives, waiting between
// polls on the next CQE's cache line (monitor/mwait) instead of spinning. Returns 1.
int poll_cq_wait(CompletionQueue* cq, Wc& wc);

// ibv_wc_status_str: the status's name ("SUCCESS", "RETRY_EXC_ERR", ...).
const char* wc_status_str(WcStatus s);
// The path MTU enumerator of `bytes` (256..4096; anything else gives 4096).
Mtu mtu_from_bytes(uint32_t bytes);

// The QP state machine of libibverbs (kernel ib_modify_qp_is_ok): whether `mask` is a
// legal modify from `cur` to `next` for `type`.
bool modify_qp_is_ok(QpType type, QpState cur, QpState next, uint32_t mask);

}  // namespace ibvp::verbs
