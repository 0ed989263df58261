#include "platform/metrics/recorder.h"

#include <algorithm>
#include <cassert>

#include "platform/metrics/bytes.h"

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
  if (canonical_ids_) return &canonical_record(p.id);
  assert(p.id < packets_.size());
  return &packets_[p.id];
}

PacketRecord& Recorder::canonical_record(uint64_t id) {
  {
    // A split run's process sees a packet's end without its injection (or the reverse): the
    // record is made by whichever comes first, and the halves meet in the merge.
    const uint64_t src = id >> ib::kIdCountBits, count = id & ((uint64_t{1} << ib::kIdCountBits) - 1);
    if (src >= by_source_.size()) by_source_.resize(src + 1);
    std::vector<PacketRecord>& v = by_source_[src];
    if (count >= v.size()) v.resize(count + 1, PacketRecord{});
    v[count].id = id;
    return v[count];
  }
}

const std::vector<PacketRecord>& Recorder::packets() const {
  if (!canonical_ids_) return packets_;
  packets_.clear();
  for (const std::vector<PacketRecord>& v : by_source_)
    for (const PacketRecord& r : v)
      if (r.seen & PacketRecord::kInjected) packets_.push_back(r);
  // Injection time, then source and count: an order no split changes.
  std::sort(packets_.begin(), packets_.end(), [](const PacketRecord& a, const PacketRecord& b) {
    return a.injected_ps != b.injected_ps ? a.injected_ps < b.injected_ps : a.id < b.id;
  });
  for (size_t i = 0; i < packets_.size(); ++i) packets_[i].id = i;
  return packets_;
}

void Recorder::on_inject(const ib::Packet& p, uint64_t t) {
  injected_++;
  // HCA hosts send packets of no flow (flow 0 of an empty flow list): counted in totals only.
  if (p.flow >= flows_.size()) return;
  flows_[p.flow].injected++;
  if (!keep_packets_) return;
  // Packet ids are dense and handed out in creation order, so records index by id (with
  // canonical ids, by source and count).
  if (!canonical_ids_ && p.id >= packets_.size()) packets_.resize(p.id + 1, PacketRecord{});
  PacketRecord& r = *record_of(p);
  r.id = p.id;
  r.seen |= PacketRecord::kInjected;
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
    r->seen |= PacketRecord::kDone;
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
    r->seen |= PacketRecord::kDone;
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

void Recorder::save(std::string& out) const {
  for (uint64_t v : {injected_, delivered_, dropped_, transmissions_, replicated_}) put(out, v);
  put(out, static_cast<uint64_t>(flows_.size()));
  for (const FlowTotals& f : flows_) {
    for (uint64_t v : {f.injected, f.delivered, f.dropped, f.marked, f.measured_packets, f.measured_payload_bytes})
      put(out, v);
    f.latency_ps.save(out);
    f.network_latency_ps.save(out);
  }
  put(out, static_cast<uint64_t>(series_.size()));
  for (const RateSeries& r : series_) put_vector(out, r.bins);
  put(out, static_cast<uint64_t>(drops_by_reason_.size()));
  for (const auto& [why, n] : drops_by_reason_) {
    put(out, why);
    put(out, n);
  }
  std::vector<PacketRecord> records;
  if (canonical_ids_)
    for (const std::vector<PacketRecord>& v : by_source_)
      for (const PacketRecord& r : v)
        if (r.seen) records.push_back(r);
  put_vector(out, records);
}

void Recorder::merge_saved(ByteReader& in) {
  for (uint64_t* v : {&injected_, &delivered_, &dropped_, &transmissions_, &replicated_}) *v += in.get<uint64_t>();
  const uint64_t flows = in.get<uint64_t>();
  assert(flows == flows_.size());
  for (uint64_t i = 0; i < flows; ++i) {
    FlowTotals& f = flows_[i];
    for (uint64_t* v : {&f.injected, &f.delivered, &f.dropped, &f.marked, &f.measured_packets, &f.measured_payload_bytes})
      *v += in.get<uint64_t>();
    f.latency_ps.merge(LatencyHistogram::load(in));
    f.network_latency_ps.merge(LatencyHistogram::load(in));
  }
  const uint64_t series = in.get<uint64_t>();
  assert(series == series_.size());
  for (uint64_t i = 0; i < series; ++i) {
    const std::vector<uint64_t> bins = in.get_vector<uint64_t>();
    std::vector<uint64_t>& mine = series_[i].bins;
    // As add() grows them: up to the last bin any process wrote.
    if (bins.size() > mine.size()) mine.resize(bins.size(), 0);
    for (size_t k = 0; k < bins.size(); ++k) mine[k] += bins[k];
  }
  const uint64_t reasons = in.get<uint64_t>();
  for (uint64_t i = 0; i < reasons; ++i) {
    const uint8_t why = in.get<uint8_t>();
    drops_by_reason_[why] += in.get<uint64_t>();
  }
  for (const PacketRecord& r : in.get_vector<PacketRecord>()) {
    if (!canonical_ids_ || !keep_packets_) continue;
    PacketRecord& mine = canonical_record(r.id);
    if (r.seen & PacketRecord::kInjected) {
      // Everything on_inject writes.
      const PacketRecord done = mine;
      mine = r;
      if (done.seen & PacketRecord::kDone) {
        mine.done_ps = done.done_ps;
        mine.hops = done.hops;
        mine.vl = done.vl;
        mine.route = done.route;
        mine.drop = done.drop;
        mine.drop_node = done.drop_node;
      }
    } else if (r.seen & PacketRecord::kDone) {
      mine.done_ps = r.done_ps;
      mine.hops = r.hops;
      mine.vl = r.vl;
      mine.route = r.route;
      mine.drop = r.drop;
      mine.drop_node = r.drop_node;
    }
    mine.seen |= r.seen;
  }
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
