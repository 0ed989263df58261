#pragma once
// Where the default firmware image comes from when a scenario names none
// (docs/firmware.md, "Selecting an image"). In this order:
//   1. hca.firmware_image in the scenario (not here: the loader takes it as given);
//   2. $IBVP_FIRMWARE_DIR/libibvp_fw_default.so, when that variable is set and not empty;
//   3. the installed Python package's own firmware directory (ibvp/firmware next to
//      ibvp._core, set by the extension when it is imported);
//   4. the build tree that compiled this program (build/firmware).
// A pip-installed package thus never depends on the directory it was built in, and
// ibvp-sim and `ibvp run` load the same file when `make` installs the build's images into
// the package (Makefile, target pkg).
#include <string>

namespace ibvp::driver {

// The default image's file name in every firmware directory.
inline constexpr const char* kDefaultFirmwareFile = "libibvp_fw_default.so";

struct FirmwareLocation {
  std::string path;  // the image to load ("" when no place has one)
  std::string from;  // which rule chose it, for messages: "IBVP_FIRMWARE_DIR", ...
};

// build_tree_image: the default image of the build that compiled the caller ("" if none).
FirmwareLocation locate_default_firmware(const std::string& build_tree_image);

// The extension module's firmware directory (rule 3); "" turns the rule off.
void set_package_firmware_dir(const std::string& dir);
const std::string& package_firmware_dir();

// The order above in one sentence, for error messages.
std::string default_firmware_rules();

}  // namespace ibvp::driver
