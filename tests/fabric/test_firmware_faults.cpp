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

std::string yaml_for(const std::string& fault, const std::string& watchdog = "10s") {
  return "duration: 1ms\n"
         "topology: {generator: single_switch, hosts: 2}\n"
         "endpoint_model: hca\n"
         "hca: {firmware_image: \"" IBVP_FW_FAULTY_IMAGE "\", firmware_args: " + fault +
         ", firmware_watchdog: " + watchdog +
         "}\n"
         "perftest: {test: send_lat, client: h1, server: h2, sizes: [64], iterations: 2, qp_type: UD}\n";
}

void run(const std::string& yaml) {
  const Scenario s = scenario_from_yaml(yaml, "test.yaml");
  Fabric f(s);
  sc_core::sc_start(s.duration);
}

// The message: the fault, the image's path, the event and the key to change.
std::string report(const std::string& what) {
  return "firmware fault: " + what + ".*" + IBVP_FW_FAULTY_IMAGE + ".*handling event command.*hca.firmware_image";
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
