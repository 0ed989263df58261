// The default firmware image: seed 003 Sec. 3.3.1 prioritized doorbells (FCFS within a
// class, higher class first) and the transport and QP scheduling of firmware.h.
#include "firmware/default/firmware.h"

#define IBVP_FW_EXPORT extern "C" __attribute__((visibility("default")))

IBVP_FW_EXPORT uint32_t ibvp_fw_hal_version(void) { return IBVP_HAL_VERSION; }
IBVP_FW_EXPORT void* ibvp_fw_init(const ibvp_hal* hal, const char* args) {
  return ibvp::fw::init_firmware(hal, args, ibvp::fw::DoorbellPolicy::prioritized);
}
IBVP_FW_EXPORT void ibvp_fw_handle(void* fw, const ibvp_fw_event* ev) { ibvp::fw::handle_firmware(fw, ev); }
IBVP_FW_EXPORT void ibvp_fw_fini(void* fw) { ibvp::fw::fini_firmware(fw); }
