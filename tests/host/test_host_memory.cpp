// Host memory as a TLM-2.0 target: sparse storage that reads zero where nothing was written,
// byte-exact round trips across pages, address errors, byte enables, streaming, the access
// latency on the annotated delay, and the timeless debug and host-side accessors.
//
// The calls are made from the test body before sc_start, as a loosely-timed initiator
// would make them with its local time offset: b_transport neither waits nor needs the
// kernel, so every test can run in one process.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

#include "models/host/host_memory.h"

using namespace ibvp;
using sc_core::SC_NS;
using sc_core::sc_time;

namespace {

struct Initiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Initiator> socket;
  explicit Initiator(sc_core::sc_module_name name) : sc_core::sc_module(name), socket("socket") {}

  tlm::tlm_response_status transport(tlm::tlm_command cmd, uint64_t address, uint8_t* data, uint32_t bytes,
                                     sc_time& delay, const std::vector<uint8_t>* enables = nullptr,
                                     uint32_t streaming_width = 0) {
    tlm::tlm_generic_payload t;
    t.set_command(cmd);
    t.set_address(address);
    t.set_data_ptr(data);
    t.set_data_length(bytes);
    t.set_streaming_width(streaming_width == 0 ? bytes : streaming_width);
    if (enables) {
      t.set_byte_enable_ptr(const_cast<uint8_t*>(enables->data()));
      t.set_byte_enable_length(static_cast<uint32_t>(enables->size()));
    }
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    socket->b_transport(t, delay);
    return t.get_response_status();
  }

  tlm::tlm_response_status write(uint64_t address, std::vector<uint8_t> data, sc_time& delay) {
    return transport(tlm::TLM_WRITE_COMMAND, address, data.data(), static_cast<uint32_t>(data.size()), delay);
  }

  std::vector<uint8_t> read(uint64_t address, uint32_t bytes, sc_time& delay,
                            tlm::tlm_response_status expect = tlm::TLM_OK_RESPONSE) {
    std::vector<uint8_t> out(bytes, 0xEE);
    EXPECT_EQ(transport(tlm::TLM_READ_COMMAND, address, out.data(), bytes, delay), expect);
    return out;
  }

  unsigned int debug(tlm::tlm_command cmd, uint64_t address, uint8_t* data, uint32_t bytes) {
    tlm::tlm_generic_payload t;
    t.set_command(cmd);
    t.set_address(address);
    t.set_data_ptr(data);
    t.set_data_length(bytes);
    return socket->transport_dbg(t);
  }
};

std::vector<uint8_t> pattern(size_t bytes, uint8_t seed) {
  std::vector<uint8_t> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<uint8_t>(seed + 7 * i);
  return v;
}

struct Bench {
  Initiator cpu;
  host::HostMemory memory;
  explicit Bench(const host::HostMemoryConfig& cfg = host::HostMemoryConfig{}) : cpu("cpu"), memory("memory", cfg) {
    cpu.socket.bind(memory.socket);
  }
};

constexpr uint64_t kPage = host::HostMemory::kPageBytes;

}  // namespace

