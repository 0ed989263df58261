#pragma once
// Parameter declarations of the fabric-only endpoint (EndpointConfig).
#include "models/sim/params.h"

namespace ibvp::ep {

const sim::ParamGroup& endpoint_params();

}  // namespace ibvp::ep
