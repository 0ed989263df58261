#include "platform/params/input_text.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <sstream>
#include <vector>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "platform/params/config_error.h"

namespace ibvp::params {

namespace {

const std::string kSizeFix =
    "keep the file to settings: large tables go in files of their own (trace.file, an ibnetdiscover dump)";

std::string hex_byte(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", b);
  return buf;
}

std::string code_point(uint32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", cp);
  return buf;
}

// YAML 1.2 Sec. 5.1 c-printable (the set PyYAML's reader accepts, too).
bool printable(uint32_t c) {
  return c == 0x09 || c == 0x0A || c == 0x0D || (c >= 0x20 && c <= 0x7E) || c == 0x85 || (c >= 0xA0 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

// Length of the well-formed UTF-8 sequence at text[i] (Unicode Sec. 3.9, Table 3-7), 0 if
// it is not one; `cp` gets its code point.
size_t utf8_sequence(const std::string& text, size_t i, uint32_t& cp) {
  auto byte = [&](size_t k) -> unsigned { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0x100u; };
  const unsigned b0 = byte(i);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  size_t n;
  unsigned lo = 0x80, hi = 0xBF;  // the second byte's range
  if (b0 >= 0xC2 && b0 <= 0xDF) n = 2;
  else if (b0 == 0xE0) n = 3, lo = 0xA0;
  else if (b0 >= 0xE1 && b0 <= 0xEC) n = 3;
  else if (b0 == 0xED) n = 3, hi = 0x9F;
  else if (b0 >= 0xEE && b0 <= 0xEF) n = 3;
  else if (b0 == 0xF0) n = 4, lo = 0x90;
  else if (b0 >= 0xF1 && b0 <= 0xF3) n = 4;
  else if (b0 == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  cp = b0 & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
  for (size_t k = 1; k < n; ++k) {
    const unsigned b = byte(i + k);
    if (b < (k == 1 ? lo : 0x80u) || b > (k == 1 ? hi : 0xBFu)) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  return n;
}

int line_of(const YAML::Mark& m) { return m.line >= 0 ? m.line + 1 : 0; }

// Counts nodes as the parser reports them; an alias adds the node count of its anchor.
class LimitChecker : public YAML::EventHandler {
 public:
  explicit LimitChecker(const std::string& source) : source_(source) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    if (value.size() > kMaxScalarBytes)
      throw ConfigError(source_, "", line_of(mark),
                        "a value of " + std::to_string(value.size()) + " bytes, more than the limit of " +
                            std::to_string(kMaxScalarBytes),
                        "shorten it; long data belongs in a file of its own (trace.file, topology.file)");
    leaf(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    for (const Open& o : open_)
      if (o.anchor == anchor)
        throw ConfigError(source_, "", line_of(mark), "an alias inside the value of its own anchor",
                          "point the alias at another anchor or write the value out");
    const auto it = size_.find(anchor);
    add(mark, it == size_.end() ? 1 : it->second);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    size_t nodes_before;
    YAML::anchor_t anchor;
  };

  void add(const YAML::Mark& mark, size_t n) {
    nodes_ += n;
    if (nodes_ > kMaxNodes)
      throw ConfigError(source_, "", line_of(mark),
                        "aliases expand the document to more than " + std::to_string(kMaxNodes) + " values",
                        "write the values out instead of repeating large anchors (&name, *name)");
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    add(mark, 1);
    if (anchor != YAML::NullAnchor) size_[anchor] = 1;
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (open_.size() >= static_cast<size_t>(kMaxNesting))
      throw ConfigError(source_, "", line_of(mark),
                        "mappings and lists nested more than " + std::to_string(kMaxNesting) + " deep",
                        "flatten the document: a scenario needs about five levels");
    open_.push_back({nodes_, anchor});
    add(mark, 1);
  }
  void close() {
    const Open o = open_.back();
    open_.pop_back();
    if (o.anchor != YAML::NullAnchor) size_[o.anchor] = nodes_ - o.nodes_before;
  }

  const std::string& source_;
  std::vector<Open> open_;
  std::map<YAML::anchor_t, size_t> size_;
  size_t nodes_ = 0;
};

}  // namespace

void check_text(const std::string& text, const std::string& source) {
  if (text.size() > kMaxDocumentBytes)
    throw ConfigError(source, "", 0,
                      "the document is " + std::to_string(text.size()) + " bytes, more than the limit of " +
                          std::to_string(kMaxDocumentBytes),
                      kSizeFix);
  int line = 1;
  size_t column = 1;
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    const size_t n = utf8_sequence(text, i, cp);
    if (n == 0)
      throw ConfigError(source, "", line,
                        "invalid UTF-8 byte " + hex_byte(static_cast<unsigned char>(text[i])) + " at column " +
                            std::to_string(column),
                        "save the file as UTF-8 text");
    if (!printable(cp))
      throw ConfigError(source, "", line, "character " + code_point(cp) + " at column " + std::to_string(column) +
                                              " is not allowed in YAML",
                        "remove it: YAML text holds tabs, line breaks and printable characters");
    i += n;
    if (cp == '\n') ++line, column = 1;
    else ++column;
  }
}

void check_yaml_limits(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  LimitChecker checker(source);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(checker)) {
    }
  } catch (const YAML::Exception&) {
    // A syntax error: the caller's parse reports it, with its own wording.
  }
}

}  // namespace ibvp::params
