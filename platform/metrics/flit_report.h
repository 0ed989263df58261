#pragma once
// What seed 003's flit routers did in a run (switch.model flit_wormhole): per traffic class,
// the payload flits through their crossbars, the preemptions (Sec. 3.2.1) and the
// accelerations (Sec. 3.2.2, Fig. 2a and 2b), as summary.json's "flit_router" block and the
// flit_classes table (docs/seed003.md). Deterministic: counts only.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/flit/flit_config.h"
#include "platform/metrics/table.h"

namespace ibvp::flit {
class FlitFabric;
}  // namespace ibvp::flit

namespace ibvp::metrics {

struct FlitClassRow {
  uint8_t cls;
  flit::ClassCounts counts;
};

// One row per class of the routers' configuration (FlitConfig::classes(), at most 4).
std::vector<FlitClassRow> flit_class_rows(const flit::FlitFabric& fabric);
// {variant, acceleration, block_flits, nic_multiplexing, nic_scheduler, preemptions, accelerations, classes [...]}.
nlohmann::ordered_json flit_router_json(const flit::FlitConfig& cfg, const std::vector<FlitClassRow>& rows);
// The rows as a table; it reads `rows`, which must outlive it.
Table flit_classes_table(const std::vector<FlitClassRow>& rows);

}  // namespace ibvp::metrics
