#pragma once
// Parameter declarations of the switch model (SwitchConfig).
#include "models/sim/params.h"

namespace ibvp::sw {

const sim::ParamGroup& switch_params();
// switch.ecn (EcnConfig): congestion marking, seed 004 Sec. 5.
const sim::ParamGroup& ecn_params();

}  // namespace ibvp::sw
