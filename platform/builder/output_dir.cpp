#include "platform/builder/output_dir.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "platform/params/config_error.h"

namespace ibvp {

namespace fs = std::filesystem;

namespace {

// A marker counts only as a regular file: a link named like one proves nothing.
bool has_marker(const fs::path& dir, const char* name) {
  std::error_code ec;
  return fs::symlink_status(dir / name, ec).type() == fs::file_type::regular;
}

}  // namespace

void claim_output_dir(const std::string& dir, OutputDirKind kind, const std::vector<std::string>& inputs) {
  const std::string key = "--out";
  auto fail = [&](const std::string& problem, const std::string& fix) -> void {
    throw ConfigError(dir, key, 0, problem, fix);
  };
  if (dir.empty()) fail("no output directory given", "give --out DIR");
  const fs::path d(dir);
  std::error_code ec;
  const fs::file_status st = fs::status(d, ec);  // a link to a directory is that directory
  if (st.type() == fs::file_type::not_found) {
    fs::create_directories(d, ec);
    if (ec) fail("cannot make the output directory: " + ec.message(), "give a directory you can write");
  } else if (st.type() != fs::file_type::directory) {
    fail("exists and is not a directory", "give a new directory, an empty one, or one an earlier ibvp run wrote");
  } else {
    std::vector<fs::path> entries;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
    if (ec) fail("cannot list the output directory: " + ec.message(), "give a directory you can read and write");
    const bool run_dir = has_marker(d, kRunMarker), sweep_dir = has_marker(d, kSweepMarker);
    if (!entries.empty() && !run_dir && !sweep_dir) {
      std::string some;
      for (size_t i = 0; i < entries.size() && i < 3; ++i) some += (i ? ", " : "") + entries[i].filename().string();
      if (entries.size() > 3) some += ", ... (" + std::to_string(entries.size()) + " entries)";
      fail("holds files no ibvp run wrote (" + some + "); a run clears its output directory first, and ibvp does "
           "not delete what it did not write",
           "give a new or empty directory, or one an earlier ibvp run wrote (it carries the marker " +
               std::string(kRunMarker) + ")");
    }
    const bool keep = kind == OutputDirKind::sweep && sweep_dir;
    const fs::path here = fs::weakly_canonical(d, ec);
    for (const std::string& input : inputs) {
      const fs::path in = fs::weakly_canonical(input, ec);
      const auto [end_here, end_in] = std::mismatch(here.begin(), here.end(), in.begin(), in.end());
      if (!keep && !ec && end_here == here.end() && end_in != in.end())
        fail(input + " is inside the output directory, which the run clears before reading it",
             "copy it out of " + dir + ", or give another output directory");
    }
    if (!keep)
      for (const fs::path& e : entries) {
        fs::remove_all(e, ec);  // a symbolic link is removed, never followed
        if (ec) fail("cannot remove " + e.string() + " left by an earlier run: " + ec.message(),
                     "remove it yourself, or give another directory");
      }
  }
  const fs::path marker = d / (kind == OutputDirKind::run ? kRunMarker : kSweepMarker);
  if (has_marker(d, kind == OutputDirKind::run ? kRunMarker : kSweepMarker)) return;
  std::ofstream f(marker);
  f << "This directory holds the results of one ibvp " << (kind == OutputDirKind::run ? "run" : "sweep")
    << ". The next ibvp " << (kind == OutputDirKind::run ? "run" : "run or sweep")
    << " into it may delete everything here.\n";
  if (!f) fail("cannot write the marker " + marker.string(), "give a directory you can write");
}

}  // namespace ibvp
