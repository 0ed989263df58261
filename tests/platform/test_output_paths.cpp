// A run writes only inside its output directory and reads only regular files of bounded
// size (platform/scenario/output_paths.h, platform/builder/output_dir.h,
// platform/params/input_file.h). Issue 18: outputs.timeline once overwrote /etc/passwd, a
// scenario name made ibvp write elsewhere, /dev/zero as a trace was read without end.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>

#include "platform/builder/output_dir.h"
#include "platform/builder/runner.h"
#include "platform/params/config_error.h"
#include "platform/params/input_file.h"
#include "platform/scenario/output_paths.h"
#include "platform/scenario/scenario_loader.h"

namespace ibvp {
namespace {

namespace fs = std::filesystem;

const std::string kBase =
    "duration: 20us\n"
    "topology: {generator: single_switch, hosts: 2}\n"
    "flows: [{name: f1, src: h1, dst: h2}]\n";

// A fresh directory of its own under the test's temporary directory.
fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("ibvp-paths-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

std::string read(const fs::path& p) {
  std::ifstream f(p);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

ConfigError error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted";
  return ConfigError("", "", 0, "", "");
}

ConfigError load_error(const std::string& yaml, const std::string& source = "s.yaml") {
  return error_of([&] { scenario_from_yaml(yaml, source); });
}

// ---- names and relative output paths (syntax, at load) ---------------------------------------

TEST(OutputPaths, ANameIsOnePathComponent) {
  for (const char* ok : {"fig2a", "seed 004, Fig. 2(a)", "a.b", "..x", "héllo"}) EXPECT_EQ(name_problem(ok), "") << ok;
  for (const std::string& bad : std::vector<std::string>{"", ".", "..", "/etc", "a/b", "a\\b", std::string("a\0b", 3),
                                                         std::string(kMaxNameBytes + 1, 'x')})
    EXPECT_NE(name_problem(bad), "") << bad;
}

TEST(OutputPaths, ARelativeOutputPathStaysInsideTheDirectory) {
  for (const char* ok : {"t.json", "trace/t.json", "a/b/c.pcap", "..t.json"}) EXPECT_EQ(output_path_problem(ok), "") << ok;
  for (const char* bad : {"", "/etc/passwd", "../x", "a/../../x", "a/..", "./x", "a//b", "a/", "."})
    EXPECT_NE(output_path_problem(bad), "") << bad;
}

TEST(ScenarioOutputPaths, AnAbsoluteTimelineIsRefusedAtLoadNamingTheKey) {
  const ConfigError e = load_error(kBase + "outputs: {timeline: /tmp/ibvp-passwd}\n");
  EXPECT_EQ(e.file(), "s.yaml");
  EXPECT_EQ(e.key(), "outputs.timeline");
  EXPECT_EQ(e.line(), 4);
  EXPECT_NE(e.problem().find("absolute"), std::string::npos) << e.what();
  EXPECT_FALSE(e.fix().empty());
}

TEST(ScenarioOutputPaths, ATimelineClimbingOutWithDotDotIsRefusedAtLoad) {
  const ConfigError e = load_error(kBase + "outputs: {timeline: ../x.json}\n");
  EXPECT_EQ(e.key(), "outputs.timeline");
  EXPECT_NE(e.problem().find(".."), std::string::npos) << e.what();
}

TEST(ScenarioOutputPaths, ACaptureFileOutsideIsRefusedAtLoadNamingItsItem) {
  const ConfigError e = load_error(kBase +
                                   "outputs:\n  pcaps:\n    - {node: h1, port: 1}\n"
                                   "    - {node: h2, port: 1, file: ../../h2.pcap}\n");
  EXPECT_EQ(e.key(), "outputs.pcaps[1].file");
  EXPECT_EQ(e.line(), 7);
}

TEST(ScenarioOutputPaths, ADefaultCaptureNameOfANodeWithASlashStaysOneFile) {
  const Scenario s = scenario_from_yaml(
      "duration: 20us\n"
      "topology:\n  inline:\n    switches: [{name: \"SX6036/U1\", ports: 2}]\n    hosts: [h1, h2]\n"
      "    links: [[h1, \"SX6036/U1/1\"], [h2, \"SX6036/U1/2\"]]\n"
      "flows: [{name: f1, src: h1, dst: h2}]\n"
      "outputs: {pcaps: [{node: \"SX6036/U1\", port: 1}]}\n",
      "s.yaml");
  EXPECT_EQ(s.outputs.pcaps.at(0).file, "SX6036_U1-1.pcap");
}

TEST(ScenarioName, AnAbsoluteOrSlashedNameIsRefusedAtLoadAndByScenarioName) {
  for (const char* name : {"/tmp/ibvp-elsewhere", "runs/a", ".."}) {
    const std::string yaml = std::string("name: \"") + name + "\"\n" + kBase;
    const ConfigError at_load = load_error(yaml);
    EXPECT_EQ(at_load.key(), "name") << name;
    EXPECT_EQ(at_load.line(), 1);
    EXPECT_NE(at_load.fix().find("name:"), std::string::npos);
    // What a front end asks before it makes out/<name>: the same error, word for word.
    const ConfigError early = error_of([&] { scenario_name(yaml, "s.yaml"); });
    EXPECT_STREQ(early.what(), at_load.what());
  }
}

TEST(ScenarioName, TheNameComesFromTheFileWhenNotWritten) {
  EXPECT_EQ(scenario_name(kBase, "dir/fig2a.yaml"), "fig2a");
  EXPECT_EQ(scenario_name("name: mine\n" + kBase, "dir/fig2a.yaml"), "mine");
}

// ---- output files on disk (before the run) ---------------------------------------------------

TEST(ScenarioOutputPaths, ALinkInTheOutputDirectoryIsRefusedBeforeTheRunAndItsTargetIsUntouched) {
  const fs::path dir = fresh_dir("link");
  const fs::path out = dir / "out", outside = dir / "passwd";
  fs::create_directories(out);
  write(outside, "root:x:0:0\n");
  fs::create_symlink(outside, out / "cap.pcap");
  const Scenario s = scenario_from_yaml(kBase + "outputs: {pcaps: [{node: h1, port: 1, file: cap.pcap}]}\n", "s.yaml");
  RunOptions o;
  o.out_dir = out.string();
  const ConfigError e = error_of([&] { run_scenario(s, o); });
  EXPECT_EQ(e.key(), "outputs.pcaps[0].file");
  EXPECT_NE(e.problem().find("symbolic link"), std::string::npos) << e.what();
  EXPECT_EQ(read(outside), "root:x:0:0\n");
  EXPECT_FALSE(fs::exists(out / "summary.json"));  // refused before the simulation
  fs::remove_all(dir);
}

TEST(ScenarioOutputPaths, ALinkedDirectoryOnTheWayIsRefused) {
  const fs::path dir = fresh_dir("linkdir");
  const fs::path out = dir / "out", elsewhere = dir / "elsewhere";
  fs::create_directories(out);
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(elsewhere, out / "trace");
  Scenario s = scenario_from_yaml(kBase, "s.yaml");
  s.outputs.timeline = "trace/t.json";
  const ConfigError e = error_of([&] { prepare_output_files(s, out.string()); });
  EXPECT_EQ(e.key(), "outputs.timeline");
  EXPECT_TRUE(fs::is_empty(elsewhere));
  fs::remove_all(dir);
}

TEST(ScenarioOutputPaths, ADirectoryWhereTheFileGoesIsFoundBeforeTheRun) {
  const fs::path out = fresh_dir("dirfile");
  fs::create_directories(out / "t.json");
  Scenario s = scenario_from_yaml(kBase, "s.yaml");
  s.outputs.timeline = "t.json";
  const ConfigError e = error_of([&] { prepare_output_files(s, out.string()); });
  EXPECT_EQ(e.key(), "outputs.timeline");
  EXPECT_NE(e.problem().find("directory"), std::string::npos) << e.what();
  fs::remove_all(out);
}

TEST(ScenarioOutputPaths, TheDirectoriesOfNestedOutputFilesAreMade) {
  const fs::path out = fresh_dir("nested");
  Scenario s = scenario_from_yaml(kBase + "outputs: {pcaps: [{node: h1, port: 1, file: caps/h1.pcap}]}\n", "s.yaml");
  s.outputs.timeline = "trace/t.json";
  prepare_output_files(s, out.string());
  EXPECT_TRUE(fs::is_directory(out / "caps"));
  EXPECT_TRUE(fs::is_directory(out / "trace"));
  fs::remove_all(out);
}

// ---- input files ----------------------------------------------------------------------------

TEST(InputFiles, DevZeroAsATraceIsRefusedWithoutReadingIt) {
  const ConfigError e = load_error(kBase + "trace: {file: /dev/zero}\n");
  EXPECT_EQ(e.key(), "trace.file");
  EXPECT_NE(e.problem().find("not a regular file"), std::string::npos) << e.what();
}

TEST(InputFiles, AFifoIsRefusedWithoutWaitingForAWriter) {
  const fs::path dir = fresh_dir("fifo");
  ASSERT_EQ(::mkfifo((dir / "t.csv").c_str(), 0600), 0);
  const ConfigError e = load_error(kBase + "trace: {file: " + (dir / "t.csv").string() + "}\n");
  EXPECT_EQ(e.key(), "trace.file");
  EXPECT_NE(e.problem().find("FIFO"), std::string::npos) << e.what();
  fs::remove_all(dir);
}

TEST(InputFiles, ADirectoryAsTheQosOptionsFileIsRefused) {
  const fs::path dir = fresh_dir("qosdir");
  const ConfigError e = load_error(kBase + "qos: {options_file: " + dir.string() + "}\n");
  EXPECT_EQ(e.key(), "qos.options_file");
  EXPECT_NE(e.problem().find("directory"), std::string::npos) << e.what();
  fs::remove_all(dir);
}

TEST(InputFiles, AnOptionsFileWithoutQosOptionsIsRefusedNotTakenAsNoOptions) {
  const fs::path dir = fresh_dir("qosnone");
  write(dir / "opensm.conf", "routing_engine minhop\n# qos_sl2vl 0,1\n");
  const ConfigError e = load_error(kBase + "qos: {options_file: " + (dir / "opensm.conf").string() + "}\n");
  EXPECT_EQ(e.key(), "qos.options_file");
  EXPECT_NE(e.problem().find("no qos_"), std::string::npos) << e.what();
  fs::remove_all(dir);
}

TEST(InputFiles, ADirectoryAsTheTopologyFileIsRefused) {
  const fs::path dir = fresh_dir("topodir");
  const ConfigError e = load_error("duration: 1ms\ntopology: {file: " + dir.string() + "}\nflows: []\n");
  EXPECT_EQ(e.key(), "topology.file");
  EXPECT_NE(e.problem().find("directory"), std::string::npos) << e.what();
  fs::remove_all(dir);
}

TEST(InputFiles, AFileAboveTheLimitIsRefusedNamingTheLimit) {
  const fs::path dir = fresh_dir("big");
  const fs::path big = dir / "t.csv";
  write(big, "time_s,src,dst,payload_bytes,sl\n");
  fs::resize_file(big, kMaxInputFileBytes + 1);  // sparse: no disk space used
  const ConfigError e = load_error(kBase + "trace: {file: " + big.string() + "}\n");
  EXPECT_EQ(e.key(), "trace.file");
  EXPECT_NE(e.problem().find("256 MiB"), std::string::npos) << e.what();
  fs::remove_all(dir);
}

TEST(InputFiles, AnEmptyTraceIsRefused) {
  const fs::path dir = fresh_dir("empty");
  write(dir / "t.csv", "");
  const ConfigError e = load_error(kBase + "trace: {file: " + (dir / "t.csv").string() + "}\n");
  EXPECT_EQ(e.key(), "trace.file");
  EXPECT_NE(e.problem().find("empty"), std::string::npos) << e.what();
  fs::remove_all(dir);
}

TEST(InputFiles, AMissingFileNamesThePathAndTheKey) {
  const ConfigError e = load_error(kBase + "trace: {file: /nonexistent/t.csv}\n");
  EXPECT_EQ(e.key(), "trace.file");
  EXPECT_NE(e.problem().find("/nonexistent/t.csv"), std::string::npos) << e.what();
}

// ---- the output directory belongs to one run ---------------------------------------------------

TEST(OutputDir, ANewDirectoryIsMadeAndMarked) {
  const fs::path out = fresh_dir("new") / "a" / "b";
  claim_output_dir(out.string(), OutputDirKind::run);
  EXPECT_TRUE(fs::is_regular_file(out / kRunMarker));
}

TEST(OutputDir, ANonEmptyUnmarkedDirectoryIsRefusedAndUntouched) {
  const fs::path out = fresh_dir("unmarked");
  write(out / "thesis.tex", "years of work\n");
  const ConfigError e = error_of([&] { claim_output_dir(out.string(), OutputDirKind::run); });
  EXPECT_EQ(e.key(), "--out");
  EXPECT_NE(e.problem().find("thesis.tex"), std::string::npos) << e.what();
  EXPECT_EQ(read(out / "thesis.tex"), "years of work\n");
  EXPECT_FALSE(fs::exists(out / kRunMarker));
  fs::remove_all(out);
}

TEST(OutputDir, AnEarlierRunsDirectoryIsEmptiedWithoutFollowingLinks) {
  const fs::path dir = fresh_dir("marked");
  const fs::path out = dir / "out", keep = dir / "keep";
  claim_output_dir(out.string(), OutputDirKind::run);
  write(out / "summary.json", "{}");
  fs::create_directories(out / "caps");
  write(out / "caps" / "h1.pcap", "x");
  fs::create_directories(keep);
  write(keep / "data", "mine");
  fs::create_directory_symlink(keep, out / "link");
  claim_output_dir(out.string(), OutputDirKind::run);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(out)) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{kRunMarker});
  EXPECT_EQ(read(keep / "data"), "mine");
  fs::remove_all(dir);
}

TEST(OutputDir, ASweepKeepsItsOwnDirectoryButARunClearsIt) {
  const fs::path out = fresh_dir("sweep");
  claim_output_dir(out.string(), OutputDirKind::sweep);
  write(out / "sweep.csv", "a\n");
  claim_output_dir(out.string(), OutputDirKind::sweep);
  EXPECT_TRUE(fs::exists(out / "sweep.csv"));
  claim_output_dir(out.string(), OutputDirKind::run);
  EXPECT_FALSE(fs::exists(out / "sweep.csv"));
  EXPECT_FALSE(fs::exists(out / kSweepMarker));
  EXPECT_TRUE(fs::exists(out / kRunMarker));
  fs::remove_all(out);
}

TEST(OutputDir, AScenarioInsideAnEarlierRunsDirectoryIsRefusedNotDeleted) {
  const fs::path out = fresh_dir("input");
  claim_output_dir(out.string(), OutputDirKind::run);
  write(out / "scenario.yaml", "name: x\n");  // the document as run, which a user reruns
  const ConfigError e = error_of(
      [&] { claim_output_dir(out.string(), OutputDirKind::run, {(out / "scenario.yaml").string()}); });
  EXPECT_EQ(e.key(), "--out");
  EXPECT_EQ(read(out / "scenario.yaml"), "name: x\n");
  fs::remove_all(out);
}

TEST(OutputDir, AFileIsNotAnOutputDirectory) {
  const fs::path dir = fresh_dir("file");
  write(dir / "f", "x");
  const ConfigError e = error_of([&] { claim_output_dir((dir / "f").string(), OutputDirKind::run); });
  EXPECT_EQ(e.key(), "--out");
  EXPECT_EQ(read(dir / "f"), "x");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ibvp
