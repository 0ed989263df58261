#include "firmware/default/pma.h"

#include <algorithm>

namespace ibvp::fw {

namespace mad = ib::mad;

namespace {
constexpr uint8_t kAllPorts = 0xFF;  // PortSelect of every port (ClassPortInfo AllPortSelect)
// ClassPortInfo:CapabilityMask of PerfMgt (IBA 16.1.2): AllPortSelect, and PortXmitWait
// kept in PortCounters.
constexpr uint16_t kCapAllPortSelect = 1u << 8;
constexpr uint16_t kCapPortXmitWait = 1u << 12;
// CounterSelect bits of PortCounters (IBA 16.1.3.5, Table 226); CounterSelect2 bit 0 selects
// PortXmitWait.
constexpr uint16_t kSelPortRcvErrors = 1u << 3;
constexpr uint16_t kSelPortXmitDiscards = 1u << 6;
constexpr uint16_t kSelVl15Dropped = 1u << 11;
constexpr uint16_t kSelPortXmitData = 1u << 12;
constexpr uint16_t kSelPortRcvData = 1u << 13;
constexpr uint16_t kSelPortXmitPkts = 1u << 14;
constexpr uint16_t kSelPortRcvPkts = 1u << 15;
constexpr uint8_t kSel2PortXmitWait = 1u << 0;

// Counters stop at their largest value instead of wrapping (IBA 16.1.3.5).
template <class T>
T saturate(uint64_t v) {
  constexpr uint64_t top = static_cast<T>(~T{0});
  return static_cast<T>(std::min(v, top));
}
}  // namespace

bool Pma::serves(const mad::MadHeader& h) {
  return h.mgmt_class == mad::kClassPerfMgt && (h.method == mad::kMethodGet || h.method == mad::kMethodSet);
}

uint64_t Pma::counter(uint32_t which) {
  // The low half first: its read latches the high half (ibvp_hal.h).
  const uint32_t lo = hal_->reg_read(c_, IBVP_REG_PC_BASE + 8 * which);
  const uint32_t hi = hal_->reg_read(c_, IBVP_REG_PC_BASE + 8 * which + 4);
  return uint64_t{hi} << 32 | lo;
}

Pma::Raw Pma::read_raw() {
  Raw r;
  // IBA 16.1.3.5: PortXmitData and PortRcvData count the octets from the LRH to the ICRC
  // (not the VCRC), divided by 4. Each packet's LRH..ICRC is a whole number of words.
  const uint64_t xmit_pkts = counter(IBVP_PC_XMIT_PKTS), rcv_pkts = counter(IBVP_PC_RCV_PKTS);
  r.xmit_data = (counter(IBVP_PC_XMIT_BYTES) - 2 * xmit_pkts) / 4;
  r.rcv_data = (counter(IBVP_PC_RCV_BYTES) - 2 * rcv_pkts) / 4;
  r.xmit_pkts = xmit_pkts;
  r.rcv_pkts = rcv_pkts;
  r.xmit_wait = counter(IBVP_PC_XMIT_WAIT_PS) / kXmitWaitTickPs;
  r.rcv_errors = counter(IBVP_PC_RCV_ERRORS);
  r.xmit_discards = counter(IBVP_PC_XMIT_DISCARDS);
  r.vl15_dropped = counter(IBVP_PC_VL15_DROPPED);
  return r;
}

mad::PortCounters Pma::port_counters(const Raw& r) const {
  mad::PortCounters c;
  c.port_select = 1;
  c.port_rcv_errors = saturate<uint16_t>(r.rcv_errors - base_.rcv_errors);
  c.port_xmit_discards = saturate<uint16_t>(r.xmit_discards - base_.xmit_discards);
  c.vl15_dropped = saturate<uint16_t>(r.vl15_dropped - base_.vl15_dropped);
  c.port_xmit_data = saturate<uint32_t>(r.xmit_data - base_.xmit_data);
  c.port_rcv_data = saturate<uint32_t>(r.rcv_data - base_.rcv_data);
  c.port_xmit_pkts = saturate<uint32_t>(r.xmit_pkts - base_.xmit_pkts);
  c.port_rcv_pkts = saturate<uint32_t>(r.rcv_pkts - base_.rcv_pkts);
  c.port_xmit_wait = saturate<uint32_t>(r.xmit_wait - base_.xmit_wait);
  return c;
}

mad::PerfMad Pma::answer(const mad::PerfMad& req) {
  mad::PerfMad resp;
  resp.hdr = req.hdr;
  resp.hdr.method = mad::kMethodGetResp;
  resp.data = req.data;
  uint16_t status = mad::kStatusOk;
  if (req.hdr.base_version != mad::kBaseVersion || req.hdr.class_version != mad::kPerfClassVersion) {
    status = mad::kStatusBadVersion;
  } else if (req.hdr.attribute_id == mad::kAttrClassPortInfo && req.hdr.method == mad::kMethodGet) {
    mad::ClassPortInfo cpi;
    cpi.class_version = mad::kPerfClassVersion;
    cpi.capability_mask = kCapAllPortSelect | kCapPortXmitWait;
    cpi.resp_time_value = 8;
    resp.data.fill(0);
    cpi.encode(resp.data.data());
  } else if (req.hdr.attribute_id == mad::kAttrPortCounters) {
    const mad::PortCounters in = mad::PortCounters::decode(req.data);
    if (in.port_select != 1 && in.port_select != kAllPorts) {
      status = mad::kStatusInvalidField;
    } else {
      const Raw now = read_raw();
      if (req.hdr.method == mad::kMethodSet) {
        const uint16_t sel = in.counter_select;
        if (sel & kSelPortRcvErrors) base_.rcv_errors = now.rcv_errors;
        if (sel & kSelPortXmitDiscards) base_.xmit_discards = now.xmit_discards;
        if (sel & kSelVl15Dropped) base_.vl15_dropped = now.vl15_dropped;
        if (sel & kSelPortXmitData) base_.xmit_data = now.xmit_data;
        if (sel & kSelPortRcvData) base_.rcv_data = now.rcv_data;
        if (sel & kSelPortXmitPkts) base_.xmit_pkts = now.xmit_pkts;
        if (sel & kSelPortRcvPkts) base_.rcv_pkts = now.rcv_pkts;
        if (in.counter_select2 & kSel2PortXmitWait) base_.xmit_wait = now.xmit_wait;
      }
      mad::PortCounters out = port_counters(now);
      out.port_select = in.port_select;
      resp.data.fill(0);
      out.encode(resp.data);
    }
  } else {
    status = mad::kStatusUnsupportedAttribute;  // also a Set of ClassPortInfo, which is Get only here
  }
  resp.hdr.status = status;
  return resp;
}

}  // namespace ibvp::fw
