#pragma once
// What a umad server carried: one row per MAD that crossed between a client and the fabric,
// with the wall and simulated times, written as umad_mads.csv, and the totals as umad.json,
// both inside the run's output directory.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ibvp::umad {

// The MAD common header fields a log row shows (IBA 13.4.2, 13.4.3; the directed-route SMP
// header of 14.2.1.2 when MgmtClass is 0x81).
struct MadHeader {
  uint8_t mgmt_class = 0;
  uint8_t method = 0;  // with the R bit (0x80: a response)
  uint16_t status = 0;
  uint8_t hop_count = 0;  // directed route only
  uint64_t tid = 0;
  uint16_t attr_id = 0;
  uint32_t attr_mod = 0;
  bool response() const { return method & 0x80; }
};
MadHeader read_header(const uint8_t* mad);
// IBA 13.4.5 table 92: Get, Set, Report, GetTable, GetTraceTable, GetMulti and Delete ask
// for a response; Send, Trap, TrapRepress and responses do not.
bool expects_response(uint8_t method);
constexpr uint8_t kDirectedRouteClass = 0x81;

enum class MadEvent : uint8_t {
  to_fabric,     // a client's MAD entered the fabric at its host's port
  to_client,     // a MAD the host's port received went to a client
  timed_out,     // a client's request got no response in time: returned with status 110
  refused,       // the port could not send it (a QP it does not carry): returned with status 110
  unclaimed,     // a MAD reached a host with no client for it (a late response, or no SM)
};
const char* event_name(MadEvent e);

struct MadRow {
  double wall_s = 0;
  uint64_t sim_ps = 0;
  MadEvent event = MadEvent::to_fabric;
  int client = -1;
  std::string host;
  uint16_t dlid = 0;
  uint16_t slid = 0;
  uint32_t qp = 0;  // destination QP
  MadHeader header;
};

class MadLog {
 public:
  void add(MadRow row) { rows_.push_back(std::move(row)); }
  const std::vector<MadRow>& rows() const { return rows_; }
  uint64_t count(MadEvent e) const;
  // umad_mads.csv: one line per row, in the order they happened.
  void write_csv(const std::string& path) const;

 private:
  std::vector<MadRow> rows_;
};

}  // namespace ibvp::umad
