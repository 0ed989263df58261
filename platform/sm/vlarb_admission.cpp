#include "platform/sm/vlarb_admission.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>

namespace ibvp::sm {

namespace {
constexpr uint32_t kTableBits = 6;  // 64 entries
constexpr uint32_t kMaxSl = 15;

uint32_t pow2_ceil(uint32_t n) {
  uint32_t p = 1;
  while (p < n) p <<= 1;
  return p;
}
}  // namespace

uint32_t bit_reverse(uint32_t j, uint32_t bits) {
  uint32_t r = 0;
  for (uint32_t b = 0; b < bits; ++b) r |= ((j >> b) & 1u) << (bits - 1 - b);
  return r;
}

uint32_t distance_log2(uint32_t distance) {
  uint32_t i = 0;
  while ((1u << i) < distance) ++i;
  return i;
}

uint32_t table_distance(uint32_t requested) {
  // seed 002 Sec. 3: "the applications' requests of a maximum distance ... are turned into the
  // closest lower power of 2"; a lower distance is a stricter promise, so rounding down keeps
  // the request's guarantee. Distance 1 (every entry) is not among the distances considered.
  if (requested < kMinDistance) return 0;
  if (requested >= kMaxDistance) return kMaxDistance;  // one entry per table cycle is the loosest
  uint32_t d = 1;
  while (d * 2 <= requested) d *= 2;
  return d;
}

std::vector<uint32_t> set_entries(uint32_t distance, uint32_t j) {
  // seed 002 Sec. 3: E(i,j) = { t_(j + n * 2^i) ; n = 0, ..., 64/2^i - 1 }.
  std::vector<uint32_t> t;
  for (uint32_t n = 0; n < kHighTableEntries / distance; ++n) t.push_back(j + n * distance);
  return t;
}

std::vector<uint32_t> inspection_order(uint32_t distance) {
  // seed 002 Sec. 3: "selects the first free E(i,j) in the sequence E(i,iR_0), E(i,iR_1), ...,
  // E(i,iR_(d-1)) where iR_j is the bit-reversal function applied to j codified with i bits."
  const uint32_t i = distance_log2(distance);
  std::vector<uint32_t> order;
  for (uint32_t m = 0; m < distance; ++m) order.push_back(bit_reverse(m, i));
  return order;
}

uint32_t weight_for_bandwidth(uint64_t mean_bandwidth_bps, uint64_t link_bps) {
  if (mean_bandwidth_bps == 0) return 0;
  // The paper says only that a mean bandwidth "would result in a weight" (Sec. 3); here a full
  // table (64 x 255) stands for the link's data rate, rounded up so the share is never short.
  const unsigned __int128 num = static_cast<unsigned __int128>(mean_bandwidth_bps) * kTableWeight;
  const unsigned __int128 w = (num + link_bps - 1) / link_bps;
  return w > std::numeric_limits<uint32_t>::max() ? std::numeric_limits<uint32_t>::max()
                                                  : std::max<uint32_t>(1, static_cast<uint32_t>(w));
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::admitted: return "admitted";
    case Verdict::bad_request: return "bad_request";
    case Verdict::known_connection: return "known_connection";
    case Verdict::no_bandwidth: return "no_bandwidth";
    case Verdict::too_heavy: return "too_heavy";
    case Verdict::no_free_set: return "no_free_set";
  }
  return "?";
}

VlarbAdmission::VlarbAdmission(uint64_t link_bps, double reservable_fraction) : link_bps_(link_bps) {
  if (link_bps == 0) throw std::invalid_argument("VlarbAdmission: link_bps must be above 0");
  if (!(reservable_fraction > 0.0 && reservable_fraction <= 1.0))
    throw std::invalid_argument("VlarbAdmission: reservable_fraction must be in (0, 1]");
  reservable_bps_ = static_cast<uint64_t>(std::floor(static_cast<long double>(link_bps) * reservable_fraction));
  owner_.fill(-1);
}

VlarbAdmission::VlarbAdmission(const link::LinkRate& rate, double reservable_fraction)
    : VlarbAdmission(static_cast<uint64_t>(std::llround(rate.data_bits_per_s())), reservable_fraction) {}

uint32_t VlarbAdmission::address(uint32_t t) { return bit_reverse(t, kTableBits); }

