#pragma once
// The server side of ibsim's client protocol (platform/umad/sim_wire.h): the sockets that
// Debian's libumad2sim.so connects to, the table of attached clients, and the answers to
// their control queries. It knows nothing of time or of the fabric: a MAD a client sends
// goes to `on_mad`, and `send` hands a MAD to a client. platform/umad/serve drives it.
//
// A client attaches to an HCA host: the one its $SIM_HOST names (a node's name, its
// NodeDescription, or its node or port GUID in hex), else the server's default host. Only
// endpoints can be attached to: management software runs on a host behind its CA port.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "platform/topology/topology.h"
#include "platform/umad/ctl_answers.h"
#include "platform/umad/sim_wire.h"

namespace ibvp::umad {

struct ServerConfig {
  // Local mode: the abstract socket names' base, what clients read from $IBSIM_SOCKNAME
  // ("sim" when unset). Abstract names live in no directory: the server writes no file.
  std::string socket_name = "sim";
  // Remote mode when non-zero: UDP on 127.0.0.1 at this port (clients set
  // IBSIM_SERVER_NAME=127.0.0.1 and IBSIM_SERVER_PORT), data on port + 1 .. port + 10.
  uint16_t udp_port = 0;
};

struct ClientSlot {
  bool attached = false;
  uint32_t peer = 0;  // the client's pid (local mode) or data port (remote mode)
  uint32_t node = 0;  // the HCA host it is attached to
  bool issm = false;  // it runs an SM: unsolicited SMPs to its port reach it
};

// The endpoint a $SIM_HOST value (or the server's --umad-host) names: its name, its
// NodeDescription, or its node or port GUID written 0x...; none if nothing matches.
std::optional<uint32_t> find_host(const topo::Topology& t, const std::string& nodeid);

class Server {
 public:
  using MadHandler = std::function<void(uint32_t client, const SimRequest& r)>;
  using AttachHandler = std::function<void(uint32_t client, bool attached)>;

  // Binds every socket; throws std::runtime_error naming the socket when one is taken.
  Server(const ServerConfig& cfg, const topo::Topology& t, uint32_t default_host, MadHandler on_mad);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Waits up to `timeout_ms` (0: not at all, -1: until something comes) for datagrams and
  // handles every one that is ready. Returns false when interrupted by a signal.
  bool poll(int timeout_ms);
  // Hands `r` to client `client`'s data socket; a client that has gone away is detached.
  bool send(uint32_t client, const SimRequest& r);
  // Bytes handed to `client` that it has not read yet (SIOCOUTQ: a Unix datagram stays
  // charged to the sending socket until the receiver takes it). 0 for UDP clients.
  size_t unread(uint32_t client) const;

  const ClientSlot& client(uint32_t i) const { return clients_.at(i); }
  // The client running an SM on `node`'s port, if one is attached.
  std::optional<uint32_t> sm_client_at(uint32_t node) const;

  // The port's status for PortInfo and the port query; the topology's by default. A caller
  // with a live SMA state (in-band subnet management) replaces it.
  std::function<PortStatus(uint32_t node)> port_status;
  AttachHandler on_attach;
  // Control datagrams refused (bad magic, size, client index or host) and data datagrams of
  // the wrong size, for the server's report.
  uint64_t refused() const { return refused_; }

 private:
  void handle_ctl();
  void handle_data(uint32_t client);
  bool answer(SimCtl& ctl, const void* from, unsigned from_len);
  void detach(uint32_t client);
  PortStatus status_of(uint32_t client) const;

  ServerConfig cfg_;
  const topo::Topology& topology_;
  uint32_t default_host_;
  MadHandler on_mad_;
  int ctl_fd_ = -1;
  std::vector<int> data_fds_;  // out0 .. out9
  std::vector<ClientSlot> clients_;
  uint64_t refused_ = 0;
};

}  // namespace ibvp::umad
