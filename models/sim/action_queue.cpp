#include "models/sim/action_queue.h"

#include <algorithm>

namespace ibvp::sim {

namespace {
// 1,024 ps per bucket, 4,096 buckets: a 4.2 us horizon holds a pipeline, a packet's
// serialization and a cable's delay many times over, and a 1,024-host fat tree at 60 % load
// puts some 25 actions in a bucket (1.3 per packet-hop).
constexpr unsigned kBucketShift = 10;
constexpr uint64_t kBuckets = uint64_t{1} << 12;
constexpr uint64_t kMask = kBuckets - 1;
constexpr uint64_t kWords = kBuckets / 64;
}  // namespace

uint64_t ActionQueue::bucket_ps() { return uint64_t{1} << kBucketShift; }
uint64_t ActionQueue::horizon_ps() { return kBuckets << kBucketShift; }

ActionQueue::ActionQueue() : head_(kBuckets, kNil), bits_(kWords, 0), summary_((kWords + 63) / 64, 0) {}

void ActionQueue::front_push(const Entry& e) {
  // Before (nearer the back than) every action served after it; searched from the back,
  // where a push at the current time lands.
  auto at = front_.end();
  while (at != front_.begin() && later(e, *(at - 1))) --at;
  front_.insert(at, e);
}

void ActionQueue::push(const Entry& e) {
  const uint64_t b = e.action.when_ps >> kBucketShift;
  if (size_++ == 0) {
    // An empty queue: this action's bucket is the front's.
    cur_ = b;
    front_push(e);
    return;
  }
  // At or before the front's bucket (the current time during a run, or late): ordered now.
  if (b <= cur_) return front_push(e);
  if (b - cur_ >= kBuckets) {
    overflow_.push_back(e);
    std::push_heap(overflow_.begin(), overflow_.end(), later);
    return;
  }
  uint32_t n = free_;
  if (n != kNil)
    free_ = nodes_[n].next;
  else {
    n = static_cast<uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  // Wheel buckets hold actions of (cur_, cur_ + kBuckets): one bucket number per slot.
  const uint64_t slot = b & kMask;
  nodes_[n].entry = e;
  nodes_[n].next = head_[slot];
  head_[slot] = n;
  bits_[slot >> 6] |= uint64_t{1} << (slot & 63);
  summary_[slot >> 12] |= uint64_t{1} << ((slot >> 6) & 63);
  ++in_wheel_;
}

void ActionQueue::pop() {
  front_.pop_back();
  --size_;
  if (front_.empty() && size_ != 0) advance();
}

uint64_t ActionQueue::next_wheel_bucket() const {
  // The first non-empty slot from `from` on, or kBuckets: a word of bits_, then the summary.
  auto find_from = [this](uint64_t from) -> uint64_t {
    const uint64_t w = from >> 6;
    const uint64_t word = bits_[w] & (~uint64_t{0} << (from & 63));
    if (word) return (w << 6) + static_cast<uint64_t>(__builtin_ctzll(word));
    const uint64_t next_word = w + 1;
    for (uint64_t s = next_word >> 6; s < summary_.size(); ++s) {
      uint64_t m = summary_[s];
      if (s == next_word >> 6) m &= ~uint64_t{0} << (next_word & 63);
      if (m) {
        const uint64_t wi = (s << 6) + static_cast<uint64_t>(__builtin_ctzll(m));
        return (wi << 6) + static_cast<uint64_t>(__builtin_ctzll(bits_[wi]));
      }
    }
    return kBuckets;
  };
  const uint64_t start = (cur_ + 1) & kMask;
  uint64_t slot = find_from(start);
  if (slot == kBuckets) slot = find_from(0);  // wrapped around the wheel
  return cur_ + 1 + ((slot - start) & kMask);
}

void ActionQueue::advance() {
  // The front is empty: the next bucket holding anything becomes the front.
  const uint64_t from_wheel = in_wheel_ ? next_wheel_bucket() : ~uint64_t{0};
  const uint64_t from_overflow = overflow_.empty() ? ~uint64_t{0} : overflow_.front().action.when_ps >> kBucketShift;
  cur_ = std::min(from_wheel, from_overflow);
  if (from_wheel == cur_) {
    const uint64_t slot = cur_ & kMask;
    for (uint32_t n = head_[slot]; n != kNil;) {
      front_.push_back(nodes_[n].entry);
      const uint32_t next = nodes_[n].next;
      nodes_[n].next = free_;
      free_ = n;
      n = next;
      --in_wheel_;
    }
    head_[slot] = kNil;
    bits_[slot >> 6] &= ~(uint64_t{1} << (slot & 63));
    if (bits_[slot >> 6] == 0) summary_[slot >> 12] &= ~(uint64_t{1} << ((slot >> 6) & 63));
  }
  while (!overflow_.empty() && (overflow_.front().action.when_ps >> kBucketShift) == cur_) {
    front_.push_back(overflow_.front());
    std::pop_heap(overflow_.begin(), overflow_.end(), later);
    overflow_.pop_back();
  }
  if (front_.size() > 1) std::sort(front_.begin(), front_.end(), later);  // latest first
}

std::vector<ActionQueue::Entry> ActionQueue::drain() {
  std::vector<Entry> all;
  all.reserve(size_);
  all.insert(all.end(), front_.begin(), front_.end());
  all.insert(all.end(), overflow_.begin(), overflow_.end());
  for (uint64_t slot = 0; slot < kBuckets; ++slot) {
    for (uint32_t n = head_[slot]; n != kNil; n = nodes_[n].next) all.push_back(nodes_[n].entry);
    head_[slot] = kNil;
  }
  front_.clear();
  overflow_.clear();
  nodes_.clear();
  free_ = kNil;
  std::fill(bits_.begin(), bits_.end(), 0);
  std::fill(summary_.begin(), summary_.end(), 0);
  size_ = 0;
  in_wheel_ = 0;
  return all;
}

}  // namespace ibvp::sim
