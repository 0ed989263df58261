/* ibvp firmware HAL: the only interface between HCA firmware and the HCA hardware model.
 *
 * Plain C (C99) so that an image can be written in C or C++ and built against this one
 * header; firmware never includes SystemC or model headers. The header also fixes the
 * hardware/software contract the driver depends on: the register map (BAR0), the command
 * mailbox layouts, and the byte layouts of send/receive WQEs and CQEs in host memory. All
 * host-memory structures are little-endian; packets are big-endian on the wire (the tx
 * engine builds them; docs/hca.md describes the whole interface).
 *
 * An image is a shared library exporting (C linkage):
 *   uint32_t ibvp_fw_hal_version(void);            must return IBVP_HAL_VERSION it was built with
 *   void*    ibvp_fw_init(const struct ibvp_hal*, const char* args);   NULL: refuse to start
 *   void     ibvp_fw_handle(void* fw, const struct ibvp_fw_event* ev);
 *   void     ibvp_fw_fini(void* fw);
 * The platform refuses an image whose version differs from its own IBVP_HAL_VERSION. All
 * state lives in the object ibvp_fw_init returns: two HCAs loading one image share its code
 * (dlopen returns one handle), never its state.
 *
 * Time: the embedded core runs one event at a time, in arrival order, to completion. It
 * charges `event_cycles` before each event and `hal_call_cycles` at every HAL call, at the
 * core clock; dma_read stalls the core until the data is there. Firmware charges its own
 * computation with consume_cycles.
 */
#ifndef IBVP_HAL_H
#define IBVP_HAL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change to this header that changes layout or meaning. */
#define IBVP_HAL_VERSION 8u /* 2: RDMA descriptors, packet windows, RETH on rx, QP scheduling attributes;
                             3: held packets (IBVP_TXF_HOLD, tx_release);
                             4: multicast attach and detach (IBVP_CMD_ATTACH_MCAST);
                             5: QP0/QP1 in firmware: IBVP_EV_MAD, rx_read, mad_send, mad_to_host,
                                the port's SMA registers (GUIDs, NodeDescription, LID/LMC and
                                PortState set by firmware, SL2VL and VLArb tables, link width
                                and speed) and its counters (IBVP_REG_PC_*);
                             6: inline data (IBVP_SEND_INLINE, ibvp_mbox_qp.max_inline in the upper
                                half of what was db_class), BlueFlame
                                (IBVP_REG_BF_SIZE, IBVP_REG_BF_BASE, ibvp_send_wqe.bf_pi,
                                ibvp_doorbell.wqe_bytes, doorbell_wqe), tx_post_inline;
                             7: RNR NAK and retry (ibvp_mbox_modify_qp.min_rnr_timer, IBVP_CNT_RNR_*);
                                CQ moderation (IBVP_CMD_MODIFY_CQ); shared receive queues
                                (IBVP_CMD_CREATE_SRQ; ibvp_mbox_qp.rq_entries 0, rq_addr the SRQN);
                             8: atomics (IBVP_WR_ATOMIC_*, IBVP_ACCESS_REMOTE_ATOMIC, IBVP_WC_COMP_SWAP and
                                FETCH_ADD, IBVP_TX_ATOMIC_*, ibvp_tx_desc.atomic_*, ibvp_rx_packet.atomic_*;
                                ibvp_send_wqe: bf_pi at 44, the UD fields from 48 sharing their bytes
                                with compare_add and swap); ibvp_mbox_modify_qp.cur_state 8 bits, then
                                max_rd_atomic and max_dest_rd_atomic; multiple SGEs (struct ibvp_sge,
                                ibvp_send_wqe.num_sge, ibvp_recv_wqe.num_sge, ibvp_mbox_qp.qp_type 8 bits
                                then max_send_sge and max_recv_sge, ibvp_send_stride_sge,
                                ibvp_recv_stride, tx_post_gather) */

/* ---------------------------------------------------------------------------------------
 * Register map (BAR0 byte offsets; 32-bit registers, 32-bit accesses).
 * ------------------------------------------------------------------------------------- */
#define IBVP_REG_DEVICE_ID 0x0000u     /* RO: IBVP_DEVICE_ID */
#define IBVP_REG_HAL_VERSION 0x0004u   /* RO: HAL version of the loaded image */
#define IBVP_REG_PORT_LID 0x0008u      /* RO: base LID of the port */
#define IBVP_REG_DATA_VLS 0x000Cu      /* RO: operational data VLs */
#define IBVP_REG_DB_CLASSES 0x0010u    /* RO: doorbell priority classes */
#define IBVP_REG_MAX_QPS 0x0014u       /* RO: QP numbers 0 .. MAX_QPS-1 have doorbells */
#define IBVP_REG_SL2VL_BASE 0x0040u    /* RO (host), RW (firmware): 16 registers, SL -> VL of the CA port */
/* v5: the port as its subnet management agent (the firmware's SMA, IBA 14.2.5) reads and
 * sets it. A register written by firmware acts at once on the port's hardware. */
#define IBVP_REG_PORT_LMC 0x0018u      /* RO (host), RW (firmware): LMC; the port takes DLIDs
                                          PORT_LID .. PORT_LID + 2^LMC - 1 (IBA 7.11.1) */
#define IBVP_REG_PORT_STATE 0x001Cu    /* RO (host), RW (firmware): IBVP_PORT_* (PortInfo:PortState) */
#define IBVP_REG_LINK_WIDTH 0x0020u    /* RO: PortInfo:LinkWidthActive (1: 1x, 2: 4x, 4: 8x, 8: 12x, 16: 2x) */
#define IBVP_REG_LINK_SPEED 0x0024u    /* RO: PortInfo:LinkSpeedActive (1: SDR, 2: DDR, 4: QDR and FDR10;
                                          0 with an extended speed) */
#define IBVP_REG_LINK_SPEED_EXT 0x0028u /* RO: PortInfo:LinkSpeedExtActive (1: FDR, 2: EDR, 4: HDR,
                                           8: NDR; 0: none) */
