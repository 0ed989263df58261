#pragma once
// A module's own agenda: timed actions kept in a heap and served, at their time, by the
// module's wake-up method. An sc_event holds a single pending notification, so a model with
// many future happenings (heads arriving on several ports, pipelines finishing, credits
// returning) keeps them here and is woken for the earliest. Pushing never allocates once
// the heap has grown to the model's working depth.
//
// How the module is woken is chosen at construction:
//  - with a dispatch callback, through the process-wide Scheduler: the actions of all such
//    agendas in one heap served by one SC_METHOD, so the SystemC kernel holds a single timed
//    event for the whole fabric instead of one per module (the kernel's event heap,
//    triggers and process dispatch were a quarter of a fabric run's time);
//  - with an event name only, through its own sc_event, for an SC_METHOD made sensitive to
//    event(): a model that also waits on other SystemC events can keep that pattern.
// Both serve equal times first-in first-out and give the same results run after run.
//
// Equal times in the Scheduler are served in one of two orders (scenario key event_order):
//  - fifo: global push order. A fabric split across processes cannot reproduce it, since
//    no process sees the others' pushes.
//  - canonical: by (source id, source's own push count), where the source is the agenda
//    being dispatched when the push happens (the agenda pushed to, for a push from outside
//    the Scheduler). Every agenda gets a stable id from the fabric builder; an agenda's
//    pushes then depend only on the actions it was handed, so each process of a split run
//    serves its agendas' actions in the same order as one process would (docs/parallel.md).
#include <cassert>
#include <cstdint>
#include <functional>
#include <queue>
#include <systemc>
#include <vector>

#include "models/sim/action_queue.h"

namespace ibvp::sim {

class TimedQueue;

// A run split across processes (docs/parallel.md): where actions for agendas that another
// process runs go (a delivery across a cut cable). `a.seq` is its canonical key.
class RemoteSink {
 public:
  virtual ~RemoteSink() = default;
  virtual void send(const Action& a, TimedQueue& to) = 0;
};

// The actions of every scheduler-driven TimedQueue of this process (one SystemC kernel per
// process) in one heap, served in time order, equal times first-in first-out across the
// whole fabric, by one SC_METHOD that hands each action to its agenda's owner.
class Scheduler {
 public:
  static Scheduler& instance();
  void push(const Action& a, TimedQueue* owner);

  // The canonical key packs the source's id (24 bits) above its push count (40 bits).
  static constexpr unsigned kCounterBits = 40;
  static constexpr uint32_t kMaxSourceId = (1u << 24) - 1;
  // Chosen before the first push (the fabric builder sets it from event_order).
  static void set_canonical(bool on) { canonical_ = on; }
  static bool canonical() { return canonical_; }
  // The key the next push made now would carry (for a message that crosses processes).
  static uint64_t canonical_key(TimedQueue* owner);
  // A push whose place among equal times is taken now and whose action is handed over later,
  // any time before it is due: reserve() returns the key a push made now would get,
  // push_reserved inserts the action (a.seq that key). A model that keeps far-future actions
  // of its own until they near (the HCA's firmware timers, nearly all cancelled long before
  // they are due) keeps the heap small and the order exactly that of pushing them at once.
  uint64_t reserve(TimedQueue* owner) { return canonical_ ? canonical_key(owner) : seq_++; }
  void push_reserved(const Action& a, TimedQueue* owner);

  // Split runs: actions for remote agendas (TimedQueue::set_remote) pushed while an action
  // is dispatched go to `sink`, keyed. Pushes made from outside the scheduler (elaboration)
  // every process makes alike; only the agenda's own process keeps them.
  void set_remote_sink(RemoteSink* sink) { remote_sink_ = sink; }
  // Forgets the actions of agendas marked remote after they were pushed (at elaboration,
  // before the split was known): their own process has them.
  void drop_remote_actions();
  // An action another process sent to a local agenda, keyed there. Conservative
  // synchronization guarantees it is never in this process's past; if it were, the run's
  // results would be wrong, so that is a hard error, not an assertion.
  void push_keyed(const Action& a, TimedQueue* owner);
  // The earliest pending action's time (kNever: none).
  uint64_t next_ps() const { return queue_.empty() ? kNever : queue_.top().action.when_ps; }
  static constexpr uint64_t kNever = ~uint64_t{0};

 private:
  Scheduler();
  void run();
  using Entry = ActionQueue::Entry;  // action.seq: insertion order or the canonical key
  void insert(const Entry& e);
  sc_core::sc_event event_;
  ActionQueue queue_;  // a timing wheel (action_queue.h), served in (time, seq) order
  uint64_t seq_ = 0;
  uint64_t armed_ps_ = kNever;
  bool running_ = false;
  TimedQueue* dispatching_ = nullptr;  // the agenda whose action run() is handing out
  RemoteSink* remote_sink_ = nullptr;
  bool served_any_ = false;
  uint64_t last_served_ps_ = 0;  // the time of the last step that served an action
  static inline bool canonical_ = false;
};

class TimedQueue {
 public:
  // Woken through its own sc_event (see event()).
  explicit TimedQueue(const char* event_name) : event_(event_name) {}
  // Served by the process-wide Scheduler, which calls `dispatch` for each action at its time
  // (serve() is then not used).
  TimedQueue(const char* event_name, std::function<void(const Action&)> dispatch)
      : event_(event_name), dispatch_(std::move(dispatch)) {
    Scheduler::instance();  // made during elaboration, before the first push
  }

