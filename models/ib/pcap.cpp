#include "models/ib/pcap.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "models/ib/wire.h"

namespace ibvp::ib {

namespace {

// pcap-savefile header constants (libpcap pcap-savefile(5); IETF draft-ietf-opsawg-pcap).
constexpr uint32_t kMagicNanoseconds = 0xA1B23C4Du;  // record timestamps are sec + nsec
constexpr uint16_t kVersionMajor = 2;
constexpr uint16_t kVersionMinor = 4;
// Largest record we accept. An IBA packet is at most 4096 payload bytes plus 126 bytes of
// headers and CRCs (the limit behind LRH.PktLen, IBA 7.7.8) and the exported-PDU TLVs add
// 20; 262144 is the default snaplen of tcpdump/libpcap.
constexpr uint32_t kSnapLen = 262144;

// Exported-PDU TLVs (Wireshark epan/exported_pdu.h): 2-byte big-endian tag, 2-byte
// big-endian length, value padded to 4 bytes; padding NULs are counted in the length.
constexpr uint16_t kExpPduTagEndOfOpt = 0;
constexpr uint16_t kExpPduTagDissectorName = 12;
constexpr char kDissectorName[] = "infiniband";

void le16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
void le32(uint8_t* p, uint32_t v) {
  le16(p, static_cast<uint16_t>(v));
  le16(p + 2, static_cast<uint16_t>(v >> 16));
}
void be16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

// The TLV prefix is the same for every record: build it once.
std::vector<uint8_t> make_upper_pdu_prefix() {
  const size_t name_len = sizeof kDissectorName - 1;
  const size_t padded = (name_len + 3) & ~size_t{3};
  std::vector<uint8_t> tlv(4 + padded + 4, 0);
  be16(tlv.data(), kExpPduTagDissectorName);
  be16(tlv.data() + 2, static_cast<uint16_t>(padded));
  std::memcpy(tlv.data() + 4, kDissectorName, name_len);
  be16(tlv.data() + 4 + padded, kExpPduTagEndOfOpt);  // length 0 already
  return tlv;
}

const std::vector<uint8_t>& upper_pdu_prefix() {
  static const std::vector<uint8_t> prefix = make_upper_pdu_prefix();
  return prefix;
}

// sc_time -> nanoseconds, exactly: the time resolution is a power of ten femtoseconds,
// so scaling by an integer factor either way loses nothing that nanoseconds could show.
uint64_t to_nanoseconds(const sc_core::sc_time& t) {
  const auto res_fs = static_cast<uint64_t>(
      std::llround(sc_core::sc_get_time_resolution().to_seconds() * 1e15));
  const uint64_t v = t.value();
  if (res_fs >= 1000000) return v * (res_fs / 1000000);
  return v / (1000000 / (res_fs ? res_fs : 1));
}

std::runtime_error io_error(const char* what, const std::string& path, int err) {
  return std::runtime_error(std::string("PcapWriter: cannot ") + what + " '" + path +
                            "': " + std::strerror(err));
}

}  // namespace

PcapWriter::PcapWriter(const std::string& path, PcapLinkType link_type)
    : path_(path), link_type_(link_type) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) throw io_error("open", path, errno);
  uint8_t hdr[24];
  le32(hdr, kMagicNanoseconds);
  le16(hdr + 4, kVersionMajor);
  le16(hdr + 6, kVersionMinor);
  le32(hdr + 8, 0);   // thiszone: timestamps are UTC
  le32(hdr + 12, 0);  // sigfigs
  le32(hdr + 16, kSnapLen);
  le32(hdr + 20, static_cast<uint32_t>(link_type));
  try {
    put(hdr, sizeof hdr);
  } catch (...) {
    std::fclose(file_);
    file_ = nullptr;
    throw;
  }
}

PcapWriter::~PcapWriter() {
  if (file_) std::fclose(file_);  // fclose flushes
}

void PcapWriter::put(const void* data, size_t len) {
  if (len && std::fwrite(data, 1, len, file_) != len) throw io_error("write", path_, errno);
}

void PcapWriter::flush() {
  if (std::fflush(file_) != 0) throw io_error("flush", path_, errno);
}

void PcapWriter::write(sc_core::sc_time t, const Packet& packet) {
  const std::vector<uint8_t> bytes = encode(packet);
  write_bytes(t, bytes.data(), bytes.size());
}

void PcapWriter::write_bytes(sc_core::sc_time t, const uint8_t* data, size_t len) {
  const std::vector<uint8_t>* prefix =
      link_type_ == PcapLinkType::upper_pdu ? &upper_pdu_prefix() : nullptr;
  const size_t record_len = len + (prefix ? prefix->size() : 0);
  if (record_len > kSnapLen)
    throw std::invalid_argument("PcapWriter: record of " + std::to_string(record_len) +
                                " bytes exceeds the snap length " + std::to_string(kSnapLen));
  const uint64_t ns = to_nanoseconds(t);
  uint8_t rec[16];
  le32(rec, static_cast<uint32_t>(ns / 1000000000u));
  le32(rec + 4, static_cast<uint32_t>(ns % 1000000000u));
  le32(rec + 8, static_cast<uint32_t>(record_len));   // incl_len
  le32(rec + 12, static_cast<uint32_t>(record_len));  // orig_len: never truncated
  put(rec, sizeof rec);
  if (prefix) put(prefix->data(), prefix->size());
  put(data, len);
  ++packets_;
}

}  // namespace ibvp::ib
