#include "platform/scenario/output_paths.h"

#include <filesystem>
#include <system_error>

#include "platform/params/config_error.h"

namespace ibvp {

namespace fs = std::filesystem;

std::string name_problem(const std::string& name) {
  if (name.empty()) return "the name is empty";
  if (name == "." || name == "..") return "\"" + name + "\" names a directory, not a file of its own";
  if (name.find('\0') != std::string::npos) return "the name holds a NUL byte";
  if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos)
    return "\"" + name + "\" holds a path separator ('/' or '\\'), so it would lead into another directory";
  if (name.size() > kMaxNameBytes)
    return "the name is " + std::to_string(name.size()) + " bytes long, more than the " +
           std::to_string(kMaxNameBytes) + " a file name may have here";
  return "";
}

std::string output_path_problem(const std::string& rel) {
  if (rel.empty()) return "the path is empty";
  if (rel.find('\0') != std::string::npos) return "the path holds a NUL byte";
  if (rel[0] == '/')
    return "\"" + rel + "\" is an absolute path; output files are written inside the output directory only";
  size_t from = 0;
  for (;;) {
    const size_t slash = rel.find('/', from);
    const std::string part = rel.substr(from, slash == std::string::npos ? std::string::npos : slash - from);
    if (part == "..") return "\"" + rel + "\" climbs out of the output directory with \"..\"";
    if (part.empty() || part == ".")
      return "\"" + rel + "\" has an empty or \".\" component" + (slash == std::string::npos ? " at its end" : "");
    if (part.find('\\') != std::string::npos) return "\"" + rel + "\" holds a '\\'";
    if (part.size() > kMaxNameBytes)
      return "\"" + rel + "\" has a component longer than " + std::to_string(kMaxNameBytes) + " bytes";
    if (slash == std::string::npos) return "";
    from = slash + 1;
  }
}

std::vector<OutputFile> scenario_output_files(const Scenario& s) {
  std::vector<OutputFile> files;
  if (!s.outputs.timeline.empty()) files.push_back({"outputs.timeline", s.outputs.timeline});
  for (size_t j = 0; j < s.outputs.pcaps.size(); ++j)
    files.push_back({"outputs.pcaps[" + std::to_string(j) + "].file", s.outputs.pcaps[j].file});
  return files;
}

void prepare_output_files(const Scenario& s, const std::string& out_dir) {
  const std::string fix = "give a relative path inside the output directory, or remove what is there";
  for (const OutputFile& f : scenario_output_files(s)) {
    auto fail = [&](const std::string& problem, const std::string& how) -> void {
      throw ConfigError(s.source, f.key, 0, problem, how);
    };
    if (const std::string p = output_path_problem(f.path); !p.empty())
      fail(p, "give a relative path without \"..\", e.g. trace/timeline.json");
    // Component by component from the output directory: what exists must be a real
    // directory on the way and a regular file (or nothing) at the end.
    fs::path at(out_dir);
    const fs::path rel(f.path);
    size_t left = static_cast<size_t>(std::distance(rel.begin(), rel.end()));
    for (const fs::path& part : rel) {
      at /= part;
      --left;
      std::error_code ec;
      const fs::file_status st = fs::symlink_status(at, ec);
      if (st.type() == fs::file_type::not_found) break;  // the rest is made new
      if (ec) fail("cannot examine " + at.string() + ": " + ec.message(), fix);
      if (st.type() == fs::file_type::symlink)
        fail(at.string() + " is a symbolic link (to " + fs::read_symlink(at, ec).string() +
                 "); a run writes only real files inside its output directory",
             "remove the link, or give an output directory a run can own (a new or empty one)");
      if (left > 0 && st.type() != fs::file_type::directory)
        fail(at.string() + " is in the way: a file where " + f.key + " needs a directory", fix);
      if (left == 0 && st.type() == fs::file_type::directory)
        fail(at.string() + " is a directory; " + f.key + " names a file", "name a file, not a directory");
      if (left == 0 && st.type() != fs::file_type::regular)
        fail(at.string() + " exists and is not a regular file (a FIFO, device or socket)", fix);
    }
    const fs::path parent = (fs::path(out_dir) / rel).parent_path();
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) fail("cannot make the directory " + parent.string() + ": " + ec.message(), fix);
  }
}

}  // namespace ibvp
