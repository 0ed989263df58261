// Dynamic processes (sc_spawn) must be enabled before <systemc> is first included.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "models/sim/timed_queue.h"

namespace ibvp::sim {

Scheduler& Scheduler::instance() {
  // One kernel per process, so one scheduler; never destroyed, because its sc_event and
  // process belong to the kernel, which outlives every static destructor's safe use.
  static Scheduler* scheduler = new Scheduler();
  return *scheduler;
}

Scheduler::Scheduler() : event_("ibvp_scheduler_wake") {
  sc_core::sc_spawn_options opts;
  opts.spawn_method();
  opts.set_sensitivity(&event_);
  opts.dont_initialize();
  sc_core::sc_spawn([this] { run(); }, "ibvp_scheduler", &opts);
}

void Scheduler::push(const Action& a, TimedQueue* owner) {
  Entry e{a, owner};
  e.action.seq = canonical_ ? canonical_key(owner) : seq_++;
  heap_.push(e);
  // While running, run() picks up what is due now and re-arms for the rest when it finishes.
  if (running_ || a.when_ps >= armed_ps_) return;
  armed_ps_ = a.when_ps;
  const uint64_t now = TimedQueue::now_ps();
  event_.notify(a.when_ps <= now ? sc_core::SC_ZERO_TIME : sc_core::sc_time::from_value(a.when_ps - now));
}

void Scheduler::run() {
  armed_ps_ = kNever;
  running_ = true;
  const uint64_t now = sc_core::sc_time_stamp().value();
  TimedQueue::serving_now_ps_ = now;
  while (!heap_.empty() && heap_.top().action.when_ps <= now) {
    const Entry e = heap_.top();
    heap_.pop();
    ++TimedQueue::served_total_;
    dispatching_ = e.owner;
    e.owner->dispatch_(e.action);
  }
  dispatching_ = nullptr;
  TimedQueue::serving_now_ps_ = kNever;
  running_ = false;
  if (heap_.empty()) return;
  armed_ps_ = heap_.top().action.when_ps;
  event_.notify(sc_core::sc_time::from_value(armed_ps_ - now));
}

}  // namespace ibvp::sim
