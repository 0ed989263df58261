// QoS policy options in OpenSM's syntax (doc/QoS_management_in_OpenSM.txt Sec. 7) turned
// into the switch model's SL2VL and VL arbitration tables, and the errors bad values raise.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "models/link/vl_arbiter.h"
#include "platform/params/config_error.h"
#include "platform/sm/qos_policy.h"

namespace ibvp::sm {
namespace {

// Runs `f`, which must throw ConfigError, and returns it.
ConfigError config_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError";
  return ConfigError("", "", 0, "", "");
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// OpenSM's hard-coded defaults for switch external ports, as its documentation lists them.
const char* kOpenSmSwitchDefaults =
    "# QoS for switch external ports\n"
    "qos_swe_max_vls 15\n"
    "qos_swe_high_limit 0\n"
    "qos_swe_vlarb_high 0:4,1:0,2:0,3:0,4:0,5:0,6:0,7:0,8:0,9:0,10:0,11:0,12:0,13:0,14:0\n"
    "qos_swe_vlarb_low 0:0,1:4,2:4,3:4,4:4,5:4,6:4,7:4,8:4,9:4,10:4,11:4,12:4,13:4,14:4\n"
    "qos_swe_sl2vl 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7\n";

TEST(QosPolicy, ReadsOpenSmSwitchDefaults) {
  QosPolicy p;
  p.read_options(kOpenSmSwitchDefaults, "opensm.conf");
  const QosPortTables t = p.tables(QosPortKind::swe, 15);
  ASSERT_EQ(t.vlarb.high.size(), 15u);
  ASSERT_EQ(t.vlarb.low.size(), 15u);
  EXPECT_EQ(t.vlarb.high[0].vl, 0);
  EXPECT_EQ(t.vlarb.high[0].weight, 4);
  EXPECT_EQ(t.vlarb.high[14].vl, 14);
  EXPECT_EQ(t.vlarb.high[14].weight, 0);
  EXPECT_EQ(t.vlarb.low[0].weight, 0);
  EXPECT_EQ(t.vlarb.low[9].vl, 9);
  EXPECT_EQ(t.vlarb.low[9].weight, 4);
  EXPECT_EQ(t.vlarb.high_limit, 0);
  for (int sl = 0; sl < 15; ++sl) EXPECT_EQ(t.sl2vl[sl], sl);
  EXPECT_EQ(t.sl2vl[15], 7);
}

TEST(QosPolicy, PortTypeOptionWinsOverPlainOptionWhichWinsOverDefault) {
  QosPolicy p;
  p.set("qos_vlarb_high", "0:4");
  p.set("qos_ca_vlarb_high", "1:8, 0:0x10");  // spaces and hexadecimal, as OpenSM's strtoul
  p.set("qos_high_limit", "6");
  const QosPortTables ca = p.tables(QosPortKind::ca, 4);
  ASSERT_EQ(ca.vlarb.high.size(), 2u);
  EXPECT_EQ(ca.vlarb.high[0].vl, 1);
  EXPECT_EQ(ca.vlarb.high[0].weight, 8);
  EXPECT_EQ(ca.vlarb.high[1].weight, 16);
  EXPECT_EQ(ca.vlarb.high_limit, 6);
  const QosPortTables swe = p.tables(QosPortKind::swe, 4);
  ASSERT_EQ(swe.vlarb.high.size(), 1u);
  EXPECT_EQ(swe.vlarb.high[0].weight, 4);
  // Not given anywhere: the switch model's defaults for 4 data VLs.
  EXPECT_EQ(swe.sl2vl, sw::SwitchConfig::default_sl2vl(4));
  const link::VlArbConfig rr = link::VlArbConfig::round_robin(4);
  ASSERT_EQ(swe.vlarb.low.size(), rr.low.size());
  for (size_t i = 0; i < rr.low.size(); ++i) EXPECT_EQ(swe.vlarb.low[i].vl, rr.low[i].vl);
  EXPECT_TRUE(p.given(QosPortKind::rtr, "vlarb_high"));
  EXPECT_FALSE(p.given(QosPortKind::rtr, "sl2vl"));
}

TEST(QosPolicy, Sl2VlNeedsExactlySixteenDataVls) {
  const ConfigError e = config_error([] { parse_qos_sl2vl("0,1,2,3,4,5,6,7,0,1,2,3,4,5,6"); });
  EXPECT_EQ(e.key(), "qos_sl2vl");
  EXPECT_TRUE(contains(e.problem(), "15 value")) << e.what();
  EXPECT_TRUE(contains(e.fix(), "16")) << e.what();

  const ConfigError vl15 = config_error([] { parse_qos_sl2vl("0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,15"); });
  EXPECT_TRUE(contains(vl15.problem(), "entry 16 \"15\"")) << vl15.what();
  EXPECT_TRUE(contains(vl15.fix(), "0..14")) << vl15.what();

  const ConfigError word = config_error([] { parse_qos_sl2vl("0,1,2,3,x,5,6,7,0,1,2,3,4,5,6,7"); });
  EXPECT_TRUE(contains(word.problem(), "entry 5 \"x\" (SL 4)")) << word.what();

  const sw::Sl2VlTable t = parse_qos_sl2vl(" 0, 1,2,3,4,5,6,7,0,1,2,3,4,5,6, 0x7 ");
  EXPECT_EQ(t[15], 7);
  EXPECT_EQ(t[1], 1);
}

TEST(QosPolicy, VlarbWeightAbove255NamesTheEntryAndTheFix) {
  const ConfigError e = config_error([] { parse_qos_vlarb("0:4,1:256", {}, "qos_vlarb_low"); });
  EXPECT_EQ(e.key(), "qos_vlarb_low");
  EXPECT_TRUE(contains(e.problem(), "entry 2 \"1:256\"")) << e.what();
  EXPECT_TRUE(contains(e.fix(), "0..255")) << e.what();
  EXPECT_EQ(parse_qos_vlarb("0:255")[0].weight, 255);
}

TEST(QosPolicy, VlarbHoldsAtMost64Entries) {
  std::string entries;
  for (int i = 0; i < 64; ++i) entries += (i ? "," : "") + std::to_string(i % 8) + ":1";
  EXPECT_EQ(parse_qos_vlarb(entries).size(), 64u);
  const ConfigError e = config_error([&] { parse_qos_vlarb(entries + ",0:1"); });
  EXPECT_TRUE(contains(e.problem(), "65 entries")) << e.what();
  EXPECT_TRUE(parse_qos_vlarb("").empty()) << "an empty table is allowed";
}

TEST(QosPolicy, VlarbRefusesMalformedEntries) {
  const struct {
    const char* value;
    const char* says;
  } cases[] = {
      {"0-4", "entry 1 \"0-4\" is not of the form VL:weight"},
      {"0:4,,1:2", "entry 2 is empty"},
      {"0:4,", "entry 2 is empty"},
      {"a:4", "VL \"a\" is not a number"},
      {"0:4:1", "not of the form VL:weight"},
      {"1:-3", "weight \"-3\" is not a number"},
      {"15:4", "names VL 15"},
  };
  for (const auto& c : cases) {
    const ConfigError e = config_error([&] { parse_qos_vlarb(c.value); });
    EXPECT_EQ(e.key(), "qos_vlarb_high") << c.value;
    EXPECT_TRUE(contains(e.problem(), c.says)) << c.value << ": " << e.what();
    EXPECT_FALSE(e.fix().empty()) << c.value;
  }
}

TEST(QosPolicy, HighLimitIs0To255) {
  EXPECT_EQ(parse_qos_high_limit("255"), 255);
  EXPECT_EQ(parse_qos_high_limit("0"), 0);
  for (const char* bad : {"256", "x", "", "-2"}) {
    const ConfigError e = config_error([&] { parse_qos_high_limit(bad); });
    EXPECT_EQ(e.key(), "qos_high_limit");
    EXPECT_TRUE(contains(e.fix(), "0..255")) << e.what();
  }
}

TEST(QosPolicy, VlAboveThePortsDataVlsIsRefusedWithItsSource) {
  QosPolicy p;
  p.read_options("qos_sl2vl 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7\n\nqos_vlarb_low 0:4,5:4\n", "fabric.opts");
  const ConfigError e = config_error([&] { p.tables(QosPortKind::ca, 4); });
  EXPECT_EQ(e.file(), "fabric.opts");
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.key(), "qos_sl2vl");
  EXPECT_TRUE(contains(e.problem(), "SL 4 maps to VL 4")) << e.what();
  EXPECT_TRUE(contains(e.problem(), "4 data VL")) << e.what();
  EXPECT_TRUE(contains(e.fix(), "VL0..VL3")) << e.what();

