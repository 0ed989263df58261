#include "platform/umad/serve.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <endian.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <systemc>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/sim/sleep.h"
#include "platform/builder/fabric.h"
#include "platform/params/config_error.h"
#include "platform/scenario/output_paths.h"
#include "platform/umad/client_watch.h"
#include "platform/umad/mad_log.h"

namespace ibvp::umad {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

// SIGINT and SIGTERM end the serving loop (poll returns EINTR); the previous handlers come
// back when it ends.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: poll must return
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

struct Arrival {
  uint32_t node;
  ib::MadDatagram mad;
  uint64_t at_ps;
};

struct Outstanding {
  uint32_t client;
  uint64_t tid;  // as sent, with the client's index in its top 16 bits
  uint64_t deadline_ps;
  SimRequest original;
};

const char* kCommandLine = "command line";

}  // namespace

std::string client_env(const ServerConfig& cfg, const std::string& host) {
  std::string env = cfg.udp_port ? "IBSIM_SERVER_NAME=127.0.0.1 IBSIM_SERVER_PORT=" + std::to_string(cfg.udp_port)
                                 : "IBSIM_SOCKNAME=" + cfg.socket_name;
  if (!host.empty()) env += " SIM_HOST=" + host;
  return env;
}

ServeResult serve_umad(const Scenario& scenario, const ServeOptions& o) {
  if (scenario.endpoint_model != EndpointModel::hca)
    throw ConfigError(scenario.source, "endpoint_model", 0,
                      "--serve-umad needs HCA hosts: management software sends its MADs from a host's HCA",
                      "set endpoint_model: hca (or --set endpoint_model=hca)");
  const topo::Topology& t0 = scenario.topology;
  if (t0.endpoints().empty())
    throw ConfigError(scenario.source, "topology", 0, "the fabric has no endpoint for a client to attach to",
                      "add a host to the topology");
  uint32_t default_host = t0.endpoints().front();
  if (!o.host.empty()) {
    const std::optional<uint32_t> h = find_host(t0, o.host);
    if (!h)
      throw ConfigError(kCommandLine, "--umad-host", 0, "'" + o.host + "' names no endpoint of " + t0.source,
                        "give an endpoint's name, NodeDescription or GUID (0x...): `ibvp topo` lists them");
    default_host = *h;
  }

  if (!o.out_dir.empty()) {
    std::filesystem::create_directories(o.out_dir);
    // The scenario's own outputs (captures) are checked as a normal run checks them.
    prepare_output_files(scenario, o.out_dir);
  }
  Fabric fabric(scenario, o.out_dir);
  const topo::Topology& t = fabric.scenario().topology;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);

  // MADs the hosts' ports received during a kernel step, handled between steps (a socket
  // is no place for a SystemC process).
  std::vector<Arrival> inbox;
  for (uint32_t n : t.endpoints())
    fabric.host_at(n)->hca.set_mad_receiver(
        [&inbox, n](const ib::MadDatagram& m, uint64_t at_ps) { inbox.push_back({n, m, at_ps}); });

  std::vector<std::pair<uint32_t, SimRequest>> arrived;  // from clients, to send at the current time
  std::vector<Outstanding> outstanding;
  uint64_t hold_until_ps = 0;
  MadLog log;
  ServeResult result;
  const auto wall_start = std::chrono::steady_clock::now();
  auto wall = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count(); };
  auto now_ps = [] { return sc_core::sc_time_stamp().value(); };
  auto row = [&](MadEvent e, int client, uint32_t node, uint16_t dlid, uint16_t slid, uint32_t qp,
                 const uint8_t* mad, uint64_t at_ps) {
    MadRow r;
    r.wall_s = wall();
    r.sim_ps = at_ps;
    r.event = e;
    r.client = client;
    r.host = t.nodes[node].name;
    r.dlid = dlid;
    r.slid = slid;
    r.qp = qp;
    r.header = read_header(mad);
    log.add(std::move(r));
  };

  std::optional<Server> server;
  try {
    server.emplace(o.server, t, default_host,
                   [&](uint32_t c, const SimRequest& r) { arrived.emplace_back(c, r); });
  } catch (const std::runtime_error& e) {
    const bool udp = o.server.udp_port != 0;
    throw ConfigError(kCommandLine, udp ? "--umad-port" : "--umad-socket", 0, e.what(),
                      udp ? "stop the other server or choose another --umad-port"
                          : "stop the other server or choose another --umad-socket NAME (clients set IBSIM_SOCKNAME=NAME)");
  }
  // What libumad2sim puts in sysfs is the port as it is now: the LID, LMC and PortState the
  // HCA's SMA holds (an SM may have changed them in band since the build).
  server->port_status = [&](uint32_t node) {
    PortStatus s = topology_port_status(t, node);
    const hca::Hca& h = fabric.host_at(node)->hca;
    s.lid = h.lid();
    s.lmc = h.lmc();
    s.state = h.port_state();
    return s;
  };
  std::vector<nlohmann::ordered_json> attaches;
  server->on_attach = [&](uint32_t c, bool attached) {
    const ClientSlot& cl = server->client(c);
    if (attached) {
      ++result.attaches;
      attaches.push_back({{"client", c}, {"peer", cl.peer}, {"host", t.nodes[cl.node].name},
                          {"sim_ps", now_ps()}, {"wall_s", wall()}});
    }
    // A client's pending requests leave with it: the slot's next client must not get them.
    outstanding.erase(std::remove_if(outstanding.begin(), outstanding.end(),
                                     [c](const Outstanding& x) { return x.client == c; }),
                      outstanding.end());
  };

  auto give_back = [&](uint32_t c, SimRequest r, MadEvent e) {
    r.status = wire_u32_field(kStatusTimedOut);
    const ClientSlot& cl = server->client(c);
    row(e, static_cast<int>(c), cl.node, wire_lid(r.dlid), wire_lid(r.slid), wire_u32(r.dqp), r.mad, now_ps());
    server->send(c, r);
  };

  // A client's MAD goes out of its host's CA port now.
  auto inject = [&] {
    for (auto& [c, req] : arrived) {
      const ClientSlot& cl = server->client(c);
      if (!cl.attached) continue;
      ib::MadDatagram m;
      m.dlid = wire_lid(req.dlid);
      m.dest_qp = wire_u32(req.dqp);
      m.src_qp = wire_u32(req.sqp);
      m.q_key = m.dest_qp == 1 ? ib::kQp1QKey : 0;
      std::copy(std::begin(req.mad), std::end(req.mad), m.mad.begin());
      const MadHeader h = read_header(m.mad.data());
      const bool request = !h.response() && expects_response(h.method);
      uint64_t tid = h.tid;
      if (request) {
        // The MAD layer owns the TID's upper half (as the kernel's puts its agent there):
        // the client's index in the top 16 bits routes the response back to it. libumad2sim
        // keeps its agent in bits 32-47 and libibmad matches the low 32.
        tid = (tid & 0x0000FFFFFFFFFFFFull) | static_cast<uint64_t>(c) << 48;
        for (int i = 0; i < 8; ++i) m.mad[8 + i] = static_cast<uint8_t>(tid >> (56 - 8 * i));
      }
      const uint64_t now = now_ps();
      try {
        fabric.host_at(cl.node)->hca.send_mad(m, now);
      } catch (const std::invalid_argument&) {
        give_back(c, req, MadEvent::refused);
        continue;
      }
      row(MadEvent::to_fabric, static_cast<int>(c), cl.node, m.dlid, fabric.host_at(cl.node)->hca.lid(), m.dest_qp,
          m.mad.data(), now);
      if (request)
        outstanding.push_back({c, tid, now + o.response_timeout_ps, req});
      else
        hold_until_ps = std::max(hold_until_ps, now + o.response_timeout_ps);
    }
    arrived.clear();
  };

  // MADs the ports received go to their clients: a response to the client whose request it
  // answers, a request or trap to the SM running on that host (ibsim's rule too).
  auto deliver = [&] {
    bool any = false;
    for (const Arrival& a : inbox) {
      const MadHeader h = read_header(a.mad.mad.data());
      std::optional<uint32_t> to;
      if (h.response()) {
        const uint32_t c = static_cast<uint32_t>(h.tid >> 48);
        auto it = std::find_if(outstanding.begin(), outstanding.end(), [&](const Outstanding& x) {
          return x.client == c && x.tid == h.tid && server->client(c).node == a.node;
        });
        if (it != outstanding.end()) {
          outstanding.erase(it);
          to = c;
        }
      } else {
        to = server->sm_client_at(a.node);
      }
      if (!to) {
        row(MadEvent::unclaimed, -1, a.node, a.mad.dlid, a.mad.slid, a.mad.dest_qp, a.mad.mad.data(), a.at_ps);
        continue;
      }
      SimRequest r{};
      r.dlid = wire_lid_field(a.mad.dlid);
      r.slid = wire_lid_field(a.mad.slid);
      r.dqp = wire_u32_field(a.mad.dest_qp);
      r.sqp = wire_u32_field(a.mad.src_qp);
      r.status = 0;
      r.length = htobe64(ib::kMadBytes);
      std::copy(a.mad.mad.begin(), a.mad.mad.end(), r.mad);
      row(MadEvent::to_client, static_cast<int>(*to), a.node, a.mad.dlid, a.mad.slid, a.mad.dest_qp, r.mad, a.at_ps);
      server->send(*to, r);
      any = true;
    }
    inbox.clear();
    return any;
  };

  auto expire = [&] {
    const uint64_t now = now_ps();
    bool any = false;
    for (size_t i = 0; i < outstanding.size();) {
      if (outstanding[i].deadline_ps <= now) {
        const Outstanding x = outstanding[i];
        outstanding.erase(outstanding.begin() + static_cast<std::ptrdiff_t>(i));
        give_back(x.client, x.original, MadEvent::timed_out);
        any = true;
      } else {
        ++i;
      }
    }
    return any;
  };

  // After a delivery: the fabric stands still until every client has reacted, collecting
  // the MADs they send meanwhile. A client has reacted when it has read everything handed
  // to it (Server::unread) and all its threads sleep again (process_blocked). The first
  // condition matters: a woken thread can still read as sleeping in /proc while the
  // scheduler's wake-up travels to another CPU (an IPI's latency), so "blocked" alone
  // lets the fabric run on before the client has even seen its MAD. The second look,
  // 200 us later, covers the same race between a client's own threads (a receiver thread
  // waking a worker).
  auto settle = [&] {
    if (o.server.udp_port) {
      server->poll(1);  // UDP clients' processes are not ours to see: a short grace
      return;
    }
    auto reacted = [&] {
      for (uint32_t c = 0; c < kMaxClients; ++c) {
        const ClientSlot& cl = server->client(c);
        if (cl.attached && (server->unread(c) > 0 || !process_blocked(cl.peer))) return false;
      }
      return true;
    };
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(o.settle_ms);
    for (;;) {
      server->poll(0);
      if (reacted()) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        server->poll(0);
        if (reacted()) {
          server->poll(0);  // what a client sent just before it blocked
          return;
        }
      }
      if (std::chrono::steady_clock::now() >= until) return;
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  };

  StopSignals signals;
  if (o.on_ready) o.on_ready(client_env(o.server, o.host));
  for (;;) {
    if (g_stop_signal) {
      result.stopped_by = "signal";
      break;
    }
    const double w = wall();
    if (o.serve_for_s > 0 && w >= o.serve_for_s) {
      result.stopped_by = "serve_for";
      break;
    }
    const int wait_ms = o.serve_for_s > 0
                            ? static_cast<int>(std::min(1000.0, std::ceil((o.serve_for_s - w) * 1000)))
                            : 1000;
    const uint64_t now = now_ps();
    const bool in_flight = !outstanding.empty() || now < hold_until_ps;
    if (!in_flight) {
      // Nothing travels: the fabric stands still until a client sends.
      server->poll(wait_ms);
      inject();
      continue;
    }
    uint64_t target = hold_until_ps > now ? hold_until_ps : UINT64_MAX;
    for (const Outstanding& x : outstanding) target = std::min(target, x.deadline_ps);
    if (sc_core::sc_pending_activity())
      target = std::min<uint64_t>(target, now + sc_core::sc_time_to_pending_activity().value());
    sim::set_run_end(target);  // the HCA cores run ahead no further (models/sim/sleep.h)
    sc_core::sc_start(sc_core::sc_time::from_value(target - now));
    const bool delivered = deliver();
    const bool expired = expire();
    if (delivered || expired) settle();
    else server->poll(0);
    inject();
  }
  fabric.finish();
  for (uint32_t n : t.endpoints()) fabric.host_at(n)->hca.set_mad_receiver(nullptr);

  result.to_fabric = log.count(MadEvent::to_fabric);
  result.to_client = log.count(MadEvent::to_client);
  result.timed_out = log.count(MadEvent::timed_out);
  result.refused = log.count(MadEvent::refused);
  result.unclaimed = log.count(MadEvent::unclaimed);
  result.sim_seconds = static_cast<double>(now_ps()) * 1e-12;
  result.wall_seconds = wall();
  if (!o.out_dir.empty()) {
    log.write_csv((std::filesystem::path(o.out_dir) / "umad_mads.csv").string());
    nlohmann::ordered_json j;
    j["scenario"] = scenario.name;
    j["stopped_by"] = result.stopped_by;
    j["sim_seconds"] = result.sim_seconds;
    j["wall_seconds"] = result.wall_seconds;
    j["response_timeout_ps"] = o.response_timeout_ps;
    j["mads"] = {{"to_fabric", result.to_fabric}, {"to_client", result.to_client}, {"timed_out", result.timed_out},
                 {"refused", result.refused}, {"unclaimed", result.unclaimed}};
    j["datagrams_refused"] = server->refused();
    j["clients"] = attaches;
    std::ofstream f(std::filesystem::path(o.out_dir) / "umad.json");
    f << j.dump(2) << "\n";
  }
  return result;
}

}  // namespace ibvp::umad
