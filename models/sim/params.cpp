#include "models/sim/params.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <sstream>

namespace ibvp::sim {

const char* param_kind_name(ParamKind k) {
  switch (k) {
    case ParamKind::integer: return "integer";
    case ParamKind::real: return "number";
    case ParamKind::boolean: return "boolean";
    case ParamKind::time: return "time";
    case ParamKind::choice: return "choice";
    case ParamKind::string: return "string";
    case ParamKind::object: return "object";
    case ParamKind::list: return "list";
  }
  return "unknown";
}

ParamError::ParamError(std::string key, std::string problem, std::string fix)
    : std::runtime_error((key.empty() ? "" : key + ": ") + problem + (fix.empty() ? "" : " (fix: " + fix + ")")),
      key_(std::move(key)),
      problem_(std::move(problem)),
      fix_(std::move(fix)) {}

namespace {

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

struct TimeUnit {
  const char* name;
  int exp10;  // picoseconds per unit = 10^exp10
};
constexpr TimeUnit kTimeUnits[] = {{"s", 12}, {"ms", 9}, {"us", 6}, {"ns", 3}, {"ps", 0}};

// Picoseconds per tick of the simulator (1 unless someone changed the resolution).
uint64_t resolution_ps() {
  return static_cast<uint64_t>(std::llround(sc_core::sc_get_time_resolution().to_seconds() * 1e12));
}

std::string quoted(const std::string& s) { return "\"" + excerpt(s) + "\""; }

}  // namespace

bool parse_time(const std::string& text, sc_core::sc_time& out, std::string& problem) {
  const std::string s = trim(text);
  if (s.empty()) {
    problem = "empty time";
    return false;
  }
  if (s[0] == '-') {
    problem = "negative time " + quoted(s) + "; times are durations or instants after 0";
    return false;
  }
  // Split into number and unit: the number is digits with at most one decimal point.
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  const std::string number = s.substr(0, i);
  const std::string unit = trim(s.substr(i));
  const size_t dot = number.find('.');
  const std::string whole = number.substr(0, dot);
  const std::string frac = dot == std::string::npos ? "" : number.substr(dot + 1);
  if (!all_digits(whole) || (dot != std::string::npos && !all_digits(frac))) {
    problem = "not a time: " + quoted(s);
    return false;
  }
  const std::string digits = whole + frac;
  const bool zero = digits.find_first_not_of('0') == std::string::npos;
  if (unit.empty()) {
    // A bare number is ambiguous (ns? ms?) unless it is zero, which is zero in every unit.
    if (zero) {
      out = sc_core::SC_ZERO_TIME;
      return true;
    }
    problem = "time " + quoted(s) + " has no unit";
    return false;
  }
  const TimeUnit* u = nullptr;
  for (const TimeUnit& t : kTimeUnits)
    if (unit == t.name) u = &t;
  if (u == nullptr) {
    problem = "unknown time unit " + quoted(unit) + " in " + quoted(s);
    return false;
  }
  // Exact decimal arithmetic in picoseconds: "1.5us" is 1500000 ps, not a rounded double.
  int shift = u->exp10 - static_cast<int>(frac.size());
  std::string mant = digits;
  while (shift < 0) {
    if (mant.empty() || mant.back() != '0') {
      problem = "time " + quoted(s) + " is finer than the 1 ps resolution";
      return false;
    }
    mant.pop_back();
    ++shift;
  }
  const uint64_t limit = std::numeric_limits<uint64_t>::max();
  uint64_t ps = 0;
  bool overflow = false;
  for (char c : mant) {
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (ps > (limit - d) / 10) overflow = true;
    else ps = ps * 10 + d;
  }
  for (int k = 0; k < shift && !overflow; ++k) {
    if (ps > limit / 10) overflow = true;
    else ps *= 10;
  }
  const uint64_t res = resolution_ps();
  if (overflow || ps / res > sc_core::sc_max_time().value()) {
    problem = "time " + quoted(s) + " is beyond the longest time the simulator can represent (" +
              std::to_string(static_cast<uint64_t>(sc_core::sc_max_time().to_seconds() / 86400)) + " days)";
    return false;
  }
  if (ps % res != 0) {
    problem = "time " + quoted(s) + " is finer than the simulator's time resolution " +
              format_time(sc_core::sc_get_time_resolution());
    return false;
  }
  out = sc_core::sc_time::from_value(ps / res);
  return true;
}

std::string excerpt(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  return s.substr(0, max) + "... (" + std::to_string(s.size()) + " bytes)";
}

std::string format_time(const sc_core::sc_time& t) {
  const uint64_t ps = t.value() * resolution_ps();
  if (ps == 0) return "0s";
  for (const TimeUnit& u : kTimeUnits) {
    uint64_t scale = 1;
    for (int k = 0; k < u.exp10; ++k) scale *= 10;
    if (ps % scale == 0) return std::to_string(ps / scale) + u.name;
  }
  return std::to_string(ps) + "ps";
}

bool parse_integer(const std::string& text, int64_t& out) {
  const std::string s = trim(text);
  const size_t start = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (!all_digits(s.substr(start))) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno == ERANGE || end != s.c_str() + s.size()) return false;
  out = v;
  return true;
}

