#include "platform/params/validate.h"

#include "platform/params/input_text.h"

#include <cctype>
#include <cstdio>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace ibvp::params {

using sim::ParamDecl;
using sim::ParamGroup;
using sim::ParamKind;

// ---------------------------------------------------------------------------------------
// Key paths

std::string path_text(const Path& path) {
  std::string s;
  for (const PathStep& step : path) {
    if (step.index >= 0) s += "[" + std::to_string(step.index) + "]";
    else s += (s.empty() ? "" : ".") + step.key;
  }
  return s;
}

Path child(Path path, const std::string& key) {
  path.push_back({key, -1});
  return path;
}

Path item(Path path, size_t index) {
  path.push_back({"", static_cast<long>(index)});
  return path;
}

bool parse_path(const std::string& text, Path& out) {
  out.clear();
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '[') {
      const size_t close = text.find(']', i);
      const std::string digits = close == std::string::npos ? "" : text.substr(i + 1, close - i - 1);
      if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
        return false;
      out.push_back({"", std::stol(digits)});
      i = close + 1;
      if (i < text.size() && text[i] != '.' && text[i] != '[') return false;
      continue;
    }
    if (text[i] == '.') {
      if (out.empty() || i + 1 >= text.size()) return false;
      ++i;
    }
    size_t j = i;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
    if (j == i) return false;
    out.push_back({text.substr(i, j - i), -1});
    i = j;
  }
  return !out.empty();
}

Path join(const Path& base, const std::string& rel) {
  Path tail;
  if (rel.empty() || !parse_path(rel, tail)) return base;
  Path p = base;
  p.insert(p.end(), tail.begin(), tail.end());
  return p;
}

namespace {

bool is_prefix(const Path& prefix, const Path& path) {
  if (prefix.size() > path.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (prefix[i].key != path[i].key || prefix[i].index != path[i].index) return false;
  return true;
}

int line_of_node(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return m.line >= 0 ? m.line + 1 : 0;
}

// The value and key of `key` in a mapping (the first, if the document repeats it).
bool find_key(const YAML::Node& map, const std::string& key, YAML::Node& value, int& line) {
  if (!map.IsMap()) return false;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) {
      value.reset(it->second);
      line = line_of_node(it->first);
      return true;
    }
  }
  return false;
}

std::string describe(const YAML::Node& n) {
  if (n.IsMap()) return "a mapping";
  if (n.IsSequence()) return "a list";
  if (n.IsNull()) return "nothing";
  return "\"" + sim::excerpt(n.Scalar()) + "\"";
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  const size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Documents

Document Document::parse(const std::string& text, const std::string& source) {
  // Hostile text (binary, deep nesting, alias bombs) is refused before yaml-cpp builds a tree.
  check_text(text, source);
  check_yaml_limits(text, source);
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(source, "", e.mark.line >= 0 ? e.mark.line + 1 : 0, "YAML syntax error: " + e.msg,
                      "correct the YAML at this line (indentation, brackets, quotes)");
  }
  if (docs.empty() || docs[0].IsNull())
    throw ConfigError(source, "", 0, "the document is empty", "write a mapping of keys, e.g. name: my-run");
  if (docs.size() > 1)
    throw ConfigError(source, "", line_of_node(docs[1]), "the input holds " + std::to_string(docs.size()) +
                      " YAML documents (separated by ---)", "keep one document per scenario file");
  if (!docs[0].IsMap())
    throw ConfigError(source, "", line_of_node(docs[0]), "expected a mapping of keys at the top, got " + describe(docs[0]),
                      "write key: value lines, e.g. name: my-run");
  return Document(docs[0], source);
}

bool Document::find(const Path& path, YAML::Node& out) const {
  YAML::Node n = root_;
  for (const PathStep& step : path) {
    YAML::Node next;
    if (step.index >= 0) {
      if (!n.IsSequence() || static_cast<size_t>(step.index) >= n.size()) return false;
      next.reset(n[static_cast<size_t>(step.index)]);
    } else {
      int line = 0;
      if (!find_key(n, step.key, next, line)) return false;
    }
    n.reset(next);
  }
  out.reset(n);
  return true;
}