TEST(HostMemory, NeverWrittenBytesReadAsZeroWithoutAllocating) {
  Bench b;
  sc_time delay;
  EXPECT_EQ(b.cpu.read(0x1234'5678, 9000, delay), std::vector<uint8_t>(9000, 0));
  EXPECT_EQ(b.memory.read(uint64_t{40} << 30, 16), std::vector<uint8_t>(16, 0));
  EXPECT_EQ(b.memory.pages_allocated(), 0u);
}

TEST(HostMemory, WriteThenReadRoundTripsAcrossAPageBoundary) {
  Bench b;
  const std::vector<uint8_t> data = pattern(300, 3);
  const uint64_t address = 5 * kPage - 100;  // 100 bytes in one page, 200 in the next
  sc_time delay;
  ASSERT_EQ(b.cpu.write(address, data, delay), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(b.cpu.read(address, 300, delay), data);
  EXPECT_EQ(b.memory.pages_allocated(), 2u);
  // The bytes around the write were never written: still zero.
  std::vector<uint8_t> wider = b.cpu.read(address - 4, 308, delay);
  EXPECT_EQ(std::vector<uint8_t>(wider.begin(), wider.begin() + 4), std::vector<uint8_t>(4, 0));
  EXPECT_EQ(std::vector<uint8_t>(wider.begin() + 4, wider.begin() + 304), data);
  EXPECT_EQ(std::vector<uint8_t>(wider.begin() + 304, wider.end()), std::vector<uint8_t>(4, 0));
  // The host-side view is the same memory.
  EXPECT_EQ(b.memory.read(address, 300), data);
}

TEST(HostMemory, AccessLatencyIsAddedToTheAnnotatedDelay) {
  host::HostMemoryConfig cfg;
  cfg.access_latency = sc_time(55, SC_NS);
  Bench b(cfg);
  sc_time delay(1000, SC_NS);  // the initiator's local time offset is kept
  b.cpu.write(64, pattern(64, 1), delay);
  EXPECT_EQ(delay, sc_time(1055, SC_NS));
  b.cpu.read(64, 64, delay);
  EXPECT_EQ(delay, sc_time(1110, SC_NS));
}

TEST(HostMemory, AccessBeyondTheEndIsAnAddressErrorAndChangesNothing) {
  host::HostMemoryConfig cfg;
  cfg.size_bytes = 16 * kPage;
  Bench b(cfg);
  sc_time delay;
  std::vector<uint8_t> data = pattern(8, 9);
  const uint64_t end = cfg.size_bytes;
  EXPECT_EQ(b.cpu.transport(tlm::TLM_WRITE_COMMAND, end, data.data(), 8, delay), tlm::TLM_ADDRESS_ERROR_RESPONSE);
  // Straddling the end: refused as a whole, nothing of it written.
  EXPECT_EQ(b.cpu.transport(tlm::TLM_WRITE_COMMAND, end - 4, data.data(), 8, delay),
            tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(b.memory.pages_allocated(), 0u);
  b.cpu.read(end - 4, 8, delay, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  // An address so large that address + length wraps around 2^64 is refused, not wrapped.
  b.cpu.read(~uint64_t{0} - 2, 8, delay, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  // The last bytes that exist are fine.
  EXPECT_EQ(b.cpu.transport(tlm::TLM_WRITE_COMMAND, end - 8, data.data(), 8, delay), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(b.cpu.read(end - 8, 8, delay), data);
}

TEST(HostMemory, ByteEnablesWriteAndReadOnlyTheEnabledBytes) {
  Bench b;
  sc_time delay;
  b.cpu.write(0, std::vector<uint8_t>(8, 0x11), delay);
  // A pattern shorter than the data repeats: enable bytes 0 and 3 of every 4.
  const std::vector<uint8_t> enables = {0xFF, 0x00, 0x00, 0xFF};
  std::vector<uint8_t> data(8, 0x22);
  ASSERT_EQ(b.cpu.transport(tlm::TLM_WRITE_COMMAND, 0, data.data(), 8, delay, &enables), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(b.memory.read(0, 8), (std::vector<uint8_t>{0x22, 0x11, 0x11, 0x22, 0x22, 0x11, 0x11, 0x22}));
  std::vector<uint8_t> out(8, 0xEE);
  ASSERT_EQ(b.cpu.transport(tlm::TLM_READ_COMMAND, 0, out.data(), 8, delay, &enables), tlm::TLM_OK_RESPONSE);
  // Disabled bytes of a read are left as the initiator had them.
  EXPECT_EQ(out, (std::vector<uint8_t>{0x22, 0xEE, 0xEE, 0x22, 0x22, 0xEE, 0xEE, 0x22}));
  // A byte-enable pointer with no length is malformed.
  tlm::tlm_generic_payload t;
  t.set_command(tlm::TLM_WRITE_COMMAND);
  t.set_data_ptr(data.data());
  t.set_data_length(8);
  t.set_streaming_width(8);
  t.set_byte_enable_ptr(data.data());
  t.set_byte_enable_length(0);
  b.cpu.socket->b_transport(t, delay);
  EXPECT_EQ(t.get_response_status(), tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
}

TEST(HostMemory, StreamingWidthRepeatsTheAddressWindow) {
  Bench b;
  sc_time delay;
  // 8 bytes into a 2-byte FIFO-like window: the last two land.
  std::vector<uint8_t> data = pattern(8, 0);
  ASSERT_EQ(b.cpu.transport(tlm::TLM_WRITE_COMMAND, 100, data.data(), 8, delay, nullptr, 2), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(b.memory.read(100, 3), (std::vector<uint8_t>{data[6], data[7], 0}));
}

TEST(HostMemory, DebugTransportAndHostAccessorsTakeNoTimeAndClampOrThrowAtTheEnd) {
  host::HostMemoryConfig cfg;
  cfg.size_bytes = 4 * kPage;
  Bench b(cfg);
  std::vector<uint8_t> data = pattern(32, 5);
  EXPECT_EQ(b.cpu.debug(tlm::TLM_WRITE_COMMAND, 1000, data.data(), 32), 32u);
  EXPECT_EQ(b.memory.read(1000, 32), data);
  // Debug transport moves what lies inside the memory and says how much.
  std::vector<uint8_t> tail(32, 0xEE);
  EXPECT_EQ(b.cpu.debug(tlm::TLM_READ_COMMAND, cfg.size_bytes - 8, tail.data(), 32), 8u);
  EXPECT_EQ(b.cpu.debug(tlm::TLM_READ_COMMAND, cfg.size_bytes, tail.data(), 32), 0u);
  // Host-side accessors are for code that must not miss: out of range is an exception.
  EXPECT_THROW(b.memory.write(cfg.size_bytes - 8, data.data(), 32), std::out_of_range);
  EXPECT_THROW(b.memory.read(cfg.size_bytes, 1), std::out_of_range);
  b.memory.write(cfg.size_bytes - 32, data.data(), 32);
  sc_time delay;
  EXPECT_EQ(b.cpu.read(cfg.size_bytes - 32, 32, delay), data);
}
