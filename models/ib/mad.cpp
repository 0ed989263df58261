#include "models/ib/mad.h"

#include <algorithm>
#include <cstring>

namespace ibvp::ib::mad {

namespace {

// SMP byte offsets (IBA 14.2.1.1, 14.2.1.2).
constexpr size_t kOffMKey = 24;
constexpr size_t kOffDrSlid = 32;
constexpr size_t kOffDrDlid = 34;
constexpr size_t kOffSmpData = 64;
constexpr size_t kOffInitialPath = 128;
constexpr size_t kOffReturnPath = 192;
// PerfMgt GMP (IBA 16.1.1): 24-byte header, 40 reserved bytes, data.
constexpr size_t kOffGmpData = 64;

uint8_t bit(bool b, int pos) { return static_cast<uint8_t>(b ? 1u << pos : 0u); }
uint8_t nibbles(uint8_t hi, uint8_t lo) { return static_cast<uint8_t>(((hi & 0xF) << 4) | (lo & 0xF)); }
uint8_t hi4(uint8_t b) { return static_cast<uint8_t>(b >> 4); }
uint8_t lo4(uint8_t b) { return static_cast<uint8_t>(b & 0xF); }

}  // namespace

// ---- header -----------------------------------------------------------------------------

void encode(const MadHeader& h, Bytes& b) {
  b[0] = h.base_version;
  b[1] = h.mgmt_class;
  b[2] = h.class_version;
  b[3] = h.method;
  put16(&b[4], h.status);
  put16(&b[6], h.class_specific);
  put64(&b[8], h.transaction_id);
  put16(&b[16], h.attribute_id);
  put16(&b[18], 0);  // reserved
  put32(&b[20], h.attribute_modifier);
}

MadHeader decode_header(const Bytes& b) {
  MadHeader h;
  h.base_version = b[0];
  h.mgmt_class = b[1];
  h.class_version = b[2];
  h.method = b[3];
  h.status = get16(&b[4]);
  h.class_specific = get16(&b[6]);
  h.transaction_id = get64(&b[8]);
  h.attribute_id = get16(&b[16]);
  h.attribute_modifier = get32(&b[20]);
  return h;
}

// ---- SMP --------------------------------------------------------------------------------

void encode(const Smp& s, Bytes& b) {
  b.fill(0);
  encode(s.hdr, b);
  put64(&b[kOffMKey], s.m_key);
  std::copy(s.data.begin(), s.data.end(), b.begin() + kOffSmpData);
  if (!s.directed()) return;  // the rest is reserved in a LID-routed SMP
  put16(&b[kOffDrSlid], s.dr_slid);
  put16(&b[kOffDrDlid], s.dr_dlid);
  std::copy(s.initial_path.begin(), s.initial_path.end(), b.begin() + kOffInitialPath);
  std::copy(s.return_path.begin(), s.return_path.end(), b.begin() + kOffReturnPath);
}

Smp decode_smp(const Bytes& b) {
  Smp s;
  s.hdr = decode_header(b);
  s.m_key = get64(&b[kOffMKey]);
  std::copy_n(b.begin() + kOffSmpData, kSmpDataBytes, s.data.begin());
  if (!s.directed()) {
    s.dr_slid = s.dr_dlid = 0;
    return s;
  }
  s.dr_slid = get16(&b[kOffDrSlid]);
  s.dr_dlid = get16(&b[kOffDrDlid]);
  std::copy_n(b.begin() + kOffInitialPath, kMaxHops, s.initial_path.begin());
  std::copy_n(b.begin() + kOffReturnPath, kMaxHops, s.return_path.begin());
  return s;
}

Smp make_directed_smp(uint8_t method, uint16_t attribute_id, uint32_t attribute_modifier, uint64_t tid,
                      const uint8_t* path, size_t hops) {
  Smp s;
  s.hdr.mgmt_class = kClassSubnDirected;
  s.hdr.class_version = kSmpClassVersion;
  s.hdr.method = method;
  s.hdr.transaction_id = tid;
  s.hdr.attribute_id = attribute_id;
  s.hdr.attribute_modifier = attribute_modifier;
  hops = std::min(hops, kMaxHops - 1);
  // InitialPath[0] is unused; entries 1..HopCount name the output port at each hop.
  for (size_t i = 0; i < hops; ++i) s.initial_path[i + 1] = path[i];
  s.set_hop_count(static_cast<uint8_t>(hops));
  s.set_hop_pointer(0);
  return s;
}

Smp make_lid_routed_smp(uint8_t method, uint16_t attribute_id, uint32_t attribute_modifier, uint64_t tid) {
  Smp s;
  s.hdr.mgmt_class = kClassSubnLid;
  s.hdr.class_version = kSmpClassVersion;
  s.hdr.method = method;
  s.hdr.transaction_id = tid;
  s.hdr.attribute_id = attribute_id;
  s.hdr.attribute_modifier = attribute_modifier;
  s.dr_slid = s.dr_dlid = 0;
  return s;
}

Smp make_response(const Smp& request, uint16_t status) {
  Smp r = request;
  r.hdr.method = kMethodGetResp;  // IBA 13.4.5: Get and Set are both answered by GetResp
  r.hdr.status = static_cast<uint16_t>(status & ~kStatusDirection);
  if (r.directed()) r.hdr.status |= kStatusDirection;  // IBA 14.2.2.1: D set in the response
  return r;
}

// ---- directed route (IBA 14.2.2) --------------------------------------------------------

DrHop dr_receive(Smp& s, bool is_switch, uint8_t in_port, uint8_t num_ports) {
  const uint8_t h = s.hop_pointer();
  const uint8_t n = s.hop_count();
  if (n >= kMaxHops) return {};  // C14-6: HopCount 0..63
  auto out = [&](uint8_t port) -> DrHop {
    (void)in_port;
    if (port == 0 || port > num_ports) return {};
    return DrHop{DrRoute::port, port, 0};
  };
  if (!s.returning()) {
    if (n > 0 && h == 0) return {};  // C14-9:1: the sender increments HopPointer first
    if (h > 0 && h < n) {            // C14-9:2: an intermediate hop
      if (!is_switch) return {};
      s.return_path[h] = in_port;
      s.set_hop_pointer(static_cast<uint8_t>(h + 1));
      return out(s.initial_path[h + 1]);
    }
    if (h == n) {  // C14-9:3: the end of the directed-route part
      if (n > 0) s.return_path[h] = in_port;
      s.set_hop_pointer(static_cast<uint8_t>(h + 1));
      if (s.dr_dlid == kPermissiveLid) return DrHop{DrRoute::local, 0, 0};
      return is_switch ? DrHop{DrRoute::lid, 0, s.dr_dlid} : DrHop{};
    }
    // C14-9:4: the end of a last LID-routed part; C14-9:5: any other pointer is wrong.
    return h == n + 1 ? DrHop{DrRoute::local, 0, 0} : DrHop{};
  }
  if (n > 0 && h == n + 1) {  // C14-13:1: back at the end of the directed-route part
    if (!is_switch) return {};
    s.set_hop_pointer(static_cast<uint8_t>(h - 1));
    return out(s.return_path[h - 1]);
  }
  if (h >= 2 && h <= n) {  // C14-13:2: an intermediate hop
    if (!is_switch) return {};
    s.set_hop_pointer(static_cast<uint8_t>(h - 1));
    return out(s.return_path[h - 1]);
  }
  if (h == 1) {  // C14-13:3: the start of the directed-route part
    s.set_hop_pointer(0);
    if (s.dr_slid == kPermissiveLid) return DrHop{DrRoute::local, 0, 0};
    return is_switch ? DrHop{DrRoute::lid, 0, s.dr_slid} : DrHop{};
  }
  return h == 0 ? DrHop{DrRoute::local, 0, 0} : DrHop{};  // C14-13:4, C14-13:5
}

DrHop dr_originate(Smp& s) {
  const uint8_t h = s.hop_pointer();
  const uint8_t n = s.hop_count();
  if (n >= kMaxHops) return {};
  if (!s.returning()) {
    if (h != 0) return {};
    s.set_hop_pointer(1);
    if (n == 0) return DrHop{DrRoute::local, 0, 0};
    return DrHop{DrRoute::port, s.initial_path[1], 0};  // C14-9:1
  }
  if (h != n + 1) return {};
  if (n == 0) {  // C14-13:3 on the node that asked itself
    s.set_hop_pointer(0);
    return DrHop{DrRoute::local, 0, 0};
  }
  s.set_hop_pointer(n);  // C14-13:1
  return DrHop{DrRoute::port, s.return_path[n], 0};
}

// ---- PerfMgt ----------------------------------------------------------------------------

void encode(const PerfMad& m, Bytes& b) {
  b.fill(0);
  encode(m.hdr, b);
  std::copy(m.data.begin(), m.data.end(), b.begin() + kOffGmpData);
}

PerfMad decode_perf(const Bytes& b) {
  PerfMad m;
  m.hdr = decode_header(b);
  std::copy_n(b.begin() + kOffGmpData, kGmpDataBytes, m.data.begin());
  return m;
}

// ---- NodeInfo (IBA 14.2.5.3) ------------------------------------------------------------

void NodeInfo::encode(SmpData& d) const {
  d.fill(0);
  d[0] = base_version;
  d[1] = class_version;
  d[2] = node_type;
  d[3] = num_ports;
  put64(&d[4], system_image_guid);
  put64(&d[12], node_guid);
  put64(&d[20], port_guid);
  put16(&d[28], partition_cap);
  put16(&d[30], device_id);
  put32(&d[32], revision);
  put32(&d[36], (uint32_t{local_port_num} << 24) | (vendor_id & 0xFFFFFF));
}

NodeInfo NodeInfo::decode(const SmpData& d) {
  NodeInfo n;
  n.base_version = d[0];
  n.class_version = d[1];
  n.node_type = d[2];
  n.num_ports = d[3];
  n.system_image_guid = get64(&d[4]);
  n.node_guid = get64(&d[12]);
  n.port_guid = get64(&d[20]);
  n.partition_cap = get16(&d[28]);
  n.device_id = get16(&d[30]);
  n.revision = get32(&d[32]);
  n.local_port_num = d[36];
  n.vendor_id = get32(&d[36]) & 0xFFFFFF;
  return n;
}

// ---- NodeDescription (IBA 14.2.5.2) -----------------------------------------------------

void NodeDescription::encode(SmpData& d) const {
  d.fill(0);
  std::memcpy(d.data(), text.data(), std::min(text.size(), d.size()));
}

NodeDescription NodeDescription::decode(const SmpData& d) {
  const auto end = std::find(d.begin(), d.end(), uint8_t{0});
  return NodeDescription{std::string(d.begin(), end)};
}

// ---- Notice (IBA 14.2.5.1) -------------------------------------------------------------

void Notice::encode(SmpData& d) const {
  d.fill(0);
  d[0] = static_cast<uint8_t>((is_generic ? 0x80 : 0) | (type & 0x7F));
  d[1] = static_cast<uint8_t>(producer_type >> 16);
  put16(&d[2], static_cast<uint16_t>(producer_type));
  put16(&d[4], trap_number);
  put16(&d[6], issuer_lid);
  put16(&d[8], static_cast<uint16_t>((notice_toggle ? 0x8000 : 0) | (notice_count & 0x7FFF)));
  std::copy(data_details.begin(), data_details.end(), d.begin() + 10);
}

Notice Notice::decode(const SmpData& d) {
  Notice n;
  n.is_generic = (d[0] & 0x80) != 0;
  n.type = d[0] & 0x7F;
  n.producer_type = (uint32_t{d[1]} << 16) | get16(&d[2]);
  n.trap_number = get16(&d[4]);
  n.issuer_lid = get16(&d[6]);
  n.notice_toggle = (d[8] & 0x80) != 0;
  n.notice_count = get16(&d[8]) & 0x7FFF;
  std::copy(d.begin() + 10, d.begin() + 64, n.data_details.begin());
  return n;
}

Smp make_link_state_change_trap(uint16_t switch_lid, uint64_t tid) {
  Smp s = make_lid_routed_smp(kMethodTrap, kAttrNotice, 0, tid);
  Notice n;
  n.is_generic = true;
  n.type = kNoticeUrgent;
  n.producer_type = kProducerSwitch;
  n.trap_number = kTrapLinkStateChange;
  n.issuer_lid = switch_lid;
  n.set_lidaddr(switch_lid);
  n.encode(s.data);
  return s;
}

// ---- SwitchInfo (IBA 14.2.5.4) ----------------------------------------------------------

void SwitchInfo::encode(SmpData& d) const {
  d.fill(0);
  put16(&d[0], linear_fdb_cap);
  put16(&d[2], random_fdb_cap);
  put16(&d[4], multicast_fdb_cap);
  put16(&d[6], linear_fdb_top);
  d[8] = default_port;
  d[9] = default_multicast_primary_port;
  d[10] = default_multicast_not_primary_port;
  d[11] = static_cast<uint8_t>(((life_time_value & 0x1F) << 3) | bit(port_state_change, 2) |
                               (optimized_sl2vl_programming & 0x3));
  put16(&d[12], lids_per_port);
  put16(&d[14], partition_enforcement_cap);
  d[16] = static_cast<uint8_t>(bit(inbound_enforcement_cap, 7) | bit(outbound_enforcement_cap, 6) |
                               bit(filter_raw_inbound_cap, 5) | bit(filter_raw_outbound_cap, 4) |
                               bit(enhanced_port0, 3));
  put16(&d[18], multicast_fdb_top);
}

SwitchInfo SwitchInfo::decode(const SmpData& d) {
  SwitchInfo s;
  s.linear_fdb_cap = get16(&d[0]);
  s.random_fdb_cap = get16(&d[2]);
  s.multicast_fdb_cap = get16(&d[4]);
  s.linear_fdb_top = get16(&d[6]);
  s.default_port = d[8];
  s.default_multicast_primary_port = d[9];
  s.default_multicast_not_primary_port = d[10];
  s.life_time_value = static_cast<uint8_t>(d[11] >> 3);
  s.port_state_change = (d[11] & 0x04) != 0;
  s.optimized_sl2vl_programming = d[11] & 0x3;
  s.lids_per_port = get16(&d[12]);
  s.partition_enforcement_cap = get16(&d[14]);
  s.inbound_enforcement_cap = (d[16] & 0x80) != 0;
  s.outbound_enforcement_cap = (d[16] & 0x40) != 0;
  s.filter_raw_inbound_cap = (d[16] & 0x20) != 0;
  s.filter_raw_outbound_cap = (d[16] & 0x10) != 0;
  s.enhanced_port0 = (d[16] & 0x08) != 0;
  s.multicast_fdb_top = get16(&d[18]);
  return s;
}

// ---- PortInfo (IBA 14.2.5.6, Table 155) -------------------------------------------------

void PortInfo::encode(SmpData& d) const {
  d.fill(0);
  put64(&d[0], m_key);
  put64(&d[8], gid_prefix);
  put16(&d[16], lid);
  put16(&d[18], master_sm_lid);
  put32(&d[20], capability_mask);
  put16(&d[24], diag_code);
  put16(&d[26], m_key_lease_period);
  d[28] = local_port_num;
  d[29] = link_width_enabled;
  d[30] = link_width_supported;
  d[31] = link_width_active;
  d[32] = nibbles(link_speed_supported, port_state);
  d[33] = nibbles(port_phys_state, link_down_default_state);
  d[34] = static_cast<uint8_t>(((m_key_protect_bits & 0x3) << 6) | (lmc & 0x7));
  d[35] = nibbles(link_speed_active, link_speed_enabled);
  d[36] = nibbles(neighbor_mtu, master_sm_sl);
  d[37] = nibbles(vl_cap, init_type);
  d[38] = vl_high_limit;
  d[39] = vl_arbitration_high_cap;
  d[40] = vl_arbitration_low_cap;
  d[41] = nibbles(init_type_reply, mtu_cap);
  d[42] = static_cast<uint8_t>(((vl_stall_count & 0x7) << 5) | (hoq_life & 0x1F));
  d[43] = static_cast<uint8_t>(((operational_vls & 0xF) << 4) | bit(partition_enforcement_inbound, 3) |
                               bit(partition_enforcement_outbound, 2) | bit(filter_raw_inbound, 1) |
                               bit(filter_raw_outbound, 0));
  put16(&d[44], m_key_violations);
  put16(&d[46], p_key_violations);
  put16(&d[48], q_key_violations);
  d[50] = guid_cap;
  d[51] = static_cast<uint8_t>(bit(client_reregister, 7) | ((multicast_pkey_trap_suppression & 0x3) << 5) |
                               (subnet_timeout & 0x1F));
  d[52] = resp_time_value & 0x1F;
  d[53] = nibbles(local_phy_errors, overrun_errors);
  put16(&d[54], max_credit_hint);
  put32(&d[56], link_round_trip_latency & 0xFFFFFF);
  put16(&d[60], capability_mask2);
  d[62] = nibbles(link_speed_ext_active, link_speed_ext_supported);
  d[63] = link_speed_ext_enabled & 0x1F;
}

PortInfo PortInfo::decode(const SmpData& d) {
  PortInfo p;
  p.m_key = get64(&d[0]);
  p.gid_prefix = get64(&d[8]);
  p.lid = get16(&d[16]);
  p.master_sm_lid = get16(&d[18]);
  p.capability_mask = get32(&d[20]);
  p.diag_code = get16(&d[24]);
  p.m_key_lease_period = get16(&d[26]);
  p.local_port_num = d[28];
  p.link_width_enabled = d[29];
  p.link_width_supported = d[30];
  p.link_width_active = d[31];
  p.link_speed_supported = hi4(d[32]);
  p.port_state = lo4(d[32]);
  p.port_phys_state = hi4(d[33]);
  p.link_down_default_state = lo4(d[33]);
  p.m_key_protect_bits = static_cast<uint8_t>(d[34] >> 6);
  p.lmc = d[34] & 0x7;
  p.link_speed_active = hi4(d[35]);
  p.link_speed_enabled = lo4(d[35]);
  p.neighbor_mtu = hi4(d[36]);
  p.master_sm_sl = lo4(d[36]);
  p.vl_cap = hi4(d[37]);
  p.init_type = lo4(d[37]);
  p.vl_high_limit = d[38];
  p.vl_arbitration_high_cap = d[39];
  p.vl_arbitration_low_cap = d[40];
  p.init_type_reply = hi4(d[41]);
  p.mtu_cap = lo4(d[41]);
  p.vl_stall_count = static_cast<uint8_t>(d[42] >> 5);
  p.hoq_life = d[42] & 0x1F;
  p.operational_vls = hi4(d[43]);
  p.partition_enforcement_inbound = (d[43] & 0x08) != 0;
  p.partition_enforcement_outbound = (d[43] & 0x04) != 0;
  p.filter_raw_inbound = (d[43] & 0x02) != 0;
  p.filter_raw_outbound = (d[43] & 0x01) != 0;
  p.m_key_violations = get16(&d[44]);
  p.p_key_violations = get16(&d[46]);
  p.q_key_violations = get16(&d[48]);
  p.guid_cap = d[50];
  p.client_reregister = (d[51] & 0x80) != 0;
  p.multicast_pkey_trap_suppression = (d[51] >> 5) & 0x3;
  p.subnet_timeout = d[51] & 0x1F;
  p.resp_time_value = d[52] & 0x1F;
  p.local_phy_errors = hi4(d[53]);
  p.overrun_errors = lo4(d[53]);
  p.max_credit_hint = get16(&d[54]);
  p.link_round_trip_latency = get32(&d[56]) & 0xFFFFFF;
  p.capability_mask2 = get16(&d[60]);
  p.link_speed_ext_active = hi4(d[62]);
  p.link_speed_ext_supported = lo4(d[62]);
  p.link_speed_ext_enabled = d[63] & 0x1F;
  return p;
}

// ---- forwarding and mapping tables ------------------------------------------------------

void LftBlock::encode(SmpData& d) const { std::copy(port.begin(), port.end(), d.begin()); }

LftBlock LftBlock::decode(const SmpData& d) {
  LftBlock b;
  std::copy_n(d.begin(), kEntries, b.port.begin());
  return b;
}

void MftBlock::encode(SmpData& d) const {
  for (uint32_t i = 0; i < kEntries; ++i) put16(&d[2 * i], port_mask[i]);
}

MftBlock MftBlock::decode(const SmpData& d) {
  MftBlock b;
  for (uint32_t i = 0; i < kEntries; ++i) b.port_mask[i] = get16(&d[2 * i]);
  return b;
}

void SlToVlTable::encode(SmpData& d) const {
  d.fill(0);
  for (uint32_t sl = 0; sl < 16; sl += 2) d[sl / 2] = nibbles(vl[sl], vl[sl + 1]);
}

SlToVlTable SlToVlTable::decode(const SmpData& d) {
  SlToVlTable t;
  for (uint32_t sl = 0; sl < 16; sl += 2) {
    t.vl[sl] = hi4(d[sl / 2]);
    t.vl[sl + 1] = lo4(d[sl / 2]);
  }
  return t;
}

void VlArbBlock::encode(SmpData& d) const {
  for (uint32_t i = 0; i < kEntries; ++i) {
    d[2 * i] = entry[i].vl & 0xF;  // high nibble reserved
    d[2 * i + 1] = entry[i].weight;
  }
}

VlArbBlock VlArbBlock::decode(const SmpData& d) {
  VlArbBlock b;
  for (uint32_t i = 0; i < kEntries; ++i) b.entry[i] = VlArbEntry{lo4(d[2 * i]), d[2 * i + 1]};
  return b;
}

void PKeyBlock::encode(SmpData& d) const {
  for (uint32_t i = 0; i < kEntries; ++i) put16(&d[2 * i], p_key[i]);
}

PKeyBlock PKeyBlock::decode(const SmpData& d) {
  PKeyBlock b;
  for (uint32_t i = 0; i < kEntries; ++i) b.p_key[i] = get16(&d[2 * i]);
  return b;
}

// ---- PerfMgt PortCounters (IBA 16.1.3.5) ------------------------------------------------

void PortCounters::encode(GmpData& d) const {
  d.fill(0);
  d[1] = port_select;
  put16(&d[2], counter_select);
  put16(&d[4], symbol_error_counter);
  d[6] = link_error_recovery_counter;
  d[7] = link_downed_counter;
  put16(&d[8], port_rcv_errors);
  put16(&d[10], port_rcv_remote_physical_errors);
  put16(&d[12], port_rcv_switch_relay_errors);
  put16(&d[14], port_xmit_discards);
  d[16] = port_xmit_constraint_errors;
  d[17] = port_rcv_constraint_errors;
  d[18] = counter_select2;
  d[19] = nibbles(local_link_integrity_errors, excessive_buffer_overrun_errors);
  put16(&d[20], qp1_dropped);
  put16(&d[22], vl15_dropped);
  put32(&d[24], port_xmit_data);
  put32(&d[28], port_rcv_data);
  put32(&d[32], port_xmit_pkts);
  put32(&d[36], port_rcv_pkts);
  put32(&d[40], port_xmit_wait);
}

PortCounters PortCounters::decode(const GmpData& d) {
  PortCounters c;
  c.port_select = d[1];
  c.counter_select = get16(&d[2]);
  c.symbol_error_counter = get16(&d[4]);
  c.link_error_recovery_counter = d[6];
  c.link_downed_counter = d[7];
  c.port_rcv_errors = get16(&d[8]);
  c.port_rcv_remote_physical_errors = get16(&d[10]);
  c.port_rcv_switch_relay_errors = get16(&d[12]);
  c.port_xmit_discards = get16(&d[14]);
  c.port_xmit_constraint_errors = d[16];
  c.port_rcv_constraint_errors = d[17];
  c.counter_select2 = d[18];
  c.local_link_integrity_errors = hi4(d[19]);
  c.excessive_buffer_overrun_errors = lo4(d[19]);
  c.qp1_dropped = get16(&d[20]);
  c.vl15_dropped = get16(&d[22]);
  c.port_xmit_data = get32(&d[24]);
  c.port_rcv_data = get32(&d[28]);
  c.port_xmit_pkts = get32(&d[32]);
  c.port_rcv_pkts = get32(&d[36]);
  c.port_xmit_wait = get32(&d[40]);
  return c;
}

// ---- ClassPortInfo (IBA 13.4.8.1) -------------------------------------------------------

void ClassPortInfo::encode(uint8_t* d) const {
  std::memset(d, 0, 72);
  d[0] = base_version;
  d[1] = class_version;
  put16(d + 2, capability_mask);
  put32(d + 4, ((capability_mask2 & 0x7FFFFFF) << 5) | (resp_time_value & 0x1F));
  std::memcpy(d + 8, redirect_gid.data(), 16);
  put32(d + 24, (uint32_t{redirect_tc} << 24) | (uint32_t(redirect_sl & 0xF) << 20) | (redirect_fl & 0xFFFFF));
  put16(d + 28, redirect_lid);
  put16(d + 30, redirect_p_key);
  put32(d + 32, redirect_qp & 0xFFFFFF);
  put32(d + 36, redirect_q_key);
  std::memcpy(d + 40, trap_gid.data(), 16);
  put32(d + 56, (uint32_t{trap_tc} << 24) | (uint32_t(trap_sl & 0xF) << 20) | (trap_fl & 0xFFFFF));
  put16(d + 60, trap_lid);
  put16(d + 62, trap_p_key);
  put32(d + 64, (uint32_t{trap_hop_limit} << 24) | (trap_qp & 0xFFFFFF));
  put32(d + 68, trap_q_key);
}

ClassPortInfo ClassPortInfo::decode(const uint8_t* d) {
  ClassPortInfo c;
  c.base_version = d[0];
  c.class_version = d[1];
  c.capability_mask = get16(d + 2);
  c.capability_mask2 = get32(d + 4) >> 5;
  c.resp_time_value = d[7] & 0x1F;
  std::memcpy(c.redirect_gid.data(), d + 8, 16);
  const uint32_t rf = get32(d + 24);
  c.redirect_tc = static_cast<uint8_t>(rf >> 24);
  c.redirect_sl = (rf >> 20) & 0xF;
  c.redirect_fl = rf & 0xFFFFF;
  c.redirect_lid = get16(d + 28);
  c.redirect_p_key = get16(d + 30);
  c.redirect_qp = get32(d + 32) & 0xFFFFFF;
  c.redirect_q_key = get32(d + 36);
  std::memcpy(c.trap_gid.data(), d + 40, 16);
  const uint32_t tf = get32(d + 56);
  c.trap_tc = static_cast<uint8_t>(tf >> 24);
  c.trap_sl = (tf >> 20) & 0xF;
  c.trap_fl = tf & 0xFFFFF;
  c.trap_lid = get16(d + 60);
  c.trap_p_key = get16(d + 62);
  c.trap_hop_limit = d[64];
  c.trap_qp = get32(d + 64) & 0xFFFFFF;
  c.trap_q_key = get32(d + 68);
  return c;
}

}  // namespace ibvp::ib::mad
