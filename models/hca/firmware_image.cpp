#include "models/hca/firmware_image.h"

#include <dlfcn.h>
#include <elf.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

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
// The notes of one ELF class: walk the section headers for SHT_NOTE sections and return the
// descriptor of the note named "GNU" of type NT_GNU_BUILD_ID (ELF specification, "Note
// Section"; the GNU linker's --build-id).
template <class Ehdr, class Shdr, class Nhdr>
std::string build_id_of(const std::string& bytes) {
  auto fits = [&](uint64_t off, uint64_t len) { return off <= bytes.size() && len <= bytes.size() - off; };
  if (!fits(0, sizeof(Ehdr))) return "";
  Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  for (uint64_t i = 0; i < eh.e_shnum; ++i) {
    const uint64_t at = eh.e_shoff + i * uint64_t(eh.e_shentsize);
    if (eh.e_shentsize < sizeof(Shdr) || !fits(at, sizeof(Shdr))) return "";
    Shdr sh;
    std::memcpy(&sh, bytes.data() + at, sizeof sh);
    if (sh.sh_type != SHT_NOTE || !fits(sh.sh_offset, sh.sh_size)) continue;
    // Notes: header, name and descriptor, each padded to 4 bytes.
    for (uint64_t off = sh.sh_offset; off + sizeof(Nhdr) <= sh.sh_offset + sh.sh_size;) {
      Nhdr nh;
      std::memcpy(&nh, bytes.data() + off, sizeof nh);
      const uint64_t name_at = off + sizeof nh, desc_at = name_at + ((nh.n_namesz + 3) & ~3u);
      const uint64_t next = desc_at + ((nh.n_descsz + 3) & ~3u);
      if (!fits(desc_at, nh.n_descsz) || next > sh.sh_offset + sh.sh_size) break;
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(bytes.data() + name_at, "GNU", 4) == 0) {
        static const char* digits = "0123456789abcdef";
        std::string hex;
        for (uint64_t k = 0; k < nh.n_descsz; ++k) {
          const auto b = static_cast<unsigned char>(bytes[desc_at + k]);
          hex += digits[b >> 4];
          hex += digits[b & 15];
        }
        return hex;
      }
      off = next;
    }
  }
  return "";
}
}  // namespace

std::string elf_build_id(const std::string& path) {
  // One read of the whole file: a character-by-character stream iterator cost every HCA
  // about 2.3 million instructions at elaboration (issue 15 part 2).
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  std::string bytes;
  if (f) {
    const std::streamoff size = f.tellg();
    if (size > 0) {
      bytes.resize(static_cast<size_t>(size));
      f.seekg(0);
      if (!f.read(bytes.data(), size)) bytes.clear();
    }
  }
  if (bytes.size() < EI_NIDENT || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) return "";
  if (bytes[EI_CLASS] == ELFCLASS64) return build_id_of<Elf64_Ehdr, Elf64_Shdr, Elf64_Nhdr>(bytes);
  if (bytes[EI_CLASS] == ELFCLASS32) return build_id_of<Elf32_Ehdr, Elf32_Shdr, Elf32_Nhdr>(bytes);
  return "";
}

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
    build_id_ = elf_build_id(path_);
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
