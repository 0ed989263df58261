#pragma once
// A firmware image: a shared library built against firmware/hal/ibvp_hal.h, loaded with
// dlopen. The platform refuses an image whose HAL version differs from its own, or that
// lacks one of the entry points, with a message naming the path (and both versions).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "firmware/hal/ibvp_hal.h"

namespace ibvp::hca {

class FirmwareError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ibvp_fw_init returned NULL: the image loaded but refused its arguments (or its start).
// Its own log line says why; the platform reports it at hca.firmware_args.
class FirmwareInitRefused : public FirmwareError {
 public:
  using FirmwareError::FirmwareError;
};

class FirmwareImage {
 public:
  // Loads `path` and checks it. Throws FirmwareError.
  explicit FirmwareImage(const std::string& path);
  ~FirmwareImage();
  FirmwareImage(const FirmwareImage&) = delete;
  FirmwareImage& operator=(const FirmwareImage&) = delete;

  const std::string& path() const { return path_; }
  uint32_t hal_version() const { return hal_version_; }
  // The image's GNU build ID (the linker's hash of its contents, .note.gnu.build-id) in hex,
  // "" when it has none: which build of an image ran, whatever its path (summary.json).
  const std::string& build_id() const { return build_id_; }

  ibvp_fw_init_fn init = nullptr;
  ibvp_fw_handle_fn handle = nullptr;
  ibvp_fw_fini_fn fini = nullptr;

 private:
  std::string path_;
  void* handle_ = nullptr;
  uint32_t hal_version_ = 0;
  std::string build_id_;
};

// The GNU build ID of the ELF file at `path`, in hex; "" if it has none or is no ELF file.
std::string elf_build_id(const std::string& path);

}  // namespace ibvp::hca
