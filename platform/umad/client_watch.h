#pragma once
// Whether a client process has finished reacting: the serving loop (serve.h) holds the
// fabric after a delivery until every client is blocked again, so the MADs a client sends in
// reaction leave at the simulated time of their trigger.
#include <cstdint>

namespace ibvp::umad {

// True when every thread of process `pid` sleeps (Linux /proc/<pid>/task/*/stat state S),
// is stopped, or the process is gone; false while one runs or is runnable (R) or waits
// uninterruptibly (D). A process the server cannot see (another PID namespace) counts as
// blocked: nothing is waited for.
bool process_blocked(uint32_t pid);

}  // namespace ibvp::umad
