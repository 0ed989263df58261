// Admission into the high-priority VL arbitration table (seed 002 Sec. 3). The expectations
// are computed here from the paper's definitions (E(i,j), bit reversal, max{64/d, w/255}
// entries), not from the model's helpers, except where a test is about a helper itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <random>
#include <vector>

#include "models/link/vl_arbiter.h"
#include "platform/sm/vlarb_admission.h"

namespace ibvp::sm {
namespace {

// A link whose full table weight (64 x 255 = 16320) is 16320 Mb/s: a connection of w Mb/s
// needs weight w exactly, so weights can be chosen by hand.
constexpr uint64_t kMbps = 1'000'000;
constexpr uint64_t kLinkBps = uint64_t{kTableWeight} * kMbps;

QosRequest request(uint8_t sl, uint32_t max_distance, uint32_t weight) {
  return QosRequest{sl, max_distance, uint64_t{weight} * kMbps};
}

// Entries a request needs, from the paper: d = closest lower power of two in 2..64, then
// max{64/d, w/255} rounded up to a whole set (a power of two).
uint32_t needed_entries(const QosRequest& r) {
  uint32_t d = 2;
  while (d * 2 <= std::min<uint32_t>(r.max_distance, 64)) d *= 2;
  const uint32_t w = static_cast<uint32_t>((r.mean_bandwidth_bps + kMbps - 1) / kMbps);
  uint32_t by_weight = 1;
  while (by_weight * 255 < w) by_weight *= 2;
  return std::max(64 / d, by_weight);
}

struct Snapshot {
  std::vector<uint32_t> weights;
  uint64_t reserved;
  size_t connections;
  bool operator==(const Snapshot& o) const {
    return weights == o.weights && reserved == o.reserved && connections == o.connections;
  }
  bool operator!=(const Snapshot& o) const { return !(*this == o); }
};
Snapshot snapshot(const VlarbAdmission& p) {
  Snapshot s{{}, p.reserved_bps(), p.connections()};
  for (uint32_t t = 0; t < kHighTableEntries; ++t) s.weights.push_back(p.entry_weight(t));
  return s;
}

// Random admissions and releases on one port, with the requests kept for checking.
struct RandomTraffic {
  explicit RandomTraffic(uint32_t seed) : rng(seed) {}
  std::mt19937 rng;
  VlarbAdmission port{kLinkBps, 1.0};  // all of the link reservable: only the table limits
  std::map<ConnectionId, QosRequest> live;
  ConnectionId next_id = 1;

