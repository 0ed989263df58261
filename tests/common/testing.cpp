#include "common/testing.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <systemc>

namespace ibvp::testing {

namespace {
void report_handler(const sc_core::sc_report& report, const sc_core::sc_actions& actions) {
  if (report.get_severity() >= sc_core::SC_WARNING) {
    ADD_FAILURE() << "SystemC " << (report.get_severity() == sc_core::SC_WARNING ? "warning" : "error")
                  << " " << report.get_msg_type() << ": " << report.get_msg();
  }
  // Keep the default behaviour for errors (throw) so the failing test stops there.
  if (report.get_severity() >= sc_core::SC_ERROR)
    sc_core::sc_report_handler::default_handler(report, actions & ~sc_core::SC_DISPLAY);
}
}  // namespace

void install_systemc_report_guard() {
  sc_core::sc_report_handler::set_handler(report_handler);
  // SystemC's own "simulation stopped by user" info is not a failure.
}

std::string source_path(const std::string& relative) {
  const char* env = std::getenv("IBVP_SOURCE_DIR");
  std::string root = env ? env : IBVP_SOURCE_DIR_DEFAULT;
  return root + "/" + relative;
}

}  // namespace ibvp::testing
