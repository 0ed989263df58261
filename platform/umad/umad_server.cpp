#include "platform/umad/umad_server.h"

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace ibvp::umad {

namespace {

union SockName {
  sockaddr any;
  sockaddr_un local;
  sockaddr_in udp;
};

// A name in the abstract namespace: a NUL, the name, and its terminating NUL, which
// libumad2sim counts in the address length (the bytes must match exactly).
socklen_t local_name(SockName& n, const std::string& name) {
  std::memset(&n, 0, sizeof n);
  n.local.sun_family = AF_UNIX;
  const size_t room = sizeof(n.local.sun_path) - 2;
  const size_t len = std::min(room, name.size());
  std::memcpy(n.local.sun_path + 1, name.data(), len);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + len + 1);
}

socklen_t udp_name(SockName& n, uint32_t addr_be, uint16_t port) {
  std::memset(&n, 0, sizeof n);
  n.udp.sin_family = AF_INET;
  n.udp.sin_addr.s_addr = addr_be;
  n.udp.sin_port = htons(port);
  return sizeof(sockaddr_in);
}


}  // namespace

Server::Server(const ServerConfig& cfg, const topo::Topology& t, uint32_t default_host, MadHandler on_mad)
    : cfg_(cfg), topology_(t), default_host_(default_host), on_mad_(std::move(on_mad)), clients_(kMaxClients) {
  const int family = cfg_.udp_port ? AF_INET : AF_UNIX;
  const uint32_t loopback = htonl(INADDR_LOOPBACK);
  auto open_bound = [&](uint16_t port, const std::string& name) {
    const int fd = ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("cannot create a socket: " + std::string(std::strerror(errno)));
    SockName n;
    const socklen_t len = cfg_.udp_port ? udp_name(n, loopback, port) : local_name(n, name);
    if (::bind(fd, &n.any, len) < 0) {
      const int e = errno;
      ::close(fd);
      throw std::runtime_error((cfg_.udp_port ? "UDP port 127.0.0.1:" + std::to_string(port)
                                              : "abstract socket @" + name) +
                               ": " + std::strerror(e) + " (another ibsim or ibvp server uses it?)");
    }
    return fd;
  };
  try {
    ctl_fd_ = open_bound(cfg_.udp_port, cfg_.socket_name + ":ctl");
    for (uint32_t i = 0; i < kMaxClients; ++i)
      data_fds_.push_back(
          open_bound(static_cast<uint16_t>(cfg_.udp_port + i + 1), cfg_.socket_name + ":out" + std::to_string(i)));
  } catch (...) {
    if (ctl_fd_ >= 0) ::close(ctl_fd_);
    for (int fd : data_fds_) ::close(fd);
    throw;
  }
}

Server::~Server() {
  if (ctl_fd_ >= 0) ::close(ctl_fd_);
  for (int fd : data_fds_) ::close(fd);
}

std::optional<uint32_t> find_host(const topo::Topology& t, const std::string& nodeid) {
  uint64_t guid = 0;
  const bool is_guid = nodeid.size() > 2 && nodeid[0] == '0' && (nodeid[1] == 'x' || nodeid[1] == 'X') &&
                       std::sscanf(nodeid.c_str() + 2, "%llx", reinterpret_cast<unsigned long long*>(&guid)) == 1;
  for (uint32_t n : t.endpoints()) {
    const topo::Node& node = t.nodes[n];
    if (node.name == nodeid || topo::node_description(node) == nodeid) return n;
    if (is_guid && (topo::node_guid(t, n) == guid || topo::port_guid(t, n) == guid)) return n;
  }
  return std::nullopt;
}

std::optional<uint32_t> Server::sm_client_at(uint32_t node) const {
  for (uint32_t i = 0; i < clients_.size(); ++i)
    if (clients_[i].attached && clients_[i].issm && clients_[i].node == node) return i;
  return std::nullopt;
}

