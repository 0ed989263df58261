#include "platform/params/config_error.h"

#include <cstdio>

#include "models/sim/params.h"

namespace ibvp {

namespace {
// Control characters of echoed values (but tabs) are written as escapes, so the message stays one line
// and a NUL cannot cut it short when printed (found by tests/fuzz).
std::string printable(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if ((u < 0x20 && c != '\t') || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else out += c;
  }
  return out;
}

std::string compose(const std::string& file, const std::string& key, int line,
                    const std::string& problem, const std::string& fix) {
  std::string m = file.empty() ? "<input>" : printable(file);
  if (line > 0) m += ":" + std::to_string(line);
  m += ": ";
  // A key comes from the input (an unknown key may be megabytes long): quote a bounded part.
  if (!key.empty()) m += printable(sim::excerpt(key)) + ": ";
  m += printable(problem);
  if (!fix.empty()) m += " (fix: " + printable(fix) + ")";
  return m;
}
}  // namespace

ConfigError::ConfigError(std::string file, std::string key, int line, std::string problem, std::string fix)
    : std::runtime_error(compose(file, key, line, problem, fix)),
      file_(std::move(file)),
      key_(std::move(key)),
      line_(line),
      problem_(std::move(problem)),
      fix_(std::move(fix)) {}

}  // namespace ibvp
