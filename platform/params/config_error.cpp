#include "platform/params/config_error.h"

#include "models/sim/params.h"

namespace ibvp {

namespace {
std::string compose(const std::string& file, const std::string& key, int line,
                    const std::string& problem, const std::string& fix) {
  std::string m = file.empty() ? "<input>" : file;
  if (line > 0) m += ":" + std::to_string(line);
  m += ": ";
  // A key comes from the input (an unknown key may be megabytes long): quote a bounded part.
  if (!key.empty()) m += sim::excerpt(key) + ": ";
  m += problem;
  if (!fix.empty()) m += " (fix: " + fix + ")";
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