  const sc_core::sc_event& event() const { return event_; }

  // Canonical order (Scheduler): this agenda's id, the same in every process of a split run.
  // Agendas the builder does not number keep a process-local id above the builder's range.
  void set_source_id(uint32_t id) {
    assert(id <= Scheduler::kMaxSourceId && "agenda id beyond the canonical key's 24 bits");
    source_id_ = id;
  }
  uint32_t source_id() const { return source_id_; }
  // Split runs: this agenda's model runs in another process (Scheduler::set_remote_sink).
  void set_remote(bool remote) { remote_ = remote; }
  bool remote() const { return remote_; }

  void push_at(uint64_t when_ps, uint16_t kind, uint16_t port = 0, uint32_t arg = 0, void* ptr = nullptr) {
    if (dispatch_) {
      Scheduler::instance().push(Action{when_ps, 0, kind, port, arg, ptr}, this);
      return;
    }
    heap_.push(Action{when_ps, seq_++, kind, port, arg, ptr});
    if (!serving_ && when_ps < armed_ps_) arm(when_ps);
  }
  // Scheduler::reserve / push_reserved for this agenda (in event mode, its own order).
  uint64_t reserve_seq() { return dispatch_ ? Scheduler::instance().reserve(this) : seq_++; }
  void push_reserved(uint64_t when_ps, uint64_t seq, uint16_t kind, uint16_t port = 0, uint32_t arg = 0,
                     void* ptr = nullptr) {
    if (dispatch_) {
      Scheduler::instance().push_reserved(Action{when_ps, seq, kind, port, arg, ptr}, this);
      return;
    }
    heap_.push(Action{when_ps, seq, kind, port, arg, ptr});
    if (!serving_ && when_ps < armed_ps_) arm(when_ps);
  }
  void push_after(const sc_core::sc_time& delay, uint16_t kind, uint16_t port = 0, uint32_t arg = 0,
                  void* ptr = nullptr) {
    push_at(now_ps() + delay.value(), kind, port, arg, ptr);
  }

  // Called from the owner's SC_METHOD (event mode): hands out every action due now, then
  // re-arms.
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

  bool empty() const { return heap_.empty(); }  // event mode
  // Actions served by every queue of this process: the model's event count for benchmarks.
  static uint64_t served_total() { return served_total_; }
  size_t size() const { return heap_.size(); }
  // The current simulated time; while the Scheduler serves a time step, its copy of it (the
  // models ask for the time many times per action, and time stands still within a step).
  static uint64_t now_ps() { return serving_now_ps_ != kNever ? serving_now_ps_ : sc_core::sc_time_stamp().value(); }
  // A thread that runs ahead of the kernel's time while nothing else can happen before the
  // time it has reached (the HCA's embedded core, Hca::advance): the models' time until it
  // sets ~0 again, before it yields. Pushes are then at that time; only the kernel's own
  // notifications count from sc_time_stamp().
  static void set_local_now(uint64_t ps) { serving_now_ps_ = ps; }

 private:
  friend class Scheduler;
  static inline uint64_t serving_now_ps_ = ~uint64_t{0};
  static constexpr uint64_t kNever = ~uint64_t{0};
  struct Later {
    bool operator()(const Action& a, const Action& b) const {
      return a.when_ps != b.when_ps ? a.when_ps > b.when_ps : a.seq > b.seq;
    }
  };
  void arm(uint64_t when_ps) {
    armed_ps_ = when_ps;
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (when_ps <= now)
      event_.notify(sc_core::SC_ZERO_TIME);
    else
      event_.notify(sc_core::sc_time::from_value(when_ps - now));
  }

  sc_core::sc_event event_;
  std::function<void(const Action&)> dispatch_;
  std::priority_queue<Action, std::vector<Action>, Later> heap_;
  uint64_t seq_ = 0;
  uint64_t armed_ps_ = kNever;
  bool serving_ = false;
  static inline uint64_t served_total_ = 0;
  // Canonical order: this agenda's id and the pushes it has made as a source.
  static inline uint32_t next_local_id_ = 1u << 23;
  uint32_t source_id_ = next_local_id_++;
  uint64_t pushes_ = 0;
  bool remote_ = false;
};

inline void Scheduler::push_reserved(const Action& a, TimedQueue* owner) {
  assert(!owner->remote_ && "reserved pushes are for local agendas");
  insert(Entry{a, owner});
}

inline uint64_t Scheduler::canonical_key(TimedQueue* owner) {
  Scheduler& s = instance();
  TimedQueue* source = s.running_ && s.dispatching_ ? s.dispatching_ : owner;
  assert(source->pushes_ < (uint64_t{1} << kCounterBits) && "canonical push count overflows its 40 bits");
  return (uint64_t{source->source_id_} << kCounterBits) | source->pushes_++;
}

}  // namespace ibvp::sim
