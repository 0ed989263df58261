// An out-of-tree image: the default transport with doorbells in arrival order, and one log
// line of its own at init, which the test finds in the run's firmware.log.
#include "firmware/default/firmware.h"

#define IBVP_FW_EXPORT extern "C" __attribute__((visibility("default")))

IBVP_FW_EXPORT uint32_t ibvp_fw_hal_version(void) { return IBVP_HAL_VERSION; }
IBVP_FW_EXPORT void* ibvp_fw_init(const ibvp_hal* hal, const char* args) {
  hal->log(hal->ctx, IBVP_LOG_INFO, "out-of-tree image on the installed transport");
  return ibvp::fw::init_firmware(hal, args, ibvp::fw::DoorbellPolicy::fcfs);
}
IBVP_FW_EXPORT void ibvp_fw_handle(void* fw, const ibvp_fw_event* ev) { ibvp::fw::handle_firmware(fw, ev); }
IBVP_FW_EXPORT void ibvp_fw_fini(void* fw) { ibvp::fw::fini_firmware(fw); }
