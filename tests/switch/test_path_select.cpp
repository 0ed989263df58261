// Adaptive choice among a destination's alternative outputs (models/switch/path_select.h,
// seed 000 Sec. 3.4): LFU, Max-Credit, the packets that never adapt, source-chosen paths.
#include <gtest/gtest.h>

#include <map>

#include "models/switch/path_select.h"
#include "models/sim/rng.h"

using namespace ibvp;
using sw::AltTable;
using sw::PathSelection;
using sw::PathSelector;

namespace {

// A switch of 8 ports whose DLID 5 has alternatives `ports` (the first is the LFT's).
struct Bench {
  AltTable table;
  PathSelector sel;
  Bench(PathSelection policy, std::vector<uint8_t> ports) {
    table.entry.resize(8);
    AltTable::Entry& e = table.entry[5];
    for (size_t i = 0; i < ports.size(); ++i) e.port[i] = ports[i];
    e.count = static_cast<uint8_t>(ports.size());
    sel.configure(policy, 9, table);
  }
  const AltTable::Entry& entry() const { return *table.lookup(5); }
  // Routes one packet as Switch::select_output does; returns the output port.
  template <class Credits>
  uint8_t route(const ib::Packet& p, Credits&& credits) {
    const uint8_t i = sel.choose(entry(), p, 3, credits);
    sel.count_use(5, i);
    sel.count(entry().port[i]);
    return entry().port[i];
  }
  uint8_t route(const ib::Packet& p) {
    return route(p, [](uint8_t) { return int64_t{0}; });
  }
};

ib::Packet ud_packet() {
  ib::Packet p;
  p.bth.opcode = ib::Opcode::ud_send_only;
  p.lrh.dlid = 5;
  return p;
}

}  // namespace

TEST(PathSelect, LfuSpreadsAHotFlowSoTwoEqualOutputsDifferByAtMostOne) {
  Bench b(PathSelection::lfu, {4, 2});
  std::map<uint8_t, int> taken;
  for (int i = 0; i < 101; ++i) {
    ++taken[b.route(ud_packet())];
    EXPECT_LE(std::abs(taken[4] - taken[2]), 1) << "after " << i + 1;
  }
  EXPECT_EQ(taken[2], 51);  // ties go to the lowest port: 2 takes the odd one
  EXPECT_EQ(taken[4], 50);
  EXPECT_EQ(b.sel.use(5)[0], 50u);  // per-alternative use, as the paths table reports it
  EXPECT_EQ(b.sel.use(5)[1], 51u);
}

TEST(PathSelect, LfuCountsEveryPacketRoutedToAnOutputNotOnlyItsOwnChoices) {
  // Video packets take the first alternative (port 4) but still load it: the next best-effort
  // packets steer away from it (seed 000 Sec. 5.1's explanation of LFU).
  Bench b(PathSelection::lfu, {4, 2});
  ib::Packet video = ud_packet();
  video.frame = 0;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(b.route(video), 4);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(b.route(ud_packet()), 2);
  EXPECT_EQ(b.route(ud_packet()), 2);  // 3:3, tie to the lowest port
  EXPECT_EQ(b.route(ud_packet()), 4);
}

TEST(PathSelect, MaxCreditPicksTheOutputWithMoreCreditsAndBreaksTiesByLowestPort) {
  Bench b(PathSelection::max_credit, {6, 1, 3, 7});
  std::map<uint8_t, int64_t> credits{{6, 10}, {1, 12}, {3, 40}, {7, 39}};
  auto by_port = [&](uint8_t port) { return credits.at(port); };
  EXPECT_EQ(b.route(ud_packet(), by_port), 3);
  credits[7] = 41;
  EXPECT_EQ(b.route(ud_packet(), by_port), 7);
  credits[1] = credits[6] = 41;
  EXPECT_EQ(b.route(ud_packet(), by_port), 1);
  // Queued requests may leave an output below zero: still compared.
  for (auto& [port, c] : credits) c = -5;
  credits[6] = -4;
  EXPECT_EQ(b.route(ud_packet(), by_port), 6);
}

TEST(PathSelect, VideoVl15AndConnectedTrafficAlwaysTakeTheFirstAlternative) {
  for (PathSelection policy : {PathSelection::lfu, PathSelection::max_credit}) {
    Bench b(policy, {4, 2});
    auto more_on_2 = [](uint8_t port) { return int64_t{port == 2 ? 100 : 0}; };
    ib::Packet video = ud_packet();
    video.frame = 7;
    ib::Packet vl15 = ud_packet();
    vl15.lrh.vl = ib::kVl15;
    ib::Packet rc = ud_packet();
    rc.bth.opcode = ib::Opcode::rc_send_only;
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(b.route(video, more_on_2), 4);
      EXPECT_EQ(b.route(vl15, more_on_2), 4);
      EXPECT_EQ(b.route(rc, more_on_2), 4);
    }
    // A best-effort UD packet does adapt.
    EXPECT_EQ(b.route(ud_packet(), more_on_2), 2);
  }
}

TEST(PathSelect, FirstPolicyIsTheDeterministicLftRoute) {
  Bench b(PathSelection::first, {4, 2});
  for (int i = 0; i < 10; ++i) EXPECT_EQ(b.route(ud_packet()), 4);
}

TEST(PathSelect, SourceChosenPathsSpreadPerTheSeedAndOverrideTheSwitchPolicy) {
  // seed 000 Sec. 3.4, reliable datagrams: random path bits from the source, read by each
  // switch; the same bits give the same choice, the choices spread evenly.
  for (uint8_t count : {uint8_t{2}, uint8_t{4}}) {
    std::vector<uint8_t> ports{1, 2, 3, 4};
    ports.resize(count);
    Bench b(PathSelection::lfu, ports);
    sim::Rng rng(42, "flow/0/rd/path");
    std::map<uint8_t, int> taken;
    const int n = 4000;
    for (int i = 0; i < n; ++i) {
      ib::Packet p = ud_packet();
      p.source_path = true;
      p.path_bits = static_cast<uint32_t>(rng.next() >> 32);
      const uint8_t port = b.route(p);
      ++taken[port];
      EXPECT_EQ(sw::source_choice(p.path_bits, 3, count), port - 1);
    }
    // Binomial: each share within 5 standard deviations of n / count.
    const double mean = double(n) / count, sd = std::sqrt(n * (1.0 / count) * (1 - 1.0 / count));
    for (uint8_t port : ports) EXPECT_NEAR(taken[port], mean, 5 * sd) << int{port};
  }
  // Switches along a path read different choices from the same bits.
  int differ = 0;
  for (uint32_t bits = 0; bits < 64; ++bits) differ += sw::source_choice(bits, 1, 2) != sw::source_choice(bits, 2, 2);
  EXPECT_GT(differ, 16);
  EXPECT_LT(differ, 48);
}
