#include "platform/metrics/recorder.h"

#include <algorithm>
#include <cassert>

namespace ibvp::metrics {

Recorder::Recorder(uint32_t flows, uint64_t warmup_ps, bool keep_packets)
    : warmup_ps_(warmup_ps), keep_packets_(keep_packets), flows_(flows), flow_series_(flows, -1) {}

void Recorder::set_rate_grid(uint64_t window_ps, uint64_t step_ps, uint64_t end_ps) {
  rate_end_ps_ = end_ps;
  // Lower edges k step - window/2 and upper edges k step + window/2, reduced modulo the step.
  rate_step_ps_ = std::max<uint64_t>(step_ps, 1);
  const uint64_t half = window_ps / 2 % rate_step_ps_;
  const uint64_t lower = (rate_step_ps_ - half) % rate_step_ps_;
  rate_edges_ps_ = {std::min(lower, half), std::max(lower, half)};
}

RateSeries Recorder::new_series(const std::string& name, double capacity) const {
  RateSeries s;
  s.name = name;
  s.capacity_bytes_per_s = capacity;
  s.step_ps = rate_step_ps_;
  s.edge_lo_ps = rate_edges_ps_.first;
  s.edge_hi_ps = rate_edges_ps_.second;
  s.end_ps = rate_end_ps_;
  return s;
}

void Recorder::track_port(uint32_t node, uint16_t port, const std::string& name, double capacity) {
  port_series_[(uint64_t{node} << 16) | port] = series_.size();
  series_.push_back(new_series(name, capacity));
}

void Recorder::track_flow(uint32_t flow, const std::string& name, double source_link) {
  flow_series_.at(flow) = static_cast<int32_t>(series_.size());
  series_.push_back(new_series(name, source_link));
}

void Recorder::track_video(uint32_t flow, uint64_t frame_period_ps) {
  video_.emplace(flow, VideoFlow{FrameReassembly{}, FrameStreamStats(frame_period_ps)});
}

const FrameStreamStats* Recorder::video_stats(uint32_t flow) const {
  auto it = video_.find(flow);
  return it == video_.end() ? nullptr : &it->second.stats;
}

size_t Recorder::video_frames_in_progress(uint32_t flow) const {
  auto it = video_.find(flow);
  return it == video_.end() ? 0 : it->second.frames.in_progress();
}

void Recorder::track_connections(const workload::CbrConnections& connections, ConnectionMetricsConfig config) {
  connections_ = std::make_unique<ConnectionMetrics>(connections, warmup_ps_, std::move(config));
}

PacketRecord* Recorder::record_of(const ib::Packet& p) {
  if (!keep_packets_) return nullptr;
  assert(p.id < packets_.size());
  return &packets_[p.id];
}

void Recorder::on_inject(const ib::Packet& p, uint64_t t) {
  injected_++;
  // HCA hosts send packets of no flow (flow 0 of an empty flow list): counted in totals only.
  if (p.flow >= flows_.size()) return;
  flows_[p.flow].injected++;
  if (!keep_packets_) return;
  // Packet ids are dense and handed out in creation order, so records index by id.
  if (p.id >= packets_.size()) packets_.resize(p.id + 1, PacketRecord{});
  PacketRecord& r = packets_[p.id];
  r.id = p.id;
  r.flow = p.flow;
  r.src_node = p.src_node;
  r.dst_node = p.dst_node;
  r.slid = p.lrh.slid;
  r.dlid = p.lrh.dlid;
  r.sl = p.lrh.sl;
  r.vl = p.lrh.vl;
  r.wire_bytes = p.size;
  r.payload_bytes = p.payload_bytes;
  r.created_ps = p.created.value();
  r.injected_ps = t;
  r.done_ps = 0;
  r.hops = 0;
  r.drop = 0;
  r.drop_node = 0;
}

void Recorder::track_multicast(uint32_t flow, std::vector<uint32_t> member_nodes) {
  MulticastFlow& m = multicast_[flow];
  m.copies.assign(member_nodes.size(), 0);
  m.members = std::move(member_nodes);
}

std::vector<uint64_t> Recorder::member_copies(uint32_t flow) const {
  const auto it = multicast_.find(flow);
  return it == multicast_.end() ? std::vector<uint64_t>{} : it->second.copies;
}

void Recorder::on_replicate(const ib::Packet&, uint32_t, uint32_t extra, uint64_t) { replicated_ += extra; }

void Recorder::on_deliver(const ib::Packet& p, uint32_t node, uint64_t t) {
  delivered_++;
  if (!multicast_.empty()) {
    const auto it = multicast_.find(p.flow);
    if (it != multicast_.end()) {
      MulticastFlow& m = it->second;
      const auto at = std::find(m.members.begin(), m.members.end(), node);
      if (at == m.members.end())
        m.others++;
      else
        m.copies[static_cast<size_t>(at - m.members.begin())]++;
    }
  }
  // CBR connections' packets may belong to no flow: judged before the flow's totals.
  if (p.connection != workload::kNoConnection && connections_) {
    assert(p.connection < connections_->size());
    connections_->on_deliver(p.connection, p.created.value(), t);
  }
  if (p.flow >= flows_.size()) return;
  FlowTotals& f = flows_[p.flow];
  f.delivered++;
  if (p.bth.fecn) f.marked++;
  const uint64_t created = p.created.value();
  if (created >= warmup_ps_) {
    f.measured_packets++;
    f.measured_payload_bytes += p.payload_bytes;
    f.latency_ps.add(t - created);
    f.network_latency_ps.add(t - p.injected.value());
  }
  // All packets of a frame share its creation time, so a frame is measured whole or not at
  // all. Frames created before the warm-up are left out, as their packets' latencies are:
  // they meet a fabric still filling up, and the first measured frame anchors the deadlines
  // (FrameStreamStats::on_frame), so the playout clock starts in the measured span.
  if (p.frame != ib::kNoFrame && created >= warmup_ps_ && !video_.empty()) {
    auto it = video_.find(p.flow);
    if (it != video_.end()) {
      const FrameReassembly::Completed c = it->second.frames.on_packet(p.frame, p.frame_packets, t);
      // Every packet of a frame is created with it (VideoSource): this packet's creation is the frame's.
      if (c.done) it->second.stats.on_frame(c.frame_index, c.delivered_ps, created, c.incomplete);
    }
  }
  // Wire bytes, like the port series: a flow's rate and a link's utilisation add up.
  if (flow_series_[p.flow] >= 0) series_[flow_series_[p.flow]].add(t, p.size);
  if (PacketRecord* r = record_of(p)) {
    r->done_ps = t;
    r->hops = p.hops;
    r->vl = p.lrh.vl;
    r->route = p.route;
  }
}

void Recorder::on_drop(const ib::Packet& p, uint32_t node, uint64_t t) {
  dropped_++;
  drops_by_reason_[static_cast<uint8_t>(p.drop)]++;
  if (p.flow >= flows_.size()) return;
  flows_[p.flow].dropped++;
  // A frame with a packet dropped still arrives with its last packet (incomplete); one whose
  // last packet was dropped is lost, and its deadline slot passes (frame_metrics.h).
  if (p.frame != ib::kNoFrame && p.created.value() >= warmup_ps_ && !video_.empty()) {
    auto it = video_.find(p.flow);
    if (it != video_.end() && it->second.frames.on_lost(p.frame, p.frame_packets)) it->second.stats.on_lost_frame();
  }
  if (PacketRecord* r = record_of(p)) {
    r->done_ps = t;
    r->hops = p.hops;
    r->drop = static_cast<uint8_t>(p.drop);
    r->drop_node = node;
    r->route = p.route;
  }
}

void Recorder::on_transmit(uint32_t node, uint16_t port, const ib::Packet& p, uint64_t start, uint64_t end) {
  (void)start;
  transmissions_++;
  if (port_series_.empty()) return;
  auto it = port_series_.find((uint64_t{node} << 16) | port);
  // A packet counts in the window that holds its tail: the whole packet has then crossed.
  if (it != port_series_.end()) series_[it->second].add(end, p.size);
}

std::vector<double> Recorder::sample(const RateSeries& s, uint64_t window_ps, uint64_t step_ps, uint64_t end_ps) {
  std::vector<double> out;
  if (step_ps == 0 || window_ps == 0) return out;
  assert(step_ps == s.step_ps);
  // A prefix sum over the bins gives each window in O(1). Window edges are bin edges, except
  // 0 and an upper edge clipped at the end of the run, which takes every bin: the bins hold
  // only what happened before the scheduled end. (A run that stops before its scheduled end,
  // a finished perftest, counts in its last windows what ends within one bin after it.)
  std::vector<uint64_t> prefix(s.bins.size() + 1, 0);
  for (size_t k = 0; k < s.bins.size(); ++k) prefix[k + 1] = prefix[k] + s.bins[k];
  auto bytes_before = [&](uint64_t t) -> uint64_t {
    if (t == 0) return 0;
    if (t >= end_ps) return prefix.back();
    const uint64_t r = t % s.step_ps;
    assert(r == s.edge_lo_ps || r == s.edge_hi_ps);
    // Events before the edge sit in bins up to 2m (lower edge) or 2m + 1 (upper edge).
    const uint64_t last = 2 * (t / s.step_ps) + (r == s.edge_lo_ps ? 0 : 1);
    return prefix[std::min<uint64_t>(last + 1, s.bins.size())];
  };
  for (uint64_t t = step_ps; t <= end_ps; t += step_ps) {
    const uint64_t lo = t > window_ps / 2 ? t - window_ps / 2 : 0;
    const uint64_t hi = std::min(t + window_ps / 2, end_ps);
    const double span_s = static_cast<double>(hi - lo) * 1e-12;
    out.push_back(span_s > 0 ? static_cast<double>(bytes_before(hi) - bytes_before(lo)) / span_s : 0.0);
  }
  return out;
}

}  // namespace ibvp::metrics