int Document::line_of(const Path& path) const {
  YAML::Node n = root_;
  int line = 0;
  for (const PathStep& step : path) {
    YAML::Node next;
    if (step.index >= 0) {
      if (!n.IsSequence() || static_cast<size_t>(step.index) >= n.size()) break;
      next.reset(n[static_cast<size_t>(step.index)]);
      line = line_of_node(next);
    } else {
      int key_line = 0;
      if (!find_key(n, step.key, next, key_line)) break;
      line = key_line;
    }
    n.reset(next);
  }
  return line;
}

bool Document::overridden(const Path& path) const {
  for (const Path& o : overridden_)
    if (is_prefix(o, path)) return true;
  return false;
}

void Document::fail(const Path& path, const std::string& problem, const std::string& fix) const {
  if (overridden(path)) throw ConfigError("--set", path_text(path), 0, problem, fix);
  throw ConfigError(source_, path_text(path), line_of(path), problem, fix);
}

void Document::rethrow(const ConfigError& e) const {
  Path path;
  if (e.file() == source_ && parse_path(e.key(), path) && overridden(path))
    throw ConfigError("--set", e.key(), 0, e.problem(), e.fix());
  throw e;
}

void Document::apply_override(const std::string& assignment) {
  const size_t eq = assignment.find('=');
  const std::string key = trim(assignment.substr(0, eq));
  if (eq == std::string::npos || key.empty())
    throw ConfigError("--set", assignment, 0, "expected KEY=VALUE", "write e.g. --set switch.pipeline_delay=40ns");
  Path path;
  if (!parse_path(key, path) || path[0].index >= 0)
    throw ConfigError("--set", key, 0, "malformed key path",
                      "join keys with dots and give list items in brackets, e.g. flows[2].ipd");
  const std::string text = assignment.substr(eq + 1);
  YAML::Node value;
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError("--set", key, 0, "value \"" + sim::excerpt(text) + "\" is not valid YAML: " + e.msg,
                      "quote the value or write a flow list/mapping such as [0, 1] or {vl: 0, weight: 1}");
  }

  // Walk to the parent of the last step. Node::reset rebinds a handle; assignment would
  // overwrite the node it refers to (yaml-cpp's reference semantics).
  YAML::Node cur = root_;
  for (size_t i = 0; i < path.size(); ++i) {
    const PathStep& step = path[i];
    const bool last = i + 1 == path.size();
    const Path here(path.begin(), path.begin() + static_cast<long>(i) + 1);
    const bool next_is_index = !last && path[i + 1].index >= 0;
    if (step.index >= 0) {
      const size_t idx = static_cast<size_t>(step.index);
      if (idx >= cur.size())
        throw ConfigError("--set", path_text(here), 0,
                          "no item " + std::to_string(idx) + ": the list has " + std::to_string(cur.size()) + " items",
                          cur.size() ? "use an index in 0.." + std::to_string(cur.size() - 1) + ", or set the whole list"
                                     : "set the whole list, e.g. " + path_text(Path(path.begin(), path.begin() + static_cast<long>(i))) + "=[...]");
      if (last) {
        cur[idx] = value;
      } else {
        YAML::Node next = cur[idx];
        cur.reset(next);
      }
    } else {
      YAML::Node next;
      int line = 0;
      const bool exists = find_key(cur, step.key, next, line);
      if (last) {
        cur[step.key] = value;
        break;
      }
      if (next_is_index) {
        if (!exists || !next.IsSequence())
          throw ConfigError("--set", path_text(here), 0, "the document has no list here to index",
                            "set the whole list, e.g. --set " + path_text(here) + "=[...]");
      } else if (!exists || next.IsNull()) {
        cur[step.key] = YAML::Node(YAML::NodeType::Map);
        find_key(cur, step.key, next, line);
      } else if (!next.IsMap()) {
        throw ConfigError("--set", path_text(here), 0, "the document has " + describe(next) + " here, not a mapping",
                          "set the whole value, e.g. --set " + path_text(here) + "={...}");
      }
      cur.reset(next);
    }
  }
  overridden_.push_back(path);
}

