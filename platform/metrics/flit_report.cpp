#include "platform/metrics/flit_report.h"

#include "models/flit/flit_fabric.h"

namespace ibvp::metrics {

std::vector<FlitClassRow> flit_class_rows(const flit::FlitFabric& fabric) {
  const flit::FlitNetwork& net = fabric.network();
  std::vector<FlitClassRow> rows;
  for (uint8_t c = 0; c < net.config().classes(); ++c) rows.push_back({c, net.class_counts(c)});
  return rows;
}

nlohmann::ordered_json flit_router_json(const flit::FlitConfig& cfg, const std::vector<FlitClassRow>& rows) {
  using Json = nlohmann::ordered_json;
  Json classes = Json::array();
  uint64_t preemptions = 0, accelerations = 0;
  for (const FlitClassRow& r : rows) {
    const flit::ClassCounts& k = r.counts;
    preemptions += k.preempted;
    accelerations += k.accelerated_preempted + k.accelerated_blocking;
    classes.push_back(Json{{"class", r.cls},
                           {"flits_crossed", k.flits_crossed},
                           {"preempted", k.preempted},
                           {"preempting", k.preempting},
                           {"accelerated_preempted", k.accelerated_preempted},
                           {"accelerated_blocking", k.accelerated_blocking}});
  }
  return Json{{"variant", flit::variant_name(cfg.variant)},
              {"acceleration", cfg.acceleration},
              {"block_flits", cfg.block_flits},
              {"nic_multiplexing", flit::nic_multiplexing_name(cfg.nic_multiplexing)},
              {"nic_scheduler", flit::nic_scheduler_name(cfg.nic_scheduler)},
              {"preemptions", preemptions},
              {"accelerations", accelerations},
              {"classes", classes}};
}

Table flit_classes_table(const std::vector<FlitClassRow>& rows) {
  auto i64 = [&rows](uint64_t flit::ClassCounts::*m) {
    return [&rows, m](size_t r) { return static_cast<int64_t>(rows[r].counts.*m); };
  };
  Table tab(rows.size());
  tab.int64("class", [&rows](size_t r) { return int64_t{rows[r].cls}; })
      .int64("flits_crossed", i64(&flit::ClassCounts::flits_crossed))
      .int64("preempted", i64(&flit::ClassCounts::preempted))
      .int64("preempting", i64(&flit::ClassCounts::preempting))
      .int64("accelerated_preempted", i64(&flit::ClassCounts::accelerated_preempted))
      .int64("accelerated_blocking", i64(&flit::ClassCounts::accelerated_blocking));
  return tab;
}

}  // namespace ibvp::metrics
