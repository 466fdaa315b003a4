# ctest driver: configures tests/downstream against the Strata that install.downstream_project
# installed, as on a machine without CUDA (find_package of CUDAToolkit, CUDNN and NCCL
# disabled). A static CUDA build must refuse with a message naming the missing CUDA runtime, the
# versions Strata was built with and the ways out (cuDNN and NCCL are not asked for: Strata loads
# them at run time); any other build must not look for CUDA at all.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${DOWNSTREAM_SOURCE_DIR} -B ${WORK_DIR} -G Ninja
                        -DCMAKE_PREFIX_PATH=${PREFIX}
                        -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON
                        -DCMAKE_DISABLE_FIND_PACKAGE_CUDNN=ON
                        -DCMAKE_DISABLE_FIND_PACKAGE_NCCL=ON
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
# CMake wraps the message; compare it as one line.
string(REGEX REPLACE "[ \n]+" " " text "${out} ${err}")
file(STRINGS ${PREFIX}/lib/cmake/Strata/StrataConfig.cmake config REGEX "^set\\(STRATA_")
if(NOT config MATCHES "STRATA_SHARED OFF" OR NOT config MATCHES "STRATA_CUDA_ENABLED ON")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "a Strata built without CUDA, or shared, looked for CUDA:\n${out}\n${err}")
  endif()
  message(STATUS "this Strata needs no CUDA packages downstream: configure succeeded")
  return()
endif()
set(expected "set Strata_FOUND to FALSE"
             "static library built with its CUDA backend \\(CUDA [0-9.]+, cuDNN [0-9.]+"
             "this machine lacks: the CUDA toolkit \\(cudart\\)\\."
             "-DSTRATA_WITH_CUDA=OFF" "-DBUILD_SHARED_LIBS=ON"
             "cuBLAS, cuDNN and NCCL are loaded at run time")
if(rc EQUAL 0)
  message(FATAL_ERROR "configure succeeded without CUDA packages:\n${out}\n${err}")
endif()
foreach(pattern IN LISTS expected)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "no \"${pattern}\" in find_package's message:\n${out}\n${err}")
  endif()
endforeach()
message(STATUS "find_package(Strata) said: ${text}")
