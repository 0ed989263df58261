// MADs byte for byte (models/ib/mad.h): SMPs written out by hand from IBA 13.4.2 and
// 14.2.1.2, attribute fields at the bit positions of IBA 14.2.5 and 16.1.3.5 (the order
// OpenSM's include/iba/ib_types.h lays them out in), round trips through random bytes, and
// the directed-route hop rules of IBA 14.2.2 walked hop by hop; and libibmad, the MAD
// library smpquery and perfquery print with, reading the attributes we encode.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "models/ib/mad.h"

namespace ibvp::ib::mad {
namespace {

Bytes random_bytes(uint32_t seed) {
  Bytes b;
  std::mt19937 rng(seed);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}
SmpData random_data(uint32_t seed) {
  SmpData d;
  std::mt19937 rng(seed);
  for (auto& x : d) x = static_cast<uint8_t>(rng());
  return d;
}

TEST(Mad, DirectedRouteGetNodeInfoMatchesTheSpecLayoutByteForByte) {
  const uint8_t path[] = {1, 3};
  Smp s = make_directed_smp(kMethodGet, kAttrNodeInfo, 0, 0x0123456789ABCDEFull, path, 2);
  Bytes b;
  encode(s, b);
  // IBA 13.4.2 common header, 14.2.1.2 directed-route SMP.
  Bytes want{};
  const uint8_t head[] = {
      0x01, 0x81, 0x01, 0x01,                          // BaseVersion, MgmtClass, ClassVersion, R|Method
      0x00, 0x00,                                      // D bit and Status
      0x00, 0x02,                                      // HopPointer 0, HopCount 2
      0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF,  // TransactionID
      0x00, 0x11, 0x00, 0x00,                          // AttributeID NodeInfo, reserved
      0x00, 0x00, 0x00, 0x00,                          // AttributeModifier
      0, 0, 0, 0, 0, 0, 0, 0,                          // M_Key
      0xFF, 0xFF, 0xFF, 0xFF,                          // DrSLID, DrDLID permissive
  };
  std::copy(std::begin(head), std::end(head), want.begin());
  want[128 + 1] = 1;  // InitialPath[1]: the CA's port
  want[128 + 2] = 3;  // InitialPath[2]: out of the first switch's port 3
  EXPECT_EQ(b, want);
}

TEST(Mad, ResponseSetsDirectionBitAndGetRespKeepingPathsAndStatusCode) {
  const uint8_t path[] = {1, 5, 7};
  Smp req = make_directed_smp(kMethodSet, kAttrPortInfo, 5, 42, path, 3);
  req.set_hop_pointer(4);
  req.return_path[1] = 2;
  Smp resp = make_response(req, kStatusUnsupportedAttribute);
  Bytes b;
  encode(resp, b);
  EXPECT_EQ(b[3], 0x81);  // GetResp answers Set too (IBA 13.4.5)
  EXPECT_EQ(b[4], 0x80);  // D set
  EXPECT_EQ(b[5], 0x0C);  // method/attribute combination not supported (IBA 13.4.7)
  EXPECT_EQ(b[6], 4);
  EXPECT_EQ(b[7], 3);
  EXPECT_EQ(b[193], 2);
  const Smp back = decode_smp(b);
  EXPECT_TRUE(back.returning());
  EXPECT_EQ(back.status_code(), kStatusUnsupportedAttribute);
  EXPECT_EQ(back.initial_path, req.initial_path);
  EXPECT_EQ(back.return_path, req.return_path);
}

TEST(Mad, LidRoutedSmpLeavesDrFieldsAndPathsReserved) {
  Smp s = make_lid_routed_smp(kMethodGet, kAttrPortInfo, 3, 7);
  s.m_key = 0x1122334455667788ull;
  s.data.fill(0xAB);
  s.initial_path[1] = 9;  // not part of a LID-routed SMP: must not reach the wire
  Bytes b;
  encode(s, b);
  EXPECT_EQ(b[1], 0x01);
  EXPECT_EQ(get64(&b[24]), 0x1122334455667788ull);
  for (size_t i = 32; i < 64; ++i) EXPECT_EQ(b[i], 0) << i;
  for (size_t i = 64; i < 128; ++i) EXPECT_EQ(b[i], 0xAB) << i;
  for (size_t i = 128; i < 256; ++i) EXPECT_EQ(b[i], 0) << i;
}

TEST(Mad, DirectedSmpDecodeThenEncodeKeepsEveryNonReservedByte) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    Bytes b = random_bytes(seed);
    b[1] = kClassSubnDirected;
    b[18] = b[19] = 0;                                   // reserved in the common header
    std::fill(b.begin() + 36, b.begin() + 64, uint8_t{0});  // reserved in a DR SMP
    Bytes again;
    encode(decode_smp(b), again);
    EXPECT_EQ(again, b) << "seed " << seed;
  }
}

