// A faulty firmware image ends the run with the platform's own report, not a bare signal or
// a hang (models/hca/firmware_guard.h): exit status 4 and one message naming the image, the
// event it was handling and hca.firmware_image. firmware/examples/faulty.c faults at its
// first event (a command: the driver creating its first CQ) in the way its argument says.
// Each case runs the scenario in a child process (a death test), as ibvp-sim and the Python
// worker run it; one more runs the ibvp-sim binary itself.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <systemc>

#include "platform/builder/fabric.h"
#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;

namespace {

std::string yaml_for(const std::string& fault, const std::string& watchdog = "10s", const std::string& budget = "100000000") {
  return "duration: 1ms\n"
         "topology: {generator: single_switch, hosts: 2}\n"
         "endpoint_model: hca\n"
         "hca: {firmware_image: \"" IBVP_FW_FAULTY_IMAGE "\", firmware_args: " + fault +
         ", firmware_watchdog: " + watchdog + ", firmware_cycle_budget: " + budget +
         "}\n"
         "perftest: {test: send_lat, client: h1, server: h2, sizes: [64], iterations: 2, qp_type: UD}\n";
}

void run(const std::string& yaml) {
  const Scenario s = scenario_from_yaml(yaml, "test.yaml");
  Fabric f(s);
  sc_core::sc_start(s.duration);
}

// The message: the fault, the image's path, the event, the image's last log line (faulty.c
// logs one before faulting; event 2 is IBVP_EV_COMMAND) and the key to change.
std::string report(const std::string& what) {
  return "firmware fault: " + what + ".*" + IBVP_FW_FAULTY_IMAGE +
         ".*handling event command at simulated time [0-9]+ ps, its last log line .faulting in event 2.\\).*"
         "hca.firmware_image";
}

}  // namespace

TEST(FirmwareFaults, NullDereferenceInTheImageEndsWithStatus4NamingImageAndEvent) {
  EXPECT_EXIT(run(yaml_for("null_deref")), ::testing::ExitedWithCode(4), report("SIGSEGV"));
}

TEST(FirmwareFaults, AbortInTheImageEndsWithStatus4NamingImageAndEvent) {
  EXPECT_EXIT(run(yaml_for("abort")), ::testing::ExitedWithCode(4), report("SIGABRT"));
}

TEST(FirmwareFaults, EndlessLoopInTheImageIsEndedByTheWatchdogWithStatus4) {
  EXPECT_EXIT(run(yaml_for("endless_loop", "200ms")), ::testing::ExitedWithCode(4),
              "firmware fault: firmware image .*" IBVP_FW_FAULTY_IMAGE
              ".*handling event command.*did not return within 200 ms.*hca.firmware_watchdog");
}

// A handler that loops through HAL calls advances simulated time, so the wall-clock watchdog
// might never see it hang (the fabric simulates on while the core waits) and the run would
// end at its duration with the HCA silently stuck. The cycle budget stops it at the first
// charge past the budget: 100 (event_cycles) + 10 (its log line's HAL call), then per
// consume_cycles(1000) call 10 (the HAL call) and 1000; after 98 calls that is 99,090, and
// the 99th call's charges reach 99,100 and then 100,100 > 100,000. The backtrace shows the
// image's looping frame.
TEST(FirmwareFaults, HandlerLoopingThroughHalCallsIsStoppedByTheCycleBudgetWithStatus4) {
  EXPECT_EXIT(run(yaml_for("hal_loop", "10s", "100000")), ::testing::ExitedWithCode(4),
              "libibvp_fw_faulty.so.*firmware fault: firmware image .*" IBVP_FW_FAULTY_IMAGE
              ".*handling event command at simulated time [0-9]+ ps.* charged 100100 core cycles without "
              "returning, over its budget of 100000 .hca.firmware_cycle_budget.");
}

