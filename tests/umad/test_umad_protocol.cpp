// The umad server's protocol layer (platform/umad): the control answers from which
// libumad2sim fakes sysfs, and a client that speaks ibsim's protocol over the abstract
// sockets exactly as libumad2sim does (names with their terminating NUL, 80-byte control
// datagrams, 288-byte MAD datagrams). The real libumad2sim.so and tools are exercised by
// tests/python/test_umad_tools.py.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/fabrics.h"
#include "platform/umad/ctl_answers.h"
#include "platform/umad/mad_log.h"
#include "platform/umad/umad_server.h"

using namespace ibvp;
using namespace ibvp::umad;

namespace {

uint64_t be64_at(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | p[i];
  return v;
}

topo::Topology star_with(link::Speed speed) {
  link::LinkConfig cable;
  cable.width = link::Width::x4;
  cable.speed = speed;
  return tb::star(3, cable);
}

// One libumad2sim client, written from ibsim's protocol as sim_wire.h states it.
class FakeClient {
 public:
  FakeClient(const std::string& base, uint32_t id) : base_(base), id_(id) {
    ctl_ = ::socket(AF_UNIX, SOCK_DGRAM, 0);
    data_ = ::socket(AF_UNIX, SOCK_DGRAM, 0);
    bind_to(ctl_, base + ":ctl" + std::to_string(id));
    connect_to(ctl_, base + ":ctl");
    bind_to(data_, base + ":in" + std::to_string(id));
  }
  ~FakeClient() {
    ::close(ctl_);
    ::close(data_);
  }
  void send_ctl(const SimCtl& c) { ASSERT_EQ(::send(ctl_, &c, sizeof c, 0), (ssize_t)sizeof c); }
  bool recv_ctl(SimCtl& c) { return ::recv(ctl_, &c, sizeof c, MSG_DONTWAIT) == (ssize_t)sizeof c; }
  void connect_data(uint32_t client) { connect_to(data_, base_ + ":out" + std::to_string(client)); }
  void send_mad(const SimRequest& r) { ASSERT_EQ(::send(data_, &r, sizeof r, 0), (ssize_t)sizeof r); }
  bool recv_mad(SimRequest& r) { return ::recv(data_, &r, sizeof r, MSG_DONTWAIT) == (ssize_t)sizeof r; }
  SimCtl ctl(CtlType type, uint32_t client, const void* data = nullptr, uint32_t len = 0) {
    SimCtl c{};
    c.magic = kSimMagic;
    c.clientid = client;
    c.type = static_cast<uint32_t>(type);
    c.len = len;
    if (len) std::memcpy(c.data, data, len);
    return c;
  }

 private:
  static socklen_t name(sockaddr_un& a, const std::string& n) {
    std::memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path + 1, n.data(), n.size());
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n.size() + 1);
  }
  static void bind_to(int fd, const std::string& n) {
    sockaddr_un a;
    const socklen_t len = name(a, n);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), len), 0) << n;
  }
  static void connect_to(int fd, const std::string& n) {
    sockaddr_un a;
    const socklen_t len = name(a, n);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), len), 0) << n;
  }
  std::string base_;
  uint32_t id_;
  int ctl_ = -1, data_ = -1;
};

std::string unique_base(const char* what) { return std::string("ibvp-test-") + what + "-" + std::to_string(::getpid()); }

}  // namespace

TEST(CtlAnswers, NodeInfoCarriesTheTopologysGuidsAtTheirIbaOffsets) {
  const topo::Topology t = star_with(link::Speed::qdr);
  const uint32_t h2 = t.find("h2");
  const AttributeBytes a = node_info(t, h2);
  // IBA 14.2.5.3: NodeType at byte 2 (1: CA), NumPorts 3, NodeGUID 12, PortGUID 20, LocalPortNum 36.
  EXPECT_EQ(a[0], 1);
  EXPECT_EQ(a[2], 1);
  EXPECT_EQ(a[3], 1);
  EXPECT_EQ(be64_at(&a[12]), topo::node_guid(t, h2));
  EXPECT_EQ(be64_at(&a[20]), topo::port_guid(t, h2));
  EXPECT_NE(topo::node_guid(t, h2), topo::node_guid(t, t.find("h1")));
  EXPECT_EQ(a[36], 1);
}

TEST(CtlAnswers, PortInfoCarriesLidStateWidthAndSpeedOfTheHostsCable) {
  const topo::Topology t = star_with(link::Speed::qdr);
  const uint32_t h3 = t.find("h3");
  const AttributeBytes a = port_info(t, h3, topology_port_status(t, h3));
  // IBA 14.2.5.6: LID at 16, LocalPortNum 28, LinkWidthActive 31 (2: 4x), PortState the low
  // nibble of 32 (4: Active), PortPhysicalState the high nibble of 33 (5: LinkUp),
  // LinkSpeedActive the high nibble of 35 (4: QDR).
  EXPECT_EQ(a[16] << 8 | a[17], t.nodes[h3].lid);
  EXPECT_EQ(a[28], 1);
  EXPECT_EQ(a[31], 2);
  EXPECT_EQ(a[32] & 0xF, 4);
  EXPECT_EQ(a[33] >> 4, 5);
  EXPECT_EQ(a[35] >> 4, 4);
  EXPECT_EQ(be64_at(&a[8]), kDefaultGidPrefix);
  // EDR is an extended speed: LinkSpeedExtActive (high nibble of 62) 2, announced by
  // CapabilityMask.IsExtendedSpeedsSupported (bit 14).
  const topo::Topology e = star_with(link::Speed::edr);
  const AttributeBytes b = port_info(e, h3, topology_port_status(e, h3));
  EXPECT_EQ(b[62] >> 4, 2);
  EXPECT_TRUE((b[20] << 24 | b[21] << 16 | b[22] << 8 | b[23]) & (1u << 14));
}

