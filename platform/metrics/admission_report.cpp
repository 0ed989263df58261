#include "platform/metrics/admission_report.h"

#include <algorithm>
#include <cmath>

namespace ibvp::metrics {

namespace {
using Json = nlohmann::ordered_json;

// Mean, min and max reservation of one kind of port, in b/s and as a fraction of the rate.
Json reservation(const sm::ConnectionManager& m, bool host) {
  double sum = 0, sum_f = 0, lo = INFINITY, hi = -INFINITY, lo_f = INFINITY, hi_f = -INFINITY;
  size_t n = 0;
  for (const sm::ConnectionManager::Port& p : m.ports()) {
    if (p.host != host) continue;
    const double bps = static_cast<double>(p.admission.reserved_bps());
    const double f = bps / static_cast<double>(p.link_bps);
    sum += bps;
    sum_f += f;
    lo = std::min(lo, bps);
    hi = std::max(hi, bps);
    lo_f = std::min(lo_f, f);
    hi_f = std::max(hi_f, f);
    ++n;
  }
  if (n == 0) return Json{{"ports", 0}};
  return Json{{"ports", n},
              {"mean_bps", sum / static_cast<double>(n)},
              {"min_bps", lo},
              {"max_bps", hi},
              {"mean_fraction", sum_f / static_cast<double>(n)},
              {"min_fraction", lo_f},
              {"max_fraction", hi_f}};
}
}  // namespace

Json admission_json(const sm::ConnectionManager& m) {
  const sm::AdmissionCounts all = m.totals();
  Json per_sl = Json::object();
  for (const CbrServiceLevel& lv : m.config().service_levels) {
    const sm::AdmissionCounts& c = m.by_sl()[lv.sl & 0xF];
    per_sl[std::to_string(lv.sl)] =
        Json{{"requested", c.requested}, {"established", c.established}, {"refused", c.refused}};
  }
  Json verdicts = Json::object();
  for (size_t v = 0; v < m.by_verdict().size(); ++v)
    verdicts[sm::verdict_name(static_cast<sm::Verdict>(v))] = m.by_verdict()[v];
  // The same reservation in payload bits (the connections' own bandwidths, headers left
  // out): each connection leaves through one host interface, its source's. seed 002's
  // Table 2 reserves and counts traffic this way (docs/seed002.md).
  Json hosts = reservation(m, true);
  if (hosts.value("ports", size_t{0}) > 0) {
    double payload = 0;
    for (const workload::CbrConnection& c : m.connections()) payload += static_cast<double>(c.bandwidth_bps);
    hosts["mean_payload_bps"] = payload / static_cast<double>(hosts["ports"].get<size_t>());
  }
  return Json{{"requests", all.requested},
              {"established", all.established},
              {"refused", all.refused},
              {"payload_bytes", m.config().payload_bytes},
              {"per_sl", per_sl},
              {"per_verdict", verdicts},
              {"host_interfaces", hosts},
              {"switch_ports", reservation(m, false)},
              {"wall_seconds", m.wall_seconds()}};
}

std::vector<AdmissionRow> admission_rows(const sm::ConnectionManager& m) {
  std::vector<AdmissionRow> rows;
  for (uint32_t i = 0; i < m.ports().size(); ++i) {
    const sm::VlarbAdmission& a = m.ports()[i].admission;
    rows.push_back({i, a.sequences().size(), a.free_entries()});
  }
  return rows;
}

Table admission_table(const sm::ConnectionManager& m, const std::vector<AdmissionRow>& rows,
                      const std::vector<std::string>& node_names) {
  auto port = [&](size_t r) -> const sm::ConnectionManager::Port& { return m.ports()[rows[r].port_index]; };
  auto i64 = [](uint64_t v) { return static_cast<int64_t>(v); };
  Table tab(rows.size());
  tab.text("node", [&, port](size_t r) -> std::string_view { return node_names[port(r).node]; })
      .int64("port", [port](size_t r) { return int64_t{port(r).port}; })
      .text("kind", [port](size_t r) -> std::string_view { return port(r).host ? "host" : "switch"; })
      .int64("link_bps", [port, i64](size_t r) { return i64(port(r).link_bps); })
      .int64("reserved_bps", [port, i64](size_t r) { return i64(port(r).admission.reserved_bps()); })
      .real("reserved_fraction", [port](size_t r) {
        return static_cast<double>(port(r).admission.reserved_bps()) / static_cast<double>(port(r).link_bps);
      })
      .int64("connections", [port, i64](size_t r) { return i64(port(r).admission.connections()); })
      .int64("sequences", [&rows, i64](size_t r) { return i64(rows[r].sequences); })
      .int64("free_entries", [&rows, i64](size_t r) { return i64(rows[r].free_entries); });
  return tab;
}

}  // namespace ibvp::metrics