// ---------------------------------------------------------------------------------------
// Validation

namespace {

sim::ParamValue accept_scalar(const ParamDecl& d, const Document& doc, const Path& path, const YAML::Node& n) {
  if (n.IsNull())
    doc.fail(path, "no value given", "write " + d.expected());
  if (!n.IsScalar())
    doc.fail(path, "expected " + d.expected() + ", got " + describe(n), "write a single value");
  // yaml-cpp tags quoted scalars "!" and plain ones "?": "40" in quotes is text, not a number.
  const bool quoted = n.Tag() == "!";
  try {
    return d.accept(n.Scalar(), quoted);
  } catch (const sim::ParamError& e) {
    doc.fail(path, e.problem(), e.fix());
  }
}

std::string count_text(size_t lo, size_t hi) {
  if (lo == hi) return "exactly " + std::to_string(lo);
  if (hi == std::numeric_limits<size_t>::max()) return "at least " + std::to_string(lo);
  if (lo == 0) return "at most " + std::to_string(hi);
  return std::to_string(lo) + " to " + std::to_string(hi);
}

void apply_value(const ParamDecl& d, const Document& doc, const Path& path, const YAML::Node& n, void* cfg) {
  if (n.IsNull()) {
    std::string fix = "write " + std::string(d.kind == ParamKind::list ? "a list" : d.expected());
    if (!d.required && !d.default_text.empty()) fix += ", or remove the key to use the default (" + d.default_text + ")";
    doc.fail(path, "no value given", fix);
  }
  if (d.kind == ParamKind::object) {
    if (!d.raw) apply(*d.group, doc, path, d.member(cfg));
    else if (!n.IsMap()) doc.fail(path, "expected a mapping, got " + describe(n), "write key: value pairs");
    return;
  }
  if (d.kind != ParamKind::list) {
    d.set(cfg, accept_scalar(d, doc, path, n));
    return;
  }
  if (!d.presets.empty() && n.IsScalar()) {
    for (const std::string& w : d.presets)
      if (n.Scalar() == w) {
        d.preset(cfg, w);
        return;
      }
    std::string words;
    for (const std::string& w : d.presets) words += (words.empty() ? "" : ", ") + w;
    doc.fail(path, "\"" + sim::excerpt(n.Scalar()) + "\" is not a preset of " + d.name,
             "write a list (" + d.doc + ") or one of: " + words);
  }
  if (!n.IsSequence())
    doc.fail(path, "expected a list, got " + describe(n), "write a list, e.g. [a, b] or one '- item' per line");
  if (d.raw) return;
  const size_t count = n.size();
  if (count < d.min_items || count > d.max_items)
    doc.fail(path, "has " + std::to_string(count) + " items; it needs " + count_text(d.min_items, d.max_items),
             "give " + count_text(d.min_items, d.max_items) + " items (" + d.doc + ")");
  if (d.element == ParamKind::object) {
    d.resize(cfg, count);
    for (size_t i = 0; i < count; ++i) apply(*d.group, doc, item(path, i), d.item(cfg, i));
    return;
  }
  sim::ParamValue list;
  list.kind = ParamKind::list;
  for (size_t i = 0; i < count; ++i) list.items.push_back(accept_scalar(d, doc, item(path, i), n[i]));
  d.set(cfg, list);
}

}  // namespace