bool parse_real(const std::string& text, double& out) {
  const std::string s = trim(text);
  // strtod also reads hex floats, "inf" and "nan"; a parameter is a plain decimal.
  if (s.empty() || s.find_first_not_of("0123456789+-.eE") != std::string::npos) return false;
  if (s.find_first_of("0123456789") == std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (errno == ERANGE || end != s.c_str() + s.size() || !std::isfinite(v)) return false;
  out = v;
  return true;
}

bool parse_boolean(const std::string& text, bool& out) {
  std::string s = trim(text);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "true") out = true;
  else if (s == "false") out = false;
  else return false;
  return true;
}

std::string format_real(double v) {
  std::ostringstream os;
  os << std::setprecision(15) << v;
  return os.str();
}

ParamDecl& ParamDecl::range(int64_t lo, int64_t hi) {
  int_min = lo;
  int_max = hi;
  return *this;
}

ParamDecl& ParamDecl::real_range(double lo, double hi, bool lo_open) {
  min = lo;
  max = hi;
  min_open = lo_open;
  return *this;
}

ParamDecl& ParamDecl::positive() {
  min = 0.0;
  min_open = true;
  return *this;
}

ParamDecl& ParamDecl::multiple_of(int64_t m) {
  multiple = m;
  return *this;
}

ParamDecl& ParamDecl::items(size_t lo, size_t hi) {
  min_items = lo;
  max_items = hi;
  return *this;
}

ParamDecl& ParamDecl::require() {
  required = true;
  default_text.clear();
  return *this;
}

ParamDecl& ParamDecl::defaults_to(std::string text) {
  default_text = std::move(text);
  default_is_prose = true;
  return *this;
}

ParamDecl& ParamDecl::no_default() {
  default_text.clear();
  default_is_prose = true;
  return *this;
}

std::string ParamDecl::expected() const {
  switch (scalar_kind()) {
    case ParamKind::integer: return "an integer";
    case ParamKind::real: return "a number";
    case ParamKind::boolean: return "true or false";
    case ParamKind::time: return "a time with a unit (e.g. 40ns, 2ms)";
    case ParamKind::choice: {
      std::string s = "one of ";
      for (size_t i = 0; i < choices.size(); ++i) s += (i ? ", " : "") + choices[i];
      return s;
    }
    case ParamKind::string: return "a string";
    case ParamKind::object: return "a mapping";
    case ParamKind::list: return "a list";
  }
  return "a value";
}

