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
# The public API is what the umbrella headers reach, and only that: framework/include/strata/*.h
# (strata.h and the area umbrellas it includes) and every header they include, transitively.
# A header no umbrella reaches is internal and stays out of the install. Folders that are
# internal as a whole (the backends' cpu/ and cuda/ and the math they share, kernels_math/; the
# collectives' gloo/ and nccl/; the parameter server's wire/; the vendored include/) must never
# be reached: configuring fails naming the include that reaches one, as it does for a header
# that says it is internal.
# tests/install/ compiles every installed header alone and the README's examples against it.
set(STRATA_INTERNAL_FOLDERS "(^|/)(cpu|cuda|kernels_math|gloo|nccl|wire|include)/")
file(GLOB STRATA_UMBRELLAS RELATIVE ${PROJECT_SOURCE_DIR}/framework/include
     ${PROJECT_SOURCE_DIR}/framework/include/strata/*.h)
set(STRATA_PUBLIC_HEADERS "")
set(pending "")
foreach(umbrella ${STRATA_UMBRELLAS})
  list(APPEND pending "framework/include/${umbrella}")
endforeach()
while(pending)
  list(POP_FRONT pending header)
  if(header IN_LIST STRATA_PUBLIC_HEADERS)
    continue()
  endif()
  list(APPEND STRATA_PUBLIC_HEADERS ${header})
  file(STRINGS ${PROJECT_SOURCE_DIR}/${header} includes
       REGEX "^[ \t]*#[ \t]*include[ \t]+\"[^\"]+\"")
  foreach(line ${includes})
    string(REGEX REPLACE "^[^\"]*\"([^\"]+)\".*$" "\\1" included "${line}")
    if(included MATCHES "^strata/")
      set(included "framework/include/${included}")
    endif()
    if(included IN_LIST STRATA_PUBLIC_HEADERS)
      continue()  # checked when first reached
    endif()
    if(NOT EXISTS ${PROJECT_SOURCE_DIR}/${included})
      message(FATAL_ERROR "${header} includes \"${included}\", which is not a header of Strata "
              "(public headers include Strata's own by their path from the repository root)")
    endif()
    if(NOT included MATCHES "^framework/include/" AND included MATCHES "${STRATA_INTERNAL_FOLDERS}")
      message(FATAL_ERROR "${header} includes ${included}, an internal folder's header, so it "
              "would become public API: include it from a .cc file, or forward-declare")
    endif()
    file(STRINGS ${PROJECT_SOURCE_DIR}/${included} first_line LIMIT_COUNT 1)
    if(first_line MATCHES "^// Internal")
      message(FATAL_ERROR "${header} includes ${included}, which says it is internal, so it "
              "would become public API: include it from a .cc file, or make it public")
    endif()
    list(APPEND pending ${included})
  endforeach()
endwhile()
# An #include added to a public header changes what is installed: configure again when one changes.
list(TRANSFORM STRATA_PUBLIC_HEADERS PREPEND ${PROJECT_SOURCE_DIR}/ OUTPUT_VARIABLE public_paths)
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${public_paths})
foreach(header ${STRATA_PUBLIC_HEADERS})
  if(header MATCHES "^framework/include/strata/")
    install(FILES ${PROJECT_SOURCE_DIR}/${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/strata)
  else()
    get_filename_component(header_dir ${header} DIRECTORY)
    install(FILES ${PROJECT_SOURCE_DIR}/${header}
            DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/strata/${header_dir})
  endif()
endforeach()
install(EXPORT StrataTargets NAMESPACE strata:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Strata)
configure_package_config_file(${PROJECT_SOURCE_DIR}/framework/StrataConfig.cmake.in
  ${PROJECT_BINARY_DIR}/StrataConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Strata)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/StrataConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/StrataConfig.cmake ${PROJECT_BINARY_DIR}/StrataConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Strata)
