#pragma once
// Seed 002's CBR connections (Alfaro, Sanchez, Duato, Sec. 4.2) on HCA hosts
// (endpoint_model: hca): the admitted connections are sent by programs on the hosts' CPUs
// through the verbs driver and the HCA's firmware, as a real host would send them.
//
// - One UD QP per (host, SL) sends every connection of that host and SL. UD carries the
//   destination in each WQE (its address handle, IBA 11.4.1.1), so one QP serves any number
//   of destinations; seed 002 has about 1750 connections per host, far beyond the QPs a host
//   would open for them. One QP per SL keeps each SL's packets in a queue of their own: a
//   send queue is served in order, and its head waits for its VL's transmit buffer, so a
//   shared QP would let one SL hold up the others.
// - A sending program per host walks the connections' schedule: the same workload::CbrSource
//   (one per (host, SL), a min-heap by next nominal time) that fabric-only endpoints pull
//   from, so the packets are due at the same times. At each packet's nominal time it posts one
//   SEND of payload_bytes (one packet) on its SL's QP, with the address handle of the
//   connection's (DLID, SL). A completion is asked for every kSignalEvery WQEs only
//   (selective signalling: a send completion frees every WQE before it); a full send queue
//   makes the program wait for one.
// - Each packet is tagged with its connection and its nominal creation time
//   (Hca::tag_connection, by PSN), so the recorder's connection metrics and the releases of
//   connections that end work as with fabric-only endpoints; the delay counts from the
//   nominal time, so the host's posting and the HCA's fetching count against D.
// - A receiving program per host keeps receives posted on one UD QP that every connection
//   to the host sends to, and reposts them in batches as they complete (the firmware
//   drops a UD SEND that finds none, so the queue must never run dry).
//
// QP set-up happens at time zero with the perftest's zero-time out-of-band exchange (every
// host creates its QPs, then all connect); packets due before their host is ready are
// posted when it is, late (docs/hca.md, "CBR connections on HCA hosts").
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "platform/driver/host_node.h"
#include "platform/driver/verbs.h"
#include "platform/scenario/scenario.h"
#include "platform/workload/cbr_connection.h"
#include "platform/workload/cbr_source.h"

namespace ibvp::apps {

class CbrStreams {
 public:
  // Send queue of each (host, SL) QP, and how often a WQE asks for a completion.
  static constexpr uint32_t kSendDepth = 256;
  static constexpr uint32_t kSignalEvery = 32;
  // Receives each host keeps posted on its receiving QP.
  static constexpr uint32_t kRecvDepth = 512;
  static constexpr uint32_t kRepostBatch = 32;

  // `host_of_node`: the HCA host of each topology node (null for switches). `sources`: the
  // run's CBR sources with the node that sends them, one per (node, SL); they and `conns`
  // must outlive this object. Registers the programs on the hosts' CPUs (before sc_start).
  CbrStreams(const Scenario& scenario, const workload::CbrConnections& conns,
             const std::vector<std::pair<uint32_t, workload::CbrSource*>>& sources,
             const std::vector<driver::HostNode*>& host_of_node);
  ~CbrStreams();

  // Why the programs stopped early ("" if they did not): a set-up failure, a completion in error.
  const std::string& error() const { return error_; }
  // SENDs posted, over every host.
  uint64_t posted() const;
  // Receives completed, over every host.
  uint64_t received() const;

  // The host memory a host needs at most: a send QP and CQ for every SL of the connections
  // section, the receiving QP and CQ, and one buffer (verbs::HostMemoryPlan); the loader
  // checks it against hca.host_memory.size_bytes before the run.
  static uint64_t host_memory_bytes(const Scenario& scenario);

 private:
  struct Sender {
    workload::CbrSource* source = nullptr;
    uint8_t sl = 0;
    verbs::CompletionQueue* cq = nullptr;
    verbs::QueuePair* qp = nullptr;
    uint32_t posted = 0;  // SENDs posted; the n-th has PSN n (mod 2^24)
  };
  struct Host {
    uint32_t node = 0;
    driver::HostNode* hca_host = nullptr;
    std::unique_ptr<verbs::Context> ctx;
    verbs::ProtectionDomain* pd = nullptr;
    verbs::MemoryRegion* mr = nullptr;
    std::vector<Sender> senders;             // by SL order
    bool receives = false;                   // some connection ends here
    verbs::CompletionQueue* recv_cq = nullptr;
    verbs::QueuePair* recv_qp = nullptr;
    uint64_t received = 0;
    verbs::HostMemoryPlan plan;
  };
  static verbs::HostMemoryPlan plan(size_t senders, bool receives, uint32_t buffer_bytes);

  void host_program(Host& h);
  void send_program(Host& h);
  bool create(Host& h);
  bool connect(Host& h, verbs::QueuePair* qp);
  bool post_receives(Host& h, uint32_t count);
  void receive_loop(Host& h);
  bool reap(Host& h, Sender& s, bool wait);
  void barrier(int phase);
  void fail(const std::string& why);

  static constexpr uint32_t kQkey = 0x22222222;

  const workload::CbrConnections& conns_;
  uint32_t buffer_bytes_ = 0;
  std::vector<std::unique_ptr<Host>> hosts_;
  std::vector<Host*> host_of_node_;  // by topology node; null where no connection starts or ends
  // The address handle of each connection (its (DLID, SL) at its source), made at set-up.
  std::vector<verbs::AddressHandle*> ah_;
  uint32_t arrived_[2] = {0, 0};
  sc_core::sc_event barrier_event_;
  std::string error_;
};

}  // namespace ibvp::apps
