#include "platform/builder/link_events.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "models/ib/mad.h"
#include "platform/builder/fabric.h"

namespace ibvp {

namespace {
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

std::string end_name(const topo::Topology& t, uint32_t node, uint16_t port) {
  return t.nodes.at(node).name + "/" + std::to_string(port);
}

std::string us(uint64_t ps) {
  char b[48];
  std::snprintf(b, sizeof b, "%.3f us", static_cast<double>(ps) / 1e6);
  return b;
}
}  // namespace

LinkEvents::LinkEvents(sc_core::sc_module_name name, Fabric& fabric, std::vector<LinkEventConfig> events)
    : sc_core::sc_module(name), fabric_(fabric) {
  const topo::Topology& t = fabric.scenario().topology;
  for (LinkEventConfig& c : events) {
    // The loader checked the name: node/port of a cabled port.
    const size_t slash = c.link.rfind('/');
    const uint32_t node = t.find(c.link.substr(0, slash));
    const int cable = t.link_at(node, static_cast<uint16_t>(std::stoul(c.link.substr(slash + 1))));
    const topo::Link& l = t.links.at(static_cast<size_t>(cable));
    Event e;
    e.cfg = std::move(c);
    e.node_a = l.a.node;
    e.port_a = l.a.port;
    e.node_b = l.b.node;
    e.port_b = l.b.port;
    events_.push_back(std::move(e));
  }
  std::stable_sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) { return a.cfg.at < b.cfg.at; });
  fabric.probe().attach(this);
  SC_HAS_PROCESS(LinkEvents);
  SC_THREAD(run);
}

void LinkEvents::run() {
  uint64_t origin = 0;
  if (const sm::InbandSm* sm = fabric_.subnet_manager()) {
    // In band, the events' clock starts with the flows': when the subnet is up.
    while (!sm->done()) wait(sm->done_event());
    if (!sm->report().up) return;
    origin = sm->report().up_ps;
  }
  // The events and (out of band, with reroute_delay) their reroutes, in time order; at one
  // instant the events go first, so that a reroute sees every cable down by then.
  const SubnetManagerConfig& smc = fabric_.scenario().subnet_manager;
  const bool reroutes = smc.reroute && !fabric_.subnet_manager();
  struct Step {
    uint64_t at_ps;
    bool reroute;
    size_t event;
  };
  std::vector<Step> plan;
  for (size_t i = 0; i < events_.size(); ++i) {
    events_[i].at_ps = origin + events_[i].cfg.at.value();
    plan.push_back({events_[i].at_ps, false, i});
    if (reroutes) plan.push_back({events_[i].at_ps + smc.reroute_delay.value(), true, i});
  }
  std::stable_sort(plan.begin(), plan.end(), [](const Step& a, const Step& b) {
    return a.at_ps != b.at_ps ? a.at_ps < b.at_ps : !a.reroute && b.reroute;
  });
  for (const Step& s : plan) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (s.at_ps > now) wait(sc_core::sc_time::from_value(s.at_ps - now));
    if (s.reroute) reroute(events_[s.event]);
    else apply(events_[s.event]);
  }
}

void LinkEvents::reroute(Event& e) {
  topo::Topology t = fabric_.scenario().topology;
  std::vector<topo::Link> up;
  for (const topo::Link& l : t.links) {
    bool alive = true;
    for (const topo::PortRef& end : {l.a, l.b}) {
      if (const sw::Switch* s = fabric_.switch_at(end.node)) alive = alive && s->link_up(end.port);
      else if (const driver::HostNode* h = fabric_.host_at(end.node)) alive = alive && h->hca.link_up();
    }
    if (alive) up.push_back(l);
  }
  t.links = std::move(up);
  t.index();
  sm::RoutingTables tables;
  try {
    tables = sm::make_routing_engine(fabric_.scenario().routing, fabric_.scenario().routing_options)->compute(t);
  } catch (const std::exception& ex) {
    e.reroute_error = std::string("routing the fabric without its down cables: ") + ex.what();
    return;
  }
  constexpr size_t kBlock = 64;  // LFT blocks as an SM would write them (IBA 14.2.5.10)
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    sw::Switch* s = fabric_.switch_at(n);
    if (!s || n >= tables.lft.size()) continue;
    const sw::Lft& was = s->lft();
    const sw::Lft& now = tables.lft[n];
    const size_t entries = std::max(was.port.size(), now.port.size());
    for (size_t first = 0; first < entries; first += kBlock) {
      ++e.blocks_compared;
      for (size_t lid = first; lid < std::min(entries, first + kBlock); ++lid)
        if (was.lookup(static_cast<uint16_t>(lid)) != now.lookup(static_cast<uint16_t>(lid))) {
          ++e.blocks_changed;
          break;
        }
    }
    s->set_lft(now);
    if (n < tables.alternatives.size()) s->set_alternatives(tables.alternatives[n]);
  }
  e.rerouted_ps = sc_core::sc_time_stamp().value();
}

