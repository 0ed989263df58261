#include "platform/metrics/csv.h"

#include <charconv>
#include <cmath>

namespace ibvp::metrics {

std::string csv_field(std::string_view s) {
  // RFC 4180 Sec. 2, rules 6 and 7.
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string csv_number(double v) {
  if (!std::isfinite(v)) return "";
  char buf[32];
  // Without a format, to_chars gives the shortest text that round-trips (C++17 [charconv]).
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

void write_csv(const Table& t, std::ostream& out) {
  std::string line;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    if (c) line += ',';
    line += csv_field(t.columns[c].name);
  }
  out << line << '\n';
  for (size_t r = 0; r < t.rows; ++r) {
    line.clear();
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const Column& col = t.columns[c];
      if (c) line += ',';
      switch (col.type) {
        case ColumnType::int32:
        case ColumnType::int64: line += std::to_string(col.integer(r)); break;
        case ColumnType::float64: line += csv_number(col.real(r)); break;
        case ColumnType::text: line += csv_field(col.text(r)); break;
      }
    }
    out << line << '\n';
  }
}

}  // namespace ibvp::metrics
