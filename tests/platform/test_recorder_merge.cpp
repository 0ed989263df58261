// A run split across processes (docs/parallel.md): rank 0 adds every other rank's recorder
// to its own (Recorder::save / merge_saved). Each process sees only the events of its own
// models, a packet's injection at its source's process and its end where it is delivered or
// dropped; the merge must give what one recorder seeing every event gives.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/ib/packet.h"
#include "models/sim/rng.h"
#include "platform/metrics/bytes.h"
#include "platform/metrics/recorder.h"

namespace {

using ibvp::metrics::ByteReader;
using ibvp::metrics::PacketRecord;
using ibvp::metrics::Recorder;

Recorder make() {
  Recorder r(3, 1000, true);
  r.set_canonical_ids(true);
  r.set_rate_grid(2000, 1000, 1000000);
  r.track_port(1, 1, "s1/1", 1e9);
  r.track_flow(2, "f2", 1e9);
  return r;
}

}  // namespace

TEST(RecorderMerge, TwoProcessesHalvesMergeIntoWhatOneRecorderSeesOfEveryEvent) {
  Recorder one = make(), rank0 = make(), rank1 = make();
  ibvp::sim::Rng rng(3, "merge");
  // Nodes 0..3 on rank 0, 4..7 on rank 1; packets between any two.
  std::vector<uint64_t> count(8, 0);
  for (int i = 0; i < 2000; ++i) {
    ibvp::ib::Packet p;
    p.src_node = static_cast<uint32_t>(rng.next() % 8);
    p.dst_node = static_cast<uint32_t>(rng.next() % 8);
    p.id = ibvp::ib::canonical_packet_id(p.src_node, count[p.src_node]++);
    p.flow = static_cast<uint32_t>(rng.next() % 3);
    p.size = 290;
    p.payload_bytes = 256;
    const uint64_t t0 = 10ull * static_cast<uint64_t>(i);
    p.created = sc_core::sc_time::from_value(t0);
    p.injected = sc_core::sc_time::from_value(t0 + rng.next() % 50);
    Recorder& src = p.src_node < 4 ? rank0 : rank1;
    Recorder& dst = p.dst_node < 4 ? rank0 : rank1;
    src.on_inject(p, p.injected.value());
    one.on_inject(p, p.injected.value());
    const uint64_t done = p.injected.value() + 100 + rng.next() % 100000;
    p.hops = static_cast<uint16_t>(1 + rng.next() % 5);
    p.route[0] = static_cast<uint8_t>(rng.next() % 8);
    if (rng.next() % 10 == 0) {
      p.drop = ibvp::ib::DropReason::hoq_lifetime;
      dst.on_drop(p, 9, done);
      one.on_drop(p, 9, done);
    } else if (rng.next() % 10 != 0) {  // else still in flight
      dst.on_deliver(p, p.dst_node, done);
      one.on_deliver(p, p.dst_node, done);
    }
    (p.src_node < 4 ? rank0 : rank1).on_transmit(1, 1, p, t0, t0 + 100);
    one.on_transmit(1, 1, p, t0, t0 + 100);
  }
  std::string bytes;
  rank1.save(bytes);
  ByteReader in(bytes);
  rank0.merge_saved(in);
  EXPECT_TRUE(in.done());

  EXPECT_EQ(rank0.injected(), one.injected());
  EXPECT_EQ(rank0.delivered(), one.delivered());
  EXPECT_EQ(rank0.dropped(), one.dropped());
  EXPECT_EQ(rank0.transmissions(), one.transmissions());
  EXPECT_EQ(rank0.drops_by_reason(), one.drops_by_reason());
  for (size_t f = 0; f < 3; ++f) {
    const auto& a = rank0.flows()[f];
    const auto& b = one.flows()[f];
    EXPECT_EQ(a.injected, b.injected);
    EXPECT_EQ(a.delivered, b.delivered);
    EXPECT_EQ(a.measured_payload_bytes, b.measured_payload_bytes);
    EXPECT_EQ(a.latency_ps.count(), b.latency_ps.count());
    EXPECT_EQ(a.latency_ps.mean(), b.latency_ps.mean());  // exact sums: equal, not near
    for (double q : {0.0, 0.5, 0.9, 0.99, 1.0}) EXPECT_EQ(a.latency_ps.quantile(q), b.latency_ps.quantile(q)) << q;
    EXPECT_EQ(a.network_latency_ps.quantile(0.5), b.network_latency_ps.quantile(0.5));
  }
  for (size_t s = 0; s < one.series().size(); ++s) EXPECT_EQ(rank0.series()[s].bins, one.series()[s].bins);
  const std::vector<PacketRecord>& a = rank0.packets();
  const std::vector<PacketRecord>& b = one.packets();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(a[i].src_node, b[i].src_node);
    EXPECT_EQ(a[i].injected_ps, b[i].injected_ps);
    EXPECT_EQ(a[i].done_ps, b[i].done_ps) << i;
    EXPECT_EQ(a[i].drop, b[i].drop);
    EXPECT_EQ(a[i].drop_node, b[i].drop_node);
    EXPECT_EQ(a[i].hops, b[i].hops);
    EXPECT_EQ(a[i].route, b[i].route);
  }
}
