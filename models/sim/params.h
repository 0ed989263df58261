#pragma once
// Parameter declarations: each model states once, next to its code, what can be configured
// (name, kind, unit, default, range, one-line doc) and which config field a value goes to.
// Front ends (the YAML scenario loader in platform/params, later Python) walk these
// declarations to validate a document and fill the config structs; the JSON Schema and the
// reference page are generated from the same declarations, so the three cannot disagree.
//
// This header knows no file format: values arrive as text (the scalar as written) and
// leave as typed fields. Problems are thrown as ParamError with a key relative to the group
// being checked; the front end adds the file, the full key path and the line.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <systemc>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace ibvp::sim {

enum class ParamKind : uint8_t { integer, real, boolean, time, choice, string, object, list };
const char* param_kind_name(ParamKind k);

// A problem with one value or with a combination of values. `key` is relative to the group
// that found it ("vlarb.low[2].vl"; empty: the group itself).
class ParamError : public std::runtime_error {
 public:
  ParamError(std::string key, std::string problem, std::string fix);
  const std::string& key() const { return key_; }
  const std::string& problem() const { return problem_; }
  const std::string& fix() const { return fix_; }

 private:
  std::string key_, problem_, fix_;
};

// Text forms of scalar values. A time is a decimal number and a unit (ps, ns, us, ms, s),
// with optional blanks between: "40ns", "2 ms", "1.5us"; a bare "0" is the only unitless
// time. Negative times, times finer than the simulator's resolution and times beyond
// sc_max_time() are refused. On failure `problem` says why.
bool parse_time(const std::string& text, sc_core::sc_time& out, std::string& problem);
// The shortest exact spelling in the largest unit: "100ns", "2ms", "0s".
std::string format_time(const sc_core::sc_time& t);
bool parse_integer(const std::string& text, int64_t& out);  // decimal, optional sign
bool parse_real(const std::string& text, double& out);      // finite decimal/exponent form
bool parse_boolean(const std::string& text, bool& out);     // true/false (any case)
// A value as messages quote it: whole up to `max` bytes, else its first `max` bytes and
// "... (N bytes)", so that a 10 MB value does not make a 10 MB message.
std::string excerpt(const std::string& s, size_t max = 80);
std::string format_real(double v);                          // "0.3", "5", "1e-06"
// The candidate a misspelt word most likely meant, or "" if none is close (for "did you mean").
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// A checked scalar, or the items of a list of scalars.
struct ParamValue {
  ParamKind kind = ParamKind::string;
  int64_t integer = 0;
  double real = 0.0;
  bool boolean = false;
  sc_core::sc_time time;
  std::string text;  // the value as written (choice and string: the value itself)
  std::vector<ParamValue> items;
};

struct ParamGroup;

struct ParamDecl {
  std::string name;
  ParamKind kind = ParamKind::string;
  std::string unit;          // "bytes", "m", "ns/m", "packet times", "fraction"; empty: none
  std::string default_text;  // as the reference shows it; ignored when required
  bool default_is_prose = false;  // default_text describes a computed default, it is no value
  std::string doc;           // one line
  bool required = false;

  // Ranges. Integers (and integer list items) use int_min..int_max and `multiple`; reals
  // use min/max; times use min/max in picoseconds. min_open makes the lower bound exclusive.
  int64_t int_min = std::numeric_limits<int64_t>::min();
  int64_t int_max = std::numeric_limits<int64_t>::max();
  int64_t multiple = 1;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false;
  std::vector<std::string> choices;  // choice (or choice list items)

  // Lists: the kind of the items (object items follow `group`) and how many there may be.
  ParamKind element = ParamKind::object;
  size_t min_items = 0;
  size_t max_items = std::numeric_limits<size_t>::max();
  // Object members, or the members of each list item.
  const ParamGroup* group = nullptr;
  // Only the structure (mapping or list) is checked here, the content by another loader
  // (an inline topology); no binding.
  bool raw = false;
  // A list that may instead be written as one of these words, a named preset (seed 002's
  // `service_levels: seed002`); `preset` fills the config for the word.
  std::vector<std::string> presets;
  std::function<void(void* cfg, const std::string& word)> preset;

