#include "platform/metrics/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "platform/builder/fabric.h"
#include "platform/apps/perftest.h"
#include "platform/builder/runner.h"

namespace ibvp::metrics {

namespace {

std::string num(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::ofstream open_out(const std::string& path) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error(path + ": cannot open for writing (check the --out directory)");
  return f;
}

struct LatencyStats {
  double mean = NAN, min = NAN, p50 = NAN, p99 = NAN, max = NAN;
};

LatencyStats stats_ns(std::vector<uint64_t> v) {
  LatencyStats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (uint64_t x : v) sum += static_cast<double>(x);
  auto at = [&](double q) { return static_cast<double>(v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))]) * 1e-3; };
  s.mean = sum / static_cast<double>(v.size()) * 1e-3;
  s.min = static_cast<double>(v.front()) * 1e-3;
  s.p50 = at(0.5);
  s.p99 = at(0.99);
  s.max = static_cast<double>(v.back()) * 1e-3;
  return s;
}

// The packets stuck at the end of the run (RunResult::stuck), or null.
std::string stuck_json(const RunResult& result) {
  if (!result.stuck) return "null";
  const StuckReport& s = *result.stuck;
  std::ostringstream js;
  js << "{\"packets\": " << s.packets << ", \"outputs\": " << s.outputs
     << ", \"longest_wait_ns\": " << num(static_cast<double>(s.longest_ps) * 1e-3) << ", \"worst\": [";
  for (size_t i = 0; i < s.worst.size(); ++i)
    js << (i ? ", " : "") << "{\"port\": " << quoted(s.worst[i].port) << ", \"vl\": " << int{s.worst[i].vl}
       << ", \"packets\": " << s.worst[i].packets
       << ", \"waiting_ns\": " << num(static_cast<double>(s.worst[i].waiting_ps) * 1e-3) << "}";
  js << "]}";
  return js.str();
}

}  // namespace

