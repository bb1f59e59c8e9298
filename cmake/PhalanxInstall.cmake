# Installation and the Phalanx CMake package (included at the end of the top-level
# CMakeLists.txt). `cmake --install build --prefix /opt/phalanx` installs
#   bin/phalanx
#   include/phalanx/<dir>/<header>.h        public headers of src/ (include "framework/interface.h")
#   lib/libphalanx_*.a                       the static libraries
#   lib/cmake/Phalanx/PhalanxConfig.cmake    find_package(Phalanx) -> Phalanx::phalanx_app, ...
# (lib may be lib64 or lib/<triplet>, as GNUInstallDirs decides.)
include(CMakePackageConfigHelpers)

set(PHALANX_EXPORTED_LIBRARIES
    phalanx_api phalanx_gang phalanx_framework phalanx_config phalanx_plugins phalanx_queue phalanx_cache
    phalanx_store phalanx_scheduler phalanx_gpu phalanx_sim phalanx_app phalanx_perf phalanx_replay
    phalanx_cmd)
set(PHALANX_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Phalanx)

# Adds to ${out_var} every library of this project that its targets link to, directly or
# not (e.g. a new module that phalanx_plugins starts to depend on), so the export set stays
# complete: install(EXPORT) is a configure error when a dependency is outside it.
function(phalanx_add_link_closure out_var)
  set(result ${${out_var}})
  set(queue ${${out_var}})
  while(queue)
    list(POP_FRONT queue t)
    get_target_property(deps ${t} LINK_LIBRARIES)
    if(NOT deps)
      continue()
    endif()
    foreach(d ${deps})
      if(NOT TARGET ${d} OR d IN_LIST result)
        continue()
      endif()
      get_target_property(imported ${d} IMPORTED)
      get_target_property(aliased ${d} ALIASED_TARGET)
      if(NOT imported AND NOT aliased)
        list(APPEND result ${d})
        list(APPEND queue ${d})
      endif()
    endforeach()
  endwhile()
  set(${out_var} ${result} PARENT_SCOPE)
endfunction()
phalanx_add_link_closure(PHALANX_EXPORTED_LIBRARIES)

# The headers need C++20; say so in the targets so that consumers get -std=c++20.
foreach(lib ${PHALANX_EXPORTED_LIBRARIES})
  get_target_property(_type ${lib} TYPE)
  if(_type STREQUAL "INTERFACE_LIBRARY")  # header-only modules (phalanx_cluster)
    target_compile_features(${lib} INTERFACE cxx_std_20)
  else()
    target_compile_features(${lib} PUBLIC cxx_std_20)
  endif()
endforeach()

install(TARGETS phalanx ${PHALANX_EXPORTED_LIBRARIES}
        EXPORT PhalanxTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# Public headers: every src/**/*.h, directories preserved, except test-only and internal
# ones (*_test.h, *_internal.h, internal.h, src/testing/ whose library is not installed).
file(GLOB_RECURSE _phalanx_headers RELATIVE ${PROJECT_SOURCE_DIR}/src CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/src/*.h)
foreach(h ${_phalanx_headers})
  if(h MATCHES "(^|/)(internal|[^/]*_internal|[^/]*_test)\\.h$" OR h MATCHES "^testing/")
    continue()
  endif()
  get_filename_component(_dir ${h} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/src/${h}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/phalanx/${_dir})
endforeach()

install(EXPORT PhalanxTargets
        NAMESPACE Phalanx::
        FILE PhalanxTargets.cmake
        DESTINATION ${PHALANX_INSTALL_CMAKEDIR})

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/PhalanxConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/PhalanxConfig.cmake
  INSTALL_DESTINATION ${PHALANX_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API.
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/PhalanxConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/PhalanxConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/PhalanxConfigVersion.cmake
        DESTINATION ${PHALANX_INSTALL_CMAKEDIR})