/* v6: BlueFlame (as mlx4/mlx5's BF registers): bytes of the write-combining buffer per QP,
 * 0 when the device has none. The driver writes a whole send WQE (with its inline data)
 * there instead of ringing the SQ doorbell, so the HCA has the WQE without a DMA read. */
#define IBVP_REG_BF_SIZE 0x002Cu
#define IBVP_REG_NODE_GUID_LO 0x0030u  /* RO: NodeGUID (NodeInfo), low 32 bits */
#define IBVP_REG_NODE_GUID_HI 0x0034u
#define IBVP_REG_PORT_GUID_LO 0x0038u  /* RO: PortGUID of port 1 (NodeInfo, PortInfo's GID) */
#define IBVP_REG_PORT_GUID_HI 0x003Cu
#define IBVP_REG_NODE_DESC_BASE 0x0200u /* RO: 16 registers, NodeDescription's 64 bytes (IBA
                                          14.2.5.2), byte i in bits 8*(i%4) of register i/4 */
#define IBVP_REG_VLARB_HIGH_BASE 0x0300u /* RO (host), RW (firmware): 64 registers, entry i of the
                                           high-priority VLArbitration table: VL << 8 | weight */
#define IBVP_REG_VLARB_LOW_BASE 0x0400u  /* the same for the low-priority table */
#define IBVP_REG_VLARB_HIGH_LIMIT 0x0500u /* RO (host), RW (firmware): PortInfo:VLHighLimit */
#define IBVP_REG_VLARB_COMMIT 0x0504u    /* W (firmware): 1 loads the VLARB_* registers into the
                                            port's arbiter, which starts from their first entry */
#define IBVP_VLARB_ENTRIES 64u           /* per table: PortInfo:VLArbitrationHighCap and LowCap */
/* Port counters (RO), 64 bits each at IBVP_REG_PC_BASE + 8 * IBVP_PC_*: low half at +0, high
 * half at +4; reading the low half latches the high half, so the pair is one value. They
 * count from the start of the run and are never cleared: the PMA keeps its own baselines. */
#define IBVP_REG_PC_BASE 0x0600u
enum ibvp_port_counter {
  IBVP_PC_XMIT_BYTES = 0, /* wire bytes sent, LRH .. VCRC, every VL */
  IBVP_PC_RCV_BYTES,      /* wire bytes received */
  IBVP_PC_XMIT_PKTS,
  IBVP_PC_RCV_PKTS,
  IBVP_PC_XMIT_WAIT_PS,   /* time the port had packets to send and none could go for lack of
                             credits, in ps (PortXmitWait's ticks are the PMA's to define) */
  IBVP_PC_VL15_DROPPED,   /* VL15 packets that found the VL15 buffer full (IBA 7.9.4) */
  IBVP_PC_RCV_ERRORS,     /* packets the rx engine discarded: CRC, length, DLID not the port's */
  IBVP_PC_XMIT_DISCARDS,  /* data packets the port discarded because it was not Active */
  IBVP_PC_COUNT
};
/* PortInfo:PortState (IBA 14.2.5.6, 7.2). The port starts in the state the platform gives it
 * (Active when the subnet manager programs the fabric out of band). Outside Active it sends
 * only VL15 and discards data packets given to it (IBVP_PC_XMIT_DISCARDS); in Down and Init it
 * also discards data packets that arrive (IBVP_PC_RCV_ERRORS). */
enum { IBVP_PORT_DOWN = 1, IBVP_PORT_INIT = 2, IBVP_PORT_ARMED = 3, IBVP_PORT_ACTIVE = 4 };
/* Command interface (a mailbox in host memory, read and written by firmware with DMA). */
#define IBVP_REG_CMD_MAILBOX_LO 0x0100u /* RW: host address of the mailbox, low 32 bits */
#define IBVP_REG_CMD_MAILBOX_HI 0x0104u /* RW: high 32 bits */
#define IBVP_REG_CMD_OPCODE 0x0108u     /* RW: IBVP_CMD_* */
#define IBVP_REG_CMD_GO 0x010Cu         /* RW: host writes 1; firmware writes 0 when done */
#define IBVP_REG_CMD_STATUS 0x0110u     /* RW (firmware): IBVP_CMD_STATUS_* */
#define IBVP_REG_CMD_OUT 0x0114u        /* RW (firmware): result (a QPN, CQN, key) */
/* Doorbells, write only. SQ/RQ: value = new producer index (free-running 32-bit count of
 * WQEs posted). CQ arm: value = 1 (next completion) or 2 (next solicited completion). */
#define IBVP_REG_QP_DB_BASE 0x10000u
#define IBVP_QP_DB_STRIDE 8u            /* per QPN: SQ doorbell at +0, RQ doorbell at +4 */
#define IBVP_REG_CQ_DB_BASE 0x30000u
#define IBVP_CQ_DB_STRIDE 4u
/* v6: BlueFlame buffers, write only, one per QPN: a write of one send WQE (64 bytes, plus its
 * inline data rounded up to 8 bytes; at most IBVP_REG_BF_SIZE bytes) at offset 0 acts as an SQ
 * doorbell with producer index ibvp_send_wqe.bf_pi that carries the WQE. The CPU writes it
 * through a write-combining mapping, so it crosses PCIe as one posted TLP. */
#define IBVP_REG_BF_BASE 0x100000u
#define IBVP_BF_STRIDE 0x100u
#define IBVP_BAR_BYTES (IBVP_REG_BF_BASE + 0x4000u * IBVP_BF_STRIDE)

#define IBVP_DEVICE_ID 0x49425650u /* "IBVP" */