void LinkEvents::apply(Event& e) {
  // A cable that comes back trains to Init, where an in-band SM arms and activates it (IBA
  // 7.2); out of band nothing would, so it comes back Active, as the cables start.
  const bool in_band = fabric_.subnet_manager() != nullptr;
  const bool up = e.cfg.up;
  // First: taking a port down drops its queued packets at once, and they are this event's.
  e.fired = true;
  latest_ = static_cast<int>(&e - events_.data());
  for (const auto& [node, port] : {std::pair{e.node_a, e.port_a}, std::pair{e.node_b, e.port_b}}) {
    if (sw::Switch* s = fabric_.switch_at(node))
      s->set_link(port, up, in_band ? ib::mad::kPortInit : ib::mad::kPortActive);
    else if (driver::HostNode* h = fabric_.host_at(node))
      h->hca.set_link(up, in_band ? IBVP_PORT_INIT : IBVP_PORT_ACTIVE);
  }
}

void LinkEvents::on_drop(const ib::Packet& p, uint32_t node, uint64_t t_ps) {
  if (latest_ < 0) return;
  if (p.drop == ib::DropReason::link_down) {
    // Dropped at an end of a down cable: the latest event of a cable that ends here.
    size_t target = static_cast<size_t>(latest_);
    for (int i = latest_; i >= 0; --i)
      if (events_[static_cast<size_t>(i)].node_a == node || events_[static_cast<size_t>(i)].node_b == node) {
        target = static_cast<size_t>(i);
        break;
      }
    events_[target].lost_ps.push_back(t_ps);
  } else if (p.drop == ib::DropReason::no_route) {
    events_[static_cast<size_t>(latest_)].unroutable_ps.push_back(t_ps);
  }
}

