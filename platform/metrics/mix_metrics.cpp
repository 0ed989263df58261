#include "platform/metrics/mix_metrics.h"

#include <algorithm>

namespace ibvp::metrics {

MixMetrics::MixMetrics(std::vector<workload::MixPhase> phases, const std::vector<workload::FlowMix>& plan,
                       const std::vector<uint64_t>& frame_period_ps, const std::vector<double>& link_bytes_per_s,
                       double total_load, uint64_t warmup_ps)
    : spans_(std::move(phases)), total_load_(total_load), warmup_ps_(warmup_ps) {
  for (const workload::MixPhase& ph : spans_) {
    Phase p;
    p.span = ph;
    phases_.push_back(p);
  }
  cls_.resize(plan.size());
  stream_of_.assign(plan.size(), -1);
  for (size_t i = 0; i < plan.size(); ++i) {
    const workload::FlowMix& f = plan[i];
    cls_[i] = f.cls;
    for (size_t p = 0; p < phases_.size(); ++p) {
      if (f.cls == workload::MixClass::real_time && f.active[p]) {
        phases_[p].rt_offered_bytes_per_s += f.mean_rate_bytes_per_s;
        ++phases_[p].rt_streams;
      }
      if (f.cls == workload::MixClass::best_effort) phases_[p].be_offered_bytes_per_s += f.load[p] * link_bytes_per_s.at(i);
    }
    if (f.cls == workload::MixClass::real_time) {
      stream_of_[i] = static_cast<int32_t>(streams_.size());
      Stream s;
      s.by_phase.resize(phases_.size());
      s.period_ps = frame_period_ps.at(i);
      streams_.push_back(std::move(s));
    }
  }
}

namespace {
// Seed 003 Sec. 4.2: "the time between the injection of the first flit (header flit) of a
// message into the network (or a router) and the ejection of the last flit"; the time
// before it is queueing (Fig. 5a). Without a flit model, the header enters the network as
// the source port starts sending it.
uint64_t queueing_ps(const ib::Packet& p, uint64_t delivered_ps) {
  const uint64_t entered = p.entered_ps ? p.entered_ps : static_cast<uint64_t>(p.injected.value());
  return std::min<uint64_t>(entered, delivered_ps) - std::min<uint64_t>(p.created.value(), entered);
}
}  // namespace

void MixMetrics::on_deliver(const ib::Packet& p, uint32_t node, uint64_t t) {
  (void)node;
  const uint64_t created = p.created.value();
  // The control section's packets (VL15 flows, the highest class; docs/control.md) belong to
  // no class of the mix (their flows come after the planned ones), but Fig. 5(a) reads their
  // latency per phase. Packets of no flow (SMPs) are not theirs.
  if (p.lrh.vl == ib::kVl15 && p.flow != ib::kNoFlow &&
      (p.flow >= cls_.size() || cls_[p.flow] == workload::MixClass::none)) {
    if (created < warmup_ps_ || phases_.empty()) return;
    Phase& ph = phases_[workload::phase_at(spans_, created)];
    ++ph.control_packets;
    ph.control_latency_sum_ps += static_cast<double>(t - created);
    ph.control_queueing_sum_ps += static_cast<double>(queueing_ps(p, t));
    return;
  }
  if (p.flow >= cls_.size() || cls_[p.flow] == workload::MixClass::none) return;
  if (created < warmup_ps_ || phases_.empty()) return;
  const size_t k = workload::phase_at(spans_, created);
  Phase& ph = phases_[k];
  if (cls_[p.flow] == workload::MixClass::best_effort) {
    ++ph.be_packets;
    ph.be_payload_bytes += p.payload_bytes;
    ph.be_latency_sum_ps += static_cast<double>(t - created);
    ph.be_queueing_sum_ps += static_cast<double>(queueing_ps(p, t));
    return;
  }
  ph.rt_payload_bytes += p.payload_bytes;
  if (p.frame == ib::kNoFrame) return;
  Stream& s = streams_[static_cast<size_t>(stream_of_[p.flow])];
  const FrameReassembly::Completed c = s.frames.on_packet(p.frame, p.frame_packets, t);
  if (!c.done) return;
  // All packets of a frame share its creation time, so the frame is in this packet's phase.
  std::optional<FrameStreamStats>& st = s.by_phase[k];
  if (!st) st.emplace(s.period_ps);
  st->on_frame(c.frame_index, c.delivered_ps, created, c.incomplete);
}

void MixMetrics::on_drop(const ib::Packet& p, uint32_t node, uint64_t t) {
  (void)node;
  (void)t;
  // As the Recorder: a frame whose packets are all accounted for with a drop never arrives.
  if (p.flow >= cls_.size() || cls_[p.flow] != workload::MixClass::real_time || p.frame == ib::kNoFrame) return;
  const uint64_t created = p.created.value();
  if (created < warmup_ps_ || phases_.empty()) return;
  if (stream_of_[p.flow] < 0) return;
  Stream& s = streams_[static_cast<size_t>(stream_of_[p.flow])];
  if (!s.frames.on_lost(p.frame, p.frame_packets)) return;
  std::optional<FrameStreamStats>& st = s.by_phase[workload::phase_at(spans_, created)];
  if (st) st->on_lost_frame();
}

void MixMetrics::finish() {
  if (finished_) return;
  finished_ = true;
  for (const Stream& s : streams_)
    for (size_t p = 0; p < phases_.size(); ++p)
      if (s.by_phase[p]) phases_[p].rt.add(*s.by_phase[p]);
}

nlohmann::ordered_json MixMetrics::json() const {
  using Json = nlohmann::ordered_json;
  Json phases = Json::array();
  for (size_t p = 0; p < phases_.size(); ++p) {
    const Phase& ph = phases_[p];
    const double seconds = static_cast<double>(ph.span.end_ps - ph.span.start_ps) * 1e-12;
    const double be_mean_ns = ph.be_packets == 0 ? 0.0 : ph.be_latency_sum_ps / static_cast<double>(ph.be_packets) / 1e3;
    auto mean_ns = [](double sum_ps, uint64_t n) { return n == 0 ? Json(nullptr) : Json(sum_ps / static_cast<double>(n) / 1e3); };
    phases.push_back(Json{
        {"phase", p},
        {"start_ns", ph.span.start_ps / 1e3},
        {"end_ns", ph.span.end_ps / 1e3},
        {"real_time_percent", ph.span.real_time_percent},
        {"best_effort_percent", ph.span.best_effort_percent},
        {"real_time",
         Json{{"streams", ph.rt_streams},
              {"offered_bytes_per_s", ph.rt_offered_bytes_per_s},
              {"delivered_payload_bytes", ph.rt_payload_bytes},
              {"frames", ph.rt.frames()},
              {"frames_missed", ph.rt.missed()},
              {"frames_incomplete", ph.rt.incomplete()},
              {"frames_lost", ph.rt.lost()},
              {"dmp", ph.rt.dmp()},
              {"dmt_ns", ph.rt.dmt_ps() / 1e3},
              {"inter_frame_mean_ns", ph.rt.inter_frame_mean_ps() / 1e3},
              {"inter_frame_sd_ns", ph.rt.inter_frame_sd_ps() / 1e3}}},
        {"best_effort",
         Json{{"offered_bytes_per_s", ph.be_offered_bytes_per_s},
              {"delivered_payload_bytes", ph.be_payload_bytes},
              {"packets", ph.be_packets},
              {"throughput_bytes_per_s", seconds > 0 ? static_cast<double>(ph.be_payload_bytes) / seconds : 0.0},
              {"mean_latency_ns", be_mean_ns},
              {"mean_queueing_ns", mean_ns(ph.be_queueing_sum_ps, ph.be_packets)},
              {"mean_network_ns", mean_ns(ph.be_latency_sum_ps - ph.be_queueing_sum_ps, ph.be_packets)}}},
        {"control",
         Json{{"packets", ph.control_packets},
              {"mean_latency_ns", mean_ns(ph.control_latency_sum_ps, ph.control_packets)},
              {"mean_queueing_ns", mean_ns(ph.control_queueing_sum_ps, ph.control_packets)},
              {"mean_network_ns",
               mean_ns(ph.control_latency_sum_ps - ph.control_queueing_sum_ps, ph.control_packets)}}}});
  }
  return Json{{"total_load", total_load_}, {"phases", phases}};
}

}  // namespace ibvp::metrics