std::string ParamDecl::range_text() const {
  std::string r;
  switch (scalar_kind()) {
    case ParamKind::integer:
      if (int_max == std::numeric_limits<int64_t>::max()) {
        if (int_min != std::numeric_limits<int64_t>::min()) r = ">= " + std::to_string(int_min);
      } else {
        r = std::to_string(int_min) + ".." + std::to_string(int_max);
      }
      if (multiple > 1) r += (r.empty() ? "" : ", ") + std::string("multiple of ") + std::to_string(multiple);
      return r;
    case ParamKind::real: {
      const bool lo = std::isfinite(min), hi = std::isfinite(max);
      if (lo && hi) return (min_open ? "(" : "[") + format_real(min) + ", " + format_real(max) + "]";
      if (lo) return (min_open ? "> " : ">= ") + format_real(min);
      if (hi) return "<= " + format_real(max);
      return "";
    }
    case ParamKind::time: {
      // Times are never negative; only a stricter bound is worth stating.
      const auto as_time = [](double ps) {
        return format_time(sc_core::sc_time::from_value(static_cast<uint64_t>(ps) / resolution_ps()));
      };
      if (min_open) r = "> " + as_time(min);
      else if (min > 0) r = ">= " + as_time(min);
      if (std::isfinite(max)) r += (r.empty() ? "" : ", ") + std::string("<= ") + as_time(max);
      return r;
    }
    default: return "";
  }
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  // Levenshtein distance; a typo is at most a third of the word (at least one edit) away.
  std::string best;
  size_t best_d = std::max<size_t>(1, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    std::vector<size_t> prev(c.size() + 1), cur(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= word.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= c.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (word[i - 1] == c[j - 1] ? 0 : 1)});
      std::swap(prev, cur);
    }
    if (prev[c.size()] < best_d) {
      best_d = prev[c.size()];
      best = c;
    }
  }
  return best;
}

ParamValue ParamDecl::accept(const std::string& text, bool is_quoted) const {
  ParamValue v;
  v.kind = scalar_kind();
  v.text = text;
  const std::string range = range_text();
  const std::string got = "got " + std::string(is_quoted ? "the string " : "") + quoted(text);
  switch (v.kind) {
    case ParamKind::integer: {
      if (is_quoted || !parse_integer(text, v.integer))
        throw ParamError("", "expected an integer, " + got,
                         is_quoted ? "remove the quotes" : "write a whole number" + (range.empty() ? "" : " in " + range));
      if (v.integer < int_min || v.integer > int_max)
        throw ParamError("", text + " is out of range " + range, "use a value in " + range);
      if (v.integer % multiple != 0) {
        const int64_t below = v.integer - v.integer % multiple;
        throw ParamError("", text + " is not a multiple of " + std::to_string(multiple),
                         "use " + std::to_string(below) + " or " + std::to_string(below + multiple));
      }
      break;
    }
    case ParamKind::real: {
      if (is_quoted || !parse_real(text, v.real))
        throw ParamError("", "expected a number, " + got,
                         is_quoted ? "remove the quotes" : "write a decimal number" + (range.empty() ? "" : " in " + range));
      const bool below = min_open ? v.real <= min : v.real < min;
      if (below || v.real > max) throw ParamError("", text + " is out of range " + range, "use a value in " + range);
      break;
    }
    case ParamKind::boolean:
      if (is_quoted || !parse_boolean(text, v.boolean))
        throw ParamError("", "expected true or false, " + got, "write true or false");
      break;
    case ParamKind::time: {
      std::string problem;
      if (!parse_time(text, v.time, problem))
        throw ParamError("", problem,
                         "write a number and a unit (ps, ns, us, ms, s), e.g. 40ns, 2 ms, 1.5us; only 0 may omit the unit");
      const double ps = static_cast<double>(v.time.value() * resolution_ps());
      const bool below = min_open ? ps <= min : ps < min;
      if (below || ps > max)
        throw ParamError("", text + " is out of range: must be " + range, "give a time " + range);
      break;
    }
    case ParamKind::choice: {
      for (const std::string& c : choices)
        if (c == text) return v;
      std::string fix = "allowed values are ";
      for (size_t i = 0; i < choices.size(); ++i) fix += (i ? ", " : "") + choices[i];
      const std::string near = closest_match(text, choices);
      if (!near.empty()) fix = "did you mean " + near + "? " + fix;
      throw ParamError("", "unknown value " + quoted(text), fix);
    }
    case ParamKind::string:
      break;
    case ParamKind::object:
    case ParamKind::list:
      throw ParamError("", "expected " + expected() + ", got a single value " + quoted(text),
                       "write " + expected());
  }
  return v;
}

const ParamDecl* ParamGroup::find(const std::string& key) const {
  for (const ParamDecl& d : params)
    if (d.name == key) return &d;
  return nullptr;
}

std::string ParamGroup::key_list() const {
  std::string s;
  for (const ParamDecl& d : params) s += (s.empty() ? "" : ", ") + d.name;
  return s;
}

}  // namespace ibvp::sim