// A fault outside firmware code is not the firmware's: it still reaches the handler that was
// there before (the default action, a SIGSEGV death; under AddressSanitizer its report and
// exit status 1), not to the firmware report and its status 4.
TEST(FirmwareFaults, FaultOutsideFirmwareCodeIsNotReportedAsTheFirmwares) {
  EXPECT_EXIT(
      {
        const Scenario s = scenario_from_yaml(yaml_for("null_deref"), "test.yaml");
        Fabric f(s);  // the guard is installed, no firmware call is running
        volatile int* volatile nowhere = nullptr;
        *nowhere = 1;
      },
      [](int status) {
        return (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) || (WIFEXITED(status) && WEXITSTATUS(status) != 4);
      },
      "");
}

TEST(FirmwareFaults, IbvpSimExitsWithStatus4AndTheReportOnStderr) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ibvp-fwfault-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "fault.yaml") << yaml_for("abort");
  const std::string cmd = std::string(IBVP_BINARY_DIR) + "/ibvp-sim " + (dir / "fault.yaml").string() + " --out " +
                          (dir / "out").string() + " --quiet 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string output;
  std::array<char, 4096> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) output.append(buf.data(), n);
  const int status = pclose(p);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 4) << output;
  EXPECT_NE(output.find("SIGABRT"), std::string::npos) << output;
  EXPECT_NE(output.find("hca.firmware_image"), std::string::npos) << output;
  EXPECT_NE(output.find("backtrace"), std::string::npos) << output;
}

// docs/firmware.md's recipe for debugging an image under gdb: with the watchdog off, gdb
// sees the image's SIGSEGV before the platform's handler does and stops in the image's
// frame, below the HCA's core thread.
TEST(FirmwareFaults, UnderGdbTheRunStopsAtTheFaultInTheImagesFrame) {
  if (std::system("gdb --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no gdb on this machine";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ibvp-fwgdb-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "fault.yaml") << yaml_for("null_deref");
  const std::string cmd = "gdb -q -batch -nx -ex run -ex bt --args " + std::string(IBVP_BINARY_DIR) + "/ibvp-sim " +
                          (dir / "fault.yaml").string() + " --set hca.firmware_watchdog=0 --out " +
                          (dir / "out").string() + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string output;
  std::array<char, 4096> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) output.append(buf.data(), n);
  pclose(p);
  std::filesystem::remove_all(dir);
  const size_t stop = output.find("Program received signal SIGSEGV");
  ASSERT_NE(stop, std::string::npos) << output;
  const size_t frame0 = output.find("#0 ", stop);
  ASSERT_NE(frame0, std::string::npos) << output;
  const std::string first_frame = output.substr(frame0, output.find('\n', frame0) - frame0);
  EXPECT_NE(first_frame.find("ibvp_fw_handle"), std::string::npos) << output;
  // The frame is in the image: gdb names its library, or with debug information (the
  // sanitizer build's -g1) its source file.
  EXPECT_TRUE(first_frame.find("libibvp_fw_faulty.so") != std::string::npos ||
              first_frame.find("firmware/examples/faulty.c") != std::string::npos)
      << output;
  EXPECT_NE(output.find("ibvp::hca::Hca::core_thread", frame0), std::string::npos) << output;
  // gdb stopped the fault before the platform's handler could end the run with its report.
  EXPECT_EQ(output.find("ibvp: firmware fault"), std::string::npos) << output;
}

TEST(FirmwareArgs, ArgumentsTheImageRefusesAreABadInputAtHcaFirmwareArgs) {
  // Only the image can judge its argument string (ibvp_fw_init returns NULL): the platform
  // asks it while building the fabric and reports the refusal as the scenario's error, with
  // the image's own reason, before anything runs.
  const Scenario s = scenario_from_yaml(
      "duration: 1ms\n"
      "topology: {generator: single_switch, hosts: 2}\n"
      "endpoint_model: hca\n"
      "hca: {firmware_args: \"not an argument\"}\n"
      "perftest: {test: send_lat, client: h1, server: h2, sizes: [64], iterations: 2, qp_type: UD}\n",
      "test.yaml");
  try {
    Fabric f(s);
    FAIL() << "the default image took 'not an argument'";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "hca.firmware_args");
    EXPECT_NE(e.problem().find("is not key=value"), std::string::npos) << e.what();
    EXPECT_EQ(e.file(), "test.yaml");
  }
}