/* Commands. Mailbox layouts below; offsets are bytes from the mailbox address. */
enum ibvp_cmd {
  IBVP_CMD_NOP = 0,
  IBVP_CMD_CREATE_CQ = 1, /* in: ibvp_mbox_cq;  out: CQN */
  IBVP_CMD_CREATE_QP = 2, /* in: ibvp_mbox_qp;  out: QPN */
  IBVP_CMD_MODIFY_QP = 3, /* in: ibvp_mbox_modify_qp */
  IBVP_CMD_REG_MR = 4,    /* in: ibvp_mbox_mr;  out: key (lkey == rkey) */
  IBVP_CMD_QUERY = 5,     /* out: HAL version (the port is described by RO registers) */
  IBVP_CMD_ATTACH_MCAST = 6, /* in: ibvp_mbox_mcast (ibv_attach_mcast; IBA 10.5) */
  IBVP_CMD_DETACH_MCAST = 7, /* in: ibvp_mbox_mcast */
  IBVP_CMD_MODIFY_CQ = 8,    /* v7: in: ibvp_mbox_modify_cq (ibv_modify_cq's moderation) */
  IBVP_CMD_CREATE_SRQ = 9    /* v7: in: ibvp_mbox_srq;  out: SRQN */
};
enum ibvp_cmd_status {
  IBVP_CMD_STATUS_OK = 0,
  IBVP_CMD_STATUS_BAD_OPCODE = 1,
  IBVP_CMD_STATUS_BAD_PARAM = 2,
  IBVP_CMD_STATUS_NO_RESOURCES = 3,
  IBVP_CMD_STATUS_BAD_STATE = 4, /* illegal QP state transition or missing attributes */
  IBVP_CMD_STATUS_DMA_ERROR = 5
};

/* Mailboxes (little-endian, fixed layout; the structs below are that layout on any
 * little-endian host with natural alignment, which the static asserts check). */
struct ibvp_mbox_cq {
  uint64_t ring_addr;  /* 0: CQE ring, entries * IBVP_CQE_BYTES, zeroed by the driver */
  uint32_t entries;    /* 8: a power of two */
  uint32_t reserved;   /* 12 */
  uint64_t event_addr; /* 16: 32-bit counter the HCA increments (DMA write) on an armed event; 0: none */
};
struct ibvp_mbox_qp {
  uint8_t qp_type;       /* 0: IBVP_QPT_* (libibverbs values); v8: 8 bits (was 32) */
  uint8_t max_send_sge;  /* 1: v8: SGEs a send WQE may carry (0 counts as 1; at most IBVP_MAX_SGE) */
  uint8_t max_recv_sge;  /* 2: v8: SGEs a receive WQE may carry (0 counts as 1); an SRQ's QP: 1 */
  uint8_t reserved_v8;   /* 3 */
  uint32_t pdn;          /* 4 */
  uint32_t send_cqn;     /* 8 */
  uint32_t recv_cqn;     /* 12 */
  uint64_t sq_addr;      /* 16: send ring, sq_entries * IBVP_SEND_WQE_BYTES */
  uint64_t rq_addr;      /* 24: receive ring, rq_entries * IBVP_RECV_WQE_BYTES; v7: with rq_entries 0,
                            the SRQ the QP receives from (IBA 10.2.9): its SRQN */
  uint32_t sq_entries;   /* 32: a power of two */
  uint32_t rq_entries;   /* 36: a power of two; v7: 0, an SRQ (rq_addr) */
  uint16_t db_class;     /* 40: doorbell priority class (seed 003 Sec. 3.3.1), 0 = lowest */
  uint16_t max_inline;   /* 42: v6: inline bytes a send WQE may carry (0..IBVP_MAX_INLINE_DATA); a
                            send slot is then IBVP_SEND_WQE_BYTES plus max_inline rounded up to 64
                            (the inline data follows the WQE in its slot): ibvp_send_stride() */
  uint32_t ipd;          /* 44: static inter-packet delay in packet times (IBA 9.11.2) */
  uint32_t weight;       /* 48: weighted round robin: packets per turn (0 counts as 1) */
  uint32_t rate_mbps;    /* 52: VirtualClock reserved rate, Mb/s (0: the port's rate) */
};
struct ibvp_mbox_modify_qp {
  uint32_t qpn;       /* 0 */
  uint32_t attr_mask; /* 4: IBVP_QP_* bits (libibverbs ibv_qp_attr_mask values) */
  uint32_t qp_state;  /* 8: IBVP_QPS_* */
  uint8_t cur_state;  /* 12: the state the driver believes the QP is in */
  uint8_t max_rd_atomic;      /* 13: v8: RDMA READs and atomics this QP has outstanding as requester */
  uint8_t max_dest_rd_atomic; /* 14: v8: responder resources: atomic results kept for duplicates */
  uint8_t reserved_v8;        /* 15 */
  uint32_t qkey;      /* 16 */
  uint32_t dest_qpn;  /* 20 */
  uint32_t rq_psn;    /* 24 */
  uint32_t sq_psn;    /* 28 */
  uint16_t dlid;      /* 32 */
  uint8_t sl;         /* 34 */
  uint8_t path_mtu;   /* 35: IBVP_MTU_* (1 = 256 .. 5 = 4096) */
  uint16_t pkey_index;/* 36 */
  uint8_t port_num;   /* 38 */
  uint8_t timeout;    /* 39: local ACK timeout, 4.096 us * 2^timeout */
  uint8_t retry_cnt;  /* 40 */
  uint8_t rnr_retry;  /* 41: RNR retries (IBA 9.7.5.2.8); 7 = infinite */
  uint8_t min_rnr_timer; /* 42: v7: the RNR NAK timer code this QP's responder sends (IBA Table 45) */
  uint8_t reserved;   /* 43 */
  uint32_t access;    /* 44: IBVP_ACCESS_* */
};
struct ibvp_mbox_mr {
  uint64_t addr;   /* 0: first byte (host physical; the model has no address translation) */
  uint64_t length; /* 8 */
  uint32_t pdn;    /* 16 */
  uint32_t access; /* 20: IBVP_ACCESS_* */
};

/* A UD QP attached to a multicast group (IBA 10.5): the HCA hands every packet whose
 * DLID is the group's MLID (0xC000..0xFFFE) and whose BTH:DestQP is IBVP_MULTICAST_QPN to each
 * QP attached to that MLID. The MGID is not modelled: packets carry no GRH inside a subnet, so
 * the MLID names the group. */
#define IBVP_MULTICAST_QPN 0xFFFFFFu
#define IBVP_MLID_FIRST 0xC000u
#define IBVP_MLID_LAST 0xFFFEu
/* v7: CQ moderation (libibverbs ibv_modify_cq, IBV_CQ_ATTR_MODERATE). An armed CQ (next
 * completion) raises its event when cq_count CQEs have been written since it was armed, or
 * cq_period microseconds after the first of them, whichever comes first; 0 turns either
 * trigger off, and both 0 (the default) raise it at the first CQE. Solicited-only arming is
 * not moderated. */
