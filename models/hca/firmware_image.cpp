#include "models/hca/firmware_image.h"

#include <dlfcn.h>

namespace ibvp::hca {

namespace {
template <class Fn>
Fn symbol(void* handle, const std::string& path, const char* name) {
  dlerror();
  void* s = dlsym(handle, name);
  if (s == nullptr)
    throw FirmwareError("firmware image '" + path + "' does not export " + name +
                        " (an image exports ibvp_fw_hal_version, ibvp_fw_init, ibvp_fw_handle and ibvp_fw_fini "
                        "with C linkage; see firmware/hal/ibvp_hal.h)");
  return reinterpret_cast<Fn>(s);
}
}  // namespace

FirmwareImage::FirmwareImage(const std::string& path) : path_(path) {
  if (path.empty())
    throw FirmwareError("no firmware image given: set the HCA's firmware_image to the path of an image (the "
                        "default image is built as firmware/libibvp_fw_default.so)");
  // RTLD_LOCAL: images of different HCAs never resolve each other's symbols.
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = dlerror();
    throw FirmwareError("cannot load firmware image '" + path + "': " + (why ? why : "unknown error"));
  }
  try {
    const auto version = symbol<ibvp_fw_hal_version_fn>(handle_, path_, "ibvp_fw_hal_version");
    hal_version_ = version();
    if (hal_version_ != IBVP_HAL_VERSION)
      throw FirmwareError("firmware image '" + path_ + "' was built for HAL version " +
                          std::to_string(hal_version_) + ", but this platform provides HAL version " +
                          std::to_string(IBVP_HAL_VERSION) +
                          "; rebuild the image against firmware/hal/ibvp_hal.h of this platform");
    init = symbol<ibvp_fw_init_fn>(handle_, path_, "ibvp_fw_init");
    handle = symbol<ibvp_fw_handle_fn>(handle_, path_, "ibvp_fw_handle");
    fini = symbol<ibvp_fw_fini_fn>(handle_, path_, "ibvp_fw_fini");
  } catch (...) {
    dlclose(handle_);
    handle_ = nullptr;
    throw;
  }
}

FirmwareImage::~FirmwareImage() {
  if (handle_ != nullptr) dlclose(handle_);
}

}  // namespace ibvp::hca