uint32_t VlarbAdmission::block_address(uint32_t distance, uint32_t start) {
  // E(i,j) holds the entries whose low i bits are j; reversed, those are the addresses whose
  // high i bits are iR_j: one aligned block of 64/d addresses. The inspection order
  // E(i,iR_0), E(i,iR_1), ... is therefore first fit over blocks in address order.
  return bit_reverse(start, distance_log2(distance)) * (kHighTableEntries / distance);
}

bool VlarbAdmission::block_free(uint32_t distance, uint32_t start) const {
  // seed 002 Sec. 3: "a set E(i,j) is free if all t_k in E(i,j) are free".
  for (uint32_t t = start; t < kHighTableEntries; t += distance)
    if (owner_[t] >= 0) return false;
  return true;
}

void VlarbAdmission::place(uint32_t seq, uint32_t distance, uint32_t start) {
  for (uint32_t t = start; t < kHighTableEntries; t += distance) {
    assert(owner_[t] < 0 && "a table entry belongs to one sequence");
    owner_[t] = static_cast<int32_t>(seq);
  }
}

void VlarbAdmission::unplace(uint32_t seq) {
  for (int32_t& o : owner_)
    if (o == static_cast<int32_t>(seq)) o = -1;
}

VlarbAdmission::Plan VlarbAdmission::plan(const QosRequest& r) const {
  Plan p;
  const uint32_t d_latency = table_distance(r.max_distance);
  if (r.sl > kMaxSl || r.mean_bandwidth_bps == 0 || d_latency == 0) return p;  // bad_request
  // seed 002 Sec. 4.2: connections are established "in up to 80% of the available bandwidth".
  if (r.mean_bandwidth_bps > reservable_bps_ - reserved_bps_) {
    p.verdict = Verdict::no_bandwidth;
    return p;
  }
  const uint32_t w = weight_for_bandwidth(r.mean_bandwidth_bps, link_bps_);
  // seed 002 Sec. 3: "the number of entries needed is max{64/d, w/255}". More entries than
  // 64/d means a set of a smaller distance; the smallest distance considered is 2, 32 entries.
  const uint32_t weight_entries = (w + kMaxEntryWeight - 1) / kMaxEntryWeight;
  if (weight_entries > kHighTableEntries / kMinDistance) {
    p.verdict = Verdict::too_heavy;
    return p;
  }
  const uint32_t d = std::min(d_latency, kHighTableEntries / pow2_ceil(weight_entries));
  p.weight = w;
  p.distance = d;

  // seed 002 Sec. 3: "the algorithm looks for a previously established sequence for the
  // corresponding VL, with enough available weight"; Sec. 4.2: "Connections of the same SL are
  // grouped into the same sequence". A sequence of a smaller distance also keeps the bound;
  // the loosest one that has room is taken, so strict sequences keep room for strict requests.
  // Sec. 4.2: "The total weight of the sequence is computed according to the accumulated
  // bandwidth of the connections sharing that sequence": the weight of the summed bandwidth,
  // rounded up once per sequence, not once per connection (a 8 kb/s connection alone would
  // take a whole unit, 125 kb/s on a 2 Gb/s link).
  bool found = false;
  for (const auto& [id, s] : seqs_) {
    if (s.sl != r.sl || s.distance > d) continue;
    if (weight_for_bandwidth(s.bandwidth_bps + r.mean_bandwidth_bps, link_bps_) >
        (kHighTableEntries / s.distance) * kMaxEntryWeight)
      continue;
    const bool better = !found || s.distance > p.distance ||
                        (s.distance == p.distance &&
                         block_address(s.distance, s.start) < block_address(p.distance, p.start));
    if (better) {
      found = true;
      p.shares = true;
      p.seq = id;
      p.distance = s.distance;
      p.start = s.start;
    }
  }
  if (found) {
    p.verdict = Verdict::admitted;
    return p;
  }
  // seed 002 Sec. 3: "If there is no available sequence, a new free sequence with the desired
  // characteristics is looked for": the first free E(i,j) in bit-reversal order.
  // inspection_order(d), without building the list: this runs for most refused requests.
  const uint32_t bits = distance_log2(d);
  for (uint32_t m = 0; m < d; ++m) {
    const uint32_t j = bit_reverse(m, bits);
    if (block_free(d, j)) {
      p.verdict = Verdict::admitted;
      p.start = j;
      return p;
    }
  }
  p.verdict = Verdict::no_free_set;
  return p;
}

