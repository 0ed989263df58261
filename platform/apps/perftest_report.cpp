#include "platform/apps/perftest_report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>

#include "platform/apps/perftest.h"

namespace ibvp::apps {

namespace {

// perftest_parameters.h: RESULT_LINE, RESULT_FMT, RESULT_FMT_LAT, REPORT_FMT, REPORT_FMT_LAT.
constexpr const char* kResultLine =
    "---------------------------------------------------------------------------------------\n";
constexpr const char* kResultFmtBw =
    " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n";
constexpr const char* kResultFmtLat =
    " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% "
    "percentile[usec]   99.9% percentile[usec] \n";

// perftest_parameters.c: testsStr[] by verb.
const char* verb_name(PerftestKind k) {
  switch (k) {
    case PerftestKind::send_bw:
    case PerftestKind::send_lat: return "Send";
    case PerftestKind::write_bw:
    case PerftestKind::write_lat: return "RDMA_Write";
    case PerftestKind::read_bw: return "RDMA_Read";
  }
  return "Send";
}

struct Point {
  __int128 x, y;
};
// Twice the signed area of o, a, b: > 0 when o -> a -> b turns left.
__int128 cross(const Point& o, const Point& a, const Point& b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}
// slope(a, q) < slope(b, q) for points a, b left of q.
bool less_slope(const Point& a, const Point& b, const Point& q) {
  return (q.y - a.y) * (q.x - b.x) < (q.y - b.y) * (q.x - a.x);
}

}  // namespace

uint64_t perftest_peak_delta_ps(const std::vector<uint64_t>& tposted, const std::vector<uint64_t>& tcompleted,
                                uint32_t cq_mod) {
  const size_t n = std::min(tposted.size(), tcompleted.size());
  if (n == 0 || cq_mod == 0) return 0;
  // A run i..j has slope (tcompleted[j] - tposted[i]) / (j - (i - 1)): the slope from
  // A_i = (i - 1, tposted[i]) to B_j = (j, tcompleted[j]). The smallest slope from B_j to
  // any A_i left of it is its tangent to the upper hull of those points.
  std::vector<Point> hull;
  uint64_t best = std::numeric_limits<uint64_t>::max();
  size_t added = 0;
  for (size_t j = cq_mod - 1;; j += cq_mod) {
    if (j >= n) {
      if (n % cq_mod == 0) break;
      j = n - 1;  // perftest: the last message is signaled too
    }
    for (; added <= j; ++added) {
      const Point a{static_cast<__int128>(added) - 1, static_cast<__int128>(tposted[added])};
      while (hull.size() >= 2 && cross(hull[hull.size() - 2], hull.back(), a) >= 0) hull.pop_back();
      hull.push_back(a);
    }
    const Point q{static_cast<__int128>(j), static_cast<__int128>(tcompleted[j])};
    // Slopes from q along the hull fall to the tangent point, then rise.
    size_t lo = 0, hi = hull.size() - 1;
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (less_slope(hull[mid + 1], hull[mid], q)) lo = mid + 1;
      else hi = mid;
    }
    const Point& a = hull[lo];
    const auto delta = static_cast<uint64_t>((q.y - a.y) / (q.x - a.x));
    best = std::min(best, delta);
    if (j == n - 1) break;
  }
  return best;
}

uint64_t perftest_peak_delta_ps_by_pairs(const std::vector<uint64_t>& tposted,
                                         const std::vector<uint64_t>& tcompleted, uint32_t cq_mod) {
  const uint64_t n = std::min(tposted.size(), tcompleted.size());
  uint64_t best = std::numeric_limits<uint64_t>::max();
  for (uint64_t i = 0; i < n; ++i) {
    for (uint64_t j = (i + cq_mod) / cq_mod * cq_mod - 1; j < n; j += cq_mod)
      best = std::min(best, (tcompleted[j] - tposted[i]) / (j - i + 1));
    if (n % cq_mod) best = std::min(best, (tcompleted[n - 1] - tposted[i]) / (n - 1 - i + 1));
  }
  return n ? best : 0;
}

