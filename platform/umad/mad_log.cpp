#include "platform/umad/mad_log.h"

#include <cinttypes>
#include <cstdio>
#include <stdexcept>

#include "platform/metrics/csv.h"

namespace ibvp::umad {

MadHeader read_header(const uint8_t* m) {
  MadHeader h;
  h.mgmt_class = m[1];
  h.method = m[3];
  h.status = static_cast<uint16_t>(m[4] << 8 | m[5]);
  if (h.mgmt_class == kDirectedRouteClass) {
    h.status &= 0x7FFF;  // the D bit (direction) is the top bit of the DR SMP's status word
    h.hop_count = m[7];
  }
  for (int i = 0; i < 8; ++i) h.tid = h.tid << 8 | m[8 + i];
  h.attr_id = static_cast<uint16_t>(m[16] << 8 | m[17]);
  h.attr_mod = static_cast<uint32_t>(m[20]) << 24 | static_cast<uint32_t>(m[21]) << 16 |
               static_cast<uint32_t>(m[22]) << 8 | m[23];
  return h;
}

bool expects_response(uint8_t method) {
  switch (method) {
    case 0x01: case 0x02: case 0x06: case 0x12: case 0x13: case 0x14: case 0x15: return true;
    default: return false;
  }
}

const char* event_name(MadEvent e) {
  switch (e) {
    case MadEvent::to_fabric: return "to_fabric";
    case MadEvent::to_client: return "to_client";
    case MadEvent::timed_out: return "timed_out";
    case MadEvent::refused: return "refused";
    case MadEvent::unclaimed: return "unclaimed";
  }
  return "?";
}

uint64_t MadLog::count(MadEvent e) const {
  uint64_t n = 0;
  for (const MadRow& r : rows_) n += r.event == e;
  return n;
}

void MadLog::write_csv(const std::string& path) const {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error(path + ": cannot open for writing");
  std::fprintf(f, "wall_s,sim_ps,event,client,host,dlid,slid,dest_qp,mgmt_class,method,attr_id,attr_mod,tid,status,"
                  "hop_count\n");
  for (const MadRow& r : rows_) {
    const MadHeader& h = r.header;
    std::fprintf(f, "%.6f,%" PRIu64 ",%s,%d,%s,%u,%u,%u,0x%02x,0x%02x,0x%04x,%u,0x%016" PRIx64 ",0x%04x,%u\n",
                 r.wall_s, r.sim_ps, event_name(r.event), r.client, metrics::csv_field(r.host).c_str(), r.dlid, r.slid, r.qp,
                 h.mgmt_class, h.method, h.attr_id, h.attr_mod, h.tid, h.status, h.hop_count);
  }
  std::fclose(f);
}

}  // namespace ibvp::umad
