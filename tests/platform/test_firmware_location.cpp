// Where the default firmware image comes from (platform/driver/firmware_location.h,
// docs/firmware.md "Selecting an image"): $IBVP_FIRMWARE_DIR, then the installed package's
// directory, then the build tree; a missing default is refused naming the key and the
// rules. And which build of an image ran: its GNU build ID (summary.json).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/hca/firmware_image.h"
#include "platform/driver/firmware_location.h"
#include "platform/driver/host_node.h"
#include "platform/params/config_error.h"
#include "platform/scenario/scenario_loader.h"

using namespace ibvp;
namespace fs = std::filesystem;

namespace {

const std::string kPerftest =
    "duration: 1ms\n"
    "topology: {generator: single_switch, hosts: 2}\n"
    "endpoint_model: hca\n"
    "perftest: {test: send_lat, client: h1, server: h2, sizes: [64], iterations: 2}\n";

// A directory holding a copy of the build's default image, removed at the end.
struct ImageDir {
  fs::path path;
  explicit ImageDir(const std::string& tag = "a")
      : path(fs::temp_directory_path() / ("ibvp-fwloc-" + std::to_string(getpid()) + "-" + tag)) {
    fs::create_directories(path);
    fs::copy_file(IBVP_FW_DEFAULT_IMAGE, path / driver::kDefaultFirmwareFile);
  }
  ~ImageDir() { fs::remove_all(path); }
};

// readelf's account of the build ID, the reference the parser is held to.
std::string readelf_build_id(const std::string& path) {
  std::string out;
  if (FILE* p = popen(("readelf -n '" + path + "' 2>/dev/null").c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  const std::string tag = "Build ID: ";
  const size_t at = out.find(tag);
  if (at == std::string::npos) return "";
  const size_t end = out.find('\n', at);
  return out.substr(at + tag.size(), end - at - tag.size());
}

}  // namespace

TEST(FirmwareLocation, WithoutEnvironmentOrPackageTheBuildTreesImageIsTheDefault) {
  unsetenv("IBVP_FIRMWARE_DIR");
  driver::set_package_firmware_dir("");
  const driver::FirmwareLocation loc = driver::locate_default_firmware(IBVP_FW_DEFAULT_IMAGE);
  EXPECT_EQ(loc.path, IBVP_FW_DEFAULT_IMAGE);
  EXPECT_EQ(loc.from, "the build tree");
}

TEST(FirmwareLocation, ThePackagesDirectoryWinsOverTheBuildTreeWhenItHasTheImage) {
  ImageDir d;
  unsetenv("IBVP_FIRMWARE_DIR");
  driver::set_package_firmware_dir(d.path.string());
  EXPECT_EQ(driver::default_firmware_image(), (d.path / driver::kDefaultFirmwareFile).string());
  // A package directory without the image (a broken install) is passed over.
  driver::set_package_firmware_dir((d.path / "empty").string());
  EXPECT_EQ(driver::default_firmware_image(), IBVP_FW_DEFAULT_IMAGE);
}

TEST(FirmwareLocation, IbvpFirmwareDirWinsOverThePackageAndTheBuildTree) {
  ImageDir env("env"), package("package");
  fs::rename(env.path / driver::kDefaultFirmwareFile, env.path / "x");
  fs::create_directories(env.path / "fw");
  fs::rename(env.path / "x", env.path / "fw" / driver::kDefaultFirmwareFile);
  setenv("IBVP_FIRMWARE_DIR", (env.path / "fw").c_str(), 1);
  driver::set_package_firmware_dir(package.path.string());
  const driver::FirmwareLocation loc = driver::locate_default_firmware(IBVP_FW_DEFAULT_IMAGE);
  EXPECT_EQ(loc.path, (env.path / "fw" / driver::kDefaultFirmwareFile).string());
  EXPECT_EQ(loc.from, "IBVP_FIRMWARE_DIR");
  // The loader takes it for a scenario that names no image.
  const Scenario s = scenario_from_yaml(kPerftest, "test.yaml", {});
  EXPECT_EQ(s.hca_host.hca.firmware_image, (env.path / "fw" / driver::kDefaultFirmwareFile).string());
}

TEST(FirmwareLocation, AnImageNamedByTheScenarioWinsOverIbvpFirmwareDir) {
  ImageDir d;
  setenv("IBVP_FIRMWARE_DIR", "/nonexistent-ibvp-firmware", 1);
  const Scenario s = scenario_from_yaml(kPerftest + "hca: {firmware_image: \"" IBVP_FW_FCFS_DOORBELLS_IMAGE "\"}\n",
                                        "test.yaml", {});
  EXPECT_EQ(s.hca_host.hca.firmware_image, IBVP_FW_FCFS_DOORBELLS_IMAGE);
}

TEST(FirmwareLocation, AMissingDefaultImageIsRefusedNamingTheKeyAndWhereItWasLookedFor) {
  setenv("IBVP_FIRMWARE_DIR", "/nonexistent-ibvp-firmware", 1);
  try {
    scenario_from_yaml(kPerftest, "test.yaml", {});
    FAIL() << "a scenario without an image to load was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "hca.firmware_image");
    EXPECT_NE(e.problem().find("/nonexistent-ibvp-firmware/libibvp_fw_default.so"), std::string::npos) << e.what();
    EXPECT_NE(e.fix().find("IBVP_FIRMWARE_DIR"), std::string::npos) << e.what();
    EXPECT_NE(e.fix().find("package"), std::string::npos) << e.what();
  }
}

TEST(FirmwareBuildId, TheImagesBuildIdIsTheOneReadelfReports) {
  const std::string expected = readelf_build_id(IBVP_FW_DEFAULT_IMAGE);
  ASSERT_FALSE(expected.empty()) << "readelf -n shows no build ID for " IBVP_FW_DEFAULT_IMAGE;
  EXPECT_EQ(hca::elf_build_id(IBVP_FW_DEFAULT_IMAGE), expected);
  EXPECT_EQ(hca::FirmwareImage(IBVP_FW_DEFAULT_IMAGE).build_id(), expected);
  // Another image, another ID: the ID tells builds apart.
  EXPECT_NE(hca::elf_build_id(IBVP_FW_FCFS_DOORBELLS_IMAGE), expected);
}

TEST(FirmwareBuildId, AFileWithoutAnElfHeaderHasNoBuildId) {
  const fs::path p = fs::temp_directory_path() / ("ibvp-noelf-" + std::to_string(getpid()));
  std::ofstream(p) << "\x7f" "ELF but truncated";
  EXPECT_EQ(hca::elf_build_id(p.string()), "");
  fs::remove(p);
}