struct ibvp_mbox_modify_cq {
  uint32_t cqn;       /* 0 */
  uint16_t cq_count;  /* 4 */
  uint16_t cq_period; /* 6: microseconds */
};
/* v7: a shared receive queue (IBA 10.2.9, ibv_create_srq): a ring of receive WQEs that the
 * QPs created with its srqn take from, in posting order, each WQE once. It has no doorbell:
 * the driver writes its producer index (a free-running 32-bit count of WQEs posted) to the
 * doorbell record, which the firmware reads by DMA when it needs WQEs (as mlx5's SRQs). */
struct ibvp_mbox_srq {
  uint64_t ring_addr; /* 0: entries * IBVP_RECV_WQE_BYTES */
  uint64_t db_record; /* 8: 32-bit producer index in host memory */
  uint32_t entries;   /* 16: a power of two */
  uint32_t pdn;       /* 20 */
};
struct ibvp_mbox_mcast {
  uint32_t qpn;      /* 0: a UD QP */
  uint16_t mlid;     /* 4: IBVP_MLID_FIRST..IBVP_MLID_LAST */
  uint16_t reserved; /* 6 */
};

/* libibverbs values (enum ibv_qp_type, ibv_qp_state, ibv_qp_attr_mask, ibv_access_flags,
 * ibv_mtu, ibv_wr_opcode, ibv_send_flags, ibv_wc_status, ibv_wc_opcode, ibv_wc_flags). */
enum { IBVP_QPT_RC = 2, IBVP_QPT_UC = 3, IBVP_QPT_UD = 4 };
enum { IBVP_QPS_RESET = 0, IBVP_QPS_INIT, IBVP_QPS_RTR, IBVP_QPS_RTS, IBVP_QPS_SQD, IBVP_QPS_SQE, IBVP_QPS_ERR };
enum {
  IBVP_QP_STATE = 1 << 0, IBVP_QP_CUR_STATE = 1 << 1, IBVP_QP_ACCESS_FLAGS = 1 << 3,
  IBVP_QP_PKEY_INDEX = 1 << 4, IBVP_QP_PORT = 1 << 5, IBVP_QP_QKEY = 1 << 6, IBVP_QP_AV = 1 << 7,
  IBVP_QP_PATH_MTU = 1 << 8, IBVP_QP_TIMEOUT = 1 << 9, IBVP_QP_RETRY_CNT = 1 << 10,
  IBVP_QP_RNR_RETRY = 1 << 11, IBVP_QP_RQ_PSN = 1 << 12, IBVP_QP_MAX_QP_RD_ATOMIC = 1 << 13,
  IBVP_QP_MIN_RNR_TIMER = 1 << 15, IBVP_QP_SQ_PSN = 1 << 16, IBVP_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
  IBVP_QP_DEST_QPN = 1 << 20
};
enum { IBVP_ACCESS_LOCAL_WRITE = 1, IBVP_ACCESS_REMOTE_WRITE = 2, IBVP_ACCESS_REMOTE_READ = 4,
       IBVP_ACCESS_REMOTE_ATOMIC = 8 /* v8 */ };
enum { IBVP_MTU_256 = 1, IBVP_MTU_512, IBVP_MTU_1024, IBVP_MTU_2048, IBVP_MTU_4096 };
enum { IBVP_WR_RDMA_WRITE = 0, IBVP_WR_RDMA_WRITE_WITH_IMM, IBVP_WR_SEND, IBVP_WR_SEND_WITH_IMM, IBVP_WR_RDMA_READ,
       IBVP_WR_ATOMIC_CMP_AND_SWP /* v8 */, IBVP_WR_ATOMIC_FETCH_AND_ADD /* v8 */ };
enum { IBVP_SEND_FENCE = 1, IBVP_SEND_SIGNALED = 2, IBVP_SEND_SOLICITED = 4, IBVP_SEND_INLINE = 8 };
enum {
  IBVP_WC_SUCCESS = 0, IBVP_WC_LOC_LEN_ERR, IBVP_WC_LOC_QP_OP_ERR, IBVP_WC_LOC_EEC_OP_ERR,
  IBVP_WC_LOC_PROT_ERR, IBVP_WC_WR_FLUSH_ERR, IBVP_WC_MW_BIND_ERR, IBVP_WC_BAD_RESP_ERR,
  IBVP_WC_LOC_ACCESS_ERR, IBVP_WC_REM_INV_REQ_ERR, IBVP_WC_REM_ACCESS_ERR, IBVP_WC_REM_OP_ERR,
  IBVP_WC_RETRY_EXC_ERR, IBVP_WC_RNR_RETRY_EXC_ERR
};
enum { IBVP_WC_SEND = 0, IBVP_WC_RDMA_WRITE = 1, IBVP_WC_RDMA_READ = 2, IBVP_WC_COMP_SWAP = 3 /* v8 */,
       IBVP_WC_FETCH_ADD = 4 /* v8 */, IBVP_WC_RECV = 128, IBVP_WC_RECV_RDMA_WITH_IMM = 129 };
enum { IBVP_WC_GRH = 1, IBVP_WC_WITH_IMM = 2 };

/* ---------------------------------------------------------------------------------------
 * Work queue entries and completions in host memory.
 * ------------------------------------------------------------------------------------- */
#define IBVP_SEND_WQE_BYTES 64u
#define IBVP_RECV_WQE_BYTES 32u
#define IBVP_CQE_BYTES 32u
/* v6: the most inline data a send WQE carries: with its 64-byte WQE, 256 bytes, one
 * BlueFlame buffer (mlx5's BF buffers are 256 bytes too). */
#define IBVP_MAX_INLINE_DATA 192u
/* v8: one scatter/gather element (libibverbs struct ibv_sge). A WQE's first SGE is in the WQE;
 * with num_sge n > 1 the others, n - 1 of 16 bytes each, follow it in its ring slot (a send
 * WQE's at byte 64, a receive WQE's at byte 32), as mlx5's data segments do. */
