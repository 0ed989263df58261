#include "hca/hca_bench.h"

#include <gtest/gtest.h>

namespace ibvp::tb {

sw::SwitchConfig HcaBenchOptions::default_switch() {
  sw::SwitchConfig c;
  c.num_ports = 2;
  c.vl_buffer_bytes = 4 * 4160;  // four 4 KiB-MTU packets
  return c;
}

HcaBench::HcaBench(const HcaBenchOptions& o) {
  const link::LinkRate rate(o.cable);
  h1 = std::make_unique<driver::HostNode>("h1", 0, kLid1, o.h1, rate, packets, payloads, probe);
  h2 = std::make_unique<driver::HostNode>("h2", 1, kLid2, o.h2, rate, packets, payloads, probe);
  hca::Hca* hcas[2] = {&h1->hca, &h2->hca};
  if (!o.switched) {
    auto l = std::make_unique<link::Link>("link0", o.cable);
    hcas[0]->tx.bind(l->in[0]);
    l->out[0].bind(hcas[1]->rx);
    hcas[1]->tx.bind(l->in[1]);
    l->out[1].bind(hcas[0]->rx);
    for (uint8_t vl = 0; vl < o.h1.hca.data_vls; ++vl) {
      hcas[0]->set_peer_buffer(vl, o.h2.hca.vl_buffer_bytes);
      hcas[1]->set_peer_buffer(vl, o.h1.hca.vl_buffer_bytes);
    }
    links.push_back(std::move(l));
    return;
  }
  sw = std::make_unique<sw::Switch>("sw", 2, o.switch_cfg,
                                    std::vector<sw::Switch::Cable>{{1, rate}, {2, rate}}, packets, payloads, probe);
  sw::Lft lft;
  lft.port = {sw::Lft::kNoRoute, 1, 2};  // LID 1 on port 1, LID 2 on port 2
  sw->set_lft(lft);
  for (int i = 0; i < 2; ++i) {
    const uint16_t port = static_cast<uint16_t>(i + 1);
    auto l = std::make_unique<link::Link>(("link" + std::to_string(i)).c_str(), o.cable);
    // Direction 0: HCA -> switch; direction 1: switch -> HCA.
    hcas[i]->tx.bind(l->in[0]);
    l->out[0].bind(sw->rx(port));
    sw->tx(port).bind(l->in[1]);
    l->out[1].bind(hcas[i]->rx);
    const hca::HcaConfig& hc = i == 0 ? o.h1.hca : o.h2.hca;
    for (uint8_t vl = 0; vl < o.switch_cfg.data_vls; ++vl) {
      hcas[i]->set_peer_buffer(vl, o.switch_cfg.vl_buffer_bytes);
      sw->set_peer_buffer(port, vl, hc.vl_buffer_bytes);
    }
    links.push_back(std::move(l));
  }
}

void open_side(Side& s, driver::HostNode& host, verbs::QpType type, uint32_t doorbell_class, uint32_t access,
               int cq_entries) {
  s.ctx = verbs::open_device(host.cpu, Side::kDriverArea, Side::kDriverBytes);
  ASSERT_NE(s.ctx, nullptr);
  verbs::PortAttr port;
  ASSERT_EQ(verbs::query_port(*s.ctx, 1, port), 0);
  s.lid = port.lid;
  s.pd = verbs::alloc_pd(*s.ctx);
  s.mr = verbs::reg_mr(s.pd, Side::kBuffer, Side::kBufferBytes, access);
  ASSERT_NE(s.mr, nullptr);
  s.send_cq = verbs::create_cq(*s.ctx, cq_entries);
  s.recv_cq = verbs::create_cq(*s.ctx, cq_entries);
  ASSERT_NE(s.send_cq, nullptr);
  ASSERT_NE(s.recv_cq, nullptr);
  s.qp = add_qp(s, type, doorbell_class);
  ASSERT_NE(s.qp, nullptr);
}

verbs::QueuePair* add_qp(Side& s, verbs::QpType type, uint32_t doorbell_class) {
  verbs::QpInitAttr a;
  a.send_cq = s.send_cq;
  a.recv_cq = s.recv_cq;
  a.qp_type = type;
  a.doorbell_class = doorbell_class;
  return verbs::create_qp(s.pd, a);
}

void bring_up(verbs::QueuePair* qp, uint16_t dlid, uint32_t dest_qpn, uint32_t qkey) {
  using namespace verbs;
  QpAttr a;
  a.qp_state = QpState::init;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qkey = qkey;
  a.qp_access_flags = ACCESS_LOCAL_WRITE;
  const bool ud = qp->qp_type == QpType::ud;
  ASSERT_EQ(modify_qp(qp, a, QP_STATE | QP_PKEY_INDEX | QP_PORT | (ud ? QP_QKEY : QP_ACCESS_FLAGS)), 0);
  a.qp_state = QpState::rtr;
  uint32_t mask = QP_STATE;
  if (!ud) {
    a.ah_attr.dlid = dlid;
    a.ah_attr.sl = 0;
    a.path_mtu = Mtu::mtu_1024;
    a.dest_qp_num = dest_qpn;
    a.rq_psn = 0x100;
    mask |= QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN;
    if (qp->qp_type == QpType::rc) mask |= QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER;
  }
  ASSERT_EQ(modify_qp(qp, a, mask), 0);
  a.qp_state = QpState::rts;
  a.sq_psn = 0x100;
  mask = QP_STATE | QP_SQ_PSN;
  if (qp->qp_type == QpType::rc) mask |= QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC;
  ASSERT_EQ(modify_qp(qp, a, mask), 0);
}

void bring_up_connected(verbs::QueuePair* qp, uint16_t dlid, uint32_t dest_qpn, const ConnectedAttrs& c) {
  using namespace verbs;
  QpAttr a;
  a.qp_state = QpState::init;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags = c.access;
  ASSERT_EQ(modify_qp(qp, a, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS), 0);
  a.qp_state = QpState::rtr;
  a.ah_attr.dlid = dlid;
  a.ah_attr.sl = c.sl;
  a.path_mtu = c.mtu;
  a.dest_qp_num = dest_qpn;
  a.rq_psn = 0x100;
  a.min_rnr_timer = c.min_rnr_timer;
  a.max_rd_atomic = c.max_rd_atomic;
  a.max_dest_rd_atomic = c.max_dest_rd_atomic;
  uint32_t mask = QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN;
  if (qp->qp_type == QpType::rc) mask |= QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER;
  ASSERT_EQ(modify_qp(qp, a, mask), 0);
  a.qp_state = QpState::rts;
  a.sq_psn = 0x100;
  a.timeout = c.timeout;
  a.retry_cnt = c.retry_cnt;
  a.rnr_retry = c.rnr_retry;
  mask = QP_STATE | QP_SQ_PSN;
  if (qp->qp_type == QpType::rc) mask |= QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC;
  ASSERT_EQ(modify_qp(qp, a, mask), 0);
}

void expect_firmware_refused(const char* firmware_args, const char* message) {
  HcaBenchOptions o;
  o.h1.hca.firmware_args = firmware_args;
  try {
    HcaBench bench(o);
    ADD_FAILURE() << "firmware started with " << firmware_args;
  } catch (const hca::FirmwareError& e) {
    EXPECT_NE(std::string(e.what()).find("refused to start"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

}  // namespace ibvp::tb