TEST(Mad, NodeInfoFieldsAtSpecOffsets) {
  NodeInfo n;
  n.node_type = kNodeSwitch;
  n.num_ports = 36;
  n.system_image_guid = 0x0002C90000000001ull;
  n.node_guid = 0x0002C90000000002ull;
  n.port_guid = 0x0002C90000000003ull;
  n.partition_cap = 8;
  n.device_id = 0xBD36;
  n.revision = 0xA0;
  n.local_port_num = 17;
  n.vendor_id = 0x0002C9;
  SmpData d;
  n.encode(d);
  EXPECT_EQ(d[0], 1);
  EXPECT_EQ(d[1], 1);
  EXPECT_EQ(d[2], 2);
  EXPECT_EQ(d[3], 36);
  EXPECT_EQ(get64(&d[4]), n.system_image_guid);
  EXPECT_EQ(get64(&d[12]), n.node_guid);
  EXPECT_EQ(get64(&d[20]), n.port_guid);
  EXPECT_EQ(get16(&d[28]), 8);
  EXPECT_EQ(get16(&d[30]), 0xBD36);
  EXPECT_EQ(get32(&d[32]), 0xA0u);
  EXPECT_EQ(get32(&d[36]), 0x110002C9u);  // LocalPortNum, then the 24-bit VendorID
  SmpData again;
  NodeInfo::decode(d).encode(again);
  EXPECT_EQ(again, d);
}

TEST(Mad, NodeDescriptionIsNulPaddedAndCutAt64Bytes) {
  SmpData d;
  NodeDescription{"leaf0 ibvp"}.encode(d);
  EXPECT_EQ(d[0], 'l');
  EXPECT_EQ(d[9], 'p');
  for (size_t i = 10; i < 64; ++i) EXPECT_EQ(d[i], 0);
  EXPECT_EQ(NodeDescription::decode(d).text, "leaf0 ibvp");
  NodeDescription{std::string(80, 'x')}.encode(d);
  EXPECT_EQ(NodeDescription::decode(d).text, std::string(64, 'x'));
}

TEST(Mad, SwitchInfoBitFieldsAtSpecPositions) {
  SwitchInfo s;
  s.linear_fdb_cap = 0xC000;
  s.multicast_fdb_cap = 0x0400;
  s.linear_fdb_top = 0x0013;
  s.life_time_value = 18;
  s.port_state_change = true;
  s.optimized_sl2vl_programming = 1;
  s.lids_per_port = 1;
  s.partition_enforcement_cap = 32;
  s.enhanced_port0 = true;
  s.inbound_enforcement_cap = true;
  s.multicast_fdb_top = 0xC01F;
  SmpData d;
  s.encode(d);
  EXPECT_EQ(get16(&d[0]), 0xC000);
  EXPECT_EQ(get16(&d[4]), 0x0400);
  EXPECT_EQ(get16(&d[6]), 0x0013);
  EXPECT_EQ(d[11], (18 << 3) | 0x04 | 0x01);  // LifeTimeValue, PortStateChange, OptimizedSLtoVL
  EXPECT_EQ(get16(&d[12]), 1);
  EXPECT_EQ(get16(&d[14]), 32);
  EXPECT_EQ(d[16], 0x80 | 0x08);  // InboundEnforcementCap, EnhancedPort0 (OpenSM reads 0x08)
  EXPECT_EQ(get16(&d[18]), 0xC01F);
  SmpData again;
  SwitchInfo::decode(d).encode(again);
  EXPECT_EQ(again, d);
}

