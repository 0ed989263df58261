#pragma once
// Captures of simulated InfiniBand traffic that Wireshark/tshark open directly.
//
// File format: classic libpcap ("pcap-savefile"), written little-endian with the
// nanosecond magic 0xA1B23C4D so sc_time keeps nanosecond precision.
// Link types:
//   upper_pdu  (252, LINKTYPE_WIRESHARK_UPPER_PDU): each record starts with exported-PDU
//              TLVs naming the "infiniband" dissector (tag 12, EXP_PDU_TAG_DISSECTOR_NAME),
//              then tag 0 (end of options), then the packet bytes. Works with any
//              Wireshark that has the InfiniBand dissector, no preferences needed.
//   infiniband (247, LINKTYPE_INFINIBAND): each record is the raw packet, LRH..VCRC.
//              Registered at tcpdump.org, but Wireshark's wiretap has no mapping for it
//              (4.0: "network type 247 unknown or unsupported"); to open such a file,
//              change the header's link type to USER0 (147) and bind the "infiniband"
//              dissector to it (Preferences > Protocols > DLT_USER). Prefer upper_pdu.
// Packet bytes come from wire.h, so the ICRC/VCRC in the capture are the real ones.
#include <cstdint>
#include <cstdio>
#include <string>
#include <systemc>

#include "models/ib/packet.h"

namespace ibvp::ib {

enum class PcapLinkType : uint32_t { upper_pdu = 252, infiniband = 247 };

class PcapWriter {
 public:
  // Creates (truncates) `path` and writes the file header. Throws std::runtime_error
  // naming the path and the OS error when the file cannot be opened or written.
  PcapWriter(const std::string& path, PcapLinkType link_type = PcapLinkType::upper_pdu);
  ~PcapWriter();  // flushes and closes; errors at this point are not reported
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // One record stamped `t` (simulation time since the start, written as the epoch-based
  // timestamp 1970-01-01 + t). write() encodes the packet with ib::encode() and so throws
  // std::invalid_argument for packets with no wire form. I/O errors throw runtime_error.
  void write(sc_core::sc_time t, const Packet& packet);
  void write_bytes(sc_core::sc_time t, const uint8_t* data, size_t len);

  void flush();
  uint64_t packets_written() const { return packets_; }
  const std::string& path() const { return path_; }
  PcapLinkType link_type() const { return link_type_; }

 private:
  void put(const void* data, size_t len);

  std::string path_;
  PcapLinkType link_type_;
  std::FILE* file_ = nullptr;
  uint64_t packets_ = 0;
};

}  // namespace ibvp::ib
