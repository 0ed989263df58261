#pragma once
// Limits on an input document, checked before a YAML parser builds anything: a hostile file
// (deep nesting, an alias bomb, a huge value, binary bytes, a directory or a device) is refused
// in milliseconds with a ConfigError naming the file, the line and the fix, instead of
// exhausting the stack, memory or time. The Python front end (bindings/python/ibvp/_yaml.py)
// checks the same limits with the same messages; tests/python/test_hostile_inputs.py compares
// the two.
#include <cstddef>
#include <string>

namespace ibvp::params {

// A scenario or topology file holds settings, not data: the largest shipped one is a few KiB.
constexpr size_t kMaxDocumentBytes = size_t{1} << 20;
// Mappings and lists inside each other; a scenario needs about five (topology.inline.links[0]).
constexpr int kMaxNesting = 64;
// Nodes of the document with every alias (*name) expanded: stops "billion laughs".
constexpr size_t kMaxNodes = 1000000;
// One scalar: names, paths and settings; longer text belongs in a file of its own.
constexpr size_t kMaxScalarBytes = 4096;

// Files are read by read_input_file (platform/params/input_file.h), then checked here.

// Refuses text over kMaxDocumentBytes, bytes that are not UTF-8 and characters outside YAML's
// printable set (YAML 1.2 Sec. 5.1: tab, line breaks, U+0020..U+007E, U+0085, U+00A0..U+D7FF,
// U+E000..U+FFFD, U+10000..U+10FFFF). The line is 1-based, counted in '\n'; the column counts
// characters (code points).
void check_text(const std::string& text, const std::string& source);

// Reads `text` as a stream of YAML events (no tree is built) and refuses nesting deeper than
// kMaxNesting, more than kMaxNodes nodes once aliases are expanded, and scalars over
// kMaxScalarBytes. A syntax error is left for the caller's parse to report.
void check_yaml_limits(const std::string& text, const std::string& source);

}  // namespace ibvp::params