PortStatus Server::status_of(uint32_t client) const {
  const uint32_t node = clients_[client].node;
  PortStatus s = port_status ? port_status(node) : topology_port_status(topology_, node);
  // IBA 14.2.5.6: CapabilityMask.IsSM is set while an SM runs behind the port.
  if (sm_client_at(node)) s.capability_mask |= 1u << 1;
  // MasterSMLID: the LID of the host an SM client runs on (one SM per subnet here), so tools
  // that ask the SA (saquery) find it while the SM runs.
  if (s.sm_lid == 0)
    for (const ClientSlot& c : clients_)
      if (c.attached && c.issm) {
        s.sm_lid = (port_status ? port_status(c.node) : topology_port_status(topology_, c.node)).lid;
        break;
      }
  return s;
}

bool Server::poll(int timeout_ms) {
  std::vector<pollfd> fds;
  std::vector<uint32_t> who;  // client index per fds entry after the first
  fds.push_back({ctl_fd_, POLLIN, 0});
  for (uint32_t i = 0; i < clients_.size(); ++i)
    if (clients_[i].attached) {
      fds.push_back({data_fds_[i], POLLIN, 0});
      who.push_back(i);
    }
  const int r = ::poll(fds.data(), fds.size(), timeout_ms);
  if (r < 0) return errno != EINTR;
  if (r == 0) return true;
  if (fds[0].revents & POLLIN) handle_ctl();
  for (size_t k = 1; k < fds.size(); ++k)
    if (fds[k].revents & (POLLIN | POLLERR)) handle_data(who[k - 1]);
  return true;
}

void Server::handle_ctl() {
  for (;;) {
    SimCtl ctl{};
    SockName from;
    socklen_t from_len = sizeof from;
    const ssize_t n = ::recvfrom(ctl_fd_, &ctl, sizeof ctl, 0, &from.any, &from_len);
    if (n < 0) return;  // EAGAIN: drained
    if (n != static_cast<ssize_t>(sizeof ctl) || ctl.magic != kSimMagic) {
      ++refused_;
      continue;  // not ibsim's protocol: nothing to answer
    }
    if (!answer(ctl, &from, from_len)) {
      ++refused_;
      ctl.type = static_cast<uint32_t>(CtlType::error);
    }
    ::sendto(ctl_fd_, &ctl, sizeof ctl, 0, &from.any, from_len);
  }
}

