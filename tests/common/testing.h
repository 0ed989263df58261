#pragma once
#include <string>

namespace ibvp::testing {

// A SystemC report of severity warning or above fails the running test (as VCML's test
// bench does): a model that warns is a model that is wrong or misused.
void install_systemc_report_guard();

// Path of a file in the source tree, for configs and topologies used by tests.
std::string source_path(const std::string& relative);

}  // namespace ibvp::testing
