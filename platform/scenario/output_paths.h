#pragma once
// Where a run may write: every file a scenario names for output (outputs.timeline,
// outputs.pcaps[i].file) lands inside the run's output directory, and the scenario's name,
// which the front ends turn into a directory (out/<name>, out/<name>-sweep), is one path
// component. The syntactic checks run when a scenario is loaded (so `validate` refuses too);
// the file-system check runs before the fabric is elaborated, so a bad path is found before
// the simulation, not after it.
#include <string>
#include <vector>

#include "platform/scenario/scenario.h"

namespace ibvp {

// The longest name accepted as one path component, in bytes. File systems allow 255
// (NAME_MAX); the front ends add suffixes to a scenario's name ("-sweep", a temporary
// directory's "ibvp-" and random tail), which must still fit.
inline constexpr size_t kMaxNameBytes = 200;

// "" when `name` can be used as a single file or directory name; else the problem: empty,
// "." or "..", a '/' or '\' (a path, not a name), a NUL byte, or longer than kMaxNameBytes.
std::string name_problem(const std::string& name);

// "" when the relative path `rel` stays inside the directory it is relative to; else the
// problem: absolute, or a component that is empty, ".", "..", holds '\' or NUL, or is too long.
std::string output_path_problem(const std::string& rel);

// A file a scenario writes into its output directory, with the key that named it.
struct OutputFile {
  std::string key;   // "outputs.timeline", "outputs.pcaps[2].file"
  std::string path;  // relative to the output directory
};
std::vector<OutputFile> scenario_output_files(const Scenario& s);

// Before a run into `out_dir`: every output file's way from out_dir passes only real
// directories (no symbolic link, which could lead anywhere, and no file where a directory
// goes) and ends at nothing or a regular file (not a directory, FIFO or device, nor a link).
// Then makes the directories the files go in. Throws ConfigError naming the scenario file,
// the key and the fix.
void prepare_output_files(const Scenario& s, const std::string& out_dir);

}  // namespace ibvp