Verdict VlarbAdmission::check(const QosRequest& r) const { return plan(r).verdict; }

void VlarbAdmission::commit(ConnectionId id, const QosRequest& r, const Plan& p) {
  uint32_t seq = p.seq;
  if (p.shares) {
    Seq& s = seqs_.at(seq);
    s.bandwidth_bps += r.mean_bandwidth_bps;
    s.weight = weight_for_bandwidth(s.bandwidth_bps, link_bps_);
    ++s.connections;
  } else {
    seq = next_seq_++;
    seqs_[seq] = Seq{r.sl, p.distance, p.start, p.weight, 1, r.mean_bandwidth_bps};
    place(seq, p.distance, p.start);
  }
  conns_[id] = Conn{seq, p.weight, r.mean_bandwidth_bps};
  reserved_bps_ += r.mean_bandwidth_bps;
}

Verdict VlarbAdmission::admit(ConnectionId id, const QosRequest& r) {
  if (has(id)) return Verdict::known_connection;
  const Plan p = plan(r);
  if (p.verdict == Verdict::admitted) commit(id, r, p);
  return p.verdict;
}

bool VlarbAdmission::release(ConnectionId id) {
  const auto c = conns_.find(id);
  if (c == conns_.end()) return false;
  // seed 002 Sec. 3: "When a connection finishes, its bandwidth is deducted from the
  // accumulated bandwidth in the entries it was occupying. When this accumulated bandwidth is
  // zero those entries must be released."
  Seq& s = seqs_.at(c->second.seq);
  s.bandwidth_bps -= c->second.bandwidth_bps;
  s.weight = s.bandwidth_bps == 0 ? 0 : weight_for_bandwidth(s.bandwidth_bps, link_bps_);
  --s.connections;
  reserved_bps_ -= c->second.bandwidth_bps;
  const uint32_t seq = c->second.seq;
  conns_.erase(c);
  if (s.connections == 0) {
    assert(s.weight == 0);
    unplace(seq);
    seqs_.erase(seq);
    // seed 002 Sec. 3: "When some entries are released, a disfragmentation algorithm must be
    // applied to leave the table in a correct state".
    defragment();
  }
  return true;
}

bool VlarbAdmission::well_formed() const {
  std::array<bool, kHighTableEntries> free_at{};  // by address
  for (uint32_t t = 0; t < kHighTableEntries; ++t) free_at[address(t)] = owner_[t] < 0;
  // The largest free aligned blocks, in address order.
  std::vector<uint32_t> sizes;
  const std::function<void(uint32_t, uint32_t)> walk = [&](uint32_t a, uint32_t n) {
    const auto first = free_at.begin() + a, last = first + n;
    if (std::all_of(first, last, [](bool f) { return f; })) {
      sizes.push_back(n);
    } else if (std::any_of(first, last, [](bool f) { return f; })) {
      walk(a, n / 2);
      walk(a + n / 2, n / 2);
    }
  };
  walk(0, kHighTableEntries);
  for (size_t k = 1; k < sizes.size(); ++k)
    if (sizes[k] <= sizes[k - 1]) return false;
  return true;
}

uint32_t VlarbAdmission::defragment() {
  // seed 002 Sec. 3: the defragmentation "puts together small free sets to form a larger free
  // set, moving the content of some entries" (its algorithm is in the paper's ref. [4], not
  // given). Here: while the free entries lack the shape, the sequence with the highest block
  // address that has a free set of its own distance at a lower address moves to the lowest
  // such set. A sequence keeps its distance (E(i,j) -> E(i,j')), SL, weight and connections.
  // When no sequence can move, the free blocks are in ascending size order (docs/qos.md), so
  // the loop ends in a well-formed table.
  std::set<uint32_t> moved;
  while (!well_formed()) {
    std::vector<std::pair<uint32_t, uint32_t>> by_address;  // (block address, sequence)
    for (const auto& [id, s] : seqs_) by_address.push_back({block_address(s.distance, s.start), id});
    std::sort(by_address.rbegin(), by_address.rend());
    bool did_move = false;
    for (const auto& [a, id] : by_address) {
      Seq& s = seqs_.at(id);
      const uint32_t n = kHighTableEntries / s.distance;
      const uint32_t i = distance_log2(s.distance);
      for (uint32_t m = 0; m * n < a; ++m) {
        const uint32_t j = bit_reverse(m, i);
        if (!block_free(s.distance, j)) continue;
        unplace(id);
        place(id, s.distance, j);
        s.start = j;
        moved.insert(id);
        did_move = true;
        break;
      }
      if (did_move) break;
    }
    assert(did_move && "a table that cannot be compacted further is well formed");
    if (!did_move) break;
  }
  return static_cast<uint32_t>(moved.size());
}