void apply(const ParamGroup& group, const Document& doc, const Path& path, void* cfg) {
  YAML::Node node;
  const bool present = doc.find(path, node);
  std::set<std::string> given;
  if (present) {
    const std::string keys = "allowed keys are " + group.key_list();
    if (node.IsNull()) doc.fail(path, "no value given", "write a mapping (" + keys + "), or remove the key for the defaults");
    if (!node.IsMap()) doc.fail(path, "expected a mapping, got " + describe(node), "write key: value pairs; " + keys);
    if (group.begin) group.begin(cfg);
    std::map<std::string, int> first_line;
    std::vector<std::string> names;
    for (const ParamDecl& d : group.params) names.push_back(d.name);
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar())
        throw ConfigError(doc.source(), path_text(path), line_of_node(it->first), "a key must be a plain name",
                          keys);
      const std::string key = it->first.Scalar();
      const Path kp = child(path, key);
      if (!first_line.emplace(key, line_of_node(it->first)).second)
        doc.fail(kp, "key given twice (lines " + std::to_string(first_line[key]) + " and " +
                         std::to_string(line_of_node(it->first)) + ")",
                 "keep one of them");
      const ParamDecl* d = group.find(key);
      if (d == nullptr) {
        const std::string near = sim::closest_match(key, names);
        doc.fail(kp, "unknown key", (near.empty() ? "" : "did you mean " + near + "? ") + keys);
      }
      given.insert(key);
      apply_value(*d, doc, kp, it->second, cfg);
    }
  }
  for (const ParamDecl& d : group.params) {
    if (given.count(d.name)) continue;
    // A section that is absent as a whole has no required keys of its own.
    if (d.required && present)
      doc.fail(child(path, d.name), "required key is missing", "add " + d.name + ": " + d.expected() + " (" + d.doc + ")");
    // Absent sub-sections still complete: their dependent defaults follow values set here.
    if (d.kind == ParamKind::object && !d.raw) apply(*d.group, doc, child(path, d.name), d.member(cfg));
  }
  if (group.complete) {
    try {
      group.complete(cfg, given);
    } catch (const sim::ParamError& e) {
      doc.fail(join(path, e.key()), e.problem(), e.fix());
    }
  }
}

// ---------------------------------------------------------------------------------------
// JSON Schema

