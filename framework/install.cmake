# `cmake --install` lays out <prefix>/include/strata/{strata.h,framework/...,layers/...},
# <prefix>/lib/libstrata.a (or libstrata.so with -DBUILD_SHARED_LIBS=ON) and
# <prefix>/lib/cmake/Strata/StrataConfig.cmake, so a downstream project can find_package(Strata)
# and link strata::strata.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_target_property(STRATA_LIBRARY_TYPE strata TYPE)
if(STRATA_LIBRARY_TYPE STREQUAL "SHARED_LIBRARY")
  set(STRATA_SHARED ON)
  # The installed libstrata.so keeps the folders of the libraries it links that are not in the
  # system's search path (HDF5's), so it loads without LD_LIBRARY_PATH, as it does from the
  # build tree. (The CUDA libraries it opens at run time are found by the folders CMake found
  # them in: framework/cuda/cuda_libraries.h.)
  set_target_properties(strata PROPERTIES VERSION ${PROJECT_VERSION}
                        SOVERSION ${PROJECT_VERSION_MAJOR} INSTALL_RPATH_USE_LINK_PATH ON)
else()
  set(STRATA_SHARED OFF)
endif()
# Named in find_package's message when a CUDA build is used where CUDA is missing.
set(STRATA_CUDA_BUILT_WITH "")
if(STRATA_CUDA_ENABLED)
  set(STRATA_CUDA_BUILT_WITH "CUDA ${CUDAToolkit_VERSION}, cuDNN ${CUDNN_VERSION}")
  if(STRATA_NCCL_ENABLED)
    string(APPEND STRATA_CUDA_BUILT_WITH ", NCCL ${NCCL_VERSION}")
  endif()
endif()

install(TARGETS strata EXPORT StrataTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/framework/include/strata/strata.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/strata)
# Only the public headers: a header whose first line starts with "// Internal" is not part of the
# API (the trainer, op helpers, file-format internals ...) and stays out of the install, as do the
# backends' folders (cpu/, cuda/, nccl/) and the umbrella header's own folder.
foreach(dir framework layers datasets distribute)
  file(GLOB_RECURSE headers RELATIVE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/${dir}/*.h)
  foreach(header ${headers})
    if(header MATCHES "(^|/)(include|cpu|cuda|nccl)/")
      continue()
    endif()
    file(STRINGS ${PROJECT_SOURCE_DIR}/${header} first_line LIMIT_COUNT 1)
    if(first_line MATCHES "^// Internal")
      continue()
    endif()
    get_filename_component(header_dir ${header} DIRECTORY)
    install(FILES ${PROJECT_SOURCE_DIR}/${header}
            DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/strata/${header_dir})
  endforeach()
endforeach()
install(EXPORT StrataTargets NAMESPACE strata:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Strata)
configure_package_config_file(${PROJECT_SOURCE_DIR}/framework/StrataConfig.cmake.in
  ${PROJECT_BINARY_DIR}/StrataConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Strata)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/StrataConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/StrataConfig.cmake ${PROJECT_BINARY_DIR}/StrataConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Strata)