void write_results(const Fabric& fabric, const RunResult& result, const std::string& dir) {
  const Scenario& sc = fabric.scenario();
  const topo::Topology& t = sc.topology;
  Fabric& f = const_cast<Fabric&>(fabric);
  const Recorder& rec = f.recorder();
  const double measured_s = static_cast<double>(sc.duration.value() - sc.warmup.value()) * 1e-12;

  // flows.csv and the flows section of summary.json.
  std::ostringstream flows_json;
  {
    std::ofstream csv = open_out(dir + "/flows.csv");
    csv << "flow,name,src,dst,injected,delivered,dropped,marked,throughput_Bps,throughput_fraction,"
           "latency_mean_ns,latency_p50_ns,latency_p99_ns,latency_max_ns,network_latency_mean_ns\n";
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
      csv << i << "," << fc.name << "," << fc.src << "," << dst << "," << ft.injected << "," << ft.delivered << ","
          << ft.dropped << "," << ft.marked << "," << num(thr) << "," << num(cap > 0 ? thr / cap : 0) << "," << num(lat.mean) << ","
          << num(lat.p50) << "," << num(lat.p99) << "," << num(lat.max) << "," << num(net.mean) << "\n";
      flows_json << (i ? ",\n" : "\n") << "    {\"name\": " << quoted(fc.name) << ", \"src\": " << quoted(fc.src)
                 << ", \"dst\": " << quoted(dst) << ", \"injected\": " << ft.injected
                 << ", \"delivered\": " << ft.delivered << ", \"dropped\": " << ft.dropped << ", \"marked\": " << ft.marked
                 << ", \"throughput_Bps\": " << num(thr) << ", \"throughput_fraction\": " << num(cap > 0 ? thr / cap : 0)
                 << ", \"latency_ns\": {\"mean\": " << num(lat.mean) << ", \"min\": " << num(lat.min)
                 << ", \"p50\": " << num(lat.p50) << ", \"p99\": " << num(lat.p99) << ", \"max\": " << num(lat.max)
                 << "}, \"network_latency_mean_ns\": " << num(net.mean) << "}";
    }
  }

  // ports.csv: every cabled port of every node, per VL.
  {
    std::ofstream csv = open_out(dir + "/ports.csv");
    csv << "node,port,vl,packets_tx,bytes_tx,utilization,busy_fraction,credit_blocked_fraction,"
           "buffer_hwm_bytes,packets_rx,vl15_dropped,fecn_marked\n";
    const double run_s = result.sim_seconds;
    for (uint32_t n = 0; n < t.nodes.size(); ++n) {
      for (uint16_t p = 1; p <= t.nodes[n].num_ports; ++p) {
        if (t.link_at(n, p) < 0) continue;
        const link::PortCounters& c = fabric.port_counters(n, p);
        const double rate = fabric.port_rate_bytes_per_s(n, p);
        auto row = [&](const std::string& vl, uint64_t pk, uint64_t by, double busy, double blocked, uint64_t hwm) {
          csv << t.nodes[n].name << "," << p << "," << vl << "," << pk << "," << by << ","
              << num(run_s > 0 ? static_cast<double>(by) / (rate * run_s) : 0) << "," << num(busy) << ","
              << num(blocked) << "," << hwm << "," << c.packets_rx << "," << c.vl15_dropped << "," << c.fecn_marked
              << "\n";
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
  }

  // rates.csv: one row per (time, series).
  {
    std::ofstream csv = open_out(dir + "/rates.csv");
    csv << "time_s,series,rate_Bps,utilization\n";
    const uint64_t w = sc.outputs.rate_window.value(), step = sc.outputs.rate_step.value();
    const uint64_t end = static_cast<uint64_t>(result.sim_seconds * 1e12 + 0.5);
    for (const RateSeries& s : rec.series()) {
      const std::vector<double> r = Recorder::sample(s, w, step, end);
      for (size_t k = 0; k < r.size(); ++k) {
        const double time_s = static_cast<double>((k + 1) * step) * 1e-12;
        csv << num(time_s) << "," << s.name << "," << num(r[k]) << ","
            << (s.capacity_bytes_per_s > 0 ? num(r[k] / s.capacity_bytes_per_s) : std::string()) << "\n";
      }
    }
  }

  // packets.csv
  if (sc.outputs.packets_csv) {
    std::ofstream csv = open_out(dir + "/packets.csv");
    csv << "id,flow,src,dst,slid,dlid,sl,vl,wire_bytes,payload_bytes,created_ns,injected_ns,done_ns,latency_ns,"
           "hops,status,drop_node\n";
    for (const PacketRecord& r : rec.packets()) {
      const bool done = r.done_ps != 0;
      const char* status = !done ? "in_flight" : r.drop ? ib::drop_reason_name(static_cast<ib::DropReason>(r.drop))
                                                         : "delivered";
      csv << r.id << "," << r.flow << "," << t.nodes[r.src_node].name << "," << t.nodes[r.dst_node].name << ","
          << r.slid << "," << r.dlid << "," << int{r.sl} << "," << int{r.vl} << "," << r.wire_bytes << ","
          << r.payload_bytes << "," << num(static_cast<double>(r.created_ps) * 1e-3) << ","
          << num(static_cast<double>(r.injected_ps) * 1e-3) << ","
          << (done ? num(static_cast<double>(r.done_ps) * 1e-3) : "") << ","
          << (done && !r.drop ? num(static_cast<double>(r.done_ps - r.created_ps) * 1e-3) : "") << "," << r.hops
          << "," << status << "," << (r.drop ? t.nodes[r.drop_node].name : "") << "\n";
    }
  }

  // summary.json
  {
    std::ofstream js = open_out(dir + "/summary.json");
    js << "{\n  \"scenario\": " << quoted(sc.name) << ",\n  \"seed\": " << sc.seed
       << ",\n  \"routing\": " << quoted(fabric.routing().engine) << ",\n  \"sim_seconds\": " << num(result.sim_seconds)
       << ",\n  \"warmup_seconds\": " << num(static_cast<double>(sc.warmup.value()) * 1e-12)
       << ",\n  \"packets\": {\"injected\": " << result.injected << ", \"delivered\": " << result.delivered
       << ", \"dropped\": " << result.dropped << ", \"in_flight\": " << result.in_flight << "},\n  \"drops\": {";
    bool first = true;
    for (const auto& [why, n] : rec.drops_by_reason()) {
      js << (first ? "" : ", ") << quoted(ib::drop_reason_name(static_cast<ib::DropReason>(why))) << ": " << n;
      first = false;
    }
    js << "},\n  \"packet_hops\": " << result.transmissions << ",\n  \"deadlock\": "
       << (result.deadlock ? quoted(result.deadlock_report) : "null") << ",\n  \"stuck\": " << stuck_json(result)
       << ",\n  \"flows\": [" << flows_json.str()
       << "\n  ]";
    if (const apps::Perftest* p = fabric.perftest()) js << ",\n  \"perftest\": " << p->json();
    js << "\n}\n";
  }

  // The message timeline (outputs.timeline), Chrome trace JSON.
  if (const Timeline* tl = fabric.timeline()) {
    const std::filesystem::path path = std::filesystem::path(dir) / sc.outputs.timeline;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    std::ofstream js = open_out(path.string());
    tl->write(js);
  }

  // run.json: the only file that changes between identical runs.
  {
    std::ofstream js = open_out(dir + "/run.json");
    js << "{\"wall_seconds\": " << num(result.wall_seconds) << ", \"events\": " << result.events
       << ", \"events_per_s\": " << num(result.wall_seconds > 0 ? static_cast<double>(result.events) / result.wall_seconds : 0)
       << ", \"packet_hops_per_s\": "
       << num(result.wall_seconds > 0 ? static_cast<double>(result.transmissions) / result.wall_seconds : 0) << "}\n";
  }
}

}  // namespace ibvp::metrics
