#pragma once
// Link width and speed as IBA names them, and the data rate that the line encoding of each
// speed leaves for packets. A packet occupies a link for its byte-exact size over this rate.
#include <cstdint>
#include <string>
#include <systemc>

namespace ibvp::link {

enum class Width : uint8_t { x1 = 1, x2 = 2, x4 = 4, x8 = 8, x12 = 12 };
enum class Speed : uint8_t { sdr, ddr, qdr, fdr10, fdr, edr, hdr, ndr };

struct SpeedInfo {
  const char* name;
  uint64_t signal_hz;    // per-lane signalling rate (baud times bits per symbol)
  uint32_t enc_payload;  // line encoding: enc_payload data bits per enc_total line bits
  uint32_t enc_total;
  const char* encoding;  // for reports
};
const SpeedInfo& speed_info(Speed s);

// Parse "1X".."12X" and "SDR".."NDR" (case-insensitive); false if not a known name.
bool parse_width(const std::string& text, Width& out);
bool parse_speed(const std::string& text, Speed& out);
std::string width_name(Width w);
const char* speed_name(Speed s);
// How PortInfo codes a link (IBA 14.2.5.6), for every agent that reports one (the switch
// SMA, the HCA's registers, the umad server): LinkWidthActive bits 1 1x, 2 4x, 4 8x, 8 12x,
// 16 2x; LinkSpeedActive 1 SDR, 2 DDR, 4 QDR, and LinkSpeedExtActive 1 FDR, 2 EDR, 4 HDR,
// 8 NDR (IBA 1.3), 0 for the base speeds. An extended speed's LinkSpeedActive shows the
// highest base speed, 4. FDR10 is a vendor extension IBA has no code for: QDR.
uint8_t port_info_width_code(Width w);
void port_info_speed_codes(Speed s, uint8_t& speed, uint8_t& ext);

struct LinkConfig {
  Width width = Width::x4;
  Speed speed = Speed::sdr;
  double length_m = 1.0;                 // cable length
  double propagation_ns_per_m = 5.0;     // signal velocity ~0.67 c in copper and fibre
  // A data rate outside IBA's widths and speeds, in whole b/s after any encoding (0: width x
  // speed). Seed 003's flit routers run 1.6 Gb/s links (switch.model: flit_wormhole).
  uint64_t data_bps = 0;
};

class LinkRate {
 public:
  explicit LinkRate(const LinkConfig& cfg);
  // Data rate after line encoding, in bits per second.
  double data_bits_per_s() const;
  // Time the link is occupied by `bytes` bytes, rounded up to the picosecond (a link cannot
  // finish a packet early). Exact integer arithmetic: no drift over millions of packets.
  sc_core::sc_time serialization(uint32_t bytes) const;
  uint64_t serialization_ps(uint32_t bytes) const;
  sc_core::sc_time propagation() const { return propagation_; }
  // What PortInfo reports (LinkWidthActive, LinkSpeedActive).
  Width width() const { return width_; }
  Speed speed() const { return speed_; }

 private:
  Width width_;
  Speed speed_;
  uint64_t lanes_;
  uint64_t data_bps_;  // LinkConfig::data_bps
  SpeedInfo info_;
  sc_core::sc_time propagation_;
};

}  // namespace ibvp::link
