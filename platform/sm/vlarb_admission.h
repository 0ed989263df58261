#pragma once
// Connection admission into the high-priority VL arbitration table, after seed 002 Sec. 3
// (Alfaro, Sanchez, Duato: latency and bandwidth guarantees from the IBA arbitration tables).
//
// A connection asks for a maximum distance between two consecutive entries of the 64-entry
// high-priority table (its latency bound) and a mean bandwidth (its weight). Connections of
// one SL share a sequence of entries E(i,j) = { t_(j + n*2^i) } while the sequence has weight
// to spare; otherwise the first free E(i,j) in bit-reversal order of j is taken. A port admits
// while its reserved bandwidth stays within the reservable fraction of the link (80 % in seed
// 002 Sec. 4.2) and a table sequence is found. Releasing the last connection of a sequence
// frees its entries, and defragmentation moves sequences so that the filling rule keeps its
// guarantee: a request is admitted whenever enough entries are free. docs/qos.md explains the
// model and the choices made where the paper leaves room.
//
// Each output port has one VlarbAdmission; admit_path() applies a request to every output
// port of a route, all or nothing.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "models/link/link_rate.h"
#include "models/link/vl_arbiter.h"
#include "models/switch/switch.h"

namespace ibvp::sm {

constexpr uint32_t kHighTableEntries = 64;  // IBA 7.6.9 / seed 002 Sec. 3: t_0 .. t_63
constexpr uint32_t kMaxEntryWeight = 255;   // seed 002 Sec. 3: w_i "can vary between 0 and 255"
// The weight of a full table; it stands for the whole data rate of the link (docs/qos.md).
constexpr uint32_t kTableWeight = kHighTableEntries * kMaxEntryWeight;
// seed 002 Sec. 3: "we only consider the following distances: 2, 4, 8, 16, 32, and 64".
constexpr uint32_t kMinDistance = 2;
constexpr uint32_t kMaxDistance = 64;
// seed 002 Sec. 4.2: "connections would only be established in up to 80% of the available
// bandwidth"; the other 20 % is left to best-effort traffic in the low-priority table.
constexpr double kReservableFraction = 0.8;

// `j` written with `bits` bits, read backwards: iR_j of seed 002 Sec. 3.
uint32_t bit_reverse(uint32_t j, uint32_t bits);
// i = log2(distance) for a distance 1..64 that is a power of two.
uint32_t distance_log2(uint32_t distance);
// A requested maximum distance turned into the distance the table uses: the closest lower
// power of two, at most 64 (a table cycle); 0 when below 2, which no set can promise.
uint32_t table_distance(uint32_t requested);
// The table entries of E(i,j), i = log2(distance): j, j + d, j + 2d, ..., 64/d of them.
std::vector<uint32_t> set_entries(uint32_t distance, uint32_t j);
// The j of the sets E(i,j) in the order the filling algorithm inspects them:
// iR_0, iR_1, ..., iR_(d-1).
std::vector<uint32_t> inspection_order(uint32_t distance);
// The weight a mean bandwidth needs on a link (64-byte units per table cycle): its share of
// the link times the weight of a full table, rounded up, at least 1.
uint32_t weight_for_bandwidth(uint64_t mean_bandwidth_bps, uint64_t link_bps);

using ConnectionId = uint64_t;

struct QosRequest {
  uint8_t sl = 0;                   // service level 0..15: connections of one SL share sequences
  uint32_t max_distance = 64;       // maximum distance between consecutive high-table entries
  uint64_t mean_bandwidth_bps = 0;  // > 0
};

enum class Verdict : uint8_t {
  admitted,
  bad_request,        // SL above 15, distance below 2, or no bandwidth
  known_connection,   // the id is admitted at this port already
  no_bandwidth,       // the port's reserved bandwidth would pass the reservable fraction
  too_heavy,          // the weight needs more than 32 entries (distance 2 is the smallest)
  no_free_set,        // no sequence of the SL has room and no E(i,j) of the distance is free
};
const char* verdict_name(Verdict v);

// A sequence of entries E(i,j) serving one SL.
struct Sequence {
  uint8_t sl = 0;
  uint32_t distance = 0;     // d = 2^i
  uint32_t start = 0;        // j: the first entry
  uint32_t weight = 0;       // the weight of its connections' accumulated bandwidth
  uint32_t connections = 0;
  uint32_t entries() const { return kHighTableEntries / distance; }
};

// The high-priority table of one output port and the connections admitted through it.
class VlarbAdmission {
 public:
  explicit VlarbAdmission(uint64_t link_bps, double reservable_fraction = kReservableFraction);
  explicit VlarbAdmission(const link::LinkRate& rate, double reservable_fraction = kReservableFraction);

