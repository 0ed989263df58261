// The parameter vocabulary (models/sim/params.h) and the YAML validation, JSON Schema and
// reference generated from it (platform/params/validate.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <yaml-cpp/yaml.h>

#include "common/testing.h"
#include "models/endpoint/endpoint.h"
#include "models/endpoint/endpoint_params.h"
#include "models/flit/flit_params.h"
#include "models/link/link_params.h"
#include "models/sim/params.h"
#include "models/switch/switch.h"
#include "models/switch/switch_params.h"
#include "platform/params/config_error.h"
#include "platform/params/validate.h"
#include "platform/scenario/scenario_loader.h"

namespace ibvp {
namespace {

using sc_core::sc_time;
using sc_core::SC_MS;
using sc_core::SC_NS;
using sc_core::SC_PS;
using sc_core::SC_US;

sc_time time_of(const std::string& text) {
  sc_time t;
  std::string problem;
  EXPECT_TRUE(sim::parse_time(text, t, problem)) << text << ": " << problem;
  return t;
}

std::string time_problem(const std::string& text) {
  sc_time t;
  std::string problem;
  EXPECT_FALSE(sim::parse_time(text, t, problem)) << text << " was accepted as " << t;
  return problem;
}

TEST(ParamsTime, AcceptsNumberAndUnitWithOrWithoutBlank) {
  EXPECT_EQ(time_of("40ns"), sc_time(40, SC_NS));
  EXPECT_EQ(time_of("2 ms"), sc_time(2, SC_MS));
  EXPECT_EQ(time_of("100ms"), sc_time(100, SC_MS));
  EXPECT_EQ(time_of("3s"), sc_time(3, sc_core::SC_SEC));
  EXPECT_EQ(time_of("7ps"), sc_time(7, SC_PS));
  EXPECT_EQ(time_of(" 5us "), sc_time(5, SC_US));
}

TEST(ParamsTime, FractionsAreExactInPicoseconds) {
  EXPECT_EQ(time_of("1.5us").value(), 1'500'000u);
  EXPECT_EQ(time_of("0.001ns").value(), 1u);
  EXPECT_EQ(time_of("2.50ms").value(), 2'500'000'000u);
}

TEST(ParamsTime, ZeroNeedsNoUnitButOtherNumbersDo) {
  EXPECT_EQ(time_of("0"), sc_core::SC_ZERO_TIME);
  EXPECT_EQ(time_of("0s"), sc_core::SC_ZERO_TIME);
  EXPECT_EQ(time_of("0.0"), sc_core::SC_ZERO_TIME);
  EXPECT_NE(time_problem("100").find("has no unit"), std::string::npos);
}

TEST(ParamsTime, RefusesNegativeUnknownUnitFinerThanPicosecondAndGarbage) {
  EXPECT_NE(time_problem("-1ns").find("negative"), std::string::npos);
  EXPECT_NE(time_problem("5 min").find("unknown time unit"), std::string::npos);
  EXPECT_NE(time_problem("5NS").find("unknown time unit"), std::string::npos);
  EXPECT_NE(time_problem("0.5ps").find("finer than"), std::string::npos);
  EXPECT_NE(time_problem("fast").find("not a time"), std::string::npos);
  EXPECT_NE(time_problem("1.ns").find("not a time"), std::string::npos);
  EXPECT_NE(time_problem("").find("empty"), std::string::npos);
  EXPECT_NE(time_problem("99999999999s").find("beyond"), std::string::npos);
}

TEST(ParamsTime, FormatIsTheShortestExactSpellingAndParsesBack) {
  EXPECT_EQ(sim::format_time(sc_time(100, SC_NS)), "100ns");
  EXPECT_EQ(sim::format_time(sc_time(2, SC_MS)), "2ms");
  EXPECT_EQ(sim::format_time(sc_time(1500, SC_NS)), "1500ns");
  EXPECT_EQ(sim::format_time(sc_core::SC_ZERO_TIME), "0s");
  for (const char* text : {"40ns", "1500ns", "2ms", "7ps", "3s"}) EXPECT_EQ(sim::format_time(time_of(text)), text);
}

TEST(ParamsVocabulary, NumbersAreStrictDecimal) {
  int64_t i = 0;
  EXPECT_TRUE(sim::parse_integer("-12", i));
  EXPECT_EQ(i, -12);
  EXPECT_FALSE(sim::parse_integer("1.0", i));
  EXPECT_FALSE(sim::parse_integer("0x10", i));
  EXPECT_FALSE(sim::parse_integer("99999999999999999999", i));
  double d = 0;
  EXPECT_TRUE(sim::parse_real("1e-3", d));
  EXPECT_DOUBLE_EQ(d, 1e-3);
  EXPECT_FALSE(sim::parse_real("nan", d));
  EXPECT_FALSE(sim::parse_real(".inf", d));
  EXPECT_FALSE(sim::parse_real("0x1p3", d));
  bool b = false;
  EXPECT_TRUE(sim::parse_boolean("True", b));
  EXPECT_TRUE(b);
  EXPECT_FALSE(sim::parse_boolean("yes", b));
}

TEST(ParamsVocabulary, EveryModelFieldIsDeclaredOnceWithDocAndDefault) {
  const auto keys = [](const sim::ParamGroup& g) { return g.key_list(); };
  EXPECT_EQ(keys(sw::switch_params()),
            "pipeline_delay, data_vls, vl_buffer_bytes, vl15_buffer_bytes, vlarb, sl2vl, output_buffer_bytes, crossbar, request_order, bypass_limit, "
            "scheduling, scheduling_scope, unreserved_rate, vc_bits, path_selection, "
            "ecn, multicast_replication, multicast_order, multicast_buffer_bytes, multicast_priority, hoq_life, switch_life, drop_policy, sma_delay, sma_queue_depth, lifetime_overrides, model, flit");
  EXPECT_EQ(keys(flit::flit_params()),
            "width_bits, link_rate, vcs_per_channel, vc_buffer_flits, variant, acceleration, unreserved, block_flits, "
            "link_delay, nic_multiplexing, nic_scheduler, nic_dma_cycles, nic_vtick, router_vtick, vc_bits, class_vcs, "
            "shared_vcs, vl_classes");
  EXPECT_EQ(keys(sw::ecn_params()),
            "policy, output_threshold, max_packet_bytes, threshold, marking_rate, packet_size, victim_mask");
  EXPECT_EQ(keys(ep::endpoint_params()), "data_vls, vl_buffer_bytes, vl15_buffer_bytes, vlarb, sl2vl");
  EXPECT_EQ(keys(link::link_params()), "width, speed, length_m, propagation_ns_per_m");
  for (const sim::ParamGroup* g : {&sw::switch_params(), &flit::flit_params(), &sw::ecn_params(), &ep::endpoint_params(), &link::link_params(),
                                   &link::vlarb_params(), &link::vlarb_entry_params()}) {
    for (const sim::ParamDecl& d : g->params) {
      EXPECT_FALSE(d.doc.empty()) << g->name << "." << d.name;
      EXPECT_TRUE(d.required || !d.default_text.empty()) << g->name << "." << d.name << " has no default";
    }
  }
}

TEST(ParamsVocabulary, DefaultsInTheDeclarationsAreTheStructDefaults) {
  const sim::ParamGroup& g = sw::switch_params();
  EXPECT_EQ(g.find("pipeline_delay")->default_text, sim::format_time(sw::SwitchConfig{}.pipeline_delay));
  EXPECT_EQ(g.find("vl_buffer_bytes")->default_text, std::to_string(sw::SwitchConfig{}.vl_buffer_bytes));
  EXPECT_EQ(g.find("crossbar")->default_text, sw::crossbar_name(sw::SwitchConfig{}.crossbar));
  EXPECT_EQ(g.find("crossbar")->default_text, "non_multiplexed");
  EXPECT_EQ(g.find("request_order")->default_text, sw::request_order_name(sw::SwitchConfig{}.request_order));
  EXPECT_EQ(link::link_params().find("width")->default_text, "4X");
  EXPECT_EQ(link::link_params().find("speed")->default_text, "SDR");
}

TEST(ParamsVocabulary, Vl15BufferMustHoldOneManagementPacket) {
  // 256-byte MAD + LRH 8 + BTH 12 + DETH 8 + ICRC 4 + VCRC 2 = 290 bytes = 5 credit blocks.
  EXPECT_EQ(link::mad_buffer_bytes(), 320u);
  EXPECT_EQ(sw::switch_params().find("vl15_buffer_bytes")->int_min, 320);
}

// --- Validation of one model group, straight from a YAML document.

sw::SwitchConfig switch_from(const std::string& yaml) {
  const params::Document doc = params::Document::parse(yaml, "sw.yaml");
  sw::SwitchConfig cfg;
  params::apply(sw::switch_params(), doc, params::child({}, "switch"), cfg);
  return cfg;
}

ConfigError switch_error(const std::string& yaml) {
  try {
    switch_from(yaml);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << yaml;
  return ConfigError("", "", 0, "", "");
}

TEST(ParamsValidate, WrittenValuesReachTheConfigStruct) {
  const sw::SwitchConfig c = switch_from(
      "switch:\n"
      "  pipeline_delay: 40ns\n"
      "  vl_buffer_bytes: 8320\n"
      "  data_vls: 2\n"
      "  crossbar: multiplexed\n"
      "  request_order: fifo\n"
      "  bypass_limit: 2\n"
      "  vlarb: {high: [{vl: 1, weight: 10}], low: [{vl: 0, weight: 255}], high_limit: 3}\n"
      "  sl2vl: [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]\n");
  EXPECT_EQ(c.pipeline_delay, sc_time(40, SC_NS));
  EXPECT_EQ(c.vl_buffer_bytes, 8320u);
  EXPECT_EQ(c.data_vls, 2);
  EXPECT_EQ(c.crossbar, sw::Crossbar::multiplexed);
  EXPECT_EQ(c.request_order, sw::RequestOrder::fifo);
  EXPECT_EQ(c.bypass_limit, 2u);
  ASSERT_EQ(c.vlarb.high.size(), 1u);
  EXPECT_EQ(c.vlarb.high[0].vl, 1);
  EXPECT_EQ(c.vlarb.high[0].weight, 10);
  ASSERT_EQ(c.vlarb.low.size(), 1u);
  EXPECT_EQ(c.vlarb.high_limit, 3);
  EXPECT_EQ(c.sl2vl[3], 1);
}

TEST(ParamsValidate, TablesThatAreNotWrittenFollowDataVls) {
  const sw::SwitchConfig c = switch_from("switch: {data_vls: 4}\n");
  ASSERT_EQ(c.vlarb.low.size(), 4u);
  EXPECT_TRUE(c.vlarb.high.empty());
  EXPECT_EQ(c.vlarb.low[3].vl, 3);
  EXPECT_EQ(c.vlarb.low[3].weight, 255);
  EXPECT_EQ(c.sl2vl, sw::SwitchConfig::default_sl2vl(4));
}

TEST(ParamsValidate, UnknownKeyNamesFileLineKeyAndTheAllowedKeys) {
  const ConfigError e = switch_error("switch:\n  pipeline_delay: 40ns\n  crosbar: fifo\n");
  EXPECT_EQ(e.file(), "sw.yaml");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.key(), "switch.crosbar");
  EXPECT_EQ(e.problem(), "unknown key");
  EXPECT_NE(e.fix().find("did you mean crossbar?"), std::string::npos) << e.what();
  EXPECT_NE(e.fix().find("allowed keys are pipeline_delay, data_vls, vl_buffer_bytes"), std::string::npos);
  EXPECT_EQ(std::string(e.what()).rfind("sw.yaml:3: switch.crosbar: unknown key (fix: ", 0), 0u) << e.what();
}

TEST(ParamsValidate, WrongTypeNamesTheExpectedTypeAndTheValue) {
  const ConfigError e = switch_error("switch:\n  bypass_limit: four\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.key(), "switch.bypass_limit");
  EXPECT_EQ(e.problem(), "expected an integer, got \"four\"");
  EXPECT_NE(e.fix().find("0..255"), std::string::npos);
  EXPECT_EQ(switch_error("switch: {bypass_limit: \"4\"}\n").fix(), "remove the quotes");
  EXPECT_EQ(switch_error("switch: {data_vls: [1]}\n").problem(), "expected an integer, got a list");
  EXPECT_EQ(switch_error("switch: {vlarb: 3}\n").problem(), "expected a mapping, got \"3\"");
}

TEST(ParamsValidate, OutOfRangeNamesTheRange) {
  const ConfigError e = switch_error("switch:\n  data_vls: 16\n");
  EXPECT_EQ(e.key(), "switch.data_vls");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.problem(), "16 is out of range 1..15");
  EXPECT_EQ(e.fix(), "use a value in 1..15");
}

TEST(ParamsValidate, BufferSizesAreWholeCreditBlocks) {
  const ConfigError e = switch_error("switch: {vl_buffer_bytes: 8300}\n");
  EXPECT_EQ(e.problem(), "8300 is not a multiple of 64");
  EXPECT_EQ(e.fix(), "use 8256 or 8320");
}

TEST(ParamsValidate, UnknownChoiceListsTheAllowedValues) {
  const ConfigError e = switch_error("switch:\n  request_order: fifo_bypas\n");
  EXPECT_EQ(e.key(), "switch.request_order");
  EXPECT_EQ(e.problem(), "unknown value \"fifo_bypas\"");
  EXPECT_EQ(e.fix(), "did you mean fifo_bypass? allowed values are fifo, fifo_bypass");
}

TEST(ParamsValidate, TimeWithoutUnitIsRefusedWithExamples) {
  const ConfigError e = switch_error("switch:\n  pipeline_delay: 40\n");
  EXPECT_EQ(e.key(), "switch.pipeline_delay");
  EXPECT_NE(e.problem().find("has no unit"), std::string::npos);
  EXPECT_NE(e.fix().find("40ns"), std::string::npos);
}

TEST(ParamsValidate, KeyWithoutValueIsAnErrorNotADefault) {
  const ConfigError e = switch_error("switch:\n  pipeline_delay:\n");
  EXPECT_EQ(e.key(), "switch.pipeline_delay");
  EXPECT_EQ(e.problem(), "no value given");
  EXPECT_NE(e.fix().find("remove the key to use the default (100ns)"), std::string::npos) << e.fix();
}

TEST(ParamsValidate, DuplicateKeyIsRefusedWithBothLines) {
  const ConfigError e = switch_error("switch:\n  data_vls: 2\n  data_vls: 3\n");
  EXPECT_EQ(e.key(), "switch.data_vls");
  EXPECT_EQ(e.problem(), "key given twice (lines 2 and 3)");
}

TEST(ParamsValidate, ListItemErrorsNameTheItem) {
  const ConfigError e = switch_error(
      "switch:\n"
      "  vlarb:\n"
      "    low:\n"
      "      - {vl: 0, weight: 255}\n"
      "      - {vl: 0, weight: 300}\n");
  EXPECT_EQ(e.key(), "switch.vlarb.low[1].weight");
  EXPECT_EQ(e.line(), 5);
  EXPECT_EQ(e.problem(), "300 is out of range 0..255");
  EXPECT_EQ(switch_error("switch: {vlarb: {low: [{weight: 1}]}}\n").key(), "switch.vlarb.low[0].vl");
}

TEST(ParamsValidate, CrossFieldChecksPointAtTheOffendingEntry) {
  ConfigError e = switch_error(
      "switch:\n"
      "  data_vls: 2\n"
      "  vlarb:\n"
      "    low: [{vl: 0, weight: 255}, {vl: 2, weight: 255}]\n");
  EXPECT_EQ(e.key(), "switch.vlarb.low[1].vl");
  EXPECT_EQ(e.line(), 4);
  EXPECT_NE(e.problem().find("data_vls is 2"), std::string::npos);
  EXPECT_NE(e.fix().find("0..1"), std::string::npos);

  e = switch_error("switch:\n  sl2vl: [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]\n");
  EXPECT_EQ(e.key(), "switch.sl2vl[3]");
  EXPECT_EQ(e.line(), 2);

  e = switch_error("switch:\n  vlarb: {low: [{vl: 0, weight: 0}]}\n");
  EXPECT_EQ(e.key(), "switch.vlarb");
  EXPECT_NE(e.problem().find("could never send"), std::string::npos);
}

TEST(ParamsValidate, TableLengthsAreChecked) {
  ConfigError e = switch_error("switch:\n  sl2vl: [0, 0, 0]\n");
  EXPECT_EQ(e.key(), "switch.sl2vl");
  EXPECT_EQ(e.problem(), "has 3 items; it needs exactly 16");
  std::string entries;
  for (int i = 0; i < 65; ++i) entries += std::string(i ? ", " : "") + "{vl: 0, weight: 1}";
  e = switch_error("switch:\n  vlarb: {low: [" + entries + "]}\n");
  EXPECT_EQ(e.key(), "switch.vlarb.low");
  EXPECT_EQ(e.problem(), "has 65 items; it needs at most 64");
}

TEST(ParamsValidate, SyntaxErrorsAndOddDocumentsAreConfigErrors) {
  ConfigError e = switch_error("switch:\n  data_vls: [1\n");
  EXPECT_EQ(e.file(), "sw.yaml");
  EXPECT_GT(e.line(), 0);
  EXPECT_NE(e.problem().find("YAML syntax error"), std::string::npos);
  EXPECT_NE(switch_error("").problem().find("empty"), std::string::npos);
  EXPECT_NE(switch_error("a: 1\n---\nb: 2\n").problem().find("2 YAML documents"), std::string::npos);
  EXPECT_NE(switch_error("- 1\n- 2\n").problem().find("expected a mapping"), std::string::npos);
}

TEST(ParamsValidate, OverridePathsParseAndPrint) {
  params::Path p;
  ASSERT_TRUE(params::parse_path("flows[2].ipd", p));
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].key, "flows");
  EXPECT_EQ(p[1].index, 2);
  EXPECT_EQ(p[2].key, "ipd");
  EXPECT_EQ(params::path_text(p), "flows[2].ipd");
  EXPECT_FALSE(params::parse_path("a..b", p));
  EXPECT_FALSE(params::parse_path("a[x]", p));
  EXPECT_FALSE(params::parse_path("a.", p));
  EXPECT_FALSE(params::parse_path("", p));
}

// --- Generated documents

TEST(ParamsSchema, IsJsonWithTypesRangesEnumsAndNoExtraKeys) {
  // JSON is YAML: yaml-cpp reads the schema back for structural checks.
  const YAML::Node s = YAML::Load(scenario_json_schema());
  EXPECT_EQ(s["$schema"].as<std::string>(), "https://json-schema.org/draft/2020-12/schema");
  EXPECT_FALSE(s["additionalProperties"].as<bool>());
  const YAML::Node sw = s["properties"]["switch"];
  EXPECT_EQ(sw["type"].as<std::string>(), "object");
  EXPECT_FALSE(sw["additionalProperties"].as<bool>());
  const YAML::Node vls = sw["properties"]["data_vls"];
  EXPECT_EQ(vls["type"].as<std::string>(), "integer");
  EXPECT_EQ(vls["minimum"].as<int>(), 1);
  EXPECT_EQ(vls["maximum"].as<int>(), 15);
  EXPECT_EQ(vls["default"].as<int>(), 1);
  EXPECT_NE(vls["description"].as<std::string>().find("Default: 1."), std::string::npos);
  EXPECT_EQ(sw["properties"]["crossbar"]["enum"].size(), 2u);
  EXPECT_EQ(sw["properties"]["vl_buffer_bytes"]["multipleOf"].as<int>(), 64);
  EXPECT_EQ(sw["properties"]["sl2vl"]["minItems"].as<int>(), 16);
  const YAML::Node flow = s["properties"]["flows"]["items"];
  EXPECT_EQ(flow["required"][0].as<std::string>(), "src");
  EXPECT_EQ(flow["properties"]["load"]["exclusiveMinimum"].as<double>(), 0.0);
  EXPECT_EQ(s["required"][0].as<std::string>(), "topology");
}

TEST(ParamsReference, HasOneTablePerSectionWithUnitsDefaultsAndRules) {
  const std::string md = parameter_reference_markdown();
  for (const char* heading : {"## Top level", "## `topology`", "## `topology.link`", "## `switch`",
                              "## `switch.vlarb`", "## `switch.vlarb.high[]`", "## `endpoint`", "## `flows[]`",
                              "## `traffic`", "## `outputs`", "## `outputs.pcaps[]`"})
    EXPECT_NE(md.find(std::string(heading) + "\n"), std::string::npos) << heading;
  EXPECT_NE(md.find("| `vl_buffer_bytes` | integer | bytes | `8448` | 64..1073741824, multiple of 64 |"),
            std::string::npos);
  // Shared groups are documented once and linked.
  EXPECT_EQ(md.find("## `endpoint.vlarb`"), std::string::npos);
  EXPECT_NE(md.find("object ([`switch.vlarb`](#switchvlarb))"), std::string::npos);
  EXPECT_NE(md.find("- Every vlarb entry and every sl2vl value names a data VL below data_vls."), std::string::npos);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The committed docs are what the code generates now. IBVP_UPDATE_DOCS=1 rewrites them (as
// `make schema` does through ibvp-sim) instead of comparing.
void check_generated(const std::string& relative, const std::string& generated) {
  const std::string path = testing::source_path(relative);
  if (const char* update = std::getenv("IBVP_UPDATE_DOCS"); update && std::string(update) == "1") {
    std::ofstream(path) << generated;
    return;
  }
  EXPECT_TRUE(read_file(path) == generated)
      << relative << " is stale: the parameter declarations changed. Regenerate it with `make schema` "
      << "(ibvp-sim --schema docs/scenario.schema.json --reference docs/parameters.md) and commit it.";
}

TEST(ParamsDocs, CommittedReferenceIsUpToDate) { check_generated("docs/parameters.md", parameter_reference_markdown()); }

TEST(ParamsDocs, CommittedSchemaIsUpToDate) { check_generated("docs/scenario.schema.json", scenario_json_schema()); }

}  // namespace
}  // namespace ibvp
