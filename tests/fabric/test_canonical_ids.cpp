// Packet ids under event_order: canonical (docs/parallel.md): each names its source node
// and the source's own count, so no process of a split run numbers another's packets and a
// split run and one process give every packet the same id; the packets table lists them by
// injection time and renumbers them 0, 1, ...
#include <gtest/gtest.h>

#include <map>
#include <systemc>
#include <vector>

#include "common/fabrics.h"
#include "platform/builder/fabric.h"

using namespace ibvp;

namespace {

struct Ids : sim::FabricObserver {
  std::vector<std::pair<uint32_t, uint64_t>> injected;  // (source node, id)
  void on_inject(const ib::Packet& p, uint64_t) override { injected.push_back({p.src_node, p.id}); }
};

}  // namespace

TEST(CanonicalIds, EveryPacketIdIsItsSourceNodeAndThatSourcesCountFromZero) {
  Scenario s = tb::basic_scenario(tb::chain(3));
  s.event_order = EventOrder::canonical;
  s.traffic.enabled = true;
  s.traffic.generator = GeneratorKind::poisson;
  s.traffic.pattern = DestinationPattern::uniform;
  s.traffic.load = 0.5;
  s.traffic.payload_bytes = 256;
  s.outputs.packets_csv = true;
  s.duration = sc_core::sc_time(200, sc_core::SC_US);
  Fabric f(s);
  Ids ids;
  f.probe().attach(&ids);
  sc_core::sc_start(s.duration);
  f.finish();
  ASSERT_GT(ids.injected.size(), 100u);
  // Endpoints inject in creation order (one transmitter each), so each source's ids count up by one.
  std::map<uint32_t, uint64_t> next;
  for (const auto& [src, id] : ids.injected) {
    EXPECT_EQ(id >> ib::kIdCountBits, src);
    EXPECT_EQ(id & ((uint64_t{1} << ib::kIdCountBits) - 1), next[src]++);
  }
  EXPECT_GE(next.size(), 2u);
  // The table: one row per packet injected, ids 0..n-1, in injection time order.
  const std::vector<metrics::PacketRecord>& rows = f.recorder().packets();
  ASSERT_EQ(rows.size(), ids.injected.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].id, i);
    if (i) {
      EXPECT_LE(rows[i - 1].injected_ps, rows[i].injected_ps);
    }
  }
}
