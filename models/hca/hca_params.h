#pragma once
// Parameter declarations of the programmable HCA (HcaConfig), with defaults for a current
// 4X HCA; the sources of the defaults are in hca_params.cpp and docs/hca.md.
#include "models/hca/hca.h"
#include "models/sim/params.h"

namespace ibvp::hca {

const sim::ParamGroup& hca_params();

// Combinations a range cannot express (doorbell space, VL tables against data_vls, a core
// clock above zero). Throws sim::ParamError keyed relative to the HCA's group; the Hca
// constructor calls it, so configs built in code are checked too.
void check_hca(const HcaConfig& cfg);

}  // namespace ibvp::hca
