#include "models/hca/firmware_image.h"

#include <dlfcn.h>
#include <elf.h>

#include <cstring>
#include <filesystem>
#include <fstream>

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
// The first bytes of an ELF file: e_ident, e_type, e_machine (ELF specification, "ELF Header").
struct ElfStart {
  unsigned char ident[EI_NIDENT];
  uint16_t type;
  uint16_t machine;
};

bool read_elf_start(const std::string& path, ElfStart& out) {
  std::ifstream f(path, std::ios::binary);
  return f.read(reinterpret_cast<char*>(&out), sizeof out) && f.gcount() == sizeof out;
}

std::string hex_start(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  unsigned char b[4] = {};
  f.read(reinterpret_cast<char*>(b), sizeof b);
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (long i = 0; i < f.gcount(); ++i) s += std::string(i ? " " : "") + digits[b[i] >> 4] + digits[b[i] & 15];
  return s.empty() ? "nothing (an empty file)" : s;
}

// dlopen of a file that is no shared object for this machine fails with a loader message
// that names neither the key nor the fix, and a file of another class may even load some
// other library by its name: refuse it first, from its header. The running program's own
// header says which class, byte order and machine an image must have.
void check_elf(const std::string& path) {
  ElfStart image{}, self{};
  const std::string fix = "; an image is a shared library (.so) built from firmware/ against firmware/hal/ibvp_hal.h";
  if (!read_elf_start(path, image) || std::memcmp(image.ident, ELFMAG, SELFMAG) != 0)
    throw FirmwareError("firmware image '" + path + "' is not an ELF file (it starts with " + hex_start(path) +
                        ", not 7f 45 4c 46)" + fix);
  if (!read_elf_start("/proc/self/exe", self)) return;  // no reference to compare with: dlopen decides
  if (image.ident[EI_CLASS] != self.ident[EI_CLASS] || image.ident[EI_DATA] != self.ident[EI_DATA] ||
      image.machine != self.machine)
    throw FirmwareError("firmware image '" + path + "' is an ELF file for another machine (class " +
                        std::to_string(image.ident[EI_CLASS]) + ", byte order " + std::to_string(image.ident[EI_DATA]) +
                        ", machine " + std::to_string(image.machine) + "; this platform runs class " +
                        std::to_string(self.ident[EI_CLASS]) + ", byte order " + std::to_string(self.ident[EI_DATA]) +
                        ", machine " + std::to_string(self.machine) + ")" + fix);
  if (image.type != ET_DYN)
    throw FirmwareError("firmware image '" + path + "' is an ELF " +
                        (image.type == ET_EXEC ? std::string("executable") : image.type == ET_REL ? "object file" : "file") +
                        ", not a shared object" + fix);
}
}  // namespace

FirmwareImage::FirmwareImage(const std::string& path) : path_(path) {
  if (path.empty())
    throw FirmwareError("no firmware image given: set the HCA's firmware_image to the path of an image (the "
                        "default image is built as firmware/libibvp_fw_default.so)");
  check_elf(path);
  // RTLD_LOCAL: images of different HCAs never resolve each other's symbols.
  // A name without a slash would make dlopen search the library path, not the directory it
  // was given relative to: hand it the absolute path.
  handle_ = dlopen(std::filesystem::absolute(path).c_str(), RTLD_NOW | RTLD_LOCAL);
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
