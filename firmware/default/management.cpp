// Management datagrams (IBVP_EV_MAD): QP0, the SMI, with the directed-route rules of IBA
// 14.2.2, and QP1, the GSI (IBA 13.5). The SMA and PMA (sma.cpp, pma.cpp) answer the
// requests they serve; the rest goes to the host's management software, or a request
// nobody serves is answered "class not supported" (IBA 13.4.7).
#include "firmware/default/firmware.h"

#include <cstring>

#include "firmware/default/constants.h"

namespace ibvp::fw {

void Firmware::on_mad(const ibvp_fw_event& ev) {
  namespace mad = ib::mad;
  const ibvp_rx_packet& rx = *ev.rx;
  const bool from_host = ev.arg == IBVP_MAD_FROM_HOST;
  ibvp_mad m{};
  m.dlid = rx.dlid;
  m.slid = rx.slid;
  m.sl = rx.sl;
  m.p_key = rx.p_key;
  m.dest_qp = rx.dest_qp;
  m.src_qp = rx.src_qp;
  m.q_key = rx.q_key;
  // IBA 13.5.3: QP1 takes datagrams with the GSI's Q_Key only.
  if (rx.payload_len != IBVP_MAD_BYTES || (rx.dest_qp == 1 && rx.q_key != IBVP_GSI_QKEY) ||
      hal_->rx_read(c_, 0, m.mad, IBVP_MAD_BYTES) != 0) {
    hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
    return;
  }
  mad::Bytes in;
  std::memcpy(in.data(), m.mad, IBVP_MAD_BYTES);
  const mad::MadHeader h = mad::decode_header(in);
  const bool directed = rx.dest_qp == 0 && h.mgmt_class == mad::kClassSubnDirected;
  mad::Smp dr;
  if (directed) {
    // The SMI's directed-route rules (IBA 14.2.2). Our host's SM sends its requests through
    // here: HopPointer steps to 1 and the SMP leaves by the port, or, with HopCount 0, it is
    // for this node's SMA. From the wire, a CA is the end of every path: a request there is
    // this node's, a returning SMP goes to the host's SM.
    dr = mad::decode_smp(in);
    if (from_host && dr.returning()) {
      if (hal_->mad_send(c_, &m) != 0) hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      return;
    }
    // The host's software may have made the sending SMI's step itself, as Linux's kernel SMI
    // does (HopPointer 1): the firmware steps only one that has HopPointer 0.
    mad::DrHop hop;
    if (!from_host) hop = mad::dr_receive(dr, false, 1, 1);
    else if (dr.hop_pointer() == 0) hop = mad::dr_originate(dr);
    else if (dr.hop_pointer() == 1 && dr.hop_count() == 0) hop = mad::DrHop{mad::DrRoute::local, 0, 0};
    else if (dr.hop_pointer() == 1) hop = mad::DrHop{mad::DrRoute::port, dr.initial_path[1], 0};
    if (hop.route == mad::DrRoute::port && from_host && hop.port == 1) {
      mad::Bytes outgoing;
      mad::encode(dr, outgoing);
      std::memcpy(m.mad, outgoing.data(), IBVP_MAD_BYTES);
      if (hal_->mad_send(c_, &m) != 0) hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      return;
    }
    if (hop.route != mad::DrRoute::local) {
      hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      return;
    }
    mad::encode(dr, in);  // with the hop pointer and return path as the SMI left them
    std::memcpy(m.mad, in.data(), IBVP_MAD_BYTES);
  }
  const bool sma = rx.dest_qp == 0 && Sma::serves(h) && !(directed && dr.returning());
  const bool pma = rx.dest_qp == 1 && Pma::serves(h);
  if (!sma && !pma) {
    // Responses, traps, reports and the classes the firmware has no agent for belong to the
    // host's management software (an SM, a umad client).
    if (hal_->mad_to_host(c_, &m) == 0) {
      hal_->counter_add(c_, IBVP_CNT_MADS_TO_HOST, 1);
      return;
    }
    // Nobody listens: a request is answered "class not supported" (IBA 13.4.7, status 1;
    // 13.5.3.3: a GSI request for a class without an agent), anything else is dropped.
    const bool request = !h.response() && (h.method == mad::kMethodGet || h.method == mad::kMethodSet);
    if (!request || directed) {
      hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      return;
    }
    mad::Bytes out = in;
    out[3] = mad::kMethodGetResp;
    mad::put16(out.data() + 4, mad::kStatusBadVersion);
    reply_mad(rx, from_host, rx.slid, out);
    return;
  }
  if (costs_.mad_cycles) hal_->consume_cycles(c_, costs_.mad_cycles);
  mad::Bytes out{};
  if (pma) {
    mad::encode(pma_->answer(mad::decode_perf(in)), out);
    hal_->counter_add(c_, IBVP_CNT_GMPS, 1);
    reply_mad(rx, from_host, rx.slid, out);
    return;
  }
  mad::Smp resp = sma_->answer(directed ? dr : mad::decode_smp(in));
  uint16_t dlid = rx.slid;
  if (directed) {
    // The returning SMP goes back out of the port (IBA 14.2.2.3, C14-13): in directed-route
    // mode with the permissive DLID, or, when the request's path ended LID-routed, to the
    // switch that sent it there (its SLID). One from this host returns to it.
    if (mad::dr_originate(resp).route == mad::DrRoute::discard) {
      hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
      return;
    }
    dlid = rx.dlid == IBVP_PERMISSIVE_LID ? IBVP_PERMISSIVE_LID : rx.slid;
  }
  mad::encode(resp, out);
  hal_->counter_add(c_, IBVP_CNT_SMPS, 1);
  reply_mad(rx, from_host, dlid, out);
}

void Firmware::reply_mad(const ibvp_rx_packet& rx, bool from_host, uint16_t dlid, const ib::mad::Bytes& resp) {
  ibvp_mad m{};
  m.dlid = dlid;
  m.sl = rx.sl;
  m.p_key = rx.p_key;
  // IBA 13.5.3: a response goes to the requester's QP; QP0 answers from QP0 with Q_Key 0,
  // QP1 from QP1 with the GSI's Q_Key.
  m.dest_qp = rx.dest_qp == 0 ? 0 : rx.src_qp;
  m.src_qp = rx.dest_qp;
  m.q_key = rx.dest_qp == 0 ? 0 : IBVP_GSI_QKEY;
  std::memcpy(m.mad, resp.data(), IBVP_MAD_BYTES);
  if (from_host) {
    m.slid = rx.dlid;
    m.dlid = rx.slid;
    if (hal_->mad_to_host(c_, &m) == 0) hal_->counter_add(c_, IBVP_CNT_MADS_TO_HOST, 1);
    return;
  }
  // A GMP's response needs a QP1 at the requester: mad_send sends dest_qp 0 or 1 only.
  if (m.dest_qp > 1) m.dest_qp = 1;
  if (hal_->mad_send(c_, &m) != 0) hal_->counter_add(c_, IBVP_CNT_RX_DROPPED, 1);
}

}  // namespace ibvp::fw
