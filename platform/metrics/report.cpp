#include "platform/metrics/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "platform/builder/fabric.h"
#include "platform/apps/perftest.h"
#include "platform/builder/runner.h"
#include "platform/metrics/csv.h"
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

}  // namespace

void write_results(const Fabric& fabric, const RunResult& result, const std::string& dir) {
  const Scenario& sc = fabric.scenario();
  const topo::Topology& t = sc.topology;
  Fabric& f = const_cast<Fabric&>(fabric);
  const Recorder& rec = f.recorder();
  const double measured_s = static_cast<double>(sc.duration.value() - sc.warmup.value()) * 1e-12;
  std::vector<std::string> node_names;
  for (const auto& n : t.nodes) node_names.push_back(utf8_valid(n.name));

  // flows.csv and the flows section of summary.json.
  Json flows_json = Json::array();
  Json video_json = nullptr;  // the video flows' class totals; null without video flows
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
      const double to_s = static_cast<double>(std::min(sc.duration.value(), fc.stop.value())) * 1e-12;
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
      for (const char* k : {"frames", "frames_missed", "dmp", "dmt_ns", "inter_frame_mean_ns", "inter_frame_sd_ns"})
        fj[k] = nullptr;
      if (video) {
        fj["frames"] = video->frames();
        fj["frames_missed"] = video->missed();
        fj["dmp"] = video->dmp();
        fj["dmt_ns"] = video->dmt_ps() / 1e3;
        fj["inter_frame_mean_ns"] = video->inter_frame_mean_ps() / 1e3;
        fj["inter_frame_sd_ns"] = video->inter_frame_sd_ps() / 1e3;
      }
    }
    if (video_class.streams() > 0)
      video_json = Json{{"streams", video_class.streams()},
                        {"frames", video_class.frames()},
                        {"frames_missed", video_class.missed()},
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

  // packets.csv
  if (sc.outputs.packets_csv) {
    const std::vector<PacketRecord>& p = rec.packets();
    auto ns = [](uint64_t ps) { return static_cast<double>(ps) / 1e3; };
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
        .text("status", [&](size_t r) -> std::string_view {
          if (p[r].done_ps == 0) return "in_flight";
          return p[r].drop ? ib::drop_reason_name(static_cast<ib::DropReason>(p[r].drop)) : "delivered";
        })
        .text("drop_node", [&](size_t r) -> std::string_view {
          return p[r].drop ? std::string_view(node_names[p[r].drop_node]) : std::string_view();
        });
    write_table(dir, "packets", tab);
  }

  // summary.json
  {
    Json js;
    js["scenario"] = sc.name;
    js["seed"] = sc.seed;
    js["routing"] = fabric.routing().engine;
    js["sim_seconds"] = result.sim_seconds;
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
    if (const apps::Perftest* p = fabric.perftest()) js["perftest"] = p->json();
    if (const MixMetrics* m = fabric.mix_metrics()) js["mix"] = m->json();
    write_json(dir + "/summary.json", js);
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
                  {"peak_rss_bytes", result.peak_rss_bytes}});
}

}  // namespace ibvp::metrics
