#include "models/flit/flit_fabric.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>

namespace ibvp::flit {

FlitFabric::FlitFabric(sc_core::sc_module_name name, const Options& opt, const std::vector<Router>& routers,
                       const std::vector<Edge>& edges, ib::PacketPool& packets, link::PayloadPool& payloads,
                       sim::Probe& probe)
    : sc_module(name),
      opt_(opt),
      cycle_ps_(opt.flit.flit_cycle_ps()),
      packets_(packets),
      payloads_(payloads),
      probe_(probe),
      net_(opt.flit),
      wake_("wake") {
  for (const Router& r : routers) {
    router_of_[r.node] = net_.add_router(static_cast<uint16_t>(r.ports + 1));
    switch_of_flit_node_.resize(router_of_[r.node] + 1, ~uint32_t{0});
    switch_of_flit_node_[router_of_[r.node]] = r.node;
  }
  edges_.reserve(edges.size());
  for (const Edge& e : edges) {
    const size_t i = edges_.size();
    edges_.emplace_back();
    EdgePort& p = edges_.back();
    p.sw_node = e.sw_node;
    p.sw_port = e.sw_port;
    p.ca_node = e.ca_node;
    p.flit_node = net_.add_endpoint();
    switch_of_flit_node_.resize(p.flit_node + 1, ~uint32_t{0});
    const std::string n = std::to_string(e.sw_node) + "_" + std::to_string(e.sw_port);
    p.rx = std::make_unique<InSocket>(("rx" + n).c_str());
    p.tx = std::make_unique<OutSocket>(("tx" + n).c_str());
    p.rx->register_nb_transport_fw(this, &FlitFabric::on_rx, static_cast<int>(i));
    p.tx->register_nb_transport_bw(this, &FlitFabric::on_tx_bw, static_cast<int>(i));
    net_.connect(p.flit_node, 0, router_of_.at(e.sw_node), e.sw_port);
    edge_of_[{e.sw_node, e.sw_port}] = i;
    edge_of_ca_[e.ca_node] = i;
    if (edge_of_flit_node_.size() <= p.flit_node) edge_of_flit_node_.resize(p.flit_node + 1, ~size_t{0});
    edge_of_flit_node_[p.flit_node] = i;
  }
  net_.set_listener(this);
  SC_METHOD(tick);
  sensitive << wake_;
  dont_initialize();
}

void FlitFabric::connect(uint32_t sw_a, uint16_t port_a, uint32_t sw_b, uint16_t port_b) {
  net_.connect(router_of_.at(sw_a), port_a, router_of_.at(sw_b), port_b);
}

void FlitFabric::set_route(uint32_t sw, uint32_t ca, uint16_t port) {
  net_.set_route(router_of_.at(sw), edges_.at(edge_of_ca_.at(ca)).flit_node, port);
}

void FlitFabric::set_lids(uint32_t ca, uint16_t lid, uint16_t count) { lids_[lid] = {ca, count}; }

void FlitFabric::set_peer_buffer(uint32_t sw, uint16_t port, uint8_t vl, uint32_t bytes) {
  edge(sw, port).credits.set_limit(vl, bytes / ib::kCreditBlockBytes);
}

const link::PortCounters& FlitFabric::counters(uint32_t sw, uint16_t port) const {
  static const link::PortCounters none;
  const auto it = counters_.find({sw, port});
  return it == counters_.end() ? none : it->second;
}

uint8_t FlitFabric::class_of(const ib::Packet& p) const {
  if (p.lrh.vl == ib::kVl15) return 0;  // control traffic: the highest priority (Sec. 4.2)
  const uint8_t c = opt_.vl_classes.empty()
                        ? 0
                        : opt_.vl_classes[std::min<size_t>(p.lrh.vl, opt_.vl_classes.size() - 1)];
  return std::min<uint8_t>(c, static_cast<uint8_t>(opt_.flit.classes() - 1));
}

// A VirtualClock slot per CBR connection and per flow (packets of neither share slot 0).
uint32_t FlitFabric::connection_of(const ib::Packet& p) {
  if (p.connection != ~uint32_t{0}) return p.connection * 2 + 1;
  if (p.flow == ib::kNoFlow) return 0;
  return (p.flow + 1) * 2;
}

double FlitFabric::vtick_rate(const ib::Packet& p, uint64_t now_ps) const {
  if (p.reserved_bps) return static_cast<double>(p.reserved_bps);
  if (opt_.flit.unreserved == Unreserved::rate || p.lrh.vl == ib::kVl15 || p.flow >= opt_.offered_bps.size())
    return opt_.unreserved_rate;
  // The phase the packet arrives in: its source offers this rate now.
  for (const auto& [end_ps, bps] : opt_.offered_bps[p.flow])
    if (now_ps < end_ps || &bps == &opt_.offered_bps[p.flow].back().second) return bps > 0 ? bps : opt_.unreserved_rate;
  return opt_.unreserved_rate;
}

// A frame's own rate: its flits over the flow's frame period (Sec. 3.1: the NI injects "one
// frame every 33.3 msec"), so the frame's messages take one frame period of virtual time, as
// the stream's frames take of real time. The frame's flits are its packet count times its
// first packet's (a full one; the last, shorter one is counted full, at most one message too
// many). Every message of a frame carries the same Vtick.
uint64_t FlitFabric::frame_vtick_ps(const ib::Packet& p, uint32_t flits) {
  if (p.frame == ib::kNoFrame || p.reserved_bps == 0 || p.frame_packets == 0 ||
      p.flow >= opt_.frame_period_ps.size() || opt_.frame_period_ps[p.flow] == 0)
    return 0;
  if (frame_vtick_.size() <= p.flow) frame_vtick_.resize(p.flow + 1, {ib::kNoFrame, 0});
  auto& [frame, vtick] = frame_vtick_[p.flow];
  if (frame != p.frame) {
    frame = p.frame;
    vtick = std::max<uint64_t>(1, opt_.frame_period_ps[p.flow] / (uint64_t{p.frame_packets} * flits));
  }
  return vtick;
}

tlm::tlm_sync_enum FlitFabric::on_rx(int e, tlm::tlm_generic_payload& gp, tlm::tlm_phase&, sc_core::sc_time& delay) {
  link::FabricExt& x = link::PayloadPool::ext(gp);
  assert(x.kind == link::FabricExt::Kind::packet);
  ib::Packet* p = x.packet;
  EdgePort& in = edges_.at(static_cast<size_t>(e));
  const uint64_t now = static_cast<uint64_t>(sc_core::sc_time_stamp().value());
  const uint64_t head_ps = now + delay.value();
  p->hop_tail_ps = head_ps + x.duration.value();
  link::PortCounters& c = counters_[{in.sw_node, in.sw_port}];
  c.packets_rx++;
  c.bytes_rx += p->size;
  auto it = lids_.upper_bound(p->lrh.dlid);
  if (it == lids_.begin() || p->lrh.dlid >= std::prev(it)->first + std::prev(it)->second.second)
    throw std::logic_error("flit fabric: no channel adapter has DLID " + std::to_string(p->lrh.dlid));
  const EdgePort& out = edges_.at(edge_of_ca_.at(std::prev(it)->second.first));
  const uint32_t flits = std::max<uint32_t>(1, (p->size * 8 + opt_.flit.width_bits - 1) / opt_.flit.width_bits);
  const double rate = vtick_rate(*p, now);
  const uint64_t mean_vtick_ps = std::max<uint64_t>(1, static_cast<uint64_t>(opt_.flit.width_bits * 1e12 / rate));
  const bool by_frame =
      opt_.flit.nic_vtick == StreamVtick::frame || opt_.flit.router_vtick == StreamVtick::frame;
  const uint64_t frame_ps = by_frame ? frame_vtick_ps(*p, flits) : 0;
  const uint64_t vtick_ps = opt_.flit.router_vtick == StreamVtick::frame && frame_ps ? frame_ps : mean_vtick_ps;
  const uint64_t nic_vtick_ps = opt_.flit.nic_vtick == StreamVtick::frame ? frame_ps : 0;
  const Cycle at = (head_ps + cycle_ps_ - 1) / cycle_ps_;
  // Control (VL15) reserved nothing either, but it is the highest class (Sec. 4.2): the NP
  // and P routers and the QoS NIC serve its flits ahead of every VirtualClock stamp; its
  // Vtick at the unreserved rate only orders control flits among themselves.
  const bool unreserved = p->reserved_bps == 0 && p->lrh.vl != ib::kVl15;
  const uint32_t msg =
      net_.send(in.flit_node, out.flit_node, class_of(*p), flits, at, connection_of(*p), vtick_ps, unreserved,
                nic_vtick_ps);
  if (packet_of_.size() <= msg) packet_of_.resize(msg + 1, nullptr);
  packet_of_[msg] = p;
  ++held_;
  wake_.notify(sc_core::sc_time::from_value(std::max(at * cycle_ps_, now) - now));
  return tlm::TLM_COMPLETED;
}

tlm::tlm_sync_enum FlitFabric::on_tx_bw(int e, tlm::tlm_generic_payload& gp, tlm::tlm_phase&, sc_core::sc_time& delay) {
  const link::FabricExt& x = link::PayloadPool::ext(gp);
  assert(x.kind == link::FabricExt::Kind::credit);
  const uint64_t now = static_cast<uint64_t>(sc_core::sc_time_stamp().value());
  EdgePort& out = edges_.at(static_cast<size_t>(e));
  out.credits.arrive(x.vl, x.blocks, now + delay.value());
  if (!out.out.empty()) wake_.notify(delay);
  return tlm::TLM_COMPLETED;
}

void FlitFabric::tick() {
  const uint64_t now = static_cast<uint64_t>(sc_core::sc_time_stamp().value());
  for (EdgePort& e : edges_)
    if (!e.out.empty()) send_out(e, now);
  const Cycle target = now / cycle_ps_;
  while (net_.now() <= target) {
    if (net_.idle()) {
      net_.skip_to(target + 1);
      break;
    }
    net_.step();
  }
  if (net_.activity() != activity_) {
    activity_ = net_.activity();
    progress_ps_ = now;
  }
  if (!net_.idle()) wake_.notify(sc_core::sc_time::from_value(net_.now() * cycle_ps_ - now));
}

// The packet's IBA credit returns to the channel adapter once its tail flit has left the
// edge, and not before its tail is in from the cable.
void FlitFabric::tail_injected(uint32_t msg, Cycle) {
  ib::Packet* p = packet_of_.at(msg);
  if (p->lrh.vl == ib::kVl15) return;  // VL15 is not credited
  const uint64_t now = static_cast<uint64_t>(sc_core::sc_time_stamp().value());
  EdgePort& in = edges_.at(edge_of_flit_node_.at(net_.message(msg).src));
  payloads_.send_credit(*in.rx, p->lrh.vl, ib::blocks_for(p->size), p->hop_tail_ps > now ? p->hop_tail_ps - now : 0);
}

void FlitFabric::delivered(uint32_t msg, Cycle) {
  ib::Packet* p = packet_of_.at(msg);
  packet_of_[msg] = nullptr;
  const Message& m = net_.message(msg);
  EdgePort& out = edges_.at(edge_of_flit_node_.at(m.dst));
  if (p->lrh.vl != ib::kVl15) p->lrh.vl = opt_.sl2vl[p->lrh.sl & 15];
  // Seed 003 Sec. 4.2: network latency runs from the header flit's injection into the router.
  p->entered_ps = m.head_injected * cycle_ps_;
  out.out.push_back(p);
  out.out_head_ps.push_back(m.head_delivered * cycle_ps_);
  // The tail flit was the message's last (its IBA credit went when it left the source).
  net_.release(msg);
  send_out(out, static_cast<uint64_t>(sc_core::sc_time_stamp().value()));
}

void FlitFabric::send_out(EdgePort& e, uint64_t now) {
  e.credits.absorb(now);
  while (!e.out.empty()) {
    ib::Packet* p = e.out.front();
    const uint8_t vl = p->lrh.vl;
    const uint32_t blocks = ib::blocks_for(p->size);
    if (!e.credits.can_send(vl, blocks)) return;  // on_tx_bw wakes the tick when credits land
    const uint64_t head_ps = std::min(e.out_head_ps.front(), now);
    e.out.pop_front();
    e.out_head_ps.pop_front();
    e.credits.consume(vl, blocks);
    link::PortCounters& c = counters_[{e.sw_node, e.sw_port}];
    c.packets_tx++;
    c.bytes_tx += p->size;
    c.busy_ps += now - head_ps;
    c.vl[vl].packets_tx++;
    c.vl[vl].bytes_tx += p->size;
    p->hops++;
    probe_.transmit(e.sw_node, e.sw_port, *p, head_ps, now);
    --held_;
    payloads_.send_packet(*e.tx, p, 0);  // duration 0: the flits carried its serialization
  }
}

std::vector<std::string> FlitFabric::occupied_vcs(const std::vector<std::string>& names, size_t most) const {
  std::vector<std::string> out;
  for (const auto& [sw, fn] : router_of_) {
    const FlitRouter& r = net_.router(fn);
    for (uint16_t p = 0; p < r.ports(); ++p)
      for (uint16_t v = 0; v < opt_.flit.vcs_per_channel; ++v) {
        const uint32_t n = r.input(p, v).flits();
        if (n == 0) continue;
        if (out.size() == most) return out;
        out.push_back(names.at(sw) + "/" + std::to_string(p) + " VC" + std::to_string(v) + ": " + std::to_string(n) +
                      " flits");
      }
  }
  return out;
}

}  // namespace ibvp::flit
