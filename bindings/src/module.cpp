// ibvp._core: the platform as a Python extension. Documents go in as YAML text and come
// back validated (or as ConfigError with file, key, line and fix); one simulation may run in
// this process (SystemC elaborates once per process), which is why the Python package runs
// each simulation in a fresh child process by default.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <yaml-cpp/yaml.h>

#include <dlfcn.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "platform/builder/output_dir.h"
#include "platform/builder/runner.h"
#include "platform/driver/firmware_location.h"
#include "platform/driver/host_node.h"
#include "platform/params/input_file.h"
#include "platform/metrics/table.h"
#include "platform/params/config_error.h"
#include "platform/params/input_text.h"
#include "platform/scenario/scenario_loader.h"
#include "platform/sm/opensm_dump.h"
#include "platform/sm/subnet_report.h"
#include "platform/sm/updn.h"
#include "platform/topology/ibnetdiscover.h"
#include "platform/topology/topology_yaml.h"

namespace py = pybind11;

// libsystemc calls sc_main from its own main(); an extension module has no main, but the
// library still needs the symbol to load. pybind11 hides symbols by default: make it visible.
extern "C" __attribute__((visibility("default"))) int sc_main(int, char**) { return 0; }

namespace {

std::atomic<bool> kernel_used{false};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!f || !(f << text)) throw std::runtime_error(path + ": cannot write (check that its directory exists and is writable)");
}

// A topology as `ibvp topo` reads it: an ibnetdiscover dump (with an optional node-name
// map), a YAML topology, or a scenario (its topology, routing engine and options).
struct LoadedTopology {
  ibvp::topo::Topology t;
  std::string engine = "minhop";
  ibvp::sm::RoutingOptions options;
  bool scenario = false;
};

LoadedTopology load_any(const std::string& text, const std::string& source, const std::vector<std::string>& overrides,
                        const std::string& base_dir, const std::string& node_name_map) {
  LoadedTopology out;
  if (ibvp::topo::looks_like_ibnetdiscover(text)) {
    ibvp::topo::NodeNameMap names;
    if (!node_name_map.empty()) names = ibvp::topo::load_node_name_map(node_name_map);
    out.t = ibvp::topo::parse_ibnetdiscover(text, source, names);
    // A dump may name nodes in bytes that are not UTF-8 (descriptions as real fabrics report
    // them); Python text cannot hold them, so they reach Python as the results write them.
    for (ibvp::topo::Node& n : out.t.nodes) n.name = ibvp::metrics::utf8_valid(n.name);
    return out;
  }
  if (!node_name_map.empty())
    throw ibvp::ConfigError(node_name_map, "--node-name-map", 0,
                            "a node-name map names the nodes of an ibnetdiscover dump, and " + source + " is not one",
                            "leave --node-name-map out (YAML topologies and scenarios name their nodes)");
  // A topology document has switches/hosts/links at its top; anything else is a scenario.
  // Size, UTF-8, nesting and alias limits first, as for every YAML input (input_text.h).
  ibvp::params::check_text(text, source);
  ibvp::params::check_yaml_limits(text, source);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ibvp::ConfigError(source, "", e.mark.line + 1, e.msg, "fix the YAML syntax");
  }
  if (root.IsMap() && (root["switches"] || root["hosts"] || root["links"]) && !root["topology"]) {
    out.t = ibvp::topo::topology_from_yaml(root, source);
  } else {
    const ibvp::Scenario s = ibvp::scenario_from_yaml(text, source, overrides, base_dir);
    out.t = s.topology;
    out.engine = s.routing;
    out.options = s.routing_options;
    out.scenario = true;
  }
  return out;
}

py::dict run_result_dict(const ibvp::RunResult& r) {
  py::dict d;
  d["injected"] = r.injected;
  d["delivered"] = r.delivered;
  d["dropped"] = r.dropped;
  d["in_flight"] = r.in_flight;
  d["packet_hops"] = r.transmissions;
  d["events"] = r.events;
  d["sim_seconds"] = r.sim_seconds;
  d["wall_seconds"] = r.wall_seconds;
  return d;
}

