# The test firmware_sdk_builds_an_out_of_tree_image_on_the_default_transport (tests/CMakeLists.txt):
# an image outside the tree (this folder) is configured and built against the CMake package
# ibvp_firmware, installed (cmake --install --component firmware_sdk) and in the build tree,
# and each image runs a perftest in ibvp-sim: its own log line and its plug-in policy's must
# reach firmware.log.
#   cmake -DBUILD=<build dir> -DSIM=<ibvp-sim> -DSOURCE=<repo> -DWORK=<scratch dir> -P run.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

run("installing the firmware SDK" ${CMAKE_COMMAND} --install ${BUILD} --component firmware_sdk --prefix ${WORK}/prefix)
file(GLOB_RECURSE installed_config ${WORK}/prefix/*/ibvp_firmwareConfig.cmake)
if(NOT installed_config)
  message(FATAL_ERROR "no ibvp_firmwareConfig.cmake under ${WORK}/prefix after the install")
endif()
get_filename_component(installed_dir ${installed_config} DIRECTORY)

foreach(kind installed build_tree)
  if(kind STREQUAL "installed")
    set(package_dir ${installed_dir})
  else()
    set(package_dir ${BUILD}/ibvp_firmware)
  endif()
  run("configuring the image against the ${kind} package" ${CMAKE_COMMAND} -S ${SOURCE}/tests/firmware_sdk
      -B ${WORK}/${kind} -DCMAKE_BUILD_TYPE=Release -Dibvp_firmware_DIR=${package_dir})
  run("building the image against the ${kind} package" ${CMAKE_COMMAND} --build ${WORK}/${kind})
  set(image ${WORK}/${kind}/libibvp_fw_mine.so)
  if(NOT EXISTS ${image})
    message(FATAL_ERROR "the ${kind} build made no ${image}")
  endif()
  run("running a perftest on the ${kind} image" ${SIM} ${SOURCE}/configs/perftest/send_lat.yaml
      --set hca.firmware_image=${image} --set perftest.max_bytes=64 --set perftest.iterations=5
      --out ${WORK}/run_${kind} --quiet)
  file(READ ${WORK}/run_${kind}/firmware.log log)
  # The image's own line, and its plug-in QP scheduler's (firmware/default/policies.h).
  foreach(line "out-of-tree image on the installed transport" "out-of-tree QP scheduler plugged in")
    string(FIND "${log}" "${line}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "the ${kind} image's line '${line}' is not in ${WORK}/run_${kind}/firmware.log:\n${log}")
    endif()
  endforeach()
endforeach()
