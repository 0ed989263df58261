#pragma once
// A module's own agenda: timed actions kept in a heap and served by one SC_METHOD through one
// sc_event. An sc_event holds a single pending notification, so a model with many future
// happenings (heads arriving on several ports, pipelines finishing, credits returning)
// keeps them here and lets the kernel wake it for the earliest. Pushing never allocates
// once the heap has grown to the model's working depth.
#include <cstdint>
#include <queue>
#include <systemc>
#include <vector>

namespace ibvp::sim {

struct Action {
  uint64_t when_ps = 0;  // absolute simulated time
  uint64_t seq = 0;      // insertion order: equal times are served first-in first-out
  uint16_t kind = 0;     // meaning is the owning model's
  uint16_t port = 0;
  uint32_t arg = 0;
  void* ptr = nullptr;
};

class TimedQueue {
 public:
  explicit TimedQueue(const char* event_name) : event_(event_name) {}

  const sc_core::sc_event& event() const { return event_; }

  void push_at(uint64_t when_ps, uint16_t kind, uint16_t port = 0, uint32_t arg = 0, void* ptr = nullptr) {
    heap_.push(Action{when_ps, seq_++, kind, port, arg, ptr});
    if (!serving_ && when_ps < armed_ps_) arm(when_ps);
  }
  void push_after(const sc_core::sc_time& delay, uint16_t kind, uint16_t port = 0, uint32_t arg = 0,
                  void* ptr = nullptr) {
    push_at(now_ps() + delay.value(), kind, port, arg, ptr);
  }

  // Called from the owner's SC_METHOD: hands out every action due now, then re-arms.
  template <class Fn>
  void serve(Fn&& fn) {
    const uint64_t now = now_ps();
    armed_ps_ = kNever;
    serving_ = true;  // actions pushed while serving are picked up below, not by a new wake
    while (!heap_.empty() && heap_.top().when_ps <= now) {
      const Action a = heap_.top();
      heap_.pop();
      ++served_total_;
      fn(a);
    }
    serving_ = false;
    if (!heap_.empty() && heap_.top().when_ps < armed_ps_) arm(heap_.top().when_ps);
  }

  bool empty() const { return heap_.empty(); }
  // Actions served by every queue of this process: the model's event count for benchmarks.
  static uint64_t served_total() { return served_total_; }
  size_t size() const { return heap_.size(); }
  static uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

 private:
  static constexpr uint64_t kNever = ~uint64_t{0};
  struct Later {
    bool operator()(const Action& a, const Action& b) const {
      return a.when_ps != b.when_ps ? a.when_ps > b.when_ps : a.seq > b.seq;
    }
  };
  void arm(uint64_t when_ps) {
    armed_ps_ = when_ps;
    const uint64_t now = now_ps();
    if (when_ps <= now)
      event_.notify(sc_core::SC_ZERO_TIME);
    else
      event_.notify(sc_core::sc_time::from_value(when_ps - now));
  }

  sc_core::sc_event event_;
  std::priority_queue<Action, std::vector<Action>, Later> heap_;
  uint64_t seq_ = 0;
  uint64_t armed_ps_ = kNever;
  bool serving_ = false;
  static inline uint64_t served_total_ = 0;
};

}  // namespace ibvp::sim
