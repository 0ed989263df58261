/* An image built for another HAL version: the platform must refuse to load it, naming its
 * path and both versions (test HcaFirmware.ImageWithWrongHalVersionIsRefused). Written in
 * C to show that the HAL is plain C. */
#include "firmware/hal/ibvp_hal.h"

#include <stddef.h>

#define IBVP_FW_EXPORT __attribute__((visibility("default")))

IBVP_FW_EXPORT uint32_t ibvp_fw_hal_version(void) { return IBVP_HAL_VERSION + 1u; }
IBVP_FW_EXPORT void* ibvp_fw_init(const struct ibvp_hal* hal, const char* args) {
  (void)hal;
  (void)args;
  return NULL;
}
IBVP_FW_EXPORT void ibvp_fw_handle(void* fw, const struct ibvp_fw_event* ev) {
  (void)fw;
  (void)ev;
}
IBVP_FW_EXPORT void ibvp_fw_fini(void* fw) { (void)fw; }
