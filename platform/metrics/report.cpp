#include "platform/metrics/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "models/sim/params.h"
#include "platform/builder/fabric.h"
#include "platform/apps/perftest.h"
#include "platform/builder/runner.h"
#include "platform/metrics/admission_report.h"
#include "platform/metrics/csv.h"
#include "platform/metrics/firmware_report.h"
#include "platform/metrics/flit_report.h"
#include "platform/metrics/parquet_writer.h"
#include "platform/metrics/table.h"

namespace ibvp::metrics {

namespace {

using Json = nlohmann::ordered_json;  // members in the order written: stable files

std::ofstream open_out(const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot open for writing (check the --out directory)");
  return f;
}

// Names may hold any byte (they come from users and fabric dumps); invalid UTF-8 is
// replaced rather than refused, so a results file is always readable.
void write_json(const std::string& path, const Json& j) {
  std::ofstream f = open_out(path);
  f << j.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
}

// A table as NAME.csv and NAME.parquet, the same cells in both.
void write_table(const std::string& dir, const std::string& name, const Table& t) {
  {
    std::ofstream csv = open_out(dir + "/" + name + ".csv");
    write_csv(t, csv);
  }
  std::ofstream pq = open_out(dir + "/" + name + ".parquet");
  write_parquet(t, pq, "ibvp version " IBVP_VERSION);
}

struct LatencyStats {
  double mean = NAN, min = NAN, p50 = NAN, p99 = NAN, max = NAN;
};

LatencyStats stats_ns(const LatencyHistogram& h) {
  LatencyStats s;
  if (h.empty()) return s;
  s.mean = h.mean() / 1e3;
  s.min = static_cast<double>(h.min()) / 1e3;
  s.p50 = h.quantile(0.5) / 1e3;
  s.p99 = h.quantile(0.99) / 1e3;
  s.max = static_cast<double>(h.max()) / 1e3;
  return s;
}

// The packets stuck at the end of the run (RunResult::stuck), or null.
Json stuck_json(const RunResult& result) {
  if (!result.stuck) return Json(nullptr);
  const StuckReport& s = *result.stuck;
  Json worst = Json::array();
  for (const StuckOutput& w : s.worst)
    worst.push_back(Json{{"port", utf8_valid(w.port)},
                         {"vl", int{w.vl}},
                         {"packets", w.packets},
                         {"waiting_ns", static_cast<double>(w.waiting_ps) / 1e3}});
  return Json{{"packets", s.packets},
              {"outputs", s.outputs},
              {"longest_wait_ns", static_cast<double>(s.longest_ps) / 1e3},
              {"worst", worst}};
}

// seed 002 Table 2 (metrics/traffic_metrics.h): the summary's `traffic` block.
Json traffic_json(const TrafficSummary& tr) {
  return Json{{"span_seconds", tr.span_s},
              {"hosts", tr.hosts},
              {"switch_ports", tr.switch_ports},
              {"injected_bytes", tr.injected_bytes},
              {"delivered_bytes", tr.delivered_bytes},
              {"injected_bytes_per_cycle_per_node", tr.injected_bytes_per_cycle_per_node},
              {"delivered_bytes_per_cycle_per_node", tr.delivered_bytes_per_cycle_per_node},
              {"host_utilization", tr.host_utilization},
              {"switch_port_utilization", tr.switch_port_utilization}};
}

// Column labels of the CBR connections' intervals: "0.01D" for a threshold, "lt_0.5",
// "0.5_0.75" and "ge_1.5" for the IAT intervals (edges relative to the nominal IAT).
std::vector<std::string> threshold_labels(const ConnectionMetricsConfig& c) {
  std::vector<std::string> out;
  for (double f : c.deadline_thresholds) out.push_back(sim::format_real(f) + "D");
  return out;
}
std::vector<std::string> iat_labels(const ConnectionMetricsConfig& c) {
  const std::vector<double>& e = c.jitter_bins;
  std::vector<std::string> out{"lt_" + sim::format_real(e.front())};
  for (size_t i = 1; i < e.size(); ++i) out.push_back(sim::format_real(e[i - 1]) + "_" + sim::format_real(e[i]));
  out.push_back("ge_" + sim::format_real(e.back()));
  return out;
}

// The tables connections and service_levels, and the summary's `connections` block (seed
// 002 Figs. 3-5; docs/realtime_metrics.md). Only when the run has connections.
Json write_connections(const ConnectionMetrics& cm, const std::vector<std::string>& node_names, const std::string& dir) {
  const workload::CbrConnections& conns = cm.connections();
  const std::vector<std::string> tl = threshold_labels(cm.config()), il = iat_labels(cm.config());
  const size_t T = tl.size();
  auto ns = [](double ps) { return ps / 1e3; };
  auto i64 = [](uint64_t v) { return static_cast<int64_t>(v); };
  {
    Table tab(conns.size());
    tab.int64("connection", [](size_t r) { return static_cast<int64_t>(r); })
        .text("src", [&](size_t r) -> std::string_view { return node_names[conns[r].src_node]; })
        .text("dst", [&](size_t r) -> std::string_view { return node_names[conns[r].dst_node]; })
        .int64("sl", [&](size_t r) { return int64_t{conns[r].sl}; })
        .int64("hops", [&](size_t r) { return int64_t{conns[r].hops}; })
        .int64("distance", [&](size_t r) { return int64_t{conns[r].distance}; })
        .int64("payload_bytes", [&](size_t r) { return int64_t{conns[r].payload_bytes}; })
        .int64("bandwidth_bps", [&](size_t r) { return i64(conns[r].bandwidth_bps); })
        .int64("reserved_bps", [&](size_t r) { return i64(conns[r].reserved_bps); })
        .real("interval_ns", [&](size_t r) { return ns(static_cast<double>(conns[r].interval_ps)); })
        .real("deadline_ns", [&](size_t r) { return ns(static_cast<double>(conns[r].deadline_ps)); })
        .int64("delivered", [&](size_t r) { return int64_t{cm.state(static_cast<uint32_t>(r)).delivered}; });
    // Cumulative: packets with delay <= threshold x D (seed 002 Fig. 3 draws them so).
    for (size_t k = 0; k < T; ++k)
      tab.int64("within_" + tl[k], [&cm, k](size_t r) { return static_cast<int64_t>(cm.within(static_cast<uint32_t>(r), k)); });
    tab.int64("late", [&](size_t r) { return i64(cm.late(static_cast<uint32_t>(r))); });
    for (size_t k = 0; k < il.size(); ++k)
      tab.int64("iat_" + il[k], [&cm, k](size_t r) { return int64_t{cm.iat_count(static_cast<uint32_t>(r), k)}; });
    tab.real("delay_mean_ns", [&](size_t r) {
         const uint32_t c = static_cast<uint32_t>(r);
         return cm.state(c).delivered ? cm.delay_mean_ps(c) / 1e3 : NAN;
       })
        .real("delay_max_ns", [&](size_t r) {
          const ConnectionState& st = cm.state(static_cast<uint32_t>(r));
          return st.delivered ? static_cast<double>(st.delay_max_ps) / 1e3 : NAN;
        });
    write_table(dir, "connections", tab);
  }
  const std::vector<SlConnectionSummary> sls = cm.by_sl();
  auto frac = [](uint64_t a, uint64_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : NAN; };
  auto index = [](uint32_t c) { return c == workload::kNoConnection ? int64_t{-1} : int64_t{c}; };
  {
    Table tab(sls.size());
    tab.int64("sl", [&](size_t r) { return int64_t{sls[r].sl}; })
        .int64("connections", [&](size_t r) { return int64_t{sls[r].connections}; })
        .int64("measured_connections", [&](size_t r) { return int64_t{sls[r].measured_connections}; })
        .int64("packets", [&](size_t r) { return i64(sls[r].packets); })
        .int64("late", [&](size_t r) { return i64(sls[r].late); });
    for (size_t k = 0; k < T; ++k)
      tab.real("within_" + tl[k], [&, k](size_t r) { return frac(sls[r].within[k], sls[r].packets); });
    tab.int64("iat_samples", [&](size_t r) { return i64(sls[r].iat_samples); });
    for (size_t k = 0; k < il.size(); ++k)
      tab.real("iat_" + il[k], [&, k](size_t r) { return frac(sls[r].iat[k], sls[r].iat_samples); });
    tab.real("delay_mean_ns", [&](size_t r) { return sls[r].packets ? sls[r].delay_mean_ps / 1e3 : NAN; })
        .real("delay_max_ns", [&](size_t r) { return sls[r].packets ? static_cast<double>(sls[r].delay_max_ps) / 1e3 : NAN; })
        .int64("best_connection", [&](size_t r) { return index(sls[r].best); })
        .real("best_fraction", [&](size_t r) { return sls[r].best == workload::kNoConnection ? NAN : sls[r].best_fraction; })
        .int64("worst_connection", [&](size_t r) { return index(sls[r].worst); })
        .real("worst_fraction", [&](size_t r) { return sls[r].worst == workload::kNoConnection ? NAN : sls[r].worst_fraction; });
    write_table(dir, "service_levels", tab);
  }
  uint64_t packets = 0, late = 0;
  Json per_sl = Json::array();
  for (const SlConnectionSummary& a : sls) {
    packets += a.packets;
    late += a.late;
    Json within = Json::object();
    for (size_t k = 0; k < T; ++k) within[tl[k]] = a.packets ? Json(frac(a.within[k], a.packets)) : Json(nullptr);
    Json rank = a.best == workload::kNoConnection
                    ? Json(nullptr)
                    : Json{{"best", a.best}, {"best_fraction", a.best_fraction}, {"worst", a.worst},
                           {"worst_fraction", a.worst_fraction}};
    per_sl.push_back(Json{{"sl", int{a.sl}},
                          {"connections", a.connections},
                          {"measured_connections", a.measured_connections},
                          {"packets", a.packets},
                          {"late", a.late},
                          {"within", within},
                          {"delay_mean_ns", a.packets ? Json(a.delay_mean_ps / 1e3) : Json(nullptr)},
                          {"delay_max_ns", a.packets ? Json(static_cast<double>(a.delay_max_ps) / 1e3) : Json(nullptr)},
                          {"ranked_at", sim::format_real(cm.config().rank_threshold) + "D"},
                          {"best_worst", rank}});
  }
  return Json{{"connections", conns.size()},
              {"packets", packets},
              {"late", late},
              // null when no packet was counted: nothing was judged.
              {"all_met_deadline", packets > 0 ? Json(late == 0) : Json(nullptr)},
              {"bytes_per_connection", cm.bytes_per_connection()},
              {"service_levels", per_sl}};
}

// The `phases` table of a phased mix (seed 003 Sec. 4.2, docs/mix.md): one row per phase,
// the same numbers as summary.json's "mix" block.
void write_phases(const MixMetrics& m, const std::string& dir) {
  const std::vector<MixMetrics::Phase>& ph = m.phases();
  auto seconds = [&](size_t r) { return static_cast<double>(ph[r].span.end_ps - ph[r].span.start_ps) * 1e-12; };
  auto mean_ns = [](double sum_ps, uint64_t n) { return n ? sum_ps / static_cast<double>(n) / 1e3 : NAN; };
  Table tab(ph.size());
  tab.int64("phase", [](size_t r) { return static_cast<int64_t>(r); })
      .real("start_ns", [&](size_t r) { return static_cast<double>(ph[r].span.start_ps) / 1e3; })
      .real("end_ns", [&](size_t r) { return static_cast<double>(ph[r].span.end_ps) / 1e3; })
      .real("real_time_percent", [&](size_t r) { return static_cast<double>(ph[r].span.real_time_percent); })
      .real("best_effort_percent", [&](size_t r) { return static_cast<double>(ph[r].span.best_effort_percent); })
      .int64("rt_streams", [&](size_t r) { return int64_t{ph[r].rt_streams}; })
      .real("rt_offered_bytes_per_s", [&](size_t r) { return ph[r].rt_offered_bytes_per_s; })
      .int64("rt_delivered_payload_bytes", [&](size_t r) { return static_cast<int64_t>(ph[r].rt_payload_bytes); })
      .int64("rt_frames", [&](size_t r) { return static_cast<int64_t>(ph[r].rt.frames()); })
      .int64("rt_frames_missed", [&](size_t r) { return static_cast<int64_t>(ph[r].rt.missed()); })
      .int64("rt_frames_incomplete", [&](size_t r) { return static_cast<int64_t>(ph[r].rt.incomplete()); })
      .int64("rt_frames_lost", [&](size_t r) { return static_cast<int64_t>(ph[r].rt.lost()); })
      .real("rt_dmp", [&](size_t r) { return ph[r].rt.dmp(); })
      .real("rt_dmt_ns", [&](size_t r) { return ph[r].rt.dmt_ps() / 1e3; })
      .real("rt_inter_frame_mean_ns", [&](size_t r) { return ph[r].rt.inter_frame_mean_ps() / 1e3; })
      .real("rt_inter_frame_sd_ns", [&](size_t r) { return ph[r].rt.inter_frame_sd_ps() / 1e3; })
      .real("be_offered_bytes_per_s", [&](size_t r) { return ph[r].be_offered_bytes_per_s; })
      .int64("be_packets", [&](size_t r) { return static_cast<int64_t>(ph[r].be_packets); })
      .int64("be_delivered_payload_bytes", [&](size_t r) { return static_cast<int64_t>(ph[r].be_payload_bytes); })
      .real("be_throughput_bytes_per_s", [&](size_t r) {
        return seconds(r) > 0 ? static_cast<double>(ph[r].be_payload_bytes) / seconds(r) : 0.0;
      })
      .real("be_mean_latency_ns", [&](size_t r) {
        return ph[r].be_packets ? ph[r].be_latency_sum_ps / static_cast<double>(ph[r].be_packets) / 1e3 : NAN;
      })
      // Seed 003 Fig. 5: queueing before the header enters the network, and network time.
      .real("be_mean_queueing_ns", [&](size_t r) { return mean_ns(ph[r].be_queueing_sum_ps, ph[r].be_packets); })
      .real("be_mean_network_ns",
            [&](size_t r) { return mean_ns(ph[r].be_latency_sum_ps - ph[r].be_queueing_sum_ps, ph[r].be_packets); })
      .int64("control_packets", [&](size_t r) { return static_cast<int64_t>(ph[r].control_packets); })
      .real("control_mean_latency_ns",
            [&](size_t r) { return mean_ns(ph[r].control_latency_sum_ps, ph[r].control_packets); })
      .real("control_mean_queueing_ns",
            [&](size_t r) { return mean_ns(ph[r].control_queueing_sum_ps, ph[r].control_packets); })
      .real("control_mean_network_ns", [&](size_t r) {
        return mean_ns(ph[r].control_latency_sum_ps - ph[r].control_queueing_sum_ps, ph[r].control_packets);
      });
  write_table(dir, "phases", tab);
}

// The scenario's link events (docs/management.md, "A link that goes down"): one row each,
// in summary.json's subnet_manager block and as link_events.csv. Times are simulated time
// in us; null (JSON) or empty (CSV) where a thing did not happen.
Json link_events_json(const std::vector<LinkEventReport>& rows) {
  Json list = Json::array();
  auto us = [](uint64_t ps) { return ps ? Json(static_cast<double>(ps) / 1e6) : Json(nullptr); };
  for (const LinkEventReport& r : rows) {
    Json unreachable = Json::array();
    for (const std::string& n : r.unreachable) unreachable.push_back(utf8_valid(n));
    list.push_back(Json{{"link", utf8_valid(r.link)},
                        {"ends", Json::array({utf8_valid(r.end_a), utf8_valid(r.end_b)})},
                        {"state", r.up ? "up" : "down"},
                        {"happened", r.fired},
                        {"at_us", r.fired ? Json(static_cast<double>(r.at_ps) / 1e6) : Json(nullptr)},
                        {"trap_sent_us", us(r.trap_sent_ps)},
                        {"trap_sends", r.trap_sends},
                        {"trap_received_us", us(r.trap_received_ps)},
                        {"trap_repressed_us", us(r.trap_repressed_ps)},
                        {"sweeps", r.sweeps},
                        {"sweep_smps", r.sweep_smps},
                        {"lft_blocks_set", r.lft_blocks_set},
                        {"lft_blocks_compared", r.lft_blocks_compared},
                        {"recovered_us", us(r.recovered_ps)},
                        {"recovery_us", r.recovered_ps ? Json(static_cast<double>(r.recovered_ps - r.at_ps) / 1e6)
                                                       : Json(nullptr)},
                        {"unreachable", unreachable},
                        {"sweep_error", r.sweep_error.empty() ? Json(nullptr) : Json(utf8_valid(r.sweep_error))},
                        {"lost_to_recovery", r.lost_to_recovery},
                        {"lost", r.lost},
                        {"unroutable", r.unroutable}});
  }
  return list;
}

void write_link_events(const std::vector<LinkEventReport>& rows, const std::string& dir) {
  auto us = [&](uint64_t ps) { return ps ? static_cast<double>(ps) / 1e6 : NAN; };
  std::vector<std::string> unreachable;
  for (const LinkEventReport& r : rows) {
    std::string u;
    for (const std::string& n : r.unreachable) u += (u.empty() ? "" : " ") + utf8_valid(n);
    unreachable.push_back(std::move(u));
  }
  std::vector<std::string> links, ends;
  for (const LinkEventReport& r : rows) {
    links.push_back(utf8_valid(r.link));
    ends.push_back(utf8_valid(r.end_a + " " + r.end_b));
  }
  Table tab(rows.size());
  tab.text("link", [&](size_t i) { return std::string_view(links[i]); })
      .text("ends", [&](size_t i) { return std::string_view(ends[i]); })
      .text("state", [&](size_t i) { return std::string_view(rows[i].up ? "up" : "down"); })
      .real("at_us", [&](size_t i) { return rows[i].fired ? static_cast<double>(rows[i].at_ps) / 1e6 : NAN; })
      .real("trap_sent_us", [&](size_t i) { return us(rows[i].trap_sent_ps); })
      .int64("trap_sends", [&](size_t i) { return int64_t{rows[i].trap_sends}; })
      .real("trap_received_us", [&](size_t i) { return us(rows[i].trap_received_ps); })
      .real("trap_repressed_us", [&](size_t i) { return us(rows[i].trap_repressed_ps); })
      .int64("sweeps", [&](size_t i) { return int64_t{rows[i].sweeps}; })
      .int64("sweep_smps", [&](size_t i) { return static_cast<int64_t>(rows[i].sweep_smps); })
      .int64("lft_blocks_set", [&](size_t i) { return static_cast<int64_t>(rows[i].lft_blocks_set); })
      .real("recovered_us", [&](size_t i) { return us(rows[i].recovered_ps); })
      .real("recovery_us", [&](size_t i) {
        return rows[i].recovered_ps ? static_cast<double>(rows[i].recovered_ps - rows[i].at_ps) / 1e6 : NAN;
      })
      .int64("lost_to_recovery", [&](size_t i) { return static_cast<int64_t>(rows[i].lost_to_recovery); })
      .int64("lost", [&](size_t i) { return static_cast<int64_t>(rows[i].lost); })
      .int64("unroutable", [&](size_t i) { return static_cast<int64_t>(rows[i].unroutable); })
      .text("unreachable", [&](size_t i) { return std::string_view(unreachable[i]); });
  write_table(dir, "link_events", tab);
}

// The control section's packets as one class (docs/control.md): totals over its senders'
// flows, latency over those created after the warm-up. VL15 is not credited, so a control
// packet is lost only where a VL15 buffer overflows. Null without a control section.
Json control_class_json(const Fabric& fabric, const Recorder& rec) {
  uint64_t senders = 0, sent = 0, delivered = 0, dropped = 0, measured = 0, max_ps = 0;
  double sum_ps = 0;
  const auto& flows = fabric.flows();
  for (size_t i = 0; i < flows.size(); ++i) {
    if (!flows[i].control) continue;
    const FlowTotals& ft = rec.flows()[i];
    ++senders;
    sent += ft.injected;
    delivered += ft.delivered;
    dropped += ft.dropped;
    if (ft.latency_ps.empty()) continue;
    measured += ft.latency_ps.count();
    sum_ps += ft.latency_ps.mean() * static_cast<double>(ft.latency_ps.count());
    max_ps = std::max(max_ps, ft.latency_ps.max());
  }
  if (senders == 0) return Json(nullptr);
  const ControlConfig& c = fabric.scenario().control;
  return Json{{"senders", senders},
              {"period_ns", static_cast<double>(c.period.value()) / 1e3},
              {"payload_bytes", c.payload_bytes},
              {"sent", sent},
              {"delivered", delivered},
              {"dropped_vl15_overflow", dropped},
              {"in_flight", sent - delivered - dropped},
              {"latency_ns", Json{{"mean", measured ? sum_ps / static_cast<double>(measured) / 1e3 : NAN},
                                  {"max", measured ? static_cast<double>(max_ps) / 1e3 : NAN}}}};
}

}  // namespace

void write_results(const Fabric& fabric, const RunResult& result, const std::string& dir) {
  const Scenario& sc = fabric.scenario();
  const topo::Topology& t = sc.topology;
  Fabric& f = const_cast<Fabric&>(fabric);
  const Recorder& rec = f.recorder();
  // A run that seed 002's stop rule ended early was measured until then, not until duration.
  const uint64_t end_ps = result.stopped_by == "connections"
                              ? std::min<uint64_t>(sc.duration.value(), static_cast<uint64_t>(result.sim_seconds * 1e12 + 0.5))
                              : sc.duration.value();
  const double measured_s = static_cast<double>(end_ps - std::min<uint64_t>(end_ps, sc.warmup.value())) * 1e-12;
  std::vector<std::string> node_names;
  for (const auto& n : t.nodes) node_names.push_back(utf8_valid(n.name));

  // flows.csv and the flows section of summary.json.
  Json flows_json = Json::array();
  Json video_json = nullptr;  // the video flows' class totals; null without video flows
  Json control_json = nullptr;  // the control section's class totals; left out without one
  {
    struct FlowRow {
      std::string name, src, dst;
      const FlowTotals* ft;
      double thr, fraction;
      LatencyStats lat, net;
      const FrameStreamStats* video;  // nullptr: not a video flow
    };
    FrameClassStats video_class;
    std::vector<FlowRow> rows;
    const auto& flows = fabric.flows();
    for (size_t i = 0; i < flows.size(); ++i) {
      const FlowTotals& ft = rec.flows()[i];
      const FlowConfig& fc = flows[i];
      // Over the part of the measured span in which the flow creates packets: a flow that
      // runs 20 of 100 ms (the seed 004 victim) is judged by those 20 ms.
      const double from_s = static_cast<double>(std::max(sc.warmup.value(), fc.start.value())) * 1e-12;
      const double to_s = static_cast<double>(std::min<uint64_t>(end_ps, fc.stop.value())) * 1e-12;
      const double active_s = std::min(measured_s, to_s - from_s);
      const double thr = active_s > 0 ? static_cast<double>(ft.measured_payload_bytes) / active_s : 0.0;
      const uint32_t src = t.find(fc.src);
      const double cap = fabric.port_rate_bytes_per_s(src, 1);
      const LatencyStats lat = stats_ns(ft.latency_ps);
      const LatencyStats net = stats_ns(ft.network_latency_ps);
      const std::string dst = fc.pattern == DestinationPattern::fixed ? fc.dst
                              : fc.pattern == DestinationPattern::uniform ? "*uniform" : "*hotspot";
      const FrameStreamStats* video = rec.video_stats(static_cast<uint32_t>(i));
      rows.push_back({utf8_valid(fc.name), utf8_valid(fc.src), utf8_valid(dst), &ft, thr, cap > 0 ? thr / cap : 0,
                      lat, net, video});
      if (video) video_class.add(*video);
      flows_json.push_back(Json{{"name", fc.name}, {"src", fc.src}, {"dst", dst}, {"injected", ft.injected},
                                {"delivered", ft.delivered}, {"dropped", ft.dropped}, {"marked", ft.marked},
                                {"throughput_Bps", thr}, {"throughput_fraction", cap > 0 ? thr / cap : 0},
                                {"latency_ns", Json{{"mean", lat.mean}, {"min", lat.min}, {"p50", lat.p50},
                                                    {"p99", lat.p99}, {"max", lat.max}}},
                                {"network_latency_mean_ns", net.mean}});
      Json& fj = flows_json.back();
      for (const char* k :
           {"frames", "frames_missed", "frames_incomplete", "frames_lost", "dmp", "dmt_ns", "inter_frame_mean_ns",
            "inter_frame_sd_ns"})
        fj[k] = nullptr;
      // Multicast flows (docs/multicast.md): delivered counts copies; here per member.
      if (i < sc.flows.size())
        for (const MulticastGroupConfig& g : sc.multicast) {
          if (g.name != fc.dst) continue;
          const std::vector<uint64_t> copies = rec.member_copies(static_cast<uint32_t>(i));
          Json members = Json::object();
          for (size_t m = 0; m < g.members.size() && m < copies.size(); ++m) members[g.members[m]] = copies[m];
          fj["multicast"] = Json{{"group", g.name},
                                 {"delivery", g.delivery == MulticastDelivery::replicate ? "replicate" : "replicated_unicast"},
                                 {"members", members},
                                 {"non_member_copies", rec.non_member_copies(static_cast<uint32_t>(i))}};
        }
      if (video) {
        fj["frames"] = video->frames();
        fj["frames_missed"] = video->missed();
        fj["frames_incomplete"] = video->incomplete();
        fj["frames_lost"] = video->lost();
        fj["dmp"] = video->dmp();
        fj["dmt_ns"] = video->dmt_ps() / 1e3;
        fj["inter_frame_mean_ns"] = video->inter_frame_mean_ps() / 1e3;
        fj["inter_frame_sd_ns"] = video->inter_frame_sd_ps() / 1e3;
      }
    }
    control_json = control_class_json(fabric, rec);
    if (video_class.streams() > 0)
      video_json = Json{{"streams", video_class.streams()},
                        {"frames", video_class.frames()},
                        {"frames_missed", video_class.missed()},
                        {"frames_incomplete", video_class.incomplete()},
                        {"frames_lost", video_class.lost()},
                        {"dmp", video_class.dmp()},
                        {"dmt_ns", video_class.dmt_ps() / 1e3},
                        {"inter_frame_mean_ns", video_class.inter_frame_mean_ps() / 1e3},
                        {"inter_frame_sd_ns", video_class.inter_frame_sd_ps() / 1e3}};
    auto count = [&](uint64_t FlowTotals::*m) { return [&rows, m](size_t r) { return static_cast<int64_t>(rows[r].ft->*m); }; };
    Table tab(rows.size());
    tab.int64("flow", [](size_t r) { return static_cast<int64_t>(r); })
        .text("name", [&](size_t r) -> std::string_view { return rows[r].name; })
        .text("src", [&](size_t r) -> std::string_view { return rows[r].src; })
        .text("dst", [&](size_t r) -> std::string_view { return rows[r].dst; })
        .int64("injected", count(&FlowTotals::injected))
        .int64("delivered", count(&FlowTotals::delivered))
        .int64("dropped", count(&FlowTotals::dropped))
        .int64("marked", count(&FlowTotals::marked))
        .real("throughput_Bps", [&](size_t r) { return rows[r].thr; })
        .real("throughput_fraction", [&](size_t r) { return rows[r].fraction; })
        .real("latency_mean_ns", [&](size_t r) { return rows[r].lat.mean; })
        .real("latency_p50_ns", [&](size_t r) { return rows[r].lat.p50; })
        .real("latency_p99_ns", [&](size_t r) { return rows[r].lat.p99; })
        .real("latency_max_ns", [&](size_t r) { return rows[r].lat.max; })
        .real("network_latency_mean_ns", [&](size_t r) { return rows[r].net.mean; });
    // Video flows only (docs/realtime_metrics.md); NaN (an empty CSV cell) for other flows.
    auto video = [&rows](double (*get)(const FrameStreamStats&)) {
      return [&rows, get](size_t r) { return rows[r].video ? get(*rows[r].video) : std::nan(""); };
    };
    tab.real("frames", video([](const FrameStreamStats& s) { return static_cast<double>(s.frames()); }))
        .real("frames_missed", video([](const FrameStreamStats& s) { return static_cast<double>(s.missed()); }))
        .real("frames_incomplete", video([](const FrameStreamStats& s) { return static_cast<double>(s.incomplete()); }))
        .real("frames_lost", video([](const FrameStreamStats& s) { return static_cast<double>(s.lost()); }))
        .real("dmp", video([](const FrameStreamStats& s) { return s.dmp(); }))
        .real("dmt_ns", video([](const FrameStreamStats& s) { return s.dmt_ps() / 1e3; }))
        .real("inter_frame_mean_ns", video([](const FrameStreamStats& s) { return s.inter_frame_mean_ps() / 1e3; }))
        .real("inter_frame_sd_ns", video([](const FrameStreamStats& s) { return s.inter_frame_sd_ps() / 1e3; }));
    write_table(dir, "flows", tab);
  }

  // ports.csv: every cabled port of every node, per VL.
  {
    struct PortRow {
      uint32_t node;
      uint16_t port;
      std::string vl;
      uint64_t packets_tx, bytes_tx;
      double utilization, busy, blocked;
      uint64_t hwm;
      const link::PortCounters* c;
    };
    std::vector<PortRow> rows;
    const double run_s = result.sim_seconds;
    for (uint32_t n = 0; n < t.nodes.size(); ++n) {
      for (uint16_t p = 1; p <= t.nodes[n].num_ports; ++p) {
        if (t.link_at(n, p) < 0) continue;
        const link::PortCounters& c = fabric.port_counters(n, p);
        const double rate = fabric.port_rate_bytes_per_s(n, p);
        auto row = [&](const std::string& vl, uint64_t pk, uint64_t by, double busy, double blocked, uint64_t hwm) {
          rows.push_back({n, p, vl, pk, by, run_s > 0 ? static_cast<double>(by) / (rate * run_s) : 0, busy, blocked,
                          hwm, &c});
        };
        const double span_ps = run_s * 1e12;
        row("all", c.packets_tx, c.bytes_tx, span_ps > 0 ? static_cast<double>(c.busy_ps) / span_ps : 0,
            span_ps > 0 ? static_cast<double>(c.credit_blocked_ps) / span_ps : 0, 0);
        for (uint8_t vl = 0; vl < ib::kMaxVls; ++vl) {
          const link::VlCounters& v = c.vl[vl];
          if (v.packets_tx == 0 && v.buffer_hwm_blocks == 0 && v.credit_blocked_ps == 0) continue;
          row(std::to_string(vl), v.packets_tx, v.bytes_tx, NAN,
              span_ps > 0 ? static_cast<double>(v.credit_blocked_ps) / span_ps : 0,
              uint64_t{v.buffer_hwm_blocks} * ib::kCreditBlockBytes);
        }
      }
    }
    auto i64 = [](uint64_t v) { return static_cast<int64_t>(v); };
    Table tab(rows.size());
    tab.text("node", [&](size_t r) -> std::string_view { return node_names[rows[r].node]; })
        .int64("port", [&](size_t r) { return int64_t{rows[r].port}; })
        .text("vl", [&](size_t r) -> std::string_view { return rows[r].vl; })
        .int64("packets_tx", [&](size_t r) { return i64(rows[r].packets_tx); })
        .int64("bytes_tx", [&](size_t r) { return i64(rows[r].bytes_tx); })
        .real("utilization", [&](size_t r) { return rows[r].utilization; })
        .real("busy_fraction", [&](size_t r) { return rows[r].busy; })
        .real("credit_blocked_fraction", [&](size_t r) { return rows[r].blocked; })
        .int64("buffer_hwm_bytes", [&](size_t r) { return i64(rows[r].hwm); })
        .int64("packets_rx", [&](size_t r) { return i64(rows[r].c->packets_rx); })
        .int64("vl15_dropped", [&](size_t r) { return i64(rows[r].c->vl15_dropped); })
        .int64("xmit_discards", [&](size_t r) { return i64(rows[r].c->xmit_discards); })
        .int64("fecn_marked", [&](size_t r) { return i64(rows[r].c->fecn_marked); });
    write_table(dir, "ports", tab);
  }

  // rates.csv: one row per (time, series).
  {
    const uint64_t w = sc.outputs.rate_window.value(), step = sc.outputs.rate_step.value();
    const uint64_t end = static_cast<uint64_t>(result.sim_seconds * 1e12 + 0.5);
    struct RateRow {
      uint32_t series;
      uint64_t time_ps;
      double rate;
    };
    std::vector<RateRow> rows;
    std::vector<std::string> names;
    for (const RateSeries& s : rec.series()) {
      const std::vector<double> r = Recorder::sample(s, w, step, end);
      for (size_t k = 0; k < r.size(); ++k)
        rows.push_back({static_cast<uint32_t>(names.size()), (k + 1) * step, r[k]});
      names.push_back(utf8_valid(s.name));
    }
    Table tab(rows.size());
    // Exact picoseconds divided once, so a time reads as its short decimal (2e-05, not 2.0000000000000002e-05).
    tab.real("time_s", [&](size_t r) { return static_cast<double>(rows[r].time_ps) / 1e12; })
        .text("series", [&](size_t r) -> std::string_view { return names[rows[r].series]; })
        .real("rate_Bps", [&](size_t r) { return rows[r].rate; })
        .real("utilization", [&](size_t r) {
          const double cap = rec.series()[rows[r].series].capacity_bytes_per_s;
          return cap > 0 ? rows[r].rate / cap : NAN;
        });
    write_table(dir, "rates", tab);
  }

  // connections and service_levels (CBR connections, seed 002), only when there are some.
  Json connections_json = nullptr;
  if (const ConnectionMetrics* cm = rec.connection_metrics(); cm && cm->size() > 0)
    connections_json = write_connections(*cm, node_names, dir);

  // packets.csv
  if (sc.outputs.packets_csv) {
    const std::vector<PacketRecord>& p = rec.packets();
    auto ns = [](uint64_t ps) { return static_cast<double>(ps) / 1e3; };
    // The output port at each switch that sent it on, "3-1-4" (seed 000 Sec. 3.4: which
    // alternative it took);
    // a route longer than the recorded hops ends in "-...".
    std::vector<std::string> routes(p.size());
    for (size_t r = 0; r < p.size(); ++r) {
      const size_t hops = p[r].hops;  // switches that sent it on
      for (size_t h = 0; h < std::min(hops, ib::kRouteHops); ++h)
        routes[r] += (h ? "-" : "") + std::to_string(p[r].route[h]);
      if (hops > ib::kRouteHops) routes[r] += "-...";
    }
    Table tab(p.size());
    tab.int64("id", [&](size_t r) { return static_cast<int64_t>(p[r].id); })
        .int64("flow", [&](size_t r) { return int64_t{p[r].flow}; })
        .text("src", [&](size_t r) -> std::string_view { return node_names[p[r].src_node]; })
        .text("dst", [&](size_t r) -> std::string_view { return node_names[p[r].dst_node]; })
        .int64("slid", [&](size_t r) { return int64_t{p[r].slid}; })
        .int64("dlid", [&](size_t r) { return int64_t{p[r].dlid}; })
        .int64("sl", [&](size_t r) { return int64_t{p[r].sl}; })
        .int64("vl", [&](size_t r) { return int64_t{p[r].vl}; })
        .int64("wire_bytes", [&](size_t r) { return int64_t{p[r].wire_bytes}; })
        .int64("payload_bytes", [&](size_t r) { return int64_t{p[r].payload_bytes}; })
        .real("created_ns", [&](size_t r) { return ns(p[r].created_ps); })
        .real("injected_ns", [&](size_t r) { return ns(p[r].injected_ps); })
        .real("done_ns", [&](size_t r) { return p[r].done_ps != 0 ? ns(p[r].done_ps) : NAN; })
        .real("latency_ns", [&](size_t r) {
          return p[r].done_ps != 0 && !p[r].drop ? ns(p[r].done_ps - p[r].created_ps) : NAN;
        })
        .int64("hops", [&](size_t r) { return int64_t{p[r].hops}; })
        .text("route", [&](size_t r) -> std::string_view { return routes[r]; })
        .text("status", [&](size_t r) -> std::string_view {
          if (p[r].done_ps == 0) return "in_flight";
          return p[r].drop ? ib::drop_reason_name(static_cast<ib::DropReason>(p[r].drop)) : "delivered";
        })
        .text("drop_node", [&](size_t r) -> std::string_view {
          return p[r].drop ? std::string_view(node_names[p[r].drop_node]) : std::string_view();
        });
    write_table(dir, "packets", tab);
  }

  // paths: per switch and DLID with alternatives, the packets that took each (seed 000 Sec. 3.4).
  if (!fabric.routing().alternatives.empty()) {
    struct PathRow {
      uint32_t node;
      uint16_t dlid;
      uint8_t alternative, port;
      uint64_t packets;
    };
    std::vector<PathRow> rows;
    for (uint32_t n = 0; n < t.nodes.size(); ++n) {
      const sw::Switch* s = t.nodes[n].kind == topo::NodeKind::switch_node ? fabric.switch_at(n) : nullptr;
      if (!s) continue;
      const sw::AltTable& alt = s->alternatives();
      for (uint16_t dlid = 0; dlid < alt.entry.size(); ++dlid) {
        const sw::AltTable::Entry& e = alt.entry[dlid];
        if (e.count < 2) continue;
        const auto& use = s->path_selector().use(dlid);
        for (uint8_t a = 0; a < e.count; ++a) rows.push_back({n, dlid, a, e.port[a], use[a]});
      }
    }
    Table tab(rows.size());
    tab.text("node", [&](size_t r) -> std::string_view { return node_names[rows[r].node]; })
        .int64("dlid", [&](size_t r) { return int64_t{rows[r].dlid}; })
        .text("dst", [&](size_t r) -> std::string_view {
          const uint32_t owner = t.node_of_lid(rows[r].dlid);
          return owner == topo::Topology::npos ? std::string_view() : std::string_view(node_names[owner]);
        })
        .int64("alternative", [&](size_t r) { return int64_t{rows[r].alternative}; })
        .int64("port", [&](size_t r) { return int64_t{rows[r].port}; })
        .int64("packets", [&](size_t r) { return static_cast<int64_t>(rows[r].packets); });
    write_table(dir, "paths", tab);
  }

  // admission: one row per output port of the connection manager (seed 002).
  if (const sm::ConnectionManager* cm = fabric.connections()) {
    const std::vector<AdmissionRow> rows = admission_rows(*cm);
    write_table(dir, "admission", admission_table(*cm, rows, node_names));
  }

  // summary.json
  {
    Json js;
    js["scenario"] = sc.name;
    js["seed"] = sc.seed;
    js["routing"] = fabric.routing().engine;
    js["sim_seconds"] = result.sim_seconds;
    js["stopped_by"] = result.stopped_by;
    js["warmup_seconds"] = static_cast<double>(sc.warmup.value()) / 1e12;
    js["packets"] = Json{{"injected", result.injected}, {"delivered", result.delivered}, {"dropped", result.dropped},
                         {"in_flight", result.in_flight}};
    Json drops = Json::object();
    for (const auto& [why, n] : rec.drops_by_reason()) drops[ib::drop_reason_name(static_cast<ib::DropReason>(why))] = n;
    js["drops"] = drops;
    js["packet_hops"] = result.transmissions;
    js["deadlock"] = result.deadlock ? Json(utf8_valid(result.deadlock_report)) : Json(nullptr);
    js["stuck"] = stuck_json(result);
    js["flows"] = flows_json;
    js["video"] = video_json;
    js["traffic"] = traffic_json(result.traffic);
    js["connections"] = connections_json;
    if (!control_json.is_null()) js["control"] = control_json;
    if (const apps::Perftest* p = fabric.perftest()) js["perftest"] = p->json();
    if (Json fw = firmware_json(fabric); !fw.is_null()) js["firmware"] = std::move(fw);
    if (const sm::InbandSm* smgr = fabric.subnet_manager()) {
      const sm::InbandSmReport& r = smgr->report();
      auto us = [](uint64_t ps) { return static_cast<double>(ps) / 1e6; };
      js["subnet_manager"] = Json{{"mode", "in_band"},
                                  {"up", r.up},
                                  {"error", r.error.empty() ? Json(nullptr) : Json(utf8_valid(r.error))},
                                  {"up_us", us(r.up_ps)},
                                  {"discovered_us", us(r.discovered_ps)},
                                  {"programmed_us", us(r.programmed_ps)},
                                  {"qos_us", us(r.qos_ps)},
                                  {"multicast_us", us(r.multicast_ps)},
                                  {"armed_us", us(r.armed_ps)},
                                  {"smps_sent", r.smps_sent},
                                  {"smps_received", r.smps_received},
                                  {"resends", r.resends},
                                  {"smps_by_phase", Json{{"discover", r.phase_smps[sm::kPhaseDiscover]},
                                                         {"program", r.phase_smps[sm::kPhaseProgram]},
                                                         {"qos", r.phase_smps[sm::kPhaseQos]},
                                                         {"multicast", r.phase_smps[sm::kPhaseMulticast]},
                                                         {"arm", r.phase_smps[sm::kPhaseArm]},
                                                         {"activate", r.phase_smps[sm::kPhaseActivate]}}},
                                  {"smps_by_table", Json{{"sl2vl", r.sl2vl_sets},
                                                         {"vlarb", r.vlarb_sets},
                                                         {"mft", r.mft_sets}}},
                                  {"switches", r.switches},
                                  {"cas", r.cas},
                                  {"links", r.links}};
    }
    if (const LinkEvents* le = fabric.link_events()) {
      // Out of band there is no SM in the run: the block says so and carries the events.
      const std::vector<LinkEventReport> rows = le->report();
      if (!js.contains("subnet_manager")) js["subnet_manager"] = Json{{"mode", "out_of_band"}};
      js["subnet_manager"]["link_events"] = link_events_json(rows);
      write_link_events(rows, dir);
    }
    if (const sm::ConnectionManager* cm = fabric.connections()) js["admission"] = admission_json(*cm);
    if (const MixMetrics* m = fabric.mix_metrics()) {
      js["mix"] = m->json();
      write_phases(*m, dir);
    }
    if (const flit::FlitFabric* ff = fabric.flit_fabric()) {
      const std::vector<FlitClassRow> rows = flit_class_rows(*ff);
      js["flit_router"] = flit_router_json(ff->network().config(), rows);
      // A model error if not 0: the sinks saw a message's flits out of sequence.
      js["flit_router"]["messages_out_of_order"] = ff->network().messages_out_of_order();
      write_table(dir, "flit_classes", flit_classes_table(rows));
    }
    write_json(dir + "/summary.json", js);
  }

  // perftest's report as its tools print it, the text ibvp-sim prints and `ibvp run` shows
  // (docs/perftest.md).
  if (const apps::Perftest* p = fabric.perftest()) {
    std::ofstream txt = open_out(dir + "/perftest.txt");
    txt << p->table();
  }

  // The firmware's hal->log lines, one file for every HCA of the run (docs/firmware.md).
  if (sc.endpoint_model == EndpointModel::hca) {
    std::ofstream log = open_out(dir + "/firmware.log");
    write_firmware_log(fabric, log);
  }

  // The message timeline (outputs.timeline), Chrome trace JSON.
  if (const Timeline* tl = fabric.timeline()) {
    const std::filesystem::path path = std::filesystem::path(dir) / sc.outputs.timeline;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    std::ofstream js = open_out(path.string());
    tl->write(js);
  }

  // run.json: the only file that changes between identical runs.
  write_json(dir + "/run.json",
             Json{{"wall_seconds", result.wall_seconds},
                  {"events", result.events},
                  {"events_per_s", result.wall_seconds > 0 ? static_cast<double>(result.events) / result.wall_seconds : 0},
                  {"packet_hops_per_s",
                   result.wall_seconds > 0 ? static_cast<double>(result.transmissions) / result.wall_seconds : 0},
                  {"peak_rss_bytes", result.peak_rss_bytes},
                  {"packets_allocated", result.packets_allocated}});
}

}  // namespace ibvp::metrics