bool Server::answer(SimCtl& ctl, const void* from_ptr, unsigned from_len) {
  const auto type = static_cast<CtlType>(ctl.type);
  if (type == CtlType::connect) {
    SimClientInfo info;
    std::memcpy(&info, ctl.data, sizeof info);
    info.nodeid[sizeof info.nodeid - 1] = 0;
    uint32_t slot = 0;
    while (slot < clients_.size() && clients_[slot].attached) ++slot;
    if (slot == clients_.size()) {
      std::fprintf(stderr, "ibvp umad: refused a client: all %u client slots are taken\n", kMaxClients);
      return false;
    }
    uint32_t node = default_host_;
    if (info.nodeid[0]) {
      const std::optional<uint32_t> h = find_host(topology_, info.nodeid);
      if (!h) {
        std::fprintf(stderr,
                     "ibvp umad: refused a client: SIM_HOST=%s names no HCA host of the fabric (give an "
                     "endpoint's name, description or GUID)\n",
                     info.nodeid);
        return false;
      }
      node = *h;
    }
    if (info.issm && sm_client_at(node)) {
      std::fprintf(stderr, "ibvp umad: refused a client: an SM already runs on %s\n",
                   topology_.nodes[node].name.c_str());
      return false;
    }
    // The data socket speaks only to the client's input socket.
    SockName to;
    socklen_t to_len;
    if (cfg_.udp_port) {
      const auto* f = static_cast<const SockName*>(from_ptr);
      (void)from_len;
      to_len = udp_name(to, f->udp.sin_addr.s_addr, static_cast<uint16_t>(info.id));
    } else {
      to_len = local_name(to, cfg_.socket_name + ":in" + std::to_string(info.id));
    }
    if (::connect(data_fds_[slot], &to.any, to_len) < 0) return false;
    // Datagrams an earlier client of this slot left behind are not this one's.
    SimRequest stale;
    while (::recv(data_fds_[slot], &stale, sizeof stale, 0) > 0) {}
    ClientSlot& c = clients_[slot];
    c = ClientSlot{true, info.id, node, info.issm != 0};
    std::memset(info.nodeid, 0, sizeof info.nodeid);
    std::strncpy(info.nodeid, topology_.nodes[node].name.c_str(), sizeof info.nodeid - 1);
    info.id = slot;
    std::memcpy(ctl.data, &info, sizeof info);
    if (on_attach) on_attach(slot, true);
    return true;
  }
  if (ctl.clientid >= clients_.size() || !clients_[ctl.clientid].attached) return false;
  const uint32_t id = ctl.clientid;
  const uint32_t node = clients_[id].node;
  std::memset(ctl.data, 0, sizeof ctl.data);
  switch (type) {
    case CtlType::disconnect:
      detach(id);
      return true;
    case CtlType::get_port: {
      const PortStatus s = status_of(id);
      SimPort p{s.lid, s.state};
      std::memcpy(ctl.data, &p, sizeof p);
      return true;
    }
    case CtlType::get_vendor: {
      const SimVendor v = vendor_record();
      std::memcpy(ctl.data, &v, sizeof v);
      return true;
    }
    case CtlType::get_gid: {
      AttributeBytes pi = port_info(topology_, node, status_of(id));
      std::memcpy(ctl.data, pi.data() + 8, 8);  // GidPrefix, big-endian
      const uint64_t g = topo::port_guid(topology_, node);
      for (int i = 0; i < 8; ++i) ctl.data[8 + i] = static_cast<uint8_t>(g >> (56 - 8 * i));
      return true;
    }
    case CtlType::get_guid: {
      const uint64_t g = topo::node_guid(topology_, node);
      for (int i = 0; i < 8; ++i) ctl.data[i] = static_cast<uint8_t>(g >> (56 - 8 * i));
      return true;
    }
    case CtlType::get_nodeinfo: {
      const AttributeBytes a = node_info(topology_, node);
      std::memcpy(ctl.data, a.data(), a.size());
      return true;
    }
    case CtlType::get_portinfo: {
      // A CA has one port here: every port number asks for port 1.
      const AttributeBytes a = port_info(topology_, node, status_of(id));
      std::memcpy(ctl.data, a.data(), a.size());
      return true;
    }
    case CtlType::set_issm: {
      int issm = 0;
      std::memcpy(&issm, ctl.data, sizeof issm);
      if (issm && !clients_[id].issm && sm_client_at(node)) return false;
      clients_[id].issm = issm != 0;
      return true;
    }
    case CtlType::get_pkeys: {
      const AttributeBytes a = pkey_table();
      std::memcpy(ctl.data, a.data(), a.size());
      return true;
    }
    default:
      return false;
  }
}

void Server::detach(uint32_t client) {
  if (!clients_[client].attached) return;
  clients_[client].attached = false;
  clients_[client].issm = false;
  if (on_attach) on_attach(client, false);
}

void Server::handle_data(uint32_t client) {
  for (;;) {
    SimRequest r;
    const ssize_t n = ::recv(data_fds_[client], &r, sizeof r, 0);
    if (n < 0) {
      if (errno == ECONNREFUSED) detach(client);
      return;
    }
    if (n != static_cast<ssize_t>(sizeof r)) {
      ++refused_;
      continue;
    }
    if (!clients_[client].attached) return;
    on_mad_(client, r);
  }
}

bool Server::send(uint32_t client, const SimRequest& r) {
  if (client >= clients_.size() || !clients_[client].attached) return false;
  for (;;) {
    const ssize_t n = ::send(data_fds_[client], &r, sizeof r, 0);
    if (n == static_cast<ssize_t>(sizeof r)) return true;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      // The client's queue is full: wait for room, as ibsim does, but not forever.
      pollfd p{data_fds_[client], POLLOUT, 0};
      if (::poll(&p, 1, 1000) > 0) continue;
    }
    detach(client);  // gone (ECONNREFUSED) or not reading
    return false;
  }
}

size_t Server::unread(uint32_t client) const {
  if (cfg_.udp_port || client >= clients_.size() || !clients_[client].attached) return 0;
  int queued = 0;
  if (::ioctl(data_fds_[client], SIOCOUTQ, &queued) < 0) return 0;
  return static_cast<size_t>(queued);
}

}  // namespace ibvp::umad
