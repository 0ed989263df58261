#include "models/link/link_params.h"

#include <string>
#include <utility>
#include <vector>

namespace ibvp::link {

const sim::ParamGroup& link_params() {
  static const sim::ParamGroup group = [] {
    sim::GroupBuilder<LinkConfig> b("link", "A cable: its width and speed set the data rate, its length the propagation delay.");
    std::vector<std::pair<std::string, Width>> widths;
    for (Width w : {Width::x1, Width::x2, Width::x4, Width::x8, Width::x12}) widths.emplace_back(width_name(w), w);
    b.choice("width", &LinkConfig::width, widths, "Number of lanes.");
    std::vector<std::pair<std::string, Speed>> speeds;
    for (Speed s : {Speed::sdr, Speed::ddr, Speed::qdr, Speed::fdr10, Speed::fdr, Speed::edr, Speed::hdr, Speed::ndr})
      speeds.emplace_back(speed_name(s), s);
    b.choice("speed", &LinkConfig::speed, speeds, "Per-lane signalling rate; the data rate is what its line encoding leaves.");
    b.real("length_m", &LinkConfig::length_m, "m", "Cable length.").real_range(0.0, 1e6);
    b.real("propagation_ns_per_m", &LinkConfig::propagation_ns_per_m, "ns/m",
           "Signal delay per metre of cable (5 ns/m is about 0.67 c, copper or fibre).")
        .real_range(0.0, 1e3);
    return b.build();
  }();
  return group;
}

const sim::ParamGroup& vlarb_entry_params() {
  static const sim::ParamGroup group = [] {
    sim::GroupBuilder<VlArbEntry> b("vlarb entry", "One (VL, weight) entry of an IBA VL arbitration table.");
    // VL15 is never in the tables: it goes before every data VL (IBA 7.6.9).
    b.integer("vl", &VlArbEntry::vl, "", "Data VL this entry serves.").range(0, kMaxVls - 2).require();
    b.integer("weight", &VlArbEntry::weight, "64-byte units",
              "Bytes the VL may send when its entry is current; 0 disables the entry.")
        .require();
    return b.build();
  }();
  return group;
}

const sim::ParamGroup& vlarb_params() {
  static const sim::ParamGroup group = [] {
    sim::GroupBuilder<VlArbConfig> b(
        "vlarb", "IBA VL arbitration of an output port (IBA 7.6.9): a high- and a low-priority table.");
    // The IBA tables hold at most 64 entries each (VLArbitrationTable attribute, 4 blocks of 16).
    b.objects("high", &VlArbConfig::high, vlarb_entry_params(), "High-priority table, served first.").items(0, 64);
    b.objects("low", &VlArbConfig::low, vlarb_entry_params(), "Low-priority table.").items(0, 64);
    b.integer("high_limit", &VlArbConfig::high_limit, "4096-byte units",
              "LimitOfHighPriority: high-priority bytes sent while low waits; 0 is one packet, 255 unbounded.");
    b.rule("A written vlarb replaces the default as a whole: tables not written are empty.");
    // A written group starts empty, not from the round-robin default: what the user wrote
    // is the whole table, and a half-default table would arbitrate VLs nobody listed.
    b.on_begin([](VlArbConfig& c) { c = VlArbConfig{}; });
    return b.build();
  }();
  return group;
}

void check_vlarb(const VlArbConfig& cfg, uint8_t data_vls) {
  bool any = false;
  const auto table = [&](const std::vector<VlArbEntry>& entries, const char* name) {
    for (size_t i = 0; i < entries.size(); ++i) {
      const VlArbEntry& e = entries[i];
      if (e.vl >= data_vls)
        throw sim::ParamError("vlarb." + std::string(name) + "[" + std::to_string(i) + "].vl",
                              "VL " + std::to_string(e.vl) + " is not an operational data VL (data_vls is " +
                                  std::to_string(data_vls) + ")",
                              "use a VL in 0.." + std::to_string(data_vls - 1) + " or raise data_vls");
      any = any || e.weight > 0;
    }
  };
  table(cfg.high, "high");
  table(cfg.low, "low");
  if (!any)
    throw sim::ParamError("vlarb", "no table entry has a weight above 0, so the port could never send",
                          "give at least one entry a weight of 1..255, or remove vlarb for round robin");
}

void check_sl2vl(const std::array<uint8_t, 16>& sl2vl, uint8_t data_vls) {
  for (size_t sl = 0; sl < sl2vl.size(); ++sl) {
    if (sl2vl[sl] >= data_vls)
      throw sim::ParamError("sl2vl[" + std::to_string(sl) + "]",
                            "SL " + std::to_string(sl) + " maps to VL " + std::to_string(sl2vl[sl]) +
                                ", which is not an operational data VL (data_vls is " + std::to_string(data_vls) + ")",
                            "map every SL to a VL in 0.." + std::to_string(data_vls - 1) + " or raise data_vls");
  }
}

uint32_t mad_buffer_bytes() {
  // Subnet management packets are UD sends carrying one 256-byte MAD (IBA 13.4).
  ib::Packet p;
  p.bth.opcode = ib::Opcode::ud_send_only;
  p.payload_bytes = 256;
  return p.credit_blocks() * ib::kCreditBlockBytes;
}

bool vlarb_serves(const VlArbConfig& cfg, uint8_t vl) {
  for (const auto* t : {&cfg.high, &cfg.low})
    for (const VlArbEntry& e : *t)
      if (e.vl == vl && e.weight > 0) return true;
  return false;
}

}  // namespace ibvp::link
