#pragma once
// The one CSV writer of the results: RFC 4180 (a field holding a comma, a double quote, CR
// or LF is quoted, and its quotes doubled; records end with LF). Numbers are written in
// their shortest form that reads back as the same double (std::to_chars), NaN as an empty
// field.
#include <ostream>
#include <string>
#include <string_view>

#include "platform/metrics/table.h"

namespace ibvp::metrics {

// One field, quoted when RFC 4180 requires it.
std::string csv_field(std::string_view s);

// The shortest decimal text that reads back as `v`; "" for NaN or infinity.
std::string csv_number(double v);

// Header row, then one record per row of `t`.
void write_csv(const Table& t, std::ostream& out);

}  // namespace ibvp::metrics
