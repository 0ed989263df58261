#pragma once
// Firmware faults reported as the platform's own error, not as a bare signal.
//
// A firmware image runs in the simulator's process (dlopen, called through the HAL), so a
// NULL dereference, an abort() or an endless loop in it would kill or hang the whole run
// with nothing to say which image did it. While firmware code runs (between a FirmwareCall's
// construction and destruction, minus the HAL calls it makes: HalCall), handlers for
// SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT write one message naming the image, the HCA,
// the event being handled, the simulated time and the key hca.firmware_image, then a
// backtrace, and end the process with kExitFirmwareFault. A watchdog thread ends it the same
// way when one firmware call has run longer than its wall-clock limit (hca.firmware_watchdog).
//
// A signal raised outside firmware code goes to the handler that was installed before
// (SystemC's, the sanitizers', or the default action), so the platform's own faults and
// AddressSanitizer's reports are unchanged.
#include <cstdint>
#include <string>

namespace ibvp::hca {

// Exit status of a process whose firmware faulted or hung (ibvp-sim documents it).
constexpr int kExitFirmwareFault = 4;

// What the handlers report about the firmware code running now. Fixed-size text so that a
// signal handler reads it without allocating.
struct FirmwareCallInfo {
  const char* image = "";  // path of the image (owned by the FirmwareImage, outlives the call)
  const char* hca = "";    // the HCA's SystemC name
  const char* event = "";  // "init", "doorbell", "command", "rx_packet", "tx_done", "timer", "fini"
  uint64_t time_ps = 0;    // simulated time of the call
  uint64_t watchdog_ns = 0;  // wall-clock limit of the call; 0: none
  // The HCA's last hal->log line, or null: a dying run never writes firmware.log, and the
  // image's last words often say what it was doing. Read only while firmware code runs
  // (HAL calls, which change it, are not firmware code).
  const std::string* last_log = nullptr;
};

// Firmware code runs during this object's life (RAII). Calls nest across SystemC threads: a
// HAL call that waits lets another HCA's core enter its firmware; each restores what it
// replaced.
class FirmwareCall {
 public:
  explicit FirmwareCall(const FirmwareCallInfo& info);
  ~FirmwareCall();
  FirmwareCall(const FirmwareCall&) = delete;
  FirmwareCall& operator=(const FirmwareCall&) = delete;

 private:
  FirmwareCallInfo info_;
  const FirmwareCallInfo* outer_;
};

// Platform code called by the firmware (a HAL service): not firmware code, and its wall time
// (which may include the rest of the fabric simulating while the core waits) does not count
// against the watchdog.
class HalCall {
 public:
  HalCall();
  ~HalCall();
  HalCall(const HalCall&) = delete;
  HalCall& operator=(const HalCall&) = delete;

 private:
  const FirmwareCallInfo* inner_;
};

// An event's handler charged more core cycles than hca.firmware_cycle_budget allows (it
// loops through HAL calls and never returns): writes a backtrace (the image's frames that
// loop) and one message naming the image, HCA, event, simulated time, the cycles charged and
// the key, then ends the process with kExitFirmwareFault.
[[noreturn]] void report_cycle_budget(const FirmwareCallInfo& call, uint64_t charged, uint64_t budget);

// Installs the signal handlers and an alternate signal stack (once per process); starts the
// watchdog thread when `watchdog` is true. The Hca calls it before its image's init.
void install_firmware_guard(bool watchdog);

// The event kind's name as messages show it.
const char* firmware_event_name(uint32_t kind);

}  // namespace ibvp::hca
