#pragma once
// The observer that turns model events into results: per-packet records, per-flow totals
// and latency statistics, and rates over time in a sliding window. It keeps numbers only;
// writers (platform/metrics/report.h) format them.
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/sim/observer.h"
#include "platform/metrics/connection_metrics.h"
#include "platform/metrics/frame_metrics.h"
#include "platform/metrics/latency_histogram.h"

namespace ibvp::metrics {

struct PacketRecord {
  uint64_t id;
  uint32_t flow;
  uint32_t src_node;
  uint32_t dst_node;
  uint16_t slid;
  uint16_t dlid;
  uint8_t sl;
  uint8_t vl;  // VL on the last link it crossed
  uint32_t wire_bytes;
  uint32_t payload_bytes;
  uint64_t created_ps;
  uint64_t injected_ps;
  uint64_t done_ps;  // delivered or dropped; 0 while in flight
  uint16_t hops;
  uint8_t drop;      // ib::DropReason; 0 = delivered (or in flight when done_ps == 0)
  uint32_t drop_node;
  std::array<uint8_t, ib::kRouteHops> route;  // output port at each switch (ib::Packet::route)
  // Canonical ids (split runs): which halves this process saw; the source's process records
  // the injection, the one where it was delivered or dropped the end.
  uint8_t seen;
  static constexpr uint8_t kInjected = 1, kDone = 2;
};

struct FlowTotals {
  uint64_t injected = 0;
  uint64_t delivered = 0;
  uint64_t dropped = 0;
  uint64_t marked = 0;  // delivered with FECN set (a switch saw them as generating congestion)
  // Counted only for packets created at or after the warm-up:
  uint64_t measured_packets = 0;
  uint64_t measured_payload_bytes = 0;
  LatencyHistogram latency_ps;          // delivery - creation (includes source queueing)
  LatencyHistogram network_latency_ps;  // delivery - injection
};

// Bytes per time over a sliding window, sampled on a grid; seed 004 Sec. 3 centres a 2 ms
// window on each time point t = k step: [t - window/2, t + window/2). Bytes are summed as
// they happen between consecutive window edges. The edges repeat with the step, two per
// step (the lower edges at offset a, the upper ones at offset b), so a series keeps two
// numbers per sample written, whatever the number of packets, and every window is a whole
// number of bins: the rates are those of the individual events.
struct RateSeries {
  std::string name;
  double capacity_bytes_per_s = 0;  // for utilisation; 0 when not a link
  uint64_t step_ps = 1;
  uint64_t edge_lo_ps = 0, edge_hi_ps = 0;  // the two edge offsets within a step, lo <= hi
  // Windows clipped at the end of the run count the bytes before it: a transmission that
  // ends later (its start was before the end) is no bin's.
  uint64_t end_ps = UINT64_MAX;
  // bins[2m + i]: bytes of events after i edges of step m, i.e. in [edge before, next edge).
  std::vector<uint64_t> bins;

  size_t bin_of(uint64_t t) const {
    const uint64_t r = t % step_ps;
    return static_cast<size_t>(2 * (t / step_ps) + (r >= edge_lo_ps) + (r >= edge_hi_ps));
  }
  void add(uint64_t t, uint32_t bytes) {
    if (t >= end_ps) return;
    const size_t k = bin_of(t);
    if (k >= bins.size()) bins.resize(k + 1, 0);
    bins[k] += bytes;
  }
};

class ByteReader;

class Recorder : public sim::FabricObserver {
 public:
  Recorder(uint32_t flows, uint64_t warmup_ps, bool keep_packets);
  // Moves the warm-up (an in-band SM's run counts it from the moment the subnet is up);
  // before any packet was created after the old one.
  void set_warmup_ps(uint64_t warmup_ps) { warmup_ps_ = warmup_ps; }
  // event_order canonical: packet ids are (source node, its count) (ib::canonical_packet_id),
  // sparse and the same in one process and a split run; records are kept per source and
  // packets() lists them by (injection time, id), renumbered 0, 1, ... Before any packet.
  void set_canonical_ids(bool on) { canonical_ids_ = on; }

  // Sample a port's transmissions (node, port) or a flow's deliveries as a rate series; a
  // flow's utilisation is its share of its source's link, as seed 004 Fig. 2 draws flows
  // and links on one scale.
  // The sampling grid of every rate series (outputs.rate_window and rate_step) and the end
  // of the run; call before tracking a series.
  void set_rate_grid(uint64_t window_ps, uint64_t step_ps, uint64_t end_ps);
  void track_port(uint32_t node, uint16_t port, const std::string& name, double capacity_bytes_per_s);
  void track_flow(uint32_t flow, const std::string& name, double source_link_bytes_per_s);
  // A video flow (generator video): its packets carry frame numbers, from which frames are
  // reassembled and judged against deadlines one period apart (frame_metrics.h).
  void track_video(uint32_t flow, uint64_t frame_period_ps);
  // The frame statistics of a tracked video flow; nullptr for other flows.
  const FrameStreamStats* video_stats(uint32_t flow) const;
  // Frames begun (some packet delivered) but not complete at the end of the run.
  size_t video_frames_in_progress(uint32_t flow) const;
  // The run's CBR connections (seed 002): packets whose Packet::connection indexes this
  // list are judged by ConnectionMetrics (connection_metrics.h). The list is read, not
  // copied: it must outlive the recorder and keep its size (the Fabric owns both).
  // std::invalid_argument for a config the scenario loader would refuse.
  void track_connections(const workload::CbrConnections& connections, ConnectionMetricsConfig config = {});
  // The connections' metrics, or nullptr when no connections are tracked.
  const ConnectionMetrics* connection_metrics() const { return connections_.get(); }
  ConnectionMetrics* connection_metrics() { return connections_.get(); }