TEST(Mad, PortInfoFieldsAtSpecBitPositions) {
  PortInfo p;
  p.m_key = 0x0102030405060708ull;
  p.gid_prefix = 0xFE80000000000000ull;
  p.lid = 0x0007;
  p.master_sm_lid = 0x0001;
  p.capability_mask = 0x02510868;
  p.local_port_num = 3;
  p.link_width_enabled = 3;
  p.link_width_supported = 3;
  p.link_width_active = 2;     // 4x
  p.link_speed_supported = 7;  // SDR, DDR, QDR
  p.port_state = kPortActive;
  p.port_phys_state = kPhysLinkUp;
  p.link_down_default_state = 2;
  p.m_key_protect_bits = 1;
  p.lmc = 2;
  p.link_speed_active = 4;  // QDR
  p.link_speed_enabled = 7;
  p.neighbor_mtu = 4;  // 2048
  p.master_sm_sl = 0;
  p.vl_cap = 4;  // VL0..7
  p.vl_high_limit = 0x10;
  p.vl_arbitration_high_cap = 8;
  p.vl_arbitration_low_cap = 8;
  p.mtu_cap = 5;
  p.vl_stall_count = 7;
  p.hoq_life = 19;
  p.operational_vls = 4;
  p.partition_enforcement_inbound = true;
  p.filter_raw_outbound = true;
  p.p_key_violations = 0x0203;
  p.guid_cap = 32;
  p.client_reregister = true;
  p.subnet_timeout = 18;
  p.resp_time_value = 8;
  p.local_phy_errors = 0xA;
  p.overrun_errors = 0x5;
  p.max_credit_hint = 0x1234;
  p.link_round_trip_latency = 0x123456;
  p.capability_mask2 = 0x0010;
  p.link_speed_ext_active = 1;
  p.link_speed_ext_supported = 3;
  p.link_speed_ext_enabled = 0x1F;
  SmpData d;
  p.encode(d);
  EXPECT_EQ(get64(&d[0]), p.m_key);
  EXPECT_EQ(get64(&d[8]), p.gid_prefix);
  EXPECT_EQ(get16(&d[16]), 7);
  EXPECT_EQ(get16(&d[18]), 1);
  EXPECT_EQ(get32(&d[20]), 0x02510868u);
  EXPECT_EQ(d[28], 3);
  EXPECT_EQ(d[31], 2);
  EXPECT_EQ(d[32], 0x74);  // LinkSpeedSupported | PortState
  EXPECT_EQ(d[33], 0x52);  // PortPhysicalState | LinkDownDefaultState
  EXPECT_EQ(d[34], 0x42);  // M_KeyProtectBits (2), reserved (3), LMC (3)
  EXPECT_EQ(d[35], 0x47);  // LinkSpeedActive | LinkSpeedEnabled
  EXPECT_EQ(d[36], 0x40);  // NeighborMTU | MasterSMSL
  EXPECT_EQ(d[37], 0x40);  // VLCap | InitType
  EXPECT_EQ(d[38], 0x10);
  EXPECT_EQ(d[41], 0x05);  // InitTypeReply | MTUCap
  EXPECT_EQ(d[42], 0xF3);  // VLStallCount (3) | HOQLife (5)
  EXPECT_EQ(d[43], 0x49);  // OperationalVLs | PEInbound PEOutbound FilterRawIn FilterRawOut
  EXPECT_EQ(get16(&d[46]), 0x0203);
  EXPECT_EQ(d[50], 32);
  EXPECT_EQ(d[51], 0x80 | 18);  // ClientReregister | trap suppression (2) | SubnetTimeOut (5)
  EXPECT_EQ(d[52], 8);
  EXPECT_EQ(d[53], 0xA5);
  EXPECT_EQ(get16(&d[54]), 0x1234);
  EXPECT_EQ(get32(&d[56]), 0x00123456u);
  EXPECT_EQ(get16(&d[60]), 0x0010);
  EXPECT_EQ(d[62], 0x13);
  EXPECT_EQ(d[63], 0x1F);
}

TEST(Mad, PortInfoDecodeThenEncodeKeepsEveryNonReservedBit) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    SmpData d = random_data(seed);
    d[34] &= 0xC7;  // bits 5..3 reserved
    d[52] &= 0x1F;
    d[56] = 0;
    d[63] &= 0x1F;
    SmpData again;
    PortInfo::decode(d).encode(again);
    EXPECT_EQ(again, d) << "seed " << seed;
  }
}

