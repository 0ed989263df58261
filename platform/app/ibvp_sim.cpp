// ibvp-sim: runs one scenario and writes its results.
//
//   ibvp-sim SCENARIO.yaml [--set key=value ...] [--out DIR] [--quiet]
//   ibvp-sim --schema FILE --reference FILE     (JSON Schema and parameter reference)
//
// The run owns DIR (default out/<scenario name>): a new directory, an empty one or one an
// earlier run wrote, cleared before the scenario is read (platform/builder/output_dir.h).
//
// Exit status: 0 done, 2 bad input (the message names file, key and fix), 3 deadlock
// detected, 4 firmware fault (the HCA's firmware image crashed or hung; the message names
// the image, the event and hca.firmware_image: models/hca/firmware_guard.h), 1 anything else.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <systemc>
#include <vector>

#include "platform/builder/output_dir.h"
#include "platform/builder/runner.h"
#include "platform/params/config_error.h"
#include "platform/params/validate.h"
#include "platform/scenario/scenario_loader.h"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: ibvp-sim SCENARIO.yaml [--set key=value ...] [--out DIR (default out/<name>)] [--quiet]\n"
               "       ibvp-sim --schema FILE --reference FILE\n");
  return 2;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!f) {
    std::fprintf(stderr, "ibvp-sim: %s: cannot open for writing\n", path.c_str());
    return false;
  }
  f << text;
  return true;
}

}  // namespace

int sc_main(int argc, char** argv) {
  std::string scenario_path, out_dir, schema_path, reference_path;
  std::vector<std::string> overrides;
  bool quiet = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* what) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ibvp-sim: %s needs a value\n", what);
        std::exit(usage());
      }
      return argv[++i];
    };
    if (a == "--set") overrides.push_back(value("--set"));
    else if (a == "--out") out_dir = value("--out");
    else if (a == "--schema") schema_path = value("--schema");
    else if (a == "--reference") reference_path = value("--reference");
    else if (a == "--quiet") quiet = true;
    else if (a == "-h" || a == "--help") return usage(), 0;
    else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "ibvp-sim: unknown option %s\n", a.c_str());
      return usage();
    } else if (scenario_path.empty()) scenario_path = a;
    else return usage();
  }
  if (!schema_path.empty() || !reference_path.empty()) {
    bool ok = true;
    if (!schema_path.empty()) ok &= write_file(schema_path, ibvp::scenario_json_schema());
    if (!reference_path.empty()) ok &= write_file(reference_path, ibvp::parameter_reference_markdown());
    return ok ? 0 : 1;
  }
  if (scenario_path.empty()) return usage();
  try {
    // Claimed (and cleared) before the scenario is read, so a refused scenario leaves no
    // earlier run's results behind; the default directory needs the name first.
    if (out_dir.empty()) out_dir = "out/" + ibvp::scenario_file_name(scenario_path, overrides);
    ibvp::claim_output_dir(out_dir, ibvp::OutputDirKind::run, {scenario_path});
    const ibvp::Scenario scenario = ibvp::load_scenario(scenario_path, overrides);
    ibvp::RunOptions options;
    options.out_dir = out_dir;
    options.progress = !quiet;
    const ibvp::RunResult r = ibvp::run_scenario(scenario, options);
    if (!r.perftest_table.empty()) std::fputs(r.perftest_table.c_str(), stdout);
    if (!quiet)
      std::fprintf(stderr,
                   "ibvp-sim: %s: %.3f ms simulated in %.2f s; packets injected %llu, delivered %llu, dropped %llu, "
                   "in flight %llu; results in %s/\n",
                   scenario.name.c_str(), r.sim_seconds * 1e3, r.wall_seconds, (unsigned long long)r.injected,
                   (unsigned long long)r.delivered, (unsigned long long)r.dropped, (unsigned long long)r.in_flight,
                   out_dir.c_str());
    return 0;
  } catch (const ibvp::ConfigError& e) {
    std::fprintf(stderr, "ibvp-sim: %s\n", e.what());
    return 2;
  } catch (const ibvp::DeadlockError& e) {
    std::fprintf(stderr, "\nibvp-sim: %s\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ibvp-sim: %s\n", e.what());
    return 1;
  }
}

// Our own entry point, ahead of the one in libsystemc: it silences SystemC's banner, which
// the library prints before sc_main runs, then hands over to the kernel as its main would.
int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
