#include "platform/umad/client_watch.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace ibvp::umad {

bool process_blocked(uint32_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(dir, ec)) {
    std::ifstream f(task.path() / "stat");
    const std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    // "tid (comm) S ...": the state follows the last ')' (comm may hold parentheses).
    const size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) continue;
    const char state = stat[close + 2];
    if (state == 'R' || state == 'D') return false;
  }
  return true;
}

}  // namespace ibvp::umad