TEST(Mad, TableBlocksKeepTheirEntryOrder) {
  SmpData d = random_data(7);
  SmpData again;
  LftBlock::decode(d).encode(again);
  EXPECT_EQ(again, d);
  MftBlock::decode(d).encode(again);
  EXPECT_EQ(again, d);
  PKeyBlock::decode(d).encode(again);
  EXPECT_EQ(again, d);

  SlToVlTable t;
  for (uint8_t sl = 0; sl < 16; ++sl) t.vl[sl] = static_cast<uint8_t>(15 - sl);
  t.encode(d);
  EXPECT_EQ(d[0], 0xFE);  // SL0 in the high nibble (IBA 14.2.5.8)
  EXPECT_EQ(d[7], 0x10);
  EXPECT_EQ(SlToVlTable::decode(d).vl, t.vl);

  VlArbBlock v;
  v.entry[0] = {1, 32};
  v.entry[31] = {7, 255};
  v.encode(d);
  EXPECT_EQ(d[0], 0x01);
  EXPECT_EQ(d[1], 32);
  EXPECT_EQ(d[62], 0x07);
  EXPECT_EQ(d[63], 255);
  const VlArbBlock w = VlArbBlock::decode(d);
  EXPECT_EQ(w.entry[31].vl, 7);
  EXPECT_EQ(w.entry[31].weight, 255);

  MftBlock m;
  m.port_mask[1] = 0x8001;
  m.encode(d);
  EXPECT_EQ(d[2], 0x80);
  EXPECT_EQ(d[3], 0x01);
  PKeyBlock k;
  k.p_key[0] = 0xFFFF;
  k.encode(d);
  EXPECT_EQ(get16(&d[0]), 0xFFFF);
}

TEST(Mad, AttributeModifiersPackPortsAndBlocks) {
  EXPECT_EQ(mft_modifier(2, 5), 0x20000005u);
  EXPECT_EQ(mft_position(0x20000005u), 2);
  EXPECT_EQ(mft_block(0x20000005u), 5);
  EXPECT_EQ(sl2vl_modifier(3, 7), 0x0307u);
  EXPECT_EQ(vlarb_modifier(12, kVlArbHigh0), 0x000C0003u);
  EXPECT_EQ(pkey_modifier(4, 1), 0x00040001u);
}

TEST(Mad, PortCountersXmitWaitAtByte40OfTheData) {
  PortCounters c;
  c.port_select = 3;
  c.counter_select = 0xFFFF;
  c.symbol_error_counter = 0x0102;
  c.link_downed_counter = 9;
  c.port_xmit_discards = 0x0304;
  c.vl15_dropped = 0x0506;
  c.local_link_integrity_errors = 0xC;
  c.excessive_buffer_overrun_errors = 0x3;
  c.port_xmit_data = 0x11111111;
  c.port_rcv_data = 0x22222222;
  c.port_xmit_pkts = 0x33333333;
  c.port_rcv_pkts = 0x44444444;
  c.port_xmit_wait = 0x55667788;
  PerfMad m;
  m.hdr.mgmt_class = kClassPerfMgt;
  m.hdr.method = kMethodGet;
  m.hdr.attribute_id = kAttrPortCounters;
  c.encode(m.data);
  Bytes b;
  encode(m, b);
  EXPECT_EQ(b[1], 0x04);
  EXPECT_EQ(get16(&b[16]), 0x0012);
  for (size_t i = 24; i < 64; ++i) EXPECT_EQ(b[i], 0) << i;  // reserved (IBA 16.1.1)
  EXPECT_EQ(b[64 + 1], 3);
  EXPECT_EQ(get16(&b[64 + 4]), 0x0102);
  EXPECT_EQ(b[64 + 7], 9);
  EXPECT_EQ(get16(&b[64 + 14]), 0x0304);
  EXPECT_EQ(b[64 + 19], 0xC3);
  EXPECT_EQ(get16(&b[64 + 22]), 0x0506);
  EXPECT_EQ(get32(&b[64 + 24]), 0x11111111u);
  EXPECT_EQ(get32(&b[64 + 36]), 0x44444444u);
  EXPECT_EQ(get32(&b[64 + 40]), 0x55667788u);
  const PortCounters back = PortCounters::decode(decode_perf(b).data);
  EXPECT_EQ(back.port_xmit_wait, 0x55667788u);
  EXPECT_EQ(back.excessive_buffer_overrun_errors, 3);
}

