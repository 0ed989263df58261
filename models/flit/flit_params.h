#pragma once
// The scenario's switch.flit block: seed 003's flit router (models/flit).
#include "models/sim/params.h"

namespace ibvp::flit {
const sim::ParamGroup& flit_params();
}
