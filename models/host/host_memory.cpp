#include "models/host/host_memory.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ibvp::host {

HostMemory::HostMemory(sc_core::sc_module_name name, const HostMemoryConfig& cfg)
    : sc_core::sc_module(name), socket("socket"), cfg_(cfg) {
  socket.register_b_transport(this, &HostMemory::b_transport);
  socket.register_transport_dbg(this, &HostMemory::transport_dbg);
}

bool HostMemory::fits(uint64_t address, uint64_t bytes) const {
  // Written so that address + bytes cannot overflow.
  return bytes <= cfg_.size_bytes && address <= cfg_.size_bytes - bytes;
}

void HostMemory::read(uint64_t address, void* data, uint64_t bytes) const {
  if (!fits(address, bytes))
    throw std::out_of_range(std::string(name()) + ": read of " + std::to_string(bytes) + " bytes at " +
                            std::to_string(address) + " is beyond size_bytes " + std::to_string(cfg_.size_bytes));
  copy_out(address, static_cast<uint8_t*>(data), bytes);
}

std::vector<uint8_t> HostMemory::read(uint64_t address, uint64_t bytes) const {
  std::vector<uint8_t> out(bytes);
  read(address, out.data(), bytes);
  return out;
}

void HostMemory::write(uint64_t address, const void* data, uint64_t bytes) {
  if (!fits(address, bytes))
    throw std::out_of_range(std::string(name()) + ": write of " + std::to_string(bytes) + " bytes at " +
                            std::to_string(address) + " is beyond size_bytes " + std::to_string(cfg_.size_bytes));
  copy_in(address, static_cast<const uint8_t*>(data), bytes);
}

uint8_t* HostMemory::page_for_write(uint64_t page_number) {
  std::unique_ptr<uint8_t[]>& page = pages_[page_number];
  // Value-initialised: the bytes of a page that were never written still read as zero.
  if (!page) page = std::make_unique<uint8_t[]>(kPageBytes);
  return page.get();
}

const uint8_t* HostMemory::page_for_read(uint64_t page_number) const {
  const auto it = pages_.find(page_number);
  return it == pages_.end() ? nullptr : it->second.get();
}

void HostMemory::copy_out(uint64_t address, uint8_t* data, uint64_t bytes) const {
  while (bytes > 0) {
    const uint64_t offset = address % kPageBytes;
    const uint64_t chunk = std::min(bytes, kPageBytes - offset);
    const uint8_t* page = page_for_read(address / kPageBytes);
    if (page) std::memcpy(data, page + offset, chunk);
    else std::memset(data, 0, chunk);  // reading does not allocate
    address += chunk;
    data += chunk;
    bytes -= chunk;
  }
}

void HostMemory::copy_in(uint64_t address, const uint8_t* data, uint64_t bytes) {
  while (bytes > 0) {
    const uint64_t offset = address % kPageBytes;
    const uint64_t chunk = std::min(bytes, kPageBytes - offset);
    std::memcpy(page_for_write(address / kPageBytes) + offset, data, chunk);
    address += chunk;
    data += chunk;
    bytes -= chunk;
  }
}

namespace {
// A streaming width of 0 is what a payload whose initiator never set it carries; it is read
// as "no streaming" rather than refused, since nothing else could be meant.
uint64_t streaming_width(const tlm::tlm_generic_payload& trans) {
  const uint64_t w = trans.get_streaming_width();
  return w == 0 ? trans.get_data_length() : w;
}
}  // namespace

void HostMemory::access(tlm::tlm_generic_payload& trans) {
  const uint64_t address = trans.get_address();
  const uint64_t length = trans.get_data_length();
  const uint64_t width = streaming_width(trans);
  uint8_t* data = trans.get_data_ptr();
  const uint8_t* enables = trans.get_byte_enable_ptr();
  const uint64_t enables_length = trans.get_byte_enable_length();
  const bool is_write = trans.is_write();
  if (enables == nullptr && width >= length) {
    if (is_write) copy_in(address, data, length);
    else copy_out(address, data, length);
    return;
  }
  // IEEE 1666-2011 (generic payload, byte enables and streaming width): byte i of the data
  // array goes to address + i mod streaming width and takes part only if byte enable
  // i mod byte-enable length is not disabled; a disabled byte of a read is left as the
  // initiator had it.
  for (uint64_t i = 0; i < length; ++i) {
    if (enables && enables[i % enables_length] == TLM_BYTE_DISABLED) continue;
    const uint64_t at = address + i % width;
    if (is_write) copy_in(at, data + i, 1);
    else copy_out(at, data + i, 1);
  }
}

void HostMemory::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  delay += cfg_.access_latency;
  const tlm::tlm_command cmd = trans.get_command();
  if (cmd == tlm::TLM_IGNORE_COMMAND) {
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (trans.get_byte_enable_ptr() != nullptr && trans.get_byte_enable_length() == 0) {
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  const uint64_t length = trans.get_data_length();
  if (length > 0 && trans.get_data_ptr() == nullptr) {
    trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  // The bytes touched: a streaming burst stays within its first `width` bytes.
  if (!fits(trans.get_address(), std::min(length, streaming_width(trans)))) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  access(trans);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned int HostMemory::transport_dbg(tlm::tlm_generic_payload& trans) {
  // Debug transport (IEEE 1666-2011, transport_dbg) ignores byte enables and streaming
  // and returns the bytes it moved: an access running past the end moves what lies inside.
  const uint64_t address = trans.get_address();
  if (address >= cfg_.size_bytes || trans.get_data_ptr() == nullptr) return 0;
  const uint64_t bytes = std::min<uint64_t>(trans.get_data_length(), cfg_.size_bytes - address);
  if (trans.is_write()) copy_in(address, trans.get_data_ptr(), bytes);
  else if (trans.is_read()) copy_out(address, trans.get_data_ptr(), bytes);
  else return 0;
  return static_cast<unsigned int>(bytes);
}

}  // namespace ibvp::host
