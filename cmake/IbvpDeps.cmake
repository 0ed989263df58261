# Dependencies: SystemC (+TLM), yaml-cpp, nlohmann/json, GoogleTest.
# SystemC: a user's own CMake build of SystemC first, then Debian's pkg-config files
# (Debian's libsystemc-dev ships no CMake package).
find_package(SystemCLanguage CONFIG QUIET)
if(SystemCLanguage_FOUND)
  add_library(ibvp::systemc INTERFACE IMPORTED)
  target_link_libraries(ibvp::systemc INTERFACE SystemC::systemc)
else()
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(SystemC REQUIRED IMPORTED_TARGET systemc tlm)
  add_library(ibvp::systemc INTERFACE IMPORTED)
  target_link_libraries(ibvp::systemc INTERFACE PkgConfig::SystemC)
  # Headers of SystemC are not ours to keep warning-free.
  get_target_property(_sc_inc PkgConfig::SystemC INTERFACE_INCLUDE_DIRECTORIES)
  if(_sc_inc)
    set_target_properties(ibvp::systemc PROPERTIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${_sc_inc}")
  endif()
endif()
# sc_spawn is declared only where SC_INCLUDE_DYNAMIC_PROCESSES precedes the first <systemc>;
# defined for every file, a unity batch (CMakeLists.txt) cannot include <systemc> without it first.
set_property(TARGET ibvp::systemc APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS SC_INCLUDE_DYNAMIC_PROCESSES)

# SystemC encodes the C++ standard of its own build in a symbol that every translation unit
# including <systemc> references; a mismatch only shows at link time with an obscure name.
# Check it here so the error says what to do.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_LIBRARIES ibvp::systemc)
set(CMAKE_REQUIRED_FLAGS "-std=c++17")
check_cxx_source_compiles("
#include <systemc>
int sc_main(int, char**) { return 0; }
" IBVP_SYSTEMC_CXX17_LINKS)
unset(CMAKE_REQUIRED_LIBRARIES)
unset(CMAKE_REQUIRED_FLAGS)
if(NOT IBVP_SYSTEMC_CXX17_LINKS)
  message(FATAL_ERROR "SystemC does not link as C++17: the library was built with another "
    "C++ standard (see sc_api_version_* in its symbols). Install Debian's libsystemc-dev "
    "2.3.4 (built as C++17) or rebuild SystemC with -DCMAKE_CXX_STANDARD=17.")
endif()

find_package(yaml-cpp REQUIRED)
# Every JSON file the project writes (summary.json, run.json, timelines, the schema) goes
# through nlohmann/json (Debian: nlohmann-json3-dev).
find_package(nlohmann_json 3 REQUIRED)
find_package(GTest REQUIRED)
find_package(Threads REQUIRED)
