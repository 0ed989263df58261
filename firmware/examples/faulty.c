/* A broken image, for the platform's firmware guard (models/hca/firmware_guard.h): at its
 * first event it faults the way ibvp_fw_init's argument says, so that tests check that the
 * run ends with exit status 4 and a message naming the image, the event and
 * hca.firmware_image (tests/fabric/test_firmware_faults.cpp). Arguments:
 *   null_deref    writes through a NULL pointer (SIGSEGV)
 *   abort         calls abort() (SIGABRT)
 *   endless_loop  never returns (the watchdog, hca.firmware_watchdog)
 *   hal_loop      never returns, charging core cycles through the HAL on every turn (the
 *                 cycle budget, hca.firmware_cycle_budget)
 * Before faulting it logs one line naming the event (hal->log).
 * Built without sanitizers: the fault must reach the platform, not UBSan's own report. */
#include "firmware/hal/ibvp_hal.h"

#include <stdlib.h>
#include <string.h>

#define IBVP_FW_EXPORT __attribute__((visibility("default")))

enum fault { NULL_DEREF, ABORT, ENDLESS_LOOP, HAL_LOOP };
static enum fault chosen;

IBVP_FW_EXPORT uint32_t ibvp_fw_hal_version(void) { return IBVP_HAL_VERSION; }

IBVP_FW_EXPORT void* ibvp_fw_init(const struct ibvp_hal* hal, const char* args) {
  if (strcmp(args, "null_deref") == 0) chosen = NULL_DEREF;
  else if (strcmp(args, "abort") == 0) chosen = ABORT;
  else if (strcmp(args, "endless_loop") == 0) chosen = ENDLESS_LOOP;
  else if (strcmp(args, "hal_loop") == 0) chosen = HAL_LOOP;
  else return NULL;
  return (void*)hal;
}

IBVP_FW_EXPORT void ibvp_fw_handle(void* fw, const struct ibvp_fw_event* ev) {
  /* The state is the HCA's HAL table: each HCA's calls go to its own context. */
  const struct ibvp_hal* hal = (const struct ibvp_hal*)fw;
  char line[64] = "faulting in event ";
  line[18] = (char)('0' + ev->kind % 10);
  line[19] = '\0';
  hal->log(hal->ctx, IBVP_LOG_ERROR, line);
  /* volatile: the compiler may neither drop the accesses nor turn them into a trap. */
  volatile int* volatile nowhere = NULL;
  volatile int spin = 1;
  switch (chosen) {
    case NULL_DEREF: *nowhere = 1; break;
    case ABORT: abort();
    case ENDLESS_LOOP:
      while (spin) {
      }
      break;
    case HAL_LOOP:
      while (spin) hal->consume_cycles(hal->ctx, 1000);
      break;
  }
}

IBVP_FW_EXPORT void ibvp_fw_fini(void* fw) { (void)fw; }
