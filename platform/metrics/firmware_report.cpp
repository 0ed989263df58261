#include "platform/metrics/firmware_report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "firmware/hal/ibvp_hal.h"
#include "platform/builder/fabric.h"
#include "platform/driver/host_node.h"

namespace ibvp::metrics {

namespace {

constexpr const char* kCounterNames[] = {
    "doorbells",      "doorbells_skipped", "wqes",          "tx_messages",     "rx_packets",     "rx_dropped",
    "rx_psn_errors",  "acks_sent",         "naks_sent",     "naks_received",   "cqes",           "error_cqes",
    "retransmissions", "ack_timeouts",     "duplicates",    "fecn_received",   "becn_sent",      "becn_received",
    "smps",           "gmps",              "mads_to_host", "rnr_naks_sent",   "rnr_retries",
    "atomics",        "atomic_replays"};
static_assert(sizeof kCounterNames / sizeof kCounterNames[0] == IBVP_CNT_COUNT,
              "a counter of ibvp_hal.h has no name here");

const char* level_name(int level) {
  switch (level) {
    case IBVP_LOG_DEBUG: return "DEBUG";
    case IBVP_LOG_INFO: return "INFO";
    case IBVP_LOG_WARN: return "WARN";
    case IBVP_LOG_ERROR: return "ERROR";
  }
  return "LEVEL" ;
}

}  // namespace

const char* firmware_counter_name(uint32_t counter) {
  return counter < IBVP_CNT_COUNT ? kCounterNames[counter] : "unknown";
}

nlohmann::ordered_json firmware_json(const Fabric& fabric) {
  using Json = nlohmann::ordered_json;
  const auto& nodes = fabric.scenario().topology.nodes;
  Json out = Json::array();
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    const driver::HostNode* h = fabric.host_at(n);
    if (h == nullptr) continue;
    Json counters = Json::object();
    for (uint32_t c = 0; c < IBVP_CNT_COUNT; ++c) counters[kCounterNames[c]] = h->hca.fw_counter(c);
    // Which image ran: its path, and its build ID, which names the build whatever the path
    // (ibvp-sim and `ibvp run` load the same image: test_firmware_install.py).
    const std::string& build_id = h->hca.firmware().build_id();
    out.push_back(Json{{"hca", nodes[n].name},
                       {"image", h->hca.firmware().path()},
                       {"build_id", build_id.empty() ? Json(nullptr) : Json(build_id)},
                       {"events", h->hca.firmware_events()},
                       {"cycles", h->hca.firmware_cycles()},
                       {"log_lines", h->hca.firmware_log().size()},
                       {"counters", counters}});
  }
  return out.empty() ? Json(nullptr) : out;
}

void write_firmware_log(const Fabric& fabric, std::ostream& out) {
  struct Line {
    uint64_t time_ps;
    uint32_t node;
    const hca::Hca::LogLine* line;
  };
  std::vector<Line> lines;
  const auto& nodes = fabric.scenario().topology.nodes;
  for (uint32_t n = 0; n < nodes.size(); ++n)
    if (const driver::HostNode* h = fabric.host_at(n))
      for (const auto& l : h->hca.firmware_log()) lines.push_back({l.time_ps, n, &l});
  std::stable_sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) { return a.time_ps < b.time_ps; });
  for (const Line& l : lines) {
    char when[40];
    std::snprintf(when, sizeof when, "%" PRIu64 ".%06" PRIu64 " us", l.time_ps / 1'000'000, l.time_ps % 1'000'000);
    std::string text;
    for (char c : l.line->text) text += c == '\n' ? std::string("\\n") : std::string(1, c);
    out << when << ' ' << nodes[l.node].name << ' ' << level_name(l.line->level) << ' ' << text << '\n';
  }
}

}  // namespace ibvp::metrics
