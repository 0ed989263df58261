#pragma once
// What the HCAs' firmware did in a run, for the results (issue 15 part 3): its counters
// (hal->counter_add, IBVP_CNT_* of firmware/hal/ibvp_hal.h), events handled and core cycles
// charged per HCA, as summary.json's "firmware" block; and the lines it logged (hal->log),
// as firmware.log. Both depend only on the scenario and seed.
#include <ostream>

#include <nlohmann/json.hpp>

namespace ibvp {
class Fabric;
}  // namespace ibvp

namespace ibvp::metrics {

// The counter's name in summary.json and Results.firmware (IBVP_CNT_DOORBELLS -> "doorbells").
const char* firmware_counter_name(uint32_t counter);

// [{hca, image, build_id, events, cycles, log_lines, counters {name: value}}] over the HCA
// hosts in node order (image: the firmware image's path; build_id: its GNU build ID, or
// null); null for a run without HCAs.
nlohmann::ordered_json firmware_json(const Fabric& fabric);

// One line per hal->log call of every HCA, in simulated-time order (ties: node order, then
// call order): "<time in us, ps digits> <host> <LEVEL> <text>". A newline inside a message
// is written as "\n" so each call stays one line.
void write_firmware_log(const Fabric& fabric, std::ostream& out);

}  // namespace ibvp::metrics
