// The verbs driver: the QP state machine of libibverbs (IBA 10.3), refused calls, and the
// firmware's own check of commands that bypass the driver.
#include <gtest/gtest.h>

#include <cerrno>
#include <systemc>

#include "hca/hca_bench.h"

using namespace ibvp;
using namespace ibvp::verbs;
using sc_core::SC_MS;
using sc_core::sc_time;

TEST(Verbs, ModifyQpIsOkFollowsTheLibibverbsStateMachine) {
  const uint32_t init_rc = QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS;
  const uint32_t init_ud = QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_QKEY;
  EXPECT_TRUE(modify_qp_is_ok(QpType::rc, QpState::reset, QpState::init, init_rc));
  EXPECT_FALSE(modify_qp_is_ok(QpType::rc, QpState::reset, QpState::init, init_rc & ~QP_PORT));  // missing
  EXPECT_FALSE(modify_qp_is_ok(QpType::rc, QpState::reset, QpState::init, init_rc | QP_SQ_PSN));  // not allowed
  EXPECT_TRUE(modify_qp_is_ok(QpType::ud, QpState::reset, QpState::init, init_ud));
  EXPECT_FALSE(modify_qp_is_ok(QpType::ud, QpState::reset, QpState::init, init_rc));
  // Skipping states.
  EXPECT_FALSE(modify_qp_is_ok(QpType::rc, QpState::reset, QpState::rtr, QP_STATE));
  EXPECT_FALSE(modify_qp_is_ok(QpType::ud, QpState::init, QpState::rts, QP_STATE | QP_SQ_PSN));
  EXPECT_FALSE(modify_qp_is_ok(QpType::rc, QpState::rts, QpState::init, init_rc));
  EXPECT_FALSE(modify_qp_is_ok(QpType::rc, QpState::rtr, QpState::rtr, QP_STATE));
  // INIT -> RTR: RC needs the path and responder resources, UD nothing.
  const uint32_t rtr_uc = QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN;
  EXPECT_TRUE(modify_qp_is_ok(QpType::ud, QpState::init, QpState::rtr, QP_STATE));
  EXPECT_TRUE(modify_qp_is_ok(QpType::uc, QpState::init, QpState::rtr, rtr_uc));
  EXPECT_FALSE(modify_qp_is_ok(QpType::rc, QpState::init, QpState::rtr, rtr_uc));
  EXPECT_TRUE(modify_qp_is_ok(QpType::rc, QpState::init, QpState::rtr,
                              rtr_uc | QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER));
  // RTR -> RTS.
  EXPECT_TRUE(modify_qp_is_ok(QpType::ud, QpState::rtr, QpState::rts, QP_STATE | QP_SQ_PSN));
  EXPECT_FALSE(modify_qp_is_ok(QpType::rc, QpState::rtr, QpState::rts, QP_STATE | QP_SQ_PSN));
  // Any state to RESET or ERR.
  for (QpState s : {QpState::reset, QpState::init, QpState::rtr, QpState::rts, QpState::err}) {
    EXPECT_TRUE(modify_qp_is_ok(QpType::rc, s, QpState::err, QP_STATE));
    EXPECT_TRUE(modify_qp_is_ok(QpType::rc, s, QpState::reset, QP_STATE));
  }
}

TEST(Verbs, ModifyQpRefusesIllegalTransitionsAndPostsBeforeRts) {
  tb::HcaBench bench;
  tb::Side a;
  bool done = false;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::rc);
    QueuePair* qp = a.qp;
    QpAttr attr;
    attr.qp_state = QpState::rtr;
    EXPECT_EQ(modify_qp(qp, attr, QP_STATE), EINVAL);  // RESET -> RTR
    EXPECT_EQ(qp->state, QpState::reset);
    RecvWr r;
    r.sg = {tb::Side::kBuffer, 64, a.mr->lkey};
    EXPECT_EQ(post_recv(qp, &r), EINVAL);  // no receives in RESET
    attr.qp_state = QpState::init;
    attr.qp_access_flags = ACCESS_LOCAL_WRITE;
    EXPECT_EQ(modify_qp(qp, attr, QP_STATE | QP_PKEY_INDEX | QP_PORT), EINVAL);  // missing ACCESS_FLAGS
    EXPECT_EQ(modify_qp(qp, attr, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS), 0);
    EXPECT_EQ(qp->state, QpState::init);
    EXPECT_EQ(post_recv(qp, &r), 0);  // receives may be posted from INIT on
    SendWr w;
    w.sg = {tb::Side::kBuffer, 64, a.mr->lkey};
    EXPECT_EQ(post_send(qp, &w), EINVAL);  // sends only from RTS
    attr.qp_state = QpState::rts;
    EXPECT_EQ(modify_qp(qp, attr, QP_STATE | QP_SQ_PSN), EINVAL);  // INIT -> RTS
    attr.cur_qp_state = QpState::rtr;
    attr.qp_state = QpState::init;
    EXPECT_EQ(modify_qp(qp, attr, QP_STATE | QP_CUR_STATE), EINVAL);  // wrong current state
    // The firmware checks too: a MODIFY_QP command that skips the driver is refused.
    ibvp_mbox_modify_qp m{};
    m.qpn = qp->qp_num;
    m.attr_mask = IBVP_QP_STATE | IBVP_QP_SQ_PSN;
    m.qp_state = IBVP_QPS_RTS;
    uint32_t out = 0;
    EXPECT_EQ(a.ctx->command(IBVP_CMD_MODIFY_QP, &m, sizeof m, out), uint32_t{IBVP_CMD_STATUS_BAD_STATE});
    // Anything can go to ERR, and back to RESET.
    attr.qp_state = QpState::err;
    EXPECT_EQ(modify_qp(qp, attr, QP_STATE), 0);
    attr.qp_state = QpState::reset;
    EXPECT_EQ(modify_qp(qp, attr, QP_STATE), 0);
    EXPECT_EQ(qp->state, QpState::reset);
    done = true;
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  EXPECT_TRUE(done);
}

TEST(Verbs, FullReceiveQueueReturnsEnomemAndUnknownObjectsAreRefused) {
  tb::HcaBench bench;
  tb::Side a;
  bool done = false;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::ud);
    QpInitAttr small;
    small.send_cq = a.send_cq;
    small.recv_cq = a.recv_cq;
    small.qp_type = QpType::ud;
    small.cap.max_recv_wr = 2;
    QueuePair* qp = create_qp(a.pd, small);
    ASSERT_NE(qp, nullptr);
    tb::bring_up(qp, 0, 0);
    RecvWr r;
    r.sg = {tb::Side::kBuffer, 64, a.mr->lkey};
    EXPECT_EQ(post_recv(qp, &r), 0);
    EXPECT_EQ(post_recv(qp, &r), 0);
    EXPECT_EQ(post_recv(qp, &r), ENOMEM);
    EXPECT_EQ(reg_mr(a.pd, tb::Side::kBuffer, 0, ACCESS_LOCAL_WRITE), nullptr);
    QpInitAttr no_cq;
    EXPECT_EQ(create_qp(a.pd, no_cq), nullptr);
    SendWr w;  // UD without an address handle
    w.sg = {tb::Side::kBuffer, 64, a.mr->lkey};
    SendWr* bad = nullptr;
    EXPECT_EQ(post_send(qp, &w, &bad), EINVAL);
    EXPECT_EQ(bad, &w);
    done = true;
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  EXPECT_TRUE(done);
}
