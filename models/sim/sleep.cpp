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
}  // namespace

void sleep_until(uint64_t when_ps) {
  if (when_ps <= TimedQueue::now_ps()) return;
  Sleepers::instance().sleep_until(when_ps);
}

namespace {
uint64_t run_end_ps = ~uint64_t{0};
}  // namespace

void set_run_end(uint64_t ps) { run_end_ps = ps; }
uint64_t run_end() { return run_end_ps; }

void prepare_sleep() { Sleepers::instance(); }

void sleep_for(const sc_core::sc_time& t) {
  if (t > sc_core::SC_ZERO_TIME) sleep_until(TimedQueue::now_ps() + t.value());
}

}  // namespace ibvp::sim
