#include "models/hca/firmware_guard.h"

#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "firmware/hal/ibvp_hal.h"

namespace ibvp::hca {

namespace {

// What runs now. Only atomics: the watchdog thread and the signal handlers read them.
std::atomic<const FirmwareCallInfo*> g_current{nullptr};
std::atomic<int64_t> g_entered_ns{0};  // steady clock when the current firmware code (re)started; 0: none
// The current call's watchdog limit, copied: the watchdog thread must not dereference
// g_current, whose FirmwareCallInfo lives on the simulation thread's stack and may go out of
// scope between the load and the read. The handler, on the simulation thread, may.
std::atomic<uint64_t> g_limit_ns{0};
pthread_t g_sim_thread;                // the thread that runs SystemC (and so every firmware call)
struct sigaction g_previous[NSIG];
constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
// A fault on an exhausted stack (an image recursing without end) needs a stack of its own.
alignas(16) char g_alt_stack[256 * 1024];

int64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);  // async-signal-safe
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

// Async-signal-safe output: write(2) of fixed text and decimal numbers.
void put(const char* s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    const ssize_t w = write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

void put_u64(uint64_t v) {
  char buf[24];
  char* p = buf + sizeof buf;
  *--p = '\0';
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  put(p);
}

void put_call(const FirmwareCallInfo& c) {
  put("firmware image ");
  put(c.image);
  put(" (HCA ");
  put(c.hca);
  put(", handling event ");
  put(c.event);
  put(" at simulated time ");
  put_u64(c.time_ps);
  put(" ps");
  if (c.last_log != nullptr && !c.last_log->empty()) {
    put(", its last log line \"");
    put(c.last_log->c_str());
    put("\"");
  }
  put(")");
}

void put_backtrace() {
  // 24 frames: the image's, the HCA's core and the SystemC thread that runs it.
  void* frames[24];
  const int n = backtrace(frames, 24);
  put("\nfirmware fault, backtrace (innermost first):\n");
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
}

const char* signal_text(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGFPE: return "SIGFPE (arithmetic exception, e.g. division by zero)";
    case SIGABRT: return "SIGABRT (the image called abort(), or an assertion in it failed)";
  }
  return "a fatal signal";
}

void on_fault(int sig, siginfo_t*, void*) {
  const FirmwareCallInfo* c = g_current.load();
  if (c == nullptr) {
    // Not the firmware's: hand the signal to whoever had it before. A synchronous fault
    // happens again when the handler returns; abort() raises SIGABRT again itself.
    sigaction(sig, &g_previous[sig], nullptr);
    return;
  }
  // The backtrace first, the one-line message last: a reader of the output's tail (the
  // Python front end keeps the last lines) sees the message.
  put_backtrace();
  put("ibvp: firmware fault: ");
  put(signal_text(sig));
  put(" in ");
  put_call(*c);
  put("; the image is at fault, not the platform: fix the image, or set hca.firmware_image to another one "
      "(leave it out for the build's default image); exit status 4\n");
  _exit(kExitFirmwareFault);
}

void on_watchdog(int, siginfo_t*, void*) {
  const FirmwareCallInfo* c = g_current.load();
  const int64_t entered = g_entered_ns.load();
  // The call may have returned between the watchdog's look and this signal.
  if (c == nullptr || entered == 0 || c->watchdog_ns == 0 ||
      static_cast<uint64_t>(now_ns() - entered) < c->watchdog_ns)
    return;
  put_backtrace();
  put("ibvp: firmware fault: ");
  put_call(*c);
  put(" did not return within ");
  put_u64(c->watchdog_ns / 1'000'000);
  put(" ms of wall-clock time (hca.firmware_watchdog); fix the image's endless loop, raise "
      "hca.firmware_watchdog if the image is only slow, or set hca.firmware_image to another one; exit status 4\n");
  _exit(kExitFirmwareFault);
}

}  // namespace

void report_cycle_budget(const FirmwareCallInfo& c, uint64_t charged, uint64_t budget) {
  put_backtrace();
  put("ibvp: firmware fault: ");
  put_call(c);
  put(" charged ");
  put_u64(charged);
  put(" core cycles without returning, over its budget of ");
  put_u64(budget);
  put(" (hca.firmware_cycle_budget); fix the image's endless loop, raise hca.firmware_cycle_budget if the "
      "handler is only long, or set hca.firmware_image to another one; exit status 4\n");
  _exit(kExitFirmwareFault);
}

namespace {

void* watchdog_thread(void*) {
  // A look every 50 ms: a hang is reported within the limit plus 50 ms.
  const timespec poll{0, 50'000'000};
  for (;;) {
    nanosleep(&poll, nullptr);
    // A torn pair (a new call's start, an old call's limit) only sends a signal early: the
    // handler looks again on the simulation thread before reporting anything.
    const int64_t entered = g_entered_ns.load();
    const uint64_t limit = g_limit_ns.load();
    if (entered == 0 || limit == 0) continue;
    if (static_cast<uint64_t>(now_ns() - entered) >= limit) pthread_kill(g_sim_thread, SIGALRM);
  }
  return nullptr;
}

void set_current(const FirmwareCallInfo* c) {
  g_current.store(c);
  g_limit_ns.store(c ? c->watchdog_ns : 0);
  g_entered_ns.store(c ? now_ns() : 0);
}

}  // namespace

FirmwareCall::FirmwareCall(const FirmwareCallInfo& info) : info_(info), outer_(g_current.load()) {
  set_current(&info_);
}

FirmwareCall::~FirmwareCall() { set_current(outer_); }

HalCall::HalCall() : inner_(g_current.load()) { set_current(nullptr); }

HalCall::~HalCall() { set_current(inner_); }

void install_firmware_guard(bool watchdog) {
  static std::once_flag handlers, thread;
  std::call_once(handlers, [] {
    g_sim_thread = pthread_self();
    // backtrace() loads libgcc on its first call, which allocates: do it now, not in a handler.
    void* frame[1];
    backtrace(frame, 1);
    stack_t current{};
    if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
      stack_t ss{};
      ss.ss_sp = g_alt_stack;
      ss.ss_size = sizeof g_alt_stack;
      sigaltstack(&ss, nullptr);
    }
    struct sigaction sa{};
    sa.sa_sigaction = &on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int sig : kSignals) sigaction(sig, &sa, &g_previous[sig]);
    struct sigaction alarm{};
    alarm.sa_sigaction = &on_watchdog;
    alarm.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&alarm.sa_mask);
    sigaction(SIGALRM, &alarm, &g_previous[SIGALRM]);
  });
  if (!watchdog) return;
  std::call_once(thread, [] {
    pthread_t t;
    // Detached: it sleeps until the process ends and holds nothing.
    if (pthread_create(&t, nullptr, &watchdog_thread, nullptr) == 0) pthread_detach(t);
  });
}

const char* firmware_event_name(uint32_t kind) {
  switch (kind) {
    case IBVP_EV_DOORBELL: return "doorbell";
    case IBVP_EV_COMMAND: return "command";
    case IBVP_EV_RX_PACKET: return "rx_packet";
    case IBVP_EV_TX_DONE: return "tx_done";
    case IBVP_EV_TIMER: return "timer";
    case IBVP_EV_MAD: return "mad";
  }
  return "unknown";
}

}  // namespace ibvp::hca
