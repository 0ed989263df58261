#pragma once
// Files ibvp reads because a user named them (the scenario file, topology.file,
// trace.file, qos.options_file, a topology given to `ibvp topo`): each must be a regular
// file of bounded size. A device (/dev/zero), a FIFO or a directory is refused before a
// byte is read, so a wrong path ends in an error naming the key, never in a hang, an
// unbounded read or a silent "no content".
#include <cstdint>
#include <string>

namespace ibvp {

// The largest input file read. The largest real inputs are far below it (an
// ibnetdiscover dump of a 1,600-node fabric is about 2 MB, a trace of a million packets
// about 40 MB); anything above is a mistake, and reading it whole would cost that memory.
inline constexpr uint64_t kMaxInputFileBytes = uint64_t{256} << 20;  // 256 MiB

// Reads the regular file at `path` whole. `what` names it in messages ("trace file");
// `path_fix` is the fix for a path that leads nowhere (e.g. "give a path relative to the
// scenario file's directory (dir) or an absolute one"). Throws ConfigError (file = path, no
// key) when the file is missing or unreadable, not a regular file, larger than
// kMaxInputFileBytes, or empty (unless allow_empty). Callers with a document rethrow the
// problem and fix at the key that named the file.
std::string read_input_file(const std::string& path, const std::string& what, const std::string& path_fix,
                            bool allow_empty = false);

}  // namespace ibvp
