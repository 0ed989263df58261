#include "models/flit/network.h"

#include <cassert>
#include <stdexcept>

namespace ibvp::flit {

FlitNetwork::FlitNetwork(const FlitConfig& cfg) : cfg_(cfg) {
  const std::string p = cfg_.problem();
  if (!p.empty()) throw std::invalid_argument("flit router: " + p);
}

uint32_t FlitNetwork::add_endpoint() {
  const uint32_t n = static_cast<uint32_t>(routers_.size());
  routers_.emplace_back();
  endpoints_.push_back(std::make_unique<FlitEndpoint>(n, cfg_, msgs_));
  out_.emplace_back(1, -1);
  in_.emplace_back(1, -1);
  return n;
}

uint32_t FlitNetwork::add_router(uint16_t ports) {
  const uint32_t n = static_cast<uint32_t>(routers_.size());
  routers_.push_back(std::make_unique<FlitRouter>(n, ports, cfg_, msgs_));
  endpoints_.emplace_back();
  out_.emplace_back(ports, -1);
  in_.emplace_back(ports, -1);
  return n;
}

void FlitNetwork::connect(uint32_t a, uint16_t port_a, uint32_t b, uint16_t port_b) {
  for (int d = 0; d < 2; ++d) {
    Channel c;
    c.from = d ? b : a;
    c.from_port = d ? port_b : port_a;
    c.to = d ? a : b;
    c.to_port = d ? port_a : port_b;
    out_channel(c.from, c.from_port) = static_cast<int>(channels_.size());
    in_channel(c.to, c.to_port) = static_cast<int>(channels_.size());
    channels_.push_back(std::move(c));
  }
}

void FlitNetwork::set_route(uint32_t router, uint32_t dst_endpoint, uint16_t out_port) {
  routers_.at(router)->set_route(dst_endpoint, out_port);
}

std::unique_ptr<FlitNetwork> FlitNetwork::single_router(const FlitConfig& cfg, uint16_t ports) {
  auto net = std::make_unique<FlitNetwork>(cfg);
  for (uint16_t p = 0; p < ports; ++p) net->add_endpoint();
  const uint32_t r = net->add_router(ports);
  for (uint16_t p = 0; p < ports; ++p) {
    net->connect(p, 0, r, p);
    net->set_route(r, p, p);
  }
  return net;
}

uint32_t FlitNetwork::send(uint32_t src, uint32_t dst, uint8_t cls, uint32_t flits, Cycle at, uint32_t connection,
                           uint64_t vtick_ps, bool unreserved, uint64_t nic_vtick_ps) {
  if (!endpoints_.at(src) || !endpoints_.at(dst)) throw std::invalid_argument("flit network: send between endpoints");
  if (cls >= cfg_.classes()) throw std::invalid_argument("flit network: no such class");
  if (flits == 0) throw std::invalid_argument("flit network: a message has at least one flit");
  Message m;
  m.src = src;
  m.dst = dst;
  m.cls = cls;
  m.flits = flits;
  m.connection = connection;
  m.vtick_ps = vtick_ps ? vtick_ps : cfg_.flit_cycle_ps();
  m.unreserved = unreserved;
  m.nic_vtick_ps = nic_vtick_ps;
  m.created = std::max(at, now_);
  uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
    msgs_[id] = m;
  } else {
    id = static_cast<uint32_t>(msgs_.size());
    msgs_.push_back(m);
  }
  endpoints_[src]->queue(id);
  return id;
}

void FlitNetwork::send_flit(uint32_t node, uint16_t port, uint16_t vc, const Flit& f, Cycle depart) {
  Channel& c = channels_.at(static_cast<size_t>(out_channel(node, port)));
  const Cycle arrive = depart + cfg_.link_delay_cycles;
  // One flit per cycle on a cable.
  assert(c.flits.empty() || c.flits.back().arrive < arrive);
  c.flits.push_back({arrive, vc, f});
  if (trace_) trace_(node, port, vc, f, depart);
}

void FlitNetwork::send_credit(uint32_t node, uint16_t port, uint16_t vc, Pool pool, uint8_t cls, Cycle depart) {
  Channel& c = channels_.at(static_cast<size_t>(in_channel(node, port)));
  c.credits.push_back({depart + cfg_.link_delay_cycles, vc, pool, cls});
}

void FlitNetwork::step() {
  // Arrivals of this cycle first (flits at stage 1, credits at the senders), then the
  // sources, then the routers.
  for (Channel& c : channels_) {
    while (!c.flits.empty() && c.flits.front().arrive <= now_) {
      const InFlight x = c.flits.front();
      c.flits.pop_front();
      if (routers_[c.to]) routers_[c.to]->receive(c.to_port, x.vc, x.flit, now_);
      else endpoints_[c.to]->receive(x.vc, x.flit, now_, *this);
    }
    while (!c.credits.empty() && c.credits.front().arrive <= now_) {
      const CreditMsg k = c.credits.front();
      c.credits.pop_front();
      if (routers_[c.from]) routers_[c.from]->credit(c.from_port, k.vc, k.pool, k.cls);
      else endpoints_[c.from]->credit(k.vc, k.pool, k.cls);
    }
  }
  for (auto& e : endpoints_)
    if (e) e->step(now_, *this);
  for (auto& r : routers_)
    if (r) r->step(now_, *this);
  ++now_;
}

