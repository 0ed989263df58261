#pragma once
// Finds credit deadlocks while a run goes on, and says at its end which packets are stuck.
//
// The runner calls check() between kernel slices. Once per deadlock_timeout it looks at every
// switch output VL: those with requests waiting and no transmission start for at least the
// timeout are the candidates. Among them it keeps the ones that can never move again (the
// wait-for graph below); a deadlock is reported only when such outputs exist, and they then
// always contain a cycle, which the report names. Other traffic may keep moving meanwhile.
// Multicast takes part: a multicast packet holds its input until every copy has left, and a
// synchronous multicast holds the outputs it reserved until all its copies start; the report
// names the groups caught (docs/multicast.md).
//
// Only switch outputs take part. A channel adapter's output (ep::Endpoint, hca::Hca) may wait
// for a switch's credits, but nothing in the fabric waits for a channel adapter: its receive
// side frees buffer space when a packet's tail is in (Endpoint) or when the firmware's
// handler for the packet returns (Hca; the HAL's tx_post queues a reply without waiting for
// room or credits, docs/hca.md). Nothing leads back to a CA's output in the wait-for graph,
// so no cycle can pass through one. (A firmware that spins until its transmit queue drains
// would be a firmware fault, not a credit cycle.)
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ibvp {

class Fabric;

// A switch output VL with requests and no progress for longer than deadlock_timeout.
struct StuckOutput {
  std::string port;      // "node/port"
  uint8_t vl = 0;
  uint32_t packets = 0;  // requests waiting there
  uint64_t waiting_ps = 0;
};

// Packets stuck at the end of a run: waiting at switch outputs that made no progress for
// longer than the timeout.
struct StuckReport {
  uint64_t packets = 0;
  uint32_t outputs = 0;  // switch ports (node/port) with a stuck VL
  uint64_t longest_ps = 0;
  std::vector<StuckOutput> worst;  // the longest waits first, at most kWorst
  static constexpr size_t kWorst = 5;
};

class DeadlockWatch {
 public:
  DeadlockWatch(const Fabric& fabric, uint64_t timeout_ps);

  // Between kernel slices, at simulated time now_ps: the report of a deadlock (when, the
  // cycle of output ports and VLs, how long they have been stuck, how many packets they
  // hold), or nothing. Looks at the fabric at most once per timeout.
  std::optional<std::string> check(uint64_t now_ps);
  // The outputs stuck longer than the timeout at now_ps, or nothing.
  std::optional<StuckReport> stuck(uint64_t now_ps) const;

  // A run split across processes (docs/parallel.md) sees only its own switches: each
  // process lists its stuck output VLs, and rank 0 makes the report of them all. Listed in
  // (node, port, VL) order, as stuck() takes them.
  struct StuckChannel {
    uint32_t node;
    uint16_t port;
    uint8_t vl;
    uint32_t packets;
    uint64_t waiting_ps;
  };
  std::vector<StuckChannel> stuck_channels(uint64_t now_ps) const;
  // The report of `channels` in (node, port, VL) order; nothing when empty.
  static std::optional<StuckReport> stuck_report(const std::vector<std::string>& node_names,
                                                 const std::vector<StuckChannel>& channels);

 private:
  // A switch output VL with requests that have waited at least the timeout.
  struct Channel {
    uint32_t node;
    uint16_t port;
    uint8_t vl;
    uint32_t packets;
    uint64_t since_ps;
  };
  std::vector<Channel> candidates(uint64_t now_ps) const;
  std::optional<std::string> flit_check(uint64_t now_ps) const;
  std::string name(const Channel& c) const;
  // "multicast group 'g' (MLID 0xC000)", or the MLID alone if no group has it.
  std::string group_name(uint32_t mlid) const;

  const Fabric& fabric_;
  uint64_t timeout_ps_;
  uint64_t next_check_ps_;
};

}  // namespace ibvp
