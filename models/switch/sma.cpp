#include "models/switch/sma.h"

#include <algorithm>

#include "models/switch/lifetime.h"
#include "models/switch/switch.h"

namespace ibvp::sw {

namespace mad = ib::mad;

namespace {

// LinearFDBCap: every unicast LID 0..0xBFFF (IBA 14.2.5.4); MulticastFDBCap: every MLID
// 0xC000..0xFFFE.
constexpr uint16_t kLinearFdbCap = 0xC000;
constexpr uint16_t kMulticastFdbCap = 0x3FFF;
// The VLArb tables take up to 64 entries each (link::VlArbConfig).
constexpr uint8_t kVlArbCap = 64;
constexpr uint8_t kMtu4096 = 5;
constexpr uint64_t kDefaultGidPrefix = 0xFE80000000000000ull;  // link-local (IBA 4.1.1)
constexpr uint8_t kLinkDownDefaultPolling = 2;

// LinkWidthSupported holds every width a port can train to, 1x always (IBA 14.2.5.6: 1
// 1x, 3 1x/4x, 7 1x/4x/8x, 11 1x/4x/12x, 17 1x/2x).
uint8_t width_supported(link::Width w) {
  switch (w) {
    case link::Width::x1: return 1;
    case link::Width::x2: return 17;
    case link::Width::x4: return 3;
    case link::Width::x8: return 7;
    case link::Width::x12: return 11;
  }
  return 1;
}

// The lifetime code whose time is `ps` (codes are exact powers of two, lifetime.h).
uint8_t lifetime_code(uint64_t ps) {
  for (uint8_t c = 0; c < kLifetimeInfinite; ++c)
    if (lifetime_ps(c) >= ps) return c;
  return kLifetimeInfinite;
}

// The smallest RespTimeValue (4.096 us x 2^v, IBA 13.4.6.2) covering `ps`.
uint8_t resp_time_value(uint64_t ps) {
  uint8_t v = 0;
  while (v < 31 && (uint64_t{4'096'000} << v) < ps) ++v;
  return v;
}

}  // namespace

Sma::Sma(Switch& sw) : sw_(sw), port_info_(sw.config().num_ports + 1u), pkeys_(sw.config().num_ports + 1u) {
  const SwitchConfig& cfg = sw.config();
  for (uint16_t p = 0; p < port_info_.size(); ++p) {
    mad::PortInfo& pi = port_info_[p];
    pi.gid_prefix = kDefaultGidPrefix;
    pi.neighbor_mtu = kMtu4096;
    pi.mtu_cap = kMtu4096;
    pi.vl_cap = mad::vl_cap_code(cfg.data_vls);
    pi.operational_vls = pi.vl_cap;
    pi.vl_arbitration_high_cap = kVlArbCap;
    pi.vl_arbitration_low_cap = kVlArbCap;
    pi.link_down_default_state = kLinkDownDefaultPolling;
    pi.resp_time_value = resp_time_value(static_cast<uint64_t>(cfg.sma_delay.value()));
    pkeys_[p].p_key[0] = 0xFFFF;  // the default partition, full member (IBA 10.9.1.2)
  }
}

void Sma::set_identity(const SwitchIdentity& id) {
  id_ = id;
  port_info_[0].lid = id.lid;
  port_info_[0].lmc = id.lmc;
}

std::optional<mad::Smp> Sma::answer(const mad::Smp& request, uint16_t in_port) {
  const mad::MadHeader& h = request.hdr;
  if (h.response() || h.method == mad::kMethodTrapRepress) return std::nullopt;  // nothing answers these
  if (h.mgmt_class != mad::kClassSubnLid && h.mgmt_class != mad::kClassSubnDirected) return std::nullopt;
  mad::Smp resp = mad::make_response(request, mad::kStatusOk);
  if (h.base_version != mad::kBaseVersion || h.class_version != mad::kSmpClassVersion) {
    resp.hdr.status = static_cast<uint16_t>((resp.hdr.status & mad::kStatusDirection) | mad::kStatusBadVersion);
    return resp;
  }
  uint16_t status = mad::kStatusOk;
  if (h.method != mad::kMethodGet && h.method != mad::kMethodSet) {
    status = mad::kStatusUnsupportedMethod;
  } else {
    const bool set = h.method == mad::kMethodSet;
    const uint32_t mod = h.attribute_modifier;
    Data& d = resp.data;
    switch (h.attribute_id) {
      case mad::kAttrNodeInfo: status = set ? mad::kStatusUnsupportedAttribute : node_info(d, in_port); break;
      case mad::kAttrNodeDescription: status = set ? mad::kStatusUnsupportedAttribute : node_description(d); break;
      case mad::kAttrSwitchInfo: status = switch_info(set, d); break;
      case mad::kAttrPortInfo: status = port_info(set, mod, d, in_port); break;
      case mad::kAttrLinearForwardingTable: status = lft(set, mod, d); break;
      case mad::kAttrMulticastForwardingTable: status = mft(set, mod, d); break;
      case mad::kAttrSlToVlMappingTable: status = sl2vl(set, mod, d); break;
      case mad::kAttrVlArbitrationTable: status = vlarb(set, mod, d); break;
      case mad::kAttrPKeyTable: status = pkey(set, mod, d); break;
      default: status = mad::kStatusUnsupportedAttribute;
    }
  }
  resp.hdr.status = static_cast<uint16_t>((resp.hdr.status & mad::kStatusDirection) | status);
  return resp;
}

// ---- identity ---------------------------------------------------------------------------

uint16_t Sma::node_info(Data& d, uint16_t in_port) const {
  mad::NodeInfo n;
  n.node_type = mad::kNodeSwitch;
  n.num_ports = static_cast<uint8_t>(sw_.config().num_ports);
  n.system_image_guid = id_.system_image_guid ? id_.system_image_guid : id_.node_guid;
  n.node_guid = id_.node_guid;
  n.port_guid = id_.node_guid;  // a switch has one PortGUID, port 0's (IBA 14.2.5.3)
  n.partition_cap = mad::PKeyBlock::kEntries;
  n.local_port_num = static_cast<uint8_t>(in_port);
  n.encode(d);
  return mad::kStatusOk;
}

uint16_t Sma::node_description(Data& d) const {
  mad::NodeDescription{id_.description}.encode(d);
  return mad::kStatusOk;
}

// ---- SwitchInfo (IBA 14.2.5.4) ----------------------------------------------------------

uint16_t Sma::switch_info(bool set, Data& d) {
  if (set) {
    const mad::SwitchInfo s = mad::SwitchInfo::decode(d);
    if (s.linear_fdb_top >= kLinearFdbCap) return mad::kStatusInvalidField;
    linear_fdb_top_ = s.linear_fdb_top;
    if (s.life_time_value != lifetime_code(sw_.switch_life_ps_)) sw_.set_switch_life(s.life_time_value);
    if (s.port_state_change) port_state_change_ = false;  // writing 1 clears it
  }
  mad::SwitchInfo s;
  s.linear_fdb_cap = kLinearFdbCap;
  s.multicast_fdb_cap = kMulticastFdbCap;
  const size_t lft_size = sw_.lft_.port.size();
  s.linear_fdb_top = linear_fdb_top_ ? *linear_fdb_top_ : static_cast<uint16_t>(lft_size ? lft_size - 1 : 0);
  s.life_time_value = lifetime_code(sw_.switch_life_ps_);
  s.port_state_change = port_state_change_;
  s.multicast_fdb_top = sw_.mft_.multicast_fdb_top();
  s.optimized_sl2vl_programming = 1;  // takes the all-ports SLtoVL Set (sl2vl() below)
  s.encode(d);
  return mad::kStatusOk;
}

// ---- PortInfo (IBA 14.2.5.6) ------------------------------------------------------------

mad::PortInfo Sma::current_port_info(uint16_t port, uint16_t in_port) const {
  mad::PortInfo pi = port_info_[port];
  const Switch::Port& sp = sw_.ports_[port];
  pi.local_port_num = static_cast<uint8_t>(in_port);
  pi.port_state = sp.port_state;
  if (port != 0) {
    pi.lid = 0;  // a switch has one LID, port 0's
    pi.lmc = 0;
    const bool cabled = sw_.attached(port) && !sw_.ports_[port].link_down;
    pi.port_phys_state = cabled && sp.port_state != mad::kPortDown ? mad::kPhysLinkUp : mad::kPhysPolling;
    if (cabled) {
      pi.link_width_active = link::port_info_width_code(sp.rate.width());
      pi.link_width_supported = width_supported(sp.rate.width());
      if (pi.link_width_enabled == 0) pi.link_width_enabled = pi.link_width_supported;
      link::port_info_speed_codes(sp.rate.speed(), pi.link_speed_active, pi.link_speed_ext_active);
      // LinkSpeedSupported: 1 SDR, 3 SDR/DDR, 7 SDR/DDR/QDR; the extended speeds likewise.
      pi.link_speed_supported = static_cast<uint8_t>(pi.link_speed_active * 2 - 1);
      pi.link_speed_ext_supported = static_cast<uint8_t>(pi.link_speed_ext_active ? pi.link_speed_ext_active * 2 - 1 : 0);
      if (pi.link_speed_enabled == 0) pi.link_speed_enabled = pi.link_speed_supported;
      pi.vl_high_limit = sp.arbiter->config().high_limit;
    }
    pi.hoq_life = lifetime_code(sp.vls[0].hoq_life_ps);
  } else {
    pi.port_phys_state = mad::kPhysLinkUp;  // base port 0 is always up (IBA 17.2.1.3)
  }
  return pi;
}

// IBA 14.2.5.6 Table 155, PortState in a Set: Down from any state, Armed from Init, Active
// from Armed; the state it is in already is no change.
uint16_t Sma::set_port_state(uint16_t port, uint8_t state) {
  uint8_t& now = sw_.ports_[port].port_state;
  if (state == mad::kPortNoChange || state == now) return mad::kStatusOk;
  const bool valid = state == mad::kPortDown || (state == mad::kPortArmed && now == mad::kPortInit) ||
                     (state == mad::kPortActive && now == mad::kPortArmed);
  if (!valid) return mad::kStatusInvalidField;
  now = state;
  return mad::kStatusOk;
}

uint16_t Sma::port_info(bool set, uint32_t modifier, Data& d, uint16_t in_port) {
  if (modifier > sw_.config().num_ports) return mad::kStatusInvalidField;
  const uint16_t port = static_cast<uint16_t>(modifier);
  bool went_down = false;
  if (set) {
    const mad::PortInfo want = mad::PortInfo::decode(d);
    if (want.port_state > mad::kPortActive || want.operational_vls > port_info_[port].vl_cap)
      return mad::kStatusInvalidField;
    // A port without a cable, or whose cable is down, cannot be armed or activated.
    if (port != 0 && !sw_.link_up(port) && want.port_state > mad::kPortDown) return mad::kStatusInvalidField;
    const uint16_t st = set_port_state(port, want.port_state);
    if (st != mad::kStatusOk) return st;
    went_down = want.port_state == mad::kPortDown;
    mad::PortInfo& pi = port_info_[port];
    pi.m_key = want.m_key;
    pi.m_key_protect_bits = want.m_key_protect_bits;
    pi.m_key_lease_period = want.m_key_lease_period;
    pi.gid_prefix = want.gid_prefix;
    pi.master_sm_lid = want.master_sm_lid;
    pi.master_sm_sl = want.master_sm_sl;
    pi.subnet_timeout = want.subnet_timeout;
    pi.client_reregister = want.client_reregister;
    // 0 is no change; 255 (width) and 15 (speed) mean "what is supported" (IBA 14.2.5.6).
    if (want.link_width_enabled) pi.link_width_enabled = want.link_width_enabled == 255 ? 0 : want.link_width_enabled;
    if (want.link_speed_enabled) pi.link_speed_enabled = want.link_speed_enabled == 15 ? 0 : want.link_speed_enabled;
    if (want.neighbor_mtu) pi.neighbor_mtu = want.neighbor_mtu;
    if (want.operational_vls) pi.operational_vls = want.operational_vls;
    if (port == 0) {
      pi.lid = want.lid;
      pi.lmc = want.lmc;
      id_.lid = want.lid;
      id_.lmc = want.lmc;
    } else if (sw_.attached(port)) {
      // The SM's HOQLife and VLHighLimit are the ones the output uses from now on.
      for (uint8_t vl = 0; vl < ib::kMaxVls; ++vl) sw_.set_hoq_life(port, vl, want.hoq_life);
      link::VlArbConfig arb = sw_.ports_[port].arbiter->config();
      if (arb.high_limit != want.vl_high_limit) {
        arb.high_limit = want.vl_high_limit;
        sw_.set_vlarb(port, arb);
      }
    }
  }
  current_port_info(port, in_port).encode(d);
  if (went_down) {
    // The link trains again at once (training time not modelled): the port is back in
    // Init, and SwitchInfo:PortStateChange tells the SM (IBA 14.2.5.4).
    sw_.ports_[port].port_state = mad::kPortInit;
    port_state_change_ = true;
  }
  return mad::kStatusOk;
}

// ---- forwarding tables (IBA 14.2.5.10, 14.2.5.12) ---------------------------------------

uint16_t Sma::lft(bool set, uint32_t modifier, Data& d) {
  const uint32_t first = modifier * mad::LftBlock::kEntries;
  if (modifier >= kLinearFdbCap / mad::LftBlock::kEntries) return mad::kStatusInvalidField;
  std::vector<uint8_t>& table = sw_.lft_.port;
  if (set) {
    const mad::LftBlock b = mad::LftBlock::decode(d);
    for (uint8_t port : b.port)
      if (port != Lft::kNoRoute && port > sw_.config().num_ports) return mad::kStatusInvalidField;
    if (table.size() < first + mad::LftBlock::kEntries) table.resize(first + mad::LftBlock::kEntries, Lft::kNoRoute);
    std::copy(b.port.begin(), b.port.end(), table.begin() + first);
  }
  mad::LftBlock b;
  for (uint32_t i = 0; i < mad::LftBlock::kEntries; ++i)
    b.port[i] = sw_.lft_.lookup(static_cast<uint16_t>(first + i));
  b.encode(d);
  return mad::kStatusOk;
}

uint16_t Sma::mft(bool set, uint32_t modifier, Data& d) {
  const uint8_t position = mad::mft_position(modifier);
  const uint16_t block = mad::mft_block(modifier);
  if (position * Mft::kPortsPerPosition > sw_.config().num_ports) return mad::kStatusInvalidField;
  Mft& table = sw_.mft_;
  auto mlid = [&](uint32_t i) { return static_cast<uint16_t>(Mft::kMlidBase + block * mad::MftBlock::kEntries + i); };
  if (set) {
    const mad::MftBlock b = mad::MftBlock::decode(d);
    for (uint32_t i = 0; i < mad::MftBlock::kEntries; ++i) {
      const uint16_t lid = mlid(i);
      if (!Mft::is_mlid(lid)) continue;
      // An empty word beyond the table's end changes nothing: the table stays as short.
      if (b.port_mask[i] == 0 && lid > table.multicast_fdb_top()) continue;
      Mft::PortMask& m = table.entry(lid);
      for (uint16_t bit = 0; bit < Mft::kPortsPerPosition; ++bit) {
        const size_t port = position * Mft::kPortsPerPosition + bit;
        if (port < Mft::kPortMaskBits) m.set(port, (b.port_mask[i] >> bit) & 1u);
      }
    }
  }
  mad::MftBlock b;
  for (uint32_t i = 0; i < mad::MftBlock::kEntries; ++i) b.port_mask[i] = table.port_mask_word(mlid(i), position);
  b.encode(d);
  return mad::kStatusOk;
}

// ---- SLtoVL, VLArbitration, P_Key (IBA 14.2.5.8, 14.2.5.9, 14.2.5.7) --------------------

uint16_t Sma::sl2vl(bool set, uint32_t modifier, Data& d) {
  const uint16_t in = (modifier >> 8) & 0xFF;
  const uint16_t out = modifier & 0xFF;
  const uint16_t n = sw_.config().num_ports;
  // Optimized programming (SwitchInfo says it is supported): bit 17 names every input port,
  // bit 16 every output port, in a Set only; a Get reads the pair in bits 15..0.
  const bool all_in = set && (modifier & mad::kSl2VlAllInputs);
  const bool all_out = set && (modifier & mad::kSl2VlAllOutputs);
  const uint32_t wildcards = mad::kSl2VlAllInputs | mad::kSl2VlAllOutputs;
  if (in > n || out > n || (modifier >> 16 & ~(wildcards >> 16)) != 0 || (!set && (modifier & wildcards)))
    return mad::kStatusInvalidField;
  if (set) {
    const mad::SlToVlTable t = mad::SlToVlTable::decode(d);
    Sl2VlTable table{};
    std::copy(t.vl.begin(), t.vl.end(), table.begin());
    for (uint16_t i = all_in ? 0 : in; i <= (all_in ? n : in); ++i)
      for (uint16_t o = all_out ? 0 : out; o <= (all_out ? n : out); ++o) sw_.set_sl2vl(i, o, table);
  }
  mad::SlToVlTable t;
  const Sl2VlTable& now = sw_.sl2vl_at(in, out);
  std::copy(now.begin(), now.end(), t.vl.begin());
  t.encode(d);
  return mad::kStatusOk;
}

uint16_t Sma::vlarb(bool set, uint32_t modifier, Data& d) {
  const uint16_t port = static_cast<uint16_t>(modifier >> 16);
  const uint16_t block = modifier & 0xFFFF;
  if (port == 0 || port > sw_.config().num_ports || !sw_.attached(port) || block < mad::kVlArbLow0 ||
      block > mad::kVlArbHigh32)
    return mad::kStatusInvalidField;
  const bool high = block >= mad::kVlArbHigh0;
  const size_t first = (block == mad::kVlArbLow32 || block == mad::kVlArbHigh32) ? mad::VlArbBlock::kEntries : 0;
  link::VlArbConfig cfg = sw_.ports_[port].arbiter->config();
  std::vector<link::VlArbEntry>& table = high ? cfg.high : cfg.low;
  if (set) {
    const mad::VlArbBlock b = mad::VlArbBlock::decode(d);
    if (table.size() < first + mad::VlArbBlock::kEntries) table.resize(first + mad::VlArbBlock::kEntries);
    for (uint32_t i = 0; i < mad::VlArbBlock::kEntries; ++i) table[first + i] = link::VlArbEntry{b.entry[i].vl, b.entry[i].weight};
    // Entries of weight 0 at the end serve nothing (IBA 7.6.9: the arbiter skips them): the table
    // keeps the length it had in use.
    while (!table.empty() && table.back().weight == 0 && table.back().vl == 0) table.pop_back();
    sw_.set_vlarb(port, cfg);
  }
  mad::VlArbBlock b;
  for (uint32_t i = 0; i < mad::VlArbBlock::kEntries; ++i)
    if (first + i < table.size()) b.entry[i] = mad::VlArbEntry{table[first + i].vl, table[first + i].weight};
  b.encode(d);
  return mad::kStatusOk;
}

uint16_t Sma::pkey(bool set, uint32_t modifier, Data& d) {
  const uint16_t port = static_cast<uint16_t>(modifier >> 16);
  const uint16_t block = modifier & 0xFFFF;
  if (port > sw_.config().num_ports || block != 0) return mad::kStatusInvalidField;  // one block per port
  if (set) pkeys_[port] = mad::PKeyBlock::decode(d);
  pkeys_[port].encode(d);
  return mad::kStatusOk;
}

}  // namespace ibvp::sw
