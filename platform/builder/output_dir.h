#pragma once
// A run owns its output directory: results of another run never sit beside its own, and
// ibvp never deletes files it did not write. A directory becomes a run's by a marker file
// at its top (kRunMarker; a sweep's directory carries kSweepMarker). Claiming a directory
// for a run accepts a new directory, an empty one, or one that carries either marker (an
// earlier ibvp run or sweep wrote it), whose whole contents are then removed; any other
// non-empty directory is refused, so `--out ~` or `--out /etc` deletes nothing. Front ends
// claim before they load the scenario, so even a refused run leaves no older summary.json.
#include <string>
#include <vector>

namespace ibvp {

inline constexpr const char* kRunMarker = ".ibvp-run";
inline constexpr const char* kSweepMarker = ".ibvp-sweep";

enum class OutputDirKind {
  run,    // cleared, then marked with kRunMarker
  sweep,  // a sweep's directory keeps its points (finished points are skipped on a rerun);
          // a run's directory taken for a sweep is cleared first
};

// Makes `dir` (created when missing) the output directory of one run or sweep, as above.
// Throws ConfigError (file = dir, key "--out") when it is not a directory, holds files
// without a marker, cannot be cleared, or holds one of `inputs` (the scenario file about to
// be read: rerunning out/x/scenario.yaml into out/x would delete it first).
void claim_output_dir(const std::string& dir, OutputDirKind kind, const std::vector<std::string>& inputs = {});

}  // namespace ibvp
