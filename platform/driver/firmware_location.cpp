#include "platform/driver/firmware_location.h"

#include <cstdlib>
#include <filesystem>

namespace ibvp::driver {

namespace {
std::string& package_dir() {
  static std::string dir;
  return dir;
}

bool is_file(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}
}  // namespace

void set_package_firmware_dir(const std::string& dir) { package_dir() = dir; }
const std::string& package_firmware_dir() { return package_dir(); }

FirmwareLocation locate_default_firmware(const std::string& build_tree_image) {
  namespace fs = std::filesystem;
  // The variable wins even when its directory lacks the image: a user who set it means that
  // directory, and silently taking another image would run firmware they did not choose.
  if (const char* env = std::getenv("IBVP_FIRMWARE_DIR"); env != nullptr && *env != '\0')
    return {(fs::path(env) / kDefaultFirmwareFile).string(), "IBVP_FIRMWARE_DIR"};
  if (!package_dir().empty() && is_file(fs::path(package_dir()) / kDefaultFirmwareFile))
    return {(fs::path(package_dir()) / kDefaultFirmwareFile).string(), "the ibvp package"};
  if (!build_tree_image.empty()) return {build_tree_image, "the build tree"};
  return {"", "nowhere"};
}

std::string default_firmware_rules() {
  return "without hca.firmware_image the default image is $IBVP_FIRMWARE_DIR/" + std::string(kDefaultFirmwareFile) +
         ", else the installed ibvp package's firmware directory, else the build tree's firmware/ "
         "(docs/firmware.md, \"Selecting an image\")";
}

}  // namespace ibvp::driver
