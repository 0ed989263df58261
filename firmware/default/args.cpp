// The default firmware's arguments (hca.firmware_args, docs/firmware.md): comma-separated
// key=value pairs into the step costs, the QP scheduler and congestion control options. An
// unknown key or a value out of range refuses the image with a message naming both.
#include "firmware/default/firmware.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "firmware/default/constants.h"

namespace ibvp::fw {

bool Firmware::parse_args(const char* args, StepCosts& out, SchedOptions& sched, std::string& error) {
  std::string s = args ? args : "";
  size_t pos = 0;
  std::vector<std::string> cct_keys;  // given: checked against cc= once all keys are read
  const auto number = [&](const std::string& v, unsigned long long& n) {
    char* rest = nullptr;
    n = std::strtoull(v.c_str(), &rest, 10);
    return !v.empty() && *rest == '\0';
  };
  while (pos < s.size()) {
    size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    const std::string item = s.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      error = "'" + item + "' is not key=value";
      return false;
    }
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    unsigned long long v = 0;
    if (key == "sched") {
      if (value == "fcfs") sched.policy = QpSchedPolicy::fcfs;
      else if (value == "sp") sched.policy = QpSchedPolicy::strict_priority;
      else if (value == "rr") sched.policy = QpSchedPolicy::round_robin;
      else if (value == "wrr") sched.policy = QpSchedPolicy::weighted_rr;
      else if (value == "vc") sched.policy = QpSchedPolicy::virtual_clock;
      else {
        error = "unknown scheduling policy '" + value + "' (fcfs, sp, rr, wrr, vc)";
        return false;
      }
      continue;
    }
    if (key == "mux") {
      if (value == "packet") sched.mux = TxMultiplexing::packet;
      else if (value == "message") sched.mux = TxMultiplexing::message;
      else {
        error = "unknown multiplexing '" + value + "' (packet, message)";
        return false;
      }
      continue;
    }
    if (key == "cc") {
      if (value != "none" && value != "cct" && !cc::make_response(value, cc::RateLimits{})) {
        error = "unknown congestion control '" + value + "' (none, fimd, lipd, aimd, cct)";
        return false;
      }
      sched.cc.response = value;
      continue;
    }
    if (key == "cc_rate") {
      if (value != "discrete" && value != "continuous") {
        error = "unknown cc_rate '" + value + "' (discrete, continuous)";
        return false;
      }
      sched.cc.discrete = value == "discrete";
      continue;
    }
    if (key == "cc_persist") {
      if (value != "0" && value != "1") {
        error = "cc_persist must be 0 or 1, not '" + value + "'";
        return false;
      }
      sched.cc.persist = value == "1";
      continue;
    }
    if (key == "cc_window") {
      unsigned long long w = 0;
      if (!number(value, w) || w > kMaxCcWindow) {
        error = "cc_window '" + value + "' is out of range (0 = none, 1.." + std::to_string(kMaxCcWindow) + " packets)";
        return false;
      }
      sched.cc.window = static_cast<uint32_t>(w);
      continue;
    }
    if (key == "cc_prefetch") {
      unsigned long long n = 0;
      if (!number(value, n) || n > kMaxCcPrefetch) {
        error = "cc_prefetch '" + value + "' is out of range (0 = fetch when the window opens, 1.." +
                std::to_string(kMaxCcPrefetch) + " packets fetched ahead)";
        return false;
      }
      sched.cc.prefetch = static_cast<uint32_t>(n);
      continue;
    }
    if (key.rfind("cct_", 0) == 0) {
      // The annex's field widths: CCTI_Increase 8 bits, CCTI_Timer 16 bits; the CCTIs index
      // the table.
      const uint32_t last = sched.cc.cct.entries - 1;
      struct Range {
        const char* key;
        uint32_t* field;
        uint32_t lo, hi;
        const char* what;
      };
      const Range ranges[] = {{"cct_increase", &sched.cc.cct.increase, 1, 255, "CCTI steps per BECN"},
                              {"cct_limit", &sched.cc.cct.limit, 0, last, "the largest CCTI"},
                              {"cct_min", &sched.cc.cct.min, 0, last, "the smallest CCTI"},
                              {"cct_timer", &sched.cc.cct.timer, 1, 65535, "units of 1.024 us"},
                              {"cct_max_ipd", &sched.cc.cct.max_ipd, 1, 255, "the last entry's IPD, packet times"}};
      const Range* r = nullptr;
      for (const Range& c : ranges)
        if (key == c.key) r = &c;
      if (r == nullptr) {
        error = "unknown key '" + key + "' (cct_increase, cct_limit, cct_min, cct_timer, cct_max_ipd)";
        return false;
      }
      unsigned long long n = 0;
      if (!number(value, n) || n < r->lo || n > r->hi) {
        error = key + " '" + value + "' is out of range (" + std::to_string(r->lo) + ".." + std::to_string(r->hi) +
                ", " + r->what + ")";
        return false;
      }
      *r->field = static_cast<uint32_t>(n);
      cct_keys.push_back(key);
      continue;
    }
    if (key == "dlid_ipd") {
      const size_t colon = value.find(':');
      unsigned long long lid = 0, ipd = 0;
      if (colon == std::string::npos || !number(value.substr(0, colon), lid) || !number(value.substr(colon + 1), ipd) ||
          lid == 0 || lid > 0xBFFF || ipd > 255) {
        error = "'" + value + "' is not LID:IPD (unicast LID 1..0xBFFF, IPD 0..255)";
        return false;
      }
      sched.dlid_ipd.emplace_back(static_cast<uint16_t>(lid), static_cast<uint32_t>(ipd));
      continue;
    }
    if (!number(value, v)) {
      error = "'" + value + "' is not a number";
      return false;
    }
    if (key == "wqe_cycles") out.wqe_cycles = v;
    else if (key == "rx_cycles") out.rx_cycles = v;
    else if (key == "cmd_cycles") out.cmd_cycles = v;
    else if (key == "mad_cycles") out.mad_cycles = v;
    else if (key == "vc_bits" && v <= 63) sched.vc_bits = static_cast<uint32_t>(v);
    else {
      error = "unknown key '" + key +
              "' (wqe_cycles, rx_cycles, cmd_cycles, mad_cycles, sched, mux, vc_bits, dlid_ipd, cc, cc_rate, cc_window, cc_prefetch, cc_persist, "
              "cct_increase, cct_limit, cct_min, cct_timer, cct_max_ipd)";
      return false;
    }
  }
  if (!cct_keys.empty() && sched.cc.response != "cct") {
    error = cct_keys.front() + " is only used with cc=cct";
    return false;
  }
  if (sched.cc.cct.min > sched.cc.cct.limit) {
    error = "cct_min " + std::to_string(sched.cc.cct.min) + " is above cct_limit " +
            std::to_string(sched.cc.cct.limit) + " (give cct_min <= cct_limit)";
    return false;
  }
  return true;
}

}  // namespace ibvp::fw