  // Bindings to the config struct the group describes (passed as void*: the group checks
  // the struct's type once, in GroupBuilder and in the front end).
  std::function<void(void* cfg, const ParamValue&)> set;  // scalars, lists of scalars
  std::function<void*(void* cfg)> member;                 // object: the sub-struct
  std::function<void(void* cfg, size_t n)> resize;        // list of objects: n default items
  std::function<void*(void* cfg, size_t i)> item;         // list of objects: item i

  // Refinements, chained after a GroupBuilder call.
  ParamDecl& range(int64_t lo, int64_t hi);
  ParamDecl& real_range(double lo, double hi, bool lo_open = false);
  ParamDecl& positive();  // real or time: strictly above 0
  ParamDecl& multiple_of(int64_t m);
  ParamDecl& items(size_t lo, size_t hi);
  ParamDecl& require();
  ParamDecl& defaults_to(std::string text);  // a computed default, described in words
  // Optional, but without a default of its own: another key decides when it is needed
  // (a generator's parameters).
  ParamDecl& no_default();

  ParamKind scalar_kind() const { return kind == ParamKind::list ? element : kind; }
  bool is_scalar() const { return kind != ParamKind::object && kind != ParamKind::list; }
  // Converts and checks one scalar (a list's item for lists of scalars). `quoted`: the text
  // was written as a string literal, which is not a number or a boolean. Throws ParamError
  // with an empty key.
  ParamValue accept(const std::string& text, bool quoted) const;
  // What a value must look like, for messages and the reference: "an integer", ...
  std::string expected() const;
  // The range and step as text: "1..15", "(0, 1]", "multiple of 64"; empty if unconstrained.
  std::string range_text() const;
};

struct ParamGroup {
  std::string name;  // "switch", "flow"
  std::string doc;
  std::vector<ParamDecl> params;
  std::vector<std::string> rules;  // cross-field rules, one line each, for the reference
  const std::type_info* type = nullptr;  // the struct the bindings write to
  // Called when the group is present in a document, before its keys are applied: resets
  // the struct to what an explicitly written group starts from (e.g. empty VL arbitration
  // tables), or records that an optional section is present.
  std::function<void(void* cfg)> begin;
  // Called after the keys (present or not): fills defaults that depend on other values and
  // checks combinations. `given` holds the keys the document wrote. Throws ParamError.
  std::function<void(void* cfg, const std::set<std::string>& given)> complete;

  const ParamDecl* find(const std::string& key) const;
  std::string key_list() const;  // "a, b, c"
};

// Declares the parameters of struct Cfg. Fields are given as member pointers (of Cfg or of
// one of its bases); their defaults for the reference are read from a default-constructed
// Cfg, so documentation and code share one default.
template <class Cfg>
class GroupBuilder {
 public:
  GroupBuilder(std::string name, std::string doc) {
    g_.name = std::move(name);
    g_.doc = std::move(doc);
    g_.type = &typeid(Cfg);
  }

