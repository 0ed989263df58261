#pragma once
// The datagrams of ibsim's client protocol, as Debian's libumad2sim.so (ibsim-utils) sends
// and expects them: the layout ibsim's include/ibsim.h defines, restated here with its byte
// orders so the server needs no ibsim header. Two kinds of datagram:
// - SimCtl (80 bytes) on the control socket: attach, detach, and the queries from which
//   libumad2sim fakes /sys/class/infiniband (NodeInfo, PortInfo, P_Keys, vendor, GID).
//   Its integers are in the host's byte order (client and server share a machine).
// - SimRequest (288 bytes) on a client's data socket: one MAD with its addresses. dlid and
//   slid carry a big-endian 16-bit LID in the field's first two bytes (libumad2sim copies
//   ib_mad_addr.lid, a __be16, into them); dqp, sqp and status are big-endian 32-bit;
//   length is big-endian 64-bit.
// Socket names (local mode, Linux abstract namespace, no file): the server's control
// socket is "<base>:ctl", its data socket for client i "<base>:out<i>"; a client binds
// "<base>:ctl<pid>" and "<base>:in<pid>". <base> is $IBSIM_SOCKNAME, default "sim". Remote
// mode ($IBSIM_SERVER_NAME set): UDP, control on $IBSIM_SERVER_PORT (default 7070), client
// i's data on that port + i + 1, and the client names its data port instead of its pid.
#include <cstddef>
#include <cstdint>

#include <arpa/inet.h>

namespace ibvp::umad {

constexpr uint32_t kSimMagic = 0xdeadbeef;
constexpr uint32_t kMaxClients = 10;        // ibsim's IBSIM_MAX_CLIENTS: data sockets out0..out9
constexpr uint16_t kDefaultUdpPort = 7070;  // IBSIM_DEFAULT_SERVER_PORT
constexpr uint32_t kCtlDataBytes = 64;
constexpr uint32_t kStatusTimedOut = 110;   // ETIMEDOUT: the request was not answered

enum class CtlType : uint32_t {
  error = 0,  // the server's refusal, in a reply
  connect,
  disconnect,
  get_port,
  get_vendor,
  get_gid,
  get_guid,
  get_nodeinfo,
  get_portinfo,
  set_issm,
  get_pkeys,
};

struct SimCtl {
  uint32_t magic;
  uint32_t clientid;
  uint32_t type;
  uint32_t len;
  uint8_t data[kCtlDataBytes];
};
static_assert(sizeof(SimCtl) == 80);

// The payload of connect: the client's pid (local) or data port (remote) in `id`, the node
// it asks for in `nodeid` ($SIM_HOST, empty: the server's choice); the reply carries the
// client's index in `id` and the node's name in `nodeid`.
struct SimClientInfo {
  uint32_t id;
  uint32_t qp;
  uint32_t issm;
  char nodeid[32];
};
static_assert(sizeof(SimClientInfo) == 44);

struct SimVendor {
  uint32_t vendor_id;
  uint32_t vendor_part_id;
  uint32_t hw_ver;
  uint64_t fw_ver;
};
static_assert(sizeof(SimVendor) == 24);

struct SimPort {
  uint16_t lid;
  uint8_t state;
};

struct SimRequest {
  uint32_t dlid;
  uint32_t slid;
  uint32_t dqp;
  uint32_t sqp;
  uint32_t status;
  uint64_t length;
  uint8_t mad[256];
};
static_assert(sizeof(SimRequest) == 288);
static_assert(offsetof(SimRequest, length) == 24 && offsetof(SimRequest, mad) == 32);

// The LID in a dlid/slid field: its first two bytes, big-endian.
inline uint16_t wire_lid(uint32_t field) {
  const auto* b = reinterpret_cast<const uint8_t*>(&field);
  return static_cast<uint16_t>(b[0] << 8 | b[1]);
}
inline uint32_t wire_lid_field(uint16_t lid) {
  uint32_t field = 0;
  auto* b = reinterpret_cast<uint8_t*>(&field);
  b[0] = static_cast<uint8_t>(lid >> 8);
  b[1] = static_cast<uint8_t>(lid);
  return field;
}
// A big-endian 32-bit field (dqp, sqp, status).
inline uint32_t wire_u32(uint32_t field) { return ntohl(field); }
inline uint32_t wire_u32_field(uint32_t v) { return htonl(v); }

}  // namespace ibvp::umad