namespace {

// Members keep their insertion order: the schema reads like the docs.
using Json = nlohmann::ordered_json;

std::string description(const ParamDecl& d) {
  std::string s = d.doc;
  if (!d.unit.empty()) s += " Unit: " + d.unit + ".";
  if (d.required) s += " Required.";
  else if (!d.default_text.empty()) s += " Default: " + d.default_text + ".";
  return s;
}

// Matches exactly what sim::parse_time accepts.
const char* const kTimePattern = "^\\s*([0-9]+(\\.[0-9]+)?\\s*(ps|ns|us|ms|s)|0+(\\.0+)?)\\s*$";

Json group_schema(const ParamGroup& g, const std::string& description);

// The schema of one value of kind `kind` as `d` constrains it (no description).
Json scalar_schema(const ParamDecl& d, ParamKind kind) {
  Json j = Json::object();
  switch (kind) {
    case ParamKind::integer:
      j["type"] = Json("integer");
      if (d.int_min != std::numeric_limits<int64_t>::min()) j["minimum"] = Json(d.int_min);
      if (d.int_max != std::numeric_limits<int64_t>::max()) j["maximum"] = Json(d.int_max);
      if (d.multiple > 1) j["multipleOf"] = Json(d.multiple);
      break;
    case ParamKind::real:
      j["type"] = Json("number");
      if (std::isfinite(d.min)) j[d.min_open ? "exclusiveMinimum" : "minimum"] = Json(d.min);
      if (std::isfinite(d.max)) j["maximum"] = Json(d.max);
      break;
    case ParamKind::boolean: j["type"] = Json("boolean"); break;
    case ParamKind::time: {
      // YAML reads a bare 0 as an integer; every other time is a string with a unit.
      Json any = Json::array();
      Json s = Json::object();
      s["type"] = Json("string");
      s["pattern"] = Json(kTimePattern);
      any.push_back(s);
      Json zero = Json::object();
      zero["const"] = Json(0);
      any.push_back(zero);
      j["anyOf"] = any;
      break;
    }
    case ParamKind::choice: {
      // A choice written as a plain YAML scalar that looks like a number (an MTU of 2048)
      // is an integer to a YAML reader, and the loader takes it as the choice's text: the
      // schema allows both forms.
      bool numeric = false;
      Json e = Json::array();
      for (const std::string& c : d.choices) {
        e.push_back(Json(c));
        int64_t v;
        if (sim::parse_integer(c, v)) {
          e.push_back(Json(v));
          numeric = true;
        }
      }
      if (!numeric) j["type"] = Json("string");
      j["enum"] = e;
      break;
    }
    case ParamKind::string: j["type"] = Json("string"); break;
    case ParamKind::object:
      if (d.raw) {
        j["type"] = Json("object");
        break;
      }
      // List items (the only way here): the group's own description says what an item is.
      return group_schema(*d.group, d.group->doc);
    case ParamKind::list: break;
  }
  return j;
}

// The default as a JSON literal, when the declared default is a plain value of the kind.
bool json_default(const ParamDecl& d, Json& out) {
  if (d.required || d.default_text.empty() || d.default_is_prose) return false;
  switch (d.kind) {
    case ParamKind::integer: {
      int64_t v;
      if (!sim::parse_integer(d.default_text, v)) return false;
      out = Json(v);
      return true;
    }
    case ParamKind::real: {
      double v;
      if (!sim::parse_real(d.default_text, v)) return false;
      out = Json(v);
      return true;
    }
    case ParamKind::boolean: out = Json(d.default_text == "true"); return true;
    case ParamKind::time: {
      sc_core::sc_time t;
      std::string problem;
      if (!sim::parse_time(d.default_text, t, problem)) return false;
      out = Json(d.default_text);
      return true;
    }
    case ParamKind::choice:
    case ParamKind::string: out = Json(d.default_text); return true;
    default: return false;
  }
}

Json decl_schema(const ParamDecl& d) {
  // A mapping: the key's description, then what the group is.
  if (d.kind == ParamKind::object && !d.raw) return group_schema(*d.group, description(d) + " " + d.group->doc);
  Json j;
  if (d.kind == ParamKind::list) {
    j = Json::object();
    j["type"] = Json("array");
    // A raw list's items are whatever its own loader reads (perftest sizes are integers,
    // mix phases pairs): the schema leaves them open.
    if (!d.raw) j["items"] = scalar_schema(d, d.element);
    if (d.min_items > 0) j["minItems"] = Json(d.min_items);
    if (d.max_items != std::numeric_limits<size_t>::max()) j["maxItems"] = Json(d.max_items);
  } else {
    j = scalar_schema(d, d.kind);
  }
  if (!d.presets.empty()) {
    Json words = Json::array();
    for (const std::string& w : d.presets) words.push_back(Json(w));
    Json preset = Json::object();
    preset["enum"] = words;
    j = Json{{"anyOf", Json::array({j, preset})}};
  }
  // Description first: editors show it above the constraints.
  Json described{{"description", description(d)}};
  described.update(j);
  j = std::move(described);
  Json def;
  if (json_default(d, def)) j["default"] = def;
  return j;
}

Json group_schema(const ParamGroup& g, const std::string& description) {
  Json j = Json::object();
  j["type"] = Json("object");
  j["description"] = Json(description);
  Json props = Json::object();
  Json required = Json::array();
  for (const ParamDecl& d : g.params) {
    props[d.name] = decl_schema(d);
    if (d.required) required.push_back(Json(d.name));
  }
  j["properties"] = props;
  if (!required.empty()) j["required"] = required;
  j["additionalProperties"] = Json(false);
  return j;
}

}  // namespace

std::string json_schema(const ParamGroup& root, const std::string& title) {
  Json j = Json::object();
  j["$schema"] = Json("https://json-schema.org/draft/2020-12/schema");
  j["title"] = Json(title);
  j.update(group_schema(root, root.doc));
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

// ---------------------------------------------------------------------------------------
// Markdown reference

namespace {

std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out;
}

std::string heading_path(const std::string& path) { return path.empty() ? "Top level" : "`" + path + "`"; }

// GitHub's anchor for a heading: lower case, punctuation dropped, blanks to hyphens.
std::string anchor(const std::string& heading) {
  std::string a;
  for (char c : heading) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '_' || c == '-') a += static_cast<char>(std::tolower(u));
    else if (c == ' ') a += '-';
  }
  return a;
}

