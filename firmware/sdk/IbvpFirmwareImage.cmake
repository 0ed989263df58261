# ibvp_add_firmware_image(NAME SOURCES...): a firmware image, as the HCA model loads it with
# dlopen (docs/firmware.md). Used by the tree (firmware/CMakeLists.txt) and by images built
# outside it (the installed package ibvp_firmware, ibvp_firmwareConfig.cmake), so both get
# the same rules:
# - a shared module named lib<NAME>.so;
# - every symbol hidden but the four entry points the image marks visible;
# - --no-undefined: an image must not resolve anything against the platform that loads it.
# Link ibvp::firmware_transport for the default transport, ibvp::hal for the HAL header only.
function(ibvp_add_firmware_image name)
  add_library(${name} MODULE ${ARGN})
  set_target_properties(${name} PROPERTIES
    PREFIX "lib" C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${name} PRIVATE "LINKER:--no-undefined")
endfunction()