struct ibvp_sge {
  uint64_t addr;
  uint32_t length;
  uint32_t lkey;
};
#define IBVP_SGE_BYTES 16u
#define IBVP_MAX_SGE 8u /* per WQE, send and receive (ibv_device_attr.max_sge) */
/* v6: bytes of one send ring slot of a QP created with `max_inline`. */
static inline uint32_t ibvp_send_stride(uint32_t max_inline) {
  return IBVP_SEND_WQE_BYTES + (max_inline + IBVP_SEND_WQE_BYTES - 1) / IBVP_SEND_WQE_BYTES * IBVP_SEND_WQE_BYTES;
}
/* v8: the send slot of a QP created with `max_inline` and `max_sge`: room after the WQE for
 * the larger of its inline data and its SGEs beyond the first, in 64-byte units. */
static inline uint32_t ibvp_send_stride_sge(uint32_t max_inline, uint32_t max_sge) {
  const uint32_t sges = max_sge > 1 ? (max_sge - 1) * IBVP_SGE_BYTES : 0;
  return ibvp_send_stride(max_inline > sges ? max_inline : sges);
}
/* v8: the receive slot of a QP created with `max_sge`: the WQE and its SGEs beyond the first,
 * in 32-byte units. */
static inline uint32_t ibvp_recv_stride(uint32_t max_sge) {
  const uint32_t sges = max_sge > 1 ? (max_sge - 1) * IBVP_SGE_BYTES : 0;
  return IBVP_RECV_WQE_BYTES + (sges + IBVP_RECV_WQE_BYTES - 1) / IBVP_RECV_WQE_BYTES * IBVP_RECV_WQE_BYTES;
}
/* UD receive buffers start with room for a GRH (libibverbs semantics): the payload lands
 * 40 bytes in, and byte_len counts those 40 bytes. */
#define IBVP_UD_GRH_BYTES 40u

struct ibvp_send_wqe {
  uint8_t opcode;       /* 0: IBVP_WR_* */
  uint8_t flags;        /* 1: IBVP_SEND_* (FENCE, SIGNALED, SOLICITED, INLINE) */
  uint8_t num_sge;      /* 2: v8: SGEs; 0 or 1: the one below; n > 1: n - 1 more follow at byte 64
                           (struct ibvp_sge; not with INLINE, whose data the CPU gathered) */
  uint8_t reserved0;    /* 3 */
  uint32_t imm_data;    /* 4: sent as ImmDt, big-endian on the wire, as the host stored it */
  uint64_t wr_id;       /* 8 */
  uint64_t sge_addr;    /* 16: one scatter/gather element (INLINE: unused) */
  uint32_t sge_length;  /* 24 (INLINE: the inline bytes, which follow the WQE at byte 64) */
  uint32_t sge_lkey;    /* 28 */
  uint64_t remote_addr; /* 32: RDMA */
  uint32_t rkey;        /* 40: RDMA */
  uint32_t bf_pi;       /* 44: v6, BlueFlame: the SQ producer index after this WQE (the doorbell);
                           v8: at 44 (was 56) */
  /* v8: UD WQEs carry an address vector, atomic WQEs (RC only) their operands, in one place
   * (as libibverbs' wr.ud and wr.atomic). An atomic's remote_addr and rkey name the 8-byte
   * target (8-byte aligned, IBA 9.4.5); its SGE the 8-byte local buffer that receives the
   * original value. */
  union {
    struct {
      uint32_t remote_qpn;  /* 48: UD */
      uint32_t remote_qkey; /* 52: UD */
      uint16_t dlid;        /* 56: UD address vector */
      uint8_t sl;           /* 58: UD address vector */
      uint8_t reserved1;    /* 59 */
      uint32_t reserved2;   /* 60 */
    };
    struct {
      uint64_t compare_add; /* 48: CMP_AND_SWP: the compare value; FETCH_AND_ADD: the addend */
      uint64_t swap;        /* 56: CMP_AND_SWP: the value written when the compare matches */
    };
  };
};
struct ibvp_recv_wqe {
  uint64_t wr_id;    /* 0 */
  uint64_t addr;     /* 8 */
  uint32_t length;   /* 16 */
  uint32_t lkey;     /* 20 */
  uint32_t num_sge;  /* 24: v8: SGEs; 0 or 1: the one above; n > 1: n - 1 more follow at byte 32 */
  uint32_t reserved; /* 28 */
};
/* Written by the HCA; valid when (owner & 1) equals the pass bit the consumer expects:
 * 1 on the first pass over the (zeroed) ring, 0 on the second, and so on. */
struct ibvp_cqe {
  uint64_t wr_id;    /* 0 */
  uint32_t byte_len; /* 8 */
  uint32_t imm_data; /* 12 */
  uint32_t qp_num;   /* 16: the local QP */
  uint32_t src_qp;   /* 20: receive: the sender's QPN; send: the WQE counter (send WQEs consumed
                        up to and including this one), so the driver frees SQ slots of
                        unsignaled WQEs too */
  uint16_t slid;     /* 24: receive: the sender's LID */
  uint8_t status;    /* 26: IBVP_WC_* status */
  uint8_t opcode;    /* 27: IBVP_WC_* opcode */
  uint8_t wc_flags;  /* 28: IBVP_WC_GRH, IBVP_WC_WITH_IMM */
  uint8_t sl;        /* 29 */
  uint8_t reserved;  /* 30 */
  uint8_t owner;     /* 31: bit 0 */
};

/* ---------------------------------------------------------------------------------------
 * Hardware engines as firmware sees them.
 * ------------------------------------------------------------------------------------- */
/* A doorbell as filed by the hardware in the queue of its QP's priority class. */
struct ibvp_doorbell {
  uint32_t qpn;
  uint32_t kind; /* IBVP_DB_SQ, IBVP_DB_RQ, IBVP_DB_CQ_ARM (qpn then holds the CQN) */
  uint32_t value;
  uint32_t wqe_bytes; /* v6: bytes of send WQE a BlueFlame doorbell carries (doorbell_wqe); 0: none */
  uint64_t arrival_ps;
};
enum { IBVP_DB_SQ = 0, IBVP_DB_RQ = 1, IBVP_DB_CQ_ARM = 2 };

