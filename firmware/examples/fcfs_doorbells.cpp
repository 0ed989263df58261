// Example image: the default transport with doorbells served in arrival order across all
// priority classes, as a VIA NIC without seed 003's prioritized doorbells would serve them.
// A high-class doorbell that arrives behind low-class ones now waits for them: the test
// HcaFirmware.ExampleImageServesDoorbellsInArrivalOrder measures the difference.
#include "firmware/default/firmware.h"

#define IBVP_FW_EXPORT extern "C" __attribute__((visibility("default")))

IBVP_FW_EXPORT uint32_t ibvp_fw_hal_version(void) { return IBVP_HAL_VERSION; }
IBVP_FW_EXPORT void* ibvp_fw_init(const ibvp_hal* hal, const char* args) {
  return ibvp::fw::init_firmware(hal, args, ibvp::fw::DoorbellPolicy::fcfs);
}
IBVP_FW_EXPORT void ibvp_fw_handle(void* fw, const ibvp_fw_event* ev) { ibvp::fw::handle_firmware(fw, ev); }
IBVP_FW_EXPORT void ibvp_fw_fini(void* fw) { ibvp::fw::fini_firmware(fw); }
