// The host bus against times derived by formula from PCIe Gen3 x8: a TLP stream occupies a
// direction for (payload + 24 B per TLP) * 8 bits / (8 lanes * 8 GT/s * 128/130), rounded up
// to the picosecond, and a delivery comes one latency after its serialization ends.
//
// The initiators call b_transport from the test body before sc_start, as loosely-timed
// initiators do with their local time offset (the annotated delay): the bus neither waits
// nor needs the kernel, so every test can run in one process, and times are exact.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "models/host/host_bus.h"
#include "models/host/host_memory.h"
#include "models/host/host_params.h"
#include "platform/params/config_error.h"
#include "platform/params/validate.h"

using namespace ibvp;
using sc_core::SC_NS;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {

// Gen3 x8, named explicitly (the default is x16): the formulas below are for 8 lanes.
constexpr uint64_t kLanes = 8;
constexpr uint64_t kTransfersPerS = 8'000'000'000ULL;
constexpr uint64_t kMps = 256;
constexpr uint64_t kMrrs = 512;
constexpr uint64_t kOverhead = 24;
const sc_time kLatency(200, SC_NS);

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

host::HostBusConfig gen3x8() {
  host::HostBusConfig c;
  c.lanes = kLanes;
  return c;
}

// Serialization of `bytes` link bytes on Gen3 x8: bytes * 8 * 130 / (8 * 8e9 * 128) s.
sc_time ser(uint64_t bytes) {
  using u128 = unsigned __int128;
  const u128 num = static_cast<u128>(bytes) * 8 * 130 * 1'000'000'000'000ULL;
  const u128 den = static_cast<u128>(kLanes) * kTransfersPerS * 128;
  return sc_time::from_value(static_cast<uint64_t>((num + den - 1) / den));
}

// A write of n bytes: ceil(n / MPS) TLPs, each with 24 bytes besides its payload.
uint64_t write_bytes(uint64_t n) { return n + ceil_div(n, kMps) * kOverhead; }
// The requests of a read of n bytes: ceil(n / MRRS) header-only TLPs.
uint64_t request_bytes(uint64_t n) { return ceil_div(n, kMrrs) * kOverhead; }

struct Initiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Initiator> socket;
  explicit Initiator(sc_core::sc_module_name name) : sc_core::sc_module(name), socket("socket") {}

  tlm::tlm_response_status transport(tlm::tlm_command cmd, uint64_t address, std::vector<uint8_t>& data,
                                     sc_time& delay) {
    tlm::tlm_generic_payload t;
    t.set_command(cmd);
    t.set_address(address);
    t.set_data_ptr(data.data());
    t.set_data_length(static_cast<uint32_t>(data.size()));
    t.set_streaming_width(static_cast<uint32_t>(data.size()));
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    socket->b_transport(t, delay);
    return t.get_response_status();
  }
  // Returns the annotated delay the initiator gets back.
  sc_time write(uint64_t address, uint64_t bytes, sc_time delay = sc_core::SC_ZERO_TIME) {
    std::vector<uint8_t> data(bytes, 0x5A);
    EXPECT_EQ(transport(tlm::TLM_WRITE_COMMAND, address, data, delay), tlm::TLM_OK_RESPONSE);
    return delay;
  }
  sc_time read(uint64_t address, uint64_t bytes, sc_time delay = sc_core::SC_ZERO_TIME) {
    std::vector<uint8_t> data(bytes);
    EXPECT_EQ(transport(tlm::TLM_READ_COMMAND, address, data, delay), tlm::TLM_OK_RESPONSE);
    return delay;
  }
};

// A target that records when each call arrives (sc_time_stamp() + annotated delay) and adds
// its own latency, as a memory or a register file would.
struct Recorder : sc_core::sc_module {
  struct Call {
    tlm::tlm_command cmd;
    uint64_t address;
    std::vector<uint8_t> data;  // written data
    sc_time at;
  };
  tlm_utils::simple_target_socket<Recorder> socket;
  sc_time latency;
  std::vector<Call> calls;
  bool keep_data = true;

