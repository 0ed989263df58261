// The SystemC library defines main() and calls sc_main(); GoogleTest runs from here.
#include <gtest/gtest.h>
#include <systemc>

#include "common/testing.h"

int sc_main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  ibvp::testing::install_systemc_report_guard();
  return RUN_ALL_TESTS();
}