TEST(Mad, ClassPortInfoRespTimeAndTrapFields) {
  ClassPortInfo c;
  c.class_version = 1;
  c.capability_mask = 0x0200;  // PortXmitWait supported (IBA 16.1.3.1)
  c.capability_mask2 = 0x4000001;
  c.resp_time_value = 18;
  c.trap_sl = 0xF;
  c.trap_fl = 0xABCDE;
  c.trap_lid = 0x0001;
  c.trap_hop_limit = 0xFF;
  c.trap_qp = 0x000001;
  c.trap_q_key = kQp1QKey;
  uint8_t d[72];
  c.encode(d);
  EXPECT_EQ(get16(d + 2), 0x0200);
  EXPECT_EQ(get32(d + 4), (0x4000001u << 5) | 18u);
  EXPECT_EQ(get32(d + 56), 0x00FABCDEu);
  EXPECT_EQ(get16(d + 60), 1);
  EXPECT_EQ(get32(d + 64), 0xFF000001u);
  EXPECT_EQ(get32(d + 68), kQp1QKey);
  const ClassPortInfo back = ClassPortInfo::decode(d);
  EXPECT_EQ(back.resp_time_value, 18);
  EXPECT_EQ(back.capability_mask2, 0x4000001u);
  EXPECT_EQ(back.trap_fl, 0xABCDEu);
  EXPECT_EQ(back.trap_qp, 1u);
}

// IBA 14.2.2: a CA sends through switches A (in 1, out 4), B (in 2, out 5) and C (in 3): the
// request collects ReturnPath [_, 1, 2, 3], reaches C's SMA with HopPointer 4, and the
// response comes back out of C 3, B 2, A 1 to the SM with HopPointer 0.
TEST(Mad, DirectedRouteWalksThreeSwitchesAndBack) {
  const uint8_t path[] = {1, 4, 5};
  Smp s = make_directed_smp(kMethodGet, kAttrNodeInfo, 0, 1, path, 3);
  DrHop h = dr_originate(s);
  ASSERT_EQ(h.route, DrRoute::port);
  EXPECT_EQ(h.port, 1);
  h = dr_receive(s, true, 1, 8);  // A
  ASSERT_EQ(h.route, DrRoute::port);
  EXPECT_EQ(h.port, 4);
  h = dr_receive(s, true, 2, 8);  // B
  ASSERT_EQ(h.route, DrRoute::port);
  EXPECT_EQ(h.port, 5);
  h = dr_receive(s, true, 3, 8);  // C: the end of the path
  EXPECT_EQ(h.route, DrRoute::local);
  EXPECT_EQ(s.hop_pointer(), 4);
  EXPECT_EQ(s.return_path[1], 1);
  EXPECT_EQ(s.return_path[2], 2);
  EXPECT_EQ(s.return_path[3], 3);

  Smp r = make_response(s, kStatusOk);
  h = dr_originate(r);
  ASSERT_EQ(h.route, DrRoute::port);
  EXPECT_EQ(h.port, 3);
  h = dr_receive(r, true, 5, 8);  // B
  ASSERT_EQ(h.route, DrRoute::port);
  EXPECT_EQ(h.port, 2);
  h = dr_receive(r, true, 4, 8);  // A
  ASSERT_EQ(h.route, DrRoute::port);
  EXPECT_EQ(h.port, 1);
  h = dr_receive(r, false, 1, 1);  // the SM's CA
  EXPECT_EQ(h.route, DrRoute::local);
  EXPECT_EQ(r.hop_pointer(), 0);
}

TEST(Mad, DirectedRouteRefusesWhatIba14_2_2Forbids) {
  const uint8_t path[] = {1, 4, 5};
  Smp s = make_directed_smp(kMethodGet, kAttrNodeInfo, 0, 1, path, 3);
  Smp unsent = s;
  EXPECT_EQ(dr_receive(unsent, true, 1, 8).route, DrRoute::discard);  // C14-9:1: pointer not stepped
  dr_originate(s);
  Smp at_ca = s;
  EXPECT_EQ(dr_receive(at_ca, false, 1, 1).route, DrRoute::discard);  // a CA never forwards
  Smp past = s;
  past.set_hop_pointer(9);
  EXPECT_EQ(dr_receive(past, true, 1, 8).route, DrRoute::discard);  // C14-9:5
  Smp no_port = s;
  no_port.initial_path[2] = 9;
  EXPECT_EQ(dr_receive(no_port, true, 1, 8).route, DrRoute::discard);  // beyond NumPorts
}

