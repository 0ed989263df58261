// Cables between switches and endpoints that nothing taps are crossed by direct calls into
// the model at the other end instead of through the TLM sockets and the Link
// (link/direct_port.h, issue 17). They must carry packets and credits at the times the Link
// would: a fabric gives the same result files, byte for byte, whether its cables are direct
// or go through the Link (a capture on a cable turns the direct path off for that cable),
// and a capture still sees every packet on the cable it taps.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <systemc>

#include "common/fabrics.h"
#include "platform/builder/fabric.h"
#include "platform/builder/runner.h"

using namespace ibvp;

namespace {

// Captures on every cable of the chain: both switch-to-switch cables (s1/2 - s2/4,
// s2/2 - s3/4) and the three hosts'.
void capture_every_cable(Scenario& s) {
  s.outputs.pcaps.push_back(PcapConfig{"s1", 2, "s1_2.pcap", true});
  s.outputs.pcaps.push_back(PcapConfig{"s2", 2, "s2_2.pcap", true});
  for (const char* h : {"h_src", "h_dst", "a1"})
    s.outputs.pcaps.push_back(PcapConfig{h, 1, std::string(h) + ".pcap", true});
}

void same_results_direct_and_through_the_link(EventOrder order) {
  const std::filesystem::path root = std::filesystem::path(::testing::TempDir()) /
                                     ("direct_cables_" + std::to_string(getpid()) + "_" +
                                      std::to_string(static_cast<int>(order)));
  Scenario direct = tb::congested_chain(order, sc_core::sc_time(100, sc_core::SC_US));
  Scenario linked = tb::congested_chain(order, sc_core::sc_time(100, sc_core::SC_US));
  capture_every_cable(linked);
  ASSERT_EQ(tb::run_in_child(direct, (root / "direct").string()), 0);
  ASSERT_EQ(tb::run_in_child(linked, (root / "linked").string()), 0);
  int compared = 0;
  for (const auto& e : std::filesystem::directory_iterator(root / "direct")) {
    const std::string name = e.path().filename().string();
    if (name == "run.json") continue;  // wall time and memory: the machine's, not the model's
    EXPECT_EQ(tb::slurp(e.path()), tb::slurp(root / "linked" / name)) << name << " differs";
    ++compared;
  }
  EXPECT_GE(compared, 4);
  const std::string summary = tb::slurp(root / "direct" / "summary.json");
  EXPECT_NE(summary.find("\"packet_hops\""), std::string::npos);
  // The captures saw packets: the tapped cables went through the Link.
  for (const char* pcap : {"s1_2.pcap", "s2_2.pcap", "h_src.pcap", "h_dst.pcap", "a1.pcap"})
    EXPECT_GT(std::filesystem::file_size(root / "linked" / pcap), 24u + 1000u) << pcap;
  std::filesystem::remove_all(root);
}

}  // namespace

TEST(DirectCables, SameResultFilesAsThroughTheLinkFifoOrder) {
  same_results_direct_and_through_the_link(EventOrder::fifo);
}

TEST(DirectCables, SameResultFilesAsThroughTheLinkCanonicalOrder) {
  same_results_direct_and_through_the_link(EventOrder::canonical);
}

// The builder makes the cables between switches and endpoints direct; a tap on a cable turns
// its direct path off at both ends, and the tap then sees every packet that crosses the
// cable in either direction.
TEST(DirectCables, ATapTurnsTheDirectPathOffAndSeesEveryPacket) {
  Scenario s = tb::congested_chain(EventOrder::fifo, sc_core::sc_time(100, sc_core::SC_US));
  Fabric f(s);
  const topo::Topology& t = s.topology;
  const uint32_t s1 = t.find("s1"), s2 = t.find("s2");
  EXPECT_TRUE(f.switch_at(s1)->direct_peer(2));
  EXPECT_TRUE(f.switch_at(s2)->direct_peer(4));
  EXPECT_TRUE(f.switch_at(s2)->direct_peer(2));
  EXPECT_TRUE(f.switch_at(s1)->direct_peer(1));  // to endpoint h_src
  struct Count : link::LinkTap {
    uint64_t packets = 0;
    void on_packet(int, const sc_core::sc_time&, const ib::Packet&) override { ++packets; }
  } tap;
  f.link_at(static_cast<size_t>(t.link_at(s1, 2)))->add_tap(&tap);
  EXPECT_FALSE(f.switch_at(s1)->direct_peer(2));
  EXPECT_FALSE(f.switch_at(s2)->direct_peer(4));
  EXPECT_TRUE(f.switch_at(s2)->direct_peer(2));  // the other cable stays direct
  sc_core::sc_start(s.duration);
  f.finish();
  const uint64_t sent = f.switch_at(s1)->counters(2).packets_tx + f.switch_at(s2)->counters(4).packets_tx;
  EXPECT_GT(sent, 100u);
  EXPECT_EQ(tap.packets, sent);
}