std::string type_text(const ParamDecl& d) {
  if (d.kind == ParamKind::list) {
    if (d.raw) return "list";
    if (d.element == ParamKind::object) return "list of objects";
    return std::string("list of ") + sim::param_kind_name(d.element);
  }
  return sim::param_kind_name(d.kind);
}

std::string allowed_text(const ParamDecl& d) {
  std::vector<std::string> parts;
  if (d.scalar_kind() == ParamKind::choice) {
    std::string c;
    for (const std::string& v : d.choices) c += (c.empty() ? "" : ", ") + ("`" + v + "`");
    parts.push_back(c);
  }
  const std::string r = d.range_text();
  if (!r.empty()) parts.push_back(r);
  if (!d.presets.empty()) {
    std::string w;
    for (const std::string& p : d.presets) w += (w.empty() ? "" : ", ") + ("`" + p + "`");
    parts.push_back("or the preset " + w);
  }
  if (d.kind == ParamKind::list && (d.min_items > 0 || d.max_items != std::numeric_limits<size_t>::max()))
    parts.push_back(count_text(d.min_items, d.max_items) + " items");
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

// Every path at which each group appears, groups in the order they are first met.
void collect(const ParamGroup& g, const std::string& path, std::vector<const ParamGroup*>& order,
             std::map<const ParamGroup*, std::vector<std::string>>& paths) {
  if (paths[&g].empty()) order.push_back(&g);
  paths[&g].push_back(path);
  for (const ParamDecl& d : g.params) {
    if (d.group == nullptr) continue;
    collect(*d.group, (path.empty() ? "" : path + ".") + d.name + (d.kind == ParamKind::list ? "[]" : ""), order,
            paths);
  }
}

std::string default_cell(const ParamDecl& d) {
  if (d.required) return "required";
  if (d.default_text.empty()) return "";
  return d.default_is_prose ? d.default_text : "`" + d.default_text + "`";
}

}  // namespace

std::string markdown_reference(const ParamGroup& root, const std::string& title, const std::string& intro) {
  std::vector<const ParamGroup*> order;
  std::map<const ParamGroup*, std::vector<std::string>> paths;
  collect(root, "", order, paths);

  // A group shared by several keys (VL arbitration of switches and endpoints) has one
  // section, under the first path that uses it; the others are listed and link to it.
  std::ostringstream os;
  os << "# " << title << "\n\n" << intro << "\n";
  for (const ParamGroup* g : order) {
    const std::vector<std::string>& at = paths.at(g);
    os << "\n## " << heading_path(at[0]) << "\n\n" << g->doc << "\n";
    if (at.size() > 1) {
      os << "\nAlso at:";
      for (size_t i = 1; i < at.size(); ++i) os << (i > 1 ? "," : "") << " `" << at[i] << "`";
      os << ".\n";
    }
    os << "\n| Key | Type | Unit | Default | Allowed | Description |\n";
    os << "|---|---|---|---|---|---|\n";
    for (const ParamDecl& d : g->params) {
      std::string type = type_text(d);
      if (d.group != nullptr) {
        const std::string target = heading_path(paths.at(d.group)[0]);
        type += " ([" + target + "](#" + anchor(target) + "))";
      }
      os << "| `" << d.name << "` | " << cell(type) << " | " << cell(d.unit) << " | " << cell(default_cell(d)) << " | "
         << cell(allowed_text(d)) << " | " << cell(d.doc) << " |\n";
    }
    if (!g->rules.empty()) {
      os << "\n";
      for (const std::string& r : g->rules) os << "- " << r << "\n";
    }
  }
  return os.str();
}

}  // namespace ibvp::params
