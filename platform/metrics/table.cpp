#include "platform/metrics/table.h"

#include <nlohmann/json.hpp>

namespace ibvp::metrics {

std::string utf8_valid(std::string_view s) {
  bool ascii = true;
  for (char c : s) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return std::string(s);
  // nlohmann::json writes a string with its invalid sequences replaced; reading that back
  // gives the string every JSON file of the run holds.
  const std::string quoted =
      nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(quoted).get<std::string>();
}

}  // namespace ibvp::metrics