void FlitNetwork::set_listener(FlitListener* l) {
  for (auto& e : endpoints_)
    if (e) e->set_listener(l);
}

bool FlitNetwork::idle() const {
  for (const Channel& c : channels_)
    if (!c.flits.empty() || !c.credits.empty()) return false;
  for (const auto& e : endpoints_)
    if (e && e->messages_waiting()) return false;
  for (const auto& r : routers_)
    if (r && r->flits_held()) return false;
  return true;
}

void FlitNetwork::skip_to(Cycle c) {
  assert(idle());
  if (c > now_) now_ = c;
}

uint64_t FlitNetwork::activity() const {
  uint64_t n = 0;
  for (const auto& e : endpoints_)
    if (e) n += e->payload_flits_sent() + e->payload_flits_received() + e->dummy_flits_received();
  for (const auto& r : routers_)
    if (r) n += r->flits_crossed();
  return n;
}

bool FlitNetwork::drain(Cycle limit) {
  const Cycle end = now_ + limit;
  auto done = [&] {
    for (const Message& m : msgs_)
      if (m.tail_delivered == kNone) return false;
    return true;
  };
  while (!done()) {
    if (now_ >= end) return false;
    step();
  }
  return true;
}

uint64_t FlitNetwork::payload_flits_injected() const {
  uint64_t n = 0;
  for (const auto& e : endpoints_)
    if (e) n += e->payload_flits_sent();
  return n;
}
uint64_t FlitNetwork::payload_flits_delivered() const {
  uint64_t n = 0;
  for (const auto& e : endpoints_)
    if (e) n += e->payload_flits_received();
  return n;
}
uint64_t FlitNetwork::payload_flits_buffered() const {
  uint64_t n = 0;
  for (const auto& r : routers_)
    if (r) n += r->payload_flits_held();
  return n;
}
uint64_t FlitNetwork::payload_flits_on_cables() const {
  uint64_t n = 0;
  for (const Channel& c : channels_)
    for (const InFlight& x : c.flits) n += !x.flit.dummy;
  return n;
}
uint64_t FlitNetwork::dummies_made() const {
  uint64_t n = 0;
  for (const auto& r : routers_)
    if (r) n += r->dummies_made();
  return n;
}
ClassCounts FlitNetwork::class_counts(uint8_t cls) const {
  ClassCounts n;
  for (const auto& r : routers_)
    if (r) n += r->counts(cls);
  return n;
}
uint64_t FlitNetwork::dummies_delivered() const {
  uint64_t n = 0;
  for (const auto& e : endpoints_)
    if (e) n += e->dummy_flits_received();
  return n;
}
uint64_t FlitNetwork::messages_out_of_order() const {
  uint64_t n = 0;
  for (const auto& e : endpoints_)
    if (e) n += e->messages_out_of_order();
  return n;
}
uint64_t FlitNetwork::dummies_buffered() const {
  uint64_t n = 0;
  for (const auto& r : routers_)
    if (r) n += r->dummy_flits_held();
  return n;
}
uint64_t FlitNetwork::dummies_on_cables() const {
  uint64_t n = 0;
  for (const Channel& c : channels_)
    for (const InFlight& x : c.flits) n += x.flit.dummy;
  return n;
}

std::string FlitNetwork::credit_violation() const {
  for (size_t i = 0; i < channels_.size(); ++i) {
    const Channel& c = channels_[i];
    for (uint16_t vc = 0; vc < cfg_.vcs_per_channel; ++vc)
      for (Pool pool : {Pool::regular, Pool::extra}) {
        const size_t pi = static_cast<size_t>(pool);
        const OutputVc& o = routers_[c.from] ? routers_[c.from]->output(c.from_port, vc) : endpoints_[c.from]->output(vc);
        uint64_t total = o.credits[pi];
        for (const InFlight& x : c.flits) total += x.vc == vc && x.flit.pool == pool;
        for (const CreditMsg& k : c.credits) total += k.vc == vc && k.pool == pool;
        if (routers_[c.to]) {
          const InputVc& v = routers_[c.to]->input(c.to_port, vc);
          for (const BufferedFlit& b : pool == Pool::extra ? v.extra : v.regular) total += !b.generated;
        }
        if (total != cfg_.vc_buffer_flits)
          return "channel " + std::to_string(c.from) + "/" + std::to_string(c.from_port) + " -> " +
                 std::to_string(c.to) + "/" + std::to_string(c.to_port) + " VC " + std::to_string(vc) +
                 (pool == Pool::extra ? " extra" : " regular") + ": " + std::to_string(total) + " of " +
                 std::to_string(cfg_.vc_buffer_flits);
      }
  }
  return {};
}

}  // namespace ibvp::flit