  QosPolicy q;
  q.read_options("qos_vlarb_low 0:4,5:4\n", "fabric.opts");
  const ConfigError low = config_error([&] { q.tables(QosPortKind::swe, 4); });
  EXPECT_EQ(low.key(), "qos_vlarb_low");
  EXPECT_TRUE(contains(low.problem(), "entry 2 names VL 5")) << low.what();
  EXPECT_NO_THROW(q.tables(QosPortKind::swe, 8));
}

TEST(QosPolicy, MaxVlsNarrowsTheVlsTablesMayName) {
  QosPolicy p;
  p.set("qos_max_vls", "2");
  EXPECT_EQ(p.tables(QosPortKind::ca, 8).sl2vl, sw::SwitchConfig::default_sl2vl(2));
  p.set("qos_vlarb_high", "3:10");
  const ConfigError e = config_error([&] { p.tables(QosPortKind::ca, 8); });
  EXPECT_TRUE(contains(e.problem(), "qos_max_vls is 2")) << e.what();
  const ConfigError range = config_error([&] { p.set("qos_max_vls", "16"); });
  EXPECT_TRUE(contains(range.fix(), "1..15")) << range.what();
}

TEST(QosPolicy, OptionsFileSkipsOtherOptionsAndUnderstandsUnsetValues) {
  QosPolicy p;
  p.read_options(
      "# OpenSM options\n"
      "routing_engine updn\n"
      "qos TRUE\n"
      "qos_policy_file /etc/opensm/qos-policy.conf\n"
      "qos_vlarb_high 1:32   # comment after a value\n"
      "qos_ca_vlarb_high (null)\n"
      "qos_ca_high_limit -1\n"
      "qos_ca_max_vls 0\n",
      "opensm.opts");
  EXPECT_TRUE(p.given(QosPortKind::ca, "vlarb_high")) << "the plain option applies: the ca one is unset";
  EXPECT_FALSE(p.given(QosPortKind::ca, "high_limit"));
  EXPECT_FALSE(p.given(QosPortKind::ca, "max_vls"));
  EXPECT_EQ(p.tables(QosPortKind::ca, 2).vlarb.high[0].weight, 32);

  const ConfigError e = config_error([&] { p.read_options("routing_engine minhop\nqos_vlarb_hihg 0:4\n", "x.opts"); });
  EXPECT_EQ(e.key(), "qos_vlarb_hihg");
  EXPECT_EQ(e.line(), 2);
  EXPECT_TRUE(contains(e.fix(), "vlarb_high")) << e.what();
  EXPECT_TRUE(QosPolicy::is_qos_option("qos_rtr_sl2vl"));
  EXPECT_FALSE(QosPolicy::is_qos_option("qos_policy_file"));
}

TEST(QosPolicy, ErrorsNameTheScenarioKeyWhenGivenOne) {
  QosPolicy p;
  const ConfigError e =
      config_error([&] { p.set("qos_vlarb_high", "0:4,2:300", QosOptionSource{"run.yaml", "qos.vlarb_high", 12}); });
  EXPECT_EQ(e.file(), "run.yaml");
  EXPECT_EQ(e.key(), "qos.vlarb_high");
  EXPECT_EQ(e.line(), 12);
  EXPECT_TRUE(contains(e.what(), "run.yaml:12: qos.vlarb_high: entry 2 \"2:300\"")) << e.what();
}

TEST(QosPolicy, TablesWithNoWeightAreRefused) {
  QosPolicy p;
  p.set("qos_vlarb_low", "0:0,1:0");
  p.set("qos_vlarb_high", "");
  const ConfigError e = config_error([&] { p.tables(QosPortKind::swe, 2); });
  EXPECT_EQ(e.key(), "qos_vlarb_low");
  EXPECT_TRUE(contains(e.problem(), "could never send")) << e.what();
}

TEST(QosPolicy, TablesDriveTheSwitchArbiter) {
  // OpenSM's documented example: VL0 high priority (limit 6 x 4 KB), VL1..3 low with 1:2:3.
  QosPolicy p;
  p.read_options(
      "qos_high_limit 6\n"
      "qos_vlarb_high 0:4\n"
      "qos_vlarb_low 0:0,1:64,2:128,3:192\n",
      "");
  const QosPortTables t = p.tables(QosPortKind::swe, 4);
  link::VlArbiter arbiter(t.vlarb);
  // All four VLs ready with 4 KB packets: VL0 goes first until 6 x 4096 bytes are sent while
  // low-priority packets wait, then one low-priority packet.
  int vl0 = 0;
  int first_low = -1;
  for (int k = 0; k < 7; ++k) {
    const int vl = arbiter.choose(0b1111, [](uint8_t) { return 4096u; });
    if (vl == 0) ++vl0;
    else if (first_low < 0) first_low = vl;
  }
  EXPECT_EQ(vl0, 6);
  EXPECT_EQ(first_low, 1);
}

}  // namespace
}  // namespace ibvp::sm
