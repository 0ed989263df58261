#include "models/sim/timed_queue.h"

#include <stdexcept>
#include <string>

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
  if (owner->remote_) {
    if (!(running_ && dispatching_)) return;  // made by its own process too
    assert(remote_sink_ && canonical_ && "a split run needs a remote sink and the canonical order");
    Action m = a;
    m.seq = canonical_key(owner);
    remote_sink_->send(m, *owner);
    return;
  }
  Entry e{a, owner};
  e.action.seq = canonical_ ? canonical_key(owner) : seq_++;
  insert(e);
}

void Scheduler::push_keyed(const Action& a, TimedQueue* owner) {
  const uint64_t now = TimedQueue::now_ps();
  // Not before anything already served: a message at the time of actions served here would
  // also be out of order among them.
  if (a.when_ps < now || (served_any_ && a.when_ps <= last_served_ps_))
    throw std::logic_error("split run: an action for agenda " + std::to_string(owner->source_id_) + " at " +
                           std::to_string(a.when_ps) + " ps arrived at " + std::to_string(now) +
                           " ps, in its past (the synchronization window is longer than the lookahead)");
  insert(Entry{a, owner});
}

void Scheduler::drop_remote_actions() {
  queue_.keep_if([](const Entry& e) { return !e.owner->remote_; });
}

void Scheduler::insert(const Entry& e) {
  queue_.push(e);
  // While running, run() picks up what is due now and re-arms for the rest when it finishes.
  const uint64_t when = e.action.when_ps;
  if (running_ || when >= armed_ps_) return;
  armed_ps_ = when;
  const uint64_t now = sc_core::sc_time_stamp().value();  // the kernel's, not a thread's ahead of it
  event_.notify(when <= now ? sc_core::SC_ZERO_TIME : sc_core::sc_time::from_value(when - now));
}

void Scheduler::run() {
  armed_ps_ = kNever;
  running_ = true;
  const uint64_t now = sc_core::sc_time_stamp().value();
  TimedQueue::serving_now_ps_ = now;
  if (!queue_.empty() && queue_.top().action.when_ps <= now) {
    served_any_ = true;
    last_served_ps_ = now;
  }
  while (!queue_.empty() && queue_.top().action.when_ps <= now) {
    const Entry e = queue_.top();
    queue_.pop();
    ++TimedQueue::served_total_;
    dispatching_ = e.owner;
    e.owner->dispatch_(e.action);
  }
  dispatching_ = nullptr;
  TimedQueue::serving_now_ps_ = kNever;
  running_ = false;
  if (queue_.empty()) return;
  armed_ps_ = queue_.top().action.when_ps;
  event_.notify(sc_core::sc_time::from_value(armed_ps_ - now));
}

}  // namespace ibvp::sim
