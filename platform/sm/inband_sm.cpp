#include "platform/sm/inband_sm.h"

#include <algorithm>
#include <sstream>

#include "models/hca/hca.h"
#include "platform/params/config_error.h"
#include "platform/sm/multicast.h"

namespace ibvp::sm {

namespace mad = ib::mad;

namespace {
constexpr uint64_t kNever = ~uint64_t{0};
constexpr size_t kMaxPathHops = 63;  // InitialPath[1..63] (IBA 14.2.1.2)
}  // namespace

InbandSm::InbandSm(sc_core::sc_module_name name, hca::Hca& port, InbandSmOptions options)
    : sc_core::sc_module(name), port_(port), opt_(std::move(options)) {
  if (opt_.max_outstanding == 0) opt_.max_outstanding = 1;
  port_.set_mad_receiver([this](const ib::MadDatagram& m, uint64_t at_ps) { on_mad(m, at_ps); });
  SC_HAS_PROCESS(InbandSm);
  SC_METHOD(serve);
  sensitive << wake_;
  // The sweep starts at time 0: the method's initialization run sends the first SMP.
  discover_node({}, DiscoveredSubnet::npos, 0);
}

std::string InbandSm::path_text(const std::vector<uint8_t>& path) {
  if (path.empty()) return "the SM's own port";
  std::ostringstream s;
  s << "directed route ";
  for (size_t i = 0; i < path.size(); ++i) s << (i ? "," : "") << int(path[i]);
  return s.str();
}

// ---------------------------------------------------------------------------------------
// Requests and responses
// ---------------------------------------------------------------------------------------

void InbandSm::get(uint16_t attr, uint32_t modifier, const std::vector<uint8_t>& path, const std::string& what,
                   Handler h) {
  Request r;
  r.smp = mad::make_directed_smp(mad::kMethodGet, attr, modifier, 0, path.data(), path.size());
  r.what = what + " at " + path_text(path);
  r.on_response = std::move(h);
  send(std::move(r));
}

void InbandSm::set(uint16_t attr, uint32_t modifier, const std::vector<uint8_t>& path, const mad::SmpData& data,
                   const std::string& what, Handler h) {
  Request r;
  r.on_response = std::move(h);
  r.smp = mad::make_directed_smp(mad::kMethodSet, attr, modifier, 0, path.data(), path.size());
  r.smp.data = data;
  r.what = what + " at " + path_text(path);
  send(std::move(r));
}

void InbandSm::send(Request r) {
  r.smp.hdr.transaction_id = next_tid_++;
  queue_.push_back(std::move(r));
  wake_.notify(sc_core::SC_ZERO_TIME);
}

void InbandSm::transmit(Request& r) {
  const uint64_t now = sc_core::sc_time_stamp().value();
  ib::MadDatagram d;
  d.dlid = ib::kPermissiveLid;  // directed route: DrSLID and DrDLID are permissive too
  d.dest_qp = 0;
  d.src_qp = 0;
  mad::encode(r.smp, d.mad);
  ++r.tries;
  r.deadline_ps = now + opt_.transaction_timeout_ps;
  ++report_.smps_sent;
  if (r.smp.directed()) ++report_.directed_route;
  if (r.tries > 1) ++report_.resends;
  if (resweep_) {
    ++sweeps_.back().smps;
  } else {
    const size_t phase = std::min<size_t>(static_cast<size_t>(phase_), report_.phase_smps.size() - 1);
    ++report_.phase_smps[phase];
  }
  port_.send_mad(d, now);
}

void InbandSm::on_mad(const ib::MadDatagram& m, uint64_t at_ps) {
  const mad::Smp s = mad::decode_smp(m.mad);
  if (s.hdr.method == mad::kMethodTrap && s.hdr.attribute_id == mad::kAttrNotice) {
    // Read like a response (the host's mad_processing), then repressed and acted on.
    const uint64_t ready = std::max(at_ps, busy_until_ps_) + opt_.mad_processing_ps;
    busy_until_ps_ = ready;
    trap_inbox_.emplace_back(ready, m);
    const uint64_t now = sc_core::sc_time_stamp().value();
    wake_.notify(sc_core::sc_time::from_value(ready > now ? ready - now : 0));
    return;
  }
  // Only responses to this SM's requests; a stray GetResp is not the sweep's.
  if (s.hdr.method != mad::kMethodGetResp || in_flight_.count(s.hdr.transaction_id) == 0) return;
  const uint64_t ready = std::max(at_ps, busy_until_ps_) + opt_.mad_processing_ps;
  busy_until_ps_ = ready;
  inbox_.emplace_back(ready, s);
  const uint64_t now = sc_core::sc_time_stamp().value();
  wake_.notify(sc_core::sc_time::from_value(ready > now ? ready - now : 0));
}

void InbandSm::serve() {
  const uint64_t now = sc_core::sc_time_stamp().value();
  while (!trap_inbox_.empty() && trap_inbox_.front().first <= now) {
    const ib::MadDatagram m = trap_inbox_.front().second;
    trap_inbox_.pop_front();
    on_trap(m, mad::decode_smp(m.mad), now);
  }
  for (;;) {
    while (!inbox_.empty() && inbox_.front().first <= now && phase_ != Phase::done) {
      const mad::Smp s = inbox_.front().second;
      inbox_.pop_front();
      const auto it = in_flight_.find(s.hdr.transaction_id);
      if (it == in_flight_.end()) continue;  // answered twice (a resend crossed the reply)
      Request r = std::move(it->second);
      in_flight_.erase(it);
      ++report_.smps_received;
      if (s.status_code() != mad::kStatusOk) {
        std::ostringstream why;
        why << r.what << " was answered with status 0x" << std::hex << s.status_code();
        fail(why.str());
        break;
      }
      if (r.on_response) r.on_response(s);
    }
    if (phase_ == Phase::done) break;
    for (auto& [tid, r] : in_flight_) {
      if (r.deadline_ps > now) continue;
      if (r.tries > opt_.retries) {
        fail(r.what + " got no response after " + std::to_string(r.tries) + " tries");
        break;
      }
      transmit(r);
    }
    if (phase_ == Phase::done) break;
    while (in_flight_.size() < opt_.max_outstanding && !queue_.empty()) {
      Request r = std::move(queue_.front());
      queue_.pop_front();
      transmit(r);
      const uint64_t tid = r.smp.hdr.transaction_id;
      in_flight_.emplace(tid, std::move(r));
    }
    if (!queue_.empty() || !in_flight_.empty() || !inbox_.empty()) break;
    phase_ended();  // may queue the next phase's requests
    // A resweep's phase with nothing to send (no LFT block changed) ends at once.
    if (queue_.empty() && phase_ == Phase::done) break;
  }
  uint64_t next = kNever;
  if (!inbox_.empty()) next = std::min(next, inbox_.front().first);
  for (const auto& [tid, r] : in_flight_) next = std::min(next, r.deadline_ps);
  if (phase_ == Phase::done) next = kNever;
  if (!trap_inbox_.empty()) next = std::min(next, trap_inbox_.front().first);
  if (next != kNever) wake_.notify(sc_core::sc_time::from_value(next > now ? next - now : 0));
}

void InbandSm::fail(const std::string& why) {
  phase_ = Phase::done;
  queue_.clear();
  in_flight_.clear();
  inbox_.clear();
  if (resweep_) {
    // The subnet stays up on the tables it had; the sweep's record says why it stopped.
    sweeps_.back().error = why;
    sweeps_.back().ended_ps = sc_core::sc_time_stamp().value();
    resweep_ = sweep_again_ = false;
    return;
  }
  report_.error = why;
  done_.notify(sc_core::SC_ZERO_TIME);
  if (pause_when_done_) sc_core::sc_pause();
}

void InbandSm::phase_ended() {
  const uint64_t now = sc_core::sc_time_stamp().value();
  switch (phase_) {
    case Phase::discover:
      if (resweep_) {
        sweeps_.back().discovered_ps = now;
        try {
          route();
        } catch (const std::exception& e) {
          fail(std::string("routing the discovered subnet: ") + e.what());
          return;
        }
        phase_ = Phase::program;
        reprogram();
        return;
      }
      report_.discovered_ps = now;
      try {
        route();
      } catch (const std::exception& e) {
        fail(std::string("routing the discovered subnet: ") + e.what());
        return;
      }
      report_.routed_ps = sc_core::sc_time_stamp().value();
      phase_ = Phase::program;
      program();
      return;
    case Phase::program:
      if (resweep_) {
        // The nodes seen for the first time get their SL2VL and VLArb tables, now that their
        // SwitchInfo is read.
        phase_ = Phase::qos;
        for (size_t i = 0; i < fresh_.size() && phase_ == Phase::qos; ++i) program_qos(fresh_[i]);
        return;
      }
      report_.programmed_ps = now;
      phase_ = Phase::qos;
      for (uint32_t n = 0; n < subnet_.nodes().size() && phase_ == Phase::qos; ++n) program_qos(n);
      return;
    case Phase::qos:
      if (resweep_) {
        // The ports that came up since (link training leaves them in Init) are armed, then
        // activated, as in the first sweep (IBA 7.2).
        to_activate_.clear();
        for (const DiscoveredNode& d : subnet_.nodes())
          for (const auto& [p, pi] : d.ports)
            if (p != 0 && pi.port_phys_state == mad::kPhysLinkUp && pi.port_state == mad::kPortInit)
              to_activate_.emplace_back(d.path, p, pi);
        if (to_activate_.empty()) return end_sweep();
        phase_ = Phase::arm;
        set_port_state(mad::kPortArmed);
        return;
      }
      report_.qos_ps = now;
      phase_ = Phase::multicast;
      program_multicast(false);
      return;
    case Phase::multicast:
      report_.multicast_ps = now;
      phase_ = Phase::arm;
      set_port_state(mad::kPortArmed);
      return;
    case Phase::arm:
      if (resweep_) {
        phase_ = Phase::activate;
        set_port_state(mad::kPortActive);
        return;
      }
      report_.armed_ps = now;
      phase_ = Phase::activate;
      set_port_state(mad::kPortActive);
      return;
    case Phase::activate:
      if (resweep_) {
        sweeps_.back().ports_activated = static_cast<uint32_t>(to_activate_.size());
        return end_sweep();
      }
      report_.up_ps = now;
      report_.up = true;
      phase_ = Phase::done;
      done_.notify(sc_core::SC_ZERO_TIME);
      if (pause_when_done_) sc_core::sc_pause();
      return;
    case Phase::done:
      return;
  }
}

// ---------------------------------------------------------------------------------------
// Discovery (IBA 14.4.4 sweeps; directed routes of 14.2.2)
// ---------------------------------------------------------------------------------------

void InbandSm::discover_node(const std::vector<uint8_t>& path, uint32_t from, uint8_t from_port) {
  if (path.size() > kMaxPathHops) {
    fail("the fabric is deeper than a directed route reaches (" + std::to_string(kMaxPathHops) + " hops) at " +
         path_text(path));
    return;
  }
  get(mad::kAttrNodeInfo, 0, path, "NodeInfo", [this, path, from, from_port](const mad::Smp& s) {
    on_node_info(mad::NodeInfo::decode(s.data), path, from, from_port);
  });
}

void InbandSm::on_node_info(const mad::NodeInfo& info, const std::vector<uint8_t>& path, uint32_t from,
                            uint8_t from_port) {
  const uint32_t known = subnet_.find(info.node_guid);
  if (known != DiscoveredSubnet::npos) {
    // Seen before by another route: only the cable is new.
    if (from != DiscoveredSubnet::npos) subnet_.connect(from, from_port, known, info.local_port_num);
    return;
  }
  const uint32_t n = subnet_.add(info, path);
  if (from != DiscoveredSubnet::npos) subnet_.connect(from, from_port, n, info.local_port_num);
  get(mad::kAttrNodeDescription, 0, path, "NodeDescription",
      [this, n](const mad::Smp& s) { subnet_.nodes()[n].description = mad::NodeDescription::decode(s.data).text; });
  if (info.node_type == mad::kNodeSwitch) {
    ++(resweep_ ? sweeps_.back().switches : report_.switches);
    for (uint8_t p = 0; p <= info.num_ports; ++p) {
      get(mad::kAttrPortInfo, p, path, "PortInfo of port " + std::to_string(p),
          [this, n, p, path, entry = info.local_port_num, from](const mad::Smp& s) {
            const mad::PortInfo pi = mad::PortInfo::decode(s.data);
            subnet_.nodes()[n].ports[p] = pi;
            // A port with its link up leads to a neighbour; the one the SM came in by is
            // already known.
            if (p == 0 || pi.port_phys_state != mad::kPhysLinkUp) return;
            if (p == entry && from != DiscoveredSubnet::npos) return;
            std::vector<uint8_t> next = path;
            next.push_back(p);
            discover_node(next, n, p);
          });
    }
    return;
  }
  ++(resweep_ ? sweeps_.back().cas : report_.cas);
  const uint8_t p = info.local_port_num;
  get(mad::kAttrPortInfo, p, path, "PortInfo of port " + std::to_string(p),
      [this, n, p, path](const mad::Smp& s) {
        const mad::PortInfo pi = mad::PortInfo::decode(s.data);
        subnet_.nodes()[n].ports[p] = pi;
        // A CA forwards no SMP (IBA 14.2.2): only the SM's own CA leads on, out of its port.
        if (!path.empty() || pi.port_phys_state != mad::kPhysLinkUp) return;
        discover_node({p}, n, p);
      });
}

// ---------------------------------------------------------------------------------------
// Routing and programming
// ---------------------------------------------------------------------------------------

void InbandSm::route() {
  topology_ = subnet_.to_topology(opt_.guid2lid, opt_.lmc, opt_.source);
  (resweep_ ? sweeps_.back().links : report_.links) = static_cast<uint32_t>(topology_.links.size());
  RoutingOptions ro;
  for (uint64_t g : opt_.root_guids) {
    const uint32_t n = subnet_.find(g);
    if (n != DiscoveredSubnet::npos) ro.roots.push_back(n);
  }
  tables_ = make_routing_engine(opt_.routing, ro)->compute(topology_);
}

void InbandSm::program() {
  const uint16_t top = topology_.max_lid();
  for (uint32_t n = 0; n < subnet_.nodes().size(); ++n) {
    program_node(n, top, false);
    known_[subnet_.nodes()[n].node_guid] = subnet_.nodes()[n].description;
  }
}

void InbandSm::program_node(uint32_t n, uint16_t top, bool changed_only) {
  const uint16_t sm_lid = topology_.nodes.at(0).lid;  // node 0 is the SM's own CA
  DiscoveredNode& d = subnet_.nodes()[n];
  const topo::Node& t = topology_.nodes[n];
  if (!changed_only) {
    // PortInfo of the port that carries the node's LID: a switch's port 0, a CA's port.
    const auto lid_port = d.is_switch() ? d.ports.find(0) : d.ports.begin();
    if (lid_port == d.ports.end()) return;
    // What the SM now knows of the port (the Sets below of Armed and Active start from it).
    lid_port->second.lid = t.lid;
    lid_port->second.lmc = t.lmc;
    lid_port->second.master_sm_lid = sm_lid;
    lid_port->second.subnet_timeout = opt_.subnet_timeout;
    mad::PortInfo pi = lid_port->second;
    pi.port_state = mad::kPortNoChange;
    pi.port_phys_state = mad::kPhysNoChange;
    pi.link_down_default_state = 0;  // no change
    mad::SmpData data{};
    pi.encode(data);
    set(mad::kAttrPortInfo, lid_port->first, d.path, data, "Set PortInfo (LID " + std::to_string(t.lid) + ")");
  }
  if (!d.is_switch()) return;
  // A resweep keeps LinearFDBTop unless the LIDs grew past it: entries above the new top of
  // a node that left are cleared by the blocks below.
  const auto old_top = programmed_top_.find(d.node_guid);
  const uint16_t was_top = old_top == programmed_top_.end() ? 0 : old_top->second;
  const uint16_t new_top = changed_only ? std::max(top, was_top) : top;
  if (!changed_only || new_top > was_top) {
    // LinearFDBTop first, then the blocks up to it (IBA 14.2.5.4, 14.2.5.10).
    get(mad::kAttrSwitchInfo, 0, d.path, "SwitchInfo", [this, n, new_top](const mad::Smp& s) {
      mad::SwitchInfo si = mad::SwitchInfo::decode(s.data);
      optimized_sl2vl_[subnet_.nodes()[n].node_guid] = si.optimized_sl2vl_programming != 0;
      si.linear_fdb_top = new_top;
      si.port_state_change = true;  // writing 1 clears it
      mad::SmpData out{};
      si.encode(out);
      set(mad::kAttrSwitchInfo, 0, subnet_.nodes()[n].path, out, "Set SwitchInfo");
    });
  }
  programmed_top_[d.node_guid] = new_top;
  const sw::Lft& lft = tables_.lft.at(n);
  sw::Lft& was = programmed_[d.node_guid];
  const uint32_t blocks = new_top / mad::LftBlock::kEntries + 1u;
  if (was.port.size() < blocks * mad::LftBlock::kEntries) was.port.resize(blocks * mad::LftBlock::kEntries, sw::Lft::kNoRoute);
  for (uint32_t block = 0; block < blocks; ++block) {
    mad::LftBlock b;
    bool same = true;
    for (uint32_t i = 0; i < mad::LftBlock::kEntries; ++i) {
      const uint16_t lid = static_cast<uint16_t>(block * mad::LftBlock::kEntries + i);
      b.port[i] = lft.lookup(lid);
      same = same && was.port[lid] == b.port[i];
      was.port[lid] = b.port[i];
    }
    if (resweep_) ++sweeps_.back().lft_blocks_total;
    // OpenSM's resweep writes only the blocks that differ from what the switch holds.
    if (changed_only && same) continue;
    mad::SmpData out{};
    b.encode(out);
    Handler answered;
    if (resweep_) {
      ++sweeps_.back().lft_blocks_set;
      answered = [this](const mad::Smp&) { sweeps_.back().last_lft_answer_ps = sc_core::sc_time_stamp().value(); };
    }
    set(mad::kAttrLinearForwardingTable, block, d.path, out, "Set LFT block " + std::to_string(block),
        std::move(answered));
  }
}

// ---------------------------------------------------------------------------------------
// Traps and sweeps after the subnet is up (IBA 13.4.9, 14.2.5.1, 14.3.7; OpenSM's heavy
// sweep on a trap)
// ---------------------------------------------------------------------------------------

void InbandSm::on_trap(const ib::MadDatagram& m, const mad::Smp& s, uint64_t ready_ps) {
  const mad::Notice n = mad::Notice::decode(s.data);
  // A resend of a trap already read (its repress was late or lost) is repressed again and
  // starts nothing new.
  bool resent = false;
  for (const InbandTrap& t : traps_) resent = resent || (t.tid == s.hdr.transaction_id && t.issuer_lid == n.issuer_lid);
  if (!resent) traps_.push_back({ready_ps, n.issuer_lid, n.trap_number, s.hdr.transaction_id});
  // TrapRepress: the trap's TID and Notice back to its sender, LID-routed (IBA 13.4.9), so
  // that it stops resending.
  mad::Smp r = s;
  r.hdr.method = mad::kMethodTrapRepress;
  r.hdr.status = 0;
  ib::MadDatagram d;
  d.dlid = m.slid;
  d.dest_qp = 0;
  d.src_qp = 0;
  mad::encode(r, d.mad);
  port_.send_mad(d, ready_ps);
  if (resent || !report_.up) return;  // the first sweep is still running: it sees the fabric as it is
  // Trap 128: a port changed state. OpenSM sweeps again (heavy) on it; one that comes during
  // a sweep asks for one more after it, since that sweep may have read the port before.
  if (n.trap_number != mad::kTrapLinkStateChange) return;
  if (phase_ != Phase::done) {
    sweep_again_ = true;
    return;
  }
  start_sweep();
}

void InbandSm::start_sweep() {
  resweep_ = true;
  phase_ = Phase::discover;
  subnet_ = DiscoveredSubnet{};
  InbandSweep w;
  w.started_ps = sc_core::sc_time_stamp().value();
  sweeps_.push_back(std::move(w));
  discover_node({}, DiscoveredSubnet::npos, 0);
}

void InbandSm::reprogram() {
  InbandSweep& w = sweeps_.back();
  fresh_.clear();
  std::map<uint64_t, std::string> found;
  for (const DiscoveredNode& d : subnet_.nodes()) found[d.node_guid] = d.description;
  for (const auto& [guid, name] : known_)
    if (!found.count(guid)) w.lost.push_back(name);
  const uint16_t top = topology_.max_lid();
  for (uint32_t n = 0; n < subnet_.nodes().size(); ++n) {
    // A node seen for the first time gets everything; the others only what changed. A node
    // keeps its SL2VL and VLArb tables over a link event, so only a new one gets them (in
    // the qos phase, once its SwitchInfo is in).
    const bool seen = known_.count(subnet_.nodes()[n].node_guid) != 0;
    program_node(n, top, seen);
    if (!seen) fresh_.push_back(n);
  }
  // The groups' trees on the new graph: a tree that crossed a cable now down moves.
  program_multicast(true);
  known_ = std::move(found);
}

void InbandSm::end_sweep() {
  sweeps_.back().ended_ps = sc_core::sc_time_stamp().value();
  phase_ = Phase::done;
  resweep_ = false;
  if (sweep_again_) {
    sweep_again_ = false;
    start_sweep();
  }
}

// ---------------------------------------------------------------------------------------
// QoS tables (IBA 7.6.6 SL to VL mapping, 7.6.9 VL arbitration; attributes 14.2.5.8,
// 14.2.5.9) and multicast forwarding (14.2.5.12), as OpenSM's osm_qos.c and osm_mcast_mgr.c
// write them
// ---------------------------------------------------------------------------------------

void InbandSm::program_qos(uint32_t n) {
  DiscoveredNode& d = subnet_.nodes()[n];
  const bool is_switch = d.is_switch();
  const InbandQos& q = opt_.qos;
  mad::SlToVlTable t;
  const sw::Sl2VlTable& sl2vl = is_switch ? q.switch_sl2vl : q.ca_sl2vl;
  std::copy(sl2vl.begin(), sl2vl.end(), t.vl.begin());
  mad::SmpData table{};
  t.encode(table);
  auto count = [this](uint64_t& sets) {
    if (!resweep_) ++sets;
  };
  if (!is_switch) {
    // A CA port's one table (AttributeModifier 0).
    count(report_.sl2vl_sets);
    set(mad::kAttrSlToVlMappingTable, 0, d.path, table, "Set SLtoVLMappingTable");
  } else if (optimized_sl2vl_[d.node_guid]) {
    // IBA 14.2.5.8: a switch that reports OptimizedSLtoVLMappingProgramming takes one Set for
    // every input and output port (AttributeModifier bits 17 and 16), as OpenSM sends it
    // with use_optimized_slvl.
    count(report_.sl2vl_sets);
    set(mad::kAttrSlToVlMappingTable, mad::kSl2VlAllInputs | mad::kSl2VlAllOutputs, d.path, table,
        "Set SLtoVLMappingTable (all ports)");
  } else {
    // One table per (input, output) pair, ports 0..N: the builder loads every pair.
    for (uint16_t out = 0; out <= d.num_ports; ++out)
      for (uint16_t in = 0; in <= d.num_ports; ++in) {
        count(report_.sl2vl_sets);
        set(mad::kAttrSlToVlMappingTable, mad::sl2vl_modifier(static_cast<uint8_t>(in), static_cast<uint8_t>(out)),
            d.path, table,
            "Set SLtoVLMappingTable " + std::to_string(in) + " -> " + std::to_string(out));
      }
  }
  // VLArbitrationTable of every output that carries data: a switch's cabled ports, a CA's
  // port. Blocks 1-2 hold the low table's entries 0-31 and 32-63, blocks 3-4 the high
  // table's (IBA 14.2.5.9), as far as the port's VLArbitrationLowCap / HighCap reach.
  const link::VlArbConfig& arb = is_switch ? q.switch_vlarb : q.ca_vlarb;
  for (auto& [p, pi] : d.ports) {
    if (is_switch && (p == 0 || pi.port_phys_state != mad::kPhysLinkUp)) continue;
    for (const bool high : {false, true}) {
      const std::vector<link::VlArbEntry>& entries = high ? arb.high : arb.low;
      const uint8_t cap = high ? pi.vl_arbitration_high_cap : pi.vl_arbitration_low_cap;
      if (entries.size() > cap) {
        fail(std::string("the ") + (high ? "high" : "low") + "-priority VLArb table has " +
             std::to_string(entries.size()) + " entries, and port " + std::to_string(p) + " at " + path_text(d.path) +
             " takes " + std::to_string(cap));
        return;
      }
      for (uint32_t half = 0; half < 2 && half * mad::VlArbBlock::kEntries < cap; ++half) {
        mad::VlArbBlock b;
        for (uint32_t i = 0; i < mad::VlArbBlock::kEntries; ++i) {
          const size_t e = half * mad::VlArbBlock::kEntries + i;
          if (e < entries.size()) b.entry[i] = mad::VlArbEntry{entries[e].vl, entries[e].weight};
        }
        mad::SmpData data{};
        b.encode(data);
        const uint8_t block = static_cast<uint8_t>((high ? mad::kVlArbHigh0 : mad::kVlArbLow0) + half);
        count(report_.vlarb_sets);
        set(mad::kAttrVlArbitrationTable, mad::vlarb_modifier(is_switch ? p : 0, block), d.path, data,
            "Set VLArbitrationTable block " + std::to_string(block) + " of port " + std::to_string(p));
      }
    }
    // PortInfo:VLHighLimit (IBA 14.2.5.6) goes with the arm phase's PortInfo Set, which
    // starts from what the SM stores of the port.
    pi.vl_high_limit = arb.high_limit;
  }
}

void InbandSm::program_multicast(bool changed_only) {
  if (opt_.multicast.empty()) return;
  std::vector<sw::Mft> mft(topology_.nodes.size());
  for (const InbandMulticastGroup& g : opt_.multicast) {
    // A node the sweep did not find: the first sweep fails (the scenario names it); a
    // resweep builds the tree without it (a partition), or drops the group without its source.
    auto node_of = [&](uint64_t guid, const char* role) {
      const uint32_t n = subnet_.find(guid);
      if (n == DiscoveredSubnet::npos && !changed_only) {
        std::ostringstream why;
        why << "multicast group MLID 0x" << std::hex << g.mlid << ": its " << role << " (NodeGUID 0x" << guid
            << ") was not discovered";
        fail(why.str());
      }
      return n;
    };
    MulticastGroup mg;
    mg.mlid = g.mlid;
    for (uint64_t m : g.member_guids)
      if (const uint32_t n = node_of(m, "member"); n != DiscoveredSubnet::npos) mg.members.push_back(n);
    const uint32_t source = node_of(g.source_guid, "source");
    if (phase_ == Phase::done) return;
    if (source == DiscoveredSubnet::npos || mg.members.empty()) continue;
    mg.senders.push_back(source);
    MulticastTables tables;
    try {
      tables = compute_multicast_tables(topology_, {mg},
                                        g.shared_tree ? MulticastMode::shared_tree : MulticastMode::source_trees);
    } catch (const std::exception& e) {
      fail(std::string("multicast trees on the discovered subnet: ") + e.what());
      return;
    }
    // One group at a time, merged per switch, as the builder merges them.
    for (uint32_t n = 0; n < mft.size(); ++n) {
      const sw::Mft& m = tables.mft.at(n);
      for (size_t e = 0; e < m.port_mask.size(); ++e)
        if (m.port_mask[e].any()) mft[n].entry(static_cast<uint16_t>(sw::Mft::kMlidBase + e)) |= m.port_mask[e];
    }
  }
  // IBA 14.2.5.12: a block is 32 MLIDs of one position (16 ports). The switches start with
  // empty tables, so the first sweep writes only blocks with a port set; a resweep writes
  // the blocks that differ from what it wrote before (OpenSM's behaviour for LFTs too).
  for (uint32_t n = 0; n < mft.size(); ++n) {
    const DiscoveredNode& d = subnet_.nodes()[n];
    if (!d.is_switch()) continue;
    sw::Mft& was = programmed_mft_[d.node_guid];
    const size_t entries = std::max(mft[n].port_mask.size(), was.port_mask.size());
    const size_t blocks = (entries + mad::MftBlock::kEntries - 1) / mad::MftBlock::kEntries;
    for (uint16_t block = 0; block < blocks; ++block)
      for (uint8_t position = 0; position * sw::Mft::kPortsPerPosition <= d.num_ports; ++position) {
        mad::MftBlock b;
        bool any = false, same = true;
        for (uint32_t i = 0; i < mad::MftBlock::kEntries; ++i) {
          const uint16_t mlid = static_cast<uint16_t>(sw::Mft::kMlidBase + block * mad::MftBlock::kEntries + i);
          if (!sw::Mft::is_mlid(mlid)) continue;
          b.port_mask[i] = mft[n].port_mask_word(mlid, position);
          any = any || b.port_mask[i] != 0;
          same = same && b.port_mask[i] == was.port_mask_word(mlid, position);
        }
        if (changed_only ? same : !any) continue;
        mad::SmpData data{};
        b.encode(data);
        if (resweep_) ++sweeps_.back().mft_blocks_set;
        else ++report_.mft_sets;
        set(mad::kAttrMulticastForwardingTable, mad::mft_modifier(position, block), d.path, data,
            "Set MFT block " + std::to_string(block) + " position " + std::to_string(position));
      }
    was = mft[n];
  }
}

void InbandSm::set_port_state(uint8_t state) {
  if (resweep_) {
    for (const auto& [path, p, stored] : to_activate_) {
      mad::PortInfo pi = stored;
      pi.port_state = state;
      pi.port_phys_state = mad::kPhysNoChange;
      pi.link_down_default_state = 0;
      mad::SmpData data{};
      pi.encode(data);
      set(mad::kAttrPortInfo, p, path, data,
          std::string("Set PortInfo ") + (state == mad::kPortArmed ? "Armed" : "Active") + " on port " +
              std::to_string(p));
    }
    return;
  }
  for (const DiscoveredNode& d : subnet_.nodes()) {
    for (const auto& [p, stored] : d.ports) {
      if (p == 0 || stored.port_phys_state != mad::kPhysLinkUp) continue;
      mad::PortInfo pi = stored;
      pi.port_state = state;
      pi.port_phys_state = mad::kPhysNoChange;
      pi.link_down_default_state = 0;
      mad::SmpData data{};
      pi.encode(data);
      set(mad::kAttrPortInfo, p, d.path, data,
          std::string("Set PortInfo ") + (state == mad::kPortArmed ? "Armed" : "Active") + " on port " +
              std::to_string(p));
    }
  }
}

}  // namespace ibvp::sm