  // A multicast flow (seed 000 Sec. 3.6): copies delivered are counted per member too.
  void track_multicast(uint32_t flow, std::vector<uint32_t> member_nodes);
  // Copies of `flow` delivered to each of its members, in track_multicast's order; empty
  // for other flows.
  std::vector<uint64_t> member_copies(uint32_t flow) const;
  // Copies of `flow` delivered to nodes that are not its members (0 unless the tables are wrong).
  uint64_t non_member_copies(uint32_t flow) const {
    const auto it = multicast_.find(flow);
    return it == multicast_.end() ? 0 : it->second.others;
  }

  void on_inject(const ib::Packet& p, uint64_t t) override;
  void on_replicate(const ib::Packet& p, uint32_t node, uint32_t extra, uint64_t t) override;
  void on_deliver(const ib::Packet& p, uint32_t node, uint64_t t) override;
  void on_drop(const ib::Packet& p, uint32_t node, uint64_t t) override;
  void on_transmit(uint32_t node, uint16_t port, const ib::Packet& p, uint64_t start, uint64_t end) override;

  uint64_t injected() const { return injected_; }
  uint64_t delivered() const { return delivered_; }
  uint64_t dropped() const { return dropped_; }
  uint64_t transmissions() const { return transmissions_; }
  // Copies switches made besides the packets injected: injected + replicated = delivered +
  // dropped + in flight.
  uint64_t replicated() const { return replicated_; }
  const std::map<uint8_t, uint64_t>& drops_by_reason() const { return drops_by_reason_; }
  const std::vector<FlowTotals>& flows() const { return flows_; }
  const std::vector<PacketRecord>& packets() const;
  const std::vector<RateSeries>& series() const { return series_; }

  // A run split across processes (docs/parallel.md): this process's counts as bytes, and
  // another process's added to these on rank 0: totals, flows (latency histograms add bin
  // by bin), rate series' bins, drops by reason, and packet records (with canonical ids, the
  // injection from the source's process and the end from where it was delivered or dropped).
  // Multicast, video and connection metrics are not merged (a split run refuses them).
  void save(std::string& out) const;
  void merge_saved(ByteReader& in);

  // Rate of `s` at each grid time t = step, 2 step, ... <= end: bytes whose event time lies in
  // [t - window/2, t + window/2), over the window (clipped at 0 and end).
  static std::vector<double> sample(const RateSeries& s, uint64_t window_ps, uint64_t step_ps, uint64_t end_ps);

 private:
  PacketRecord* record_of(const ib::Packet& p);
  PacketRecord& canonical_record(uint64_t id);  // by source and count, made if missing
  RateSeries new_series(const std::string& name, double capacity) const;

  uint64_t warmup_ps_;
  bool keep_packets_;
  uint64_t rate_step_ps_ = 1;
  std::pair<uint64_t, uint64_t> rate_edges_ps_{0, 0};
  uint64_t rate_end_ps_ = UINT64_MAX;
  std::vector<FlowTotals> flows_;
  // index = packet id when kept (fifo); with canonical ids, the sorted list packets() made
  mutable std::vector<PacketRecord> packets_;
  bool canonical_ids_ = false;
  std::vector<std::vector<PacketRecord>> by_source_;  // canonical ids: [source node][count]
  std::vector<RateSeries> series_;
  std::map<uint64_t, size_t> port_series_;  // (node << 16 | port) -> series index
  std::vector<int32_t> flow_series_;       // flow -> series index or -1
  uint64_t injected_ = 0, delivered_ = 0, dropped_ = 0, transmissions_ = 0, replicated_ = 0;
  struct MulticastFlow {
    std::vector<uint32_t> members;  // nodes
    std::vector<uint64_t> copies;   // per member
    uint64_t others = 0;            // copies delivered to a node that is no member (a table error)
  };
  std::map<uint32_t, MulticastFlow> multicast_;  // by flow
  std::map<uint8_t, uint64_t> drops_by_reason_;
  struct VideoFlow {
    FrameReassembly frames;
    FrameStreamStats stats;
  };
  std::map<uint32_t, VideoFlow> video_;  // by flow; few flows, looked up per video packet only
  std::unique_ptr<ConnectionMetrics> connections_;
};

}  // namespace ibvp::metrics
