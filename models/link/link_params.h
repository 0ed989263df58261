#pragma once
// Parameter declarations of the link layer: cables (LinkConfig) and the IBA VL arbitration
// tables (VlArbConfig) that switches and channel adapters share.
#include <array>
#include <cstdint>
#include <set>
#include <string>

#include "models/ib/packet.h"
#include "models/link/link_rate.h"
#include "models/link/vl_arbiter.h"
#include "models/sim/params.h"

namespace ibvp::link {

const sim::ParamGroup& link_params();         // LinkConfig
const sim::ParamGroup& vlarb_entry_params();  // VlArbEntry
const sim::ParamGroup& vlarb_params();        // VlArbConfig

// Checks a VL arbitration configuration against the number of operational data VLs: every
// entry names a data VL below data_vls, and some entry has a weight above 0. Throws
// sim::ParamError keyed relative to the port's group ("vlarb.low[2].vl").
void check_vlarb(const VlArbConfig& cfg, uint8_t data_vls);

// Whether some entry of either table serves `vl` with a weight above 0 (a VL without one
// never sends).
bool vlarb_serves(const VlArbConfig& cfg, uint8_t vl);

// Every SL maps to an operational data VL. Throws sim::ParamError keyed "sl2vl[SL]".
void check_sl2vl(const std::array<uint8_t, 16>& sl2vl, uint8_t data_vls);

// Bytes of VL15 buffer one subnet-management packet needs (a 256-byte MAD with its
// headers, in 64-byte blocks): a smaller VL15 buffer would drop every SMP.
uint32_t mad_buffer_bytes();

// The parameters every IBA port (switch or channel adapter) has: operational data VLs,
// receive buffers, VL arbitration and the SL to VL map. Declared once here for both
// SwitchConfig and EndpointConfig, which name these fields alike. `default_sl2vl` gives the
// SL2VL table used when none is written.
template <class Cfg>
void declare_port_params(sim::GroupBuilder<Cfg>& b, const std::string& buffer_doc,
                         std::array<uint8_t, 16> (*default_sl2vl)(uint8_t)) {
  b.integer("data_vls", &Cfg::data_vls, "VLs", "Operational data VLs (VL0 .. data_vls-1).").range(1, kMaxVls - 1);
  // Credits count 64-byte blocks: a buffer that is not a whole number of blocks would be
  // silently truncated, so it is refused.
  b.integer("vl_buffer_bytes", &Cfg::vl_buffer_bytes, "bytes", buffer_doc)
      .range(ib::kCreditBlockBytes, int64_t{1} << 30)
      .multiple_of(ib::kCreditBlockBytes);
  b.integer("vl15_buffer_bytes", &Cfg::vl15_buffer_bytes, "bytes",
            "Receive buffer for VL15 (subnet management); VL15 has no credits, a full buffer drops.")
      .range(mad_buffer_bytes(), int64_t{1} << 30)
      .multiple_of(ib::kCreditBlockBytes);
  b.object("vlarb", &Cfg::vlarb, vlarb_params(), "VL arbitration of the transmitting port(s).")
      .defaults_to("round robin over the data VLs, weight 255 each");
  b.integers("sl2vl", &Cfg::sl2vl, "", "SL to VL map: entry i is the VL of service level i.")
      .range(0, kMaxVls - 2)
      .defaults_to("SL mod data_vls");
  b.rule("Every vlarb entry and every sl2vl value names a data VL below data_vls.");
  b.rule("Some vlarb entry has a weight above 0.");
  b.on_complete([default_sl2vl](Cfg& c, const std::set<std::string>& given) {
    // Tables that depend on data_vls follow it unless written out.
    if (!given.count("vlarb")) c.vlarb = VlArbConfig::round_robin(c.data_vls);
    if (!given.count("sl2vl")) c.sl2vl = default_sl2vl(c.data_vls);
    check_vlarb(c.vlarb, c.data_vls);
    check_sl2vl(c.sl2vl, c.data_vls);
  });
}

}  // namespace ibvp::link