  QosRequest random_request() {
    static const uint32_t distances[] = {2, 3, 4, 6, 8, 12, 16, 24, 32, 40, 64, 200};
    const uint32_t d = distances[rng() % std::size(distances)];
    // Mostly light connections, some that need several entries' worth of weight.
    const uint32_t w = rng() % 4 == 0 ? 1 + rng() % 2000 : 1 + rng() % 200;
    return request(static_cast<uint8_t>(rng() % 16), d, w);
  }
  // Releases a live connection chosen at random; returns its id.
  ConnectionId release_random() {
    auto it = live.begin();
    std::advance(it, rng() % live.size());
    const ConnectionId id = it->first;
    EXPECT_TRUE(port.release(id));
    live.erase(it);
    return id;
  }
};

// Every connection's entries form one set E(i,j): 64/d entries, exactly d apart, the last
// one d before the first of the next table cycle.
void expect_sets_exactly_distance_apart(const VlarbAdmission& port, const std::map<ConnectionId, QosRequest>& live) {
  for (const auto& [id, r] : live) {
    const uint32_t d = port.distance_of(id);
    const std::vector<uint32_t> t = port.entries_of(id);
    ASSERT_FALSE(t.empty()) << "connection " << id;
    ASSERT_EQ(t.size() * d, 64u) << "connection " << id;
    for (size_t k = 1; k < t.size(); ++k) ASSERT_EQ(t[k] - t[k - 1], d) << "connection " << id;
    ASSERT_EQ(t.front() + 64 - t.back(), d) << "connection " << id << ": across the table cycle";
    uint32_t promised = 2;
    while (promised * 2 <= std::min<uint32_t>(r.max_distance, 64)) promised *= 2;
    ASSERT_LE(d, promised) << "connection " << id << " requested " << r.max_distance;
    for (uint32_t e : t) ASSERT_GT(port.entry_weight(e), 0u) << "a served entry is never free";
  }
}

TEST(VlarbAdmission, BitReversalOrderForDistance8IsE30E34E32E36E31E35E33E37) {
  EXPECT_EQ(inspection_order(8), (std::vector<uint32_t>{0, 4, 2, 6, 1, 5, 3, 7}));
  EXPECT_EQ(inspection_order(2), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(inspection_order(4), (std::vector<uint32_t>{0, 2, 1, 3}));
  EXPECT_EQ(set_entries(8, 4), (std::vector<uint32_t>{4, 12, 20, 28, 36, 44, 52, 60}));

  // The model follows that order: eight SLs (so no two share) asking distance 8 take E(3,0),
  // E(3,4), E(3,2), ... and then nothing is left.
  VlarbAdmission port(kLinkBps, 1.0);
  const uint32_t expected_start[] = {0, 4, 2, 6, 1, 5, 3, 7};
  for (uint8_t sl = 0; sl < 8; ++sl) {
    ASSERT_EQ(port.admit(sl, request(sl, 8, 100)), Verdict::admitted);
    std::vector<uint32_t> e;
    for (uint32_t n = 0; n < 8; ++n) e.push_back(expected_start[sl] + 8 * n);
    EXPECT_EQ(port.entries_of(sl), e) << "connection " << int(sl);
  }
  EXPECT_EQ(port.free_entries(), 0u);
  EXPECT_EQ(port.admit(8, request(8, 8, 1)), Verdict::no_free_set);
}

TEST(VlarbAdmission, RequestedDistanceRoundsDownToAPowerOfTwoFrom2To64) {
  EXPECT_EQ(table_distance(1), 0u);
  EXPECT_EQ(table_distance(2), 2u);
  EXPECT_EQ(table_distance(3), 2u);
  EXPECT_EQ(table_distance(7), 4u);
  EXPECT_EQ(table_distance(8), 8u);
  EXPECT_EQ(table_distance(30), 16u);  // seed 002 Table 1, SL 4
  EXPECT_EQ(table_distance(52), 32u);  // SL 5
  EXPECT_EQ(table_distance(63), 32u);
  EXPECT_EQ(table_distance(64), 64u);
  EXPECT_EQ(table_distance(1000), 64u);

  VlarbAdmission port(kLinkBps, 1.0);
  EXPECT_EQ(port.admit(1, request(0, 1, 10)), Verdict::bad_request) << "distance 1 cannot be promised";
  EXPECT_EQ(port.admit(2, request(16, 8, 10)), Verdict::bad_request) << "SLs are 0..15";
  EXPECT_EQ(port.admit(3, QosRequest{0, 8, 0}), Verdict::bad_request) << "no bandwidth";
  ASSERT_EQ(port.admit(4, request(0, 30, 10)), Verdict::admitted);
  EXPECT_EQ(port.distance_of(4), 16u);
  EXPECT_EQ(port.entries_of(4).size(), 4u);
}

TEST(VlarbAdmission, WeightFollowsTheMeanBandwidthAndSpreadsOverTheSet) {
  EXPECT_EQ(weight_for_bandwidth(1000 * kMbps, kLinkBps), 1000u);
  EXPECT_EQ(weight_for_bandwidth(1000 * kMbps + 1, kLinkBps), 1001u) << "rounded up, never short";
  EXPECT_EQ(weight_for_bandwidth(1, kLinkBps), 1u);
  // 10 Gb/s link, 1 Gb/s: a tenth of the full table weight, 1632.
  EXPECT_EQ(weight_for_bandwidth(1'000'000'000, 10'000'000'000), 1632u);

  VlarbAdmission port(kLinkBps, 1.0);
  ASSERT_EQ(port.admit(1, request(0, 8, 1000)), Verdict::admitted);
  for (uint32_t t : port.entries_of(1)) EXPECT_EQ(port.entry_weight(t), 125u);  // 1000 / 8
  // Less weight than entries: every entry still carries 1 (weight 0 would free it).
  ASSERT_EQ(port.admit(2, request(1, 8, 3)), Verdict::admitted);
  for (uint32_t t : port.entries_of(2)) EXPECT_EQ(port.entry_weight(t), 1u);
  // seed 002 Sec. 3: max{64/d, w/255} entries. Distance 64 with weight 600 needs 3 entries,
  // i.e. a set of 4: distance 16.
  ASSERT_EQ(port.admit(3, request(2, 64, 600)), Verdict::admitted);
  EXPECT_EQ(port.distance_of(3), 16u);
  // More than 32 entries' worth (distance 2 is the smallest) is refused.
  EXPECT_EQ(port.check(request(3, 64, 32 * 255 + 1)), Verdict::too_heavy);
}

TEST(VlarbAdmission, SameSlSharesItsSequenceWhileWeightRemains) {
  VlarbAdmission port(kLinkBps, 1.0);
  ASSERT_EQ(port.admit(1, request(3, 8, 1000)), Verdict::admitted);
  ASSERT_EQ(port.admit(2, request(3, 8, 1000)), Verdict::admitted);
  EXPECT_EQ(port.entries_of(2), port.entries_of(1)) << "same SL, room left (2040 per set of 8)";
  EXPECT_EQ(port.free_entries(), 56u);
  for (uint32_t t : port.entries_of(1)) EXPECT_EQ(port.entry_weight(t), 250u);
  // 2000 + 100 > 8 x 255: a new set, the next one in bit-reversal order.
  ASSERT_EQ(port.admit(3, request(3, 8, 100)), Verdict::admitted);
  EXPECT_EQ(port.entries_of(3), set_entries(8, 4));
  // Another SL never shares.
  ASSERT_EQ(port.admit(4, request(4, 8, 1)), Verdict::admitted);
  EXPECT_EQ(port.entries_of(4), set_entries(8, 2));
  // A looser request of the SL may use its stricter sequence; a stricter one may not use a
  // looser sequence.
  ASSERT_EQ(port.admit(5, request(4, 64, 1)), Verdict::admitted);
  EXPECT_EQ(port.entries_of(5), set_entries(8, 2));
  ASSERT_EQ(port.admit(6, request(4, 4, 1)), Verdict::admitted);
  EXPECT_EQ(port.distance_of(6), 4u);
  // Releasing one sharer lowers the weights and keeps the entries.
  ASSERT_TRUE(port.release(2));
  EXPECT_EQ(port.entries_of(1), set_entries(8, 0));
  for (uint32_t t : port.entries_of(1)) EXPECT_EQ(port.entry_weight(t), 125u);
}

TEST(VlarbAdmission, AcceptedWheneverEnoughEntriesAreFreeAlsoAfterReleasesAndDefragmentation) {
  uint32_t admitted = 0, refused = 0, moves = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    RandomTraffic run(seed);
    for (int op = 0; op < 400; ++op) {
      if (run.live.empty() || run.rng() % 100 < 60) {
        const QosRequest r = run.random_request();
        const uint32_t free_before = run.port.free_entries();
        const ConnectionId id = run.next_id++;
        const Verdict v = run.port.admit(id, r);
        ASSERT_NE(v, Verdict::no_bandwidth) << "the whole link is reservable and weights add up below it";
        if (free_before >= needed_entries(r)) {
          ASSERT_EQ(v, Verdict::admitted) << "seed " << seed << " op " << op << ": " << free_before
                                          << " entries free, " << needed_entries(r) << " needed";
        }
        if (v == Verdict::admitted) {
          run.live[id] = r;
          ++admitted;
        } else {
          ASSERT_EQ(v, Verdict::no_free_set);
          ++refused;
        }
      } else {
        run.release_random();
        moves += run.port.defragment();  // 0: release() already left the table well formed
      }
      ASSERT_TRUE(run.port.well_formed()) << "seed " << seed << " op " << op;
    }
  }
  EXPECT_GT(admitted, 1000u);
  EXPECT_GT(refused, 100u) << "the table must fill up for the property to be tested";
  EXPECT_EQ(moves, 0u);
}

TEST(VlarbAdmission, EntriesOfOneConnectionAreExactlyItsDistanceApart) {
  for (uint32_t seed = 100; seed < 130; ++seed) {
    RandomTraffic run(seed);
    for (int op = 0; op < 300; ++op) {
      if (run.live.empty() || run.rng() % 100 < 65) {
        const ConnectionId id = run.next_id++;
        const QosRequest r = run.random_request();
        if (run.port.admit(id, r) == Verdict::admitted) run.live[id] = r;
      } else {
        run.release_random();
      }
      expect_sets_exactly_distance_apart(run.port, run.live);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(VlarbAdmission, EntryWeightsStayWithin255AndAddUpToTheirSequence) {
  for (uint32_t seed = 200; seed < 230; ++seed) {
    RandomTraffic run(seed);
    for (int op = 0; op < 300; ++op) {
      if (run.live.empty() || run.rng() % 100 < 65) {
        const ConnectionId id = run.next_id++;
        const QosRequest r = run.random_request();
        if (run.port.admit(id, r) == Verdict::admitted) run.live[id] = r;
      } else {
        run.release_random();
      }
      // Per sequence (keyed by its first entry): the weights of its connections, and of its entries.
      std::map<uint32_t, uint32_t> connection_weight, entry_weight, entries;
      for (const auto& [id, r] : run.live) {
        const std::vector<uint32_t> t = run.port.entries_of(id);
        connection_weight[t.front()] += run.port.weight_of(id);
        ASSERT_GE(run.port.weight_of(id), (r.mean_bandwidth_bps + kMbps - 1) / kMbps);
      }
      for (const Sequence& s : run.port.sequences()) {
        for (uint32_t t : set_entries(s.distance, s.start)) {
          entry_weight[s.start] += run.port.entry_weight(t);
          ++entries[s.start];
        }
      }
      uint32_t owned = 0;
      for (uint32_t t = 0; t < kHighTableEntries; ++t) {
        ASSERT_LE(run.port.entry_weight(t), 255u);
        owned += run.port.entry_weight(t) > 0;
      }
      ASSERT_EQ(owned, kHighTableEntries - run.port.free_entries());
      ASSERT_EQ(connection_weight.size(), entry_weight.size());
      for (const auto& [start, w] : connection_weight) {
        // Spread evenly; a set lighter than its entries count carries 1 per entry.
        ASSERT_EQ(entry_weight[start], std::max(w, entries[start])) << "seed " << seed << " op " << op;
        ASSERT_LE(w, entries[start] * 255u);
      }
    }
  }
}

TEST(VlarbAdmission, ReleaseRestoresTheFreeSet) {
  VlarbAdmission port(kLinkBps, 1.0);
  ASSERT_EQ(port.admit(1, request(0, 4, 100)), Verdict::admitted);
  ASSERT_EQ(port.admit(2, request(1, 16, 100)), Verdict::admitted);
  const Snapshot before = snapshot(port);
  ASSERT_EQ(port.admit(3, request(2, 8, 100)), Verdict::admitted);   // a new set
  ASSERT_EQ(port.admit(4, request(1, 16, 100)), Verdict::admitted);  // shares connection 2's
  EXPECT_NE(snapshot(port), before);
  ASSERT_TRUE(port.release(3));
  ASSERT_TRUE(port.release(4));
  EXPECT_EQ(snapshot(port), before);
  EXPECT_FALSE(port.release(4)) << "released twice";
  ASSERT_TRUE(port.release(1));
  ASSERT_TRUE(port.release(2));
  EXPECT_EQ(port.free_entries(), 64u);
  EXPECT_EQ(port.reserved_bps(), 0u);
  EXPECT_TRUE(port.sequences().empty());

  // From any reachable state, admitting a connection and releasing it is the identity.
  for (uint32_t seed = 300; seed < 330; ++seed) {
    RandomTraffic run(seed);
    for (int op = 0; op < 200; ++op) {
      if (run.live.empty() || run.rng() % 100 < 60) {
        const ConnectionId id = run.next_id++;
        const QosRequest r = run.random_request();
        if (run.port.admit(id, r) == Verdict::admitted) run.live[id] = r;
      } else {
        run.release_random();
      }
      const Snapshot s = snapshot(run.port);
      const ConnectionId probe = run.next_id++;
      if (run.port.admit(probe, run.random_request()) == Verdict::admitted) {
        ASSERT_TRUE(run.port.release(probe));
        ASSERT_EQ(snapshot(run.port), s) << "seed " << seed << " op " << op;
      }
    }
  }
}

TEST(VlarbAdmission, DefragmentationJoinsTwoFreeQuartersIntoAHalf) {
  VlarbAdmission port(kLinkBps, 1.0);
  // Four SLs at distance 4 fill the table: E(2,0), E(2,2), E(2,1), E(2,3).
  for (uint8_t sl = 0; sl < 4; ++sl) ASSERT_EQ(port.admit(sl, request(sl, 4, 100 + sl)), Verdict::admitted);
  EXPECT_EQ(port.entries_of(3), set_entries(4, 3));
  ASSERT_TRUE(port.release(0));  // frees E(2,0): the free entries are still one set
  EXPECT_EQ(port.entries_of(3), set_entries(4, 3));
  // Freeing E(2,1) too leaves 32 free entries in two sets of 16 that no distance-2 set fits
  // in (E(1,0) and E(1,1) each overlap a busy quarter); defragmentation moves E(2,3)'s
  // connection to E(2,0), freeing E(1,1).
  ASSERT_TRUE(port.release(2));
  EXPECT_TRUE(port.well_formed());
  EXPECT_EQ(port.entries_of(3), set_entries(4, 0));
  EXPECT_EQ(port.distance_of(3), 4u);
  EXPECT_EQ(port.weight_of(3), 103u);
  for (uint32_t t : port.entries_of(3)) EXPECT_GT(port.entry_weight(t), 0u);
  EXPECT_EQ(port.entries_of(1), set_entries(4, 2)) << "only what has to move moves";
  ASSERT_EQ(port.admit(9, request(9, 2, 10)), Verdict::admitted);
  EXPECT_EQ(port.entries_of(9), set_entries(2, 1));
}

TEST(VlarbAdmission, DefragmentationKeepsEveryConnectionsDistanceAndWeight) {
  uint32_t moved_connections = 0;
  for (uint32_t seed = 400; seed < 440; ++seed) {
    RandomTraffic run(seed);
    for (int op = 0; op < 300; ++op) {
      if (run.live.empty() || run.rng() % 100 < 55) {
        const ConnectionId id = run.next_id++;
        const QosRequest r = run.random_request();
        if (run.port.admit(id, r) == Verdict::admitted) run.live[id] = r;
        continue;
      }
      std::map<ConnectionId, std::pair<uint32_t, uint32_t>> before;  // distance, weight
      std::map<ConnectionId, std::vector<uint32_t>> where;
      for (const auto& [id, r] : run.live) {
        before[id] = {run.port.distance_of(id), run.port.weight_of(id)};
        where[id] = run.port.entries_of(id);
      }
      const ConnectionId gone = run.release_random();
      for (const auto& [id, r] : run.live) {
        ASSERT_NE(id, gone);
        EXPECT_EQ(run.port.distance_of(id), before[id].first) << "seed " << seed << " op " << op;
        EXPECT_EQ(run.port.weight_of(id), before[id].second);
        moved_connections += run.port.entries_of(id) != where[id];
      }
      ASSERT_TRUE(run.port.well_formed());
      expect_sets_exactly_distance_apart(run.port, run.live);
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GT(moved_connections, 0u) << "the random runs must exercise defragmentation";
}

TEST(VlarbAdmission, ReservableFractionIs80PercentOfTheLink) {
  VlarbAdmission port(10'000'000'000);  // 10 Gb/s data rate, the paper's 80 % by default
  EXPECT_EQ(port.reservable_bps(), 8'000'000'000u);
  // 100 Mb/s each (weight 164): 80 fit in two distance-2 sequences of SL 0 (2 x 8160 weight).
  for (ConnectionId id = 0; id < 80; ++id)
    ASSERT_EQ(port.admit(id, QosRequest{0, 2, 100'000'000}), Verdict::admitted) << id;
  EXPECT_EQ(port.reserved_bps(), 8'000'000'000u);
  EXPECT_EQ(port.check(QosRequest{0, 2, 100'000'000}), Verdict::no_bandwidth) << "the table would still take it";
  EXPECT_EQ(port.admit(80, QosRequest{0, 2, 1}), Verdict::no_bandwidth);
  ASSERT_TRUE(port.release(7));
  EXPECT_EQ(port.admit(80, QosRequest{0, 2, 100'000'000}), Verdict::admitted);
}

TEST(VlarbAdmission, PathWithOneFullPortIsRefusedAndNoPortChanges) {
  // b runs at twice the rate, so its table fills before its bandwidth does.
  VlarbAdmission a(kLinkBps), b(2 * kLinkBps), c(kLinkBps);
  ASSERT_EQ(a.admit(100, request(5, 16, 50)), Verdict::admitted);
  ASSERT_EQ(c.admit(101, request(5, 16, 50)), Verdict::admitted);
  // Port b's table is full: 64 single-entry sequences (weight 129 each; two would need 258, more than one entry holds).
  for (ConnectionId id = 0; id < 64; ++id)
    ASSERT_EQ(b.admit(id, request(static_cast<uint8_t>(id % 16), 64, 258)), Verdict::admitted);
  ASSERT_EQ(b.free_entries(), 0u);
  const Snapshot sa = snapshot(a), sb = snapshot(b), sc = snapshot(c);

  const std::vector<VlarbAdmission*> path = {&a, &b, &c};
  const PathVerdict v = admit_path(path, 1000, request(5, 8, 20));
  EXPECT_EQ(v.verdict, Verdict::no_free_set);
  EXPECT_EQ(v.port, 1u);
  EXPECT_EQ(snapshot(a), sa);
  EXPECT_EQ(snapshot(b), sb);
  EXPECT_EQ(snapshot(c), sc);
  EXPECT_FALSE(a.has(1000) || b.has(1000) || c.has(1000));

  // A full port by bandwidth: d's reserved bandwidth at its reservable limit.
  VlarbAdmission d(kLinkBps, 0.5);
  ASSERT_EQ(d.admit(1, QosRequest{0, 2, d.reservable_bps()}), Verdict::admitted);
  const Snapshot sd = snapshot(d);
  const PathVerdict w = admit_path({&a, &c, &d}, 1001, request(5, 16, 1));
  EXPECT_EQ(w.verdict, Verdict::no_bandwidth);
  EXPECT_EQ(w.port, 2u);
  EXPECT_EQ(snapshot(a), sa);
  EXPECT_EQ(snapshot(c), sc);
  EXPECT_EQ(snapshot(d), sd);

  // Without the full ports the request goes through everywhere, and leaves everywhere.
  const PathVerdict ok = admit_path({&a, &c}, 1000, request(5, 8, 20));
  EXPECT_EQ(ok.verdict, Verdict::admitted);
  EXPECT_TRUE(a.has(1000) && c.has(1000));
  EXPECT_EQ(admit_path({&a, &c}, 1000, request(5, 8, 20)).verdict, Verdict::known_connection);
  EXPECT_EQ(release_path({&a, &b, &c}, 1000), 2u);
  EXPECT_EQ(snapshot(a), sa);
  EXPECT_EQ(snapshot(c), sc);
}

TEST(VlarbAdmission, HighTableProgramsTheSwitchArbiter) {
  VlarbAdmission port(kLinkBps);
  ASSERT_EQ(port.admit(1, request(2, 4, 100)), Verdict::admitted);
  sw::Sl2VlTable sl2vl{};
  sl2vl[2] = 1;  // SL 2 travels on VL1
  link::VlArbConfig base = link::VlArbConfig::round_robin(2);
  base.high_limit = 255;
  const link::VlArbConfig cfg = port.vlarb(base, sl2vl);
  ASSERT_EQ(cfg.high.size(), 64u);
  EXPECT_EQ(cfg.low.size(), base.low.size());
  for (uint32_t t = 0; t < 64; ++t) {
    EXPECT_EQ(cfg.high[t].weight, port.entry_weight(t));
    if (cfg.high[t].weight > 0) {
      EXPECT_EQ(cfg.high[t].vl, 1);
    }
  }
  // The switch model's arbiter serves the admitted VL before the best-effort one.
  link::VlArbiter arbiter(cfg);
  for (int k = 0; k < 10; ++k) EXPECT_EQ(arbiter.choose(0b11, [](uint8_t) { return 256u; }), 1);
}

TEST(VlarbAdmission, SequenceWeightIsTheWeightOfItsAccumulatedBandwidthRoundedOnce) {
  // seed 002 Sec. 4.2: "The total weight of the sequence is computed according to the
  // accumulated bandwidth of the connections sharing that sequence". 100 connections of a
  // sixteenth of a weight unit each add up to 6.25 units: the sequence weighs 7, not 100.
  VlarbAdmission port(kLinkBps);
  const uint64_t sixteenth = kMbps / 16;
  for (ConnectionId id = 0; id < 100; ++id)
    ASSERT_EQ(port.admit(id, QosRequest{6, 64, sixteenth}), Verdict::admitted);
  ASSERT_EQ(port.sequences().size(), 1u);
  EXPECT_EQ(port.sequences()[0].weight, 7u);
  EXPECT_EQ(port.sequences()[0].connections, 100u);
  // Releasing 50 leaves 3.125 units: 4.
  for (ConnectionId id = 0; id < 50; ++id) ASSERT_TRUE(port.release(id));
  EXPECT_EQ(port.sequences()[0].weight, 4u);
}

}  // namespace
}  // namespace ibvp::sm
