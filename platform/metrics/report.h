#pragma once
// Writes a run's results as files: summary.json (totals, per-flow and per-port statistics),
// flows.csv, ports.csv, packets.csv (one row per packet), rates.csv (sliding-window rates
// over time) and run.json (wall-clock figures). Everything but run.json depends only on the
// scenario and seed, so two runs give byte-identical files.
#include <string>

namespace ibvp {
class Fabric;
struct RunResult;
}  // namespace ibvp

namespace ibvp::metrics {

void write_results(const Fabric& fabric, const RunResult& result, const std::string& out_dir);

}  // namespace ibvp::metrics