TEST(UmadServer, AClientAttachesToTheHostItsSimHostNamesAndExchangesMads) {
  const topo::Topology t = star_with(link::Speed::qdr);
  const std::string base = unique_base("attach");
  std::vector<std::pair<uint32_t, SimRequest>> got;
  Server server({base, 0}, t, t.find("h1"), [&](uint32_t c, const SimRequest& r) { got.emplace_back(c, r); });
  FakeClient client(base, 4242);

  SimClientInfo info{};
  info.id = 4242;
  std::strcpy(info.nodeid, "h2");
  client.send_ctl(client.ctl(CtlType::connect, 0, &info, sizeof info));
  server.poll(1000);
  SimCtl reply{};
  ASSERT_TRUE(client.recv_ctl(reply));
  ASSERT_EQ(reply.type, static_cast<uint32_t>(CtlType::connect));
  SimClientInfo attached;
  std::memcpy(&attached, reply.data, sizeof attached);
  EXPECT_EQ(attached.id, 0u);
  EXPECT_STREQ(attached.nodeid, "h2");
  EXPECT_EQ(server.client(0).node, t.find("h2"));

  client.send_ctl(client.ctl(CtlType::get_nodeinfo, 0));
  server.poll(1000);
  ASSERT_TRUE(client.recv_ctl(reply));
  EXPECT_EQ(be64_at(reinterpret_cast<const uint8_t*>(reply.data) + 12), topo::node_guid(t, t.find("h2")));

  // A MAD datagram on the client's data socket reaches the handler byte for byte, and what
  // the server sends reaches the client.
  client.connect_data(0);
  SimRequest r{};
  r.dlid = wire_lid_field(0x1234);
  r.dqp = wire_u32_field(0);
  for (size_t i = 0; i < sizeof r.mad; ++i) r.mad[i] = static_cast<uint8_t>(i * 3 + 1);
  client.send_mad(r);
  server.poll(1000);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, 0u);
  EXPECT_EQ(wire_lid(got[0].second.dlid), 0x1234);
  EXPECT_EQ(std::memcmp(got[0].second.mad, r.mad, sizeof r.mad), 0);
  r.status = wire_u32_field(kStatusTimedOut);
  ASSERT_TRUE(server.send(0, r));
  SimRequest back{};
  ASSERT_TRUE(client.recv_mad(back));
  EXPECT_EQ(wire_u32(back.status), kStatusTimedOut);

  client.send_ctl(client.ctl(CtlType::disconnect, 0));
  server.poll(1000);
  EXPECT_FALSE(server.client(0).attached);
}

TEST(UmadServer, ASimHostThatNamesNoEndpointIsRefused) {
  const topo::Topology t = star_with(link::Speed::qdr);
  const std::string base = unique_base("refuse");
  Server server({base, 0}, t, t.find("h1"), [](uint32_t, const SimRequest&) {});
  FakeClient client(base, 77);
  SimClientInfo info{};
  info.id = 77;
  std::strcpy(info.nodeid, "sw");  // the switch: management software runs on hosts only
  client.send_ctl(client.ctl(CtlType::connect, 0, &info, sizeof info));
  server.poll(1000);
  SimCtl reply{};
  ASSERT_TRUE(client.recv_ctl(reply));
  EXPECT_EQ(reply.type, static_cast<uint32_t>(CtlType::error));
  EXPECT_FALSE(server.client(0).attached);
  EXPECT_EQ(server.refused(), 1u);
}

TEST(UmadServer, ASecondServerOnTheSameSocketNameIsRefusedWithTheName) {
  const topo::Topology t = star_with(link::Speed::qdr);
  const std::string base = unique_base("twice");
  Server first({base, 0}, t, t.find("h1"), [](uint32_t, const SimRequest&) {});
  try {
    Server second({base, 0}, t, t.find("h1"), [](uint32_t, const SimRequest&) {});
    FAIL() << "two servers bound one name";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("@" + base + ":ctl"), std::string::npos) << e.what();
  }
}

TEST(MadHeader, ReadsTheCommonAndDirectedRouteFields) {
  uint8_t m[256] = {};
  m[0] = 1;
  m[1] = kDirectedRouteClass;
  m[2] = 1;
  m[3] = 0x81;        // GetResp
  m[4] = 0x80;        // D bit, status 0
  m[7] = 3;           // hop count
  m[8] = 0x00; m[9] = 0x05; m[15] = 0x42;
  m[16] = 0x00; m[17] = 0x11;  // NodeInfo
  m[23] = 7;
  const MadHeader h = read_header(m);
  EXPECT_TRUE(h.response());
  EXPECT_EQ(h.status, 0);
  EXPECT_EQ(h.hop_count, 3);
  EXPECT_EQ(h.tid >> 48, 5u);
  EXPECT_EQ(h.tid & 0xFF, 0x42u);
  EXPECT_EQ(h.attr_id, 0x11);
  EXPECT_EQ(h.attr_mod, 7u);
  EXPECT_TRUE(expects_response(0x01));
  EXPECT_FALSE(expects_response(0x05));  // Trap
  EXPECT_FALSE(expects_response(0x81));
}