  // What admit() would answer; changes nothing.
  Verdict check(const QosRequest& r) const;
  // Admits connection `id`: joins a sequence of its SL or takes the first free set.
  Verdict admit(ConnectionId id, const QosRequest& r);
  // Ends connection `id`: its bandwidth leaves its sequence, a sequence without connections
  // frees its entries, and the table is defragmented if the free entries no longer have the
  // shape the filling rule needs. False when `id` is not admitted here.
  bool release(ConnectionId id);
  // Moves sequences (each to another set of its own distance) until the free entries have
  // that shape again; returns how many sequences moved. release() calls it.
  uint32_t defragment();
  // The shape: split into the largest free sets, the free entries form sets of distinct
  // sizes, smaller ones first in bit-reversal order. Then a request of n entries finds a free
  // set whenever n entries are free, and first-fit keeps the shape (docs/qos.md).
  bool well_formed() const;

  uint64_t link_bps() const { return link_bps_; }
  uint64_t reservable_bps() const { return reservable_bps_; }
  uint64_t reserved_bps() const { return reserved_bps_; }
  uint32_t free_entries() const;
  // w_t of entry t (0 when free).
  uint32_t entry_weight(uint32_t t) const;
  std::vector<Sequence> sequences() const;
  size_t connections() const { return conns_.size(); }
  bool has(ConnectionId id) const { return conns_.count(id) != 0; }
  // The entries that serve connection `id` (those of its sequence, in table order), its
  // sequence's distance, and its own weight; empty / 0 when unknown.
  std::vector<uint32_t> entries_of(ConnectionId id) const;
  uint32_t distance_of(ConnectionId id) const;
  uint32_t weight_of(ConnectionId id) const;

  // The 64-entry high-priority table to program (IBA 7.6.9): entry t carries the VL its
  // sequence's SL maps to and weight w_t; a free entry has weight 0, which the arbiter skips.
  std::vector<link::VlArbEntry> vlarb_high(const sw::Sl2VlTable& sl2vl) const;
  // `base` (the policy's low table and LimitOfHighPriority) with this high table.
  link::VlArbConfig vlarb(const link::VlArbConfig& base, const sw::Sl2VlTable& sl2vl) const;

 private:
  struct Seq {
    uint8_t sl;
    uint32_t distance;
    uint32_t start;
    uint32_t weight;       // weight_for_bandwidth(bandwidth_bps)
    uint32_t connections;
    uint64_t bandwidth_bps;  // accumulated bandwidth of its connections (seed 002 Sec. 3)
  };
  struct Conn {
    uint32_t seq;
    uint32_t weight;
    uint64_t bandwidth_bps;
  };
  // How a request would be placed: in sequence `share`, or in a new E(i, start).
  struct Plan {
    Verdict verdict = Verdict::bad_request;
    bool shares = false;
    uint32_t seq = 0;
    uint32_t distance = 0;
    uint32_t start = 0;
    uint32_t weight = 0;
  };
  Plan plan(const QosRequest& r) const;
  void commit(ConnectionId id, const QosRequest& r, const Plan& p);
  // Address of entry t when the table is read in bit-reversal order; E(i,j) is then the
  // aligned block of 64/d addresses at bit_reverse(j, i) * 64/d.
  static uint32_t address(uint32_t t);
  static uint32_t block_address(uint32_t distance, uint32_t start);
  bool block_free(uint32_t distance, uint32_t start) const;
  void place(uint32_t seq, uint32_t distance, uint32_t start);  // owner_ of E(i,start) := seq
  void unplace(uint32_t seq);

  uint64_t link_bps_;
  uint64_t reservable_bps_;
  uint64_t reserved_bps_ = 0;
  std::array<int32_t, kHighTableEntries> owner_;  // sequence id holding entry t, -1 when free
  std::map<uint32_t, Seq> seqs_;
  uint32_t next_seq_ = 0;
  std::map<ConnectionId, Conn> conns_;
};

// seed 002 Sec. 4.2: "Each request is considered by each node along its path and is
// accepted only if there are available resources." `ports` are the output ports the
// connection's packets leave through, each once.
struct PathVerdict {
  Verdict verdict = Verdict::admitted;
  size_t port = 0;  // index in `ports` of the first port that refused
};
// Admits at every port or at none: all ports are checked before any is changed, so a
// refused request leaves every port as it was.
PathVerdict admit_path(const std::vector<VlarbAdmission*>& ports, ConnectionId id, const QosRequest& r);
// Releases `id` at every port that holds it; returns how many did.
size_t release_path(const std::vector<VlarbAdmission*>& ports, ConnectionId id);

}  // namespace ibvp::sm
