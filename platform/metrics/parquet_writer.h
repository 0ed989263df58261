#pragma once
// A small Parquet writer for the results tables, so that ibvp-sim writes flows.parquet and
// the others itself (Debian bookworm has no Arrow C++ package). It writes the file format
// of apache/parquet-format (README "File Format", src/main/thrift/parquet.thrift) in its
// simplest honest form: magic "PAR1", one row group, one column chunk per column made of
// v1 data pages, PLAIN encoding, no compression, REQUIRED columns of INT32, INT64, DOUBLE
// and BYTE_ARRAY annotated as UTF-8 strings, and the FileMetaData footer in Thrift's
// compact protocol. No statistics, dictionaries or page indexes: readers do not need them.
#include <ostream>

#include "platform/metrics/table.h"

namespace ibvp::metrics {

// Writes `t` as one Parquet file. `created_by` goes into FileMetaData.created_by. The bytes
// depend only on the table (no clock, no host), so reruns give identical files.
void write_parquet(const Table& t, std::ostream& out, const std::string& created_by);

}  // namespace ibvp::metrics
