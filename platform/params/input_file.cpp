#include "platform/params/input_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform/params/config_error.h"

namespace ibvp {

namespace {

std::string kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what, const std::string& path_fix,
                            bool allow_empty) {
  auto fail = [&](const std::string& problem, const std::string& fix) -> void {
    throw ConfigError(path, "", 0, problem, fix);
  };
  if (path.empty()) fail("the " + what + " is named by an empty path", path_fix);
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked on the open
  // descriptor, so a file swapped after the check is not read either.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) fail("no " + what + " at " + path, path_fix);
    fail("cannot open the " + what + " " + path + ": " + std::strerror(err),
         "check that the file is readable, or " + path_fix);
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail("cannot examine the " + what + " " + path + ": " + std::strerror(errno), path_fix);
  if (!S_ISREG(st.st_mode))
    fail(path + " is " + kind_of(st.st_mode) + ", not a regular file; a " + what + " is read from a file",
         "name the " + what + " itself");
  if (static_cast<uint64_t>(st.st_size) > kMaxInputFileBytes)
    fail(path + " holds " + std::to_string(st.st_size) + " bytes, more than the " + mib(kMaxInputFileBytes) +
             " an input file may hold",
         "check that this is the intended " + what + "; ibvp reads input files of at most " +
             mib(kMaxInputFileBytes));
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("reading the " + what + " " + path + " failed: " + std::strerror(errno), "check that the file is readable");
    }
    if (n == 0) break;
    // A file that grows while it is read is still bounded.
    if (text.size() + static_cast<size_t>(n) > kMaxInputFileBytes)
      fail(path + " grew past the " + mib(kMaxInputFileBytes) + " an input file may hold while it was read",
           "give a " + what + " that is not being written");
    text.append(buf, static_cast<size_t>(n));
  }
  if (text.empty() && !allow_empty) fail("the " + what + " " + path + " is empty", "give a " + what + " with content");
  return text;
}

}  // namespace ibvp