std::string perftest_report(const PerftestSetup& s, const std::vector<PerftestRow>& rows) {
  std::string o;
  char line[512];
  auto put = [&](const char* fmt, auto... args) {
    std::snprintf(line, sizeof line, fmt, args...);
    o += line;
  };
  const PerftestConfig& c = s.cfg;
  const bool bw = perftest_is_bw(c.test);
  // ctx_print_test_info (FULL_VERBOSITY, the client's side; a build with the ibv_wr* API and
  // without PCIe relaxed ordering, which the host bus model does not have).
  o += kResultLine;
  put("                    %s %sTest\n", verb_name(c.test), bw ? "BW " : "Latency ");
  put(" Dual-port       : %s\t\tDevice         : %s\n", "OFF", s.device.c_str());
  put(" Number of qps   : %d\t\tTransport type : %s\n", static_cast<int>(c.qps), "IB");
  put(" Connection type : %s\t\tUsing SRQ      : %s\n", c.qp_type == PerftestQpType::ud ? "UD" : "RC", "OFF");
  put(" PCIe relax order: %s\t\tLock-free      : %s\n", "Unsupported", "OFF");
  put(" ibv_wr* API     : %s\t\tUsing Enhanced Reorder      : %s\n", "OFF", "OFF");
  put(" TX depth        : %u\n", s.tx_depth);
  if (bw) {
    put(" CQ Moderation   : %u\n", s.cq_mod);
    put(" CQE Poll Batch  : %u\n", s.cqe_poll);
  }
  put(" Mtu             : %u[B]\n", c.mtu);
  put(" Link type       : %s\n", "IB");
  if (c.test != PerftestKind::read_bw) put(" Max inline data : %u[B]\n", s.max_inline_bytes);
  else put(" Outstand reads  : %u\n", s.local.out_reads);
  put(" rdma_cm QPs\t : %s\n", "OFF");
  put(" Data ex. method : %s\n", "Ethernet");
  o += kResultLine;
  // ctx_print_pingpong_data, every QP's local line, then every QP's remote line
  // (BASIC_ADDR_FMT, READ_FMT, RDMA_FMT).
  std::vector<std::pair<const char*, const PerftestAddress*>> lines{{"local", &s.local}};
  for (const PerftestAddress& a : s.more_local) lines.emplace_back("local", &a);
  lines.emplace_back("remote", &s.remote);
  for (const PerftestAddress& a : s.more_remote) lines.emplace_back("remote", &a);
  for (const auto& [side, a] : lines) {
    put(" %s address: LID %#04x QPN %#06x PSN %#06x", side, unsigned{a->lid}, a->qpn, a->psn);
    if (c.test == PerftestKind::read_bw) put(" OUT %#04x", a->out_reads);
    if (c.test == PerftestKind::read_bw || c.test == PerftestKind::write_bw || c.test == PerftestKind::write_lat)
      put(" RKey %#08x VAddr %#016llx", a->rkey, static_cast<unsigned long long>(a->vaddr));
    o += "\n";
  }
  o += kResultLine;
  if (bw) {
    o += kResultFmtBw;
    for (const PerftestRow& r : rows)
      put(" %-7lu    %-10" PRIu64 "       %-7.2lf            %-7.2lf\t\t     %-7.6lf\n",
          static_cast<unsigned long>(r.bytes), uint64_t{r.iterations}, r.bw_peak_MBps, r.bw_avg_MBps,
          r.msg_rate_Mpps);
  } else {
    o += kResultFmtLat;
    for (const PerftestRow& r : rows)
      put(" %-7lu %" PRIu64 "          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n",
          static_cast<unsigned long>(r.bytes), uint64_t{r.iterations}, r.t_min_us, r.t_max_us, r.t_typical_us,
          r.t_avg_us, r.t_stdev_us, r.p99_us, r.p999_us);
  }
  o += kResultLine;
  return o;
}

}  // namespace ibvp::apps