  Recorder(sc_core::sc_module_name name, sc_time lat) : sc_core::sc_module(name), socket("socket"), latency(lat) {
    socket.register_b_transport(this, &Recorder::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& t, sc_time& delay) {
    Call c{t.get_command(), t.get_address(), {}, sc_core::sc_time_stamp() + delay};
    if (t.is_write() && keep_data) c.data.assign(t.get_data_ptr(), t.get_data_ptr() + t.get_data_length());
    if (t.is_read())
      for (uint32_t i = 0; i < t.get_data_length(); ++i) t.get_data_ptr()[i] = static_cast<uint8_t>(0xA0 + i);
    calls.push_back(std::move(c));
    delay += latency;
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

struct Bench {
  Initiator device;  // the HCA's DMA engine
  Initiator cpu;     // the driver's loads and stores
  host::HostBus bus;
  Recorder memory;
  Recorder registers;
  explicit Bench(const host::HostBusConfig& cfg = gen3x8(), sc_time memory_latency = sc_time(80, SC_NS),
                 sc_time register_latency = sc_time(10, SC_NS))
      : device("device"),
        cpu("cpu"),
        bus("bus", cfg),
        memory("memory", memory_latency),
        registers("registers", register_latency) {
    device.socket.bind(bus.dma_in);
    bus.mem_out.bind(memory.socket);
    cpu.socket.bind(bus.mmio_in);
    bus.mmio_out.bind(registers.socket);
  }
};

}  // namespace

TEST(HostBusRate, Gen3x8CarriesEightLanesOf8GTWith128b130bEncoding) {
  const host::PcieRate r(gen3x8());
  EXPECT_DOUBLE_EQ(r.data_bits_per_s(), 8.0 * 8e9 * 128.0 / 130.0);
  // 280 link bytes (one full TLP): 280 * 1040000 / 8192 ps = 35546.875 ps, rounded up.
  EXPECT_EQ(r.serialization_ps(280), 35547u);
  EXPECT_EQ(r.serialization(280), ser(280));
  // 8b/10b generations: Gen1 x1 moves one byte in 4 ns, Gen2 x4 in 0.5 ns.
  EXPECT_EQ(host::PcieRate(host::PcieGen::gen1, 1).serialization_ps(1), 4000u);
  EXPECT_EQ(host::PcieRate(host::PcieGen::gen2, 4).serialization_ps(1), 500u);
  // Gen5 x16: 16 * 32 GT/s * 128/130; 130 bytes take 130 * 8 * 130 / (16 * 32 * 128) ns.
  EXPECT_EQ(host::PcieRate(host::PcieGen::gen5, 16).serialization_ps(130),
            ceil_div(130ULL * 8 * 130 * 1000, 16 * 32 * 128));
}

TEST(HostBus, DmaWriteArrivesAfterItsTlpsAndOneLatencyAndFreesTheDeviceAtSerializationEnd) {
  Bench b;
  const sc_time issued(1, SC_US);  // the device's local time offset
  for (uint64_t n : {4096u, 1000u, 8u}) {
    b.memory.calls.clear();
    const sc_time start = std::max(issued, b.bus.upstream().busy_until);
    const sc_time back = b.device.write(0x10000, n, issued);
    // ceil(n / MPS) TLPs of MPS + 24 bytes, the last one carrying only the remainder.
    EXPECT_EQ(b.bus.write_link_bytes(n), write_bytes(n));
    ASSERT_EQ(b.memory.calls.size(), 1u);
    EXPECT_EQ(b.memory.calls[0].at, start + ser(write_bytes(n)) + kLatency) << n << " bytes";
    // Posted: the device may issue its next request when its TLPs have left.
    EXPECT_EQ(back, start + ser(write_bytes(n))) << n << " bytes";
  }
  EXPECT_EQ(write_bytes(4096), 16 * (kMps + kOverhead));
  EXPECT_EQ(b.bus.upstream().tlps, 16u + 4u + 1u);
  EXPECT_EQ(b.bus.upstream().payload_bytes, 4096u + 1000u + 8u);
}

TEST(HostBus, DmaReadCostsRequestLatencyMemoryCompletionsAndLatency) {
  const sc_time memory_latency(80, SC_NS);
  Bench b(gen3x8(), memory_latency);
  std::vector<uint8_t> data(512);
  sc_time delay;
  ASSERT_EQ(b.device.transport(tlm::TLM_READ_COMMAND, 0x2000, data, delay), tlm::TLM_OK_RESPONSE);
  // One request (512 <= MRRS) upstream, then two 256-byte completions downstream.
  const sc_time at_memory = ser(kOverhead) + kLatency;
  ASSERT_EQ(b.memory.calls.size(), 1u);
  EXPECT_EQ(b.memory.calls[0].at, at_memory);
  EXPECT_EQ(delay, at_memory + memory_latency + ser(512 + 2 * kOverhead) + kLatency);
  EXPECT_EQ(data[0], 0xA0);
  EXPECT_EQ(data[3], 0xA3);
  EXPECT_EQ(b.bus.downstream().tlps, 2u);

  // 2048 bytes: four requests, eight completions; issued once the bus is idle again.
  const sc_time later(10, SC_US);
  EXPECT_EQ(b.device.read(0x4000, 2048, later),
            later + ser(request_bytes(2048)) + kLatency + memory_latency + ser(write_bytes(2048)) + kLatency);
  EXPECT_EQ(request_bytes(2048), 4 * kOverhead);
}

TEST(HostBus, BackToBackWritesSerializeAndAnIdlePipeIsNotCharged) {
  Bench b;
  const sc_time one = ser(write_bytes(4096));
  EXPECT_EQ(b.device.write(0, 4096), one);
  EXPECT_EQ(b.device.write(4096, 4096), 2 * one);  // waits for the first on the same pipe
  ASSERT_EQ(b.memory.calls.size(), 2u);
  EXPECT_EQ(b.memory.calls[0].at, one + kLatency);
  EXPECT_EQ(b.memory.calls[1].at, 2 * one + kLatency);
  // Issued long after the pipe went idle: starts at its own time.
  const sc_time later(50, SC_US);
  EXPECT_EQ(b.device.write(8192, 4096, later), later + one);
  EXPECT_EQ(b.memory.calls[2].at, later + one + kLatency);
  EXPECT_EQ(b.bus.upstream().busy_time, 3 * one);
}

TEST(HostBus, OppositeDirectionsDoNotDelayEachOther) {
  {
    Bench b;
    // A long DMA write upstream and a doorbell downstream, issued together: the doorbell
    // arrives as if the bus were idle.
    b.device.write(0, 64 * 1024);
    b.cpu.write(0x800, 8);
    ASSERT_EQ(b.registers.calls.size(), 1u);
    EXPECT_EQ(b.registers.calls[0].at, ser(write_bytes(8)) + kLatency);
  }

  // A DMA read's completions travel downstream; a write issued with it waits upstream only
  // for the read's request, and does not slow the completions.
  Bench c;
  const sc_time read_done = c.device.read(0x100000, 4096);
  EXPECT_EQ(read_done, ser(request_bytes(4096)) + kLatency + sc_time(80, SC_NS) + ser(write_bytes(4096)) + kLatency);
  c.device.write(0x200000, 4096);
  ASSERT_EQ(c.memory.calls.size(), 2u);
  EXPECT_EQ(c.memory.calls[1].at, ser(request_bytes(4096)) + ser(write_bytes(4096)) + kLatency);
}

TEST(HostBus, SameDirectionSharesTheLinkAcrossMmioAndDmaCompletions) {
  Bench b;
  // Read completions and MMIO writes both travel downstream: a doorbell issued with a large
  // DMA read queues behind the read's completion TLPs.
  const sc_time read_done = b.device.read(0, 4096);
  const sc_time completions_end = read_done - kLatency;
  b.cpu.write(0x800, 8);
  ASSERT_EQ(b.registers.calls.size(), 1u);
  EXPECT_EQ(b.registers.calls[0].at, completions_end + ser(write_bytes(8)) + kLatency);
}

TEST(HostBus, MmioWriteReachesTheDeviceAfterItsTlpAndTheBusLatency) {
  Bench b;
  std::vector<uint8_t> doorbell = {1, 2, 3, 4, 5, 6, 7, 8};
  sc_time delay(300, SC_NS);
  ASSERT_EQ(b.cpu.transport(tlm::TLM_WRITE_COMMAND, 0x800, doorbell, delay), tlm::TLM_OK_RESPONSE);
  ASSERT_EQ(b.registers.calls.size(), 1u);
  const Recorder::Call& c = b.registers.calls[0];
  EXPECT_EQ(c.cmd, tlm::TLM_WRITE_COMMAND);
  EXPECT_EQ(c.address, 0x800u);  // register offsets pass unchanged
  EXPECT_EQ(c.data, doorbell);
  // One TLP of 8 + 24 bytes, then the latency; the CPU is free when the TLP has left.
  EXPECT_EQ(c.at, sc_time(300, SC_NS) + ser(32) + kLatency);
  EXPECT_EQ(delay, sc_time(300, SC_NS) + ser(32));
  EXPECT_TRUE(b.memory.calls.empty());
}

TEST(HostBus, MmioReadIsARoundTripThroughTheDevice) {
  const sc_time register_latency(10, SC_NS);
  Bench b(gen3x8(), sc_time(80, SC_NS), register_latency);
  std::vector<uint8_t> value(4);
  sc_time delay;
  ASSERT_EQ(b.cpu.transport(tlm::TLM_READ_COMMAND, 0x40, value, delay), tlm::TLM_OK_RESPONSE);
  // Request downstream, the device's own latency, one completion of 4 + 24 bytes upstream.
  EXPECT_EQ(delay, ser(kOverhead) + kLatency + register_latency + ser(4 + kOverhead) + kLatency);
  EXPECT_EQ(value, (std::vector<uint8_t>{0xA0, 0xA1, 0xA2, 0xA3}));
  EXPECT_EQ(b.bus.upstream().tlps, 1u);
  EXPECT_EQ(b.bus.downstream().tlps, 1u);
}

TEST(HostBus, LongWriteStreamDeliversTheRateTimesThePayloadShare) {
  // A DMA engine that issues its next write as soon as the bus lets it (the returned delay).
  for (uint64_t n : {256u, 64u * 1024u}) {
    Bench b;
    b.memory.keep_data = false;
    const uint64_t total = 64ull << 20;
    sc_time t;
    for (uint64_t done = 0; done < total; done += n) t = b.device.write(done, n, t);
    const double seconds = t.to_seconds();
    const double measured = static_cast<double>(total) / seconds;
    const double expected = 8.0 * 8e9 * 128.0 / 130.0 / 8.0 * kMps / (kMps + kOverhead);
    EXPECT_NEAR(measured / expected, 1.0, 0.001) << n << "-byte writes";
    EXPECT_EQ(b.bus.upstream().busy_until, t);
  }
}

TEST(HostBus, ReadsIssuedTogetherStreamCompletionsAtTheLinkRate) {
  // A DMA engine with many reads outstanding: each read's completions queue behind the
  // previous ones downstream, so the stream runs at the payload share of the link rate.
  Bench b;
  const uint64_t n = 4096, count = 4096;
  sc_time last;
  for (uint64_t i = 0; i < count; ++i) last = b.device.read(i * n, n);
  // The first completion starts after request, latency and memory; from then on the
  // downstream pipe never idles (requests are 24 bytes against 4480 of completions).
  const sc_time first_ready = ser(request_bytes(n)) + kLatency + sc_time(80, SC_NS);
  EXPECT_EQ(last, first_ready + count * ser(write_bytes(n)) + kLatency);
  EXPECT_EQ(b.bus.downstream().busy_time, count * ser(write_bytes(n)));
}

TEST(HostBus, DmaReachesHostMemoryAndErrorsComeBackAsCompletions) {
  host::HostMemoryConfig mem_cfg;
  mem_cfg.size_bytes = 1 << 20;
  Initiator device("device");
  host::HostBus bus("bus", gen3x8());
  host::HostMemory memory("memory", mem_cfg);
  device.socket.bind(bus.dma_in);
  bus.mem_out.bind(memory.socket);
  Initiator cpu("cpu");
  Recorder registers("registers", sc_core::SC_ZERO_TIME);
  cpu.socket.bind(bus.mmio_in);
  bus.mmio_out.bind(registers.socket);

  std::vector<uint8_t> payload(300);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 13);
  sc_time delay;
  ASSERT_EQ(device.transport(tlm::TLM_WRITE_COMMAND, 4000, payload, delay), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(memory.read(4000, 300), payload);
  std::vector<uint8_t> back(300);
  delay = sc_time(10, SC_US);
  ASSERT_EQ(device.transport(tlm::TLM_READ_COMMAND, 4000, back, delay), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(back, payload);
  EXPECT_EQ(delay, sc_time(10, SC_US) + ser(kOverhead) + kLatency + mem_cfg.access_latency +
                       ser(write_bytes(300)) + kLatency);

  // Debug transport crosses the bus without time.
  std::vector<uint8_t> peek(4);
  tlm::tlm_generic_payload t;
  t.set_command(tlm::TLM_READ_COMMAND);
  t.set_address(4000);
  t.set_data_ptr(peek.data());
  t.set_data_length(4);
  EXPECT_EQ(device.socket->transport_dbg(t), 4u);
  EXPECT_EQ(peek, std::vector<uint8_t>(payload.begin(), payload.begin() + 4));

  // A read beyond memory is answered by one completion without data.
  delay = sc_time(20, SC_US);
  std::vector<uint8_t> bad(64);
  EXPECT_EQ(device.transport(tlm::TLM_READ_COMMAND, mem_cfg.size_bytes, bad, delay), tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(delay, sc_time(20, SC_US) + ser(kOverhead) + kLatency + mem_cfg.access_latency + ser(kOverhead) + kLatency);
  // A posted write's error is reported to the initiator too, so a wrong address is caught.
  EXPECT_EQ(device.transport(tlm::TLM_WRITE_COMMAND, mem_cfg.size_bytes, bad, delay), tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

// --- Parameters.

namespace {
host::HostBusConfig bus_from(const std::string& yaml) {
  const params::Document doc = params::Document::parse(yaml, "host.yaml");
  host::HostBusConfig cfg = gen3x8();
  params::apply(host::host_bus_params(), doc, params::child({}, "host_bus"), cfg);
  return cfg;
}
}  // namespace

TEST(HostParams, DefaultsArePcieGen3x16AndDeclaredOnce) {
  const sim::ParamGroup& bus = host::host_bus_params();
  EXPECT_EQ(bus.key_list(),
            "generation, lanes, max_payload_bytes, max_read_request_bytes, tlp_overhead_bytes, latency");
  EXPECT_EQ(bus.find("generation")->default_text, "gen3");
  EXPECT_EQ(bus.find("lanes")->default_text, "16");
  EXPECT_EQ(bus.find("max_payload_bytes")->default_text, "256");
  EXPECT_EQ(bus.find("tlp_overhead_bytes")->default_text, "24");
  EXPECT_EQ(bus.find("latency")->default_text, "200ns");
  const sim::ParamGroup& mem = host::host_memory_params();
  EXPECT_EQ(mem.key_list(), "size_bytes, access_latency");
  EXPECT_EQ(mem.find("access_latency")->default_text, sim::format_time(host::HostMemoryConfig{}.access_latency));
  for (const sim::ParamGroup* g : {&bus, &mem})
    for (const sim::ParamDecl& d : g->params) {
      EXPECT_FALSE(d.doc.empty()) << g->name << "." << d.name;
      EXPECT_FALSE(d.unit.empty() && d.kind == sim::ParamKind::integer) << g->name << "." << d.name << " has no unit";
    }
}

TEST(HostParams, WrittenValuesReachTheConfigAndImpossibleLinksAreRefused) {
  const host::HostBusConfig c = bus_from(
      "host_bus:\n  generation: gen4\n  lanes: 16\n  max_payload_bytes: 512\n  latency: 150ns\n");
  EXPECT_EQ(c.generation, host::PcieGen::gen4);
  EXPECT_EQ(c.lanes, 16u);
  EXPECT_EQ(c.max_payload_bytes, 512u);
  EXPECT_EQ(c.latency, sc_time(150, SC_NS));
  EXPECT_DOUBLE_EQ(host::PcieRate(c).data_bits_per_s(), 16.0 * 16e9 * 128.0 / 130.0);
  for (const char* bad : {"host_bus:\n  lanes: 3\n", "host_bus:\n  max_payload_bytes: 300\n",
                          "host_bus:\n  max_read_request_bytes: 8192\n", "host_bus:\n  generation: gen6\n"}) {
    EXPECT_THROW(bus_from(bad), ConfigError) << bad;
  }
  try {
    bus_from("host_bus:\n  lanes: 3\n");
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "host_bus.lanes");
    EXPECT_EQ(e.fix(), "use 1, 2, 4, 8, 12, 16 or 32");
  }
}