/* A message for the tx engine: it DMA-reads payload_len bytes at payload_addr, segments
 * them into MTU packets (first/middle/last/only opcodes, consecutive PSNs), builds
 * LRH/BTH/DETH/RETH/ImmDt/AETH with ICRC and VCRC, and queues the packets on `vl`.
 * A window (first_packet, num_packets) sends only those packets of the message, with the
 * opcodes and PSNs they have in the whole message: per-packet scheduling and go-back-N
 * retransmission (IBA 9.7.5.2.1) reuse one descriptor layout.
 *   RDMA_WRITE(_IMM): RETH (remote_addr, rkey, payload_len) on the first packet.
 *   RDMA_READ_REQ: one packet, no payload, RETH (remote_addr, rkey, dma_len).
 *   READ_RESP: payload from payload_addr, AETH (aeth_syndrome, msn) on first/last/only. */
enum {
  IBVP_TX_SEND = 0, IBVP_TX_SEND_IMM = 1, IBVP_TX_ACK = 2, IBVP_TX_RDMA_WRITE = 3, IBVP_TX_RDMA_WRITE_IMM = 4,
  IBVP_TX_RDMA_READ_REQ = 5, IBVP_TX_READ_RESP = 6,
  /* Congestion notification packet (IBA annex A10, BTH opcode 0x81): BTH only, BECN set,
   * DestQP = the QP that sent the marked packet; any qp_type, no payload. */
  IBVP_TX_CNP = 7,
  /* v8: RC atomics (IBA 9.4.5): one request packet with AtomicETH (remote_addr, rkey,
   * atomic_data, atomic_compare), no payload; the responder's ATOMIC ACKNOWLEDGE carries AETH
   * and AtomicAckETH (atomic_data: the original value). */
  IBVP_TX_ATOMIC_CMP_SWAP = 8,
  IBVP_TX_ATOMIC_FETCH_ADD = 9,
  IBVP_TX_ATOMIC_ACK = 10
};
/* ibvp_tx_desc.cc_flags */
enum {
  IBVP_TXF_BECN = 1,   /* BTH.BECN on every packet (an ACK returning a mark) */
  IBVP_TXF_ACKREQ = 2, /* RC requests: BTH.AckReq on every packet, not only the last */
  IBVP_TXF_HOLD = 4    /* the packets wait in the tx buffer, fetched and built, until tx_release
                          lets them go: a congestion window's next packet, fetched ahead */
};
struct ibvp_tx_desc {
  uint8_t qp_type;      /* IBVP_QPT_* : selects RC/UC/UD opcodes */
  uint8_t op;           /* IBVP_TX_* */
  uint8_t sl;
  uint8_t vl;
  uint16_t dlid;
  uint16_t p_key;
  uint32_t src_qp;      /* the sending QP (DETH.SrcQP for UD; pacing key for IPD) */
  uint32_t dest_qp;
  uint32_t q_key;       /* UD */
  uint32_t psn;         /* first packet's PSN */
  uint32_t imm_data;    /* SEND_IMM: ImmDt on the last packet */
  uint8_t solicited;    /* BTH.SE on the last packet */
  uint8_t aeth_syndrome;/* ACK */
  uint8_t notify_done;  /* raise IBVP_EV_TX_DONE with `cookie` when the last tail has left */
  uint8_t cc_flags;     /* IBVP_TXF_* */
  uint32_t msn;         /* ACK: AETH.MSN */
  uint32_t mtu_bytes;   /* segment size: 256 .. 4096 */
  uint32_t ipd;         /* static rate: idle packet times after each packet of src_qp */
  uint64_t payload_addr;
  uint32_t payload_len;
  uint32_t reserved2;
  uint64_t cookie;
  uint64_t remote_addr; /* RETH.VA */
  uint32_t rkey;        /* RETH.R_Key */
  uint32_t dma_len;     /* RETH.DMALen of a READ request (writes: payload_len) */
  uint32_t first_packet;/* window: first packet of the message to send */
  uint32_t num_packets; /* window: packets to send; 0 = to the end of the message */
  uint32_t dlid_ipd;    /* static rate per destination (IBA 9.11.2): idle packet times after
                           each packet to `dlid`, whatever QP sent it */
  uint32_t cc_ipd_q8;   /* congestion control rate of the flow (src_qp, dlid): after each of
                           its packets of duration d, the flow's next packet waits
                           cc_ipd_q8 * d / 256 after the tail (1/256 packet times; 0: none) */
  uint32_t reserved3;
  uint64_t atomic_data;    /* v8: AtomicETH Swap (CMP_SWAP) or Add (FETCH_ADD) data; ATOMIC_ACK:
                              AtomicAckETH's original data */
  uint64_t atomic_compare; /* v8: AtomicETH Compare data (CMP_SWAP) */
};

/* A received packet, after the rx engine checked its CRCs and lengths. Its payload stays
 * in the rx buffer until the event handler returns; rx_scatter moves bytes of it. */
struct ibvp_rx_packet {
  uint8_t opcode; /* BTH opcode (IBA Table 38) */
  uint8_t sl;
  uint8_t vl;
  uint8_t se;
  uint16_t slid;
  uint16_t dlid;
  uint16_t p_key;
  uint8_t ack_req;
  uint8_t has_immdt;
  uint32_t dest_qp;
  uint32_t psn;
  uint32_t src_qp;    /* DETH */
  uint32_t q_key;     /* DETH */
  uint32_t immdt;     /* ImmDt as a number (the wire's big-endian value) */
  uint8_t aeth_syndrome;
  uint8_t icrc_ok;
  uint8_t vcrc_ok;
  uint8_t ecn;        /* IBVP_RX_FECN | IBVP_RX_BECN: BTH.FECN / BTH.BECN as received */
  uint32_t aeth_msn;
  uint32_t payload_len;
  uint64_t reth_va;   /* RETH (RDMA WRITE first/only, READ request); v8: an atomic's AtomicETH VA */
  uint32_t reth_rkey; /* v8: an atomic's AtomicETH R_Key too */
  uint32_t reth_dma_len; /* v8: an atomic's 8 */
  uint64_t atomic_swap_add; /* v8: AtomicETH Swap or Add data */
  uint64_t atomic_compare;  /* v8: AtomicETH Compare data */
  uint64_t atomic_orig;     /* v8: AtomicAckETH original remote data (ATOMIC ACKNOWLEDGE) */
};