std::vector<LinkEventReport> LinkEvents::report() const {
  const topo::Topology& t = fabric_.scenario().topology;
  const sm::InbandSm* sm = fabric_.subnet_manager();
  std::vector<LinkEventReport> rows;
  for (size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    LinkEventReport r;
    r.link = e.cfg.link;
    r.end_a = end_name(t, e.node_a, e.port_a);
    r.end_b = end_name(t, e.node_b, e.port_b);
    r.up = e.cfg.up;
    r.fired = e.fired;
    if (!e.fired) {
      rows.push_back(std::move(r));
      continue;
    }
    r.at_ps = e.at_ps;
    // What happened before the next event (on any cable) is this event's.
    uint64_t next = kNever;
    for (size_t j = i + 1; j < events_.size(); ++j)
      if (events_[j].fired && events_[j].at_ps > e.at_ps) {
        next = events_[j].at_ps;
        break;
      }
    auto within = [&](uint64_t ps) { return ps >= e.at_ps && ps < next; };
    bool all_repressed = true;
    for (uint32_t node : {e.node_a, e.node_b}) {
      const sw::Switch* s = fabric_.switch_at(node);
      if (!s) continue;
      for (const sw::Switch::TrapRecord& tr : s->traps()) {
        if (tr.sends == 0 || !within(tr.first_sent_ps)) continue;
        r.trap_sent_ps = r.trap_sent_ps ? std::min(r.trap_sent_ps, tr.first_sent_ps) : tr.first_sent_ps;
        r.trap_sends += tr.sends;
        r.trap_repressed_ps = std::max(r.trap_repressed_ps, tr.repressed_ps);
        all_repressed = all_repressed && tr.repressed_ps != 0;
      }
    }
    // A trap that crossed the dead cable (the LFTs still led there) is lost, and so is a
    // TrapRepress: that switch resends after SubnetTimeout. Until then it is not repressed.
    if (!all_repressed) r.trap_repressed_ps = 0;
    if (sm) {
      for (const sm::InbandTrap& tr : sm->traps())
        if (within(tr.received_ps) && r.trap_received_ps == 0) r.trap_received_ps = tr.received_ps;
      uint64_t first_end = 0, last_end = 0, last_lft = 0;
      for (const sm::InbandSweep& w : sm->sweeps()) {
        if (!within(w.started_ps)) continue;
        ++r.sweeps;
        r.sweep_smps += w.smps;
        r.lft_blocks_set += w.lft_blocks_set;
        r.lft_blocks_compared += w.lft_blocks_total;
        if (!first_end) first_end = w.ended_ps;
        last_end = w.ended_ps;
        last_lft = std::max(last_lft, w.last_lft_answer_ps);
        for (const std::string& n : w.lost)
          if (std::find(r.unreachable.begin(), r.unreachable.end(), n) == r.unreachable.end()) r.unreachable.push_back(n);
        if (!w.error.empty() && r.sweep_error.empty()) r.sweep_error = w.error;
      }
      // Down: routed around when the last changed LFT block is in (the first sweep's end if
      // none changed). Up: when the ports are Active, the last sweep's end.
      if (r.sweep_error.empty()) r.recovered_ps = r.up ? last_end : (last_lft ? last_lft : first_end);
    } else {
      r.recovered_ps = e.rerouted_ps;
      r.sweep_error = e.reroute_error;
      r.lft_blocks_set = e.blocks_changed;
      r.lft_blocks_compared = e.blocks_compared;
    }
    r.lost = e.lost_ps.size();
    r.lost_to_recovery =
        r.recovered_ps ? std::count_if(e.lost_ps.begin(), e.lost_ps.end(), [&](uint64_t ps) { return ps <= r.recovered_ps; })
                       : r.lost;
    r.unroutable = e.unroutable_ps.size();
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string LinkEvents::text(const std::vector<LinkEventReport>& rows) {
  std::string out;
  for (const LinkEventReport& r : rows) {
    std::string line = "link event: " + r.link + " " + (r.up ? "up" : "down");
    if (!r.fired) {
      out += line + ": did not happen (the run ended first)\n";
      continue;
    }
    line += " at " + us(r.at_ps) + ": ";
    if (r.trap_sent_ps) line += "trap " + us(r.trap_sent_ps) + ", ";
    if (r.trap_received_ps) line += "SM read it " + us(r.trap_received_ps) + ", ";
    if (r.recovered_ps && r.sweeps == 0)
      line += "rerouted out of band " + us(r.recovered_ps) + " (" + us(r.recovered_ps - r.at_ps) + " later; " +
              std::to_string(r.lft_blocks_set) + " LFT blocks changed), ";
    else if (r.recovered_ps)
      line += std::string(r.up ? "active again " : "rerouted ") + us(r.recovered_ps) + " (" +
              us(r.recovered_ps - r.at_ps) + " later; " + std::to_string(r.sweeps) + " sweep(s), " +
              std::to_string(r.sweep_smps) + " SMPs, " + std::to_string(r.lft_blocks_set) + " LFT blocks set), ";
    else if (!r.sweep_error.empty())
      line += std::string(r.sweeps ? "sweep failed: " : "reroute failed: ") + r.sweep_error + ", ";
    else if (r.trap_sent_ps == 0)
      line += "no SM in band to reroute, ";
    else
      line += "not rerouted, ";
    if (!r.unreachable.empty()) {
      line += "unreachable now:";
      for (const std::string& n : r.unreachable) line += " " + n;
      line += ", ";
    }
    line += "lost " + std::to_string(r.lost) + " packets (" + std::to_string(r.lost_to_recovery) +
            " before recovery), " + std::to_string(r.unroutable) + " without a route";
    out += line + "\n";
  }
  return out;
}

}  // namespace ibvp
