#pragma once
// What the connection manager decided (seed 002 Table 2's reservation columns and the
// established connections): summary.json's `admission` block and the `admission` table, one
// row per output port with a cable.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/metrics/table.h"
#include "platform/sm/connection_manager.h"

namespace ibvp::metrics {

// Requests, established and refused per SL and per verdict; mean/min/max reservation over
// host interfaces (CA ports) and over switch output ports; admission wall time.
nlohmann::ordered_json admission_json(const sm::ConnectionManager& m);

// Rows of the admission table; the table reads them (keep them alive while it is written).
struct AdmissionRow {
  uint32_t port_index;
  uint64_t sequences, free_entries;
};
std::vector<AdmissionRow> admission_rows(const sm::ConnectionManager& m);
Table admission_table(const sm::ConnectionManager& m, const std::vector<AdmissionRow>& rows,
                      const std::vector<std::string>& node_names);

}  // namespace ibvp::metrics
