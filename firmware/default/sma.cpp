#include "firmware/default/sma.h"

namespace ibvp::fw {

namespace mad = ib::mad;

namespace {
constexpr uint32_t kNodeDeviceId = 0x4942;  // "IB": the virtual platform's HCA
constexpr uint32_t kPartitionCap = mad::PKeyBlock::kEntries;  // one block of P_Keys
constexpr uint16_t kLastUnicastLid = 0xBFFF;  // IBA 4.1.3: 0x0001 .. 0xBFFF are unicast LIDs

uint64_t reg64(const ibvp_hal* hal, void* c, uint32_t lo, uint32_t hi) {
  return uint64_t{hal->reg_read(c, hi)} << 32 | hal->reg_read(c, lo);
}
}  // namespace

Sma::Sma(const ibvp_hal* hal, uint8_t (&sl2vl)[16]) : hal_(hal), c_(hal->ctx), sl2vl_(sl2vl) {
  data_vls_ = reg(IBVP_REG_DATA_VLS);
  operational_vls_ = mad::vl_cap_code(data_vls_);
}

bool Sma::serves(const mad::MadHeader& h) {
  const bool subn = h.mgmt_class == mad::kClassSubnLid || h.mgmt_class == mad::kClassSubnDirected;
  const bool request = h.method == mad::kMethodGet || h.method == mad::kMethodSet;
  return subn && request && h.attribute_id != mad::kAttrSmInfo;
}

mad::Smp Sma::answer(const mad::Smp& request) {
  mad::SmpData data{};
  uint16_t status;
  // IBA 13.4.7: a version the agent does not implement is answered with status 1.
  if (request.hdr.base_version != mad::kBaseVersion || request.hdr.class_version != mad::kSmpClassVersion)
    status = mad::kStatusBadVersion;
  else if (request.hdr.method == mad::kMethodGet)
    status = get(request, data);
  else
    status = set(request, data);
  mad::Smp resp = mad::make_response(request, status);
  // The data of a failed request is the request's (IBA 13.4.7 leaves it undefined).
  if (status == mad::kStatusOk) resp.data = data;
  return resp;
}

uint16_t Sma::get(const mad::Smp& req, mad::SmpData& out) {
  const uint32_t mod = req.hdr.attribute_modifier;
  switch (req.hdr.attribute_id) {
    case mad::kAttrNodeInfo: {
      // IBA 14.2.5.3: a CA of one port; SystemImageGUID is the node's own GUID.
      mad::NodeInfo n;
      n.node_type = mad::kNodeCa;
      n.num_ports = 1;
      n.node_guid = reg64(hal_, c_, IBVP_REG_NODE_GUID_LO, IBVP_REG_NODE_GUID_HI);
      n.system_image_guid = n.node_guid;
      n.port_guid = reg64(hal_, c_, IBVP_REG_PORT_GUID_LO, IBVP_REG_PORT_GUID_HI);
      n.partition_cap = kPartitionCap;
      n.device_id = kNodeDeviceId;
      n.revision = reg(IBVP_REG_HAL_VERSION);
      n.local_port_num = 1;  // the port the SMP came in by
      n.vendor_id = 0;
      n.encode(out);
      return mad::kStatusOk;
    }
    case mad::kAttrNodeDescription: {
      mad::NodeDescription d;
      for (uint32_t i = 0; i < 16; ++i) {
        const uint32_t w = reg(IBVP_REG_NODE_DESC_BASE + 4 * i);
        for (uint32_t b = 0; b < 4; ++b) {
          const char ch = static_cast<char>(w >> (8 * b) & 0xFF);
          if (ch == '\0') {
            d.encode(out);
            return mad::kStatusOk;
          }
          d.text.push_back(ch);
        }
      }
      d.encode(out);
      return mad::kStatusOk;
    }
    case mad::kAttrPortInfo:
      // AttributeModifier: the port number; 0 names the port the SMP arrived on (IBA 14.2.5.6).
      if (mod > 1) return mad::kStatusInvalidField;
      port_info().encode(out);
      return mad::kStatusOk;
    case mad::kAttrPKeyTable: {
      if ((mod & 0xFFFF) != 0) return mad::kStatusInvalidField;  // one block: PartitionCap 32
      mad::PKeyBlock b;
      for (uint32_t i = 0; i < mad::PKeyBlock::kEntries; ++i) b.p_key[i] = p_keys_[i];
      b.encode(out);
      return mad::kStatusOk;
    }
    case mad::kAttrSlToVlMappingTable: {
      mad::SlToVlTable t;
      for (uint32_t sl = 0; sl < 16; ++sl) t.vl[sl] = static_cast<uint8_t>(reg(IBVP_REG_SL2VL_BASE + 4 * sl));
      t.encode(out);
      return mad::kStatusOk;
    }
    case mad::kAttrVlArbitrationTable: {
      const uint32_t block = mod & 0xFFFF;
      if (block < mad::kVlArbLow0 || block > mad::kVlArbHigh32) return mad::kStatusInvalidField;
      vlarb_block(static_cast<uint8_t>(block)).encode(out);
      return mad::kStatusOk;
    }
    default: return mad::kStatusUnsupportedAttribute;
  }
}

uint16_t Sma::set(const mad::Smp& req, mad::SmpData& out) {
  const uint32_t mod = req.hdr.attribute_modifier;
  switch (req.hdr.attribute_id) {
    case mad::kAttrPortInfo: {
      if (mod > 1) return mad::kStatusInvalidField;
      const uint16_t st = set_port_info(mad::PortInfo::decode(req.data));
      if (st != mad::kStatusOk) return st;
      break;
    }
    case mad::kAttrPKeyTable: {
      if ((mod & 0xFFFF) != 0) return mad::kStatusInvalidField;
      const mad::PKeyBlock b = mad::PKeyBlock::decode(req.data);
      for (uint32_t i = 0; i < mad::PKeyBlock::kEntries; ++i) p_keys_[i] = b.p_key[i];
      break;
    }
    case mad::kAttrSlToVlMappingTable: {
      // Every SL must map to an operational data VL or to VL15, which drops its packets
      // (IBA 7.6.6); the table is taken whole or not at all.
      const mad::SlToVlTable t = mad::SlToVlTable::decode(req.data);
      for (uint32_t sl = 0; sl < 16; ++sl)
        if (t.vl[sl] >= data_vls_ && t.vl[sl] != 15) return mad::kStatusInvalidField;
      for (uint32_t sl = 0; sl < 16; ++sl) {
        reg_write(IBVP_REG_SL2VL_BASE + 4 * sl, t.vl[sl]);
        sl2vl_[sl] = t.vl[sl];
      }
      break;
    }
    case mad::kAttrVlArbitrationTable: {
      const uint32_t block = mod & 0xFFFF;
      if (block < mad::kVlArbLow0 || block > mad::kVlArbHigh32) return mad::kStatusInvalidField;
      const mad::VlArbBlock b = mad::VlArbBlock::decode(req.data);
      for (const mad::VlArbEntry& e : b.entry)
        if (e.weight != 0 && e.vl >= data_vls_) return mad::kStatusInvalidField;
      const bool high = block >= mad::kVlArbHigh0;
      const uint32_t first = (block == mad::kVlArbLow32 || block == mad::kVlArbHigh32) ? 32 : 0;
      const uint32_t base = high ? IBVP_REG_VLARB_HIGH_BASE : IBVP_REG_VLARB_LOW_BASE;
      for (uint32_t i = 0; i < mad::VlArbBlock::kEntries; ++i)
        reg_write(base + 4 * (first + i), uint32_t{b.entry[i].vl} << 8 | b.entry[i].weight);
      reg_write(IBVP_REG_VLARB_COMMIT, 1);
      break;
    }
    case mad::kAttrNodeInfo:
    case mad::kAttrNodeDescription:
      return mad::kStatusUnsupportedAttribute;  // read-only (IBA 14.2.5: Get only)
    default: return mad::kStatusUnsupportedAttribute;
  }
  // A Set is answered with what a Get returns after it (IBA 14.2.5).
  return get(req, out);
}

mad::PortInfo Sma::port_info() {
  mad::PortInfo p;
  p.gid_prefix = gid_prefix_;
  p.lid = static_cast<uint16_t>(reg(IBVP_REG_PORT_LID));
  p.master_sm_lid = master_sm_lid_;
  p.m_key_lease_period = m_key_lease_period_;
  p.local_port_num = 1;
  const uint8_t width = static_cast<uint8_t>(reg(IBVP_REG_LINK_WIDTH));
  p.link_width_enabled = width;
  p.link_width_supported = width;
  p.link_width_active = width;
  const uint8_t speed = static_cast<uint8_t>(reg(IBVP_REG_LINK_SPEED));
  const uint8_t speed_ext = static_cast<uint8_t>(reg(IBVP_REG_LINK_SPEED_EXT));
  p.link_speed_supported = speed ? speed : 1;
  p.link_speed_active = speed;
  p.link_speed_enabled = speed ? speed : 1;
  p.link_speed_ext_active = speed_ext;
  p.link_speed_ext_supported = speed_ext;
  p.link_speed_ext_enabled = speed_ext;
  p.port_state = static_cast<uint8_t>(reg(IBVP_REG_PORT_STATE));
  // The cable is always trained in the model: LinkUp, and Polling after a link goes down.
  p.port_phys_state = p.port_state == mad::kPortDown ? mad::kPhysPolling : mad::kPhysLinkUp;
  p.link_down_default_state = mad::kPhysPolling;
  p.lmc = static_cast<uint8_t>(reg(IBVP_REG_PORT_LMC));
  p.neighbor_mtu = neighbor_mtu_;
  p.master_sm_sl = master_sm_sl_;
  p.vl_cap = mad::vl_cap_code(data_vls_);
  p.vl_high_limit = static_cast<uint8_t>(reg(IBVP_REG_VLARB_HIGH_LIMIT));
  p.vl_arbitration_high_cap = IBVP_VLARB_ENTRIES;
  p.vl_arbitration_low_cap = IBVP_VLARB_ENTRIES;
  p.mtu_cap = 5;  // 4096
  p.vl_stall_count = vl_stall_count_;
  p.hoq_life = hoq_life_;
  p.operational_vls = operational_vls_;
  p.guid_cap = 1;
  p.subnet_timeout = subnet_timeout_;
  p.resp_time_value = 8;  // 4.096 us * 2^8, about 1 ms (IBA 13.4.6.2)
  return p;
}

uint16_t Sma::set_port_info(const mad::PortInfo& in) {
  const uint32_t state = reg(IBVP_REG_PORT_STATE);
  // Checked first, applied after: a Set with an invalid field changes nothing (IBA 14.2.5.6).
  if (in.lid == 0 || in.lid > kLastUnicastLid) return mad::kStatusInvalidField;
  // IBA 7.2: the SM moves a port Init -> Armed -> Active, or takes it Down; Init itself is the
  // link's doing, not the SM's.
  switch (in.port_state) {
    case mad::kPortNoChange:
    case mad::kPortDown: break;
    case mad::kPortArmed:
      if (state != IBVP_PORT_INIT && state != IBVP_PORT_ARMED) return mad::kStatusInvalidField;
      break;
    case mad::kPortActive:
      if (state != IBVP_PORT_ARMED && state != IBVP_PORT_ACTIVE) return mad::kStatusInvalidField;
      break;
    default: return mad::kStatusInvalidField;
  }
  if (in.operational_vls > mad::vl_cap_code(data_vls_)) return mad::kStatusInvalidField;
  if (in.neighbor_mtu > 5) return mad::kStatusInvalidField;
  reg_write(IBVP_REG_PORT_LID, in.lid);
  reg_write(IBVP_REG_PORT_LMC, in.lmc);
  gid_prefix_ = in.gid_prefix;
  master_sm_lid_ = in.master_sm_lid;
  master_sm_sl_ = in.master_sm_sl;
  m_key_lease_period_ = in.m_key_lease_period;
  subnet_timeout_ = in.subnet_timeout;
  if (in.neighbor_mtu != 0) neighbor_mtu_ = in.neighbor_mtu;
  if (in.operational_vls != 0) operational_vls_ = in.operational_vls;
  hoq_life_ = in.hoq_life;
  vl_stall_count_ = in.vl_stall_count;
  if (in.vl_high_limit != reg(IBVP_REG_VLARB_HIGH_LIMIT)) {
    reg_write(IBVP_REG_VLARB_HIGH_LIMIT, in.vl_high_limit);
    reg_write(IBVP_REG_VLARB_COMMIT, 1);
  }
  if (in.port_state == mad::kPortDown) {
    // The link goes down and trains again at once (training time is not modelled): the
    // port comes back in Init, as IBA 7.2 has it after LinkUp.
    reg_write(IBVP_REG_PORT_STATE, IBVP_PORT_DOWN);
    reg_write(IBVP_REG_PORT_STATE, IBVP_PORT_INIT);
  } else if (in.port_state != mad::kPortNoChange) {
    reg_write(IBVP_REG_PORT_STATE, in.port_state);
  }
  return mad::kStatusOk;
}

mad::VlArbBlock Sma::vlarb_block(uint8_t block) {
  const bool high = block >= mad::kVlArbHigh0;
  const uint32_t first = (block == mad::kVlArbLow32 || block == mad::kVlArbHigh32) ? 32 : 0;
  const uint32_t base = high ? IBVP_REG_VLARB_HIGH_BASE : IBVP_REG_VLARB_LOW_BASE;
  mad::VlArbBlock b;
  for (uint32_t i = 0; i < mad::VlArbBlock::kEntries; ++i) {
    const uint32_t r = reg(base + 4 * (first + i));
    b.entry[i].vl = static_cast<uint8_t>(r >> 8 & 0xF);
    b.entry[i].weight = static_cast<uint8_t>(r & 0xFF);
  }
  return b;
}

}  // namespace ibvp::fw
