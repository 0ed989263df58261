#pragma once
// The one error type for bad input: it names the file, the key path (or item), the line
// when known, what is wrong and how to fix it. Loaders throw it; the CLI prints what().
#include <stdexcept>
#include <string>

namespace ibvp {

class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string file, std::string key, int line, std::string problem, std::string fix);
  const std::string& file() const { return file_; }
  const std::string& key() const { return key_; }
  int line() const { return line_; }  // 1-based; 0 when unknown
  const std::string& problem() const { return problem_; }
  const std::string& fix() const { return fix_; }

 private:
  std::string file_, key_;
  int line_;
  std::string problem_, fix_;
};

}  // namespace ibvp
