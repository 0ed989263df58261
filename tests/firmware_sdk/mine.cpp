// An out-of-tree image: the default transport with doorbells in arrival order (the
// transport's own arbiter) and a QP scheduler of its own (plug-in policies,
// firmware/default/policies.h), each logging one line the test finds in the run's
// firmware.log.
#include <memory>

#include "firmware/default/firmware.h"

#define IBVP_FW_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using namespace ibvp::fw;

// The lowest QPN with a packet to send goes first (candidates come in QPN order).
class LowestQpnFirst final : public QpScheduler {
 public:
  int pick(const QpCandidate*, uint32_t n) override { return n > 0 ? 0 : -1; }
};

std::unique_ptr<QpScheduler> make_scheduler(const PolicyContext& p) {
  p.hal->log(p.hal->ctx, IBVP_LOG_INFO, "out-of-tree QP scheduler plugged in");
  return std::make_unique<LowestQpnFirst>();
}

std::unique_ptr<DoorbellArbiter> make_doorbells(const PolicyContext& p) {
  return make_doorbell_arbiter(p, DoorbellPolicy::fcfs);
}

}  // namespace

IBVP_FW_EXPORT uint32_t ibvp_fw_hal_version(void) { return IBVP_HAL_VERSION; }
IBVP_FW_EXPORT void* ibvp_fw_init(const ibvp_hal* hal, const char* args) {
  hal->log(hal->ctx, IBVP_LOG_INFO, "out-of-tree image on the installed transport");
  Policies p;
  p.qp_scheduler = make_scheduler;
  p.doorbells = make_doorbells;
  return init_firmware(hal, args, p);
}
IBVP_FW_EXPORT void ibvp_fw_handle(void* fw, const ibvp_fw_event* ev) { handle_firmware(fw, ev); }
IBVP_FW_EXPORT void ibvp_fw_fini(void* fw) { fini_firmware(fw); }
