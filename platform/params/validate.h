#pragma once
// YAML documents checked against parameter declarations (models/sim/params.h): every key
// must be declared, every value must have the declared kind and range, and each accepted
// value is written into the config struct through the declaration's binding. Any problem
// is a ConfigError naming the file (or "--set" for a command-line override), the key path,
// the line and the fix. The JSON Schema and the Markdown reference come from the same
// declarations.
#include <string>
#include <utility>
#include <vector>
#include <yaml-cpp/yaml.h>

#include "models/sim/params.h"
#include "platform/params/config_error.h"

namespace ibvp::params {

// A key path: mapping keys and list indices, written "flows[2].ipd".
struct PathStep {
  std::string key;  // empty for a list index
  long index = -1;  // >= 0: a list item
};
using Path = std::vector<PathStep>;

std::string path_text(const Path& path);
Path child(Path path, const std::string& key);
Path item(Path path, size_t index);
// Parses "flows[2].ipd" (relative paths from ParamError too); false if malformed.
bool parse_path(const std::string& text, Path& out);
// `base` followed by the relative path `rel` ("" adds nothing).
Path join(const Path& base, const std::string& rel);

// One YAML document and where its parts came from.
class Document {
 public:
  // Parses YAML text whose top level must be a mapping. Syntax errors, an empty input and
  // several documents in one input are ConfigErrors naming `source` and the line.
  static Document parse(const std::string& text, const std::string& source);

  const YAML::Node& root() const { return root_; }
  const std::string& source() const { return source_; }

  // Applies one command-line override "key.path=value": the value is read as a YAML scalar
  // or flow node ("40ns", "[0, 1]", "{vl: 0, weight: 1}") and replaces what the document has
  // at that path (missing mappings on the way are created; list items must exist). Errors
  // found later at or below that path are reported against "--set", not the file.
  void apply_override(const std::string& assignment);

  // The node at `path`; false if the document has none there.
  bool find(const Path& path, YAML::Node& out) const;
  // Throws ConfigError for `path`: "--set" when an override supplied it, otherwise the file
  // with the line of the key (or of its nearest ancestor that the document has).
  [[noreturn]] void fail(const Path& path, const std::string& problem, const std::string& fix) const;
  int line_of(const Path& path) const;  // 1-based, 0 when unknown
  // Whether an override supplied the value at `path`.
  bool overridden(const Path& path) const;
  // Rethrows an error another loader raised about part of this document (e.g. an inline
  // topology), naming "--set" when an override supplied that part.
  [[noreturn]] void rethrow(const ConfigError& e) const;

 private:
  Document(YAML::Node root, std::string source) : root_(std::move(root)), source_(std::move(source)) {}
  YAML::Node root_;
  std::string source_;
  std::vector<Path> overridden_;  // paths that --set replaced
};

// Validates the mapping at `path` against `group` and writes its values into `cfg` (a
// struct of the group's type). Keys the document leaves out keep cfg's value, then the
// group's completion fills dependent defaults and checks combinations.
void apply(const sim::ParamGroup& group, const Document& doc, const Path& path, void* cfg);

template <class Cfg>
void apply(const sim::ParamGroup& group, const Document& doc, const Path& path, Cfg& cfg) {
  if (group.type == nullptr || *group.type != typeid(Cfg))
    throw std::logic_error("parameter group '" + group.name + "' applied to a different struct");
  apply(group, doc, path, static_cast<void*>(&cfg));
}

// JSON Schema (draft 2020-12) of documents that `root` accepts: types, ranges, enums,
// descriptions (doc, unit, default) and no undeclared keys.
std::string json_schema(const sim::ParamGroup& root, const std::string& title);
// Markdown reference: one table per mapping, with type, unit, default, allowed values,
// description and the group's cross-field rules.
std::string markdown_reference(const sim::ParamGroup& root, const std::string& title, const std::string& intro);

}  // namespace ibvp::params
