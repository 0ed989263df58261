#include "models/sim/sleep.h"

#include <memory>
#include <unordered_map>

#include "models/sim/timed_queue.h"

namespace ibvp::sim {

namespace {
// One agenda for every sleeping thread; each thread waits on an event of its own, which the
// action names.
class Sleepers {
 public:
  static Sleepers& instance() {
    // Never destroyed: its agenda and events belong to the kernel (as the Scheduler's).
    static Sleepers* s = new Sleepers();
    return *s;
  }
  void sleep_until(uint64_t when_ps) {
    sc_core::sc_process_b* self = sc_core::sc_get_current_process_b();
    std::unique_ptr<sc_core::sc_event>& ev = events_[self];
    if (!ev) ev = std::make_unique<sc_core::sc_event>();
    agenda_.push_at(when_ps, 0, 0, 0, ev.get());
    sc_core::wait(*ev);
  }

 private:
  Sleepers()
      : agenda_("ibvp_sleepers", [](const Action& a) { static_cast<sc_core::sc_event*>(a.ptr)->notify(); }) {}
  TimedQueue agenda_;
  std::unordered_map<sc_core::sc_process_b*, std::unique_ptr<sc_core::sc_event>> events_;
};

uint64_t run_end_ps = ~uint64_t{0};
// A thread runs ahead of the kernel's time (TimedQueue::set_local_now). One thread runs at a
// time and gives its time back before it yields, so one flag serves every thread.
bool ahead = false;

// While a thread runs ahead: the earliest activity the kernel had pending when the thread
// last asked it (sc_time_to_pending_activity). Until the thread yields, nothing but the
// thread adds activity, and what it adds goes through the Scheduler (its next action is
// checked each time): the kernel is asked again only past this time, not at every HAL call.
uint64_t horizon_ps = 0;

// Nothing is pending in the kernel at or before `until`.
bool nothing_pending(uint64_t until) {
  if (Scheduler::canonical() || until >= run_end_ps) return false;
  if (ahead && until < horizon_ps) return until < Scheduler::instance().next_ps();
  const uint64_t kernel = sc_core::sc_time_stamp().value();
  const uint64_t horizon = kernel + sc_core::sc_time_to_pending_activity().value();
  horizon_ps = horizon;  // what a thread that goes ahead now may rely on
  return horizon > until;
}
}  // namespace

void sleep_until(uint64_t when_ps) {
  if (when_ps <= TimedQueue::now_ps()) return;
  release_ahead();
  Sleepers::instance().sleep_until(when_ps);
}

void advance_to(uint64_t when_ps) {
  if (when_ps <= TimedQueue::now_ps()) return;
  if (nothing_pending(when_ps)) {
    TimedQueue::set_local_now(when_ps);
    ahead = true;
    return;
  }
  release_ahead();
  Sleepers::instance().sleep_until(when_ps);
}

void advance_for_ps(uint64_t ps) {
  if (ps > 0) advance_to(TimedQueue::now_ps() + ps);
}

bool nothing_pending_through(uint64_t t_ps) { return nothing_pending(t_ps); }

void release_ahead() {
  if (!ahead) return;
  TimedQueue::set_local_now(~uint64_t{0});
  ahead = false;
}

void catch_up() {
  if (!ahead) return;
  const uint64_t at = TimedQueue::now_ps();
  release_ahead();
  Sleepers::instance().sleep_until(at);
}

void set_run_end(uint64_t ps) { run_end_ps = ps; }
uint64_t run_end() { return run_end_ps; }

void prepare_sleep() { Sleepers::instance(); }

void sleep_for(const sc_core::sc_time& t) {
  if (t.value() > 0) sleep_until(TimedQueue::now_ps() + t.value());
}

}  // namespace ibvp::sim
