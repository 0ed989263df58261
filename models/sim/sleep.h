#pragma once
// A thread's timed wait as an action on the process-wide Scheduler (timed_queue.h), not as a
// timed event of the SystemC kernel. The kernel's timed-event heap returns events of equal
// time in an order its shape decides (one unrelated event far past a run's end changed seed
// 004 Fig. 4(b)'s tables); the Scheduler serves equal times first-in first-out. So a host
// program, the HCA's embedded core and its tx engine wake, among the fabric's actions of
// the same time, in the order their waits were made (issue 15 part 2).
//
// The action notifies the sleeping thread's own event at once; the thread runs when the
// Scheduler's step has handed out the actions due then, in the order the wake-ups were served.
#include <cstdint>
#include <systemc>

namespace ibvp::sim {

// The kernel's time in ps: what a thread sees when it has woken.
inline uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

// Suspends the calling SystemC thread until `when_ps` (absolute). A time not after now
// returns at once (nothing waited, as sc_core::wait is never called with zero here).
void sleep_until(uint64_t when_ps);
// Suspends the calling thread for `t` (zero: returns at once).
void sleep_for(const sc_core::sc_time& t);
// The end of the kernel's current run (the time given to sc_start), set by whoever calls
// sc_start and looks at the models between runs: a thread that runs ahead of the kernel's
// time (the HCA's embedded core) stops short of it, so what is read between two runs is what
// a thread that slept would have left. ~0 (the default): no end known.
void set_run_end(uint64_t ps);
uint64_t run_end();
// Makes the sleepers' agenda now: a model whose threads sleep calls it at elaboration, so
// the agenda's event and the Scheduler are not created in the middle of a run.
void prepare_sleep();

}  // namespace ibvp::sim