uint32_t VlarbAdmission::free_entries() const {
  return static_cast<uint32_t>(std::count(owner_.begin(), owner_.end(), -1));
}

uint32_t VlarbAdmission::entry_weight(uint32_t t) const {
  if (t >= kHighTableEntries || owner_[t] < 0) return 0;
  const Seq& s = seqs_.at(static_cast<uint32_t>(owner_[t]));
  const uint32_t n = kHighTableEntries / s.distance;
  // The sequence's weight spread evenly over its entries. Each entry carries at least 1: an
  // entry of weight 0 is free and skipped by the arbiter, which would stretch the distance.
  const uint32_t total = std::max(s.weight, n);
  const uint32_t k = (t - s.start) / s.distance;
  return total / n + (k < total % n ? 1 : 0);
}

std::vector<Sequence> VlarbAdmission::sequences() const {
  std::vector<Sequence> out;
  for (const auto& [id, s] : seqs_) out.push_back(Sequence{s.sl, s.distance, s.start, s.weight, s.connections});
  return out;
}

std::vector<uint32_t> VlarbAdmission::entries_of(ConnectionId id) const {
  const auto c = conns_.find(id);
  if (c == conns_.end()) return {};
  const Seq& s = seqs_.at(c->second.seq);
  return set_entries(s.distance, s.start);
}

uint32_t VlarbAdmission::distance_of(ConnectionId id) const {
  const auto c = conns_.find(id);
  return c == conns_.end() ? 0 : seqs_.at(c->second.seq).distance;
}

uint32_t VlarbAdmission::weight_of(ConnectionId id) const {
  const auto c = conns_.find(id);
  return c == conns_.end() ? 0 : c->second.weight;
}

std::vector<link::VlArbEntry> VlarbAdmission::vlarb_high(const sw::Sl2VlTable& sl2vl) const {
  std::vector<link::VlArbEntry> table(kHighTableEntries);
  for (uint32_t t = 0; t < kHighTableEntries; ++t) {
    if (owner_[t] < 0) continue;
    const Seq& s = seqs_.at(static_cast<uint32_t>(owner_[t]));
    table[t] = link::VlArbEntry{sl2vl[s.sl], static_cast<uint8_t>(entry_weight(t))};
  }
  return table;
}

link::VlArbConfig VlarbAdmission::vlarb(const link::VlArbConfig& base, const sw::Sl2VlTable& sl2vl) const {
  link::VlArbConfig c = base;
  c.high = vlarb_high(sl2vl);
  return c;
}

PathVerdict admit_path(const std::vector<VlarbAdmission*>& ports, ConnectionId id, const QosRequest& r) {
  for (size_t k = 0; k < ports.size(); ++k)
    for (size_t l = k + 1; l < ports.size(); ++l)
      if (ports[k] == ports[l]) throw std::invalid_argument("admit_path: a port appears twice on the path");
  // Every port is asked before any is changed: a refusal anywhere leaves all of them as they were.
  for (size_t k = 0; k < ports.size(); ++k) {
    if (ports[k]->has(id)) return {Verdict::known_connection, k};
    const Verdict v = ports[k]->check(r);
    if (v != Verdict::admitted) return {v, k};
  }
  for (VlarbAdmission* p : ports) {
    const Verdict v = p->admit(id, r);
    assert(v == Verdict::admitted && "admit() answers as check() did on an unchanged port");
    (void)v;
  }
  return {Verdict::admitted, 0};
}

size_t release_path(const std::vector<VlarbAdmission*>& ports, ConnectionId id) {
  size_t n = 0;
  for (VlarbAdmission* p : ports) n += p->release(id) ? 1 : 0;
  return n;
}

}  // namespace ibvp::sm
