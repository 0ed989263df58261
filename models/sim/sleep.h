#pragma once
// A thread's timed wait as an action on the process-wide Scheduler (timed_queue.h), not as a
// timed event of the SystemC kernel. The kernel's timed-event heap returns events of equal
// time in an order its shape decides (one unrelated event far past a run's end changed seed
// 004 Fig. 4(b)'s tables); the Scheduler serves equal times first-in first-out. So a host
// program and the HCA's embedded core wake, among the fabric's actions of the same time, in
// the order their waits were made (issue 15 part 2).
//
// The action notifies the sleeping thread's own event at once; the thread runs when the
// Scheduler's step has handed out the actions due then, in the order the wake-ups were served.
//
// A thread that advances (advance_to) runs ahead of the kernel instead of sleeping when
// nothing else is pending at or before the time it would wake (sc_time_to_pending_activity:
// every model's action is on the Scheduler, whose next action is the kernel's one timed
// event; another runnable process or a delta notification counts as pending now). Nothing can
// then happen in between that the sleeping thread would see or that would see it, so it goes
// on at once and only its time is ahead: sim::TimedQueue::now_ps() is the thread's time until
// it gives it back, and what the thread stamps and pushes is at that time. Results are the
// same as sleeping, bit for bit, for a thread that reads the time only through
// TimedQueue::now_ps(), gives its time back (release_ahead) before it waits on anything but
// sleep_until, and lets the kernel catch up (catch_up) before it notifies an event another
// thread waits on. Never in the canonical event order (its keys count pushes per source, and
// sleeps are pushes) nor to the end of the kernel's current run (set_run_end). docs/hca.md,
// "Execution model".
#include <cstdint>
#include <systemc>

namespace ibvp::sim {

// Suspends the calling SystemC thread until `when_ps` (absolute). A time not after now
// returns at once (nothing waited, as sc_core::wait is never called with zero here).
void sleep_until(uint64_t when_ps);
// Suspends the calling thread for `t` (zero: returns at once).
void sleep_for(const sc_core::sc_time& t);
// As sleep_until / a sleep for `ps`, but runs ahead to that time when it may (above).
void advance_to(uint64_t when_ps);
void advance_for_ps(uint64_t ps);
// Nothing is pending in the kernel at or before `t_ps` (at or after the running thread's
// time), and the event order is not canonical: what the running thread starts at its time
// comes before anything else of that time, as if the thread had slept until then.
bool nothing_pending_through(uint64_t t_ps);
// The running thread's time is the kernel's again: before it waits on an event (the
// thread's next wake is then at or after its time, as nothing was pending before it).
void release_ahead();
// The kernel's time catches up with the running thread's (it sleeps until then), before
// code that runs at the kernel's time (host software called from the HCA's firmware) or a
// notification that wakes another thread.
void catch_up();
// The end of the kernel's current run (the time given to sc_start), set by whoever calls
// sc_start and looks at the models between runs: a thread that runs ahead of the kernel's
// time stops short of it, so what is read between two runs is what a thread that slept would
// have left. ~0 (the default): no end known.
void set_run_end(uint64_t ps);
uint64_t run_end();
// Makes the sleepers' agenda now: a model whose threads sleep calls it at elaboration, so
// the agenda's event and the Scheduler are not created in the middle of a run.
void prepare_sleep();

}  // namespace ibvp::sim