// The package's firmware directory: ibvp/firmware next to this extension's file, wherever
// pip put it (a wheel in site-packages, or an editable install). dladdr names the shared
// object that holds this function, so the answer does not depend on the working directory
// or on how Python found the module.
std::string package_firmware_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&package_firmware_dir), &info) == 0 || info.dli_fname == nullptr) return "";
  return (std::filesystem::path(info.dli_fname).parent_path() / "firmware").string();
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "ibvp simulation core (C++/SystemC); use the ibvp package rather than this module.";
  ibvp::driver::set_package_firmware_dir(package_firmware_dir());

  // ConfigError carries the parts of the C++ error as attributes.
  // Handles, not objects: the classes live as long as the interpreter, and a static
  // py::object would be released after the interpreter is gone.
  static py::handle config_error = PyErr_NewException("ibvp._core.ConfigError", PyExc_ValueError, nullptr);
  static py::handle deadlock_error = PyErr_NewException("ibvp._core.DeadlockError", PyExc_RuntimeError, nullptr);
  static py::handle kernel_used_error =
      PyErr_NewException("ibvp._core.KernelUsedError", PyExc_RuntimeError, nullptr);
  m.attr("ConfigError") = config_error;
  m.attr("DeadlockError") = deadlock_error;
  m.attr("KernelUsedError") = kernel_used_error;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ibvp::ConfigError& e) {
      py::object exc = py::reinterpret_borrow<py::object>(config_error)(e.what());
      exc.attr("file") = e.file();
      exc.attr("key") = e.key();
      exc.attr("line") = e.line();
      exc.attr("problem") = e.problem();
      exc.attr("fix") = e.fix();
      PyErr_SetObject(config_error.ptr(), exc.ptr());
    } catch (const ibvp::DeadlockError& e) {
      PyErr_SetString(deadlock_error.ptr(), e.what());
    }
  });

  m.def("version", [] { return std::string(IBVP_VERSION); });
  m.def("package_firmware_dir", &ibvp::driver::package_firmware_dir,
        "The installed package's firmware directory (ibvp/firmware next to this module).");
  m.def("default_firmware_image", &ibvp::driver::default_firmware_image,
        "The image a scenario without hca.firmware_image loads (IBVP_FIRMWARE_DIR, the package, the build tree).");
  m.def("schema", &ibvp::scenario_json_schema, "JSON Schema (draft 2020-12) of a scenario document.");
  m.def("reference", &ibvp::parameter_reference_markdown, "Markdown reference of every scenario key.");

  m.def(
      "validate",
      [](const std::string& yaml, const std::string& source, const std::vector<std::string>& overrides,
         const std::string& base_dir) {
        const ibvp::Scenario s = ibvp::scenario_from_yaml(yaml, source, overrides, base_dir);
        py::dict d;
        d["name"] = s.name;
        d["duration_s"] = s.duration.to_seconds();
        d["seed"] = s.seed;
        std::vector<std::string> flows;
        for (const auto& f : s.flows) flows.push_back(f.name);
        d["flows"] = flows;
        d["switches"] = s.topology.switches().size();
        d["endpoints"] = s.topology.endpoints().size();
        return d;
      },
      py::arg("yaml_text"), py::arg("source"), py::arg("overrides") = std::vector<std::string>{},
      py::arg("base_dir") = ".");

  // The Python front end follows the same rules as ibvp-sim by calling the same code: the
  // run's name as a directory name, the claim of an output directory, bounded input files.
  m.def("scenario_name", &ibvp::scenario_name,
        "The run's name after checking the document's keys; ConfigError at `name` when it is not one "
        "path component.",
        py::arg("yaml_text"), py::arg("source"), py::arg("overrides") = std::vector<std::string>{});
  m.def(
      "claim_output_dir",
      [](const std::string& dir, const std::string& kind, const std::vector<std::string>& inputs) {
        if (kind != "run" && kind != "sweep") throw std::invalid_argument("kind is run or sweep");
        ibvp::claim_output_dir(dir, kind == "run" ? ibvp::OutputDirKind::run : ibvp::OutputDirKind::sweep, inputs);
      },
      "Makes dir the output directory of one run or sweep (platform/builder/output_dir.h).", py::arg("dir"),
      py::arg("kind") = "run", py::arg("inputs") = std::vector<std::string>{});
  m.def(
      "read_input_file",
      [](const std::string& path, const std::string& what) {
        return py::bytes(ibvp::read_input_file(path, what, "check the path"));
      },
      "A regular file of bounded size, read whole (platform/params/input_file.h).", py::arg("path"),
      py::arg("what"));
  m.attr("MAX_INPUT_FILE_BYTES") = ibvp::kMaxInputFileBytes;
  m.attr("RUN_MARKER") = ibvp::kRunMarker;
  m.attr("SWEEP_MARKER") = ibvp::kSweepMarker;

  m.def(
      "run",
      [](const std::string& yaml, const std::string& source, const std::vector<std::string>& overrides,
         const std::string& base_dir, const std::string& out_dir, py::object progress) {
        if (kernel_used.exchange(true)) {
          PyErr_SetString(kernel_used_error.ptr(),
                          "this process has already run a simulation: SystemC elaborates one fabric per "
                          "process and cannot start a second; run it with ibvp.run(...) in the default "
                          "child-process mode (in_process=False)");
          throw py::error_already_set();
        }
        const ibvp::Scenario s = ibvp::scenario_from_yaml(yaml, source, overrides, base_dir);
        ibvp::RunOptions o;
        o.out_dir = out_dir;
        if (!progress.is_none()) {
          o.on_progress = [progress](uint64_t now, uint64_t end, double wall, uint64_t hops) {
            py::gil_scoped_acquire gil;
            progress(static_cast<double>(now) * 1e-12, static_cast<double>(end) * 1e-12, wall, hops);
          };
        }
        ibvp::RunResult r;
        {
          // The kernel runs without the GIL; the progress callback takes it back.
          py::gil_scoped_release nogil;
          r = ibvp::run_scenario(s, o);
        }
        return run_result_dict(r);
      },
      py::arg("yaml_text"), py::arg("source"), py::arg("overrides") = std::vector<std::string>{},
      py::arg("base_dir") = ".", py::arg("out_dir") = "", py::arg("progress") = py::none());

  m.def(
      "topology_summary",
      [](const std::string& text, const std::string& source, const std::vector<std::string>& overrides,
         const std::string& base_dir, py::object routing, py::object lmc, const std::string& dump_dir, bool graph,
         const std::vector<std::string>& roots, const std::string& root_guid_file, const std::string& lfts_file,
         const std::string& node_name_map) {
        LoadedTopology loaded = load_any(text, source, overrides, base_dir, node_name_map);
        ibvp::topo::Topology& t = loaded.t;
        std::string engine = loaded.engine;
        ibvp::sm::RoutingOptions options = loaded.options;
        if (!routing.is_none()) {
          engine = routing.cast<std::string>();
          options = {};  // the scenario's options belong to its own engine
        }
        if (!lmc.is_none()) ibvp::sm::set_endpoint_lmc(t, lmc.cast<uint8_t>());
        // Given here, the options replace the scenario's; roots and GUID files refer to the
        // topology after any --lmc (LIDs change, GUIDs and names do not).
        if (!roots.empty() || !root_guid_file.empty()) options.roots.clear();
        for (const std::string& r : roots) {
          const uint32_t sw = ibvp::sm::find_switch(t, r);
          if (sw == ibvp::topo::Topology::npos)
            throw ibvp::ConfigError(source, "--roots", 0,
                                    "no switch of the topology is named '" + r + "' or has that node GUID",
                                    "name switches, or give their node GUIDs as 0x... (opensm-subnet.lst of --dump "
                                    "lists them)");
          options.roots.push_back(sw);
        }
        if (!root_guid_file.empty())
          for (uint32_t sw : ibvp::sm::load_root_guid_file(t, root_guid_file)) options.roots.push_back(sw);
        if (!lfts_file.empty()) options.lfts_file = lfts_file;
        const ibvp::sm::SubnetReport r = ibvp::sm::report_subnet(t, engine, options);
        py::dict d;
        d["switches"] = r.topology.switches;
        d["hosts"] = r.topology.hosts;
        d["links"] = r.topology.links;
        d["diameter"] = r.topology.diameter;
        d["independent_cycles"] = r.topology.independent_cycles;
        d["routing"] = engine;
        d["routing_seconds"] = r.routing_seconds;
        d["vl_layers"] = r.vl_layers;
        d["routes"] = r.routes.routes;
        d["unrouted"] = r.routes.unrouted;
        d["path_length_histogram"] = r.routes.hops;
        py::dict efi;
        efi["max"] = r.routes.efi_max;
        efi["mean"] = r.routes.efi_mean;
        d["edge_forwarding_index"] = efi;
        py::dict dl;
        dl["acyclic"] = r.deadlock.acyclic;
        dl["cycle"] = r.deadlock.cycle;
        dl["channels"] = r.deadlock.channels;
        dl["dependencies"] = r.deadlock.dependencies;
        d["deadlock"] = dl;
        if (graph) {
          // The fabric as validated and LID-assigned, for analysis next to the routing (e.g.
          // with networkx): nodes in topology order and one entry per cable.
          py::list nodes, cables;
          for (const ibvp::topo::Node& n : t.nodes) {
            py::dict nd;
            nd["name"] = n.name;
            nd["kind"] = n.kind == ibvp::topo::NodeKind::switch_node ? "switch" : "endpoint";
            nd["lid"] = n.lid;
            nd["lmc"] = n.lmc;
            nodes.append(nd);
          }
          for (const ibvp::topo::Link& l : t.links)
            cables.append(py::make_tuple(t.nodes[l.a.node].name, l.a.port, t.nodes[l.b.node].name, l.b.port));
          d["nodes"] = nodes;
          d["cables"] = cables;
        }
        if (!dump_dir.empty()) {
          // The tables a switch is loaded with for this topology: the routing's LFTs and the
          // identity SL2VL of one data VL per SL the scenario defaults give.
          std::filesystem::create_directories(dump_dir);
          const ibvp::sw::Sl2VlTable sl2vl = ibvp::sw::SwitchConfig{}.sl2vl;
          write_text(dump_dir + "/opensm-lfts.dump", ibvp::sm::opensm_lfts_dump(t, r.tables));
          write_text(dump_dir + "/opensm-sl2vl.dump",
                     ibvp::sm::opensm_sl2vl_dump(t, [&](uint32_t, uint16_t, uint16_t) { return sl2vl; }));
          write_text(dump_dir + "/opensm-subnet.lst", ibvp::sm::opensm_subnet_lst(t));
          write_text(dump_dir + "/opensm.fdbs", ibvp::sm::opensm_fdbs(t, r.tables));
        }
        return d;
      },
      py::arg("text"), py::arg("source"), py::arg("overrides") = std::vector<std::string>{},
      py::arg("base_dir") = ".", py::arg("routing") = py::none(), py::arg("lmc") = py::none(),
      py::arg("dump_dir") = "", py::arg("graph") = false, py::arg("roots") = std::vector<std::string>{},
      py::arg("root_guid_file") = "", py::arg("lfts_file") = "", py::arg("node_name_map") = "");

  m.def(
      "export_ibnetdiscover",
      [](const std::string& text, const std::string& source, const std::vector<std::string>& overrides,
         const std::string& base_dir, const std::string& out, const std::string& node_name_map,
         const std::string& node_name_map_out) {
        const LoadedTopology loaded = load_any(text, source, overrides, base_dir, node_name_map);
        ibvp::topo::IbnetdiscoverWriteOptions opt;
        opt.guid_names = !node_name_map_out.empty();
        write_text(out, ibvp::topo::write_ibnetdiscover(loaded.t, opt));
        if (!node_name_map_out.empty()) write_text(node_name_map_out, ibvp::topo::write_node_name_map(loaded.t));
        py::dict d;
        d["switches"] = loaded.t.switches().size();
        d["endpoints"] = loaded.t.endpoints().size();
        d["links"] = loaded.t.links.size();
        return d;
      },
      py::arg("text"), py::arg("source"), py::arg("overrides") = std::vector<std::string>{},
      py::arg("base_dir") = ".", py::arg("out") = "", py::arg("node_name_map") = "",
      py::arg("node_name_map_out") = "");
}
