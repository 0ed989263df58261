#pragma once
// Parameter declarations of the switch model (SwitchConfig).
#include "models/sim/params.h"

namespace ibvp::sw {

const sim::ParamGroup& switch_params();

}  // namespace ibvp::sw