  template <class O, class T>
  ParamDecl& integer(std::string name, T O::*field, std::string unit, std::string doc) {
    static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "integer needs an integral field");
    ParamDecl d = make(std::move(name), ParamKind::integer, std::move(unit), std::move(doc));
    d.int_min = type_min<T>();
    d.int_max = type_max<T>();
    d.default_text = std::to_string(+(defaults().*field));
    d.set = [field](void* c, const ParamValue& v) { cfg(c).*field = static_cast<T>(v.integer); };
    return add(std::move(d));
  }

  template <class O>
  ParamDecl& real(std::string name, double O::*field, std::string unit, std::string doc) {
    ParamDecl d = make(std::move(name), ParamKind::real, std::move(unit), std::move(doc));
    d.default_text = format_real(defaults().*field);
    d.set = [field](void* c, const ParamValue& v) { cfg(c).*field = v.real; };
    return add(std::move(d));
  }

  template <class O>
  ParamDecl& boolean(std::string name, bool O::*field, std::string doc) {
    ParamDecl d = make(std::move(name), ParamKind::boolean, "", std::move(doc));
    d.default_text = defaults().*field ? "true" : "false";
    d.set = [field](void* c, const ParamValue& v) { cfg(c).*field = v.boolean; };
    return add(std::move(d));
  }

  template <class O>
  ParamDecl& time(std::string name, sc_core::sc_time O::*field, std::string doc) {
    ParamDecl d = make(std::move(name), ParamKind::time, "", std::move(doc));
    d.default_text = format_time(defaults().*field);
    d.min = 0.0;
    d.set = [field](void* c, const ParamValue& v) { cfg(c).*field = v.time; };
    return add(std::move(d));
  }

  template <class O>
  ParamDecl& string(std::string name, std::string O::*field, std::string doc) {
    ParamDecl d = make(std::move(name), ParamKind::string, "", std::move(doc));
    d.default_text = defaults().*field;
    d.set = [field](void* c, const ParamValue& v) { cfg(c).*field = v.text; };
    return add(std::move(d));
  }

  // An enum field with the name of each value.
  template <class O, class E>
  ParamDecl& choice(std::string name, E O::*field, std::vector<std::pair<std::string, E>> values,
                    std::string doc) {
    ParamDecl d = make(std::move(name), ParamKind::choice, "", std::move(doc));
    for (const auto& [text, value] : values) {
      d.choices.push_back(text);
      if (value == defaults().*field) d.default_text = text;
    }
    d.set = [field, values](void* c, const ParamValue& v) {
      for (const auto& [text, value] : values)
        if (text == v.text) cfg(c).*field = value;
    };
    return add(std::move(d));
  }

  // A choice whose effect is not a single enum field (the setter decides).
  ParamDecl& choice_with(std::string name, std::vector<std::string> values,
                         std::function<void(Cfg&, const std::string&)> setter, std::string default_text,
                         std::string doc) {
    ParamDecl d = make(std::move(name), ParamKind::choice, "", std::move(doc));
    d.choices = std::move(values);
    d.default_text = std::move(default_text);
    d.set = [setter](void* c, const ParamValue& v) { setter(cfg(c), v.text); };
    return add(std::move(d));
  }

  template <class O>
  ParamDecl& strings(std::string name, std::vector<std::string> O::*field, std::string doc) {
    ParamDecl d = make(std::move(name), ParamKind::list, "", std::move(doc));
    d.element = ParamKind::string;
    d.default_text = "[]";
    d.set = [field](void* c, const ParamValue& v) {
      auto& out = cfg(c).*field;
      out.clear();
      for (const ParamValue& i : v.items) out.push_back(i.text);
    };
    return add(std::move(d));
  }

  // A list of reals of any length (thresholds, interval edges), its default from the struct.
  template <class O>
  ParamDecl& reals(std::string name, std::vector<double> O::*field, std::string unit, std::string doc) {
    ParamDecl d = make(std::move(name), ParamKind::list, std::move(unit), std::move(doc));
    d.element = ParamKind::real;
    std::string text;
    for (double v : defaults().*field) text += (text.empty() ? "" : ", ") + format_real(v);
    d.default_text = "[" + text + "]";
    d.set = [field](void* c, const ParamValue& v) {
      auto& out = cfg(c).*field;
      out.clear();
      for (const ParamValue& i : v.items) out.push_back(i.real);
    };
    return add(std::move(d));
  }

  // A fixed-length table of small integers (an SL2VL table).
  template <class O, class T, size_t N>
  ParamDecl& integers(std::string name, std::array<T, N> O::*field, std::string unit, std::string doc) {
    ParamDecl d = make(std::move(name), ParamKind::list, std::move(unit), std::move(doc));
    d.element = ParamKind::integer;
    d.int_min = type_min<T>();
    d.int_max = type_max<T>();
    d.min_items = d.max_items = N;
    d.set = [field](void* c, const ParamValue& v) {
      auto& out = cfg(c).*field;
      for (size_t i = 0; i < N && i < v.items.size(); ++i) out[i] = static_cast<T>(v.items[i].integer);
    };
    return add(std::move(d));
  }

  // A list of integers of any length (a set of port numbers), empty by default.
  template <class O, class T>
  ParamDecl& integer_list(std::string name, std::vector<T> O::*field, std::string unit, std::string doc) {
    static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "integer_list needs integral items");
    ParamDecl d = make(std::move(name), ParamKind::list, std::move(unit), std::move(doc));
    d.element = ParamKind::integer;
    d.int_min = type_min<T>();
    d.int_max = type_max<T>();
    std::string text;
    for (T v : defaults().*field) text += (text.empty() ? "" : ", ") + std::to_string(+v);
    d.default_text = "[" + text + "]";
    d.set = [field](void* c, const ParamValue& v) {
      auto& out = cfg(c).*field;
      out.clear();
      for (const ParamValue& i : v.items) out.push_back(static_cast<T>(i.integer));
    };
    return add(std::move(d));
  }

  template <class O, class Sub>
  ParamDecl& object(std::string name, Sub O::*field, const ParamGroup& group, std::string doc) {
    check_type<Sub>(group);
    ParamDecl d = make(std::move(name), ParamKind::object, "", std::move(doc));
    d.group = &group;
    d.member = [field](void* c) -> void* { return &(cfg(c).*field); };
    return add(std::move(d));
  }

  template <class O, class Item>
  ParamDecl& objects(std::string name, std::vector<Item> O::*field, const ParamGroup& group, std::string doc) {
    check_type<Item>(group);
    ParamDecl d = make(std::move(name), ParamKind::list, "", std::move(doc));
    d.element = ParamKind::object;
    d.group = &group;
    d.default_text = "[]";
    d.resize = [field](void* c, size_t n) { (cfg(c).*field).assign(n, Item{}); };
    d.item = [field](void* c, size_t i) -> void* { return &(cfg(c).*field)[i]; };
    return add(std::move(d));
  }

  // A list whose items another loader reads (the front end only checks it is a list).
  ParamDecl& raw_list(std::string name, std::string doc) {
    ParamDecl d = make(std::move(name), ParamKind::list, "", std::move(doc));
    d.raw = true;
    d.default_text = "[]";
    return add(std::move(d));
  }

  // A mapping another loader reads (the front end only checks it is a mapping).
  ParamDecl& raw_object(std::string name, std::string doc) {
    ParamDecl d = make(std::move(name), ParamKind::object, "", std::move(doc));
    d.raw = true;
    return add(std::move(d));
  }

  void rule(std::string line) { g_.rules.push_back(std::move(line)); }
  void on_begin(std::function<void(Cfg&)> f) {
    g_.begin = [f](void* c) { f(cfg(c)); };
  }
  // Several calls add up: each check runs after the ones declared before it.
  void on_complete(std::function<void(Cfg&, const std::set<std::string>&)> f) {
    g_.complete = [f, before = std::move(g_.complete)](void* c, const std::set<std::string>& given) {
      if (before) before(c, given);
      f(cfg(c), given);
    };
  }

  ParamGroup build() { return std::move(g_); }

 private:
  static Cfg& cfg(void* c) { return *static_cast<Cfg*>(c); }
  static const Cfg& defaults() {
    static const Cfg d{};
    return d;
  }
  template <class T>
  static int64_t type_min() {
    return std::is_signed_v<T> ? static_cast<int64_t>(std::numeric_limits<T>::min()) : 0;
  }
  template <class T>
  static int64_t type_max() {
    // Values travel as int64_t: a 64-bit unsigned field accepts 0..INT64_MAX.
    if constexpr (sizeof(T) >= sizeof(int64_t)) return std::numeric_limits<int64_t>::max();
    else return static_cast<int64_t>(std::numeric_limits<T>::max());
  }
  template <class Sub>
  static void check_type(const ParamGroup& group) {
    // A group bound to the wrong struct would write through a wrong pointer; catch it when
    // the declarations are built (once, at first use), not in a user's run.
    if (group.type == nullptr || *group.type != typeid(Sub))
      throw std::logic_error("parameter group '" + group.name + "' does not describe this field's type");
  }
  static ParamDecl make(std::string name, ParamKind kind, std::string unit, std::string doc) {
    ParamDecl d;
    d.name = std::move(name);
    d.kind = kind;
    d.unit = std::move(unit);
    d.doc = std::move(doc);
    return d;
  }
  ParamDecl& add(ParamDecl d) {
    if (g_.find(d.name) != nullptr) throw std::logic_error("parameter '" + d.name + "' declared twice in " + g_.name);
    g_.params.push_back(std::move(d));
    return g_.params.back();
  }

  ParamGroup g_;
};

}  // namespace ibvp::sim