enum { IBVP_RX_FECN = 1, IBVP_RX_BECN = 2 };

enum ibvp_fw_event_kind {
  IBVP_EV_DOORBELL = 1,  /* a doorbell was filed, or VL space freed while doorbells wait */
  IBVP_EV_COMMAND = 2,   /* the host wrote CMD_GO */
  IBVP_EV_RX_PACKET = 3, /* `rx` is valid during the call */
  IBVP_EV_TX_DONE = 4,   /* `cookie` of a descriptor posted with notify_done */
  IBVP_EV_TIMER = 5,     /* `arg` = timer id */
  /* v5: a MAD for the port's QP0 (a UD SEND Only on VL15 with 256 bytes of payload) or QP1
   * (the GSI: on a data VL, credited like data). `rx` is valid during the call; rx_read gives
   * the 256 bytes. The firmware answers it (mad_send), passes it to the host's management
   * software (mad_to_host), or drops it. `arg`: IBVP_MAD_FROM_WIRE, or IBVP_MAD_FROM_HOST for
   * a MAD this host's management software sent to its own port (a directed-route SMP with
   * HopCount 0, IBA 14.2.2; a LID-routed MAD to the port's own LID), which the firmware
   * answers with mad_to_host. */
  IBVP_EV_MAD = 6
};
enum { IBVP_MAD_FROM_WIRE = 0, IBVP_MAD_FROM_HOST = 1 };
struct ibvp_fw_event {
  uint32_t kind;
  uint32_t arg;
  uint64_t cookie;
  uint64_t time_ps; /* when the event was raised */
  const struct ibvp_rx_packet* rx;
};

/* Counters the platform reports (Hca::fw_counter). */
enum ibvp_counter {
  IBVP_CNT_DOORBELLS = 0,
  IBVP_CNT_DOORBELLS_SKIPPED, /* scheduler passes that left QPs with work: their VL's tx buffer was full */
  IBVP_CNT_WQES,
  IBVP_CNT_TX_MESSAGES,
  IBVP_CNT_RX_PACKETS,
  IBVP_CNT_RX_DROPPED,        /* no QP, wrong state, bad Q_Key, no receive WQE, bad CRC */
  IBVP_CNT_RX_PSN_ERRORS,
  IBVP_CNT_ACKS_SENT,
  IBVP_CNT_NAKS_SENT,
  IBVP_CNT_NAKS_RECEIVED,
  IBVP_CNT_CQES,
  IBVP_CNT_ERROR_CQES,
  IBVP_CNT_RETRANSMISSIONS,   /* go-back-N restarts (timeout or PSN sequence NAK) */
  IBVP_CNT_ACK_TIMEOUTS,      /* local ACK timer expiries with requests outstanding */
  IBVP_CNT_DUPLICATES,        /* duplicate requests seen by a responder */
  IBVP_CNT_FECN_RECEIVED,     /* packets that arrived with FECN (a switch marked them) */
  IBVP_CNT_BECN_SENT,         /* ACKs sent with BECN and CNPs sent */
  IBVP_CNT_BECN_RECEIVED,     /* ACKs with BECN and CNPs received (the source's marks) */
  IBVP_CNT_SMPS,              /* v5: SMPs (QP0) the firmware's SMA answered */
  IBVP_CNT_GMPS,              /* v5: GMPs (QP1) the firmware's PMA answered */
  IBVP_CNT_MADS_TO_HOST,      /* v5: MADs passed to the host's management software */
  IBVP_CNT_RNR_NAKS_SENT,     /* v7: RNR NAKs a responder sent (a SEND found no receive WQE) */
  IBVP_CNT_RNR_RETRIES,       /* v7: RNR NAKs a requester waited out and retried after */
  IBVP_CNT_ATOMICS,           /* v8: atomics a responder executed (each once) */
  IBVP_CNT_ATOMIC_REPLAYS,    /* v8: duplicate atomics answered from the saved results */
  IBVP_CNT_COUNT
};

/* v5: a management datagram (IBA 13.5.1) as the firmware sends it from the port or hands it
 * to the host's management software: the addressing of its UD SEND Only and the 256 MAD
 * bytes, in wire (big-endian) order. */
#define IBVP_MAD_BYTES 256u
#define IBVP_GSI_QKEY 0x80010000u /* QP1's well-known Q_Key (IBA 13.5.3) */
#define IBVP_PERMISSIVE_LID 0xFFFFu
struct ibvp_mad {
  uint16_t dlid;    /* LRH.DLID (IBVP_PERMISSIVE_LID: a directed-route SMP) */
  uint16_t slid;    /* LRH.SLID; mad_send ignores it: the port writes its LID (the permissive
                       LID while it has none) */
  uint8_t sl;       /* LRH.SL: QP1 only; QP0 goes on VL15 with SL 0 */
  uint8_t reserved0;
  uint16_t p_key;   /* BTH.P_Key */
  uint32_t dest_qp; /* BTH.DestQP: 0 (the SMI, VL15) or 1 (the GSI, the SL's data VL) */
  uint32_t src_qp;  /* DETH.SrcQP */
  uint32_t q_key;   /* DETH.Q_Key */
  uint32_t reserved1;
  uint8_t mad[IBVP_MAD_BYTES];
};

enum { IBVP_LOG_DEBUG = 0, IBVP_LOG_INFO = 1, IBVP_LOG_WARN = 2, IBVP_LOG_ERROR = 3 };

/* The services of the HCA. `ctx` is passed back unchanged to every call. Each call is
 * charged hal_call_cycles. Return values: 0 success, negative failure. */