TEST(Mad, DirectedRouteEndsInALidRoutedPartWhenDrDlidIsALid) {
  const uint8_t path[] = {1};
  Smp s = make_directed_smp(kMethodGet, kAttrNodeInfo, 0, 1, path, 1);
  s.dr_dlid = 0x0042;
  dr_originate(s);
  const DrHop h = dr_receive(s, true, 1, 8);
  EXPECT_EQ(h.route, DrRoute::lid);
  EXPECT_EQ(h.lid, 0x0042);
  EXPECT_EQ(s.hop_pointer(), 2);
  EXPECT_EQ(dr_receive(s, false, 1, 1).route, DrRoute::local);  // C14-9:4 at the LID's CA
}

// libibmad's mad_dump_<attribute>(buf, bufsz, val, valsz): "Name:.....value" lines.
std::map<std::string, std::string> ibmad_dump(void* lib, const char* fn, const uint8_t* data, int size) {
  using Dump = void (*)(char*, int, void*, int);
  auto dump = reinterpret_cast<Dump>(dlsym(lib, fn));
  EXPECT_NE(dump, nullptr) << fn;
  std::map<std::string, std::string> out;
  if (!dump) return out;
  std::vector<uint8_t> copy(data, data + size);
  std::vector<char> text(8192);
  dump(text.data(), static_cast<int>(text.size()), copy.data(), size);
  std::istringstream lines(text.data());
  for (std::string line; std::getline(lines, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t value = line.find_first_not_of('.', colon + 1);
    out[line.substr(0, colon)] = value == std::string::npos ? "" : line.substr(value);
  }
  return out;
}

TEST(Mad, LibibmadReadsOurNodeInfoSwitchInfoPortInfoAndPortCountersAsWeMeantThem) {
  void* lib = dlopen("libibmad.so.5", RTLD_NOW | RTLD_LOCAL);
  if (!lib) GTEST_SKIP() << "libibmad.so.5 (Debian libibmad5, infiniband-diags) is not installed";
  SmpData d;
  NodeInfo n;
  n.node_type = kNodeSwitch;
  n.num_ports = 36;
  n.node_guid = 0x0002C90000000002ull;
  n.port_guid = 0x0002C90000000002ull;
  n.local_port_num = 17;
  n.vendor_id = 0x0002C9;
  n.encode(d);
  auto m = ibmad_dump(lib, "mad_dump_nodeinfo", d.data(), 64);
  EXPECT_EQ(m["NodeType"], "Switch");
  EXPECT_EQ(m["NumPorts"], "36");
  EXPECT_EQ(m["Guid"], "0x0002c90000000002");
  EXPECT_EQ(m["LocalPort"], "17");
  EXPECT_EQ(m["VendorId"], "0x0002c9");

  SwitchInfo si;
  si.linear_fdb_cap = 0xC000;
  si.linear_fdb_top = 19;
  si.life_time_value = 18;
  si.port_state_change = true;
  si.enhanced_port0 = true;
  si.multicast_fdb_top = 0xC01F;
  si.encode(d);
  m = ibmad_dump(lib, "mad_dump_switchinfo", d.data(), 64);
  EXPECT_EQ(m["LinearFdbCap"], "49152");
  EXPECT_EQ(m["LinearFdbTop"], "19");
  EXPECT_EQ(m["LifeTime"], "18");
  EXPECT_EQ(m["StateChange"], "1");
  EXPECT_EQ(m["EnhancedPort0"], "1");
  EXPECT_EQ(m["MulticastFDBTop"], "0xc01f");

  PortInfo p;
  p.lid = 7;
  p.master_sm_lid = 1;
  p.local_port_num = 3;
  p.link_width_enabled = p.link_width_supported = 3;
  p.link_width_active = 2;
  p.link_speed_supported = p.link_speed_enabled = 7;
  p.link_speed_active = 4;
  p.port_state = kPortArmed;
  p.port_phys_state = kPhysLinkUp;
  p.link_down_default_state = 2;
  p.lmc = 2;
  p.neighbor_mtu = 4;
  p.vl_cap = 4;
  p.vl_high_limit = 9;
  p.vl_arbitration_high_cap = 8;
  p.vl_arbitration_low_cap = 64;
  p.mtu_cap = 5;
  p.vl_stall_count = 7;
  p.hoq_life = 19;
  p.operational_vls = 3;
  p.p_key_violations = 5;
  p.guid_cap = 32;
  p.client_reregister = true;
  p.subnet_timeout = 18;
  p.resp_time_value = 8;
  p.local_phy_errors = 10;
  p.overrun_errors = 5;
  p.max_credit_hint = 1234;
  p.link_round_trip_latency = 0x12345;
  p.encode(d);
  m = ibmad_dump(lib, "mad_dump_portinfo", d.data(), 64);
  const std::map<std::string, std::string> want = {
      {"Lid", "7"}, {"SMLid", "1"}, {"LocalPort", "3"}, {"LinkWidthEnabled", "1X or 4X"},
      {"LinkWidthActive", "4X"}, {"LinkSpeedActive", "10.0 Gbps"}, {"LinkState", "Armed"},
      {"PhysLinkState", "LinkUp"}, {"LinkDownDefState", "Polling"}, {"LMC", "2"}, {"NeighborMTU", "2048"},
      {"VLCap", "VL0-7"}, {"VLHighLimit", "9"}, {"VLArbHighCap", "8"}, {"VLArbLowCap", "64"}, {"MtuCap", "4096"},
      {"VLStallCount", "7"}, {"HoqLife", "19"}, {"OperVLs", "VL0-3"}, {"PkeyViolations", "5"}, {"GuidCap", "32"},
      {"ClientReregister", "1"}, {"SubnetTimeout", "18"}, {"RespTimeVal", "8"}, {"LocalPhysErr", "10"},
      {"OverrunErr", "5"}, {"MaxCreditHint", "1234"}, {"RoundTrip", "74565"}};
  for (const auto& [field, value] : want) EXPECT_EQ(m[field], value) << field;

  PortCounters c;
  c.port_select = 3;
  c.symbol_error_counter = 258;
  c.port_xmit_discards = 772;
  c.local_link_integrity_errors = 12;
  c.excessive_buffer_overrun_errors = 3;
  c.vl15_dropped = 1286;
  c.port_xmit_data = 0x11111111;
  c.port_rcv_pkts = 0x44444444;
  c.port_xmit_wait = 0x55667788;
  GmpData g;
  c.encode(g);
  m = ibmad_dump(lib, "mad_dump_perfcounters", g.data(), 192);
  // (libibmad 44's dump prints QP1Dropped from VL15Dropped's bytes; OpenSM's ib_types.h and
  // libibmad's own field table put QP1Dropped at byte 20, as we do: not compared here.)
  EXPECT_EQ(m["PortSelect"], "3");
  EXPECT_EQ(m["SymbolErrorCounter"], "258");
  EXPECT_EQ(m["PortXmitDiscards"], "772");
  EXPECT_EQ(m["LocalLinkIntegrityErrors"], "12");
  EXPECT_EQ(m["ExcessiveBufferOverrunErrors"], "3");
  EXPECT_EQ(m["VL15Dropped"], "1286");
  EXPECT_EQ(m["PortXmitData"], std::to_string(0x11111111));
  EXPECT_EQ(m["PortRcvPkts"], std::to_string(0x44444444));
  EXPECT_EQ(m["PortXmitWait"], std::to_string(0x55667788));
  dlclose(lib);
}

// IBA 14.2.5.1: the Notice of a Trap 128 as a switch sends it, bit by bit: IsGeneric at
// byte 0 bit 7, Type in its 7 low bits, ProducerType in bytes 1-3, TrapNumber 4-5,
// IssuerLID 6-7, NoticeToggle at byte 8 bit 7 over a 15-bit NoticeCount, DataDetails from
// byte 10 (Trap 128's LIDADDR first).
TEST(Mad, NoticeOfTrap128FieldsAtSpecBitPositions) {
  const Smp t = make_link_state_change_trap(0x1234, 77);
  EXPECT_EQ(t.hdr.mgmt_class, kClassSubnLid);
  EXPECT_EQ(t.hdr.method, kMethodTrap);
  EXPECT_EQ(t.hdr.attribute_id, kAttrNotice);
  EXPECT_EQ(t.hdr.transaction_id, 77u);
  const SmpData& d = t.data;
  EXPECT_EQ(d[0], 0x81);  // generic, Urgent (OpenSM's ib_mad_notice_attr_t generic_type)
  EXPECT_EQ(d[1], 0x00);
  EXPECT_EQ(d[2], 0x00);
  EXPECT_EQ(d[3], 0x02);  // ProducerType: switch
  EXPECT_EQ(d[4], 0x00);
  EXPECT_EQ(d[5], 128);
  EXPECT_EQ(d[6], 0x12);
  EXPECT_EQ(d[7], 0x34);
  EXPECT_EQ(d[8], 0x00);
  EXPECT_EQ(d[9], 0x00);
  EXPECT_EQ(d[10], 0x12);  // LIDADDR
  EXPECT_EQ(d[11], 0x34);
  for (size_t i = 12; i < d.size(); ++i) EXPECT_EQ(d[i], 0) << i;

  Notice n;
  n.is_generic = false;
  n.type = 0x55;
  n.producer_type = 0xABCDEF;
  n.trap_number = 0x0102;
  n.issuer_lid = 0xBEEF;
  n.notice_toggle = true;
  n.notice_count = 0x7ABC;
  n.data_details[53] = 0x99;
  SmpData e;
  n.encode(e);
  EXPECT_EQ(e[0], 0x55);
  EXPECT_EQ(e[1], 0xAB);
  EXPECT_EQ(e[2], 0xCD);
  EXPECT_EQ(e[3], 0xEF);
  EXPECT_EQ(e[8], 0xFA);  // toggle bit over the count's high bits
  EXPECT_EQ(e[9], 0xBC);
  EXPECT_EQ(e[63], 0x99);
  const Notice back = Notice::decode(e);
  EXPECT_FALSE(back.is_generic);
  EXPECT_EQ(back.type, 0x55);
  EXPECT_EQ(back.producer_type, 0xABCDEFu);
  EXPECT_EQ(back.trap_number, 0x0102);
  EXPECT_EQ(back.issuer_lid, 0xBEEF);
  EXPECT_TRUE(back.notice_toggle);
  EXPECT_EQ(back.notice_count, 0x7ABC);
  EXPECT_EQ(back.data_details, n.data_details);
}

// libibmad's own field table (what OpenSM's and ibsim's tools decode traps with) reads our
// Trap 128 Notice field by field. Its field numbers are looked up by name, so the test does
// not depend on the library's enum order.
TEST(Mad, LibibmadReadsOurTrap128Notice) {
  void* lib = dlopen("libibmad.so.5", RTLD_NOW | RTLD_LOCAL);
  if (!lib) GTEST_SKIP() << "libibmad.so.5 (Debian libibmad5, infiniband-diags) is not installed";
  using NameFn = const char* (*)(int);
  using GetFn = uint32_t (*)(void*, int, int);
  auto name = reinterpret_cast<NameFn>(dlsym(lib, "mad_field_name"));
  auto get = reinterpret_cast<GetFn>(dlsym(lib, "mad_get_field"));
  ASSERT_TRUE(name && get);
  // mad_field_name() indexes libibmad's field table without a bounds check, and the library
  // exports no field count: stop as soon as every field the test needs is found (index 118
  // in libibmad 5), never reading past the table (ASan caught a read past it).
  const std::vector<std::string> wanted{"NoticeIsGeneric", "NoticeType",  "NoticeProducerType", "NoticeTrapNumber",
                                        "NoticeIssuerLID", "NoticeToggle", "NoticeCount",        "NoticeDataLID"};
  std::map<std::string, int> field;
  for (int i = 1; i < 1000 && field.size() < wanted.size(); ++i) {
    const char* n = name(i);
    if (n != nullptr && std::find(wanted.begin(), wanted.end(), n) != wanted.end()) field.emplace(n, i);
  }
  for (const std::string& f : wanted) ASSERT_TRUE(field.count(f)) << f;
  Smp t = make_link_state_change_trap(0x0203, 5);
  Notice n = Notice::decode(t.data);
  n.notice_toggle = true;
  n.notice_count = 3;
  n.encode(t.data);
  EXPECT_EQ(get(t.data.data(), 0, field["NoticeIsGeneric"]), 1u);
  EXPECT_EQ(get(t.data.data(), 0, field["NoticeType"]), 1u);
  EXPECT_EQ(get(t.data.data(), 0, field["NoticeProducerType"]), 2u);
  EXPECT_EQ(get(t.data.data(), 0, field["NoticeTrapNumber"]), 128u);
  EXPECT_EQ(get(t.data.data(), 0, field["NoticeIssuerLID"]), 0x0203u);
  EXPECT_EQ(get(t.data.data(), 0, field["NoticeToggle"]), 1u);
  EXPECT_EQ(get(t.data.data(), 0, field["NoticeCount"]), 3u);
  EXPECT_EQ(get(t.data.data(), 0, field["NoticeDataLID"]), 0x0203u);
  dlclose(lib);
}

}  // namespace
}  // namespace ibvp::ib::mad
