#include "models/link/fabric_payload.h"

#include <cassert>

namespace ibvp::link {

PayloadPool::~PayloadPool() {
  // The generic payload's destructor frees its extensions.
  for (tlm::tlm_generic_payload* gp : all_) delete gp;
}

tlm::tlm_generic_payload* PayloadPool::acquire() {
  tlm::tlm_generic_payload* gp;
  if (free_.empty()) {
    gp = new tlm::tlm_generic_payload(this);
    gp->set_extension(new FabricExt());
    all_.push_back(gp);
  } else {
    gp = free_.back();
    free_.pop_back();
  }
  gp->acquire();
  return gp;
}

void PayloadPool::free(tlm::tlm_generic_payload* gp) { free_.push_back(gp); }

FabricExt& PayloadPool::ext(tlm::tlm_generic_payload& gp) {
  FabricExt* e = gp.get_extension<FabricExt>();
  assert(e && "fabric payload without FabricExt");
  return *e;
}

}  // namespace ibvp::link