struct ibvp_hal {
  uint32_t version; /* IBVP_HAL_VERSION of the platform */
  void* ctx;
  uint32_t (*reg_read)(void* ctx, uint32_t offset);
  void (*reg_write)(void* ctx, uint32_t offset, uint32_t value);
  /* Host memory by DMA. dma_read stalls the core until the data has arrived; dma_write is
   * posted (the core goes on; writes reach memory in the order they were issued). */
  int (*dma_read)(void* ctx, uint64_t host_addr, void* buf, uint32_t len);
  int (*dma_write)(void* ctx, uint64_t host_addr, const void* buf, uint32_t len);
  /* Doorbell queues: class 0 .. DB_CLASSES-1, each FCFS. peek returns -1 past the end. */
  uint32_t (*doorbell_count)(void* ctx, uint32_t db_class);
  int (*doorbell_peek)(void* ctx, uint32_t db_class, uint32_t index, struct ibvp_doorbell* out);
  int (*doorbell_take)(void* ctx, uint32_t db_class, uint32_t index);
  /* Class in which the hardware files the doorbells of `qpn` from now on. */
  int (*doorbell_set_class)(void* ctx, uint32_t qpn, uint32_t db_class);
  /* Bytes the tx buffer of `vl` can still take (0 when full). */
  uint32_t (*tx_space)(void* ctx, uint32_t vl);
  int (*tx_post)(void* ctx, const struct ibvp_tx_desc* desc);
  /* DMA-writes payload bytes [offset, offset+len) of the packet being handled to host_addr. */
  int (*rx_scatter)(void* ctx, uint32_t payload_offset, uint64_t host_addr, uint32_t len);
  /* One-shot timers: IBVP_EV_TIMER with arg = id after delay_ps; set again to re-arm. */
  int (*timer_set)(void* ctx, uint32_t id, uint64_t delay_ps);
  int (*timer_cancel)(void* ctx, uint32_t id);
  uint64_t (*now_ps)(void* ctx);
  void (*counter_add)(void* ctx, uint32_t counter, uint64_t delta);
  /* Charges firmware computation: the core is busy `cycles` core cycles. */
  void (*consume_cycles)(void* ctx, uint64_t cycles);
  void (*log)(void* ctx, int level, const char* message);
  /* Lets the next `packets` packets of src_qp posted with IBVP_TXF_HOLD go, oldest first;
   * releases for packets not yet in the tx buffer apply when they arrive. */
  int (*tx_release)(void* ctx, uint32_t src_qp, uint32_t packets);
  /* v5. Copies payload bytes [offset, offset+len) of the packet being handled into firmware
   * memory (a MAD's 256 bytes: IBVP_EV_MAD). */
  int (*rx_read)(void* ctx, uint32_t payload_offset, void* buf, uint32_t len);
  /* Sends a MAD from the port: QP0 on VL15 (not credited, ahead of every data VL), QP1 on the
   * VL its SL maps to, credited like data. Fails with a dest_qp other than 0 or 1. */
  int (*mad_send)(void* ctx, const struct ibvp_mad* m);
  /* Hands a MAD to the host's management software (its QP0/QP1: an SM, a umad client);
   * fails when the host has none listening. */
  int (*mad_to_host)(void* ctx, const struct ibvp_mad* m);
  /* v6. Copies the send WQE (and its inline data) a BlueFlame doorbell carries: at most
   * `len` of its wqe_bytes. Fails for a doorbell without one. */
  int (*doorbell_wqe)(void* ctx, uint32_t db_class, uint32_t index, void* buf, uint32_t len);
  /* v6. As tx_post, but the payload_len bytes come from firmware memory (a WQE's inline data):
   * no DMA read; the packets are ready tx_pipeline_delay after the call. payload_addr is
   * ignored; at most IBVP_MAX_INLINE_DATA bytes. */
  int (*tx_post_inline)(void* ctx, const struct ibvp_tx_desc* desc, const void* payload);
  /* v8. As tx_post, but the payload is gathered from `num_sge` host buffers in order (one DMA
   * read per SGE piece of each packet); their lengths add up to payload_len, payload_addr is
   * ignored. At most IBVP_MAX_SGE. */
  int (*tx_post_gather)(void* ctx, const struct ibvp_tx_desc* desc, const struct ibvp_sge* sges, uint32_t num_sge);
};

/* What an image exports. */
typedef uint32_t (*ibvp_fw_hal_version_fn)(void);
typedef void* (*ibvp_fw_init_fn)(const struct ibvp_hal* hal, const char* args);
typedef void (*ibvp_fw_handle_fn)(void* fw, const struct ibvp_fw_event* ev);
typedef void (*ibvp_fw_fini_fn)(void* fw);

#if defined(__cplusplus)
static_assert(sizeof(struct ibvp_send_wqe) == IBVP_SEND_WQE_BYTES, "send WQE layout");
static_assert(sizeof(struct ibvp_recv_wqe) == IBVP_RECV_WQE_BYTES, "receive WQE layout");
static_assert(sizeof(struct ibvp_cqe) == IBVP_CQE_BYTES, "CQE layout");
static_assert(sizeof(struct ibvp_mbox_modify_qp) == 48, "MODIFY_QP mailbox layout");
static_assert(sizeof(struct ibvp_mbox_qp) == 56, "CREATE_QP mailbox layout");
static_assert(sizeof(struct ibvp_mbox_srq) == 24, "CREATE_SRQ mailbox layout");
static_assert(sizeof(struct ibvp_mbox_mcast) == 8, "ATTACH_MCAST mailbox layout");
static_assert(sizeof(struct ibvp_mbox_modify_cq) == 8, "MODIFY_CQ mailbox layout");
static_assert(sizeof(struct ibvp_mad) == 24 + IBVP_MAD_BYTES, "MAD layout");
#else
_Static_assert(sizeof(struct ibvp_send_wqe) == IBVP_SEND_WQE_BYTES, "send WQE layout");
_Static_assert(sizeof(struct ibvp_recv_wqe) == IBVP_RECV_WQE_BYTES, "receive WQE layout");
_Static_assert(sizeof(struct ibvp_cqe) == IBVP_CQE_BYTES, "CQE layout");
#endif

#ifdef __cplusplus
}
#endif

#endif /* IBVP_HAL_H */
