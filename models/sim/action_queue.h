#pragma once
// The Scheduler's agenda of timed actions (timed_queue.h): a priority queue served in
// (time, sequence) order. Keys are unique (a sequence number is never given twice), so any
// correct priority queue serves the same order; this one is built for the fabric's pattern,
// where nearly every action is pushed a short, nearly constant delay ahead (a pipeline, a
// packet's serialization, a cable: 0.1 to 1 us) and served in time order (issue 17).
//
// A timing wheel (a calendar queue of fixed width, Brown 1988): time is cut into buckets of
// bucket_ps(); an action due within the wheel's horizon (horizon_ps() past the current
// bucket) goes, unsorted, into its bucket's list, O(1); one due later into an overflow heap.
// Only the current bucket is ordered (the front, sorted latest first, served from its
// back): when it empties, the next non-empty bucket (found through a bitmap) and the
// overflow's actions of that bucket move there and are sorted once. A push at or before the
// current bucket is inserted into the front in its place (usually near the back: a push at
// the current time comes after what is due now), so a push during a run, or one already
// late, is still served in exact (time, sequence) order. A pop is then O(1) and a push
// O(1) but for the front's few, where the single heap of every pending action (thousands
// on a 1,024-host fat tree) took a dozen levels per push and pop.
//
// Pushing never allocates once the queue has grown to the run's working depth: list nodes
// are recycled through a free list.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibvp::sim {

struct Action {
  uint64_t when_ps = 0;  // absolute simulated time
  uint64_t seq = 0;      // tie-break among equal times: insertion order, or the canonical key
  uint16_t kind = 0;     // meaning is the owning model's
  uint16_t port = 0;
  uint32_t arg = 0;
  void* ptr = nullptr;
};

class TimedQueue;

class ActionQueue {
 public:
  struct Entry {
    Action action;
    TimedQueue* owner;
  };
  // The wheel's bucket width and its horizon (the buckets it holds times their width).
  static uint64_t bucket_ps();
  static uint64_t horizon_ps();

  ActionQueue();
  void push(const Entry& e);
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // The earliest action (queue not empty). The front is never empty while the queue is not.
  const Entry& top() const { return front_.back(); }
  void pop();
  // Keeps the actions for which keep(entry) is true (their order is their keys').
  template <class Keep>
  void keep_if(Keep&& keep) {
    std::vector<Entry> all = drain();
    for (const Entry& e : all)
      if (keep(e)) push(e);
  }

 private:
  static constexpr uint32_t kNil = ~uint32_t{0};
  struct Node {
    Entry entry;
    uint32_t next;
  };
  static bool later(const Entry& a, const Entry& b) {
    return a.action.when_ps != b.action.when_ps ? a.action.when_ps > b.action.when_ps
                                                : a.action.seq > b.action.seq;
  }
  void front_push(const Entry& e);
  void advance();
  uint64_t next_wheel_bucket() const;  // absolute bucket number, or ~0 if the wheel is empty
  std::vector<Entry> drain();

  std::vector<Entry> front_;     // the current bucket (and late pushes), latest first
  std::vector<Entry> overflow_;  // binary min-heap of actions beyond the horizon
  std::vector<uint32_t> head_;   // per bucket: its list's first node
  std::vector<uint64_t> bits_;   // per bucket: non-empty
  std::vector<uint64_t> summary_;  // per word of bits_: non-zero
  std::vector<Node> nodes_;
  uint32_t free_ = kNil;
  uint64_t cur_ = 0;            // the front's bucket (absolute number: when_ps / bucket_ps())
  size_t size_ = 0;
  size_t in_wheel_ = 0;
};

}  // namespace ibvp::sim
